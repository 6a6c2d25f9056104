//! The eight reference slots (on [`RefSlots`]) and the state each keeps for
//! the frames that follow (7.20 reference frame update, 7.21 reference
//! frame loading): frame type, order hints, sizes, loop filter deltas,
//! segmentation features, global motion and film grain. Also the two
//! derivations over the slots the frame header needs: short reference
//! signalling (7.8) and the skip mode frames (5.9.22).

use crate::codec::ref_slots::RefSlots;

use super::film_grain::FilmGrainParams;
use super::frame_header::FrameType;
use super::global_motion::GmParams;
use super::params::{LoopFilterDeltas, SegmentationFeatures};
use super::sequence::SequenceHeader;
use super::{NUM_REF_FRAMES, REFS_PER_FRAME};

/// What a reference slot keeps of the frame stored in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefFrameState {
    pub frame_id: u32,
    pub frame_type: FrameType,
    pub upscaled_width: u32,
    pub frame_width: u32,
    pub frame_height: u32,
    pub render_width: u32,
    pub render_height: u32,
    pub mi_cols: u32,
    pub mi_rows: u32,
    pub order_hint: u32,
    /// `SavedOrderHints`: the order hints of this frame's references,
    /// indexed by reference frame (0, INTRA_FRAME, unused).
    pub saved_order_hints: [u32; 8],
    pub loop_filter_deltas: LoopFilterDeltas,
    pub segmentation: SegmentationFeatures,
    pub gm_params: GmParams,
    pub film_grain: FilmGrainParams,
    pub bit_depth: u8,
    pub subsampling_x: bool,
    pub subsampling_y: bool,
    /// Whether the frame may still be shown with show_existing_frame.
    pub showable_frame: bool,
}

pub type RefFrames = RefSlots<RefFrameState, NUM_REF_FRAMES>;

/// set_frame_refs() (7.8): the seven references from `last_frame_idx` and
/// `gold_frame_idx` and the slots' order hints. `None` when a slot it
/// needs is empty.
pub fn set_frame_refs(
    seq: &SequenceHeader,
    refs: &RefFrames,
    order_hint: u32,
    last_frame_idx: u8,
    gold_frame_idx: u8,
) -> Option<[u8; REFS_PER_FRAME]> {
    let bits = seq.order_hint_bits();
    let cur_frame_hint = 1i32 << (bits.max(1) - 1);
    let mut shifted = [0i32; NUM_REF_FRAMES];
    for (i, hint) in shifted.iter_mut().enumerate() {
        let slot = refs.get(i)?;
        *hint = cur_frame_hint + seq.relative_dist(slot.order_hint, order_hint);
    }
    let mut idx = [-1i32; REFS_PER_FRAME];
    let mut used = [false; NUM_REF_FRAMES];
    idx[0] = i32::from(last_frame_idx);
    idx[3] = i32::from(gold_frame_idx);
    used[usize::from(last_frame_idx)] = true;
    used[usize::from(gold_frame_idx)] = true;
    // The unused slot with the latest (or earliest) hint after (or
    // before) the current frame.
    let find = |used: &[bool; NUM_REF_FRAMES], backward: bool, latest: bool| {
        let mut best: Option<(usize, i32)> = None;
        for (i, &hint) in shifted.iter().enumerate() {
            let side = if backward {
                hint >= cur_frame_hint
            } else {
                hint < cur_frame_hint
            };
            if used[i] || !side {
                continue;
            }
            let better = match best {
                None => true,
                Some((_, b)) if latest => hint >= b,
                Some((_, b)) => hint < b,
            };
            if better {
                best = Some((i, hint));
            }
        }
        best.map(|(i, _)| i)
    };
    // ALTREF_FRAME, BWDREF_FRAME, ALTREF2_FRAME (indices from LAST_FRAME).
    for (reference, latest) in [(6, true), (4, false), (5, false)] {
        if let Some(i) = find(&used, true, latest) {
            idx[reference] = i as i32;
            used[i] = true;
        }
    }
    // LAST2, LAST3, BWDREF, ALTREF2, ALTREF.
    for reference in [1, 2, 4, 5, 6] {
        if idx[reference] < 0 {
            if let Some(i) = find(&used, false, true) {
                idx[reference] = i as i32;
                used[i] = true;
            }
        }
    }
    // Whatever is left: the slot with the earliest hint.
    let mut earliest: Option<(usize, i32)> = None;
    for (i, &hint) in shifted.iter().enumerate() {
        if earliest.is_none_or(|(_, e)| hint < e) {
            earliest = Some((i, hint));
        }
    }
    let earliest = earliest.map_or(0, |(i, _)| i as i32);
    Some(idx.map(|i| if i < 0 { earliest as u8 } else { i as u8 }))
}

