//! Ties OBU parsing and the reference slots together for a stateless
//! backend: temporal units in decoding order become decode jobs (one per
//! frame: its headers, its tile groups' places in the packet, the picture
//! in every slot) and the order pictures are shown in. Generic over how a
//! backend names a decoded picture (`P`: a V4L2 device timestamp).
//!
//! AV1 shows frames in decoding order: a frame with `show_frame` is shown
//! once decoded, a hidden one (`show_frame` 0, an altref) waits in its
//! slots until a later `show_existing_frame` shows its picture again.
//! Decoding starts at a key frame; after damage or a seek the slots are
//! emptied and frames are skipped until the next one.

use std::ops::Range;
use std::sync::Arc;

use tracing::debug;

use super::frame_header::{FrameHeader, FrameType};
use super::parser::{ParsedObu, StreamParser};
use super::sequence::SequenceHeader;
use super::tile_group::TileGroup;
use super::{Av1Error, NUM_REF_FRAMES};
use crate::codec::ref_slots::RefSlots;

/// One tile group of a frame: where its OBU lies in the temporal unit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TileGroupData {
    /// The whole OBU (header included) within the temporal unit; tile
    /// offsets in `group` are from its start.
    pub obu: Range<usize>,
    pub group: TileGroup,
}

/// A frame to decode.
#[derive(Debug, Clone)]
pub struct Frame<P> {
    /// The picture the frame is decoded into.
    pub picture: P,
    pub sequence: Arc<SequenceHeader>,
    pub header: Box<FrameHeader>,
    pub tile_groups: Vec<TileGroupData>,
    /// The picture in each slot before this frame (`None`: empty).
    pub slots: [Option<P>; NUM_REF_FRAMES],
    /// The first frame of a sequence (stream start, new sequence header,
    /// after a reset): the backend sets its queues up for it.
    pub new_sequence: bool,
}

#[derive(Debug, Clone)]
pub enum Event<P> {
    Decode(Frame<P>),
    /// A picture due for display, in display order.
    Show(P),
}

pub struct Av1Decoder<P> {
    parser: StreamParser,
    slots: RefSlots<P, NUM_REF_FRAMES>,
    sequence: Option<Arc<SequenceHeader>>,
    new_sequence: bool,
    /// The frame whose tile groups are being read.
    current: Option<Frame<P>>,
}

impl<P: Copy + Eq + std::fmt::Debug> Default for Av1Decoder<P> {
    fn default() -> Self {
        Self::new()
    }
}

impl<P: Copy + Eq + std::fmt::Debug> Av1Decoder<P> {
    pub fn new() -> Self {
        Self {
            parser: StreamParser::new(),
            slots: RefSlots::new(),
            sequence: None,
            new_sequence: true,
            current: None,
        }
    }

    /// The pictures the slots hold: a backend keeps their buffers.
    pub fn references(&self) -> Vec<P> {
        let mut pictures: Vec<P> = Vec::new();
        for (_, &p) in self.slots.iter() {
            if !pictures.contains(&p) {
                pictures.push(p);
            }
        }
        pictures
    }

    /// Forgets the slots and any frame in progress: decoding resumes at
    /// the next key frame.
    pub fn reset(&mut self) {
        self.parser.reset();
        self.slots.clear();
        self.current = None;
        self.new_sequence = true;
    }

