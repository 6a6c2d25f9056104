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
    /// Bytes of the OBU before its payload (header, extension, size field).
    pub payload_offset: usize,
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
            let payload_offset = obu.payload_offset;
            offset = range.end;
            match parsed {
                ParsedObu::SequenceHeader => self.sequence_header(),
                ParsedObu::Frame { header, tile_group } => {
                    self.frame_header(header, &mut new_picture, &mut events)?;
                    if let Some(group) = tile_group {
                        self.tile_group(range, payload_offset, group, &mut events)?;
                    }
                }
                ParsedObu::TileGroup(group) => {
                    self.tile_group(range, payload_offset, group, &mut events)?
                }
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
        payload_offset: usize,
        group: TileGroup,
        events: &mut Vec<Event<P>>,
    ) -> Result<(), Av1Error> {
        let Some(frame) = self.current.as_mut() else {
            // The tile groups of a skipped frame.
            return Ok(());
        };
        let complete = group.ends_frame(&frame.header.tile_info);
        frame.tile_groups.push(TileGroupData {
            obu,
            payload_offset,
            group,
        });
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

/// Hand-made temporal units (tests here and in the V4L2 glue).
#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::codec::bitstream::reader::BitWriter;

    /// An OBU of `obu_type` with a size field around `payload`.
    pub(crate) fn obu(obu_type: u32, payload: &[u8]) -> Vec<u8> {
        assert!(payload.len() < 128);
        let mut out = vec![(obu_type << 3) as u8 | 0b10, payload.len() as u8];
        out.extend_from_slice(payload);
        out
    }

    /// A 16x16 8-bit 4:2:0 sequence with 7-bit order hints and no optional
    /// tools.
    pub(crate) fn sequence_header() -> Vec<u8> {
        sequence_header_at_level(0)
    }

    /// The same sequence with `seq_level_idx` `level`.
    pub(crate) fn sequence_header_at_level(level: u32) -> Vec<u8> {
        let mut w = BitWriter::new();
        w.u(3, 0); // seq_profile
        w.u(2, 0); // still_picture, reduced_still_picture_header
        w.u(2, 0); // timing_info_present_flag, initial_display_delay_present_flag
        w.u(5, 0); // operating_points_cnt_minus_1
        w.u(12, 0); // operating_point_idc
        w.u(5, level); // seq_level_idx
        if level > 7 {
            w.u(1, 0); // seq_tier
        }
        w.u(4, 3); // frame_width_bits_minus_1
        w.u(4, 3); // frame_height_bits_minus_1
        w.u(4, 15); // max_frame_width_minus_1
        w.u(4, 15); // max_frame_height_minus_1
        w.u(4, 0); // frame ids, 128x128, filter intra, intra edge
        w.u(4, 0); // interintra, masked, warped, dual filter
        w.u(1, 1); // enable_order_hint
        w.u(2, 0); // jnt_comp, ref_frame_mvs
        w.u(2, 0); // seq_choose_screen_content_tools, seq_force_screen_content_tools
        w.u(3, 6); // order_hint_bits_minus_1
        w.u(3, 0); // superres, cdef, restoration
        w.u(3, 0); // high_bitdepth, mono_chrome, color_description_present_flag
        w.u(1, 0); // color_range
        w.u(2, 0); // chroma_sample_position
        w.u(1, 0); // separate_uv_delta_q
        w.u(1, 0); // film_grain_params_present
        w.trailing();
        obu(1, &w.bytes)
    }

    /// A hidden key frame (showable) refreshing slot 0, as one OBU_FRAME
    /// with a one-byte tile.
    pub(crate) fn hidden_key_frame() -> Vec<u8> {
        let mut w = BitWriter::new();
        w.u(1, 0); // show_existing_frame
        w.u(2, 0); // frame_type KEY_FRAME
        w.u(1, 0); // show_frame
        w.u(1, 1); // showable_frame
        w.u(1, 0); // error_resilient_mode
        w.u(1, 0); // disable_cdf_update
        w.u(1, 0); // frame_size_override_flag
        w.u(7, 0); // order_hint
        w.u(8, 0x01); // refresh_frame_flags
        w.u(1, 0); // render_and_frame_size_different
        w.u(1, 0); // disable_frame_end_update_cdf
        w.u(1, 1); // uniform_tile_spacing_flag (one superblock: no log2 bits)
        w.u(8, 10); // base_q_idx
        w.u(3, 0); // delta_q y dc, u dc, u ac not coded
        w.u(1, 0); // using_qmatrix
        w.u(1, 0); // segmentation_enabled
        w.u(1, 0); // delta_q_present
        w.u(12, 0); // loop_filter_level[0], [1]
        w.u(3, 0); // loop_filter_sharpness
        w.u(1, 0); // loop_filter_delta_enabled
        w.u(1, 0); // tx_mode_select
        w.u(1, 0); // reduced_tx_set
        while w.bits_written() % 8 != 0 {
            w.bit(false); // byte_alignment(); the tile group has no header bits
        }
        w.bytes.push(0xaa); // the tile
        obu(6, &w.bytes)
    }

    pub(crate) fn show_existing(slot: u32) -> Vec<u8> {
        let mut w = BitWriter::new();
        w.u(1, 1); // show_existing_frame
        w.u(3, slot); // frame_to_show_map_idx
        w.trailing();
        obu(3, &w.bytes)
    }

    #[test]
    fn a_shown_existing_key_frame_refreshes_every_slot() {
        let mut decoder: Av1Decoder<u32> = Av1Decoder::new();
        let mut tu = sequence_header();
        tu.extend(hidden_key_frame());
        let events = decoder.decode_temporal_unit(&tu, || 7).unwrap();
        let [Event::Decode(frame)] = &events[..] else {
            panic!("one hidden frame decoded: {events:?}");
        };
        assert!(frame.new_sequence && !frame.header.show_frame);
        assert_eq!(
            (
                frame.header.size.frame_width,
                frame.header.size.frame_height
            ),
            (16, 16)
        );
        assert_eq!(frame.tile_groups[0].group.tiles[0].size, 1);
        assert_eq!(decoder.parser.refs().iter().count(), 1);
        assert_eq!(decoder.references(), vec![7]);

        let events = decoder
            .decode_temporal_unit(&show_existing(0), || 8)
            .unwrap();
        assert!(matches!(events[..], [Event::Show(7)]));
        // Every slot now holds the key frame, in the parser and here.
        assert_eq!(decoder.parser.refs().iter().count(), 8);
        assert!((0..8).all(|i| decoder.slots.get(i) == Some(&7)));
        // Showing an empty slot after a reset is skipped, not an error.
        decoder.reset();
        assert!(decoder
            .decode_temporal_unit(&show_existing(3), || 9)
            .unwrap()
            .is_empty());
    }
}
