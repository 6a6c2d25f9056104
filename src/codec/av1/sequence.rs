//! Sequence header OBU (5.5): profile, operating points, maximum frame
//! size, the coding tools the sequence may use, and its colour config.

use crate::codec::bitstream::BitReader;

use super::Av1Error;

/// `SELECT_SCREEN_CONTENT_TOOLS` / `SELECT_INTEGER_MV`: the frame header
/// chooses.
pub const SELECT: u8 = 2;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TimingInfo {
    pub num_units_in_display_tick: u32,
    pub time_scale: u32,
    pub equal_picture_interval: bool,
    pub num_ticks_per_picture_minus_1: u32,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DecoderModelInfo {
    pub buffer_delay_length_minus_1: u8,
    pub num_units_in_decoding_tick: u32,
    pub buffer_removal_time_length_minus_1: u8,
    pub frame_presentation_time_length_minus_1: u8,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OperatingPoint {
    pub operating_point_idc: u16,
    pub seq_level_idx: u8,
    pub seq_tier: u8,
    pub decoder_model_present_for_this_op: bool,
    pub decoder_buffer_delay: u32,
    pub encoder_buffer_delay: u32,
    pub low_delay_mode_flag: bool,
    pub initial_display_delay_present_for_this_op: bool,
    pub initial_display_delay_minus_1: u8,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ColorConfig {
    pub high_bitdepth: bool,
    pub twelve_bit: bool,
    /// `BitDepth`.
    pub bit_depth: u8,
    pub mono_chrome: bool,
    pub color_description_present_flag: bool,
    pub color_primaries: u8,
    pub transfer_characteristics: u8,
    pub matrix_coefficients: u8,
    pub color_range: bool,
    pub subsampling_x: bool,
    pub subsampling_y: bool,
    pub chroma_sample_position: u8,
    pub separate_uv_delta_q: bool,
}

impl ColorConfig {
    /// `NumPlanes`.
    pub fn num_planes(&self) -> usize {
        if self.mono_chrome {
            1
        } else {
            3
        }
    }

    /// color_config() (5.5.2).
    fn parse(r: &mut BitReader, seq_profile: u8) -> Result<Self, Av1Error> {
        let mut c = Self {
            high_bitdepth: r.flag("high_bitdepth")?,
            ..Self::default()
        };
        if seq_profile == 2 && c.high_bitdepth {
            c.twelve_bit = r.flag("twelve_bit")?;
            c.bit_depth = if c.twelve_bit { 12 } else { 10 };
        } else {
            c.bit_depth = if c.high_bitdepth { 10 } else { 8 };
        }
        c.mono_chrome = seq_profile != 1 && r.flag("mono_chrome")?;
        c.color_description_present_flag = r.flag("color_description_present_flag")?;
        // CP_UNSPECIFIED, TC_UNSPECIFIED, MC_UNSPECIFIED.
        (
            c.color_primaries,
            c.transfer_characteristics,
            c.matrix_coefficients,
        ) = (2, 2, 2);
        if c.color_description_present_flag {
            c.color_primaries = r.u(8, "color_primaries")? as u8;
            c.transfer_characteristics = r.u(8, "transfer_characteristics")? as u8;
            c.matrix_coefficients = r.u(8, "matrix_coefficients")? as u8;
        }
        if c.mono_chrome {
            c.color_range = r.flag("color_range")?;
            (c.subsampling_x, c.subsampling_y) = (true, true);
            return Ok(c);
        }
        // BT.709 primaries, sRGB transfer, identity matrix: 4:4:4 RGB.
        let srgb = (
            c.color_primaries,
            c.transfer_characteristics,
            c.matrix_coefficients,
        ) == (1, 13, 0);
        if srgb {
            c.color_range = true;
        } else {
            c.color_range = r.flag("color_range")?;
            (c.subsampling_x, c.subsampling_y) = match seq_profile {
                0 => (true, true),
                1 => (false, false),
                _ if c.bit_depth == 12 => {
                    let x = r.flag("subsampling_x")?;
                    (x, x && r.flag("subsampling_y")?)
                }
                _ => (true, false),
            };
            if c.subsampling_x && c.subsampling_y {
                c.chroma_sample_position = r.u(2, "chroma_sample_position")? as u8;
            }
        }
        c.separate_uv_delta_q = r.flag("separate_uv_delta_q")?;
        Ok(c)
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SequenceHeader {
    pub seq_profile: u8,
    pub still_picture: bool,
    pub reduced_still_picture_header: bool,
    pub timing_info_present_flag: bool,
    pub timing_info: TimingInfo,
    pub decoder_model_info_present_flag: bool,
    pub decoder_model_info: DecoderModelInfo,
    pub initial_display_delay_present_flag: bool,
    pub operating_points: Vec<OperatingPoint>,
    pub frame_width_bits_minus_1: u8,
    pub frame_height_bits_minus_1: u8,
    pub max_frame_width_minus_1: u32,
    pub max_frame_height_minus_1: u32,
    pub frame_id_numbers_present_flag: bool,
    pub delta_frame_id_length_minus_2: u8,
    pub additional_frame_id_length_minus_1: u8,
    pub use_128x128_superblock: bool,
    pub enable_filter_intra: bool,
    pub enable_intra_edge_filter: bool,
    pub enable_interintra_compound: bool,
    pub enable_masked_compound: bool,
    pub enable_warped_motion: bool,
    pub enable_dual_filter: bool,
    pub enable_order_hint: bool,
    pub enable_jnt_comp: bool,
    pub enable_ref_frame_mvs: bool,
    pub seq_choose_screen_content_tools: bool,
    pub seq_force_screen_content_tools: u8,
    pub seq_choose_integer_mv: bool,
    pub seq_force_integer_mv: u8,
    pub order_hint_bits_minus_1: u8,
    pub enable_superres: bool,
    pub enable_cdef: bool,
    pub enable_restoration: bool,
    pub color_config: ColorConfig,
    pub film_grain_params_present: bool,
}

impl SequenceHeader {
    /// `OrderHintBits`.
    pub fn order_hint_bits(&self) -> u32 {
        if self.enable_order_hint {
            u32::from(self.order_hint_bits_minus_1) + 1
        } else {
            0
        }
    }

    /// `get_relative_dist()` (7.12.3): how far order hint `a` is after `b`.
    pub fn relative_dist(&self, a: u32, b: u32) -> i32 {
        if !self.enable_order_hint {
            return 0;
        }
        let bits = self.order_hint_bits();
        let diff = a.wrapping_sub(b) & ((1 << bits) - 1);
        let m = 1 << (bits - 1);
        (diff & (m - 1)) as i32 - (diff & m) as i32
    }

    /// `idLen`, the width of frame ids.
    pub fn frame_id_length(&self) -> u32 {
        u32::from(self.additional_frame_id_length_minus_1)
            + u32::from(self.delta_frame_id_length_minus_2)
            + 3
    }

    /// sequence_header_obu() (5.5.1), from the payload's first bit.
    pub fn parse(r: &mut BitReader) -> Result<Self, Av1Error> {
        let mut s = Self {
            seq_profile: r.u(3, "seq_profile")? as u8,
            ..Self::default()
        };
        if s.seq_profile > 2 {
            return Err(Av1Error::Unsupported("seq_profile above 2 (reserved)"));
        }
        s.still_picture = r.flag("still_picture")?;
        s.reduced_still_picture_header = r.flag("reduced_still_picture_header")?;
        if s.reduced_still_picture_header {
            s.operating_points.push(OperatingPoint {
                seq_level_idx: r.u(5, "seq_level_idx")? as u8,
                ..OperatingPoint::default()
            });
        } else {
            s.parse_operating_points(r)?;
        }
        s.frame_width_bits_minus_1 = r.u(4, "frame_width_bits_minus_1")? as u8;
        s.frame_height_bits_minus_1 = r.u(4, "frame_height_bits_minus_1")? as u8;
        s.max_frame_width_minus_1 = r.u(
            u32::from(s.frame_width_bits_minus_1) + 1,
            "max_frame_width_minus_1",
        )?;
        s.max_frame_height_minus_1 = r.u(
            u32::from(s.frame_height_bits_minus_1) + 1,
            "max_frame_height_minus_1",
        )?;
        if !s.reduced_still_picture_header {
            s.frame_id_numbers_present_flag = r.flag("frame_id_numbers_present_flag")?;
        }
        if s.frame_id_numbers_present_flag {
            s.delta_frame_id_length_minus_2 = r.u(4, "delta_frame_id_length_minus_2")? as u8;
            s.additional_frame_id_length_minus_1 =
                r.u(3, "additional_frame_id_length_minus_1")? as u8;
        }
        s.use_128x128_superblock = r.flag("use_128x128_superblock")?;
        s.enable_filter_intra = r.flag("enable_filter_intra")?;
        s.enable_intra_edge_filter = r.flag("enable_intra_edge_filter")?;
        s.seq_force_screen_content_tools = SELECT;
        s.seq_force_integer_mv = SELECT;
        if !s.reduced_still_picture_header {
            s.parse_inter_tools(r)?;
        }
        s.enable_superres = r.flag("enable_superres")?;
        s.enable_cdef = r.flag("enable_cdef")?;
        s.enable_restoration = r.flag("enable_restoration")?;
        s.color_config = ColorConfig::parse(r, s.seq_profile)?;
        s.film_grain_params_present = r.flag("film_grain_params_present")?;
        Ok(s)
    }

    fn parse_operating_points(&mut self, r: &mut BitReader) -> Result<(), Av1Error> {
        self.timing_info_present_flag = r.flag("timing_info_present_flag")?;
        if self.timing_info_present_flag {
            let t = &mut self.timing_info;
            t.num_units_in_display_tick = r.u(32, "num_units_in_display_tick")?;
            t.time_scale = r.u(32, "time_scale")?;
            t.equal_picture_interval = r.flag("equal_picture_interval")?;
            if t.equal_picture_interval {
                t.num_ticks_per_picture_minus_1 = r.uvlc("num_ticks_per_picture_minus_1")?;
            }
            self.decoder_model_info_present_flag = r.flag("decoder_model_info_present_flag")?;
            if self.decoder_model_info_present_flag {
                let d = &mut self.decoder_model_info;
                d.buffer_delay_length_minus_1 = r.u(5, "buffer_delay_length_minus_1")? as u8;
                d.num_units_in_decoding_tick = r.u(32, "num_units_in_decoding_tick")?;
                d.buffer_removal_time_length_minus_1 =
                    r.u(5, "buffer_removal_time_length_minus_1")? as u8;
                d.frame_presentation_time_length_minus_1 =
                    r.u(5, "frame_presentation_time_length_minus_1")? as u8;
            }
        }
        self.initial_display_delay_present_flag = r.flag("initial_display_delay_present_flag")?;
        let count = r.u(5, "operating_points_cnt_minus_1")? + 1;
        let delay_bits = u32::from(self.decoder_model_info.buffer_delay_length_minus_1) + 1;
        for _ in 0..count {
            let mut op = OperatingPoint {
                operating_point_idc: r.u(12, "operating_point_idc")? as u16,
                seq_level_idx: r.u(5, "seq_level_idx")? as u8,
                ..OperatingPoint::default()
            };
            if op.seq_level_idx > 7 {
                op.seq_tier = r.u(1, "seq_tier")? as u8;
            }
            if self.decoder_model_info_present_flag {
                op.decoder_model_present_for_this_op =
                    r.flag("decoder_model_present_for_this_op")?;
                if op.decoder_model_present_for_this_op {
                    op.decoder_buffer_delay = r.u(delay_bits, "decoder_buffer_delay")?;
                    op.encoder_buffer_delay = r.u(delay_bits, "encoder_buffer_delay")?;
                    op.low_delay_mode_flag = r.flag("low_delay_mode_flag")?;
                }
            }
            if self.initial_display_delay_present_flag {
                op.initial_display_delay_present_for_this_op =
                    r.flag("initial_display_delay_present_for_this_op")?;
                if op.initial_display_delay_present_for_this_op {
                    op.initial_display_delay_minus_1 =
                        r.u(4, "initial_display_delay_minus_1")? as u8;
                }
            }
            self.operating_points.push(op);
        }
        Ok(())
    }

    fn parse_inter_tools(&mut self, r: &mut BitReader) -> Result<(), Av1Error> {
        self.enable_interintra_compound = r.flag("enable_interintra_compound")?;
        self.enable_masked_compound = r.flag("enable_masked_compound")?;
        self.enable_warped_motion = r.flag("enable_warped_motion")?;
        self.enable_dual_filter = r.flag("enable_dual_filter")?;
        self.enable_order_hint = r.flag("enable_order_hint")?;
        if self.enable_order_hint {
            self.enable_jnt_comp = r.flag("enable_jnt_comp")?;
            self.enable_ref_frame_mvs = r.flag("enable_ref_frame_mvs")?;
        }
        self.seq_choose_screen_content_tools = r.flag("seq_choose_screen_content_tools")?;
        if !self.seq_choose_screen_content_tools {
            self.seq_force_screen_content_tools = r.u(1, "seq_force_screen_content_tools")? as u8;
        }
        if self.seq_force_screen_content_tools > 0 {
            self.seq_choose_integer_mv = r.flag("seq_choose_integer_mv")?;
            if !self.seq_choose_integer_mv {
                self.seq_force_integer_mv = r.u(1, "seq_force_integer_mv")? as u8;
            }
        }
        if self.enable_order_hint {
            self.order_hint_bits_minus_1 = r.u(3, "order_hint_bits_minus_1")? as u8;
        }
        Ok(())
    }

    /// Operating point 0's `operating_point_idc` (the one decoded).
    pub fn operating_point_idc(&self) -> u16 {
        self.operating_points
            .first()
            .map_or(0, |op| op.operating_point_idc)
    }
}
