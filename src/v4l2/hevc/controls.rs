//! Filling the kernel's HEVC stateless control structs
//! (`V4L2_CID_STATELESS_HEVC_*`) from the codec layer's parsed headers,
//! reference pictures and lists. v4l2r has no typed HEVC controls: the
//! marker types here tie each control id to its bindings struct.

use crate::v4l2::controls::marker_control;
use v4l2r::bindings as b;

use crate::codec::hevc::decoder::{DecodeJob, SliceJob};
use crate::codec::hevc::slice::{PredWeightTable, SliceType};
use crate::codec::hevc::{Pps, ScalingList, Sps};

marker_control!(
    HevcSps,
    b::V4L2_CID_STATELESS_HEVC_SPS,
    b::v4l2_ctrl_hevc_sps
);
marker_control!(
    HevcPps,
    b::V4L2_CID_STATELESS_HEVC_PPS,
    b::v4l2_ctrl_hevc_pps
);
marker_control!(
    HevcSliceParams,
    b::V4L2_CID_STATELESS_HEVC_SLICE_PARAMS,
    b::v4l2_ctrl_hevc_slice_params
);
marker_control!(
    HevcScalingMatrix,
    b::V4L2_CID_STATELESS_HEVC_SCALING_MATRIX,
    b::v4l2_ctrl_hevc_scaling_matrix
);
marker_control!(
    HevcDecodeParams,
    b::V4L2_CID_STATELESS_HEVC_DECODE_PARAMS,
    b::v4l2_ctrl_hevc_decode_params
);
marker_control!(
    HevcEntryPointOffsets,
    b::V4L2_CID_STATELESS_HEVC_ENTRY_POINT_OFFSETS,
    u32
);

fn flags(pairs: &[(bool, u64)]) -> u64 {
    pairs
        .iter()
        .filter(|(on, _)| *on)
        .fold(0, |acc, (_, flag)| acc | flag)
}

/// The SPS control. The sub-layer ordering values are sub-layer 0's, as
/// GStreamer sends them (the DPB itself follows the highest sub-layer).
pub fn sps_control(sps: &Sps) -> b::v4l2_ctrl_hevc_sps {
    let ordering = sps.sub_layer_ordering.first().copied().unwrap_or_default();
    let mut c = b::v4l2_ctrl_hevc_sps {
        video_parameter_set_id: sps.sps_video_parameter_set_id,
        seq_parameter_set_id: sps.sps_seq_parameter_set_id,
        pic_width_in_luma_samples: sps.pic_width_in_luma_samples as u16,
        pic_height_in_luma_samples: sps.pic_height_in_luma_samples as u16,
        bit_depth_luma_minus8: sps.bit_depth_luma_minus8,
        bit_depth_chroma_minus8: sps.bit_depth_chroma_minus8,
        log2_max_pic_order_cnt_lsb_minus4: sps.log2_max_pic_order_cnt_lsb_minus4,
        sps_max_dec_pic_buffering_minus1: ordering.max_dec_pic_buffering_minus1,
        sps_max_num_reorder_pics: ordering.max_num_reorder_pics,
        sps_max_latency_increase_plus1: ordering.max_latency_increase_plus1.min(255) as u8,
        log2_min_luma_coding_block_size_minus3: sps.log2_min_luma_coding_block_size_minus3,
        log2_diff_max_min_luma_coding_block_size: sps.log2_diff_max_min_luma_coding_block_size,
        log2_min_luma_transform_block_size_minus2: sps.log2_min_luma_transform_block_size_minus2,
        log2_diff_max_min_luma_transform_block_size: sps
            .log2_diff_max_min_luma_transform_block_size,
        max_transform_hierarchy_depth_inter: sps.max_transform_hierarchy_depth_inter,
        max_transform_hierarchy_depth_intra: sps.max_transform_hierarchy_depth_intra,
        num_short_term_ref_pic_sets: sps.st_ref_pic_sets.len() as u8,
        num_long_term_ref_pics_sps: sps.lt_ref_pics.len() as u8,
        chroma_format_idc: sps.chroma_format_idc,
        sps_max_sub_layers_minus1: sps.sps_max_sub_layers_minus1,
        flags: flags(&[
            (
                sps.separate_colour_plane_flag,
                b::V4L2_HEVC_SPS_FLAG_SEPARATE_COLOUR_PLANE as u64,
            ),
            (
                sps.scaling_list_enabled_flag,
                b::V4L2_HEVC_SPS_FLAG_SCALING_LIST_ENABLED as u64,
            ),
            (
                sps.amp_enabled_flag,
                b::V4L2_HEVC_SPS_FLAG_AMP_ENABLED as u64,
            ),
            (
                sps.sample_adaptive_offset_enabled_flag,
                b::V4L2_HEVC_SPS_FLAG_SAMPLE_ADAPTIVE_OFFSET as u64,
            ),
            (
                sps.long_term_ref_pics_present_flag,
                b::V4L2_HEVC_SPS_FLAG_LONG_TERM_REF_PICS_PRESENT as u64,
            ),
            (
                sps.sps_temporal_mvp_enabled_flag,
                b::V4L2_HEVC_SPS_FLAG_SPS_TEMPORAL_MVP_ENABLED as u64,
            ),
            (
                sps.strong_intra_smoothing_enabled_flag,
                b::V4L2_HEVC_SPS_FLAG_STRONG_INTRA_SMOOTHING_ENABLED as u64,
            ),
        ]),
        ..Default::default()
    };
    if sps.pcm_enabled_flag {
        c.pcm_sample_bit_depth_luma_minus1 = sps.pcm_sample_bit_depth_luma_minus1;
        c.pcm_sample_bit_depth_chroma_minus1 = sps.pcm_sample_bit_depth_chroma_minus1;
        c.log2_min_pcm_luma_coding_block_size_minus3 =
            sps.log2_min_pcm_luma_coding_block_size_minus3;
        c.log2_diff_max_min_pcm_luma_coding_block_size =
            sps.log2_diff_max_min_pcm_luma_coding_block_size;
        c.flags |= b::V4L2_HEVC_SPS_FLAG_PCM_ENABLED as u64;
        if sps.pcm_loop_filter_disabled_flag {
            c.flags |= b::V4L2_HEVC_SPS_FLAG_PCM_LOOP_FILTER_DISABLED as u64;
        }
    }
    c
}

