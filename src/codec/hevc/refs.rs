//! HEVC picture order count (8.3.1) and reference picture set (8.3.2):
//! from a slice header's POC LSB and RPS to the POCs of the five RPS lists.
//! Independent of how headers are parsed: callers pass the few values the
//! derivation needs.

/// What 8.3.1 keeps between pictures: the POC of the previous TemporalId-0
/// picture that is not a RASL, RADL or sub-layer non-reference picture.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PocState {
    prev_tid0_poc: Option<i32>,
}

/// One picture's inputs to 8.3.1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PocInput {
    pub pic_order_cnt_lsb: u32,
    /// log2_max_pic_order_cnt_lsb_minus4 + 4.
    pub log2_max_poc_lsb: u32,
    /// An IRAP picture with NoRaslOutputFlag = 1 restarts the MSB at 0.
    pub irap_with_no_rasl_output: bool,
    /// TemporalId 0, not RASL, RADL or a sub-layer non-reference picture:
    /// later pictures count from this one.
    pub anchors_later_pictures: bool,
}

impl PocState {
    /// PicOrderCntVal of the picture, remembering it as prevTid0Pic when it
    /// anchors later ones.
    pub fn decode(&mut self, input: &PocInput) -> i32 {
        let max_lsb = 1i64 << input.log2_max_poc_lsb.min(16);
        let lsb = i64::from(input.pic_order_cnt_lsb) & (max_lsb - 1);
        let msb = match (input.irap_with_no_rasl_output, self.prev_tid0_poc) {
            (true, _) | (_, None) => 0,
            (false, Some(prev)) => {
                let prev = i64::from(prev);
                let prev_lsb = prev & (max_lsb - 1);
                let prev_msb = prev - prev_lsb;
                if lsb < prev_lsb && prev_lsb - lsb >= max_lsb / 2 {
                    prev_msb + max_lsb
                } else if lsb > prev_lsb && lsb - prev_lsb > max_lsb / 2 {
                    prev_msb - max_lsb
                } else {
                    prev_msb
                }
            }
        };
        // Conforming streams stay far inside i32; clamp what damage makes of it.
        let poc = (msb + lsb).clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32;
        if input.anchors_later_pictures {
            self.prev_tid0_poc = Some(poc);
        }
        poc
    }

    /// Forgets the previous picture (a seek: the next picture must be IRAP).
    pub fn reset(&mut self) {
        self.prev_tid0_poc = None;
    }
}

/// A short-term RPS as 7.4.8 derives it (after inter-RPS prediction).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ShortTermRps {
    /// DeltaPocS0 with UsedByCurrPicS0, nearest first (negative deltas).
    pub negative: Vec<(i32, bool)>,
    /// DeltaPocS1 with UsedByCurrPicS1, nearest first (positive deltas).
    pub positive: Vec<(i32, bool)>,
}

/// One long-term entry of a slice header (from the SPS candidates or the
/// header itself), as 7.4.7.1 derives PocLsbLt and DeltaPocMsbCycleLt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LongTermEntry {
    pub poc_lsb_lt: u32,
    pub used_by_curr_pic: bool,
    pub delta_poc_msb_present: bool,
    /// DeltaPocMsbCycleLt (accumulated).
    pub delta_poc_msb_cycle_lt: u32,
}

/// A long-term reference as the RPS names it: by full POC when the MSB is
/// signalled, else by its LSBs only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LongTermRef {
    pub poc: i32,
    pub msb_present: bool,
}

impl LongTermRef {
    /// Whether a picture of `poc` is the one named (8.3.2: by the LSBs of
    /// `PicOrderCntVal` when the MSB is not signalled).
    pub fn names(&self, poc: i32, log2_max_poc_lsb: u32) -> bool {
        if self.msb_present {
            poc == self.poc
        } else {
            let mask = (1i64 << log2_max_poc_lsb.min(16)) - 1;
            (i64::from(poc) & mask) == i64::from(self.poc)
        }
    }
}

/// The five lists of 8.3.2, as POCs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RpsPocs {
    pub st_curr_before: Vec<i32>,
    pub st_curr_after: Vec<i32>,
    pub st_foll: Vec<i32>,
    pub lt_curr: Vec<LongTermRef>,
    pub lt_foll: Vec<LongTermRef>,
}

