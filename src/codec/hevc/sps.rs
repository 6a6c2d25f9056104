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
    /// The extension flags: which extensions follow.
    pub extensions: ExtensionFlags,
    pub range_extension: SpsRangeExtension,
}

use crate::codec::bitstream::BitReader;

use super::extensions::{ExtensionFlags, ParameterSet};

use super::vps::parse_sub_layer_ordering;
use super::HevcError;

/// The largest picture side: sqrt(8 × MaxLumaPs) of level 6.2 (A.4.1).
pub const MAX_PICTURE_SIDE: u32 = 16888;

/// Ceil(Log2(n)) for n >= 1: the bit size of an index below n.
pub(crate) fn ceil_log2(n: u32) -> u32 {
    32 - n.saturating_sub(1).leading_zeros()
}

impl SpsRangeExtension {
    fn parse(r: &mut BitReader) -> Result<Self, HevcError> {
        Ok(Self {
            transform_skip_rotation_enabled_flag: r.flag("transform_skip_rotation_enabled_flag")?,
            transform_skip_context_enabled_flag: r.flag("transform_skip_context_enabled_flag")?,
            implicit_rdpcm_enabled_flag: r.flag("implicit_rdpcm_enabled_flag")?,
            explicit_rdpcm_enabled_flag: r.flag("explicit_rdpcm_enabled_flag")?,
            extended_precision_processing_flag: r.flag("extended_precision_processing_flag")?,
            intra_smoothing_disabled_flag: r.flag("intra_smoothing_disabled_flag")?,
            high_precision_offsets_enabled_flag: r.flag("high_precision_offsets_enabled_flag")?,
            persistent_rice_adaptation_enabled_flag: r
                .flag("persistent_rice_adaptation_enabled_flag")?,
            cabac_bypass_alignment_enabled_flag: r.flag("cabac_bypass_alignment_enabled_flag")?,
        })
    }
}