/// skip_mode_params()' derivation: the two reference frames (LAST_FRAME
/// based, 1..=7) skip mode uses, or `None` when skip mode is not allowed.
pub fn skip_mode_frames(
    seq: &SequenceHeader,
    ref_order_hints: &[u32; REFS_PER_FRAME],
    order_hint: u32,
) -> Option<[u8; 2]> {
    let dist = |a: u32, b: u32| seq.relative_dist(a, b);
    let mut forward: Option<(usize, u32)> = None;
    let mut backward: Option<(usize, u32)> = None;
    for (i, &hint) in ref_order_hints.iter().enumerate() {
        let d = dist(hint, order_hint);
        if d < 0 {
            if forward.is_none_or(|(_, f)| dist(hint, f) > 0) {
                forward = Some((i, hint));
            }
        } else if d > 0 && backward.is_none_or(|(_, b)| dist(hint, b) < 0) {
            backward = Some((i, hint));
        }
    }
    let (forward_idx, forward_hint) = forward?;
    let second = match backward {
        Some((i, _)) => i,
        None => {
            let mut second: Option<(usize, u32)> = None;
            for (i, &hint) in ref_order_hints.iter().enumerate() {
                if dist(hint, forward_hint) < 0 && second.is_none_or(|(_, s)| dist(hint, s) > 0) {
                    second = Some((i, hint));
                }
            }
            second?.0
        }
    };
    let (a, b) = (forward_idx.min(second), forward_idx.max(second));
    Some([1 + a as u8, 1 + b as u8])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seq() -> SequenceHeader {
        SequenceHeader {
            enable_order_hint: true,
            order_hint_bits_minus_1: 6,
            ..SequenceHeader::default()
        }
    }

    fn slot(order_hint: u32) -> RefFrameState {
        RefFrameState {
            frame_id: 0,
            frame_type: FrameType::Inter,
            upscaled_width: 0,
            frame_width: 0,
            frame_height: 0,
            render_width: 0,
            render_height: 0,
            mi_cols: 0,
            mi_rows: 0,
            order_hint,
            saved_order_hints: [0; 8],
            loop_filter_deltas: LoopFilterDeltas::default(),
            segmentation: SegmentationFeatures::default(),
            gm_params: crate::codec::av1::global_motion::default_gm_params(),
            film_grain: FilmGrainParams::default(),
            bit_depth: 8,
            subsampling_x: true,
            subsampling_y: true,
            showable_frame: false,
        }
    }

    #[test]
    fn short_signalling_fills_the_other_references_by_order_hint() {
        // Current frame at hint 10; slots hold 9, 8, 7, 12, 11, 6, 5, 4.
        // LAST is slot 0 and GOLDEN slot 2; ALTREF takes the latest
        // backward frame (12), BWDREF the earliest (11), no backward frame
        // is left for ALTREF2; LAST2, LAST3 and ALTREF2 then take the latest
        // forward ones left (8, 6, 5).
        let mut refs = RefFrames::new();
        for (i, hint) in [9, 8, 7, 12, 11, 6, 5, 4].into_iter().enumerate() {
            refs.set(i, slot(hint));
        }
        let idx = set_frame_refs(&seq(), &refs, 10, 0, 2);
        assert_eq!(idx, Some([0, 1, 5, 2, 4, 6, 3]));
        // With an empty slot the derivation cannot be made.
        let mut partial = RefFrames::new();
        partial.set(0, slot(9));
        assert_eq!(set_frame_refs(&seq(), &partial, 10, 0, 0), None);
    }

    #[test]
    fn skip_mode_picks_nearest_forward_and_backward() {
        let s = seq();
        // Current hint 4; references at 3, 2, 1, 0 (forward) and 8 (backward).
        let hints = [3, 2, 1, 0, 8, 8, 8];
        assert_eq!(skip_mode_frames(&s, &hints, 4), Some([1, 5]));
        // No backward reference: the two nearest forward ones.
        let hints = [3, 2, 1, 0, 0, 0, 0];
        assert_eq!(skip_mode_frames(&s, &hints, 4), Some([1, 2]));
        // Only one distinct forward hint: not allowed.
        assert_eq!(skip_mode_frames(&s, &[3; 7], 4), None);
        // Hints wrap at 7 bits: 126 is before 2.
        assert_eq!(
            skip_mode_frames(&s, &[126, 1, 1, 1, 1, 1, 1], 2),
            Some([1, 2])
        );
    }
}
