//! Filling the kernel's AV1 stateless controls
//! (`V4L2_CID_STATELESS_AV1_{SEQUENCE,FRAME,TILE_GROUP_ENTRY,FILM_GRAIN}`)
//! from the codec layer's headers. v4l2r has no typed AV1 controls: the
//! marker types here tie each control id to its bindings struct. The
//! kernel's enums (frame type, interpolation filter, tx mode, restoration
//! type, warp model) take the specification's values, so those pass as
//! they are.

use crate::v4l2::controls::marker_control;
use v4l2r::bindings as b;

use crate::codec::av1::decoder::TileGroupData;
use crate::codec::av1::film_grain::FilmGrainParams;
use crate::codec::av1::global_motion::{GlobalMotion, IDENTITY, ROTZOOM, TRANSLATION};
use crate::codec::av1::params::{Cdef, LoopFilter, LoopRestoration, Quantization, Segmentation};
use crate::codec::av1::tile_info::TileInfo;
use crate::codec::av1::{FrameHeader, SequenceHeader, NUM_REF_FRAMES};

marker_control!(
    Av1Sequence,
    b::V4L2_CID_STATELESS_AV1_SEQUENCE,
    b::v4l2_ctrl_av1_sequence
);
marker_control!(
    Av1Frame,
    b::V4L2_CID_STATELESS_AV1_FRAME,
    b::v4l2_ctrl_av1_frame
);
// A dynamic array: one element per tile of the request.
marker_control!(
    Av1TileGroupEntry,
    b::V4L2_CID_STATELESS_AV1_TILE_GROUP_ENTRY,
    b::v4l2_ctrl_av1_tile_group_entry
);
marker_control!(
    Av1FilmGrain,
    b::V4L2_CID_STATELESS_AV1_FILM_GRAIN,
    b::v4l2_ctrl_av1_film_grain
);

fn flags(pairs: &[(bool, u32)]) -> u32 {
    pairs
        .iter()
        .filter(|(on, _)| *on)
        .fold(0, |acc, (_, flag)| acc | flag)
}

/// The first `N` elements of `values` (zeros after them).
fn padded<T: Copy + Default, const N: usize>(values: &[T]) -> [T; N] {
    let mut out = [T::default(); N];
    for (o, v) in out.iter_mut().zip(values) {
        *o = *v;
    }
    out
}

/// `struct v4l2_ctrl_av1_sequence` of a sequence header.
pub fn sequence(s: &SequenceHeader) -> b::v4l2_ctrl_av1_sequence {
    let c = &s.color_config;
    b::v4l2_ctrl_av1_sequence {
        flags: flags(&[
            (s.still_picture, b::V4L2_AV1_SEQUENCE_FLAG_STILL_PICTURE),
            (
                s.use_128x128_superblock,
                b::V4L2_AV1_SEQUENCE_FLAG_USE_128X128_SUPERBLOCK,
            ),
            (
                s.enable_filter_intra,
                b::V4L2_AV1_SEQUENCE_FLAG_ENABLE_FILTER_INTRA,
            ),
            (
                s.enable_intra_edge_filter,
                b::V4L2_AV1_SEQUENCE_FLAG_ENABLE_INTRA_EDGE_FILTER,
            ),
            (
                s.enable_interintra_compound,
                b::V4L2_AV1_SEQUENCE_FLAG_ENABLE_INTERINTRA_COMPOUND,
            ),
            (
                s.enable_masked_compound,
                b::V4L2_AV1_SEQUENCE_FLAG_ENABLE_MASKED_COMPOUND,
            ),
            (
                s.enable_warped_motion,
                b::V4L2_AV1_SEQUENCE_FLAG_ENABLE_WARPED_MOTION,
            ),
            (
                s.enable_dual_filter,
                b::V4L2_AV1_SEQUENCE_FLAG_ENABLE_DUAL_FILTER,
            ),
            (
                s.enable_order_hint,
                b::V4L2_AV1_SEQUENCE_FLAG_ENABLE_ORDER_HINT,
            ),
            (s.enable_jnt_comp, b::V4L2_AV1_SEQUENCE_FLAG_ENABLE_JNT_COMP),
            (
                s.enable_ref_frame_mvs,
                b::V4L2_AV1_SEQUENCE_FLAG_ENABLE_REF_FRAME_MVS,
            ),
            (s.enable_superres, b::V4L2_AV1_SEQUENCE_FLAG_ENABLE_SUPERRES),
            (s.enable_cdef, b::V4L2_AV1_SEQUENCE_FLAG_ENABLE_CDEF),
            (
                s.enable_restoration,
                b::V4L2_AV1_SEQUENCE_FLAG_ENABLE_RESTORATION,
            ),
            (c.mono_chrome, b::V4L2_AV1_SEQUENCE_FLAG_MONO_CHROME),
            (c.color_range, b::V4L2_AV1_SEQUENCE_FLAG_COLOR_RANGE),
            (c.subsampling_x, b::V4L2_AV1_SEQUENCE_FLAG_SUBSAMPLING_X),
            (c.subsampling_y, b::V4L2_AV1_SEQUENCE_FLAG_SUBSAMPLING_Y),
            (
                s.film_grain_params_present,
                b::V4L2_AV1_SEQUENCE_FLAG_FILM_GRAIN_PARAMS_PRESENT,
            ),
            (
                c.separate_uv_delta_q,
                b::V4L2_AV1_SEQUENCE_FLAG_SEPARATE_UV_DELTA_Q,
            ),
        ]),
        seq_profile: s.seq_profile,
        order_hint_bits: s.order_hint_bits() as u8,
        bit_depth: c.bit_depth,
        reserved: 0,
        // Up to 16 bits each (frame_width_bits_minus_1 is 4 bits).
        max_frame_width_minus_1: s.max_frame_width_minus_1 as u16,
        max_frame_height_minus_1: s.max_frame_height_minus_1 as u16,
    }
}

