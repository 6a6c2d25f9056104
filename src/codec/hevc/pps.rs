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
    pub pps_extension_present_flag: bool,
    pub pps_range_extension_flag: bool,
    pub pps_multilayer_extension_flag: bool,
    pub pps_3d_extension_flag: bool,
    pub pps_scc_extension_flag: bool,
    pub pps_extension_4bits: u8,
    pub range_extension: PpsRangeExtension,
}
