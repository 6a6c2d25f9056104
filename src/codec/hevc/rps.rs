//! Short-term reference picture sets: st_ref_pic_set() (7.3.7) and the
//! derivation of its delta POCs (7.4.8), inter-RPS prediction included.

/// Most pictures one short-term RPS can list (MaxDpbSize - 1 is 15; the
/// arrays have room for 16 as V4L2's do).
pub const MAX_ST_REFS: usize = 16;

/// One st_ref_pic_set(stRpsIdx): the syntax as coded and the derived sets.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StRefPicSet {
    pub inter_ref_pic_set_prediction_flag: bool,
    /// Coded only in a slice header (stRpsIdx == num_short_term_ref_pic_sets).
    pub delta_idx_minus1: u8,
    pub delta_rps_sign: bool,
    pub abs_delta_rps_minus1: u16,
    /// used_by_curr_pic_flag[j] (inter prediction), bit j, j <= NumDeltaPocs
    /// of the reference set.
    pub used_by_curr_pic_flags: u32,
    /// use_delta_flag[j] (inter prediction; 1 when not coded), bit j.
    pub use_delta_flags: u32,
    /// NumNegativePics (7-61 / 7-63): coded or derived.
    pub num_negative_pics: u8,
    /// NumPositivePics.
    pub num_positive_pics: u8,
    /// DeltaPocS0[i], i < num_negative_pics: negative, decreasing.
    pub delta_poc_s0: [i32; MAX_ST_REFS],
    /// UsedByCurrPicS0[i].
    pub used_by_curr_pic_s0: [bool; MAX_ST_REFS],
    /// DeltaPocS1[i], i < num_positive_pics: positive, increasing.
    pub delta_poc_s1: [i32; MAX_ST_REFS],
    /// UsedByCurrPicS1[i].
    pub used_by_curr_pic_s1: [bool; MAX_ST_REFS],
}

impl StRefPicSet {
    /// NumDeltaPocs (7-71).
    pub fn num_delta_pocs(&self) -> usize {
        usize::from(self.num_negative_pics) + usize::from(self.num_positive_pics)
    }

    /// Pictures of this set the current picture refers to (its share of
    /// NumPicTotalCurr, 7-55).
    pub fn num_used_by_curr(&self) -> usize {
        let s0 = &self.used_by_curr_pic_s0[..usize::from(self.num_negative_pics)];
        let s1 = &self.used_by_curr_pic_s1[..usize::from(self.num_positive_pics)];
        s0.iter().chain(s1).filter(|&&u| u).count()
    }
}

use crate::codec::bitstream::BitReader;

use super::HevcError;

/// Appends (delta POC, used) to one derived list, refusing a 17th entry.
fn push(
    deltas: &mut [i32; MAX_ST_REFS],
    used: &mut [bool; MAX_ST_REFS],
    count: &mut usize,
    delta: i32,
    is_used: bool,
) -> Result<(), HevcError> {
    if *count == MAX_ST_REFS {
        return Err(HevcError::Invalid(
            "a short-term reference picture set lists more than 16 pictures",
        ));
    }
    deltas[*count] = delta;
    used[*count] = is_used;
    *count += 1;
    Ok(())
}

