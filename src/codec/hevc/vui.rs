//! VUI parameters (E.2.1, E.3.1): sample aspect ratio, colour description,
//! default display window, timing, bitstream restrictions.

use super::hrd::HrdParameters;

/// vui_parameters() with the inferred values of absent elements.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vui {
    pub aspect_ratio_info_present_flag: bool,
    /// 0 (unspecified) when absent; 255 is EXTENDED_SAR.
    pub aspect_ratio_idc: u8,
    pub sar_width: u16,
    pub sar_height: u16,
    pub overscan_info_present_flag: bool,
    pub overscan_appropriate_flag: bool,
    pub video_signal_type_present_flag: bool,
    /// 5 (unspecified) when absent.
    pub video_format: u8,
    pub video_full_range_flag: bool,
    pub colour_description_present_flag: bool,
    /// 2 (unspecified) when absent, as the next two.
    pub colour_primaries: u8,
    pub transfer_characteristics: u8,
    pub matrix_coeffs: u8,
    pub chroma_loc_info_present_flag: bool,
    pub chroma_sample_loc_type_top_field: u8,
    pub chroma_sample_loc_type_bottom_field: u8,
    pub neutral_chroma_indication_flag: bool,
    pub field_seq_flag: bool,
    pub frame_field_info_present_flag: bool,
    pub default_display_window_flag: bool,
    pub def_disp_win_left_offset: u32,
    pub def_disp_win_right_offset: u32,
    pub def_disp_win_top_offset: u32,
    pub def_disp_win_bottom_offset: u32,
    pub vui_timing_info_present_flag: bool,
    pub vui_num_units_in_tick: u32,
    pub vui_time_scale: u32,
    pub vui_poc_proportional_to_timing_flag: bool,
    pub vui_num_ticks_poc_diff_one_minus1: u32,
    pub vui_hrd_parameters_present_flag: bool,
    pub hrd_parameters: Option<HrdParameters>,
    pub bitstream_restriction_flag: bool,
    pub tiles_fixed_structure_flag: bool,
    /// 1 when absent.
    pub motion_vectors_over_pic_boundaries_flag: bool,
    pub restricted_ref_pic_lists_flag: bool,
    pub min_spatial_segmentation_idc: u16,
    /// 2 when absent.
    pub max_bytes_per_pic_denom: u8,
    /// 1 when absent.
    pub max_bits_per_min_cu_denom: u8,
    /// 15 when absent, as the next one.
    pub log2_max_mv_length_horizontal: u8,
    pub log2_max_mv_length_vertical: u8,
}

impl Default for Vui {
    /// The values E.3.1 infers when vui_parameters() is absent.
    fn default() -> Self {
        Self {
            aspect_ratio_info_present_flag: false,
            aspect_ratio_idc: 0,
            sar_width: 0,
            sar_height: 0,
            overscan_info_present_flag: false,
            overscan_appropriate_flag: false,
            video_signal_type_present_flag: false,
            video_format: 5,
            video_full_range_flag: false,
            colour_description_present_flag: false,
            colour_primaries: 2,
            transfer_characteristics: 2,
            matrix_coeffs: 2,
            chroma_loc_info_present_flag: false,
            chroma_sample_loc_type_top_field: 0,
            chroma_sample_loc_type_bottom_field: 0,
            neutral_chroma_indication_flag: false,
            field_seq_flag: false,
            frame_field_info_present_flag: false,
            default_display_window_flag: false,
            def_disp_win_left_offset: 0,
            def_disp_win_right_offset: 0,
            def_disp_win_top_offset: 0,
            def_disp_win_bottom_offset: 0,
            vui_timing_info_present_flag: false,
            vui_num_units_in_tick: 0,
            vui_time_scale: 0,
            vui_poc_proportional_to_timing_flag: false,
            vui_num_ticks_poc_diff_one_minus1: 0,
            vui_hrd_parameters_present_flag: false,
            hrd_parameters: None,
            bitstream_restriction_flag: false,
            tiles_fixed_structure_flag: false,
            motion_vectors_over_pic_boundaries_flag: true,
            restricted_ref_pic_lists_flag: false,
            min_spatial_segmentation_idc: 0,
            max_bytes_per_pic_denom: 2,
            max_bits_per_min_cu_denom: 1,
            log2_max_mv_length_horizontal: 15,
            log2_max_mv_length_vertical: 15,
        }
    }
}

impl Vui {
    /// The sample aspect ratio (width, height), None when unspecified.
    pub fn sample_aspect_ratio(&self) -> Option<(u32, u32)> {
        crate::codec::vui::sample_aspect_ratio(
            u32::from(self.aspect_ratio_idc),
            u32::from(self.sar_width),
            u32::from(self.sar_height),
        )
    }
}

use crate::codec::bitstream::BitReader;

use super::HevcError;