pub fn pps_control(pps: &Pps) -> b::v4l2_ctrl_hevc_pps {
    let mut c = b::v4l2_ctrl_hevc_pps {
        pic_parameter_set_id: pps.pps_pic_parameter_set_id,
        num_extra_slice_header_bits: pps.num_extra_slice_header_bits,
        num_ref_idx_l0_default_active_minus1: pps.num_ref_idx_l0_default_active_minus1,
        num_ref_idx_l1_default_active_minus1: pps.num_ref_idx_l1_default_active_minus1,
        init_qp_minus26: pps.init_qp_minus26,
        diff_cu_qp_delta_depth: pps.diff_cu_qp_delta_depth,
        pps_cb_qp_offset: pps.pps_cb_qp_offset,
        pps_cr_qp_offset: pps.pps_cr_qp_offset,
        pps_beta_offset_div2: pps.pps_beta_offset_div2,
        pps_tc_offset_div2: pps.pps_tc_offset_div2,
        log2_parallel_merge_level_minus2: pps.log2_parallel_merge_level_minus2,
        flags: flags(&[
            (
                pps.dependent_slice_segments_enabled_flag,
                b::V4L2_HEVC_PPS_FLAG_DEPENDENT_SLICE_SEGMENT_ENABLED as u64,
            ),
            (
                pps.output_flag_present_flag,
                b::V4L2_HEVC_PPS_FLAG_OUTPUT_FLAG_PRESENT as u64,
            ),
            (
                pps.sign_data_hiding_enabled_flag,
                b::V4L2_HEVC_PPS_FLAG_SIGN_DATA_HIDING_ENABLED as u64,
            ),
            (
                pps.cabac_init_present_flag,
                b::V4L2_HEVC_PPS_FLAG_CABAC_INIT_PRESENT as u64,
            ),
            (
                pps.constrained_intra_pred_flag,
                b::V4L2_HEVC_PPS_FLAG_CONSTRAINED_INTRA_PRED as u64,
            ),
            (
                pps.transform_skip_enabled_flag,
                b::V4L2_HEVC_PPS_FLAG_TRANSFORM_SKIP_ENABLED as u64,
            ),
            (
                pps.cu_qp_delta_enabled_flag,
                b::V4L2_HEVC_PPS_FLAG_CU_QP_DELTA_ENABLED as u64,
            ),
            (
                pps.pps_slice_chroma_qp_offsets_present_flag,
                b::V4L2_HEVC_PPS_FLAG_PPS_SLICE_CHROMA_QP_OFFSETS_PRESENT as u64,
            ),
            (
                pps.weighted_pred_flag,
                b::V4L2_HEVC_PPS_FLAG_WEIGHTED_PRED as u64,
            ),
            (
                pps.weighted_bipred_flag,
                b::V4L2_HEVC_PPS_FLAG_WEIGHTED_BIPRED as u64,
            ),
            (
                pps.transquant_bypass_enabled_flag,
                b::V4L2_HEVC_PPS_FLAG_TRANSQUANT_BYPASS_ENABLED as u64,
            ),
            (
                pps.tiles_enabled_flag,
                b::V4L2_HEVC_PPS_FLAG_TILES_ENABLED as u64,
            ),
            (
                pps.entropy_coding_sync_enabled_flag,
                b::V4L2_HEVC_PPS_FLAG_ENTROPY_CODING_SYNC_ENABLED as u64,
            ),
            (
                pps.loop_filter_across_tiles_enabled_flag,
                b::V4L2_HEVC_PPS_FLAG_LOOP_FILTER_ACROSS_TILES_ENABLED as u64,
            ),
            (
                pps.pps_loop_filter_across_slices_enabled_flag,
                b::V4L2_HEVC_PPS_FLAG_PPS_LOOP_FILTER_ACROSS_SLICES_ENABLED as u64,
            ),
            (
                pps.deblocking_filter_override_enabled_flag,
                b::V4L2_HEVC_PPS_FLAG_DEBLOCKING_FILTER_OVERRIDE_ENABLED as u64,
            ),
            (
                pps.pps_deblocking_filter_disabled_flag,
                b::V4L2_HEVC_PPS_FLAG_PPS_DISABLE_DEBLOCKING_FILTER as u64,
            ),
            (
                pps.lists_modification_present_flag,
                b::V4L2_HEVC_PPS_FLAG_LISTS_MODIFICATION_PRESENT as u64,
            ),
            (
                pps.slice_segment_header_extension_present_flag,
                b::V4L2_HEVC_PPS_FLAG_SLICE_SEGMENT_HEADER_EXTENSION_PRESENT as u64,
            ),
            (
                pps.deblocking_filter_control_present_flag,
                b::V4L2_HEVC_PPS_FLAG_DEBLOCKING_FILTER_CONTROL_PRESENT as u64,
            ),
            (
                pps.uniform_spacing_flag,
                b::V4L2_HEVC_PPS_FLAG_UNIFORM_SPACING as u64,
            ),
        ]),
        ..Default::default()
    };
    if pps.tiles_enabled_flag {
        c.num_tile_columns_minus1 = pps.num_tile_columns_minus1;
        c.num_tile_rows_minus1 = pps.num_tile_rows_minus1;
        // Drivers (Cedrus) read the sizes even with uniform spacing: the
        // derived ones are sent.
        for (dst, &w) in c.column_width_minus1.iter_mut().zip(&pps.column_widths) {
            *dst = w.saturating_sub(1) as u8;
        }
        for (dst, &h) in c.row_height_minus1.iter_mut().zip(&pps.row_heights) {
            *dst = h.saturating_sub(1) as u8;
        }
    }
    c
}