    /// The events of one temporal unit. `new_picture` names the picture a
    /// frame is decoded into. On an error the slots are emptied (decoding
    /// resumes at the next key frame) and the events before it are lost.
    pub fn decode_temporal_unit(
        &mut self,
        data: &[u8],
        mut new_picture: impl FnMut() -> P,
    ) -> Result<Vec<Event<P>>, Av1Error> {
        let mut events = Vec::new();
        let mut offset = 0;
        while offset < data.len() {
            let result = self.parser.parse_obu(&data[offset..]);
            let (obu, parsed) = match result {
                Ok(ok) => ok,
                // Frames after a reset (or a start mid-stream) refer to
                // slots no key frame filled, or come before any sequence
                // header: skipped, not errors.
                Err(e @ (Av1Error::MissingReference(_) | Av1Error::MissingSequenceHeader))
                    if self.slots.iter().count() == 0 =>
                {
                    debug!("AV1 frame skipped until a key frame: {e}");
                    self.reset();
                    return Ok(events);
                }
                Err(e) => {
                    self.reset();
                    return Err(e);
                }
            };
            let range = offset..offset + obu.data.len();
            offset = range.end;
            match parsed {
                ParsedObu::SequenceHeader => self.sequence_header(),
                ParsedObu::Frame { header, tile_group } => {
                    self.frame_header(header, &mut new_picture, &mut events)?;
                    if let Some(group) = tile_group {
                        self.tile_group(range, group, &mut events)?;
                    }
                }
                ParsedObu::TileGroup(group) => self.tile_group(range, group, &mut events)?,
                ParsedObu::TemporalDelimiter | ParsedObu::Skipped => {}
            }
        }
        Ok(events)
    }

    fn sequence_header(&mut self) {
        let Some(parsed) = self.parser.sequence_header() else {
            return;
        };
        if self.sequence.as_deref() != Some(parsed) {
            self.sequence = Some(Arc::new(parsed.clone()));
            self.new_sequence = true;
        }
    }

    fn frame_header(
        &mut self,
        header: Box<FrameHeader>,
        new_picture: &mut impl FnMut() -> P,
        events: &mut Vec<Event<P>>,
    ) -> Result<(), Av1Error> {
        let sequence = self
            .sequence
            .clone()
            .ok_or(Av1Error::MissingSequenceHeader)?;
        if header.show_existing_frame {
            let slot = usize::from(header.frame_to_show_map_idx);
            let &picture = self
                .slots
                .get(slot)
                .ok_or(Av1Error::MissingReference(header.frame_to_show_map_idx))?;
            if header.frame_type == FrameType::Key {
                self.slots.refresh(0xff, &picture);
            }
            debug!(?picture, slot, "AV1 show_existing_frame");
            events.push(Event::Show(picture));
            return Ok(());
        }
        if self.slots.iter().count() == 0 && header.frame_type != FrameType::Key {
            // Only a key frame starts decoding; the parser refused most
            // such frames already (empty slots), intra-only ones come here.
            debug!(
                "AV1 {:?} frame before any key frame: skipped",
                header.frame_type
            );
            return Ok(());
        }
        let slots = std::array::from_fn(|i| self.slots.get(i).copied());
        let new_sequence = std::mem::take(&mut self.new_sequence);
        self.current = Some(Frame {
            picture: new_picture(),
            sequence,
            header,
            tile_groups: Vec::new(),
            slots,
            new_sequence,
        });
        Ok(())
    }

    fn tile_group(
        &mut self,
        obu: Range<usize>,
        group: TileGroup,
        events: &mut Vec<Event<P>>,
    ) -> Result<(), Av1Error> {
        let Some(frame) = self.current.as_mut() else {
            // The tile groups of a skipped frame.
            return Ok(());
        };
        let complete = group.ends_frame(&frame.header.tile_info);
        frame.tile_groups.push(TileGroupData { obu, group });
        if !complete {
            return Ok(());
        }
        let Some(frame) = self.current.take() else {
            return Ok(());
        };
        let picture = frame.picture;
        self.slots
            .refresh(u32::from(frame.header.refresh_frame_flags), &picture);
        let shown = frame.header.show_frame;
        debug!(
            ?picture,
            frame_type = ?frame.header.frame_type,
            order_hint = frame.header.order_hint,
            shown,
            refresh = frame.header.refresh_frame_flags,
            "AV1 frame"
        );
        events.push(Event::Decode(frame));
        if shown {
            events.push(Event::Show(picture));
        }
        Ok(())
    }
}
