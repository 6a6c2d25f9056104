//! H.264 for stateless decoders: Annex-B NAL units, SPS/PPS/slice headers,
//! picture order count, the DPB and reference lists. Pure: no device types;
//! `v4l2::h264` turns its jobs into controls and requests.
//!
//! Entry point: [`H264Decoder::decode_access_unit`]. For each returned
//! [`DecodeJob`], a decoder backend:
//! - if `new_sequence`: drains, then (re)configures from `stream`
//!   (coded size, DPB size, bit depth) before submitting the job;
//! - sends the picture's parameter sets, order counts and reference
//!   pictures (`dpb`), and each slice (`nal`, a range of the access unit)
//!   with its reference lists as indices into `dpb`;
//! - stamps the OUTPUT buffer(s) with `timestamp_ns` (both fields of a
//!   frame share it: they decode into one CAPTURE buffer);
//! - presents `output` in order once decoded, and may recycle the CAPTURE
//!   buffers in `released` once the compositor has let them go.
//!
//! At end of stream, [`H264Decoder::flush`] gives the last pictures; on a
//! seek, [`H264Decoder::reset`].

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

use crate::codec::bitstream::ReadError;

pub use crate::codec::access_unit::DpbOutput;
pub use decoder::{DecodeJob, DpbReference, H264Decoder, ListEntry, SliceJob, StreamInfo};
pub use dpb::PicStructure;

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
pub(crate) mod tests;