/// The tile entries of a frame's tile groups, with offsets into the
/// OUTPUT buffer that holds the groups' OBU payloads one after the other
/// (see [`super::Av1Codec`]).
pub fn tile_group_entries(groups: &[TileGroupData]) -> Vec<b::v4l2_ctrl_av1_tile_group_entry> {
    let mut entries = Vec::new();
    let mut buffer_offset = 0;
    for g in groups {
        for tile in &g.group.tiles {
            // A tile lies after its OBU's header: parsed so.
            let in_payload = tile.offset.saturating_sub(g.payload_offset);
            entries.push(b::v4l2_ctrl_av1_tile_group_entry {
                tile_offset: (buffer_offset + in_payload) as u32,
                tile_size: tile.size as u32,
                tile_row: tile.row,
                tile_col: tile.col,
            });
        }
        buffer_offset += g.obu.len().saturating_sub(g.payload_offset);
    }
    entries
}

fn tile_info(t: &TileInfo) -> b::v4l2_av1_tile_info {
    b::v4l2_av1_tile_info {
        flags: flags(&[(
            t.uniform_tile_spacing_flag,
            b::V4L2_AV1_TILE_INFO_FLAG_UNIFORM_TILE_SPACING,
        )]) as u8,
        // At most 64 columns and rows (MAX_TILE_COLS/ROWS), 4096 tiles: the
        // kernel's u8 fields hold what its hardware decoders take.
        context_update_tile_id: t.context_update_tile_id as u8,
        tile_cols: t.tile_cols as u8,
        tile_rows: t.tile_rows as u8,
        mi_col_starts: padded(&t.mi_col_starts),
        mi_row_starts: padded(&t.mi_row_starts),
        width_in_sbs_minus_1: padded(&t.width_in_sbs_minus_1),
        height_in_sbs_minus_1: padded(&t.height_in_sbs_minus_1),
        // Only coded (and used) with more than one tile: 0 says no tile
        // carries a size field.
        tile_size_bytes: if t.tile_cols * t.tile_rows > 1 {
            t.tile_size_bytes
        } else {
            0
        },
        reserved: [0; 3],
    }
}

fn quantization(
    q: &Quantization,
    delta_q_present: bool,
    delta_q_res: u8,
) -> b::v4l2_av1_quantization {
    b::v4l2_av1_quantization {
        flags: flags(&[
            (q.diff_uv_delta, b::V4L2_AV1_QUANTIZATION_FLAG_DIFF_UV_DELTA),
            (q.using_qmatrix, b::V4L2_AV1_QUANTIZATION_FLAG_USING_QMATRIX),
            (
                delta_q_present,
                b::V4L2_AV1_QUANTIZATION_FLAG_DELTA_Q_PRESENT,
            ),
        ]) as u8,
        base_q_idx: q.base_q_idx,
        delta_q_y_dc: q.delta_q_y_dc,
        delta_q_u_dc: q.delta_q_u_dc,
        delta_q_u_ac: q.delta_q_u_ac,
        delta_q_v_dc: q.delta_q_v_dc,
        delta_q_v_ac: q.delta_q_v_ac,
        qm_y: q.qm_y,
        qm_u: q.qm_u,
        qm_v: q.qm_v,
        delta_q_res,
    }
}

