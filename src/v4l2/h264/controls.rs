//! Filling the kernel's H.264 stateless control structs (the V4L2
//! `V4L2_CID_STATELESS_H264_*` controls) from the codec layer's parsed
//! headers and reference pictures.

use v4l2r::bindings as b;

use crate::codec::h264::dpb::PicStructure;
use crate::codec::h264::pps::Pps;
use crate::codec::h264::slice::{SliceHeader, SliceType};
use crate::codec::h264::sps::Sps;
use crate::codec::h264::{DecodeJob, DpbReference, ListEntry, SliceJob};

/// Every control struct of one picture.
#[derive(Clone, Copy)]
pub struct PictureControls {
    pub sps: b::v4l2_ctrl_h264_sps,
    pub pps: b::v4l2_ctrl_h264_pps,
    pub scaling_matrix: b::v4l2_ctrl_h264_scaling_matrix,
    pub decode_params: b::v4l2_ctrl_h264_decode_params,
}

impl PictureControls {
    pub fn of(job: &DecodeJob) -> Self {
        Self {
            sps: sps_control(&job.sps),
            pps: pps_control(&job.pps, &job.sps),
            scaling_matrix: scaling_matrix_control(&job.pps, &job.sps),
            decode_params: decode_params_control(job),
        }
    }

    pub fn has_scaling_matrix(&self) -> bool {
        u32::from(self.pps.flags) & b::V4L2_H264_PPS_FLAG_SCALING_MATRIX_PRESENT != 0
    }
}

/// The control structs of one slice.
#[derive(Clone, Copy)]
pub struct SliceControls {
    pub params: b::v4l2_ctrl_h264_slice_params,
    /// For slices with a pred_weight_table.
    pub pred_weights: Option<b::v4l2_ctrl_h264_pred_weights>,
}

impl SliceControls {
    pub fn of(slice: &SliceJob) -> Self {
        Self {
            params: slice_params_control(slice),
            pred_weights: pred_weights_control(&slice.header),
        }
    }
}

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

/// The DPB array of decode params, in the codec's DPB order.
pub fn dpb_entries(references: &[DpbReference]) -> [b::v4l2_h264_dpb_entry; 16] {
    let mut entries = [b::v4l2_h264_dpb_entry::default(); 16];
    for (entry, p) in entries.iter_mut().zip(references) {
        let mut fields = 0;
        if p.top_field_reference {
            fields |= b::V4L2_H264_TOP_FIELD_REF;
        }
        if p.bottom_field_reference {
            fields |= b::V4L2_H264_BOTTOM_FIELD_REF;
        }
        let mut flags = b::V4L2_H264_DPB_ENTRY_FLAG_VALID | b::V4L2_H264_DPB_ENTRY_FLAG_ACTIVE;
        if p.long_term {
            flags |= b::V4L2_H264_DPB_ENTRY_FLAG_LONG_TERM;
        }
        if p.field_coded {
            flags |= b::V4L2_H264_DPB_ENTRY_FLAG_FIELD;
        }
        *entry = b::v4l2_h264_dpb_entry {
            reference_ts: p.timestamp_ns,
            pic_num: p.pic_num as u32,
            // V4L2 carries LongTermFrameIdx in frame_num for long-term entries.
            frame_num: p.frame_num as u16,
            fields: fields as u8,
            reserved: [0; 5],
            top_field_order_cnt: p.top_field_order_cnt,
            bottom_field_order_cnt: p.bottom_field_order_cnt,
            flags,
        };
    }
    entries
}

