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

use crate::codec::bitstream::BitReader;

use super::HevcError;

/// The trace names of one profile's elements (general_ or sub_layer_).
struct Names {
    space: &'static str,
    tier: &'static str,
    idc: &'static str,
    compatibility: &'static str,
    progressive: &'static str,
    interlaced: &'static str,
    non_packed: &'static str,
    frame_only: &'static str,
    constraints: [&'static str; 9],
    max_14bit: &'static str,
    zero_33: &'static str,
    zero_34: &'static str,
    zero_7: &'static str,
    one_picture_only: &'static str,
    zero_35: &'static str,
    zero_43: &'static str,
    inbld: &'static str,
    zero_bit: &'static str,
}

const GENERAL: Names = Names {
    space: "general_profile_space",
    tier: "general_tier_flag",
    idc: "general_profile_idc",
    compatibility: "general_profile_compatibility_flag",
    progressive: "general_progressive_source_flag",
    interlaced: "general_interlaced_source_flag",
    non_packed: "general_non_packed_constraint_flag",
    frame_only: "general_frame_only_constraint_flag",
    constraints: [
        "general_max_12bit_constraint_flag",
        "general_max_10bit_constraint_flag",
        "general_max_8bit_constraint_flag",
        "general_max_422chroma_constraint_flag",
        "general_max_420chroma_constraint_flag",
        "general_max_monochrome_constraint_flag",
        "general_intra_constraint_flag",
        "general_one_picture_only_constraint_flag",
        "general_lower_bit_rate_constraint_flag",
    ],
    max_14bit: "general_max_14bit_constraint_flag",
    zero_33: "general_reserved_zero_33bits",
    zero_34: "general_reserved_zero_34bits",
    zero_7: "general_reserved_zero_7bits",
    one_picture_only: "general_one_picture_only_constraint_flag",
    zero_35: "general_reserved_zero_35bits",
    zero_43: "general_reserved_zero_43bits",
    inbld: "general_inbld_flag",
    zero_bit: "general_reserved_zero_bit",
};

const SUB_LAYER: Names = Names {
    space: "sub_layer_profile_space",
    tier: "sub_layer_tier_flag",
    idc: "sub_layer_profile_idc",
    compatibility: "sub_layer_profile_compatibility_flag",
    progressive: "sub_layer_progressive_source_flag",
    interlaced: "sub_layer_interlaced_source_flag",
    non_packed: "sub_layer_non_packed_constraint_flag",
    frame_only: "sub_layer_frame_only_constraint_flag",
    constraints: [
        "sub_layer_max_12bit_constraint_flag",
        "sub_layer_max_10bit_constraint_flag",
        "sub_layer_max_8bit_constraint_flag",
        "sub_layer_max_422chroma_constraint_flag",
        "sub_layer_max_420chroma_constraint_flag",
        "sub_layer_max_monochrome_constraint_flag",
        "sub_layer_intra_constraint_flag",
        "sub_layer_one_picture_only_constraint_flag",
        "sub_layer_lower_bit_rate_constraint_flag",
    ],
    max_14bit: "sub_layer_max_14bit_constraint_flag",
    zero_33: "sub_layer_reserved_zero_33bits",
    zero_34: "sub_layer_reserved_zero_34bits",
    zero_7: "sub_layer_reserved_zero_7bits",
    one_picture_only: "sub_layer_one_picture_only_constraint_flag",
    zero_35: "sub_layer_reserved_zero_35bits",
    zero_43: "sub_layer_reserved_zero_43bits",
    inbld: "sub_layer_inbld_flag",
    zero_bit: "sub_layer_reserved_zero_bit",
};

/// Reserved bits wider than one read: the first 24, then the rest (as
/// FFmpeg's trace splits them).
fn reserved(r: &mut BitReader, bits: u32, name: &'static str) -> Result<(), HevcError> {
    r.u(24, name)?;
    r.u(bits - 24, name)?;
    Ok(())
}

impl ProfileInfo {
    fn parse(r: &mut BitReader, n: &Names) -> Result<Self, HevcError> {
        let mut p = ProfileInfo {
            profile_space: r.u(2, n.space)? as u8,
            ..Self::default()
        };
        if p.profile_space != 0 {
            return Err(HevcError::Unsupported("a profile space other than 0"));
        }
        p.tier_flag = r.flag(n.tier)?;
        p.profile_idc = r.u(5, n.idc)? as u8;
        for j in 0..32 {
            if r.flag(n.compatibility)? {
                p.profile_compatibility_flags |= 1 << j;
            }
        }
        p.progressive_source_flag = r.flag(n.progressive)?;
        p.interlaced_source_flag = r.flag(n.interlaced)?;
        p.non_packed_constraint_flag = r.flag(n.non_packed)?;
        p.frame_only_constraint_flag = r.flag(n.frame_only)?;
        let (idc, compatibility) = (p.profile_idc, p.profile_compatibility_flags);
        let any = |ids: &[u8]| {
            ids.iter()
                .any(|&i| idc == i || compatibility & (1 << i) != 0)
        };
        if any(&[4, 5, 6, 7, 8, 9, 10, 11]) {
            let mut flags = [false; 9];
            for (flag, name) in flags.iter_mut().zip(n.constraints) {
                *flag = r.flag(name)?;
            }
            [
                p.max_12bit_constraint_flag,
                p.max_10bit_constraint_flag,
                p.max_8bit_constraint_flag,
                p.max_422chroma_constraint_flag,
                p.max_420chroma_constraint_flag,
                p.max_monochrome_constraint_flag,
                p.intra_constraint_flag,
                p.one_picture_only_constraint_flag,
                p.lower_bit_rate_constraint_flag,
            ] = flags;
            if any(&[5, 9, 10, 11]) {
                p.max_14bit_constraint_flag = r.flag(n.max_14bit)?;
                reserved(r, 33, n.zero_33)?;
            } else {
                reserved(r, 34, n.zero_34)?;
            }
        } else if any(&[2]) {
            r.u(7, n.zero_7)?;
            p.one_picture_only_constraint_flag = r.flag(n.one_picture_only)?;
            reserved(r, 35, n.zero_35)?;
        } else {
            reserved(r, 43, n.zero_43)?;
        }
        if any(&[1, 2, 3, 4, 5, 9, 11]) {
            p.inbld_flag = r.flag(n.inbld)?;
        } else {
            r.u(1, n.zero_bit)?;
        }
        Ok(p)
    }
}

impl ProfileTierLevel {
    /// profile_tier_level(1, max_sub_layers_minus1) (7.3.3).
    pub fn parse(r: &mut BitReader, max_sub_layers_minus1: u8) -> Result<Self, HevcError> {
        let general = ProfileInfo::parse(r, &GENERAL)?;
        let general_level_idc = r.u(8, "general_level_idc")? as u8;
        let n = usize::from(max_sub_layers_minus1);
        let mut present = Vec::with_capacity(n);
        for _ in 0..n {
            let profile = r.flag("sub_layer_profile_present_flag")?;
            let level = r.flag("sub_layer_level_present_flag")?;
            present.push((profile, level));
        }
        if n > 0 {
            for _ in n..8 {
                r.u(2, "reserved_zero_2bits")?;
            }
        }
        let mut sub_layers = Vec::with_capacity(n);
        for (profile, level) in present {
            let profile = if profile {
                Some(ProfileInfo::parse(r, &SUB_LAYER)?)
            } else {
                None
            };
            let level_idc = if level {
                Some(r.u(8, "sub_layer_level_idc")? as u8)
            } else {
                None
            };
            sub_layers.push(SubLayerPtl { profile, level_idc });
        }
        Ok(Self {
            general,
            general_level_idc,
            sub_layers,
        })
    }
}
