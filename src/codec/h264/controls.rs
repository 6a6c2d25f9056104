//! Filling the kernel's H.264 stateless control structs (the V4L2
//! `V4L2_CID_STATELESS_H264_*` controls) from parsed headers and the DPB.

use v4l2r::bindings as b;

use super::dpb::{CurrentPic, Dpb, PicStructure, Reference};
use super::pps::Pps;
use super::reflist::RefList;
use super::slice::{SliceHeader, SliceType};
use super::sps::Sps;

pub fn sps_control(sps: &Sps) -> b::v4l2_ctrl_h264_sps {
    let mut c = b::v4l2_ctrl_h264_sps {
        profile_idc: sps.profile_idc,
        constraint_set_flags: sps.constraint_set_flags,
        level_idc: sps.level_idc,
        seq_parameter_set_id: sps.seq_parameter_set_id,
        chroma_format_idc: sps.chroma_format_idc,
        bit_depth_luma_minus8: sps.bit_depth_luma_minus8,
        bit_depth_chroma_minus8: sps.bit_depth_chroma_minus8,
        log2_max_frame_num_minus4: sps.log2_max_frame_num_minus4,
        pic_order_cnt_type: sps.pic_order_cnt_type,
        log2_max_pic_order_cnt_lsb_minus4: sps.log2_max_pic_order_cnt_lsb_minus4,
        max_num_ref_frames: sps.max_num_ref_frames,
        num_ref_frames_in_pic_order_cnt_cycle: sps.offset_for_ref_frame.len() as u8,
        offset_for_non_ref_pic: sps.offset_for_non_ref_pic,
        offset_for_top_to_bottom_field: sps.offset_for_top_to_bottom_field,
        pic_width_in_mbs_minus1: sps.pic_width_in_mbs_minus1,
        pic_height_in_map_units_minus1: sps.pic_height_in_map_units_minus1,
        ..Default::default()
    };
    for (dst, &src) in c
        .offset_for_ref_frame
        .iter_mut()
        .zip(&sps.offset_for_ref_frame)
    {
        *dst = src;
    }
    let flags = [
        (
            sps.separate_colour_plane_flag,
            b::V4L2_H264_SPS_FLAG_SEPARATE_COLOUR_PLANE,
        ),
        (
            sps.qpprime_y_zero_transform_bypass_flag,
            b::V4L2_H264_SPS_FLAG_QPPRIME_Y_ZERO_TRANSFORM_BYPASS,
        ),
        (
            sps.delta_pic_order_always_zero_flag,
            b::V4L2_H264_SPS_FLAG_DELTA_PIC_ORDER_ALWAYS_ZERO,
        ),
        (
            sps.gaps_in_frame_num_value_allowed_flag,
            b::V4L2_H264_SPS_FLAG_GAPS_IN_FRAME_NUM_VALUE_ALLOWED,
        ),
        (
            sps.frame_mbs_only_flag,
            b::V4L2_H264_SPS_FLAG_FRAME_MBS_ONLY,
        ),
        (
            sps.mb_adaptive_frame_field_flag,
            b::V4L2_H264_SPS_FLAG_MB_ADAPTIVE_FRAME_FIELD,
        ),
        (
            sps.direct_8x8_inference_flag,
            b::V4L2_H264_SPS_FLAG_DIRECT_8X8_INFERENCE,
        ),
    ];
    c.flags = flags
        .iter()
        .filter(|(on, _)| *on)
        .fold(0, |acc, (_, f)| acc | f);
    c
}

/// V4L2_H264_PPS_FLAG_SCALING_MATRIX_PRESENT is set when either parameter
/// set sends a matrix: the driver must then use the scaling matrix control.
pub fn pps_control(pps: &Pps, sps: &Sps) -> b::v4l2_ctrl_h264_pps {
    let flags = [
        (
            pps.entropy_coding_mode_flag,
            b::V4L2_H264_PPS_FLAG_ENTROPY_CODING_MODE,
        ),
        (
            pps.bottom_field_pic_order_in_frame_present_flag,
            b::V4L2_H264_PPS_FLAG_BOTTOM_FIELD_PIC_ORDER_IN_FRAME_PRESENT,
        ),
        (pps.weighted_pred_flag, b::V4L2_H264_PPS_FLAG_WEIGHTED_PRED),
        (
            pps.deblocking_filter_control_present_flag,
            b::V4L2_H264_PPS_FLAG_DEBLOCKING_FILTER_CONTROL_PRESENT,
        ),
        (
            pps.constrained_intra_pred_flag,
            b::V4L2_H264_PPS_FLAG_CONSTRAINED_INTRA_PRED,
        ),
        (
            pps.redundant_pic_cnt_present_flag,
            b::V4L2_H264_PPS_FLAG_REDUNDANT_PIC_CNT_PRESENT,
        ),
        (
            pps.transform_8x8_mode_flag,
            b::V4L2_H264_PPS_FLAG_TRANSFORM_8X8_MODE,
        ),
        (
            sps.seq_scaling_matrix_present_flag || pps.pic_scaling_matrix_present_flag,
            b::V4L2_H264_PPS_FLAG_SCALING_MATRIX_PRESENT,
        ),
    ];
    b::v4l2_ctrl_h264_pps {
        pic_parameter_set_id: pps.pic_parameter_set_id,
        seq_parameter_set_id: pps.seq_parameter_set_id,
        num_slice_groups_minus1: pps.num_slice_groups_minus1,
        num_ref_idx_l0_default_active_minus1: pps.num_ref_idx_l0_default_active_minus1,
        num_ref_idx_l1_default_active_minus1: pps.num_ref_idx_l1_default_active_minus1,
        weighted_bipred_idc: pps.weighted_bipred_idc,
        pic_init_qp_minus26: pps.pic_init_qp_minus26,
        pic_init_qs_minus26: pps.pic_init_qs_minus26,
        chroma_qp_index_offset: pps.chroma_qp_index_offset,
        second_chroma_qp_index_offset: pps.second_chroma_qp_index_offset,
        flags: flags
            .iter()
            .filter(|(on, _)| *on)
            .fold(0, |acc, (_, f)| acc | f) as u16,
    }
}

