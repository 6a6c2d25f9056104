//! Picture parameter set (7.3.2.3, 7.4.3.3) with tiles (uniform or
//! explicit spacing, 6.5.1), deblocking, scaling lists and the range
//! extension (7.3.2.3.2); multilayer, 3D and screen content extensions are
//! refused.

use super::scaling::ScalingList;

/// Most tile columns / rows any level allows (Table A.8, level 6.x).
pub const MAX_TILE_COLUMNS: usize = 20;
pub const MAX_TILE_ROWS: usize = 22;

/// pps_range_extension() (7.3.2.3.2); zeros when absent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PpsRangeExtension {
    pub log2_max_transform_skip_block_size_minus2: u8,
    pub cross_component_prediction_enabled_flag: bool,
    pub chroma_qp_offset_list_enabled_flag: bool,
    pub diff_cu_chroma_qp_offset_depth: u8,
    /// 0..=5.
    pub chroma_qp_offset_list_len_minus1: u8,
    pub cb_qp_offset_list: [i8; 6],
    pub cr_qp_offset_list: [i8; 6],
    pub log2_sao_offset_scale_luma: u8,
    pub log2_sao_offset_scale_chroma: u8,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pps {
    /// 0..=63.
    pub pps_pic_parameter_set_id: u8,
    /// 0..=15.
    pub pps_seq_parameter_set_id: u8,
    pub dependent_slice_segments_enabled_flag: bool,
    pub output_flag_present_flag: bool,
    pub num_extra_slice_header_bits: u8,
    pub sign_data_hiding_enabled_flag: bool,
    pub cabac_init_present_flag: bool,
    /// 0..=14.
    pub num_ref_idx_l0_default_active_minus1: u8,
    pub num_ref_idx_l1_default_active_minus1: u8,
    /// -(26 + QpBdOffsetY)..=25.
    pub init_qp_minus26: i8,
    pub constrained_intra_pred_flag: bool,
    pub transform_skip_enabled_flag: bool,
    pub cu_qp_delta_enabled_flag: bool,
    pub diff_cu_qp_delta_depth: u8,
    /// -12..=12.
    pub pps_cb_qp_offset: i8,
    pub pps_cr_qp_offset: i8,
    pub pps_slice_chroma_qp_offsets_present_flag: bool,
    pub weighted_pred_flag: bool,
    pub weighted_bipred_flag: bool,
    pub transquant_bypass_enabled_flag: bool,
    pub tiles_enabled_flag: bool,
    /// Wavefront parallel processing: one entry point per CTB row.
    pub entropy_coding_sync_enabled_flag: bool,
    /// 0 when tiles are off; below MAX_TILE_COLUMNS and PicWidthInCtbsY.
    pub num_tile_columns_minus1: u8,
    pub num_tile_rows_minus1: u8,
    /// 1 when tiles are off.
    pub uniform_spacing_flag: bool,
    /// column_width_minus1[i] as coded (explicit spacing only), in CTBs.
    pub column_width_minus1: Vec<u16>,
    /// row_height_minus1[i] as coded (explicit spacing only), in CTBs.
    pub row_height_minus1: Vec<u16>,
    /// Tile column widths in CTBs, all num_tile_columns_minus1 + 1 of them
    /// (6-3 for uniform spacing, the coded ones and the remainder else).
    pub column_widths: Vec<u16>,
    /// Tile row heights in CTBs (6-4).
    pub row_heights: Vec<u16>,
    /// 1 when tiles are off.
    pub loop_filter_across_tiles_enabled_flag: bool,
    pub pps_loop_filter_across_slices_enabled_flag: bool,
    pub deblocking_filter_control_present_flag: bool,
    pub deblocking_filter_override_enabled_flag: bool,
    pub pps_deblocking_filter_disabled_flag: bool,
    /// -6..=6.
    pub pps_beta_offset_div2: i8,
    pub pps_tc_offset_div2: i8,
    pub pps_scaling_list_data_present_flag: bool,
    /// The PPS's own lists when pps_scaling_list_data_present_flag (they
    /// replace the SPS's for pictures using this PPS).
    pub scaling_list: Option<ScalingList>,
    pub lists_modification_present_flag: bool,
    pub log2_parallel_merge_level_minus2: u8,
    pub slice_segment_header_extension_present_flag: bool,
    /// The extension flags: which extensions follow.
    pub extensions: ExtensionFlags,
    pub range_extension: PpsRangeExtension,
}

