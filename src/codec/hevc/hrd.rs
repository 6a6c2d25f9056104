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

use crate::codec::bitstream::BitReader;

use super::HevcError;

fn parse_cpb_specs(
    r: &mut BitReader,
    count: usize,
    sub_pic: bool,
) -> Result<Vec<CpbSpec>, HevcError> {
    let mut specs = Vec::with_capacity(count);
    for _ in 0..count {
        let mut s = CpbSpec {
            bit_rate_value_minus1: r.ue("bit_rate_value_minus1")?,
            cpb_size_value_minus1: r.ue("cpb_size_value_minus1")?,
            ..CpbSpec::default()
        };
        if sub_pic {
            s.cpb_size_du_value_minus1 = r.ue("cpb_size_du_value_minus1")?;
            s.bit_rate_du_value_minus1 = r.ue("bit_rate_du_value_minus1")?;
        }
        s.cbr_flag = r.flag("cbr_flag")?;
        specs.push(s);
    }
    Ok(specs)
}

impl HrdParameters {
    /// hrd_parameters(commonInfPresentFlag, maxNumSubLayersMinus1) (E.2.2).
    /// Without common information, those fields come from `common` (the
    /// previous hrd_parameters() of the VPS).
    pub fn parse(
        r: &mut BitReader,
        common_inf_present_flag: bool,
        max_sub_layers_minus1: u8,
        common: Option<&HrdParameters>,
    ) -> Result<Self, HevcError> {
        let mut h = match common {
            Some(c) => HrdParameters {
                sub_layers: Vec::new(),
                ..c.clone()
            },
            None => HrdParameters {
                initial_cpb_removal_delay_length_minus1: 23,
                au_cpb_removal_delay_length_minus1: 23,
                dpb_output_delay_length_minus1: 23,
                ..HrdParameters::default()
            },
        };
        if common_inf_present_flag {
            h.nal_hrd_parameters_present_flag = r.flag("nal_hrd_parameters_present_flag")?;
            h.vcl_hrd_parameters_present_flag = r.flag("vcl_hrd_parameters_present_flag")?;
            if h.nal_hrd_parameters_present_flag || h.vcl_hrd_parameters_present_flag {
                h.sub_pic_hrd_params_present_flag = r.flag("sub_pic_hrd_params_present_flag")?;
                if h.sub_pic_hrd_params_present_flag {
                    h.tick_divisor_minus2 = r.u(8, "tick_divisor_minus2")? as u8;
                    h.du_cpb_removal_delay_increment_length_minus1 =
                        r.u(5, "du_cpb_removal_delay_increment_length_minus1")? as u8;
                    h.sub_pic_cpb_params_in_pic_timing_sei_flag =
                        r.flag("sub_pic_cpb_params_in_pic_timing_sei_flag")?;
                    h.dpb_output_delay_du_length_minus1 =
                        r.u(5, "dpb_output_delay_du_length_minus1")? as u8;
                }
                h.bit_rate_scale = r.u(4, "bit_rate_scale")? as u8;
                h.cpb_size_scale = r.u(4, "cpb_size_scale")? as u8;
                if h.sub_pic_hrd_params_present_flag {
                    h.cpb_size_du_scale = r.u(4, "cpb_size_du_scale")? as u8;
                }
                h.initial_cpb_removal_delay_length_minus1 =
                    r.u(5, "initial_cpb_removal_delay_length_minus1")? as u8;
                h.au_cpb_removal_delay_length_minus1 =
                    r.u(5, "au_cpb_removal_delay_length_minus1")? as u8;
                h.dpb_output_delay_length_minus1 = r.u(5, "dpb_output_delay_length_minus1")? as u8;
            }
        }
        for _ in 0..=max_sub_layers_minus1 {
            let mut s = SubLayerHrd {
                fixed_pic_rate_general_flag: r.flag("fixed_pic_rate_general_flag")?,
                ..SubLayerHrd::default()
            };
            s.fixed_pic_rate_within_cvs_flag =
                s.fixed_pic_rate_general_flag || r.flag("fixed_pic_rate_within_cvs_flag")?;
            if s.fixed_pic_rate_within_cvs_flag {
                s.elemental_duration_in_tc_minus1 =
                    r.ue_max("elemental_duration_in_tc_minus1", 2047)?;
            } else {
                s.low_delay_hrd_flag = r.flag("low_delay_hrd_flag")?;
            }
            if !s.low_delay_hrd_flag {
                s.cpb_cnt_minus1 = r.ue_max("cpb_cnt_minus1", 31)? as u8;
            }
            let count = usize::from(s.cpb_cnt_minus1) + 1;
            if h.nal_hrd_parameters_present_flag {
                s.nal = parse_cpb_specs(r, count, h.sub_pic_hrd_params_present_flag)?;
            }
            if h.vcl_hrd_parameters_present_flag {
                s.vcl = parse_cpb_specs(r, count, h.sub_pic_hrd_params_present_flag)?;
            }
            h.sub_layers.push(s);
        }
        Ok(h)
    }
}
