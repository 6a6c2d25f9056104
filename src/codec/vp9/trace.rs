//! Every frame's uncompressed header as read, in the order and with the
//! names FFmpeg's `trace_headers` (cbs_vp9) uses, array indices aside: how
//! tests hold the parser against FFmpeg, and what the fuzz target drives.
//! The compressed header is read too (FFmpeg does not trace it), and its
//! padding checked: reading one decision too few or too many would leave
//! coded bits behind or run into the padding.

use crate::codec::bitstream::{BitReader, TraceEntry};

use super::header::{self, Frame, PersistentState};
use super::refs::References;
use super::{compressed_header_bytes, CompressedHeader, Vp9Error};

/// The state headers leave for later frames, and the frame sizes in the
/// reference slots.
#[derive(Default)]
pub struct HeaderTracer {
    state: PersistentState,
    refs: References<()>,
}

impl HeaderTracer {
    pub fn new() -> Self {
        Self::default()
    }

    /// Reads one frame (superframes split already) and returns the
    /// uncompressed header's syntax elements, trailing bits included.
    pub fn trace_frame(&mut self, data: &[u8]) -> Result<Vec<TraceEntry>, Vp9Error> {
        let mut r = BitReader::new(data);
        r.enable_trace();
        let refs = &self.refs;
        let frame = header::parse(&mut r, &mut self.state, |slot| refs.size(slot))?;
        let trace = r.take_trace();
        if let Frame::Decode(header) = frame {
            CompressedHeader::parse_whole(compressed_header_bytes(data, &header)?, &header)?;
            self.refs.decoded(&header, ());
        }
        Ok(trace)
    }
}
