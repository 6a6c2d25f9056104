//! Picture parameter set (7.3.2.2).

use crate::codec::bitstream::BitReader;

use super::scaling::{parse_scaling_matrix, Fallback, ScalingMatrix};
use super::sps::Sps;
use super::H264Error;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pps {
    pub pic_parameter_set_id: u8,
    pub seq_parameter_set_id: u8,
    pub entropy_coding_mode_flag: bool,
    pub bottom_field_pic_order_in_frame_present_flag: bool,
    pub num_slice_groups_minus1: u8,
    pub slice_group_map_type: u8,
    pub slice_group_change_rate_minus1: u32,
    pub num_ref_idx_l0_default_active_minus1: u8,
    pub num_ref_idx_l1_default_active_minus1: u8,
    pub weighted_pred_flag: bool,
    pub weighted_bipred_idc: u8,
    pub pic_init_qp_minus26: i8,
    pub pic_init_qs_minus26: i8,
    pub chroma_qp_index_offset: i8,
    pub deblocking_filter_control_present_flag: bool,
    pub constrained_intra_pred_flag: bool,
    pub redundant_pic_cnt_present_flag: bool,
    pub transform_8x8_mode_flag: bool,
    pub pic_scaling_matrix_present_flag: bool,
    /// The lists that apply to pictures using this PPS: its own (rule B),
    /// or the SPS's when it sends none.
    pub scaling_matrix: ScalingMatrix,
    pub second_chroma_qp_index_offset: i8,
}

impl Pps {
    /// Parses a PPS from its RBSP (after the NAL header); `sps_for` looks up
    /// the SPS it names (chroma_format_idc and bit depth change the syntax).
    pub fn parse<'s>(
        r: &mut BitReader,
        sps_for: impl Fn(u8) -> Option<&'s Sps>,
    ) -> Result<Self, H264Error> {
        let pic_parameter_set_id = r.ue_max("pic_parameter_set_id", 255)? as u8;
        let seq_parameter_set_id = r.ue_max("seq_parameter_set_id", 31)? as u8;
        let sps =
            sps_for(seq_parameter_set_id).ok_or(H264Error::MissingSps(seq_parameter_set_id))?;
        let entropy_coding_mode_flag = r.flag("entropy_coding_mode_flag")?;
        let bottom_field_pic_order_in_frame_present_flag =
            r.flag("bottom_field_pic_order_in_frame_present_flag")?;
        let num_slice_groups_minus1 = r.ue_max("num_slice_groups_minus1", 7)? as u8;
        let mut slice_group_map_type = 0;
        let mut slice_group_change_rate_minus1 = 0;
        if num_slice_groups_minus1 > 0 {
            let pic_size_in_map_units =
                sps.width_in_mbs() * (u32::from(sps.pic_height_in_map_units_minus1) + 1);
            slice_group_map_type = r.ue_max("slice_group_map_type", 6)? as u8;
            match slice_group_map_type {
                0 => {
                    for _ in 0..=num_slice_groups_minus1 {
                        r.ue_max("run_length_minus1", pic_size_in_map_units - 1)?;
                    }
                }
                2 => {
                    for _ in 0..num_slice_groups_minus1 {
                        r.ue_max("top_left", pic_size_in_map_units - 1)?;
                        r.ue_max("bottom_right", pic_size_in_map_units - 1)?;
                    }
                }
                3..=5 => {
                    r.flag("slice_group_change_direction_flag")?;
                    slice_group_change_rate_minus1 =
                        r.ue_max("slice_group_change_rate_minus1", pic_size_in_map_units - 1)?;
                }
                6 => {
                    let n = r.ue_max("pic_size_in_map_units_minus1", pic_size_in_map_units - 1)?;
                    let bits = 32 - u32::from(num_slice_groups_minus1).leading_zeros();
                    for _ in 0..=n {
                        r.u(bits, "slice_group_id")?;
                    }
                }
                _ => {}
            }
        }
        let num_ref_idx_l0_default_active_minus1 =
            r.ue_max("num_ref_idx_l0_default_active_minus1", 31)? as u8;
        let num_ref_idx_l1_default_active_minus1 =
            r.ue_max("num_ref_idx_l1_default_active_minus1", 31)? as u8;
        let weighted_pred_flag = r.flag("weighted_pred_flag")?;
        let weighted_bipred_idc = r.u(2, "weighted_bipred_idc")? as u8;
        if weighted_bipred_idc > 2 {
            return Err(H264Error::Invalid("weighted_bipred_idc is 3"));
        }
        let qp_min = -26 - 6 * i32::from(sps.bit_depth_luma_minus8);
        let pic_init_qp_minus26 = r.se_range("pic_init_qp_minus26", qp_min, 25)? as i8;
        let pic_init_qs_minus26 = r.se_range("pic_init_qs_minus26", -26, 25)? as i8;
        let chroma_qp_index_offset = r.se_range("chroma_qp_index_offset", -12, 12)? as i8;
        let deblocking_filter_control_present_flag =
            r.flag("deblocking_filter_control_present_flag")?;
        let constrained_intra_pred_flag = r.flag("constrained_intra_pred_flag")?;
        let redundant_pic_cnt_present_flag = r.flag("redundant_pic_cnt_present_flag")?;

        let mut pps = Pps {
            pic_parameter_set_id,
            seq_parameter_set_id,
            entropy_coding_mode_flag,
            bottom_field_pic_order_in_frame_present_flag,
            num_slice_groups_minus1,
            slice_group_map_type,
            slice_group_change_rate_minus1,
            num_ref_idx_l0_default_active_minus1,
            num_ref_idx_l1_default_active_minus1,
            weighted_pred_flag,
            weighted_bipred_idc,
            pic_init_qp_minus26,
            pic_init_qs_minus26,
            chroma_qp_index_offset,
            deblocking_filter_control_present_flag,
            constrained_intra_pred_flag,
            redundant_pic_cnt_present_flag,
            transform_8x8_mode_flag: false,
            pic_scaling_matrix_present_flag: false,
            scaling_matrix: sps.scaling_matrix.clone(),
            second_chroma_qp_index_offset: chroma_qp_index_offset,
        };
        if r.more_rbsp_data() {
            pps.transform_8x8_mode_flag = r.flag("transform_8x8_mode_flag")?;
            pps.pic_scaling_matrix_present_flag = r.flag("pic_scaling_matrix_present_flag")?;
            if pps.pic_scaling_matrix_present_flag {
                let count = 6 + if sps.chroma_format_idc != 3 { 2 } else { 6 }
                    * usize::from(pps.transform_8x8_mode_flag);
                // Rule A when the SPS sends no matrix, rule B otherwise.
                let fallback = if sps.seq_scaling_matrix_present_flag {
                    Fallback::RuleB(&sps.scaling_matrix)
                } else {
                    Fallback::RuleA
                };
                pps.scaling_matrix =
                    parse_scaling_matrix(r, count, "pic_scaling_list_present_flag", fallback)?;
            }
            pps.second_chroma_qp_index_offset =
                r.se_range("second_chroma_qp_index_offset", -12, 12)? as i8;
        }
        Ok(pps)
    }
}
