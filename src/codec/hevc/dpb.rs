//! The HEVC decoded picture buffer as Annex C.5.2 runs it: marking by the
//! reference picture set (8.3.2), removal and "bumping" (output in POC
//! order) before each picture, storage and additional bumping after it.
//! Pictures are named by the caller's timestamp (a V4L2 CAPTURE buffer).

use super::refs::{LongTermRef, RpsPocs};
use crate::codec::access_unit::DpbOutput;

/// How a stored picture is used for reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reference {
    Unused,
    ShortTerm,
    LongTerm,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DpbPicture {
    pub timestamp_ns: u64,
    pub poc: i32,
    pub reference: Reference,
    pub needed_for_output: bool,
    /// PicLatencyCount (C.5.2.3).
    latency: u32,
}

/// The sequence's limits for the highest sub-layer decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DpbLimits {
    /// sps_max_dec_pic_buffering_minus1 + 1.
    pub max_dec_pic_buffering: usize,
    /// sps_max_num_reorder_pics.
    pub max_num_reorder: usize,
    /// SpsMaxLatencyPictures, when sps_max_latency_increase_plus1 is not 0.
    pub max_latency_pictures: Option<u32>,
}

impl DpbLimits {
    pub fn new(
        max_dec_pic_buffering_minus1: u32,
        max_num_reorder: u32,
        latency_plus1: u32,
    ) -> Self {
        Self {
            max_dec_pic_buffering: max_dec_pic_buffering_minus1 as usize + 1,
            max_num_reorder: max_num_reorder as usize,
            max_latency_pictures: (latency_plus1 != 0)
                .then(|| max_num_reorder.saturating_add(latency_plus1 - 1)),
        }
    }
}

impl Default for DpbLimits {
    fn default() -> Self {
        Self::new(15, 15, 0)
    }
}

/// The reference pictures of the current picture, as 8.3.2 finds them:
/// the timestamp of each RPS entry, `None` where the DPB lacks it ("no
/// reference picture": a damaged stream, or decoding started elsewhere).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RefPicSet {
    pub st_curr_before: Vec<Option<u64>>,
    pub st_curr_after: Vec<Option<u64>>,
    pub lt_curr: Vec<Option<u64>>,
}

impl RefPicSet {
    /// Some picture the current one predicts from is missing.
    pub fn is_missing_any(&self) -> bool {
        self.st_curr_before
            .iter()
            .chain(&self.st_curr_after)
            .chain(&self.lt_curr)
            .any(Option::is_none)
    }
}

#[derive(Clone, Debug, Default)]
pub struct Dpb {
    pictures: Vec<DpbPicture>,
    limits: DpbLimits,
}

impl Dpb {
    pub fn set_limits(&mut self, limits: DpbLimits) {
        self.limits = limits;
    }

    pub fn limits(&self) -> DpbLimits {
        self.limits
    }

    /// Pictures in storage order.
    pub fn pictures(&self) -> &[DpbPicture] {
        &self.pictures
    }

    /// Timestamps of the pictures marked as references.
    pub fn references(&self) -> Vec<u64> {
        self.pictures
            .iter()
            .filter(|p| p.reference != Reference::Unused)
            .map(|p| p.timestamp_ns)
            .collect()
    }

    /// 8.3.2 for a non-IDR picture: finds each RPS entry, marks long-term
    /// ones, and marks every reference the RPS does not name unused.
    pub fn apply_rps(&mut self, rps: &RpsPocs, log2_max_poc_lsb: u32) -> RefPicSet {
        let mut keep = vec![false; self.pictures.len()];
        let mut find_lt = |pictures: &mut [DpbPicture], named: &LongTermRef| {
            let at = pictures.iter().position(|p| {
                p.reference != Reference::Unused && named.names(p.poc, log2_max_poc_lsb)
            })?;
            pictures[at].reference = Reference::LongTerm;
            keep[at] = true;
            Some(pictures[at].timestamp_ns)
        };
        let lt_curr: Vec<Option<u64>> = rps
            .lt_curr
            .iter()
            .map(|n| find_lt(&mut self.pictures, n))
            .collect();
        for named in &rps.lt_foll {
            find_lt(&mut self.pictures, named);
        }
        let mut find_st = |pictures: &[DpbPicture], poc: i32| {
            let at = pictures
                .iter()
                .position(|p| p.reference == Reference::ShortTerm && p.poc == poc)?;
            keep[at] = true;
            Some(pictures[at].timestamp_ns)
        };
        let st_curr_before = rps
            .st_curr_before
            .iter()
            .map(|&poc| find_st(&self.pictures, poc))
            .collect();
        let st_curr_after = rps
            .st_curr_after
            .iter()
            .map(|&poc| find_st(&self.pictures, poc))
            .collect();
        for &poc in &rps.st_foll {
            find_st(&self.pictures, poc);
        }
        for (picture, keep) in self.pictures.iter_mut().zip(keep) {
            if !keep {
                picture.reference = Reference::Unused;
            }
        }
        RefPicSet {
            st_curr_before,
            st_curr_after,
            lt_curr,
        }
    }

