//! `struct v4l2_ctrl_vp8_frame` from a parsed frame header and the device
//! timestamps of its references.

use v4l2r::bindings as b;

use crate::codec::vp8::tables::{KEY_FRAME_UV_MODE_PROBS, KEY_FRAME_Y_MODE_PROBS};
use crate::codec::vp8::{FrameHeader, FrameRefs};

/// The frame control of `header`; `refs` are the device timestamps of the
/// last, golden and altref pictures (none for a key frame, which the
/// driver decodes alone).
pub fn frame(header: &FrameHeader, refs: Option<FrameRefs<u64>>) -> b::v4l2_ctrl_vp8_frame {
    let seg = &header.segmentation;
    let segment_flags = flag(seg.enabled, b::V4L2_VP8_SEGMENT_FLAG_ENABLED)
        | flag(seg.update_map, b::V4L2_VP8_SEGMENT_FLAG_UPDATE_MAP)
        | flag(
            seg.update_data,
            b::V4L2_VP8_SEGMENT_FLAG_UPDATE_FEATURE_DATA,
        )
        | flag(!seg.absolute, b::V4L2_VP8_SEGMENT_FLAG_DELTA_VALUE_MODE);
    let lf_flags = flag(header.lf_adj_enable, b::V4L2_VP8_LF_ADJ_ENABLE)
        | flag(header.lf_delta_update, b::V4L2_VP8_LF_DELTA_UPDATE)
        | flag(header.filter_simple, b::V4L2_VP8_LF_FILTER_TYPE_SIMPLE);
    let frame_flags = flag(header.is_key_frame(), b::V4L2_VP8_FRAME_FLAG_KEY_FRAME)
        | flag(header.tag.show_frame, b::V4L2_VP8_FRAME_FLAG_SHOW_FRAME)
        | flag(
            header.mb_no_coeff_skip,
            b::V4L2_VP8_FRAME_FLAG_MB_NO_SKIP_COEFF,
        )
        | flag(
            header.sign_bias_golden,
            b::V4L2_VP8_FRAME_FLAG_SIGN_BIAS_GOLDEN,
        )
        | flag(
            header.sign_bias_altref,
            b::V4L2_VP8_FRAME_FLAG_SIGN_BIAS_ALT,
        );
    // Key frames code their modes with fixed probabilities (RFC 6386
    // 11.2): those are the ones the driver is given for them.
    let (y_mode_probs, uv_mode_probs) = if header.is_key_frame() {
        (KEY_FRAME_Y_MODE_PROBS, KEY_FRAME_UV_MODE_PROBS)
    } else {
        (header.probs.y_mode, header.probs.uv_mode)
    };
    let mut dct_part_sizes = [0u32; 8];
    for (out, &size) in dct_part_sizes.iter_mut().zip(&header.dct_partition_sizes) {
        *out = size;
    }
    let q = &header.quant;
    b::v4l2_ctrl_vp8_frame {
        segment: b::v4l2_vp8_segment {
            quant_update: seg.quant,
            lf_update: seg.lf,
            segment_probs: seg.tree_probs,
            padding: 0,
            flags: segment_flags,
        },
        lf: b::v4l2_vp8_loop_filter {
            ref_frm_delta: header.lf_deltas.ref_frame,
            mb_mode_delta: header.lf_deltas.mode,
            sharpness_level: header.sharpness_level,
            level: header.loop_filter_level,
            padding: 0,
            flags: lf_flags,
        },
        quant: b::v4l2_vp8_quantization {
            y_ac_qi: q.y_ac_qi,
            y_dc_delta: q.y_dc_delta,
            y2_dc_delta: q.y2_dc_delta,
            y2_ac_delta: q.y2_ac_delta,
            uv_dc_delta: q.uv_dc_delta,
            uv_ac_delta: q.uv_ac_delta,
            padding: 0,
        },
        entropy: b::v4l2_vp8_entropy {
            coeff_probs: header.probs.coeff,
            y_mode_probs,
            uv_mode_probs,
            mv_probs: header.probs.mv,
            padding: [0; 3],
        },
        coder_state: b::v4l2_vp8_entropy_coder_state {
            range: header.coder_state.range,
            value: header.coder_state.value,
            bit_count: header.coder_state.bit_count,
            padding: 0,
        },
        width: header.width,
        height: header.height,
        horizontal_scale: header.horizontal_scale,
        vertical_scale: header.vertical_scale,
        version: header.tag.version,
        prob_skip_false: header.prob_skip_false,
        prob_intra: header.prob_intra,
        prob_last: header.prob_last,
        prob_gf: header.prob_gf,
        num_dct_parts: header.dct_partitions,
        first_part_size: header.tag.first_part_size,
        first_part_header_bits: header.header_bits,
        dct_part_sizes,
        last_frame_ts: refs.map_or(0, |r| r.last),
        golden_frame_ts: refs.map_or(0, |r| r.golden),
        alt_frame_ts: refs.map_or(0, |r| r.altref),
        flags: frame_flags.into(),
    }
}

fn flag(set: bool, value: u32) -> u32 {
    if set {
        value
    } else {
        0
    }
}
