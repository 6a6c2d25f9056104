//! A packet's start codes gathered into pictures: the sequence in force
//! (header and extensions), the group of pictures, the picture header and
//! coding extension, the quantiser matrices after any quant matrix
//! extension, and the slices as byte ranges of the packet (each from its
//! start code value on). A field picture is one picture here; the glue
//! pairs fields into frames.

use std::ops::Range;

use crate::codec::bitstream::annexb::start_code_unit_ranges;
use crate::codec::bitstream::BitReader;

use super::headers::{
    Extension, ExtensionContext, GroupOfPictures, PictureCodingExtension, PictureHeader,
    SequenceDisplayExtension, SequenceExtension, SequenceHeader,
};
use super::quant::QuantMatrices;
use super::{start_code, Mpeg2Error};

/// A sequence header with its extensions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sequence {
    pub header: SequenceHeader,
    pub extension: SequenceExtension,
    pub display: Option<SequenceDisplayExtension>,
}

impl Sequence {
    pub fn horizontal_size(&self) -> u32 {
        u32::from(self.header.horizontal_size_value)
            | u32::from(self.extension.horizontal_size_extension) << 12
    }

    pub fn vertical_size(&self) -> u32 {
        u32::from(self.header.vertical_size_value)
            | u32::from(self.extension.vertical_size_extension) << 12
    }

    /// The size in macroblocks, as pixels (6.3.3: an interlaced sequence
    /// counts its rows in pairs of field macroblocks).
    pub fn coded_size(&self) -> (u32, u32) {
        let rows = if self.extension.progressive_sequence {
            16
        } else {
            32
        };
        (
            self.horizontal_size().div_ceil(16) * 16,
            self.vertical_size().div_ceil(rows) * rows,
        )
    }

    /// vbv_buffer_size (6.3.3): in units of 16 kbit.
    pub fn vbv_buffer_size(&self) -> u32 {
        u32::from(self.header.vbv_buffer_size_value)
            | u32::from(self.extension.vbv_buffer_size_extension) << 10
    }

    /// The sample aspect ratio from aspect_ratio_information (Table 6-3):
    /// a display aspect ratio over the display size (the sequence display
    /// extension's, else the picture's).
    pub fn sample_aspect(&self) -> Option<(u32, u32)> {
        let (dar_w, dar_h) = match self.header.aspect_ratio_information {
            1 => return Some((1, 1)),
            2 => (4, 3),
            3 => (16, 9),
            4 => (221, 100),
            _ => return None,
        };
        let (w, h) = self
            .display
            .filter(|d| d.display_horizontal_size > 0 && d.display_vertical_size > 0)
            .map_or((self.horizontal_size(), self.vertical_size()), |d| {
                (
                    u32::from(d.display_horizontal_size),
                    u32::from(d.display_vertical_size),
                )
            });
        let (num, den) = (dar_w * h, dar_h * w);
        let g = gcd(num, den);
        (g > 0).then(|| (num / g, den / g))
    }

    /// Whether pictures of `other` fit the CAPTURE buffers of this one.
    pub fn same_format(&self, other: &Sequence) -> bool {
        self.coded_size() == other.coded_size()
            && self.extension.chroma_format == other.extension.chroma_format
            && self.extension.progressive_sequence == other.extension.progressive_sequence
    }
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// One coded picture (a frame or one field) and everything decoding it
/// takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Picture {
    pub sequence: Sequence,
    /// The first picture of a sequence whose format differs from the one
    /// before (or the first after a reset).
    pub new_sequence: bool,
    /// The last group of pictures header (closed_gop, broken_link).
    pub gop: Option<GroupOfPictures>,
    pub header: PictureHeader,
    pub coding: PictureCodingExtension,
    pub quant: QuantMatrices,
    /// Each slice from its start code value to the next start code.
    pub slices: Vec<Range<usize>>,
}

/// A picture whose header has been read and whose slices are being
/// gathered.
struct Building {
    header: PictureHeader,
    coding: Option<PictureCodingExtension>,
    slices: Vec<Range<usize>>,
    /// The row of the last slice (slice_vertical_position).
    last_row: u8,
}

/// The headers in force between packets.
#[derive(Debug, Default)]
pub struct PictureParser {
    sequence: Option<Sequence>,
    /// A sequence header waiting for its sequence extension.
    waiting_header: Option<SequenceHeader>,
    /// Whether the next picture starts a new sequence.
    sequence_change: bool,
    quant: QuantMatrices,
    gop: Option<GroupOfPictures>,
}