fn segmentation(s: &Segmentation) -> b::v4l2_av1_segmentation {
    let feature_enabled = s.features.enabled.map(|features| {
        features
            .iter()
            .enumerate()
            .filter(|(_, &on)| on)
            .fold(0u8, |acc, (feature, _)| acc | (1 << feature))
    });
    b::v4l2_av1_segmentation {
        flags: flags(&[
            (
                s.segmentation_enabled,
                b::V4L2_AV1_SEGMENTATION_FLAG_ENABLED,
            ),
            (
                s.segmentation_update_map,
                b::V4L2_AV1_SEGMENTATION_FLAG_UPDATE_MAP,
            ),
            (
                s.segmentation_temporal_update,
                b::V4L2_AV1_SEGMENTATION_FLAG_TEMPORAL_UPDATE,
            ),
            (
                s.segmentation_update_data,
                b::V4L2_AV1_SEGMENTATION_FLAG_UPDATE_DATA,
            ),
            (
                s.seg_id_pre_skip,
                b::V4L2_AV1_SEGMENTATION_FLAG_SEG_ID_PRE_SKIP,
            ),
        ]) as u8,
        last_active_seg_id: s.last_active_seg_id,
        feature_enabled,
        feature_data: s.features.data,
    }
}

fn loop_filter(lf: &LoopFilter, h: &FrameHeader) -> b::v4l2_av1_loop_filter {
    let d = &h.delta;
    b::v4l2_av1_loop_filter {
        flags: flags(&[
            (
                lf.loop_filter_delta_enabled,
                b::V4L2_AV1_LOOP_FILTER_FLAG_DELTA_ENABLED,
            ),
            (
                lf.loop_filter_delta_update,
                b::V4L2_AV1_LOOP_FILTER_FLAG_DELTA_UPDATE,
            ),
            (
                d.delta_lf_present,
                b::V4L2_AV1_LOOP_FILTER_FLAG_DELTA_LF_PRESENT,
            ),
            (
                d.delta_lf_multi,
                b::V4L2_AV1_LOOP_FILTER_FLAG_DELTA_LF_MULTI,
            ),
        ]) as u8,
        level: lf.loop_filter_level,
        sharpness: lf.loop_filter_sharpness,
        ref_deltas: lf.deltas.ref_deltas,
        mode_deltas: lf.deltas.mode_deltas,
        delta_lf_res: d.delta_lf_res,
    }
}

/// The secondary strengths as the specification's variables hold them: a
/// coded 3 means 4 (5.9.19).
fn cdef(c: &Cdef) -> b::v4l2_av1_cdef {
    let secondary = |coded: [u8; 8]| coded.map(|s| if s == 3 { 4 } else { s });
    b::v4l2_av1_cdef {
        damping_minus_3: c.cdef_damping_minus_3,
        bits: c.cdef_bits,
        y_pri_strength: c.cdef_y_pri_strength,
        y_sec_strength: secondary(c.cdef_y_sec_strength),
        uv_pri_strength: c.cdef_uv_pri_strength,
        uv_sec_strength: secondary(c.cdef_uv_sec_strength),
    }
}

fn loop_restoration(lr: &LoopRestoration) -> b::v4l2_av1_loop_restoration {
    // usesChromaLr: either chroma plane restores (5.9.20).
    let uses_chroma_lr = lr.frame_restoration_type[1..]
        .iter()
        .any(|&t| t != crate::codec::av1::params::RESTORE_NONE);
    b::v4l2_av1_loop_restoration {
        flags: flags(&[
            (lr.uses_lr, b::V4L2_AV1_LOOP_RESTORATION_FLAG_USES_LR),
            (
                uses_chroma_lr,
                b::V4L2_AV1_LOOP_RESTORATION_FLAG_USES_CHROMA_LR,
            ),
        ]) as u8,
        lr_unit_shift: lr.lr_unit_shift,
        lr_uv_shift: lr.lr_uv_shift,
        reserved: 0,
        frame_restoration_type: lr.frame_restoration_type.map(u32::from),
        loop_restoration_size: lr.loop_restoration_size,
    }
}

