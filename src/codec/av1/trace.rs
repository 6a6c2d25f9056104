//! Header parsing with every syntax element recorded, in the order and with
//! the names FFmpeg's `trace_headers` (cbs_av1) uses, array indices aside:
//! how tests hold the parsers against FFmpeg, and what the fuzz target
//! drives.

use crate::codec::bitstream::TraceEntry;

use super::parser::StreamParser;
use super::Av1Error;

#[derive(Default)]
pub struct HeaderTracer {
    parser: StreamParser,
}

impl HeaderTracer {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn parser(&self) -> &StreamParser {
        &self.parser
    }

    /// Parses every OBU of `temporal_unit` and returns each one's syntax
    /// elements: the OBU header (with `obu_size` as one element), then
    /// those of a sequence header, frame header, tile group header, with
    /// their trailing and alignment bits. Other OBU types give the header
    /// only.
    pub fn trace_temporal_unit(
        &mut self,
        temporal_unit: &[u8],
    ) -> Result<Vec<Vec<TraceEntry>>, Av1Error> {
        let mut rest = temporal_unit;
        let mut obus = Vec::new();
        while !rest.is_empty() {
            let (obu, _, trace) = self.parser.parse_obu_traced(rest)?;
            rest = &rest[obu.data.len()..];
            obus.push(trace);
        }
        Ok(obus)
    }
}
