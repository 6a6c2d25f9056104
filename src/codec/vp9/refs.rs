//! VP9's eight reference slots (on [`crate::codec::ref_slots::RefSlots`]):
//! the picture each holds with the frame size later frames inherit
//! (`frame_size_with_refs`) or scale from, refreshed by each decoded
//! frame's `refresh_frame_flags`.

use crate::codec::ref_slots::RefSlots;

use super::header::{FrameHeader, NUM_REF_FRAMES, REFS_PER_FRAME};
use super::Vp9Error;

/// What a slot holds: a decoded picture `P` and its size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Reference<P> {
    pub picture: P,
    pub width: u32,
    pub height: u32,
}

#[derive(Clone, Debug)]
pub struct References<P> {
    slots: RefSlots<Reference<P>, NUM_REF_FRAMES>,
}

impl<P> Default for References<P> {
    fn default() -> Self {
        Self {
            slots: RefSlots::new(),
        }
    }
}

impl<P: Copy + Ord> References<P> {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn get(&self, slot: usize) -> Option<&Reference<P>> {
        self.slots.get(slot)
    }

    /// The frame size slot `slot` holds.
    pub fn size(&self, slot: usize) -> Option<(u32, u32)> {
        self.get(slot).map(|r| (r.width, r.height))
    }

    /// The last, golden and altref references of an inter frame; an
    /// error when a slot it names is empty (after damage or a seek).
    pub fn for_frame(
        &self,
        header: &FrameHeader,
    ) -> Result<[Reference<P>; REFS_PER_FRAME], Vp9Error> {
        let mut refs = Vec::with_capacity(REFS_PER_FRAME);
        for &slot in &header.ref_frame_idx {
            let reference = self
                .get(usize::from(slot))
                .ok_or_else(|| Vp9Error::MissingReference(format!("reference slot {slot}")))?;
            refs.push(*reference);
        }
        refs.try_into()
            .map_err(|_| Vp9Error::Invalid("reference count".into()))
    }

    /// `picture`, decoded from `header`, goes in the slots it refreshes.
    pub fn decoded(&mut self, header: &FrameHeader, picture: P) {
        let reference = Reference {
            picture,
            width: header.width,
            height: header.height,
        };
        self.slots
            .refresh(u32::from(header.refresh_frame_flags), &reference);
    }

    /// Every picture a slot holds, once each, sorted.
    pub fn pictures(&self) -> Vec<P> {
        let mut pictures: Vec<P> = self.slots.iter().map(|(_, r)| r.picture).collect();
        pictures.sort_unstable();
        pictures.dedup();
        pictures
    }

    pub fn clear(&mut self) {
        self.slots.clear();
    }
}
