//! Video parameter set (7.3.2.1, 7.4.3.1): what a single-layer decoder
//! reads from it (layer sets, timing and HRD are read and kept; extension
//! data is skipped).

use super::hrd::HrdParameters;
use super::ptl::ProfileTierLevel;

/// sub_layer_ordering_info for one sub-layer (VPS or SPS), with the values
/// of absent sub-layers inferred from the highest one (7.4.3.2.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SubLayerOrdering {
    /// max_dec_pic_buffering_minus1[i]: 0..=15 (MaxDpbSize - 1).
    pub max_dec_pic_buffering_minus1: u8,
    /// max_num_reorder_pics[i]: at most max_dec_pic_buffering_minus1.
    pub max_num_reorder_pics: u8,
    /// max_latency_increase_plus1[i]: 0 means no limit.
    pub max_latency_increase_plus1: u32,
}

impl SubLayerOrdering {
    /// SpsMaxLatencyPictures (7-9), None when there is no limit.
    pub fn max_latency_pictures(&self) -> Option<u32> {
        (self.max_latency_increase_plus1 != 0).then(|| {
            u32::from(self.max_num_reorder_pics).saturating_add(self.max_latency_increase_plus1 - 1)
        })
    }
}

/// One hrd_parameters() of the VPS timing info.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct VpsHrd {
    pub hrd_layer_set_idx: u16,
    pub cprms_present_flag: bool,
    pub hrd: HrdParameters,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct VpsTiming {
    pub vps_num_units_in_tick: u32,
    pub vps_time_scale: u32,
    pub vps_poc_proportional_to_timing_flag: bool,
    pub vps_num_ticks_poc_diff_one_minus1: u32,
    pub hrd: Vec<VpsHrd>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Vps {
    pub vps_video_parameter_set_id: u8,
    pub vps_base_layer_internal_flag: bool,
    pub vps_base_layer_available_flag: bool,
    pub vps_max_layers_minus1: u8,
    /// 0..=6.
    pub vps_max_sub_layers_minus1: u8,
    pub vps_temporal_id_nesting_flag: bool,
    pub profile_tier_level: ProfileTierLevel,
    pub vps_sub_layer_ordering_info_present_flag: bool,
    /// One per sub-layer (vps_max_sub_layers_minus1 + 1).
    pub sub_layer_ordering: Vec<SubLayerOrdering>,
    pub vps_max_layer_id: u8,
    pub vps_num_layer_sets_minus1: u16,
    /// layer_id_included_flag[i][j] for i in 1..=vps_num_layer_sets_minus1:
    /// bit j of entry i - 1.
    pub layer_id_included_flags: Vec<u64>,
    /// Present when vps_timing_info_present_flag.
    pub timing: Option<VpsTiming>,
    pub vps_extension_flag: bool,
}

use crate::codec::bitstream::BitReader;

use super::HevcError;

/// sub_layer_ordering_info of a VPS or SPS (7.3.2.1, 7.3.2.2): entries for
/// every sub-layer, the absent ones copied from the highest.
pub(crate) fn parse_sub_layer_ordering(
    r: &mut BitReader,
    info_present: bool,
    max_sub_layers_minus1: u8,
    names: [&'static str; 3],
) -> Result<Vec<SubLayerOrdering>, HevcError> {
    let n = usize::from(max_sub_layers_minus1) + 1;
    let first = if info_present { 0 } else { n - 1 };
    let mut coded = Vec::with_capacity(n);
    for _ in first..n {
        let max_dec_pic_buffering_minus1 = r.ue_max(names[0], 15)? as u8;
        coded.push(SubLayerOrdering {
            max_dec_pic_buffering_minus1,
            max_num_reorder_pics: r.ue_max(names[1], u32::from(max_dec_pic_buffering_minus1))?
                as u8,
            max_latency_increase_plus1: r.ue(names[2])?,
        });
    }
    let highest = *coded.last().ok_or(HevcError::Invalid("no sub-layer"))?;
    let mut all = vec![highest; first];
    all.extend(coded);
    Ok(all)
}

impl Vps {
    /// Parses a VPS from its RBSP, the reader just past the NAL header.
    pub fn parse(r: &mut BitReader) -> Result<Self, HevcError> {
        let mut v = Vps {
            vps_video_parameter_set_id: r.u(4, "vps_video_parameter_set_id")? as u8,
            vps_base_layer_internal_flag: r.flag("vps_base_layer_internal_flag")?,
            vps_base_layer_available_flag: r.flag("vps_base_layer_available_flag")?,
            vps_max_layers_minus1: r.u(6, "vps_max_layers_minus1")? as u8,
            vps_max_sub_layers_minus1: r.u(3, "vps_max_sub_layers_minus1")? as u8,
            ..Vps::default()
        };
        if v.vps_max_sub_layers_minus1 > 6 {
            return Err(HevcError::Invalid("vps_max_sub_layers_minus1 is 7"));
        }
        v.vps_temporal_id_nesting_flag = r.flag("vps_temporal_id_nesting_flag")?;
        r.u(16, "vps_reserved_0xffff_16bits")?;
        v.profile_tier_level = ProfileTierLevel::parse(r, v.vps_max_sub_layers_minus1)?;
        v.vps_sub_layer_ordering_info_present_flag =
            r.flag("vps_sub_layer_ordering_info_present_flag")?;
        v.sub_layer_ordering = parse_sub_layer_ordering(
            r,
            v.vps_sub_layer_ordering_info_present_flag,
            v.vps_max_sub_layers_minus1,
            [
                "vps_max_dec_pic_buffering_minus1",
                "vps_max_num_reorder_pics",
                "vps_max_latency_increase_plus1",
            ],
        )?;
        v.vps_max_layer_id = r.u(6, "vps_max_layer_id")? as u8;
        if v.vps_max_layer_id > 62 {
            return Err(HevcError::Invalid("vps_max_layer_id is 63"));
        }
        v.vps_num_layer_sets_minus1 = r.ue_max("vps_num_layer_sets_minus1", 1023)? as u16;
        for _ in 0..v.vps_num_layer_sets_minus1 {
            let mut included = 0u64;
            for j in 0..=v.vps_max_layer_id {
                if r.flag("layer_id_included_flag")? {
                    included |= 1 << j;
                }
            }
            v.layer_id_included_flags.push(included);
        }
        if r.flag("vps_timing_info_present_flag")? {
            let mut t = VpsTiming {
                vps_num_units_in_tick: r.u(32, "vps_num_units_in_tick")?,
                vps_time_scale: r.u(32, "vps_time_scale")?,
                vps_poc_proportional_to_timing_flag: r
                    .flag("vps_poc_proportional_to_timing_flag")?,
                ..VpsTiming::default()
            };
            if t.vps_poc_proportional_to_timing_flag {
                t.vps_num_ticks_poc_diff_one_minus1 = r.ue("vps_num_ticks_poc_diff_one_minus1")?;
            }
            let count = r.ue_max(
                "vps_num_hrd_parameters",
                u32::from(v.vps_num_layer_sets_minus1) + 1,
            )?;
            for i in 0..count {
                let hrd_layer_set_idx =
                    r.ue_max("hrd_layer_set_idx", u32::from(v.vps_num_layer_sets_minus1))? as u16;
                let cprms_present_flag = i == 0 || r.flag("cprms_present_flag")?;
                let previous = t.hrd.last().map(|h: &VpsHrd| &h.hrd);
                let hrd = HrdParameters::parse(
                    r,
                    cprms_present_flag,
                    v.vps_max_sub_layers_minus1,
                    previous,
                )?;
                t.hrd.push(VpsHrd {
                    hrd_layer_set_idx,
                    cprms_present_flag,
                    hrd,
                });
            }
            v.timing = Some(t);
        }
        // vps_extension() is for layered streams: not read.
        v.vps_extension_flag = r.flag("vps_extension_flag")?;
        Ok(v)
    }
}
