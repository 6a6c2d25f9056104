//! VP9 (profiles 0 to 3 parsed; the V4L2 glue decodes 4:2:0 profiles 0
//! and 2): superframe splitting, the uncompressed and compressed headers,
//! and the reference slots frames are decoded from and shown again from.

pub mod compressed;
pub mod header;
pub mod refs;
pub mod superframe;
pub mod trace;

use thiserror::Error;

use crate::codec::bitstream::{BoolError, ReadError};

pub use compressed::CompressedHeader;
pub use header::{Frame, FrameHeader, PersistentState};

#[derive(Debug, Error)]
pub enum Vp9Error {
    #[error("VP9 header: {0}")]
    Read(#[from] ReadError),
    #[error("VP9 compressed header: {0}")]
    Bool(#[from] BoolError),
    #[error("VP9: {0}")]
    Invalid(String),
    /// A frame that needs a reference the decoder does not hold (after
    /// damage or a seek): skipped until the next key frame.
    #[error("VP9: missing {0}")]
    MissingReference(String),
}

/// Both headers of a frame to decode.
#[derive(Clone, Debug)]
pub struct Headers {
    pub header: FrameHeader,
    pub compressed: CompressedHeader,
}

/// One frame of a packet, its headers read.
#[derive(Clone, Debug)]
pub enum ParsedFrame {
    Decode(Box<Headers>),
    /// `show_existing_frame`: the picture in this slot is shown again.
    ShowExisting {
        slot: u8,
    },
}

/// Reads both headers of the frame in `data` (one frame of a superframe).
pub fn parse_frame(
    data: &[u8],
    state: &mut PersistentState,
    ref_size: impl Fn(usize) -> Option<(u32, u32)>,
) -> Result<ParsedFrame, Vp9Error> {
    let mut r = crate::codec::bitstream::BitReader::new(data);
    let header = match header::parse(&mut r, state, ref_size)? {
        Frame::ShowExisting { slot, .. } => return Ok(ParsedFrame::ShowExisting { slot }),
        Frame::Decode(header) => *header,
    };
    let compressed = compressed_header(data, &header)?;
    Ok(ParsedFrame::Decode(Box::new(Headers {
        header,
        compressed,
    })))
}

/// The compressed header following `header` in `data`.
pub fn compressed_header(data: &[u8], header: &FrameHeader) -> Result<CompressedHeader, Vp9Error> {
    CompressedHeader::parse(compressed_header_bytes(data, header)?, header)
}

/// The bytes of the compressed header following `header` in `data`.
pub fn compressed_header_bytes<'a>(
    data: &'a [u8],
    header: &FrameHeader,
) -> Result<&'a [u8], Vp9Error> {
    let start = header.uncompressed_header_size;
    let end = start + usize::from(header.header_size_in_bytes);
    data.get(start..end).ok_or_else(|| {
        Vp9Error::Invalid(format!(
            "a compressed header of {} bytes past the end of a {}-byte frame",
            header.header_size_in_bytes,
            data.len()
        ))
    })
}