impl PictureParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// The sequence in force.
    pub fn sequence(&self) -> Option<&Sequence> {
        self.sequence.as_ref()
    }

    /// Forgets the position in the stream (seek). The sequence stays known
    /// (streams may carry one sequence header only), and the next picture
    /// announces it again.
    pub fn reset(&mut self) {
        self.waiting_header = None;
        self.gop = None;
        self.sequence_change = self.sequence.is_some();
        if let Some(sequence) = &self.sequence {
            self.quant = QuantMatrices::from_sequence_header(&sequence.header);
        }
    }

    /// Reads a sequence header and extension given apart from the pictures
    /// (a container's extradata).
    pub fn parse_sequence(&mut self, bytes: &[u8]) -> Result<(), Mpeg2Error> {
        let pictures = self.parse_packet(bytes)?;
        if pictures.is_empty() {
            Ok(())
        } else {
            Err(Mpeg2Error::Invalid("pictures in a sequence header".into()))
        }
    }

    /// The pictures of one packet, in decoding order.
    pub fn parse_packet(&mut self, packet: &[u8]) -> Result<Vec<Picture>, Mpeg2Error> {
        let mut pictures = Vec::new();
        let mut building: Option<Building> = None;
        for range in start_code_unit_ranges(packet) {
            let unit = &packet[range.clone()];
            let code = unit[0];
            let mut r = BitReader::new(unit);
            match code {
                start_code::SEQUENCE_HEADER => {
                    self.finish(building.take(), &mut pictures)?;
                    let header = SequenceHeader::parse(&mut r)?;
                    self.quant = QuantMatrices::from_sequence_header(&header);
                    self.waiting_header = Some(header);
                }
                start_code::EXTENSION => {
                    let context = ExtensionContext {
                        progressive_sequence: self
                            .sequence
                            .as_ref()
                            .is_some_and(|s| s.extension.progressive_sequence),
                        picture_coding: building.as_ref().and_then(|b| b.coding),
                    };
                    match Extension::parse(&mut r, &context)? {
                        Extension::Sequence(extension) => self.sequence_extension(extension),
                        Extension::SequenceDisplay(display) => {
                            if let Some(sequence) = &mut self.sequence {
                                sequence.display = Some(display);
                            }
                        }
                        Extension::QuantMatrix(ext) => self.quant.apply(&ext),
                        Extension::PictureCoding(coding) => match &mut building {
                            Some(b) if b.coding.is_none() && b.slices.is_empty() => {
                                b.coding = Some(coding)
                            }
                            _ => {
                                return Err(Mpeg2Error::Invalid(
                                    "picture coding extension without its picture header".into(),
                                ))
                            }
                        },
                        Extension::PictureDisplay(_) | Extension::Other(_) => {}
                    }
                }
                start_code::GROUP => {
                    self.finish(building.take(), &mut pictures)?;
                    self.gop = Some(GroupOfPictures::parse(&mut r)?);
                }
                start_code::PICTURE => {
                    self.finish(building.take(), &mut pictures)?;
                    if self.waiting_header.is_some() {
                        return Err(Mpeg2Error::Unsupported(
                            "MPEG-1 video (a sequence header without a sequence extension): \
                             the V4L2 stateless interface decodes MPEG-2 only"
                                .into(),
                        ));
                    }
                    building = Some(Building {
                        header: PictureHeader::parse(&mut r)?,
                        coding: None,
                        slices: Vec::new(),
                        last_row: 0,
                    });
                }
                code if start_code::is_slice(code) => match &mut building {
                    Some(b) => {
                        self.check_slice_row(b, code)?;
                        b.last_row = code;
                        b.slices.push(range);
                    }
                    None => return Err(Mpeg2Error::Invalid("slice without a picture".into())),
                },
                start_code::SEQUENCE_END => self.finish(building.take(), &mut pictures)?,
                // User data, sequence errors, system start codes: no part
                // of a picture.
                _ => {}
            }
        }
        self.finish(building, &mut pictures)?;
        Ok(pictures)
    }

    /// Slices come in row order (6.3.16) and inside the picture: a row
    /// going back means a picture header was lost.
    fn check_slice_row(&self, building: &Building, row: u8) -> Result<(), Mpeg2Error> {
        let Some(sequence) = &self.sequence else {
            return Ok(());
        };
        // Above 2800 lines the row number has an extension: not checked.
        if sequence.vertical_size() > 2800 {
            return Ok(());
        }
        let field = building.coding.is_some_and(|c| c.is_field());
        let rows = sequence.coded_size().1 / if field { 32 } else { 16 };
        if u32::from(row) > rows {
            return Err(Mpeg2Error::Invalid(format!(
                "slice of row {row} in a picture of {rows} rows"
            )));
        }
        if building.last_row > row {
            return Err(Mpeg2Error::Invalid(format!(
                "slice of row {row} after row {}: a picture header is missing",
                building.last_row
            )));
        }
        Ok(())
    }

    fn sequence_extension(&mut self, extension: SequenceExtension) {
        let Some(header) = self.waiting_header.take() else {
            // A sequence extension must follow its sequence header.
            return;
        };
        let sequence = Sequence {
            header,
            extension,
            display: None,
        };
        if self
            .sequence
            .as_ref()
            .is_none_or(|old| !old.same_format(&sequence))
        {
            self.sequence_change = true;
        }
        self.sequence = Some(sequence);
    }

    fn finish(
        &mut self,
        building: Option<Building>,
        pictures: &mut Vec<Picture>,
    ) -> Result<(), Mpeg2Error> {
        let Some(b) = building else {
            return Ok(());
        };
        let Some(sequence) = self.sequence.clone() else {
            return Err(Mpeg2Error::Invalid(
                "picture before any sequence header".into(),
            ));
        };
        let Some(coding) = b.coding else {
            return Err(Mpeg2Error::Invalid(
                "picture without a picture coding extension".into(),
            ));
        };
        if b.header.picture_coding_type == super::headers::picture_coding_type::D {
            return Err(Mpeg2Error::Invalid("D picture in an MPEG-2 stream".into()));
        }
        if b.slices.is_empty() {
            return Err(Mpeg2Error::Invalid("picture without slices".into()));
        }
        pictures.push(Picture {
            sequence,
            new_sequence: std::mem::take(&mut self.sequence_change),
            gop: self.gop,
            header: b.header,
            coding,
            quant: self.quant,
            slices: b.slices,
        });
        Ok(())
    }
}
