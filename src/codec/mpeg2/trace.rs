//! Header parsing with every syntax element recorded, in the order and with
//! the names FFmpeg's `trace_headers` uses (array indices aside): how tests
//! hold the parsers against FFmpeg, and what the fuzz targets drive.

use crate::codec::bitstream::{BitReader, TraceEntry};

use super::headers::{
    Extension, ExtensionContext, GroupOfPictures, PictureCodingExtension, PictureHeader,
    SequenceHeader, SliceHeader,
};
use super::{start_code, Mpeg2Error};

/// What later units' syntax depends on: the sequence's size and
/// progressive flag, the picture's coding extension.
#[derive(Default)]
pub struct HeaderTracer {
    vertical_size_value: u32,
    context: ExtensionContext,
    vertical_size_extension: u32,
}

impl HeaderTracer {
    pub fn new() -> Self {
        Self::default()
    }

    /// Parses one unit (from its start code value on, the `00 00 01`
    /// before it left out) and returns its syntax elements. Start codes no
    /// header follows (system, reserved) give none.
    pub fn trace_unit(&mut self, unit: &[u8]) -> Result<Vec<TraceEntry>, Mpeg2Error> {
        let Some(&code) = unit.first() else {
            return Ok(Vec::new());
        };
        let mut r = BitReader::new(unit);
        r.enable_trace();
        match code {
            start_code::SEQUENCE_HEADER => {
                let header = SequenceHeader::parse(&mut r)?;
                self.vertical_size_value = u32::from(header.vertical_size_value);
                self.vertical_size_extension = 0;
            }
            start_code::EXTENSION => match Extension::parse(&mut r, &self.context)? {
                Extension::Sequence(ext) => {
                    self.context.progressive_sequence = ext.progressive_sequence;
                    self.vertical_size_extension = u32::from(ext.vertical_size_extension);
                }
                Extension::PictureCoding(coding) => self.context.picture_coding = Some(coding),
                _ => {}
            },
            start_code::GROUP => {
                GroupOfPictures::parse(&mut r)?;
            }
            start_code::PICTURE => {
                PictureHeader::parse(&mut r)?;
                self.context.picture_coding = None::<PictureCodingExtension>;
            }
            code if start_code::is_slice(code) => {
                let vertical_size = self.vertical_size_value | self.vertical_size_extension << 12;
                SliceHeader::parse(&mut r, vertical_size)?;
            }
            start_code::USER_DATA => {
                r.u(8, "user_data_start_code")?;
                while r.bits_left() >= 8 {
                    r.u(8, "user_data")?;
                }
            }
            start_code::SEQUENCE_END => {
                r.u(8, "sequence_end_code")?;
            }
            _ => {}
        }
        Ok(r.take_trace())
    }
}