impl Sps {
    /// Parses an SPS from its RBSP, the reader just past the NAL header.
    pub fn parse(r: &mut BitReader) -> Result<Self, HevcError> {
        let sps_video_parameter_set_id = r.u(4, "sps_video_parameter_set_id")? as u8;
        let sps_max_sub_layers_minus1 = r.u(3, "sps_max_sub_layers_minus1")? as u8;
        if sps_max_sub_layers_minus1 > 6 {
            return Err(HevcError::Invalid("sps_max_sub_layers_minus1 is 7"));
        }
        let sps_temporal_id_nesting_flag = r.flag("sps_temporal_id_nesting_flag")?;
        let profile_tier_level = ProfileTierLevel::parse(r, sps_max_sub_layers_minus1)?;
        let sps_seq_parameter_set_id = r.ue_max("sps_seq_parameter_set_id", 15)? as u8;
        let chroma_format_idc = r.ue_max("chroma_format_idc", 3)? as u8;
        let separate_colour_plane_flag =
            chroma_format_idc == 3 && r.flag("separate_colour_plane_flag")?;
        let width = r.ue_max("pic_width_in_luma_samples", MAX_PICTURE_SIDE)?;
        let height = r.ue_max("pic_height_in_luma_samples", MAX_PICTURE_SIDE)?;
        if width == 0 || height == 0 {
            return Err(HevcError::Invalid("the picture is empty"));
        }
        let mut s = Sps {
            sps_video_parameter_set_id,
            sps_max_sub_layers_minus1,
            sps_temporal_id_nesting_flag,
            profile_tier_level,
            sps_seq_parameter_set_id,
            chroma_format_idc,
            separate_colour_plane_flag,
            pic_width_in_luma_samples: width,
            pic_height_in_luma_samples: height,
            conformance_window_flag: r.flag("conformance_window_flag")?,
            conf_win_left_offset: 0,
            conf_win_right_offset: 0,
            conf_win_top_offset: 0,
            conf_win_bottom_offset: 0,
            bit_depth_luma_minus8: 0,
            bit_depth_chroma_minus8: 0,
            log2_max_pic_order_cnt_lsb_minus4: 0,
            sps_sub_layer_ordering_info_present_flag: false,
            sub_layer_ordering: Vec::new(),
            log2_min_luma_coding_block_size_minus3: 0,
            log2_diff_max_min_luma_coding_block_size: 0,
            log2_min_luma_transform_block_size_minus2: 0,
            log2_diff_max_min_luma_transform_block_size: 0,
            max_transform_hierarchy_depth_inter: 0,
            max_transform_hierarchy_depth_intra: 0,
            scaling_list_enabled_flag: false,
            sps_scaling_list_data_present_flag: false,
            scaling_list: None,
            amp_enabled_flag: false,
            sample_adaptive_offset_enabled_flag: false,
            pcm_enabled_flag: false,
            pcm_sample_bit_depth_luma_minus1: 0,
            pcm_sample_bit_depth_chroma_minus1: 0,
            log2_min_pcm_luma_coding_block_size_minus3: 0,
            log2_diff_max_min_pcm_luma_coding_block_size: 0,
            pcm_loop_filter_disabled_flag: false,
            st_ref_pic_sets: Vec::new(),
            long_term_ref_pics_present_flag: false,
            lt_ref_pics: Vec::new(),
            sps_temporal_mvp_enabled_flag: false,
            strong_intra_smoothing_enabled_flag: false,
            vui_parameters_present_flag: false,
            vui: Vui::default(),
            extensions: ExtensionFlags::default(),
            range_extension: SpsRangeExtension::default(),
        };
        if s.conformance_window_flag {
            s.conf_win_left_offset = r.ue_max("conf_win_left_offset", width)?;
            s.conf_win_right_offset = r.ue_max("conf_win_right_offset", width)?;
            s.conf_win_top_offset = r.ue_max("conf_win_top_offset", height)?;
            s.conf_win_bottom_offset = r.ue_max("conf_win_bottom_offset", height)?;
        }
        s.bit_depth_luma_minus8 = r.ue_max("bit_depth_luma_minus8", 8)? as u8;
        s.bit_depth_chroma_minus8 = r.ue_max("bit_depth_chroma_minus8", 8)? as u8;
        s.log2_max_pic_order_cnt_lsb_minus4 =
            r.ue_max("log2_max_pic_order_cnt_lsb_minus4", 12)? as u8;
        s.sps_sub_layer_ordering_info_present_flag =
            r.flag("sps_sub_layer_ordering_info_present_flag")?;
        s.sub_layer_ordering = parse_sub_layer_ordering(
            r,
            s.sps_sub_layer_ordering_info_present_flag,
            sps_max_sub_layers_minus1,
            [
                "sps_max_dec_pic_buffering_minus1",
                "sps_max_num_reorder_pics",
                "sps_max_latency_increase_plus1",
            ],
        )?;
        s.log2_min_luma_coding_block_size_minus3 =
            r.ue_max("log2_min_luma_coding_block_size_minus3", 3)? as u8;
        s.log2_diff_max_min_luma_coding_block_size =
            r.ue_max("log2_diff_max_min_luma_coding_block_size", 3)? as u8;
        let min_cb = s.min_cb_log2_size();
        let ctb = s.ctb_log2_size();
        if !(4..=6).contains(&ctb) {
            return Err(HevcError::Invalid("the CTB size is not 16, 32 or 64"));
        }
        if width % (1 << min_cb) != 0 || height % (1 << min_cb) != 0 {
            return Err(HevcError::Invalid(
                "the picture size is not a multiple of the minimum coding block",
            ));
        }
        // MinTbLog2SizeY < MinCbLog2SizeY, MaxTbLog2SizeY <= Min(CtbLog2SizeY, 5).
        s.log2_min_luma_transform_block_size_minus2 =
            r.ue_max("log2_min_luma_transform_block_size_minus2", min_cb - 3)? as u8;
        let min_tb = u32::from(s.log2_min_luma_transform_block_size_minus2) + 2;
        s.log2_diff_max_min_luma_transform_block_size = r.ue_max(
            "log2_diff_max_min_luma_transform_block_size",
            ctb.min(5) - min_tb,
        )? as u8;
        s.max_transform_hierarchy_depth_inter =
            r.ue_max("max_transform_hierarchy_depth_inter", ctb - min_tb)? as u8;
        s.max_transform_hierarchy_depth_intra =
            r.ue_max("max_transform_hierarchy_depth_intra", ctb - min_tb)? as u8;
        s.scaling_list_enabled_flag = r.flag("scaling_list_enabled_flag")?;
        if s.scaling_list_enabled_flag {
            s.sps_scaling_list_data_present_flag = r.flag("sps_scaling_list_data_present_flag")?;
            s.scaling_list = Some(if s.sps_scaling_list_data_present_flag {
                ScalingList::parse(r)?
            } else {
                ScalingList::default()
            });
        }
        s.amp_enabled_flag = r.flag("amp_enabled_flag")?;
        s.sample_adaptive_offset_enabled_flag = r.flag("sample_adaptive_offset_enabled_flag")?;
        s.pcm_enabled_flag = r.flag("pcm_enabled_flag")?;
        if s.pcm_enabled_flag {
            s.pcm_sample_bit_depth_luma_minus1 = r.u(4, "pcm_sample_bit_depth_luma_minus1")? as u8;
            s.pcm_sample_bit_depth_chroma_minus1 =
                r.u(4, "pcm_sample_bit_depth_chroma_minus1")? as u8;
            if s.pcm_sample_bit_depth_luma_minus1 >= s.bit_depth_luma()
                || s.pcm_sample_bit_depth_chroma_minus1 >= s.bit_depth_chroma()
            {
                return Err(HevcError::Invalid("PCM samples deeper than the picture's"));
            }
            // Log2MinIpcmCbSizeY in Min(MinCbLog2SizeY, 5)..=Min(CtbLog2SizeY, 5).
            let min_pcm =
                r.ue_max("log2_min_pcm_luma_coding_block_size_minus3", ctb.min(5) - 3)? + 3;
            if min_pcm < min_cb.min(5) {
                return Err(HevcError::Invalid("PCM blocks smaller than coding blocks"));
            }
            s.log2_min_pcm_luma_coding_block_size_minus3 = (min_pcm - 3) as u8;
            s.log2_diff_max_min_pcm_luma_coding_block_size = r.ue_max(
                "log2_diff_max_min_pcm_luma_coding_block_size",
                ctb.min(5) - min_pcm,
            )? as u8;
            s.pcm_loop_filter_disabled_flag = r.flag("pcm_loop_filter_disabled_flag")?;
        }
        let num_sets = r.ue_max("num_short_term_ref_pic_sets", 64)? as usize;
        for i in 0..num_sets {
            let set = StRefPicSet::parse(r, i, num_sets, &s.st_ref_pic_sets)?;
            s.st_ref_pic_sets.push(set);
        }
        s.long_term_ref_pics_present_flag = r.flag("long_term_ref_pics_present_flag")?;
        if s.long_term_ref_pics_present_flag {
            let count = r.ue_max("num_long_term_ref_pics_sps", 32)?;
            let bits = s.log2_max_pic_order_cnt_lsb();
            for _ in 0..count {
                s.lt_ref_pics.push(LtRefPicSps {
                    lt_ref_pic_poc_lsb_sps: r.u(bits, "lt_ref_pic_poc_lsb_sps")? as u16,
                    used_by_curr_pic_lt_sps_flag: r.flag("used_by_curr_pic_lt_sps_flag")?,
                });
            }
        }
        s.sps_temporal_mvp_enabled_flag = r.flag("sps_temporal_mvp_enabled_flag")?;
        s.strong_intra_smoothing_enabled_flag = r.flag("strong_intra_smoothing_enabled_flag")?;
        s.vui_parameters_present_flag = r.flag("vui_parameters_present_flag")?;
        if s.vui_parameters_present_flag {
            s.vui = Vui::parse(r, sps_max_sub_layers_minus1)?;
        }
        s.extensions = ExtensionFlags::parse(r, ParameterSet::Sps)?;
        if s.extensions.range {
            s.range_extension = SpsRangeExtension::parse(r)?;
        }
        s.extensions.check_supported(ParameterSet::Sps)?;
        // sps_extension_data_flag bits (sps_extension_4bits) carry nothing
        // this version of the standard defines: ignored.
        s.visible_rect()?;
        Ok(s)
    }

