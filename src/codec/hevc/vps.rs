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
