//! What the slice codecs (H.264, HEVC) share between their decoding
//! processes: the access-unit loop that turns NAL units into decode jobs,
//! and what their DPBs give out.

use std::fmt::Display;
use std::ops::Range;

use tracing::warn;

/// What leaves a DPB: timestamps to show (display order) and timestamps
/// whose buffers the DPB no longer needs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DpbOutput {
    pub output: Vec<u64>,
    pub released: Vec<u64>,
}

impl DpbOutput {
    pub fn append(&mut self, other: DpbOutput) {
        self.output.extend(other.output);
        self.released.extend(other.released);
    }
}

/// A slice codec's decoding state as the access-unit loop drives it.
pub(crate) trait NalUnitDecoder {
    /// A NAL unit's parsed header, borrowing the unit's bytes.
    type Nal<'a>;
    type Job;
    type Error: Display;

    fn parse_nal(bytes: &[u8]) -> Result<Self::Nal<'_>, Self::Error>;
    /// The error of an access unit without a single NAL unit.
    fn no_nal_unit() -> Self::Error;
    /// Whether a picture is between its first slice and its end.
    fn in_picture(&self) -> bool;
    /// Handles one NAL unit (at `range` of the access unit), finishing
    /// pictures into `jobs`.
    fn handle_nal(
        &mut self,
        nal: Self::Nal<'_>,
        range: Range<usize>,
        timestamp_ns: u64,
        jobs: &mut Vec<Self::Job>,
    ) -> Result<(), Self::Error>;
    /// Drops the picture in progress (its slices cannot decode).
    fn drop_picture(&mut self);
    /// Ends the picture in progress, completing its job.
    fn finish_picture(&mut self) -> Option<Self::Job>;
}

/// Decodes the NAL units of one access unit (`units`: their ranges in
/// `au`) whose picture gets `timestamp_ns`. A bad NAL unit header is
/// skipped once a picture is under way; a NAL unit that fails drops its
/// picture and the rest of the unit, keeping the jobs of the pictures
/// before it (they are in the DPB already and must still run).
pub(crate) fn decode_nal_units<D: NalUnitDecoder>(
    decoder: &mut D,
    au: &[u8],
    units: impl Iterator<Item = Range<usize>>,
    timestamp_ns: u64,
) -> Result<Vec<D::Job>, D::Error> {
    let mut jobs = Vec::new();
    let mut any_nal = false;
    for range in units {
        any_nal = true;
        let nal = match D::parse_nal(&au[range.clone()]) {
            Ok(nal) => nal,
            Err(e) if jobs.is_empty() && !decoder.in_picture() => return Err(e),
            Err(e) => {
                warn!("skipping a bad NAL unit: {e}");
                continue;
            }
        };
        if let Err(e) = decoder.handle_nal(nal, range, timestamp_ns, &mut jobs) {
            // A bad picture is dropped whole: its slices cannot decode.
            decoder.drop_picture();
            if jobs.is_empty() {
                return Err(e);
            }
            warn!("dropping the rest of an access unit: {e}");
            return Ok(jobs);
        }
    }
    if !any_nal {
        return Err(D::no_nal_unit());
    }
    if let Some(job) = decoder.finish_picture() {
        jobs.push(job);
    }
    Ok(jobs)
}