    /// ChromaArrayType (7.4.3.2.1).
    pub fn chroma_array_type(&self) -> u8 {
        if self.separate_colour_plane_flag {
            0
        } else {
            self.chroma_format_idc
        }
    }

    /// (SubWidthC, SubHeightC) (Table 6-1).
    pub fn chroma_subsampling(&self) -> (u32, u32) {
        match self.chroma_array_type() {
            1 => (2, 2),
            2 => (2, 1),
            _ => (1, 1),
        }
    }

    /// BitDepthY (7-4).
    pub fn bit_depth_luma(&self) -> u8 {
        self.bit_depth_luma_minus8 + 8
    }

    /// BitDepthC (7-6).
    pub fn bit_depth_chroma(&self) -> u8 {
        self.bit_depth_chroma_minus8 + 8
    }

    pub fn log2_max_pic_order_cnt_lsb(&self) -> u32 {
        u32::from(self.log2_max_pic_order_cnt_lsb_minus4) + 4
    }

    /// MaxPicOrderCntLsb (7-8).
    pub fn max_pic_order_cnt_lsb(&self) -> u32 {
        1 << self.log2_max_pic_order_cnt_lsb()
    }

    /// MinCbLog2SizeY (7-10).
    pub fn min_cb_log2_size(&self) -> u32 {
        u32::from(self.log2_min_luma_coding_block_size_minus3) + 3
    }

