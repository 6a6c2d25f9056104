//! HEVC (H.265) bitstream for stateless decoders: NAL unit headers and the
//! parameter sets and slice segment headers, parsed into types whose fields
//! carry the specification's names (ITU-T H.265, clause numbers in the
//! docs). Pure: no device types; the V4L2 glue fills its controls from them.
//!
//! - [`nal`]: NAL unit header (7.3.1.2), unit types (Table 7-1), where the
//!   RBSP's bits fall in the escaped NAL unit.
//! - [`ptl`]: profile_tier_level() (7.3.3).
//! - [`hrd`]: hrd_parameters() (E.2.2), shared by the VPS and the VUI.
//! - [`vps`]: video parameter set (7.3.2.1).
//! - [`sps`]: sequence parameter set (7.3.2.2) with its range extension.
//! - [`vui`]: VUI parameters (E.2.1).
//! - [`scaling`]: scaling_list_data() (7.3.4) with defaults and prediction.
//! - [`rps`]: short-term reference picture sets (7.3.7, 7.4.8).
//! - [`pps`]: picture parameter set (7.3.2.3) with tiles and its range
//!   extension.
//! - [`slice`]: slice segment header (7.3.6) with long-term pictures, list
//!   modification, pred_weight_table and entry points.
//! - [`refs`]: picture order count (8.3.1) and the RPS lists as POCs
//!   (8.3.2).
//! - [`dpb`]: the decoded picture buffer, marking and bumping (C.5.2).
//! - [`params`]: the parameter sets received so far, by id.
//! - [`trace`]: every syntax element as read, named as FFmpeg's
//!   `trace_headers` names it (tests and fuzzing).
//!
//! Every parser returns a `Result`: truncated data and values beyond the
//! specification's limits are errors, never panics.

pub mod decoder;
pub mod dpb;
pub mod extensions;
pub mod hrd;
pub mod nal;
pub mod params;
pub mod parse;
pub mod pps;
pub mod ptl;
pub mod refs;
pub mod rps;
pub mod scaling;
pub mod slice;
pub mod sps;
pub mod trace;
pub mod vps;
pub mod vui;

use thiserror::Error;

use crate::codec::bitstream::ReadError;

pub use nal::{Nal, NalHeader};
pub use params::ParameterSets;
pub use pps::Pps;
pub use rps::StRefPicSet;
pub use scaling::ScalingList;
pub use slice::{SliceHeader, SliceType};
pub use sps::Sps;
pub use vps::Vps;

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum HevcError {
    #[error("HEVC bitstream: {0}")]
    Bitstream(#[from] ReadError),
    #[error("HEVC: {0}")]
    Invalid(&'static str),
    #[error("HEVC: slice refers to picture parameter set {0}, which was not sent")]
    MissingPps(u8),
    #[error("HEVC: parameter set refers to sequence parameter set {0}, which was not sent")]
    MissingSps(u8),
    #[error("HEVC: {0} is not supported")]
    Unsupported(&'static str),
}
