//! Sequence parameter set (7.3.2.1.1) with VUI (E.1.1).

use crate::codec::bitstream::BitReader;

use super::scaling::{parse_scaling_matrix, Fallback, ScalingMatrix};
use super::H264Error;

/// The largest picture reel accepts, in macroblocks per side (8192 pixels):
/// beyond every level limit, and small enough that sizes never overflow.
const MAX_MBS_PER_SIDE: u32 = 512;

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Hrd {
    pub cpb_cnt_minus1: u32,
    pub initial_cpb_removal_delay_length_minus1: u32,
    pub cpb_removal_delay_length_minus1: u32,
    pub dpb_output_delay_length_minus1: u32,
    pub time_offset_length: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Vui {
    /// (sar_width, sar_height); None when unspecified.
    pub sample_aspect_ratio: Option<(u32, u32)>,
    pub video_full_range_flag: bool,
    pub colour_primaries: u32,
    pub transfer_characteristics: u32,
    pub matrix_coefficients: u32,
    pub num_units_in_tick: u32,
    pub time_scale: u32,
    pub fixed_frame_rate_flag: bool,
    pub nal_hrd: Option<Hrd>,
    pub vcl_hrd: Option<Hrd>,
    pub pic_struct_present_flag: bool,
    pub bitstream_restriction_flag: bool,
    pub max_num_reorder_frames: u32,
    pub max_dec_frame_buffering: u32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sps {
    pub profile_idc: u8,
    /// constraint_set0_flag in bit 0 ... constraint_set5_flag in bit 5.
    pub constraint_set_flags: u8,
    pub level_idc: u8,
    pub seq_parameter_set_id: u8,
    pub chroma_format_idc: u8,
    pub separate_colour_plane_flag: bool,
    pub bit_depth_luma_minus8: u8,
    pub bit_depth_chroma_minus8: u8,
    pub qpprime_y_zero_transform_bypass_flag: bool,
    pub seq_scaling_matrix_present_flag: bool,
    /// Flat when not present; rule A applied otherwise.
    pub scaling_matrix: ScalingMatrix,
    pub log2_max_frame_num_minus4: u8,
    pub pic_order_cnt_type: u8,
    pub log2_max_pic_order_cnt_lsb_minus4: u8,
    pub delta_pic_order_always_zero_flag: bool,
    pub offset_for_non_ref_pic: i32,
    pub offset_for_top_to_bottom_field: i32,
    pub offset_for_ref_frame: Vec<i32>,
    pub max_num_ref_frames: u8,
    pub gaps_in_frame_num_value_allowed_flag: bool,
    pub pic_width_in_mbs_minus1: u16,
    pub pic_height_in_map_units_minus1: u16,
    pub frame_mbs_only_flag: bool,
    pub mb_adaptive_frame_field_flag: bool,
    pub direct_8x8_inference_flag: bool,
    /// (left, right, top, bottom) in crop units (7-19..7-22).
    pub frame_crop_offsets: Option<(u32, u32, u32, u32)>,
    pub vui: Option<Vui>,
}

fn has_chroma_info(profile_idc: u8) -> bool {
    matches!(
        profile_idc,
        100 | 110 | 122 | 244 | 44 | 83 | 86 | 118 | 128 | 138 | 139 | 134 | 135
    )
}

impl Sps {
    /// Parses an SPS from its RBSP (NAL header byte included).
    pub fn parse(r: &mut BitReader) -> Result<Self, H264Error> {
        let profile_idc = r.u(8, "profile_idc")? as u8;
        let mut constraint_set_flags = 0u8;
        const CONSTRAINT_NAMES: [&str; 6] = [
            "constraint_set0_flag",
            "constraint_set1_flag",
            "constraint_set2_flag",
            "constraint_set3_flag",
            "constraint_set4_flag",
            "constraint_set5_flag",
        ];
        for (i, name) in CONSTRAINT_NAMES.iter().enumerate() {
            if r.flag(name)? {
                constraint_set_flags |= 1 << i;
            }
        }
        r.u(2, "reserved_zero_2bits")?;
        let level_idc = r.u(8, "level_idc")? as u8;
        let seq_parameter_set_id = r.ue_max("seq_parameter_set_id", 31)? as u8;

        let mut sps = Sps {
            profile_idc,
            constraint_set_flags,
            level_idc,
            seq_parameter_set_id,
            chroma_format_idc: 1,
            separate_colour_plane_flag: false,
            bit_depth_luma_minus8: 0,
            bit_depth_chroma_minus8: 0,
            qpprime_y_zero_transform_bypass_flag: false,
            seq_scaling_matrix_present_flag: false,
            scaling_matrix: ScalingMatrix::flat(),
            log2_max_frame_num_minus4: 0,
            pic_order_cnt_type: 0,
            log2_max_pic_order_cnt_lsb_minus4: 0,
            delta_pic_order_always_zero_flag: false,
            offset_for_non_ref_pic: 0,
            offset_for_top_to_bottom_field: 0,
            offset_for_ref_frame: Vec::new(),
            max_num_ref_frames: 0,
            gaps_in_frame_num_value_allowed_flag: false,
            pic_width_in_mbs_minus1: 0,
            pic_height_in_map_units_minus1: 0,
            frame_mbs_only_flag: true,
            mb_adaptive_frame_field_flag: false,
            direct_8x8_inference_flag: false,
            frame_crop_offsets: None,
            vui: None,
        };

        if has_chroma_info(profile_idc) {
            sps.chroma_format_idc = r.ue_max("chroma_format_idc", 3)? as u8;
            if sps.chroma_format_idc == 3 {
                sps.separate_colour_plane_flag = r.flag("separate_colour_plane_flag")?;
            }
            sps.bit_depth_luma_minus8 = r.ue_max("bit_depth_luma_minus8", 6)? as u8;
            sps.bit_depth_chroma_minus8 = r.ue_max("bit_depth_chroma_minus8", 6)? as u8;
            sps.qpprime_y_zero_transform_bypass_flag =
                r.flag("qpprime_y_zero_transform_bypass_flag")?;
            sps.seq_scaling_matrix_present_flag = r.flag("seq_scaling_matrix_present_flag")?;
            if sps.seq_scaling_matrix_present_flag {
                let count = if sps.chroma_format_idc != 3 { 8 } else { 12 };
                sps.scaling_matrix = parse_scaling_matrix(
                    r,
                    count,
                    "seq_scaling_list_present_flag",
                    Fallback::RuleA,
                )?;
            }
        }

        sps.log2_max_frame_num_minus4 = r.ue_max("log2_max_frame_num_minus4", 12)? as u8;
        sps.pic_order_cnt_type = r.ue_max("pic_order_cnt_type", 2)? as u8;
        match sps.pic_order_cnt_type {
            0 => {
                sps.log2_max_pic_order_cnt_lsb_minus4 =
                    r.ue_max("log2_max_pic_order_cnt_lsb_minus4", 12)? as u8;
            }
            1 => {
                sps.delta_pic_order_always_zero_flag =
                    r.flag("delta_pic_order_always_zero_flag")?;
                sps.offset_for_non_ref_pic = r.se("offset_for_non_ref_pic")?;
                sps.offset_for_top_to_bottom_field = r.se("offset_for_top_to_bottom_field")?;
                let n = r.ue_max("num_ref_frames_in_pic_order_cnt_cycle", 255)?;
                for _ in 0..n {
                    sps.offset_for_ref_frame.push(r.se("offset_for_ref_frame")?);
                }
            }
            _ => {}
        }
        sps.max_num_ref_frames = r.ue_max("max_num_ref_frames", 16)? as u8;
        sps.gaps_in_frame_num_value_allowed_flag = r.flag("gaps_in_frame_num_allowed_flag")?;
        sps.pic_width_in_mbs_minus1 =
            r.ue_max("pic_width_in_mbs_minus1", MAX_MBS_PER_SIDE - 1)? as u16;
        sps.pic_height_in_map_units_minus1 =
            r.ue_max("pic_height_in_map_units_minus1", MAX_MBS_PER_SIDE - 1)? as u16;
        sps.frame_mbs_only_flag = r.flag("frame_mbs_only_flag")?;
        if !sps.frame_mbs_only_flag {
            sps.mb_adaptive_frame_field_flag = r.flag("mb_adaptive_frame_field_flag")?;
        }
        sps.direct_8x8_inference_flag = r.flag("direct_8x8_inference_flag")?;
        if r.flag("frame_cropping_flag")? {
            let left = r.ue("frame_crop_left_offset")?;
            let right = r.ue("frame_crop_right_offset")?;
            let top = r.ue("frame_crop_top_offset")?;
            let bottom = r.ue("frame_crop_bottom_offset")?;
            sps.frame_crop_offsets = Some((left, right, top, bottom));
        }
        if r.flag("vui_parameters_present_flag")? {
            sps.vui = Some(parse_vui(r)?);
        }
        // Validated last so the check sees every field it depends on.
        sps.visible_rect()?;
        Ok(sps)
    }

    pub fn max_frame_num(&self) -> u32 {
        1 << (self.log2_max_frame_num_minus4 + 4)
    }

    pub fn max_pic_order_cnt_lsb(&self) -> u32 {
        1 << (self.log2_max_pic_order_cnt_lsb_minus4 + 4)
    }

    /// ChromaArrayType (7.4.2.1.1).
    pub fn chroma_array_type(&self) -> u8 {
        if self.separate_colour_plane_flag {
            0
        } else {
            self.chroma_format_idc
        }
    }

    pub fn width_in_mbs(&self) -> u32 {
        u32::from(self.pic_width_in_mbs_minus1) + 1
    }

    /// FrameHeightInMbs (7-18).
    pub fn frame_height_in_mbs(&self) -> u32 {
        let map_units = u32::from(self.pic_height_in_map_units_minus1) + 1;
        if self.frame_mbs_only_flag {
            map_units
        } else {
            map_units * 2
        }
    }

    /// Coded size in pixels.
    pub fn coded_size(&self) -> (u32, u32) {
        (self.width_in_mbs() * 16, self.frame_height_in_mbs() * 16)
    }

    /// The visible rectangle (x, y, width, height) after frame cropping.
    pub fn visible_rect(&self) -> Result<(u32, u32, u32, u32), H264Error> {
        let (w, h) = self.coded_size();
        let Some((left, right, top, bottom)) = self.frame_crop_offsets else {
            return Ok((0, 0, w, h));
        };
        // CropUnitX/Y (7-19, 7-20).
        let (sub_w, sub_h) = match self.chroma_array_type() {
            1 => (2, 2),
            2 => (2, 1),
            _ => (1, 1),
        };
        let (unit_x, unit_y) = if self.chroma_array_type() == 0 {
            (1, 2 - u32::from(self.frame_mbs_only_flag))
        } else {
            (sub_w, sub_h * (2 - u32::from(self.frame_mbs_only_flag)))
        };
        let x = u64::from(left) * unit_x;
        let crop_w = (u64::from(left) + u64::from(right)) * unit_x;
        let y = u64::from(top) * u64::from(unit_y);
        let crop_h = (u64::from(top) + u64::from(bottom)) * u64::from(unit_y);
        if crop_w >= u64::from(w) || crop_h >= u64::from(h) {
            return Err(H264Error::Invalid(
                "frame cropping removes the whole picture",
            ));
        }
        Ok((x as u32, y as u32, w - crop_w as u32, h - crop_h as u32))
    }

    /// MaxDpbFrames (A.3.1 item h, A.3.2 item f), overridden by the VUI's
    /// max_dec_frame_buffering when present.
    pub fn max_dpb_frames(&self) -> usize {
        let max_dpb_mbs: u32 = match self.level_idc {
            9 => 396,
            10 => 396,
            11 if self.constraint_set_flags & 8 != 0 && self.profile_idc != 100 => 396,
            11 => 900,
            12 | 13 | 20 => 2376,
            21 => 4752,
            22 | 30 => 8100,
            31 => 18000,
            32 => 20480,
            40 | 41 => 32768,
            42 => 34816,
            50 => 110400,
            51 | 52 => 184320,
            _ => 696320,
        };
        let frame_mbs = self.width_in_mbs() * self.frame_height_in_mbs();
        let from_level = (max_dpb_mbs / frame_mbs.max(1)).clamp(1, 16) as usize;
        let size = match &self.vui {
            Some(v) if v.bitstream_restriction_flag => v.max_dec_frame_buffering as usize,
            _ => from_level,
        };
        // A stream that promises less than it references still needs room.
        size.max(usize::from(self.max_num_ref_frames)).clamp(1, 16)
    }

    /// How many frames may precede another in decoding order and follow it
    /// in output order: the VUI value, or 0 for intra-only profiles, or the
    /// whole DPB.
    pub fn max_num_reorder_frames(&self) -> usize {
        match &self.vui {
            Some(v) if v.bitstream_restriction_flag => {
                (v.max_num_reorder_frames as usize).min(self.max_dpb_frames())
            }
            _ if matches!(self.profile_idc, 44 | 86 | 100 | 110 | 122 | 244)
                && self.constraint_set_flags & 8 != 0 =>
            {
                0
            }
            _ => self.max_dpb_frames(),
        }
    }
}

fn parse_hrd(r: &mut BitReader) -> Result<Hrd, H264Error> {
    let cpb_cnt_minus1 = r.ue_max("cpb_cnt_minus1", 31)?;
    r.u(4, "bit_rate_scale")?;
    r.u(4, "cpb_size_scale")?;
    for _ in 0..=cpb_cnt_minus1 {
        r.ue("bit_rate_value_minus1")?;
        r.ue("cpb_size_value_minus1")?;
        r.flag("cbr_flag")?;
    }
    Ok(Hrd {
        cpb_cnt_minus1,
        initial_cpb_removal_delay_length_minus1: r
            .u(5, "initial_cpb_removal_delay_length_minus1")?,
        cpb_removal_delay_length_minus1: r.u(5, "cpb_removal_delay_length_minus1")?,
        dpb_output_delay_length_minus1: r.u(5, "dpb_output_delay_length_minus1")?,
        time_offset_length: r.u(5, "time_offset_length")?,
    })
}

fn parse_vui(r: &mut BitReader) -> Result<Vui, H264Error> {
    let mut vui = Vui {
        colour_primaries: 2,
        transfer_characteristics: 2,
        matrix_coefficients: 2,
        ..Vui::default()
    };
    if r.flag("aspect_ratio_info_present_flag")? {
        let idc = r.u(8, "aspect_ratio_idc")?;
        let (w, h) = if idc == crate::codec::vui::EXTENDED_SAR {
            (r.u(16, "sar_width")?, r.u(16, "sar_height")?)
        } else {
            (0, 0)
        };
        vui.sample_aspect_ratio = crate::codec::vui::sample_aspect_ratio(idc, w, h);
    }
    if r.flag("overscan_info_present_flag")? {
        r.flag("overscan_appropriate_flag")?;
    }
    if r.flag("video_signal_type_present_flag")? {
        r.u(3, "video_format")?;
        vui.video_full_range_flag = r.flag("video_full_range_flag")?;
        if r.flag("colour_description_present_flag")? {
            vui.colour_primaries = r.u(8, "colour_primaries")?;
            vui.transfer_characteristics = r.u(8, "transfer_characteristics")?;
            vui.matrix_coefficients = r.u(8, "matrix_coefficients")?;
        }
    }
    if r.flag("chroma_loc_info_present_flag")? {
        r.ue_max("chroma_sample_loc_type_top_field", 5)?;
        r.ue_max("chroma_sample_loc_type_bottom_field", 5)?;
    }
    if r.flag("timing_info_present_flag")? {
        vui.num_units_in_tick = r.u(32, "num_units_in_tick")?;
        vui.time_scale = r.u(32, "time_scale")?;
        vui.fixed_frame_rate_flag = r.flag("fixed_frame_rate_flag")?;
    }
    if r.flag("nal_hrd_parameters_present_flag")? {
        vui.nal_hrd = Some(parse_hrd(r)?);
    }
    if r.flag("vcl_hrd_parameters_present_flag")? {
        vui.vcl_hrd = Some(parse_hrd(r)?);
    }
    if vui.nal_hrd.is_some() || vui.vcl_hrd.is_some() {
        r.flag("low_delay_hrd_flag")?;
    }
    vui.pic_struct_present_flag = r.flag("pic_struct_present_flag")?;
    vui.bitstream_restriction_flag = r.flag("bitstream_restriction_flag")?;
    if vui.bitstream_restriction_flag {
        r.flag("motion_vectors_over_pic_boundaries_flag")?;
        r.ue_max("max_bytes_per_pic_denom", 16)?;
        r.ue_max("max_bits_per_mb_denom", 16)?;
        r.ue_max("log2_max_mv_length_horizontal", 16)?;
        r.ue_max("log2_max_mv_length_vertical", 16)?;
        vui.max_num_reorder_frames = r.ue_max("max_num_reorder_frames", 16)?;
        vui.max_dec_frame_buffering = r.ue_max("max_dec_frame_buffering", 16)?;
    }
    Ok(vui)
}

/// The first SPS of an Annex-B blob (a container's parameter sets) that
/// parses.
pub fn first_sps(parameter_sets: &[u8]) -> Option<Sps> {
    crate::codec::bitstream::annexb::nal_units(parameter_sets).find_map(|bytes| {
        let nal = super::nal::Nal::parse(bytes).ok()?;
        if nal.nal_unit_type != super::nal::nal_type::SPS {
            return None;
        }
        let mut r = nal.reader();
        r.skip(8, "nal_unit_header").ok()?;
        Sps::parse(&mut r).ok()
    })
}