use crate::codec::bitstream::BitReader;

use super::extensions::{ExtensionFlags, ParameterSet};

use super::sps::Sps;
use super::HevcError;

impl PpsRangeExtension {
    fn parse(r: &mut BitReader, pps: &Pps, sps: &Sps) -> Result<Self, HevcError> {
        let mut e = PpsRangeExtension::default();
        if pps.transform_skip_enabled_flag {
            e.log2_max_transform_skip_block_size_minus2 =
                r.ue_max("log2_max_transform_skip_block_size_minus2", 3)? as u8;
        }
        e.cross_component_prediction_enabled_flag =
            r.flag("cross_component_prediction_enabled_flag")?;
        e.chroma_qp_offset_list_enabled_flag = r.flag("chroma_qp_offset_list_enabled_flag")?;
        if e.chroma_qp_offset_list_enabled_flag {
            e.diff_cu_chroma_qp_offset_depth = r.ue_max(
                "diff_cu_chroma_qp_offset_depth",
                u32::from(sps.log2_diff_max_min_luma_coding_block_size),
            )? as u8;
            e.chroma_qp_offset_list_len_minus1 =
                r.ue_max("chroma_qp_offset_list_len_minus1", 5)? as u8;
            for i in 0..=usize::from(e.chroma_qp_offset_list_len_minus1) {
                e.cb_qp_offset_list[i] = r.se_range("cb_qp_offset_list", -12, 12)? as i8;
                e.cr_qp_offset_list[i] = r.se_range("cr_qp_offset_list", -12, 12)? as i8;
            }
        }
        e.log2_sao_offset_scale_luma = r.ue_max(
            "log2_sao_offset_scale_luma",
            u32::from(sps.bit_depth_luma().saturating_sub(10)),
        )? as u8;
        e.log2_sao_offset_scale_chroma = r.ue_max(
            "log2_sao_offset_scale_chroma",
            u32::from(sps.bit_depth_chroma().saturating_sub(10)),
        )? as u8;
        Ok(e)
    }
}

/// Tile sizes of uniform spacing (6-3, 6-4): `count` nearly equal parts of
/// `total` CTBs.
fn uniform(total: u32, count: u32) -> Vec<u16> {
    (0..count)
        .map(|i| (((i + 1) * total) / count - (i * total) / count) as u16)
        .collect()
}

/// Explicit tile sizes: the coded ones, the last one takes what is left.
fn explicit(total: u32, coded_minus1: &[u16]) -> Result<Vec<u16>, HevcError> {
    let mut sizes: Vec<u16> = coded_minus1.iter().map(|&s| s + 1).collect();
    let used: u32 = sizes.iter().map(|&s| u32::from(s)).sum();
    if used >= total {
        return Err(HevcError::Invalid(
            "the tiles are wider or taller than the picture",
        ));
    }
    sizes.push((total - used) as u16);
    Ok(sizes)
}

