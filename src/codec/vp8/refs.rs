//! VP8's three reference slots (RFC 6386 9.7): last, golden and altref,
//! each holding a decoded picture's handle. A key frame fills all three;
//! an inter frame may copy one slot into another, then puts itself where
//! its refresh flags say.

use super::header::FrameHeader;
use crate::codec::ref_slots::RefSlots;

pub const LAST: usize = 0;
pub const GOLDEN: usize = 1;
pub const ALTREF: usize = 2;

/// The pictures an inter frame predicts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameRefs<T> {
    pub last: T,
    pub golden: T,
    pub altref: T,
}

/// The reference slots of one stream; `T` names a decoded picture.
#[derive(Debug, Clone, Default)]
pub struct References<T> {
    slots: RefSlots<T, 3>,
}

impl<T: Copy + Ord> References<T> {
    pub fn new() -> Self {
        Self {
            slots: RefSlots::new(),
        }
    }

    /// What the frame of `header` predicts from; `None` for a key frame,
    /// and for an inter frame whose references are missing (after a seek or
    /// damage: it cannot be decoded). An inter frame names all three slots.
    pub fn for_frame(&self, header: &FrameHeader) -> Option<FrameRefs<T>> {
        if header.is_key_frame() {
            return None;
        }
        Some(FrameRefs {
            last: *self.slots.get(LAST)?,
            golden: *self.slots.get(GOLDEN)?,
            altref: *self.slots.get(ALTREF)?,
        })
    }

    /// Whether the frame of `header` can be decoded from what the slots hold.
    pub fn can_decode(&self, header: &FrameHeader) -> bool {
        header.is_key_frame() || self.slots.all_filled([LAST, GOLDEN, ALTREF])
    }

    /// The slots after `picture`, the frame of `header`, is decoded. The
    /// copies read the slots as they were before the frame, altref's first
    /// (as libvpx's decoder orders them): `copy_buffer_to_golden` = 2 takes
    /// the altref slot as the copy to it left it.
    pub fn decoded(&mut self, header: &FrameHeader, picture: T) {
        let refresh = &header.refresh;
        if header.is_key_frame() {
            self.slots.refresh(0b111, &picture);
            return;
        }
        match refresh.copy_to_altref {
            1 => self.slots.copy(LAST, ALTREF),
            2 => self.slots.copy(GOLDEN, ALTREF),
            _ => {}
        }
        match refresh.copy_to_golden {
            1 => self.slots.copy(LAST, GOLDEN),
            2 => self.slots.copy(ALTREF, GOLDEN),
            _ => {}
        }
        let mask = u32::from(refresh.last) << LAST
            | u32::from(refresh.golden) << GOLDEN
            | u32::from(refresh.altref) << ALTREF;
        self.slots.refresh(mask, &picture);
    }

    /// The distinct pictures the slots hold.
    pub fn pictures(&self) -> Vec<T> {
        self.slots.distinct()
    }

    pub fn reset(&mut self) {
        self.slots.clear();
    }
}
