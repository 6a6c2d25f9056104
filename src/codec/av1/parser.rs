//! A stream's OBUs in order, with the state frame headers depend on: the
//! current sequence header, the reference slots, and the frame header its
//! tile groups belong to. The reference slots are updated when a frame's
//! last tile group has been read (or at once for show_existing_frame).

use crate::codec::bitstream::{BitReader, TraceEntry};

use super::frame_header::{FrameHeader, FrameType};
use super::obu::{Obu, ObuType};
use super::refs::RefFrames;
use super::sequence::SequenceHeader;
use super::tile_group::{byte_alignment, TileGroup};
use super::Av1Error;

/// What one OBU held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParsedObu {
    SequenceHeader,
    TemporalDelimiter,
    /// A frame header (OBU_FRAME_HEADER), with its first tile group when it
    /// came as an OBU_FRAME.
    Frame {
        header: Box<FrameHeader>,
        tile_group: Option<TileGroup>,
    },
    TileGroup(TileGroup),
    /// Metadata, padding, tile lists, redundant frame headers, reserved
    /// types and OBUs outside operating point 0: not needed to decode.
    Skipped,
}

#[derive(Default)]
pub struct StreamParser {
    sequence: Option<SequenceHeader>,
    refs: RefFrames,
    /// The frame whose tile groups are being read.
    frame: Option<FrameHeader>,
}

impl StreamParser {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn sequence_header(&self) -> Option<&SequenceHeader> {
        self.sequence.as_ref()
    }

    pub fn refs(&self) -> &RefFrames {
        &self.refs
    }

    /// Forgets the reference slots and any frame in progress (a seek or
    /// damage): decoding resumes at the next key frame.
    pub fn reset(&mut self) {
        self.refs.clear();
        self.frame = None;
    }

    /// Parses the OBU at the start of `data`; returns it (its length is
    /// what it took of `data`) with what it held.
    pub fn parse_obu<'a>(&mut self, data: &'a [u8]) -> Result<(Obu<'a>, ParsedObu), Av1Error> {
        let (obu, parsed, _) = self.parse(data, false)?;
        Ok((obu, parsed))
    }

    /// As [`StreamParser::parse_obu`], with every syntax element read
    /// (positions from the OBU's first bit).
    pub fn parse_obu_traced<'a>(
        &mut self,
        data: &'a [u8],
    ) -> Result<(Obu<'a>, ParsedObu, Vec<TraceEntry>), Av1Error> {
        self.parse(data, true)
    }

    fn parse<'a>(
        &mut self,
        data: &'a [u8],
        trace: bool,
    ) -> Result<(Obu<'a>, ParsedObu, Vec<TraceEntry>), Av1Error> {
        let mut header_reader = BitReader::new(data);
        if trace {
            header_reader.enable_trace();
        }
        let obu = Obu::parse_traced(data, &mut header_reader)?;
        let mut trace_entries = header_reader.take_trace();
        // The payload is read inside the OBU only.
        let mut r = BitReader::new(obu.data);
        r.skip(obu.payload_offset * 8, "obu_header")?;
        if trace {
            r.enable_trace();
        }
        let result = self.parse_payload(&obu, &mut r);
        trace_entries.extend(r.take_trace());
        if result.is_err() {
            self.frame = None;
        }
        Ok((obu, result?, trace_entries))
    }

    fn parse_payload(&mut self, obu: &Obu, r: &mut BitReader) -> Result<ParsedObu, Av1Error> {
        let idc = self
            .sequence
            .as_ref()
            .map_or(0, |s| s.operating_point_idc());
        if !obu.header.in_operating_point(idc) {
            return Ok(ParsedObu::Skipped);
        }
        match obu.header.obu_type {
            ObuType::SequenceHeader => {
                let sequence = SequenceHeader::parse(r)?;
                trailing_bits(r, obu)?;
                self.sequence = Some(sequence);
                Ok(ParsedObu::SequenceHeader)
            }
            ObuType::TemporalDelimiter => Ok(ParsedObu::TemporalDelimiter),
            ObuType::FrameHeader | ObuType::RedundantFrameHeader if self.frame.is_some() => {
                Ok(ParsedObu::Skipped)
            }
            ObuType::FrameHeader | ObuType::RedundantFrameHeader | ObuType::Frame => {
                let is_frame = obu.header.obu_type == ObuType::Frame;
                let sequence = self
                    .sequence
                    .as_ref()
                    .ok_or(Av1Error::MissingSequenceHeader)?;
                let header = FrameHeader::parse(r, sequence, &obu.header, &self.refs)?;
                if header.show_existing_frame {
                    if is_frame {
                        return Err(Av1Error::Invalid("OBU_FRAME with show_existing_frame"));
                    }
                    trailing_bits(r, obu)?;
                    self.show_existing(&header);
                    return Ok(ParsedObu::Frame {
                        header: Box::new(header),
                        tile_group: None,
                    });
                }
                self.frame = Some(header.clone());
                let tile_group = if is_frame {
                    byte_alignment(r)?;
                    let group = self.tile_group(r, obu)?;
                    // An OBU_FRAME carries its frame's first tiles (5.10).
                    if group.tg_start != 0 {
                        return Err(Av1Error::Invalid(
                            "OBU_FRAME's tile group does not start the frame",
                        ));
                    }
                    Some(group)
                } else {
                    trailing_bits(r, obu)?;
                    None
                };
                Ok(ParsedObu::Frame {
                    header: Box::new(header),
                    tile_group,
                })
            }
            ObuType::TileGroup => Ok(ParsedObu::TileGroup(self.tile_group(r, obu)?)),
            ObuType::Metadata | ObuType::TileList | ObuType::Padding | ObuType::Reserved(_) => {
                Ok(ParsedObu::Skipped)
            }
        }
    }

    /// A tile group of the current frame; its last updates the slots.
    fn tile_group(&mut self, r: &mut BitReader, obu: &Obu) -> Result<TileGroup, Av1Error> {
        let frame = self.frame.as_ref().ok_or(Av1Error::MissingFrameHeader)?;
        let group = TileGroup::parse(r, obu.data, &frame.tile_info)?;
        if group.ends_frame(&frame.tile_info) {
            if let (Some(frame), Some(sequence)) = (self.frame.take(), &self.sequence) {
                self.refs.refresh(
                    u32::from(frame.refresh_frame_flags),
                    &frame.ref_state(sequence),
                );
            }
        }
        Ok(group)
    }

    /// show_existing_frame of a key frame loads its state and refreshes
    /// every slot with it (7.21); other frames change nothing.
    fn show_existing(&mut self, header: &FrameHeader) {
        if header.frame_type != FrameType::Key {
            return;
        }
        if let Some(state) = self
            .refs
            .get(usize::from(header.frame_to_show_map_idx))
            .cloned()
        {
            self.refs.refresh(0xff, &state);
        }
    }
}

/// trailing_bits() up to the end of the OBU: a one, then zeros.
fn trailing_bits(r: &mut BitReader, obu: &Obu) -> Result<(), Av1Error> {
    if obu.payload().is_empty() {
        return Ok(());
    }
    let left = r.bits_left();
    if left == 0 {
        return Err(Av1Error::Invalid("header runs to the end of its OBU"));
    }
    r.u(1, "trailing_one_bit")?;
    for _ in 1..left {
        r.u(1, "trailing_zero_bit")?;
    }
    Ok(())
}