impl Pps {
    /// Parses a PPS from its RBSP, the reader just past the NAL header;
    /// `sps_for` looks up the SPS it names (its sizes and bit depths bound
    /// the values and give the tile sizes in CTBs).
    pub fn parse<'s>(
        r: &mut BitReader,
        sps_for: impl Fn(u8) -> Option<&'s Sps>,
    ) -> Result<Self, HevcError> {
        let pps_pic_parameter_set_id = r.ue_max("pps_pic_parameter_set_id", 63)? as u8;
        let pps_seq_parameter_set_id = r.ue_max("pps_seq_parameter_set_id", 15)? as u8;
        let sps = sps_for(pps_seq_parameter_set_id)
            .ok_or(HevcError::MissingSps(pps_seq_parameter_set_id))?;
        let qp_bd_offset = 6 * i32::from(sps.bit_depth_luma_minus8);
        let mut p = Pps {
            pps_pic_parameter_set_id,
            pps_seq_parameter_set_id,
            dependent_slice_segments_enabled_flag: r
                .flag("dependent_slice_segments_enabled_flag")?,
            output_flag_present_flag: r.flag("output_flag_present_flag")?,
            num_extra_slice_header_bits: r.u(3, "num_extra_slice_header_bits")? as u8,
            sign_data_hiding_enabled_flag: r.flag("sign_data_hiding_enabled_flag")?,
            cabac_init_present_flag: r.flag("cabac_init_present_flag")?,
            num_ref_idx_l0_default_active_minus1: r
                .ue_max("num_ref_idx_l0_default_active_minus1", 14)?
                as u8,
            num_ref_idx_l1_default_active_minus1: r
                .ue_max("num_ref_idx_l1_default_active_minus1", 14)?
                as u8,
            init_qp_minus26: r.se_range("init_qp_minus26", -(26 + qp_bd_offset), 25)? as i8,
            constrained_intra_pred_flag: r.flag("constrained_intra_pred_flag")?,
            transform_skip_enabled_flag: r.flag("transform_skip_enabled_flag")?,
            cu_qp_delta_enabled_flag: r.flag("cu_qp_delta_enabled_flag")?,
            diff_cu_qp_delta_depth: 0,
            pps_cb_qp_offset: 0,
            pps_cr_qp_offset: 0,
            pps_slice_chroma_qp_offsets_present_flag: false,
            weighted_pred_flag: false,
            weighted_bipred_flag: false,
            transquant_bypass_enabled_flag: false,
            tiles_enabled_flag: false,
            entropy_coding_sync_enabled_flag: false,
            num_tile_columns_minus1: 0,
            num_tile_rows_minus1: 0,
            uniform_spacing_flag: true,
            column_width_minus1: Vec::new(),
            row_height_minus1: Vec::new(),
            column_widths: Vec::new(),
            row_heights: Vec::new(),
            loop_filter_across_tiles_enabled_flag: true,
            pps_loop_filter_across_slices_enabled_flag: false,
            deblocking_filter_control_present_flag: false,
            deblocking_filter_override_enabled_flag: false,
            pps_deblocking_filter_disabled_flag: false,
            pps_beta_offset_div2: 0,
            pps_tc_offset_div2: 0,
            pps_scaling_list_data_present_flag: false,
            scaling_list: None,
            lists_modification_present_flag: false,
            log2_parallel_merge_level_minus2: 0,
            slice_segment_header_extension_present_flag: false,
            extensions: ExtensionFlags::default(),
            range_extension: PpsRangeExtension::default(),
        };
        if p.cu_qp_delta_enabled_flag {
            p.diff_cu_qp_delta_depth = r.ue_max(
                "diff_cu_qp_delta_depth",
                u32::from(sps.log2_diff_max_min_luma_coding_block_size),
            )? as u8;
        }
        p.pps_cb_qp_offset = r.se_range("pps_cb_qp_offset", -12, 12)? as i8;
        p.pps_cr_qp_offset = r.se_range("pps_cr_qp_offset", -12, 12)? as i8;
        p.pps_slice_chroma_qp_offsets_present_flag =
            r.flag("pps_slice_chroma_qp_offsets_present_flag")?;
        p.weighted_pred_flag = r.flag("weighted_pred_flag")?;
        p.weighted_bipred_flag = r.flag("weighted_bipred_flag")?;
        p.transquant_bypass_enabled_flag = r.flag("transquant_bypass_enabled_flag")?;
        p.tiles_enabled_flag = r.flag("tiles_enabled_flag")?;
        p.entropy_coding_sync_enabled_flag = r.flag("entropy_coding_sync_enabled_flag")?;
        let (width, height) = (sps.pic_width_in_ctbs(), sps.pic_height_in_ctbs());
        if p.tiles_enabled_flag {
            let max_columns = width.min(MAX_TILE_COLUMNS as u32);
            let max_rows = height.min(MAX_TILE_ROWS as u32);
            p.num_tile_columns_minus1 = r.ue_max("num_tile_columns_minus1", max_columns - 1)? as u8;
            p.num_tile_rows_minus1 = r.ue_max("num_tile_rows_minus1", max_rows - 1)? as u8;
            p.uniform_spacing_flag = r.flag("uniform_spacing_flag")?;
            if !p.uniform_spacing_flag {
                for _ in 0..p.num_tile_columns_minus1 {
                    p.column_width_minus1
                        .push(r.ue_max("column_width_minus1", width - 1)? as u16);
                }
                for _ in 0..p.num_tile_rows_minus1 {
                    p.row_height_minus1
                        .push(r.ue_max("row_height_minus1", height - 1)? as u16);
                }
            }
            p.loop_filter_across_tiles_enabled_flag =
                r.flag("loop_filter_across_tiles_enabled_flag")?;
        }
        let columns = u32::from(p.num_tile_columns_minus1) + 1;
        let rows = u32::from(p.num_tile_rows_minus1) + 1;
        if p.uniform_spacing_flag {
            p.column_widths = uniform(width, columns);
            p.row_heights = uniform(height, rows);
        } else {
            p.column_widths = explicit(width, &p.column_width_minus1)?;
            p.row_heights = explicit(height, &p.row_height_minus1)?;
        }
        p.pps_loop_filter_across_slices_enabled_flag =
            r.flag("pps_loop_filter_across_slices_enabled_flag")?;
        p.deblocking_filter_control_present_flag =
            r.flag("deblocking_filter_control_present_flag")?;
        if p.deblocking_filter_control_present_flag {
            p.deblocking_filter_override_enabled_flag =
                r.flag("deblocking_filter_override_enabled_flag")?;
            p.pps_deblocking_filter_disabled_flag =
                r.flag("pps_deblocking_filter_disabled_flag")?;
            if !p.pps_deblocking_filter_disabled_flag {
                p.pps_beta_offset_div2 = r.se_range("pps_beta_offset_div2", -6, 6)? as i8;
                p.pps_tc_offset_div2 = r.se_range("pps_tc_offset_div2", -6, 6)? as i8;
            }
        }
        p.pps_scaling_list_data_present_flag = r.flag("pps_scaling_list_data_present_flag")?;
        if p.pps_scaling_list_data_present_flag {
            p.scaling_list = Some(ScalingList::parse(r)?);
        }
        p.lists_modification_present_flag = r.flag("lists_modification_present_flag")?;
        p.log2_parallel_merge_level_minus2 =
            r.ue_max("log2_parallel_merge_level_minus2", sps.ctb_log2_size() - 2)? as u8;
        p.slice_segment_header_extension_present_flag =
            r.flag("slice_segment_header_extension_present_flag")?;
        p.extensions = ExtensionFlags::parse(r, ParameterSet::Pps)?;
        if p.extensions.range {
            p.range_extension = PpsRangeExtension::parse(r, &p, sps)?;
        }
        p.extensions.check_supported(ParameterSet::Pps)?;
        Ok(p)
    }

    /// The scaling lists of pictures using this PPS with `sps`: the PPS's,
    /// else the SPS's; None when scaling lists are off (flat 16).
    pub fn effective_scaling_list<'a>(&'a self, sps: &'a Sps) -> Option<&'a ScalingList> {
        if !sps.scaling_list_enabled_flag {
            return None;
        }
        self.scaling_list.as_ref().or(sps.scaling_list.as_ref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tile_spacing() {
        assert_eq!(uniform(10, 3), vec![3, 3, 4]);
        assert_eq!(uniform(34, 1), vec![34]);
        assert_eq!(explicit(10, &[1, 4]).unwrap(), vec![2, 5, 3]);
        assert!(explicit(10, &[4, 4]).is_err());
    }
}
