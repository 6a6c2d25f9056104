//! Header parsing with every syntax element recorded, in the order and with
//! the names FFmpeg's `trace_headers` uses (array indices aside): how tests
//! hold the parsers against FFmpeg, and what the fuzz targets drive.

use crate::codec::bitstream::{BitReader, TraceEntry};

use super::nal::{nal_type, Nal};
use super::params::ParameterSets;
use super::pps::Pps;
use super::slice::SliceHeader;
use super::sps::Sps;
use super::vps::Vps;
use super::HevcError;

/// Parameter sets and the last slice segment header seen so far, so that
/// slices, dependent slice segments and PPSs can be parsed.
#[derive(Default)]
pub struct HeaderTracer {
    params: ParameterSets,
    previous_slice: Option<SliceHeader>,
}

impl HeaderTracer {
    pub fn new() -> Self {
        Self::default()
    }

    /// The parameter sets received so far.
    pub fn parameter_sets(&self) -> &ParameterSets {
        &self.params
    }

    /// The last slice segment header parsed.
    pub fn last_slice(&self) -> Option<&SliceHeader> {
        self.previous_slice.as_ref()
    }

    /// Parses one NAL unit (no start code) and returns its syntax elements:
    /// the NAL header, then those of a VPS, SPS, PPS, AUD or slice segment
    /// header (with its byte_alignment()). Other NAL types (SEI, end of
    /// sequence, filler, reserved) and layers above 0 give the header only.
    pub fn trace_nal(&mut self, bytes: &[u8]) -> Result<Vec<TraceEntry>, HevcError> {
        let nal = Nal::parse(bytes)?;
        // Read as playback reads it: escapes passed over on the fly.
        let mut r = BitReader::rbsp(nal.bytes);
        r.enable_trace();
        r.u(1, "forbidden_zero_bit")?;
        r.u(6, "nal_unit_type")?;
        r.u(6, "nuh_layer_id")?;
        r.u(3, "nuh_temporal_id_plus1")?;
        if nal.header.nuh_layer_id != 0 {
            return Ok(r.take_trace());
        }
        match nal.header.nal_unit_type {
            nal_type::VPS => {
                let vps = Vps::parse(&mut r)?;
                self.params.vps.insert(vps.vps_video_parameter_set_id, vps);
            }
            nal_type::SPS => {
                let sps = Sps::parse(&mut r)?;
                self.params.sps.insert(sps.sps_seq_parameter_set_id, sps);
            }
            nal_type::PPS => {
                let pps = Pps::parse(&mut r, |id| self.params.sps.get(&id))?;
                self.params.pps.insert(pps.pps_pic_parameter_set_id, pps);
            }
            nal_type::AUD => {
                r.u(3, "pic_type")?;
            }
            nal_type::TRAIL_N..=nal_type::RASL_R | nal_type::BLA_W_LP..=nal_type::CRA_NUT => {
                let previous = self.previous_slice.take();
                let header = SliceHeader::parse(
                    &mut r,
                    &nal,
                    |id| self.params.pps_and_sps(id),
                    previous.as_ref(),
                )?;
                self.previous_slice = Some(header);
            }
            _ => {}
        }
        Ok(r.take_trace())
    }
}
