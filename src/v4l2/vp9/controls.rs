//! Filling the kernel's VP9 stateless controls from the codec layer's
//! headers: `V4L2_CID_STATELESS_VP9_FRAME` (v4l2r's typed `Vp9Frame`) and
//! `V4L2_CID_STATELESS_VP9_COMPRESSED_HDR` (a marker type here: v4l2r has
//! none).

use crate::v4l2::controls::marker_control;
use v4l2r::bindings as b;

use crate::codec::vp9::header::{FrameHeader, LoopFilter, Quantization, Segmentation};
use crate::codec::vp9::CompressedHeader;

marker_control!(
    Vp9CompressedHdr,
    b::V4L2_CID_STATELESS_VP9_COMPRESSED_HDR,
    b::v4l2_ctrl_vp9_compressed_hdr
);

fn flags(pairs: &[(bool, u32)]) -> u32 {
    pairs
        .iter()
        .filter(|(on, _)| *on)
        .fold(0, |acc, (_, flag)| acc | flag)
}

/// The device timestamps of the last, golden and altref references of an
/// inter frame (0 for intra frames).
pub type ReferenceTimestamps = [u64; 3];

/// `V4L2_VP9_RESET_FRAME_CTX_*` from the coded `reset_frame_context`
/// (0 and 1 reset nothing, 2 the context `frame_context_idx` names, 3 all).
fn reset_frame_context(coded: u8) -> u8 {
    match coded {
        2 => b::V4L2_VP9_RESET_FRAME_CTX_SPEC as u8,
        3 => b::V4L2_VP9_RESET_FRAME_CTX_ALL as u8,
        _ => b::V4L2_VP9_RESET_FRAME_CTX_NONE as u8,
    }
}

fn loop_filter(lf: &LoopFilter) -> b::v4l2_vp9_loop_filter {
    b::v4l2_vp9_loop_filter {
        ref_deltas: lf.ref_deltas,
        mode_deltas: lf.mode_deltas,
        level: lf.level,
        sharpness: lf.sharpness,
        flags: flags(&[
            (lf.delta_enabled, b::V4L2_VP9_LOOP_FILTER_FLAG_DELTA_ENABLED),
            (lf.delta_update, b::V4L2_VP9_LOOP_FILTER_FLAG_DELTA_UPDATE),
        ]) as u8,
        reserved: [0; 7],
    }
}

fn quantization(q: &Quantization) -> b::v4l2_vp9_quantization {
    b::v4l2_vp9_quantization {
        base_q_idx: q.base_q_idx,
        delta_q_y_dc: q.delta_q_y_dc,
        delta_q_uv_dc: q.delta_q_uv_dc,
        delta_q_uv_ac: q.delta_q_uv_ac,
        reserved: [0; 4],
    }
}

fn segmentation(s: &Segmentation) -> b::v4l2_vp9_segmentation {
    let feature_enabled = s.feature_enabled.map(|features| {
        features
            .iter()
            .enumerate()
            .filter(|(_, &on)| on)
            .fold(0u8, |acc, (feature, _)| acc | (1 << feature))
    });
    b::v4l2_vp9_segmentation {
        feature_data: s.feature_data,
        feature_enabled,
        tree_probs: s.tree_probs,
        pred_probs: s.pred_probs,
        flags: flags(&[
            (s.enabled, b::V4L2_VP9_SEGMENTATION_FLAG_ENABLED),
            (s.update_map, b::V4L2_VP9_SEGMENTATION_FLAG_UPDATE_MAP),
            (
                s.temporal_update,
                b::V4L2_VP9_SEGMENTATION_FLAG_TEMPORAL_UPDATE,
            ),
            (s.update_data, b::V4L2_VP9_SEGMENTATION_FLAG_UPDATE_DATA),
            (
                s.abs_or_delta_update,
                b::V4L2_VP9_SEGMENTATION_FLAG_ABS_OR_DELTA_UPDATE,
            ),
        ]) as u8,
        reserved: [0; 5],
    }
}

