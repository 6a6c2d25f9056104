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