/// The up-right diagonal scan (6.5.3) of a `size` x `size` block: for
/// each position in coded order, its raster index.
fn diagonal_scan(size: usize) -> Vec<usize> {
    let mut order = Vec::with_capacity(size * size);
    for diagonal in 0..(2 * size - 1) {
        // Along a diagonal, y goes down from its largest value.
        for y in (0..size).rev() {
            let Some(x) = diagonal.checked_sub(y) else {
                continue;
            };
            if x < size {
                order.push(y * size + x);
            }
        }
    }
    order
}

fn to_raster<const N: usize>(coded: &[u8; N], scan: &[usize]) -> [u8; N] {
    let mut raster = [0; N];
    for (&value, &at) in coded.iter().zip(scan) {
        raster[at] = value;
    }
    raster
}

/// The scaling lists in effect (the PPS's, else the SPS's, else the
/// defaults), in raster order; zeros when scaling lists are off.
pub fn scaling_matrix_control(sps: &Sps, pps: &Pps) -> b::v4l2_ctrl_hevc_scaling_matrix {
    let mut c = b::v4l2_ctrl_hevc_scaling_matrix::default();
    if !sps.scaling_list_enabled_flag {
        return c;
    }
    let default = ScalingList::default();
    let lists = pps
        .scaling_list
        .as_ref()
        .or(sps.scaling_list.as_ref())
        .unwrap_or(&default);
    let scan4 = diagonal_scan(4);
    let scan8 = diagonal_scan(8);
    for (dst, src) in c.scaling_list_4x4.iter_mut().zip(&lists.lists_4x4) {
        *dst = to_raster(src, &scan4);
    }
    for (dst, src) in c.scaling_list_8x8.iter_mut().zip(&lists.lists_8x8) {
        *dst = to_raster(src, &scan8);
    }
    for (dst, src) in c.scaling_list_16x16.iter_mut().zip(&lists.lists_16x16) {
        *dst = to_raster(src, &scan8);
    }
    // V4L2 carries the two luma 32x32 matrices (matrixId 0 and 3).
    for (dst, matrix) in c.scaling_list_32x32.iter_mut().zip([0, 3]) {
        *dst = to_raster(&lists.lists_32x32[matrix], &scan8);
    }
    c.scaling_list_dc_coef_16x16 = lists.dc_coef_16x16;
    c.scaling_list_dc_coef_32x32 = [lists.dc_coef_32x32[0], lists.dc_coef_32x32[3]];
    c
}