/// Decode params of a picture: its first slice's header, order counts,
/// reference pictures, and whether any slice is P or B.
pub fn decode_params_control(job: &DecodeJob) -> b::v4l2_ctrl_h264_decode_params {
    let h = &job.header;
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
    for slice in &job.slices {
        match slice.header.slice_type {
            SliceType::P | SliceType::Sp => flags |= b::V4L2_H264_DECODE_PARAM_FLAG_PFRAME,
            SliceType::B => flags |= b::V4L2_H264_DECODE_PARAM_FLAG_BFRAME,
            _ => {}
        }
    }
    b::v4l2_ctrl_h264_decode_params {
        dpb: dpb_entries(&job.dpb),
        nal_ref_idc: u16::from(h.nal_ref_idc),
        frame_num: h.frame_num as u16,
        top_field_order_cnt: job.top_field_order_cnt,
        bottom_field_order_cnt: job.bottom_field_order_cnt,
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

/// V4L2 reference list entries: index into the DPB array, fields
/// referenced. Unused entries are 0xff, as GStreamer fills them.
fn v4l2_list(list: &[Option<ListEntry>]) -> [b::v4l2_h264_reference; 32] {
    let mut out = [b::v4l2_h264_reference {
        fields: 0xff,
        index: 0xff,
    }; 32];
    for (dst, entry) in out.iter_mut().zip(list) {
        let Some(entry) = entry else {
            continue;
        };
        let fields = match entry.structure {
            PicStructure::Frame => b::V4L2_H264_FRAME_REF,
            PicStructure::TopField => b::V4L2_H264_TOP_FIELD_REF,
            PicStructure::BottomField => b::V4L2_H264_BOTTOM_FIELD_REF,
        };
        *dst = b::v4l2_h264_reference {
            fields: fields as u8,
            index: entry.dpb_index.unwrap_or(0xff),
        };
    }
    out
}

pub fn slice_params_control(slice: &SliceJob) -> b::v4l2_ctrl_h264_slice_params {
    let h = &slice.header;
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
        slice_type: h.slice_type.value(),
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
        ref_pic_list0: v4l2_list(&slice.ref_list0),
        ref_pic_list1: v4l2_list(&slice.ref_list1),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_pairs_share_a_buffer_and_alternate_parity_in_lists() {
        use crate::codec::h264::tests::{field_parameter_sets, field_slice};
        use crate::codec::h264::H264Decoder;

        let mut decoder = H264Decoder::new();
        let mut au0 = field_parameter_sets();
        au0.extend(field_slice(true, false, 0, false, 0));
        let units = [
            au0,
            field_slice(false, false, 0, true, 1),
            field_slice(false, true, 1, false, 4),
            field_slice(false, true, 1, true, 5),
        ];
        let mut jobs = Vec::new();
        let mut shown = Vec::new();
        for (i, unit) in units.iter().enumerate() {
            for job in decoder.decode_access_unit(unit, i as u64).expect("decodes") {
                shown.extend(job.output.clone());
                jobs.push(job);
            }
        }
        shown.extend(decoder.flush().output);
        assert_eq!(jobs.len(), 4);
        let ts: Vec<u64> = jobs.iter().map(|j| j.timestamp_ns).collect();
        assert_eq!(
            ts,
            vec![0, 0, 2, 2],
            "second fields decode into their first field's buffer"
        );
        assert_eq!(shown, vec![0, 2], "one output per frame");

        let params: Vec<_> = jobs
            .iter()
            .map(|j| PictureControls::of(j).decode_params)
            .collect();
        let second = &params[1];
        assert_eq!(
            second.flags,
            b::V4L2_H264_DECODE_PARAM_FLAG_FIELD_PIC | b::V4L2_H264_DECODE_PARAM_FLAG_BOTTOM_FIELD
        );
        assert_eq!(
            (second.top_field_order_cnt, second.bottom_field_order_cnt),
            (0, 1)
        );
        let first_field = &second.dpb[0];
        assert_eq!(first_field.reference_ts, 0);
        assert_eq!(u32::from(first_field.fields), b::V4L2_H264_TOP_FIELD_REF);
        // PicNum of an opposite-parity field: 2 * FrameNumWrap.
        assert_eq!(first_field.pic_num, 0);
        assert_eq!(
            first_field.flags,
            b::V4L2_H264_DPB_ENTRY_FLAG_VALID
                | b::V4L2_H264_DPB_ENTRY_FLAG_ACTIVE
                | b::V4L2_H264_DPB_ENTRY_FLAG_FIELD
        );

        let list = |job: usize| {
            let l = &SliceControls::of(&jobs[job].slices[0]).params.ref_pic_list0;
            [
                (l[0].index, u32::from(l[0].fields)),
                (l[1].index, u32::from(l[1].fields)),
            ]
        };
        // Top field of frame 1: both fields of frame 0, top (same parity) first.
        assert_eq!(
            list(2),
            [
                (0, b::V4L2_H264_TOP_FIELD_REF),
                (0, b::V4L2_H264_BOTTOM_FIELD_REF)
            ]
        );
        // Its bottom field: frame 0's bottom, then frame 1's own top field.
        assert_eq!(
            list(3),
            [
                (0, b::V4L2_H264_BOTTOM_FIELD_REF),
                (1, b::V4L2_H264_TOP_FIELD_REF)
            ]
        );
        let pair = &params[3].dpb[0];
        assert_eq!(u32::from(pair.fields), b::V4L2_H264_FRAME_REF);
        // Both fields are references: the current (bottom) parity's PicNum,
        // 2 * FrameNumWrap + 1; frame 1's own top field alone: 2 * 1.
        assert_eq!(pair.pic_num, 1);
        assert_eq!(params[3].dpb[1].pic_num, 2);
        assert_eq!(
            (pair.top_field_order_cnt, pair.bottom_field_order_cnt),
            (0, 1)
        );
        assert_eq!(
            (
                params[3].top_field_order_cnt,
                params[3].bottom_field_order_cnt
            ),
            (4, 5),
            "a second field carries both counts"
        );
        assert!(jobs.iter().all(|j| !j.missing_references));
    }
}
