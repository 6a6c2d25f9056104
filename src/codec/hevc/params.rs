//! The parameter sets received so far, by id: what a slice segment header
//! needs to be parsed, and what a decoder activates.

use std::collections::HashMap;

use super::pps::Pps;
use super::sps::Sps;
use super::vps::Vps;
use super::HevcError;

#[derive(Debug, Clone, Default)]
pub struct ParameterSets {
    pub vps: HashMap<u8, Vps>,
    pub sps: HashMap<u8, Sps>,
    pub pps: HashMap<u8, Pps>,
}

impl ParameterSets {
    pub fn new() -> Self {
        Self::default()
    }

    /// The PPS `pps_id` and the SPS it refers to.
    pub fn pps_and_sps(&self, pps_id: u8) -> Result<(&Pps, &Sps), HevcError> {
        let pps = self.pps.get(&pps_id).ok_or(HevcError::MissingPps(pps_id))?;
        let sps = self
            .sps
            .get(&pps.pps_seq_parameter_set_id)
            .ok_or(HevcError::MissingSps(pps.pps_seq_parameter_set_id))?;
        Ok((pps, sps))
    }

    pub fn clear(&mut self) {
        self.vps.clear();
        self.sps.clear();
        self.pps.clear();
    }
}