const NO_PICTURE: u8 = 0xff;

fn index_array(list: &[Option<u8>]) -> [u8; 16] {
    let mut out = [NO_PICTURE; 16];
    for (dst, entry) in out.iter_mut().zip(list) {
        *dst = entry.unwrap_or(NO_PICTURE);
    }
    out
}

pub fn decode_params_control(job: &DecodeJob) -> b::v4l2_ctrl_hevc_decode_params {
    let mut c = b::v4l2_ctrl_hevc_decode_params {
        pic_order_cnt_val: job.poc,
        short_term_ref_pic_set_size: job.header.st_rps_bits.min(u32::from(u16::MAX)) as u16,
        long_term_ref_pic_set_size: job.header.lt_rps_bits.min(u32::from(u16::MAX)) as u16,
        num_active_dpb_entries: job.dpb.len() as u8,
        num_poc_st_curr_before: job.st_curr_before.len().min(16) as u8,
        num_poc_st_curr_after: job.st_curr_after.len().min(16) as u8,
        num_poc_lt_curr: job.lt_curr.len().min(16) as u8,
        poc_st_curr_before: index_array(&job.st_curr_before),
        poc_st_curr_after: index_array(&job.st_curr_after),
        poc_lt_curr: index_array(&job.lt_curr),
        num_delta_pocs_of_ref_rps_idx: job.num_delta_pocs_of_ref_rps_idx,
        flags: flags(&[
            (
                job.nal_header.is_irap(),
                b::V4L2_HEVC_DECODE_PARAM_FLAG_IRAP_PIC as u64,
            ),
            (
                job.nal_header.is_idr(),
                b::V4L2_HEVC_DECODE_PARAM_FLAG_IDR_PIC as u64,
            ),
            (
                job.no_output_of_prior_pics,
                b::V4L2_HEVC_DECODE_PARAM_FLAG_NO_OUTPUT_OF_PRIOR as u64,
            ),
        ]),
        ..Default::default()
    };
    for (entry, r) in c.dpb.iter_mut().zip(&job.dpb) {
        *entry = b::v4l2_hevc_dpb_entry {
            timestamp: r.timestamp_ns,
            flags: if r.long_term {
                b::V4L2_HEVC_DPB_ENTRY_LONG_TERM_REFERENCE as u8
            } else {
                0
            },
            field_pic: b::V4L2_HEVC_SEI_PIC_STRUCT_FRAME as u8,
            reserved: 0,
            pic_order_cnt_val: r.poc,
        };
    }
    c
}