    /// CtbLog2SizeY (7-11).
    pub fn ctb_log2_size(&self) -> u32 {
        self.min_cb_log2_size() + u32::from(self.log2_diff_max_min_luma_coding_block_size)
    }

    /// PicWidthInCtbsY (7-15).
    pub fn pic_width_in_ctbs(&self) -> u32 {
        self.pic_width_in_luma_samples
            .div_ceil(1 << self.ctb_log2_size())
    }

    /// PicHeightInCtbsY (7-17).
    pub fn pic_height_in_ctbs(&self) -> u32 {
        self.pic_height_in_luma_samples
            .div_ceil(1 << self.ctb_log2_size())
    }

    /// PicSizeInCtbsY (7-19).
    pub fn pic_size_in_ctbs(&self) -> u32 {
        self.pic_width_in_ctbs() * self.pic_height_in_ctbs()
    }

    /// The sub-layer ordering of the highest sub-layer (HighestTid): what
    /// sizes the DPB and bounds reordering when all sub-layers are decoded.
    pub fn highest_ordering(&self) -> SubLayerOrdering {
        self.sub_layer_ordering.last().copied().unwrap_or_default()
    }

    /// The conformance cropping window as (x, y, width, height) in luma
    /// samples; an error when it removes the whole picture.
    pub fn visible_rect(&self) -> Result<(u32, u32, u32, u32), HevcError> {
        let (w, h) = (
            self.pic_width_in_luma_samples,
            self.pic_height_in_luma_samples,
        );
        let (sub_w, sub_h) = self.chroma_subsampling();
        let x = u64::from(self.conf_win_left_offset) * u64::from(sub_w);
        let y = u64::from(self.conf_win_top_offset) * u64::from(sub_h);
        let crop_w =
            u64::from(self.conf_win_left_offset + self.conf_win_right_offset) * u64::from(sub_w);
        let crop_h =
            u64::from(self.conf_win_top_offset + self.conf_win_bottom_offset) * u64::from(sub_h);
        if crop_w >= u64::from(w) || crop_h >= u64::from(h) {
            return Err(HevcError::Invalid(
                "the conformance window removes the whole picture",
            ));
        }
        Ok((x as u32, y as u32, w - crop_w as u32, h - crop_h as u32))
    }
}