impl StRefPicSet {
    /// st_ref_pic_set(stRpsIdx) (7.3.7): `earlier` holds the SPS's sets
    /// 0..stRpsIdx (all of them for a set coded in a slice header, where
    /// stRpsIdx is num_short_term_ref_pic_sets).
    pub fn parse(
        r: &mut BitReader,
        st_rps_idx: usize,
        num_short_term_ref_pic_sets: usize,
        earlier: &[StRefPicSet],
    ) -> Result<Self, HevcError> {
        let mut s = StRefPicSet::default();
        if st_rps_idx != 0 {
            s.inter_ref_pic_set_prediction_flag = r.flag("inter_ref_pic_set_prediction_flag")?;
        }
        if !s.inter_ref_pic_set_prediction_flag {
            s.num_negative_pics = r.ue_max("num_negative_pics", 15)? as u8;
            s.num_positive_pics =
                r.ue_max("num_positive_pics", 15 - u32::from(s.num_negative_pics))? as u8;
            let mut poc = 0i32;
            for i in 0..usize::from(s.num_negative_pics) {
                poc -= r.ue_max("delta_poc_s0_minus1", 32767)? as i32 + 1;
                s.delta_poc_s0[i] = poc;
                s.used_by_curr_pic_s0[i] = r.flag("used_by_curr_pic_s0_flag")?;
            }
            poc = 0;
            for i in 0..usize::from(s.num_positive_pics) {
                poc += r.ue_max("delta_poc_s1_minus1", 32767)? as i32 + 1;
                s.delta_poc_s1[i] = poc;
                s.used_by_curr_pic_s1[i] = r.flag("used_by_curr_pic_s1_flag")?;
            }
            return Ok(s);
        }

        if st_rps_idx == num_short_term_ref_pic_sets {
            s.delta_idx_minus1 = r.ue_max("delta_idx_minus1", st_rps_idx as u32 - 1)? as u8;
        }
        let reference = st_rps_idx
            .checked_sub(usize::from(s.delta_idx_minus1) + 1)
            .and_then(|i| earlier.get(i))
            .ok_or(HevcError::Invalid(
                "inter-RPS prediction from a set that does not exist",
            ))?;
        s.delta_rps_sign = r.flag("delta_rps_sign")?;
        s.abs_delta_rps_minus1 = r.ue_max("abs_delta_rps_minus1", 32767)? as u16;
        let delta_rps =
            (1 - 2 * i32::from(s.delta_rps_sign)) * (i32::from(s.abs_delta_rps_minus1) + 1);
        let num_delta_pocs = reference.num_delta_pocs();
        for j in 0..=num_delta_pocs {
            let used = r.flag("used_by_curr_pic_flag")?;
            let use_delta = used || r.flag("use_delta_flag")?;
            s.used_by_curr_pic_flags |= u32::from(used) << j;
            s.use_delta_flags |= u32::from(use_delta) << j;
        }
        let used = |j: usize| s.used_by_curr_pic_flags & (1 << j) != 0;
        let use_delta = |j: usize| s.use_delta_flags & (1 << j) != 0;
        let ref_neg = usize::from(reference.num_negative_pics);
        let ref_pos = usize::from(reference.num_positive_pics);

        // (7-61): the negative side, closest first.
        let (mut s0, mut used0, mut n0) = ([0; MAX_ST_REFS], [false; MAX_ST_REFS], 0);
        for j in (0..ref_pos).rev() {
            let d = reference.delta_poc_s1[j] + delta_rps;
            if d < 0 && use_delta(ref_neg + j) {
                push(&mut s0, &mut used0, &mut n0, d, used(ref_neg + j))?;
            }
        }
        if delta_rps < 0 && use_delta(num_delta_pocs) {
            push(
                &mut s0,
                &mut used0,
                &mut n0,
                delta_rps,
                used(num_delta_pocs),
            )?;
        }
        for j in 0..ref_neg {
            let d = reference.delta_poc_s0[j] + delta_rps;
            if d < 0 && use_delta(j) {
                push(&mut s0, &mut used0, &mut n0, d, used(j))?;
            }
        }
        // (7-62): the positive side.
        let (mut s1, mut used1, mut n1) = ([0; MAX_ST_REFS], [false; MAX_ST_REFS], 0);
        for j in (0..ref_neg).rev() {
            let d = reference.delta_poc_s0[j] + delta_rps;
            if d > 0 && use_delta(j) {
                push(&mut s1, &mut used1, &mut n1, d, used(j))?;
            }
        }
        if delta_rps > 0 && use_delta(num_delta_pocs) {
            push(
                &mut s1,
                &mut used1,
                &mut n1,
                delta_rps,
                used(num_delta_pocs),
            )?;
        }
        for j in 0..ref_pos {
            let d = reference.delta_poc_s1[j] + delta_rps;
            if d > 0 && use_delta(ref_neg + j) {
                push(&mut s1, &mut used1, &mut n1, d, used(ref_neg + j))?;
            }
        }
        if n0 + n1 > 15 {
            return Err(HevcError::Invalid(
                "a short-term reference picture set lists more than 15 pictures",
            ));
        }
        s.num_negative_pics = n0 as u8;
        s.num_positive_pics = n1 as u8;
        s.delta_poc_s0 = s0;
        s.used_by_curr_pic_s0 = used0;
        s.delta_poc_s1 = s1;
        s.used_by_curr_pic_s1 = used1;
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::codec::bitstream::reader::BitWriter;

    #[test]
    fn explicit_and_predicted_sets() {
        let mut w = BitWriter::new();
        // Set 0: S0 = {-1, -3} used, S1 = {2} used.
        w.ue(2);
        w.ue(1);
        w.ue(0);
        w.bit(true);
        w.ue(1);
        w.bit(true);
        w.ue(1);
        w.bit(true);
        // Set 1 predicted from set 0 with deltaRps = -1: candidates
        // -2, -4, +1 and deltaRps itself; drop -4 (use_delta 0).
        w.bit(true); // inter_ref_pic_set_prediction_flag
        w.bit(true); // delta_rps_sign
        w.ue(0); // abs_delta_rps_minus1
        w.bit(true); // j 0 (-1 → -2) used
        w.bit(false); // j 1 (-3 → -4) not used ...
        w.bit(false); // ... and not kept
        w.bit(true); // j 2 (+2 → +1) used
        w.bit(false); // j 3 (deltaRps -1) not used ...
        w.bit(true); // ... but kept
        w.trailing();
        let mut r = BitReader::new(&w.bytes);
        let set0 = StRefPicSet::parse(&mut r, 0, 2, &[]).unwrap();
        assert_eq!((set0.num_negative_pics, set0.num_positive_pics), (2, 1));
        assert_eq!(set0.delta_poc_s0[..2], [-1, -3]);
        assert_eq!(set0.delta_poc_s1[..1], [2]);
        let set1 = StRefPicSet::parse(&mut r, 1, 2, &[set0]).unwrap();
        assert_eq!((set1.num_negative_pics, set1.num_positive_pics), (2, 1));
        assert_eq!(set1.delta_poc_s0[..2], [-1, -2]);
        assert_eq!(set1.used_by_curr_pic_s0[..2], [false, true]);
        assert_eq!(set1.delta_poc_s1[..1], [1]);
        assert_eq!(set1.num_used_by_curr(), 2);
    }

    #[test]
    fn prediction_from_a_missing_set_is_an_error() {
        let mut w = BitWriter::new();
        w.bit(true);
        w.ue(3); // delta_idx_minus1 beyond the sets there are
        w.trailing();
        let mut r = BitReader::new(&w.bytes);
        assert!(StRefPicSet::parse(&mut r, 1, 1, &[]).is_err());
    }
}