/// ChromaOffsetLX (7-56) from the coded delta, for 8-bit offsets
/// (WpOffsetHalfRangeC 128; no high-precision offsets).
fn chroma_offset(delta_offset: i16, delta_weight: i8, log2_denom: u32) -> i8 {
    const HALF_RANGE: i32 = 1 << 7;
    let log2_denom = log2_denom.min(7);
    let weight = (1i32 << log2_denom) + i32::from(delta_weight);
    let offset = HALF_RANGE + i32::from(delta_offset) - ((HALF_RANGE * weight) >> log2_denom);
    offset.clamp(-HALF_RANGE, HALF_RANGE - 1) as i8
}

fn pred_weight_table(
    table: &PredWeightTable,
    slice_type: SliceType,
    chroma: bool,
) -> b::v4l2_hevc_pred_weight_table {
    let mut c = b::v4l2_hevc_pred_weight_table {
        luma_log2_weight_denom: table.luma_log2_weight_denom,
        delta_chroma_log2_weight_denom: table.delta_chroma_log2_weight_denom,
        ..Default::default()
    };
    let log2_chroma = (i32::from(table.luma_log2_weight_denom)
        + i32::from(table.delta_chroma_log2_weight_denom))
    .clamp(0, 7) as u32;
    let lists = if slice_type == SliceType::B { 2 } else { 1 };
    for (list, entries) in [&table.l0, &table.l1].into_iter().enumerate().take(lists) {
        for (i, e) in entries.iter().enumerate().take(16) {
            let (luma_weight, luma_offset, chroma_weight, chroma_offsets) = if list == 0 {
                (
                    &mut c.delta_luma_weight_l0[i],
                    &mut c.luma_offset_l0[i],
                    &mut c.delta_chroma_weight_l0[i],
                    &mut c.chroma_offset_l0[i],
                )
            } else {
                (
                    &mut c.delta_luma_weight_l1[i],
                    &mut c.luma_offset_l1[i],
                    &mut c.delta_chroma_weight_l1[i],
                    &mut c.chroma_offset_l1[i],
                )
            };
            if e.luma_weight_flag {
                *luma_weight = e.delta_luma_weight;
                *luma_offset = e.luma_offset.clamp(-128, 127) as i8;
            }
            if chroma && e.chroma_weight_flag {
                for j in 0..2 {
                    chroma_weight[j] = e.delta_chroma_weight[j];
                    chroma_offsets[j] = chroma_offset(
                        e.delta_chroma_offset[j],
                        e.delta_chroma_weight[j],
                        log2_chroma,
                    );
                }
            }
        }
    }
    c
}

