//! hrd_parameters() and sub_layer_hrd_parameters() (E.2.2, E.2.3): read so
//! that what follows them can be parsed; kept for completeness.

/// One CPB specification of sub_layer_hrd_parameters() (E.2.3).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CpbSpec {
    pub bit_rate_value_minus1: u32,
    pub cpb_size_value_minus1: u32,
    pub cpb_size_du_value_minus1: u32,
    pub bit_rate_du_value_minus1: u32,
    pub cbr_flag: bool,
}

/// The per-sub-layer part of hrd_parameters().
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SubLayerHrd {
    pub fixed_pic_rate_general_flag: bool,
    pub fixed_pic_rate_within_cvs_flag: bool,
    pub elemental_duration_in_tc_minus1: u32,
    pub low_delay_hrd_flag: bool,
    pub cpb_cnt_minus1: u8,
    /// Present when nal_hrd_parameters_present_flag: cpb_cnt_minus1 + 1.
    pub nal: Vec<CpbSpec>,
    /// Present when vcl_hrd_parameters_present_flag.
    pub vcl: Vec<CpbSpec>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HrdParameters {
    pub nal_hrd_parameters_present_flag: bool,
    pub vcl_hrd_parameters_present_flag: bool,
    pub sub_pic_hrd_params_present_flag: bool,
    pub tick_divisor_minus2: u8,
    pub du_cpb_removal_delay_increment_length_minus1: u8,
    pub sub_pic_cpb_params_in_pic_timing_sei_flag: bool,
    pub dpb_output_delay_du_length_minus1: u8,
    pub bit_rate_scale: u8,
    pub cpb_size_scale: u8,
    pub cpb_size_du_scale: u8,
    /// 23 when not present (E.2.2).
    pub initial_cpb_removal_delay_length_minus1: u8,
    pub au_cpb_removal_delay_length_minus1: u8,
    pub dpb_output_delay_length_minus1: u8,
    /// One per sub-layer, 0..=max_sub_layers_minus1.
    pub sub_layers: Vec<SubLayerHrd>,
}