impl Vui {
    /// vui_parameters() (E.2.1) of an SPS with `sps_max_sub_layers_minus1`.
    pub fn parse(r: &mut BitReader, sps_max_sub_layers_minus1: u8) -> Result<Self, HevcError> {
        let mut v = Vui {
            aspect_ratio_info_present_flag: r.flag("aspect_ratio_info_present_flag")?,
            ..Vui::default()
        };
        if v.aspect_ratio_info_present_flag {
            v.aspect_ratio_idc = r.u(8, "aspect_ratio_idc")? as u8;
            if v.aspect_ratio_idc == 255 {
                v.sar_width = r.u(16, "sar_width")? as u16;
                v.sar_height = r.u(16, "sar_height")? as u16;
            }
        }
        v.overscan_info_present_flag = r.flag("overscan_info_present_flag")?;
        if v.overscan_info_present_flag {
            v.overscan_appropriate_flag = r.flag("overscan_appropriate_flag")?;
        }
        v.video_signal_type_present_flag = r.flag("video_signal_type_present_flag")?;
        if v.video_signal_type_present_flag {
            v.video_format = r.u(3, "video_format")? as u8;
            v.video_full_range_flag = r.flag("video_full_range_flag")?;
            v.colour_description_present_flag = r.flag("colour_description_present_flag")?;
            if v.colour_description_present_flag {
                v.colour_primaries = r.u(8, "colour_primaries")? as u8;
                v.transfer_characteristics = r.u(8, "transfer_characteristics")? as u8;
                v.matrix_coeffs = r.u(8, "matrix_coefficients")? as u8;
            }
        }
        v.chroma_loc_info_present_flag = r.flag("chroma_loc_info_present_flag")?;
        if v.chroma_loc_info_present_flag {
            v.chroma_sample_loc_type_top_field =
                r.ue_max("chroma_sample_loc_type_top_field", 5)? as u8;
            v.chroma_sample_loc_type_bottom_field =
                r.ue_max("chroma_sample_loc_type_bottom_field", 5)? as u8;
        }
        v.neutral_chroma_indication_flag = r.flag("neutral_chroma_indication_flag")?;
        v.field_seq_flag = r.flag("field_seq_flag")?;
        v.frame_field_info_present_flag = r.flag("frame_field_info_present_flag")?;
        v.default_display_window_flag = r.flag("default_display_window_flag")?;
        if v.default_display_window_flag {
            v.def_disp_win_left_offset = r.ue_max("def_disp_win_left_offset", 16888)?;
            v.def_disp_win_right_offset = r.ue_max("def_disp_win_right_offset", 16888)?;
            v.def_disp_win_top_offset = r.ue_max("def_disp_win_top_offset", 16888)?;
            v.def_disp_win_bottom_offset = r.ue_max("def_disp_win_bottom_offset", 16888)?;
        }
        v.vui_timing_info_present_flag = r.flag("vui_timing_info_present_flag")?;
        if v.vui_timing_info_present_flag {
            v.vui_num_units_in_tick = r.u(32, "vui_num_units_in_tick")?;
            v.vui_time_scale = r.u(32, "vui_time_scale")?;
            v.vui_poc_proportional_to_timing_flag =
                r.flag("vui_poc_proportional_to_timing_flag")?;
            if v.vui_poc_proportional_to_timing_flag {
                v.vui_num_ticks_poc_diff_one_minus1 = r.ue("vui_num_ticks_poc_diff_one_minus1")?;
            }
            v.vui_hrd_parameters_present_flag = r.flag("vui_hrd_parameters_present_flag")?;
            if v.vui_hrd_parameters_present_flag {
                v.hrd_parameters = Some(HrdParameters::parse(
                    r,
                    true,
                    sps_max_sub_layers_minus1,
                    None,
                )?);
            }
        }
        v.bitstream_restriction_flag = r.flag("bitstream_restriction_flag")?;
        if v.bitstream_restriction_flag {
            v.tiles_fixed_structure_flag = r.flag("tiles_fixed_structure_flag")?;
            v.motion_vectors_over_pic_boundaries_flag =
                r.flag("motion_vectors_over_pic_boundaries_flag")?;
            v.restricted_ref_pic_lists_flag = r.flag("restricted_ref_pic_lists_flag")?;
            v.min_spatial_segmentation_idc = r.ue_max("min_spatial_segmentation_idc", 4095)? as u16;
            v.max_bytes_per_pic_denom = r.ue_max("max_bytes_per_pic_denom", 16)? as u8;
            v.max_bits_per_min_cu_denom = r.ue_max("max_bits_per_min_cu_denom", 16)? as u8;
            v.log2_max_mv_length_horizontal = r.ue_max("log2_max_mv_length_horizontal", 16)? as u8;
            v.log2_max_mv_length_vertical = r.ue_max("log2_max_mv_length_vertical", 16)? as u8;
        }
        Ok(v)
    }
}