impl RpsPocs {
    /// 8.3.2 for a non-IDR picture of `poc` (an IDR picture has all lists
    /// empty).
    pub fn derive(
        poc: i32,
        log2_max_poc_lsb: u32,
        short_term: &ShortTermRps,
        long_term: &[LongTermEntry],
    ) -> Self {
        let mut rps = Self::default();
        for &(delta, used) in &short_term.negative {
            let target = poc.wrapping_add(delta);
            if used {
                rps.st_curr_before.push(target);
            } else {
                rps.st_foll.push(target);
            }
        }
        for &(delta, used) in &short_term.positive {
            let target = poc.wrapping_add(delta);
            if used {
                rps.st_curr_after.push(target);
            } else {
                rps.st_foll.push(target);
            }
        }
        let max_lsb = 1i64 << log2_max_poc_lsb.min(16);
        for entry in long_term {
            let mut lt = i64::from(entry.poc_lsb_lt);
            if entry.delta_poc_msb_present {
                lt += i64::from(poc)
                    - i64::from(entry.delta_poc_msb_cycle_lt) * max_lsb
                    - (i64::from(poc) & (max_lsb - 1));
            }
            let named = LongTermRef {
                poc: lt.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32,
                msb_present: entry.delta_poc_msb_present,
            };
            if entry.used_by_curr_pic {
                rps.lt_curr.push(named);
            } else {
                rps.lt_foll.push(named);
            }
        }
        rps
    }

    /// NumPicTotalCurr without the current picture (no SCC): the pictures
    /// the current picture may reference.
    pub fn num_pic_total_curr(&self) -> usize {
        self.st_curr_before.len() + self.st_curr_after.len() + self.lt_curr.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(lsb: u32, irap: bool) -> PocInput {
        PocInput {
            pic_order_cnt_lsb: lsb,
            log2_max_poc_lsb: 4,
            irap_with_no_rasl_output: irap,
            anchors_later_pictures: true,
        }
    }

    #[test]
    fn poc_msb_follows_lsb_wraps_both_ways() {
        let mut state = PocState::default();
        assert_eq!(state.decode(&input(0, true)), 0);
        assert_eq!(state.decode(&input(6, false)), 6);
        assert_eq!(state.decode(&input(12, false)), 12);
        // 12 -> 2 is a forward wrap (difference >= 8): MSB + 16.
        assert_eq!(state.decode(&input(2, false)), 18);
        // 2 -> 14 goes back past the wrap: MSB - 16.
        assert_eq!(state.decode(&input(14, false)), 14);
        // A non-anchoring picture does not move prevTid0Pic.
        let rasl = PocInput {
            anchors_later_pictures: false,
            ..input(15, false)
        };
        assert_eq!(state.decode(&rasl), 15);
        assert_eq!(state.decode(&input(3, false)), 19);
        // An IRAP with NoRaslOutputFlag restarts the MSB.
        assert_eq!(state.decode(&input(5, true)), 5);
    }

    #[test]
    fn rps_lists_split_by_use_and_sign() {
        let st = ShortTermRps {
            negative: vec![(-1, true), (-3, false), (-4, true)],
            positive: vec![(2, true), (4, false)],
        };
        let lt = [
            LongTermEntry {
                poc_lsb_lt: 3,
                used_by_curr_pic: true,
                delta_poc_msb_present: false,
                delta_poc_msb_cycle_lt: 0,
            },
            LongTermEntry {
                poc_lsb_lt: 5,
                used_by_curr_pic: false,
                delta_poc_msb_present: true,
                delta_poc_msb_cycle_lt: 1,
            },
        ];
        // POC 40 with 16 LSB values: MSB 32, so the MSB-present entry is
        // 5 + 40 - 16 - 8 = 21.
        let rps = RpsPocs::derive(40, 4, &st, &lt);
        assert_eq!(rps.st_curr_before, vec![39, 36]);
        assert_eq!(rps.st_curr_after, vec![42]);
        assert_eq!(rps.st_foll, vec![37, 44]);
        assert_eq!(
            rps.lt_curr,
            vec![LongTermRef {
                poc: 3,
                msb_present: false
            }]
        );
        assert_eq!(
            rps.lt_foll,
            vec![LongTermRef {
                poc: 21,
                msb_present: true
            }]
        );
        assert_eq!(rps.num_pic_total_curr(), 4);
        assert!(rps.lt_curr[0].names(35, 4), "35 & 15 == 3");
        assert!(!rps.lt_curr[0].names(36, 4));
        assert!(rps.lt_foll[0].names(21, 4) && !rps.lt_foll[0].names(5, 4));
    }
}