const WARPEDMODEL_PREC_BITS: u32 = 16;
const WARP_PARAM_REDUCE_BITS: u32 = 6;
const DIV_LUT_BITS: u32 = 8;
const DIV_LUT_PREC_BITS: u32 = 14;

/// `Div_Lut[i]`: 2^14 * 256 / (256 + i), rounded to nearest.
fn div_lut(i: i64) -> i64 {
    let d = 256 + i;
    ((1 << (DIV_LUT_PREC_BITS + DIV_LUT_BITS)) + d / 2) / d
}

fn round2_signed(x: i64, n: u32) -> i64 {
    if n == 0 {
        return x;
    }
    let round = |x: i64| (x + (1 << (n - 1))) >> n;
    if x >= 0 {
        round(x)
    } else {
        -round(-x)
    }
}

/// resolve_divisor(d) (7.11.3.7) for d != 0: (divShift, divFactor).
fn resolve_divisor(d: i64) -> (u32, i64) {
    let magnitude = d.unsigned_abs();
    let n = 63 - magnitude.leading_zeros();
    let e = (magnitude - (1 << n)) as i64;
    let f = if n > DIV_LUT_BITS {
        round2_signed(e, n - DIV_LUT_BITS)
    } else {
        e << (DIV_LUT_BITS - n)
    };
    let factor = div_lut(f);
    (n + DIV_LUT_PREC_BITS, if d < 0 { -factor } else { factor })
}

/// `warpValid` of the setup shear process (7.11.3.6) for a frame's global
/// motion parameters of one reference. A zero `params[2]` has no divisor:
/// invalid.
pub fn warp_valid(params: &[i32; 6]) -> bool {
    let p = params.map(i64::from);
    if p[2] == 0 {
        return false;
    }
    let clip = |v: i64| v.clamp(-32768, 32767);
    let alpha0 = clip(p[2] - (1 << WARPEDMODEL_PREC_BITS));
    let beta0 = clip(p[3]);
    let (shift, factor) = resolve_divisor(p[2]);
    let v = p[4] << WARPEDMODEL_PREC_BITS;
    let gamma0 = clip(round2_signed(v * factor, shift));
    let w = p[3] * p[4];
    let delta0 = clip(p[5] - round2_signed(w * factor, shift) - (1 << WARPEDMODEL_PREC_BITS));
    let reduce = |x: i64| round2_signed(x, WARP_PARAM_REDUCE_BITS) << WARP_PARAM_REDUCE_BITS;
    let (alpha, beta, gamma, delta) = (
        reduce(alpha0),
        reduce(beta0),
        reduce(gamma0),
        reduce(delta0),
    );
    4 * alpha.abs() + 7 * beta.abs() < (1 << WARPEDMODEL_PREC_BITS)
        && 4 * gamma.abs() + 4 * delta.abs() < (1 << WARPEDMODEL_PREC_BITS)
}

fn global_motion(gm: &GlobalMotion) -> b::v4l2_av1_global_motion {
    let flags = gm.gm_type.map(|t| {
        flags(&[
            (t != IDENTITY, b::V4L2_AV1_GLOBAL_MOTION_FLAG_IS_GLOBAL),
            (t == ROTZOOM, b::V4L2_AV1_GLOBAL_MOTION_FLAG_IS_ROT_ZOOM),
            (
                t == TRANSLATION,
                b::V4L2_AV1_GLOBAL_MOTION_FLAG_IS_TRANSLATION,
            ),
        ]) as u8
    });
    // INTRA_FRAME (index 0) has no parameters.
    let invalid = (1..NUM_REF_FRAMES)
        .filter(|&r| !warp_valid(&gm.gm_params[r]))
        .fold(0u8, |acc, r| acc | (1 << r));
    b::v4l2_av1_global_motion {
        flags,
        type_: gm.gm_type.map(u32::from),
        params: gm.gm_params,
        invalid,
        reserved: [0; 3],
    }
}

