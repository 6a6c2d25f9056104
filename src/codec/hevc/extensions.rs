//! The extension flags that end an SPS and a PPS (7.3.2.2.1, 7.3.2.3.1):
//! which extensions follow, and refusing those reel does not decode.

use crate::codec::bitstream::BitReader;

use super::HevcError;

/// One parameter set's extension flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ExtensionFlags {
    /// `*_extension_present_flag`: the flags below were sent.
    pub present: bool,
    pub range: bool,
    pub multilayer: bool,
    pub three_d: bool,
    pub scc: bool,
    /// `*_extension_4bits`: extensions this version of the standard does
    /// not define; ignored.
    pub four_bits: u8,
}

/// The parameter set the flags end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParameterSet {
    Sps,
    Pps,
}

impl ParameterSet {
    /// The syntax elements' names, as the specification gives them.
    fn names(self) -> [&'static str; 6] {
        match self {
            Self::Sps => [
                "sps_extension_present_flag",
                "sps_range_extension_flag",
                "sps_multilayer_extension_flag",
                "sps_3d_extension_flag",
                "sps_scc_extension_flag",
                "sps_extension_4bits",
            ],
            Self::Pps => [
                "pps_extension_present_flag",
                "pps_range_extension_flag",
                "pps_multilayer_extension_flag",
                "pps_3d_extension_flag",
                "pps_scc_extension_flag",
                "pps_extension_4bits",
            ],
        }
    }

    /// The multilayer, 3D and screen content coding extensions, in words.
    fn unsupported(self) -> [&'static str; 3] {
        match self {
            Self::Sps => [
                "the SPS multilayer extension",
                "the SPS 3D extension",
                "the SPS screen content coding extension",
            ],
            Self::Pps => [
                "the PPS multilayer extension",
                "the PPS 3D extension",
                "the PPS screen content coding extension",
            ],
        }
    }
}

impl ExtensionFlags {
    pub fn parse(r: &mut BitReader, set: ParameterSet) -> Result<Self, HevcError> {
        let [present, range, multilayer, three_d, scc, four_bits] = set.names();
        let mut flags = Self {
            present: r.flag(present)?,
            ..Self::default()
        };
        if flags.present {
            flags.range = r.flag(range)?;
            flags.multilayer = r.flag(multilayer)?;
            flags.three_d = r.flag(three_d)?;
            flags.scc = r.flag(scc)?;
            flags.four_bits = r.u(4, four_bits)? as u8;
        }
        Ok(flags)
    }

    /// An error naming the first extension sent that reel does not decode
    /// (multilayer, 3D, screen content coding).
    pub fn check_supported(&self, set: ParameterSet) -> Result<(), HevcError> {
        let [multilayer, three_d, scc] = set.unsupported();
        let sent = [
            (self.multilayer, multilayer),
            (self.three_d, three_d),
            (self.scc, scc),
        ];
        match sent.into_iter().find(|&(flag, _)| flag) {
            Some((_, what)) => Err(HevcError::Unsupported(what)),
            None => Ok(()),
        }
    }
}