    /// An IDR picture: every picture stops being a reference.
    pub fn unmark_all(&mut self) {
        for picture in &mut self.pictures {
            picture.reference = Reference::Unused;
        }
    }

    /// C.5.2.2 before an IRAP picture with NoRaslOutputFlag = 1 that is not
    /// the first picture: with `no_output_of_prior_pics` the DPB empties
    /// without output, else every waiting picture is output first.
    pub fn start_irap(&mut self, no_output_of_prior_pics: bool) -> DpbOutput {
        let mut out = DpbOutput::default();
        if !no_output_of_prior_pics {
            out = self.flush();
        }
        out.released.extend(self.clear());
        out
    }

    /// C.5.2.2 before any other picture (its RPS applied): removes what is
    /// neither waiting for output nor a reference, then bumps while too
    /// many pictures wait or the DPB is full.
    pub fn make_room(&mut self) -> DpbOutput {
        let mut out = DpbOutput::default();
        out.released.extend(self.remove_unneeded());
        loop {
            let waiting = self.waiting();
            let full = self.pictures.len() >= self.limits.max_dec_pic_buffering;
            if waiting == 0 {
                break;
            }
            if waiting > self.limits.max_num_reorder || self.latency_exceeded() || full {
                out.append(self.bump());
            } else {
                break;
            }
        }
        out
    }

    /// C.5.2.3: the current picture is stored (waiting for output when
    /// `output`), pictures waiting behind it age, and bumping goes on
    /// while the limits are exceeded.
    pub fn store(&mut self, timestamp_ns: u64, poc: i32, output: bool) -> DpbOutput {
        if output {
            for picture in self.pictures.iter_mut().filter(|p| p.needed_for_output) {
                picture.latency = picture.latency.saturating_add(1);
            }
        }
        self.pictures.push(DpbPicture {
            timestamp_ns,
            poc,
            reference: Reference::ShortTerm,
            needed_for_output: output,
            latency: 0,
        });
        let mut out = DpbOutput::default();
        while self.waiting() > self.limits.max_num_reorder || self.latency_exceeded() {
            out.append(self.bump());
        }
        out
    }

    /// End of a coded video sequence or of the stream: every waiting picture,
    /// in POC order. References stay (the caller clears at an IRAP).
    pub fn flush(&mut self) -> DpbOutput {
        let mut out = DpbOutput::default();
        while self.waiting() > 0 {
            out.append(self.bump());
        }
        out
    }

    /// Forgets every picture (a seek). Returns the timestamps released.
    pub fn clear(&mut self) -> Vec<u64> {
        self.pictures.drain(..).map(|p| p.timestamp_ns).collect()
    }

    fn waiting(&self) -> usize {
        self.pictures.iter().filter(|p| p.needed_for_output).count()
    }

    fn latency_exceeded(&self) -> bool {
        self.limits.max_latency_pictures.is_some_and(|max| {
            self.pictures
                .iter()
                .any(|p| p.needed_for_output && p.latency >= max)
        })
    }

    fn remove_unneeded(&mut self) -> Vec<u64> {
        let mut released = Vec::new();
        self.pictures.retain(|p| {
            let keep = p.needed_for_output || p.reference != Reference::Unused;
            if !keep {
                released.push(p.timestamp_ns);
            }
            keep
        });
        released
    }

