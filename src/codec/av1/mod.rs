//! AV1 bitstream for stateless decoders: OBUs, the sequence header, frame
//! headers and tile groups, parsed into types whose fields carry the
//! specification's names (AV1 Bitstream & Decoding Process Specification,
//! section numbers in the docs), and the eight reference slots' saved
//! state. Pure: no device types; the V4L2 glue fills its controls from them.
//!
//! - [`obu`]: OBU headers (5.3) and splitting a temporal unit into OBUs.
//! - [`sequence`]: sequence header OBU (5.5) with colour config, timing and
//!   decoder model info and operating points.
//! - [`frame_header`]: uncompressed header (5.9): frame type, sizes,
//!   references, and the parameter sets of [`params`], [`tile_info`],
//!   [`global_motion`] and [`film_grain`].
//! - [`refs`]: the reference slots' saved state (7.20, 7.21), short
//!   reference signalling (7.8) and skip mode frames.
//! - [`tile_group`]: tile group OBU header (5.11.1) and where each tile's
//!   data lies.
//! - [`decoder`]: temporal units to decode jobs and display order, with
//!   the picture in every reference slot.
//! - [`parser`]: a stream's OBUs in order, with the state that frame
//!   headers depend on.
//! - [`trace`]: every syntax element as read, named as FFmpeg's
//!   `trace_headers` names it (tests and fuzzing).
//!
//! Every parser returns a `Result`: truncated data and values beyond the
//! specification's limits are errors, never panics.

pub mod decoder;
pub mod film_grain;
pub mod frame_header;
pub mod global_motion;
pub mod obu;
pub mod params;
pub mod parser;
pub mod refs;
pub mod sequence;
pub mod tile_group;
pub mod tile_info;
pub mod trace;

use thiserror::Error;

use crate::codec::bitstream::ReadError;

pub use frame_header::{FrameHeader, FrameType};
pub use obu::{Obu, ObuHeader, ObuType};
pub use parser::{ParsedObu, StreamParser};
pub use sequence::SequenceHeader;

/// `NUM_REF_FRAMES`: reference slots.
pub const NUM_REF_FRAMES: usize = 8;
/// `REFS_PER_FRAME`: references a frame names (LAST_FRAME..=ALTREF_FRAME).
pub const REFS_PER_FRAME: usize = 7;
/// `TOTAL_REFS_PER_FRAME`: INTRA_FRAME and the seven references.
pub const TOTAL_REFS_PER_FRAME: usize = 8;
/// Operating points a sequence header can describe (5 bits of count).
pub const MAX_OPERATING_POINTS: usize = 32;
/// `PRIMARY_REF_NONE`.
pub const PRIMARY_REF_NONE: u8 = 7;

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Av1Error {
    #[error("AV1 bitstream: {0}")]
    Bitstream(#[from] ReadError),
    #[error("AV1: {0}")]
    Invalid(&'static str),
    #[error("AV1: a frame header came before any sequence header")]
    MissingSequenceHeader,
    #[error("AV1: a frame header came before its tile group's frame header")]
    MissingFrameHeader,
    #[error("AV1: frame refers to reference slot {0}, which holds no frame")]
    MissingReference(u8),
    #[error("AV1: {0} is not supported")]
    Unsupported(&'static str),
}
