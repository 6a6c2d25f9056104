//! MPEG-2 video (ISO/IEC 13818-2) for stateless decoders: the headers
//! between start codes, parsed into types whose fields carry the
//! specification's names (clause numbers in the docs), the quantiser
//! matrices in force, and which pictures are references and when each is
//! shown. Pure: no device types; the V4L2 glue fills its controls from them.
//!
//! - [`headers`]: sequence header and its extensions, group of pictures,
//!   picture header, picture coding extension, slice header (6.2).
//! - [`quant`]: the quantiser matrices, loaded, inherited and reset (6.3.7,
//!   6.3.11).
//! - [`picture`]: a packet's start codes gathered into pictures with their
//!   slices (field pairs named as such).
//! - [`refs`]: forward/backward references and display order (6.1.1.11,
//!   7.6).
//! - [`trace`]: every syntax element as read, named as FFmpeg's
//!   `trace_headers` names it (tests and fuzzing).
//!
//! MPEG-1 streams (a sequence header with no sequence extension) are
//! refused as unsupported: the stateless interface decodes MPEG-2 only.

pub mod headers;
pub mod picture;
pub mod quant;
pub mod refs;
pub mod trace;

use thiserror::Error;

use crate::codec::bitstream::ReadError;

/// Start code values (Table 6-1): the byte after `00 00 01`.
pub mod start_code {
    pub const PICTURE: u8 = 0x00;
    pub const SLICE_FIRST: u8 = 0x01;
    pub const SLICE_LAST: u8 = 0xaf;
    pub const USER_DATA: u8 = 0xb2;
    pub const SEQUENCE_HEADER: u8 = 0xb3;
    pub const SEQUENCE_ERROR: u8 = 0xb4;
    pub const EXTENSION: u8 = 0xb5;
    pub const SEQUENCE_END: u8 = 0xb7;
    pub const GROUP: u8 = 0xb8;

    pub fn is_slice(code: u8) -> bool {
        (SLICE_FIRST..=SLICE_LAST).contains(&code)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Mpeg2Error {
    #[error(transparent)]
    Read(#[from] ReadError),
    /// A value the specification forbids, or headers out of order.
    #[error("{0}")]
    Invalid(String),
    /// Valid MPEG-1/MPEG-2 that the stateless interface cannot decode.
    #[error("{0}")]
    Unsupported(String),
}
