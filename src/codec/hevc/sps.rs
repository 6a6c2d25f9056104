//! Sequence parameter set (7.3.2.2, 7.4.3.2) with its range extension
//! (7.3.2.2.2); multilayer, 3D and screen content extensions are refused.

use super::ptl::ProfileTierLevel;
use super::rps::StRefPicSet;
use super::scaling::ScalingList;
use super::vps::SubLayerOrdering;
use super::vui::Vui;

/// sps_range_extension() (7.3.2.2.2); all false when absent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SpsRangeExtension {
    pub transform_skip_rotation_enabled_flag: bool,
    pub transform_skip_context_enabled_flag: bool,
    pub implicit_rdpcm_enabled_flag: bool,
    pub explicit_rdpcm_enabled_flag: bool,
    pub extended_precision_processing_flag: bool,
    pub intra_smoothing_disabled_flag: bool,
    pub high_precision_offsets_enabled_flag: bool,
    pub persistent_rice_adaptation_enabled_flag: bool,
    pub cabac_bypass_alignment_enabled_flag: bool,
}

/// One candidate long-term reference picture of the SPS.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LtRefPicSps {
    pub lt_ref_pic_poc_lsb_sps: u16,
    pub used_by_curr_pic_lt_sps_flag: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sps {
    pub sps_video_parameter_set_id: u8,
    /// 0..=6.
    pub sps_max_sub_layers_minus1: u8,
    pub sps_temporal_id_nesting_flag: bool,
    pub profile_tier_level: ProfileTierLevel,
    /// 0..=15.
    pub sps_seq_parameter_set_id: u8,
    /// 0 (monochrome) ..= 3 (4:4:4).
    pub chroma_format_idc: u8,
    pub separate_colour_plane_flag: bool,
    /// A multiple of MinCbSizeY, at most 16888 (8 × level 6.2's MaxLumaPs,
    /// square-rooted).
    pub pic_width_in_luma_samples: u32,
    pub pic_height_in_luma_samples: u32,
    pub conformance_window_flag: bool,
    /// In chroma sample units (SubWidthC / SubHeightC luma samples).
    pub conf_win_left_offset: u32,
    pub conf_win_right_offset: u32,
    pub conf_win_top_offset: u32,
    pub conf_win_bottom_offset: u32,
    /// 0..=8.
    pub bit_depth_luma_minus8: u8,
    pub bit_depth_chroma_minus8: u8,
    /// 0..=12.
    pub log2_max_pic_order_cnt_lsb_minus4: u8,
    pub sps_sub_layer_ordering_info_present_flag: bool,
    /// sps_max_dec_pic_buffering_minus1 / sps_max_num_reorder_pics /
    /// sps_max_latency_increase_plus1 per sub-layer (inferred ones filled).
    pub sub_layer_ordering: Vec<SubLayerOrdering>,
    pub log2_min_luma_coding_block_size_minus3: u8,
    pub log2_diff_max_min_luma_coding_block_size: u8,
    pub log2_min_luma_transform_block_size_minus2: u8,
    pub log2_diff_max_min_luma_transform_block_size: u8,
    pub max_transform_hierarchy_depth_inter: u8,
    pub max_transform_hierarchy_depth_intra: u8,
    pub scaling_list_enabled_flag: bool,
    pub sps_scaling_list_data_present_flag: bool,
    /// The lists when scaling_list_enabled_flag: the coded ones, or the
    /// defaults (Table 7-6) when sps_scaling_list_data_present_flag is 0.
    pub scaling_list: Option<ScalingList>,
    pub amp_enabled_flag: bool,
    pub sample_adaptive_offset_enabled_flag: bool,
    pub pcm_enabled_flag: bool,
    pub pcm_sample_bit_depth_luma_minus1: u8,
    pub pcm_sample_bit_depth_chroma_minus1: u8,
    pub log2_min_pcm_luma_coding_block_size_minus3: u8,
    pub log2_diff_max_min_pcm_luma_coding_block_size: u8,
    pub pcm_loop_filter_disabled_flag: bool,
    /// num_short_term_ref_pic_sets (0..=64) sets, derived (7.4.8).
    pub st_ref_pic_sets: Vec<StRefPicSet>,
    pub long_term_ref_pics_present_flag: bool,
    /// num_long_term_ref_pics_sps (0..=32) candidates.
    pub lt_ref_pics: Vec<LtRefPicSps>,
    pub sps_temporal_mvp_enabled_flag: bool,
    pub strong_intra_smoothing_enabled_flag: bool,
    pub vui_parameters_present_flag: bool,
    /// The coded VUI, or the inferred values when absent.
    pub vui: Vui,
    pub sps_extension_present_flag: bool,
    pub sps_range_extension_flag: bool,
    pub sps_multilayer_extension_flag: bool,
    pub sps_3d_extension_flag: bool,
    pub sps_scc_extension_flag: bool,
    pub sps_extension_4bits: u8,
    pub range_extension: SpsRangeExtension,
}
