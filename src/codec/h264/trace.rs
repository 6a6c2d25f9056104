//! Header parsing with every syntax element recorded, in the order and with
//! the names FFmpeg's `trace_headers` uses: how tests hold the parsers
//! against FFmpeg, and what the fuzz targets drive.

use std::collections::HashMap;

use crate::codec::bitstream::TraceEntry;

use super::nal::{nal_type, Nal};
use super::pps::Pps;
use super::slice::SliceHeader;
use super::sps::Sps;
use super::H264Error;

/// Parameter sets seen so far, so slices and PPSs can be parsed.
#[derive(Default)]
pub struct HeaderTracer {
    sps: HashMap<u8, Sps>,
    pps: HashMap<u8, Pps>,
}

impl HeaderTracer {
    pub fn new() -> Self {
        Self::default()
    }

    /// Parses one NAL unit (no start code) and returns its syntax elements:
    /// the NAL header, then SPS, PPS, slice header or AUD elements. Other
    /// NAL types give the header only.
    pub fn trace_nal(&mut self, bytes: &[u8]) -> Result<Vec<TraceEntry>, H264Error> {
        let nal = Nal::parse(bytes)?;
        let mut r = nal.reader();
        r.enable_trace();
        r.u(1, "forbidden_zero_bit")?;
        r.u(2, "nal_ref_idc")?;
        r.u(5, "nal_unit_type")?;
        match nal.nal_unit_type {
            nal_type::SPS => {
                let sps = Sps::parse(&mut r)?;
                self.sps.insert(sps.seq_parameter_set_id, sps);
            }
            nal_type::PPS => {
                let pps = Pps::parse(&mut r, |id| self.sps.get(&id))?;
                self.pps.insert(pps.pic_parameter_set_id, pps);
            }
            nal_type::SLICE_NON_IDR | nal_type::SLICE_IDR => {
                let pps_id = SliceHeader::peek_pps_id(&nal)?;
                let pps = self.pps.get(&pps_id).ok_or(H264Error::MissingPps(pps_id))?;
                let sps = self
                    .sps
                    .get(&pps.seq_parameter_set_id)
                    .ok_or(H264Error::MissingSps(pps.seq_parameter_set_id))?;
                SliceHeader::parse(&mut r, nal.nal_ref_idc, nal.nal_unit_type, sps, pps)?;
            }
            nal_type::AUD => {
                r.u(3, "primary_pic_type")?;
            }
            _ => {}
        }
        Ok(r.take_trace())
    }
}
