//! H.264 for V4L2 stateless decoders: Annex-B NAL units, SPS/PPS/slice
//! headers, picture order count, the DPB and reference lists, and the
//! `v4l2_ctrl_h264_*` controls of each picture.
//!
//! Entry point: [`H264Decoder::decode_access_unit`]. For each returned
//! [`DecodeJob`], the V4L2 side:
//! - if `new_sequence`: drains, then (re)configures from `stream`
//!   (coded size, DPB size, bit depth) before submitting the job;
//! - sets `sps`, `pps`, `scaling_matrix` (when the PPS flag
//!   `V4L2_H264_PPS_FLAG_SCALING_MATRIX_PRESENT` is set) and `decode_params`;
//! - frame-based mode: one request with `bitstream(start_codes)`; slice
//!   parameters are not used in that mode (the driver parses slices);
//!   slice-based mode: one request per slice (`append_bitstream`, `params`,
//!   `pred_weights`), with `V4L2_BUF_FLAG_M2M_HOLD_CAPTURE_BUF` on all but
//!   the last;
//! - stamps the OUTPUT buffer(s) with `timestamp_ns` (both fields of a
//!   frame share it: they decode into one CAPTURE buffer);
//! - presents `output` in order once decoded, and may recycle the CAPTURE
//!   buffers in `released` once the compositor has let them go.
//!
//! At end of stream, [`H264Decoder::flush`] gives the last pictures; on a
//! seek, [`H264Decoder::reset`].

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

use crate::codec::bitstream::ReadError;

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
