//! H.264 for V4L2 stateless decoders: Annex-B NAL units, SPS/PPS/slice
//! headers, picture order count, the DPB and reference lists, and the
//! `v4l2_ctrl_h264_*` controls of each picture.
//!
//! Entry point: [`H264Decoder::decode_access_unit`].

pub mod controls;
pub mod decoder;
pub mod dpb;
pub mod nal;
pub mod poc;
pub mod pps;
pub mod reflist;
pub mod scaling;
pub mod slice;
pub mod sps;
pub mod trace;

use thiserror::Error;

use crate::codec::bitreader::ReadError;

pub use decoder::{DecodeJob, H264Decoder, SliceJob, StreamInfo};
pub use dpb::{DpbOutput, PicStructure};

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum H264Error {
    #[error("H.264 bitstream: {0}")]
    Bitstream(#[from] ReadError),
    #[error("H.264: {0}")]
    Invalid(&'static str),
    #[error("H.264: slice refers to picture parameter set {0}, which was not sent")]
    MissingPps(u8),
    #[error("H.264: parameter set refers to sequence parameter set {0}, which was not sent")]
    MissingSps(u8),
    #[error("H.264: {0} is not supported")]
    Unsupported(&'static str),
}

#[cfg(test)]
mod tests;