/// `struct v4l2_ctrl_vp9_frame` of a frame.
pub fn frame(
    h: &FrameHeader,
    compressed: &CompressedHeader,
    refs: ReferenceTimestamps,
) -> b::v4l2_ctrl_vp9_frame {
    let color = &h.color;
    let sign_bias = [
        b::V4L2_VP9_SIGN_BIAS_LAST,
        b::V4L2_VP9_SIGN_BIAS_GOLDEN,
        b::V4L2_VP9_SIGN_BIAS_ALT,
    ];
    let ref_frame_sign_bias = h
        .ref_frame_sign_bias
        .iter()
        .zip(sign_bias)
        .filter(|(&on, _)| on)
        .fold(0, |acc, (_, bit)| acc | bit) as u8;
    b::v4l2_ctrl_vp9_frame {
        lf: loop_filter(&h.loop_filter),
        quant: quantization(&h.quantization),
        seg: segmentation(&h.segmentation),
        flags: flags(&[
            (h.key_frame, b::V4L2_VP9_FRAME_FLAG_KEY_FRAME),
            (h.show_frame, b::V4L2_VP9_FRAME_FLAG_SHOW_FRAME),
            (
                h.error_resilient_mode,
                b::V4L2_VP9_FRAME_FLAG_ERROR_RESILIENT,
            ),
            (h.intra_only, b::V4L2_VP9_FRAME_FLAG_INTRA_ONLY),
            (
                h.allow_high_precision_mv,
                b::V4L2_VP9_FRAME_FLAG_ALLOW_HIGH_PREC_MV,
            ),
            (
                h.refresh_frame_context,
                b::V4L2_VP9_FRAME_FLAG_REFRESH_FRAME_CTX,
            ),
            (
                h.frame_parallel_decoding_mode,
                b::V4L2_VP9_FRAME_FLAG_PARALLEL_DEC_MODE,
            ),
            (color.subsampling_x, b::V4L2_VP9_FRAME_FLAG_X_SUBSAMPLING),
            (color.subsampling_y, b::V4L2_VP9_FRAME_FLAG_Y_SUBSAMPLING),
            (
                color.full_range,
                b::V4L2_VP9_FRAME_FLAG_COLOR_RANGE_FULL_SWING,
            ),
        ]),
        compressed_header_size: h.header_size_in_bytes,
        uncompressed_header_size: h.uncompressed_header_size as u16,
        frame_width_minus_1: (h.width - 1) as u16,
        frame_height_minus_1: (h.height - 1) as u16,
        render_width_minus_1: (h.render_width - 1) as u16,
        render_height_minus_1: (h.render_height - 1) as u16,
        last_frame_ts: refs[0],
        golden_frame_ts: refs[1],
        alt_frame_ts: refs[2],
        ref_frame_sign_bias,
        reset_frame_context: reset_frame_context(h.reset_frame_context),
        frame_context_idx: h.frame_context_idx,
        profile: h.profile,
        bit_depth: color.bit_depth,
        interpolation_filter: h.interpolation_filter as u8,
        tile_cols_log2: h.tile_cols_log2,
        tile_rows_log2: h.tile_rows_log2,
        reference_mode: compressed.reference_mode as u8,
        reserved: [0; 7],
    }
}

/// `struct v4l2_ctrl_vp9_compressed_hdr` of a frame (`uv_mode` stays 0:
/// VP9's compressed header never updates it).
pub fn compressed_hdr(c: &CompressedHeader) -> b::v4l2_ctrl_vp9_compressed_hdr {
    let mv = &c.mv;
    b::v4l2_ctrl_vp9_compressed_hdr {
        tx_mode: c.tx_mode,
        tx8: c.tx8,
        tx16: c.tx16,
        tx32: c.tx32,
        coef: *c.coef,
        skip: c.skip,
        inter_mode: c.inter_mode,
        interp_filter: c.interp_filter,
        is_inter: c.is_inter,
        comp_mode: c.comp_mode,
        single_ref: c.single_ref,
        comp_ref: c.comp_ref,
        y_mode: c.y_mode,
        uv_mode: [[0; 9]; 10],
        partition: c.partition,
        mv: b::v4l2_vp9_mv_probs {
            joint: mv.joint,
            sign: mv.sign,
            classes: mv.classes,
            class0_bit: mv.class0_bit,
            bits: mv.bits,
            class0_fr: mv.class0_fr,
            fr: mv.fr,
            class0_hp: mv.class0_hp,
            hp: mv.hp,
        },
    }
}