/// `struct v4l2_ctrl_av1_frame` of a frame; `slots` are the device
/// timestamps of the pictures in the eight reference slots (0: empty).
pub fn frame(h: &FrameHeader, slots: [u64; NUM_REF_FRAMES]) -> b::v4l2_ctrl_av1_frame {
    let s = &h.size;
    let skip_mode_allowed = h.skip_mode_frame[0] != 0;
    // Intra frames name no reference: -1, never a slot.
    let ref_frame_idx = if h.frame_is_intra() {
        [-1; 7]
    } else {
        h.ref_frame_idx.map(|i| i as i8)
    };
    b::v4l2_ctrl_av1_frame {
        tile_info: tile_info(&h.tile_info),
        quantization: quantization(
            &h.quantization,
            h.delta.delta_q_present,
            h.delta.delta_q_res,
        ),
        superres_denom: s.superres_denom as u8,
        segmentation: segmentation(&h.segmentation),
        loop_filter: loop_filter(&h.loop_filter, h),
        cdef: cdef(&h.cdef),
        skip_mode_frame: h.skip_mode_frame,
        primary_ref_frame: h.primary_ref_frame,
        loop_restoration: loop_restoration(&h.loop_restoration),
        global_motion: global_motion(&h.global_motion),
        flags: flags(&[
            (h.show_frame, b::V4L2_AV1_FRAME_FLAG_SHOW_FRAME),
            (h.showable_frame, b::V4L2_AV1_FRAME_FLAG_SHOWABLE_FRAME),
            (
                h.error_resilient_mode,
                b::V4L2_AV1_FRAME_FLAG_ERROR_RESILIENT_MODE,
            ),
            (
                h.disable_cdf_update,
                b::V4L2_AV1_FRAME_FLAG_DISABLE_CDF_UPDATE,
            ),
            (
                h.allow_screen_content_tools,
                b::V4L2_AV1_FRAME_FLAG_ALLOW_SCREEN_CONTENT_TOOLS,
            ),
            (h.force_integer_mv, b::V4L2_AV1_FRAME_FLAG_FORCE_INTEGER_MV),
            (h.allow_intrabc, b::V4L2_AV1_FRAME_FLAG_ALLOW_INTRABC),
            (s.use_superres, b::V4L2_AV1_FRAME_FLAG_USE_SUPERRES),
            (
                h.allow_high_precision_mv,
                b::V4L2_AV1_FRAME_FLAG_ALLOW_HIGH_PRECISION_MV,
            ),
            (
                h.is_motion_mode_switchable,
                b::V4L2_AV1_FRAME_FLAG_IS_MOTION_MODE_SWITCHABLE,
            ),
            (
                h.use_ref_frame_mvs,
                b::V4L2_AV1_FRAME_FLAG_USE_REF_FRAME_MVS,
            ),
            (
                h.disable_frame_end_update_cdf,
                b::V4L2_AV1_FRAME_FLAG_DISABLE_FRAME_END_UPDATE_CDF,
            ),
            (
                h.allow_warped_motion,
                b::V4L2_AV1_FRAME_FLAG_ALLOW_WARPED_MOTION,
            ),
            (h.reference_select, b::V4L2_AV1_FRAME_FLAG_REFERENCE_SELECT),
            (h.reduced_tx_set, b::V4L2_AV1_FRAME_FLAG_REDUCED_TX_SET),
            (skip_mode_allowed, b::V4L2_AV1_FRAME_FLAG_SKIP_MODE_ALLOWED),
            (
                h.skip_mode_present,
                b::V4L2_AV1_FRAME_FLAG_SKIP_MODE_PRESENT,
            ),
            (
                h.frame_size_override_flag,
                b::V4L2_AV1_FRAME_FLAG_FRAME_SIZE_OVERRIDE,
            ),
            (
                h.buffer_removal_time_present_flag,
                b::V4L2_AV1_FRAME_FLAG_BUFFER_REMOVAL_TIME_PRESENT,
            ),
            (
                h.frame_refs_short_signaling,
                b::V4L2_AV1_FRAME_FLAG_FRAME_REFS_SHORT_SIGNALING,
            ),
        ]),
        frame_type: u32::from(h.frame_type.code()),
        order_hint: h.order_hint,
        upscaled_width: s.upscaled_width,
        interpolation_filter: u32::from(h.interpolation_filter),
        tx_mode: u32::from(h.tx_mode),
        frame_width_minus_1: s.frame_width - 1,
        frame_height_minus_1: s.frame_height - 1,
        // render_*_minus_1 are 16-bit syntax elements.
        render_width_minus_1: (s.render_width - 1) as u16,
        render_height_minus_1: (s.render_height - 1) as u16,
        current_frame_id: h.current_frame_id,
        buffer_removal_time: h.buffer_removal_time,
        reserved: [0; 4],
        order_hints: h.order_hints,
        reference_frame_ts: slots,
        ref_frame_idx,
        refresh_frame_flags: h.refresh_frame_flags,
    }
}