/// One slice segment's parameters. `start_code` bytes precede the NAL unit
/// in the OUTPUT buffer.
pub fn slice_params_control(
    job: &DecodeJob,
    slice: &SliceJob,
    start_code: usize,
) -> b::v4l2_ctrl_hevc_slice_params {
    let h = &slice.header;
    let nal_len = slice.nal.end - slice.nal.start;
    let weighted = match h.slice_type {
        SliceType::P => job.pps.weighted_pred_flag,
        SliceType::B => job.pps.weighted_bipred_flag,
        SliceType::I => false,
    };
    let pred_weight_table = match &h.pred_weight_table {
        Some(table) if weighted => {
            pred_weight_table(table, h.slice_type, job.sps.chroma_format_idc != 0)
        }
        Some(table) => b::v4l2_hevc_pred_weight_table {
            luma_log2_weight_denom: table.luma_log2_weight_denom,
            delta_chroma_log2_weight_denom: table.delta_chroma_log2_weight_denom,
            ..Default::default()
        },
        None => Default::default(),
    };
    b::v4l2_ctrl_hevc_slice_params {
        bit_size: ((nal_len + start_code) * 8) as u32,
        data_byte_offset: (h.slice_data_byte_offset + start_code) as u32,
        num_entry_point_offsets: h.num_entry_point_offsets,
        nal_unit_type: slice.nal_header.nal_unit_type,
        nuh_temporal_id_plus1: slice.nal_header.nuh_temporal_id_plus1,
        slice_type: h.slice_type.value(),
        colour_plane_id: h.colour_plane_id,
        slice_pic_order_cnt: job.poc,
        num_ref_idx_l0_active_minus1: h.num_ref_idx_l0_active_minus1,
        num_ref_idx_l1_active_minus1: h.num_ref_idx_l1_active_minus1,
        collocated_ref_idx: h.collocated_ref_idx,
        five_minus_max_num_merge_cand: h.five_minus_max_num_merge_cand,
        slice_qp_delta: h.slice_qp_delta,
        slice_cb_qp_offset: h.slice_cb_qp_offset,
        slice_cr_qp_offset: h.slice_cr_qp_offset,
        slice_beta_offset_div2: h.slice_beta_offset_div2,
        slice_tc_offset_div2: h.slice_tc_offset_div2,
        pic_struct: b::V4L2_HEVC_SEI_PIC_STRUCT_FRAME as u8,
        slice_segment_addr: h.slice_segment_address,
        ref_idx_l0: index_array(&slice.ref_list0),
        ref_idx_l1: index_array(&slice.ref_list1),
        short_term_ref_pic_set_size: h.st_rps_bits.min(u32::from(u16::MAX)) as u16,
        long_term_ref_pic_set_size: h.lt_rps_bits.min(u32::from(u16::MAX)) as u16,
        pred_weight_table,
        flags: flags(&[
            (
                h.slice_sao_luma_flag,
                b::V4L2_HEVC_SLICE_PARAMS_FLAG_SLICE_SAO_LUMA as u64,
            ),
            (
                h.slice_sao_chroma_flag,
                b::V4L2_HEVC_SLICE_PARAMS_FLAG_SLICE_SAO_CHROMA as u64,
            ),
            (
                h.slice_temporal_mvp_enabled_flag,
                b::V4L2_HEVC_SLICE_PARAMS_FLAG_SLICE_TEMPORAL_MVP_ENABLED as u64,
            ),
            (
                h.mvd_l1_zero_flag,
                b::V4L2_HEVC_SLICE_PARAMS_FLAG_MVD_L1_ZERO as u64,
            ),
            (
                h.cabac_init_flag,
                b::V4L2_HEVC_SLICE_PARAMS_FLAG_CABAC_INIT as u64,
            ),
            (
                h.collocated_from_l0_flag,
                b::V4L2_HEVC_SLICE_PARAMS_FLAG_COLLOCATED_FROM_L0 as u64,
            ),
            (
                h.slice_deblocking_filter_disabled_flag,
                b::V4L2_HEVC_SLICE_PARAMS_FLAG_SLICE_DEBLOCKING_FILTER_DISABLED as u64,
            ),
            (
                h.slice_loop_filter_across_slices_enabled_flag,
                b::V4L2_HEVC_SLICE_PARAMS_FLAG_SLICE_LOOP_FILTER_ACROSS_SLICES_ENABLED as u64,
            ),
            (
                h.dependent_slice_segment_flag,
                b::V4L2_HEVC_SLICE_PARAMS_FLAG_DEPENDENT_SLICE_SEGMENT as u64,
            ),
        ]),
        ..Default::default()
    }
}

/// entry_point_offset_minus1 + 1 of each entry point of the slices.
pub fn entry_point_offsets(slices: &[SliceJob]) -> Vec<u32> {
    slices
        .iter()
        .flat_map(|s| {
            s.header
                .entry_point_offset_minus1
                .iter()
                .map(|&o| o.saturating_add(1))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diagonal_scan_matches_6_5_3() {
        // 4x4: (0,0) (0,1) (1,0) (0,2) (1,1) (2,0) ... as (x, y) pairs;
        // raster index y * 4 + x.
        assert_eq!(
            diagonal_scan(4),
            vec![0, 4, 1, 8, 5, 2, 12, 9, 6, 3, 13, 10, 7, 14, 11, 15]
        );
        let scan8 = diagonal_scan(8);
        assert_eq!(scan8.len(), 64);
        let mut seen = scan8.clone();
        seen.sort_unstable();
        assert_eq!(seen, (0..64).collect::<Vec<_>>());
        assert_eq!(&scan8[..3], &[0, 8, 1]);
    }

    #[test]
    fn chroma_offsets_follow_7_56() {
        // Weight 1.0 (delta 0): the offset is the coded delta.
        assert_eq!(chroma_offset(5, 0, 6), 5);
        // Weight 0.5 at denominator 2^6: 128 + d - 64.
        assert_eq!(chroma_offset(-10, -32, 6), 54);
        assert_eq!(chroma_offset(500, 0, 6), 127, "clamped");
    }
}