    /// C.5.2.4: outputs the waiting picture of smallest POC, and removes it
    /// if it is no reference.
    fn bump(&mut self) -> DpbOutput {
        let mut out = DpbOutput::default();
        let Some(at) = self
            .pictures
            .iter()
            .enumerate()
            .filter(|(_, p)| p.needed_for_output)
            .min_by_key(|(_, p)| p.poc)
            .map(|(i, _)| i)
        else {
            return out;
        };
        let picture = &mut self.pictures[at];
        picture.needed_for_output = false;
        out.output.push(picture.timestamp_ns);
        if picture.reference == Reference::Unused {
            out.released.push(picture.timestamp_ns);
            self.pictures.remove(at);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::hevc::refs::{LongTermEntry, ShortTermRps};

    fn limits(reorder: u32) -> DpbLimits {
        DpbLimits::new(4, reorder, 0)
    }

    #[test]
    fn reordered_pictures_come_out_in_poc_order() {
        // I0 P4 B2 b1 b3 (decode order), reorder 2.
        let mut dpb = Dpb::default();
        dpb.set_limits(limits(2));
        let mut shown = Vec::new();
        for (ts, poc) in [(0, 0), (1, 4), (2, 2), (3, 1), (4, 3)] {
            shown.extend(dpb.make_room().output);
            shown.extend(dpb.store(ts, poc, true).output);
        }
        shown.extend(dpb.flush().output);
        assert_eq!(shown, vec![0, 3, 2, 4, 1]);
    }

    #[test]
    fn rps_keeps_named_pictures_and_finds_missing_ones() {
        let mut dpb = Dpb::default();
        dpb.set_limits(limits(0));
        for (ts, poc) in [(10, 0), (11, 1), (12, 2)] {
            dpb.make_room();
            dpb.store(ts, poc, true);
        }
        // Current POC 3: refs -1 (2) and -3 (0) used, -5 (missing) used,
        // POC 1 unnamed.
        let rps = RpsPocs::derive(
            3,
            8,
            &ShortTermRps {
                negative: vec![(-1, true), (-3, true), (-5, true)],
                positive: vec![],
            },
            &[],
        );
        let set = dpb.apply_rps(&rps, 8);
        assert_eq!(set.st_curr_before, vec![Some(12), Some(10), None]);
        assert!(set.is_missing_any());
        let mut refs = dpb.references();
        refs.sort();
        assert_eq!(refs, vec![10, 12]);
        // POC 1 was output (reorder 0) and is no reference: removed.
        assert_eq!(dpb.make_room().released, vec![11]);
    }

    #[test]
    fn long_term_by_lsb_and_full_dpb_bumps() {
        let mut dpb = Dpb::default();
        dpb.set_limits(DpbLimits::new(1, 2, 0));
        dpb.make_room();
        dpb.store(1, 17, true);
        let rps = RpsPocs::derive(
            20,
            4,
            &ShortTermRps::default(),
            &[LongTermEntry {
                poc_lsb_lt: 1,
                used_by_curr_pic: true,
                delta_poc_msb_present: false,
                delta_poc_msb_cycle_lt: 0,
            }],
        );
        let set = dpb.apply_rps(&rps, 4);
        assert_eq!(set.lt_curr, vec![Some(1)]);
        assert_eq!(dpb.pictures()[0].reference, Reference::LongTerm);
        dpb.store(2, 20, true);
        // Two pictures fill a DPB of 2: before the next picture both are
        // bumped out (C.5.2.2 repeats while the DPB is full and pictures
        // wait); both stay as references.
        let out = dpb.make_room();
        assert_eq!(out.output, vec![1, 2]);
        assert!(out.released.is_empty());
        assert_eq!(dpb.references().len(), 2);
    }

    #[test]
    fn latency_limit_is_reorder_plus_increase_minus_one() {
        assert_eq!(DpbLimits::new(4, 2, 0).max_latency_pictures, None);
        assert_eq!(DpbLimits::new(4, 2, 3).max_latency_pictures, Some(4));
        assert_eq!(DpbLimits::new(4, 2, 3).max_dec_pic_buffering, 5);
    }

    #[test]
    fn irap_outputs_or_drops_what_waits() {
        let mut dpb = Dpb::default();
        dpb.set_limits(limits(4));
        dpb.store(1, 0, true);
        dpb.store(2, 2, true);
        let out = dpb.start_irap(false);
        assert_eq!(out.output, vec![1, 2]);
        assert!(dpb.pictures().is_empty());
        dpb.store(3, 0, true);
        let out = dpb.start_irap(true);
        assert!(out.output.is_empty());
        assert_eq!(out.released, vec![3]);
    }
}