/// The matrix that applies to pictures of `pps`, in raster order. Only the
/// two luma 8x8 lists exist below 4:4:4; the others stay zero.
pub fn scaling_matrix_control(pps: &Pps, sps: &Sps) -> b::v4l2_ctrl_h264_scaling_matrix {
    let m = &pps.scaling_matrix;
    let mut c = b::v4l2_ctrl_h264_scaling_matrix::default();
    for (i, dst) in c.scaling_list_4x4.iter_mut().enumerate() {
        *dst = m.to_raster_4x4(i);
    }
    let n8 = if sps.chroma_format_idc == 3 { 6 } else { 2 };
    for (i, dst) in c.scaling_list_8x8.iter_mut().enumerate().take(n8) {
        *dst = m.to_raster_8x8(i);
    }
    c
}

/// The DPB array of decode params: every reference picture (non-existing
/// frames left out: they have no buffer), in DPB storage order.
pub fn dpb_entries(dpb: &Dpb, cur: &CurrentPic) -> [b::v4l2_h264_dpb_entry; 16] {
    let mut entries = [b::v4l2_h264_dpb_entry::default(); 16];
    let refs = dpb
        .pictures()
        .iter()
        .filter(|p| p.is_reference() && !p.non_existing);
    for (entry, p) in entries.iter_mut().zip(refs) {
        let long_term = p.has_field_marked(Reference::LongTerm);
        let mut fields = 0;
        if p.top.decoded && p.top.reference != Reference::Unused {
            fields |= b::V4L2_H264_TOP_FIELD_REF;
        }
        if p.bottom.decoded && p.bottom.reference != Reference::Unused {
            fields |= b::V4L2_H264_BOTTOM_FIELD_REF;
        }
        let mut flags = b::V4L2_H264_DPB_ENTRY_FLAG_VALID | b::V4L2_H264_DPB_ENTRY_FLAG_ACTIVE;
        if long_term {
            flags |= b::V4L2_H264_DPB_ENTRY_FLAG_LONG_TERM;
        }
        if p.field_coded {
            flags |= b::V4L2_H264_DPB_ENTRY_FLAG_FIELD;
        }
        // PicNum (8-28) / LongTermPicNum (8-29), same parity as the current
        // field when decoding fields.
        let frame_level = if long_term {
            p.long_term_frame_idx as i32
        } else {
            p.frame_num_wrap(cur.frame_num, cur.max_frame_num)
        };
        let pic_num = if cur.structure.is_field() {
            2 * frame_level + 1
        } else {
            frame_level
        };
        *entry = b::v4l2_h264_dpb_entry {
            reference_ts: p.timestamp_ns,
            pic_num: pic_num as u32,
            // V4L2 carries LongTermFrameIdx in frame_num for long-term entries.
            frame_num: if long_term {
                p.long_term_frame_idx as u16
            } else {
                p.frame_num as u16
            },
            fields: fields as u8,
            reserved: [0; 5],
            top_field_order_cnt: if p.top.decoded { p.top.poc } else { 0 },
            bottom_field_order_cnt: if p.bottom.decoded { p.bottom.poc } else { 0 },
            flags,
        };
    }
    entries
}

