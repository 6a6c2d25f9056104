//! `struct v4l2_ctrl_fwht_params` from a frame header.

use v4l2r::bindings::v4l2_ctrl_fwht_params;

use crate::codec::fwht::FrameHeader;

/// The parameters of the frame of `header`; `reference` is the device
/// timestamp of the picture a P frame predicts from (0 for an I frame,
/// which the driver decodes alone).
pub fn params(header: &FrameHeader, reference: u64) -> v4l2_ctrl_fwht_params {
    v4l2_ctrl_fwht_params {
        backward_ref_ts: reference,
        version: header.version,
        width: header.width,
        height: header.height,
        flags: header.flags,
        colorspace: header.colorspace,
        xfer_func: header.xfer_func,
        ycbcr_enc: header.ycbcr_enc,
        quantization: header.quantization,
    }
}
