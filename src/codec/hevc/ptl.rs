//! profile_tier_level() (7.3.3, 7.4.4): the general profile, tier and level
//! and those of each sub-layer.

/// The profile part of profile_tier_level(), general or of one sub-layer.
/// Constraint flags the syntax does not carry for the profile are false.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProfileInfo {
    pub profile_space: u8,
    pub tier_flag: bool,
    pub profile_idc: u8,
    /// profile_compatibility_flag[j] in bit j.
    pub profile_compatibility_flags: u32,
    pub progressive_source_flag: bool,
    pub interlaced_source_flag: bool,
    pub non_packed_constraint_flag: bool,
    pub frame_only_constraint_flag: bool,
    pub max_12bit_constraint_flag: bool,
    pub max_10bit_constraint_flag: bool,
    pub max_8bit_constraint_flag: bool,
    pub max_422chroma_constraint_flag: bool,
    pub max_420chroma_constraint_flag: bool,
    pub max_monochrome_constraint_flag: bool,
    pub intra_constraint_flag: bool,
    pub one_picture_only_constraint_flag: bool,
    pub lower_bit_rate_constraint_flag: bool,
    pub max_14bit_constraint_flag: bool,
    pub inbld_flag: bool,
}

impl ProfileInfo {
    /// Whether the stream conforms to profile `idc` (its idc or its
    /// compatibility flag), as the syntax conditions ask.
    pub fn compatible_with(&self, idc: u8) -> bool {
        self.profile_idc == idc || (idc < 32 && self.profile_compatibility_flags & (1 << idc) != 0)
    }
}

/// One sub-layer's entry (i < max_sub_layers_minus1).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SubLayerPtl {
    /// Present when sub_layer_profile_present_flag[i].
    pub profile: Option<ProfileInfo>,
    /// sub_layer_level_idc[i], present when sub_layer_level_present_flag[i].
    pub level_idc: Option<u8>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProfileTierLevel {
    /// general_* (always present where reel parses a PTL:
    /// profilePresentFlag is 1 in the VPS and SPS).
    pub general: ProfileInfo,
    /// general_level_idc: 30 times the level number.
    pub general_level_idc: u8,
    pub sub_layers: Vec<SubLayerPtl>,
}

/// general_profile_idc values (A.3).
pub mod profile {
    pub const MAIN: u8 = 1;
    pub const MAIN_10: u8 = 2;
    pub const MAIN_STILL_PICTURE: u8 = 3;
    pub const FORMAT_RANGE_EXTENSIONS: u8 = 4;
    pub const HIGH_THROUGHPUT: u8 = 5;
    pub const SCREEN_CONTENT_CODING: u8 = 9;
}