/// Everything of decode params but the DPB array and the P/B flags.
pub fn decode_params_control(
    h: &SliceHeader,
    structure: PicStructure,
    top_poc: i32,
    bottom_poc: i32,
) -> b::v4l2_ctrl_h264_decode_params {
    let mut flags = 0;
    if h.idr {
        flags |= b::V4L2_H264_DECODE_PARAM_FLAG_IDR_PIC;
    }
    if h.field_pic_flag {
        flags |= b::V4L2_H264_DECODE_PARAM_FLAG_FIELD_PIC;
    }
    if h.bottom_field_flag {
        flags |= b::V4L2_H264_DECODE_PARAM_FLAG_BOTTOM_FIELD;
    }
    b::v4l2_ctrl_h264_decode_params {
        nal_ref_idc: u16::from(h.nal_ref_idc),
        frame_num: h.frame_num as u16,
        top_field_order_cnt: if structure == PicStructure::BottomField {
            0
        } else {
            top_poc
        },
        bottom_field_order_cnt: if structure == PicStructure::TopField {
            0
        } else {
            bottom_poc
        },
        idr_pic_id: h.idr_pic_id as u16,
        pic_order_cnt_lsb: h.pic_order_cnt_lsb as u16,
        delta_pic_order_cnt_bottom: h.delta_pic_order_cnt_bottom,
        delta_pic_order_cnt0: h.delta_pic_order_cnt[0],
        delta_pic_order_cnt1: h.delta_pic_order_cnt[1],
        dec_ref_pic_marking_bit_size: h.dec_ref_pic_marking_bit_size,
        pic_order_cnt_bit_size: h.pic_order_cnt_bit_size,
        slice_group_change_cycle: h.slice_group_change_cycle,
        flags,
        ..Default::default()
    }
}

/// V4L2 reference list entries: index into the DPB array (by timestamp),
/// fields referenced. Unused entries are 0xff, as GStreamer fills them.
fn v4l2_list(
    list: &RefList,
    dpb: &Dpb,
    dpb_array: &[b::v4l2_h264_dpb_entry; 16],
) -> [b::v4l2_h264_reference; 32] {
    let mut out = [b::v4l2_h264_reference {
        fields: 0xff,
        index: 0xff,
    }; 32];
    for (dst, r) in out.iter_mut().zip(list) {
        let Some(r) = r else {
            continue;
        };
        let Some(p) = dpb.get(r.id) else {
            continue;
        };
        let index = dpb_array.iter().position(|e| {
            e.flags & b::V4L2_H264_DPB_ENTRY_FLAG_ACTIVE != 0
                && e.reference_ts == p.timestamp_ns
                && !p.non_existing
        });
        let fields = match r.structure {
            PicStructure::Frame => b::V4L2_H264_FRAME_REF,
            PicStructure::TopField => b::V4L2_H264_TOP_FIELD_REF,
            PicStructure::BottomField => b::V4L2_H264_BOTTOM_FIELD_REF,
        };
        *dst = b::v4l2_h264_reference {
            fields: fields as u8,
            index: index.map_or(0xff, |i| i as u8),
        };
    }
    out
}

pub fn slice_params_control(
    h: &SliceHeader,
    list0: &RefList,
    list1: &RefList,
    dpb: &Dpb,
    dpb_array: &[b::v4l2_h264_dpb_entry; 16],
) -> b::v4l2_ctrl_h264_slice_params {
    let mut flags = 0;
    if h.direct_spatial_mv_pred_flag {
        flags |= b::V4L2_H264_SLICE_FLAG_DIRECT_SPATIAL_MV_PRED;
    }
    if h.sp_for_switch_flag {
        flags |= b::V4L2_H264_SLICE_FLAG_SP_FOR_SWITCH;
    }
    b::v4l2_ctrl_h264_slice_params {
        header_bit_size: h.header_bit_size,
        first_mb_in_slice: h.first_mb_in_slice,
        slice_type: h.slice_type.v4l2(),
        colour_plane_id: h.colour_plane_id,
        redundant_pic_cnt: h.redundant_pic_cnt as u8,
        cabac_init_idc: h.cabac_init_idc,
        slice_qp_delta: h.slice_qp_delta,
        slice_qs_delta: h.slice_qs_delta,
        disable_deblocking_filter_idc: h.disable_deblocking_filter_idc,
        slice_alpha_c0_offset_div2: h.slice_alpha_c0_offset_div2,
        slice_beta_offset_div2: h.slice_beta_offset_div2,
        num_ref_idx_l0_active_minus1: h.num_ref_idx_l0_active_minus1,
        num_ref_idx_l1_active_minus1: h.num_ref_idx_l1_active_minus1,
        reserved: 0,
        ref_pic_list0: v4l2_list(list0, dpb, dpb_array),
        ref_pic_list1: v4l2_list(list1, dpb, dpb_array),
        flags,
    }
}

/// Prediction weights, for slices that carry a pred_weight_table.
pub fn pred_weights_control(h: &SliceHeader) -> Option<b::v4l2_ctrl_h264_pred_weights> {
    let t = h.pred_weight_table.as_ref()?;
    let mut c = b::v4l2_ctrl_h264_pred_weights {
        luma_log2_weight_denom: u16::from(t.luma_log2_weight_denom),
        chroma_log2_weight_denom: u16::from(t.chroma_log2_weight_denom),
        ..Default::default()
    };
    let lists = if h.slice_type == SliceType::B { 2 } else { 1 };
    for (factors, entries) in c.weight_factors.iter_mut().zip([&t.l0, &t.l1]).take(lists) {
        for (i, e) in entries.iter().enumerate().take(32) {
            factors.luma_weight[i] = e.luma_weight;
            factors.luma_offset[i] = e.luma_offset;
            factors.chroma_weight[i] = e.chroma_weight;
            factors.chroma_offset[i] = e.chroma_offset;
        }
    }
    Some(c)
}