/// `struct v4l2_ctrl_av1_film_grain` of a frame: all zeros (no
/// APPLY_GRAIN) when the frame applies no grain, so that a driver never
/// sees an earlier frame's parameters.
pub fn film_grain(g: &FilmGrainParams) -> b::v4l2_ctrl_av1_film_grain {
    b::v4l2_ctrl_av1_film_grain {
        flags: flags(&[
            (g.apply_grain, b::V4L2_AV1_FILM_GRAIN_FLAG_APPLY_GRAIN),
            (g.update_grain, b::V4L2_AV1_FILM_GRAIN_FLAG_UPDATE_GRAIN),
            (
                g.chroma_scaling_from_luma,
                b::V4L2_AV1_FILM_GRAIN_FLAG_CHROMA_SCALING_FROM_LUMA,
            ),
            (g.overlap_flag, b::V4L2_AV1_FILM_GRAIN_FLAG_OVERLAP),
            (
                g.clip_to_restricted_range,
                b::V4L2_AV1_FILM_GRAIN_FLAG_CLIP_TO_RESTRICTED_RANGE,
            ),
        ]) as u8,
        cr_mult: g.cr_mult,
        grain_seed: g.grain_seed,
        film_grain_params_ref_idx: g.film_grain_params_ref_idx,
        num_y_points: g.num_y_points,
        point_y_value: padded(&g.point_y_value),
        point_y_scaling: padded(&g.point_y_scaling),
        num_cb_points: g.num_cb_points,
        point_cb_value: padded(&g.point_cb_value),
        point_cb_scaling: padded(&g.point_cb_scaling),
        num_cr_points: g.num_cr_points,
        point_cr_value: padded(&g.point_cr_value),
        point_cr_scaling: padded(&g.point_cr_scaling),
        grain_scaling_minus_8: g.grain_scaling_minus_8,
        ar_coeff_lag: g.ar_coeff_lag,
        ar_coeffs_y_plus_128: padded(&g.ar_coeffs_y_plus_128),
        ar_coeffs_cb_plus_128: g.ar_coeffs_cb_plus_128,
        ar_coeffs_cr_plus_128: g.ar_coeffs_cr_plus_128,
        ar_coeff_shift_minus_6: g.ar_coeff_shift_minus_6,
        grain_scale_shift: g.grain_scale_shift,
        cb_mult: g.cb_mult,
        cb_luma_mult: g.cb_luma_mult,
        cr_luma_mult: g.cr_luma_mult,
        cb_offset: g.cb_offset,
        cr_offset: g.cr_offset,
        reserved: [0; 4],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn div_lut_has_the_specifications_ends() {
        assert_eq!(
            [div_lut(0), div_lut(1), div_lut(2), div_lut(256)],
            [16384, 16320, 16257, 8192]
        );
    }

    #[test]
    fn identity_and_small_warps_are_valid_large_shears_are_not() {
        let unit = 1 << 16;
        assert!(warp_valid(&[0, 0, unit, 0, 0, unit]));
        // A slight rotation and zoom.
        assert!(warp_valid(&[0, 0, unit + 500, 300, -300, unit + 500]));
        // beta alone beyond 2^16 / 7.
        assert!(!warp_valid(&[0, 0, unit, 10_000, 0, unit]));
        // No divisor.
        assert!(!warp_valid(&[0, 0, 0, 0, 0, unit]));
        assert!(!warp_valid(&[0, 0, unit, 0, 0, 0]));
    }

    #[test]
    fn coded_secondary_strength_three_means_four() {
        let c = Cdef {
            cdef_y_sec_strength: [3, 2, 0, 0, 0, 0, 0, 0],
            cdef_uv_sec_strength: [1, 3, 0, 0, 0, 0, 0, 0],
            ..Cdef::default()
        };
        let v = cdef(&c);
        assert_eq!(v.y_sec_strength[..2], [4, 2]);
        assert_eq!(v.uv_sec_strength[..2], [1, 4]);
    }
}
