//! Reference picture lists: initialisation for P and B slices, frames and
//! fields (8.2.4.2), then ref_pic_list_modification (8.2.4.3).

use std::cmp::Reverse;

use tracing::warn;

use super::dpb::{CurrentPic, Dpb, DpbPicture, PicStructure, Reference};
use super::slice::RefPicListModification;

/// One list entry: a DPB picture, and which of its fields (or the frame).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RefPic {
    pub id: u64,
    pub structure: PicStructure,
}

/// A list as the slice uses it: `None` marks "no reference picture".
pub type RefList = Vec<Option<RefPic>>;

fn frames_marked(dpb: &Dpb, r: Reference) -> impl Iterator<Item = &DpbPicture> {
    dpb.pictures().iter().filter(move |p| p.is_frame_marked(r))
}

/// Frame decoding, P slices (8.2.4.2.1): short-term by descending PicNum,
/// then long-term by ascending LongTermPicNum.
fn p_frame_list(dpb: &Dpb, cur: &CurrentPic) -> RefList {
    let mut short: Vec<&DpbPicture> = frames_marked(dpb, Reference::ShortTerm).collect();
    short.sort_by_key(|p| Reverse(p.frame_num_wrap(cur.frame_num, cur.max_frame_num)));
    let mut long: Vec<&DpbPicture> = frames_marked(dpb, Reference::LongTerm).collect();
    long.sort_by_key(|p| p.long_term_frame_idx);
    short
        .iter()
        .chain(long.iter())
        .map(|p| frame_ref(p))
        .collect()
}

fn frame_ref(p: &DpbPicture) -> Option<RefPic> {
    Some(RefPic {
        id: p.id,
        structure: PicStructure::Frame,
    })
}

/// POC ordering of B lists (8.2.4.2.3 / 8.2.4.2.4): entries before the
/// current picture by descending POC then after it by ascending POC (list
/// 0), or the reverse (list 1).
fn split_by_poc<T: Copy>(
    mut entries: Vec<(i32, T)>,
    cur_poc: i32,
    before_first: bool,
    inclusive: bool,
) -> Vec<T> {
    let is_before = |poc: i32| {
        if inclusive {
            poc <= cur_poc
        } else {
            poc < cur_poc
        }
    };
    entries.sort_by_key(|&(poc, _)| poc);
    let before: Vec<T> = entries
        .iter()
        .rev()
        .filter(|(poc, _)| is_before(*poc))
        .map(|&(_, e)| e)
        .collect();
    let after: Vec<T> = entries
        .iter()
        .filter(|(poc, _)| !is_before(*poc))
        .map(|&(_, e)| e)
        .collect();
    if before_first {
        before.into_iter().chain(after).collect()
    } else {
        after.into_iter().chain(before).collect()
    }
}

/// Frame decoding, B slices (8.2.4.2.3).
fn b_frame_lists(dpb: &Dpb, cur_poc: i32) -> (RefList, RefList) {
    let short: Vec<(i32, &DpbPicture)> = frames_marked(dpb, Reference::ShortTerm)
        .map(|p| (p.top.poc.min(p.bottom.poc), p))
        .collect();
    let mut long: Vec<&DpbPicture> = frames_marked(dpb, Reference::LongTerm).collect();
    long.sort_by_key(|p| p.long_term_frame_idx);
    let l0 = split_by_poc(short.clone(), cur_poc, true, false);
    let l1 = split_by_poc(short, cur_poc, false, false);
    let finish = |list: Vec<&DpbPicture>| -> RefList {
        list.iter()
            .chain(long.iter())
            .map(|p| frame_ref(p))
            .collect()
    };
    (finish(l0), finish(l1))
}

/// 8.2.4.2.5: fields from an ordered list of frames, alternating parity,
/// starting with the current field's; fields not marked `r` are skipped.
fn alternate_fields(frames: &[&DpbPicture], cur: PicStructure, r: Reference) -> RefList {
    let available =
        |p: &DpbPicture, s: PicStructure| p.field(s).decoded && p.field(s).reference == r;
    let same: Vec<RefPic> = frames
        .iter()
        .filter(|p| available(p, cur))
        .map(|p| RefPic {
            id: p.id,
            structure: cur,
        })
        .collect();
    let opposite: Vec<RefPic> = frames
        .iter()
        .filter(|p| available(p, cur.opposite()))
        .map(|p| RefPic {
            id: p.id,
            structure: cur.opposite(),
        })
        .collect();
    let mut out = Vec::with_capacity(same.len() + opposite.len());
    let (mut a, mut b) = (same.into_iter(), opposite.into_iter());
    loop {
        match (a.next(), b.next()) {
            (None, None) => break,
            (x, y) => out.extend(x.into_iter().chain(y).map(Some)),
        }
    }
    out
}

fn long_term_frames(dpb: &Dpb) -> Vec<&DpbPicture> {
    let mut long: Vec<&DpbPicture> = dpb
        .pictures()
        .iter()
        .filter(|p| p.has_field_marked(Reference::LongTerm))
        .collect();
    long.sort_by_key(|p| p.long_term_frame_idx);
    long
}

/// Field decoding, P slices (8.2.4.2.2).
fn p_field_list(dpb: &Dpb, cur: &CurrentPic) -> RefList {
    let mut short: Vec<&DpbPicture> = dpb
        .pictures()
        .iter()
        .filter(|p| p.has_field_marked(Reference::ShortTerm))
        .collect();
    short.sort_by_key(|p| Reverse(p.frame_num_wrap(cur.frame_num, cur.max_frame_num)));
    let mut list = alternate_fields(&short, cur.structure, Reference::ShortTerm);
    list.extend(alternate_fields(
        &long_term_frames(dpb),
        cur.structure,
        Reference::LongTerm,
    ));
    list
}

/// Field decoding, B slices (8.2.4.2.4): frames ordered by the POC of their
/// short-term fields, then split into fields.
fn b_field_lists(dpb: &Dpb, cur: &CurrentPic, cur_poc: i32) -> (RefList, RefList) {
    let short: Vec<(i32, &DpbPicture)> = dpb
        .pictures()
        .iter()
        .filter(|p| p.has_field_marked(Reference::ShortTerm))
        .map(|p| {
            let poc = [&p.top, &p.bottom]
                .iter()
                .filter(|f| f.decoded && f.reference == Reference::ShortTerm)
                .map(|f| f.poc)
                .min()
                .unwrap_or(0);
            (poc, p)
        })
        .collect();
    let f0 = split_by_poc(short.clone(), cur_poc, true, true);
    let f1 = split_by_poc(short, cur_poc, false, true);
    let long = long_term_frames(dpb);
    let build = |frames: Vec<&DpbPicture>| {
        let mut list = alternate_fields(&frames, cur.structure, Reference::ShortTerm);
        list.extend(alternate_fields(&long, cur.structure, Reference::LongTerm));
        list
    };
    (build(f0), build(f1))
}

/// The initial lists of a slice (8.2.4.2), before truncation to the active
/// sizes. `cur_poc` is PicOrderCnt(CurrPic).
pub fn initial_lists(dpb: &Dpb, cur: &CurrentPic, is_b: bool, cur_poc: i32) -> (RefList, RefList) {
    if !is_b {
        let l0 = if cur.structure.is_field() {
            p_field_list(dpb, cur)
        } else {
            p_frame_list(dpb, cur)
        };
        return (l0, Vec::new());
    }
    let (l0, mut l1) = if cur.structure.is_field() {
        b_field_lists(dpb, cur, cur_poc)
    } else {
        b_frame_lists(dpb, cur_poc)
    };
    if l1.len() > 1 && l0 == l1 {
        l1.swap(0, 1);
    }
    (l0, l1)
}

/// PicNum of a short-term entry, or None (8.2.4.1).
fn pic_num(dpb: &Dpb, cur: &CurrentPic, r: &RefPic) -> Option<i32> {
    let p = dpb.get(r.id)?;
    let wrap = p.frame_num_wrap(cur.frame_num, cur.max_frame_num);
    match r.structure {
        PicStructure::Frame => p.is_frame_marked(Reference::ShortTerm).then_some(wrap),
        s => (p.field(s).reference == Reference::ShortTerm).then_some(if s == cur.structure {
            2 * wrap + 1
        } else {
            2 * wrap
        }),
    }
}

/// LongTermPicNum of a long-term entry, or None.
fn long_term_pic_num(dpb: &Dpb, cur: &CurrentPic, r: &RefPic) -> Option<i32> {
    let p = dpb.get(r.id)?;
    let idx = p.long_term_frame_idx as i32;
    match r.structure {
        PicStructure::Frame => p.is_frame_marked(Reference::LongTerm).then_some(idx),
        s => (p.field(s).reference == Reference::LongTerm).then_some(if s == cur.structure {
            2 * idx + 1
        } else {
            2 * idx
        }),
    }
}

fn find_by_pic_num(dpb: &Dpb, cur: &CurrentPic, target: i32, long_term: bool) -> Option<RefPic> {
    let (structure, _) = cur.split_pic_num(target);
    dpb.pictures()
        .iter()
        .map(|p| RefPic {
            id: p.id,
            structure,
        })
        .find(|r| {
            if long_term {
                long_term_pic_num(dpb, cur, r) == Some(target)
            } else {
                pic_num(dpb, cur, r) == Some(target)
            }
        })
}

/// Applies ref_pic_list_modification (8.2.4.3) to a list, then sizes it to
/// `num_active` entries (missing ones are None).
pub fn modify_list(
    dpb: &Dpb,
    cur: &CurrentPic,
    mut list: RefList,
    ops: &[RefPicListModification],
    num_active: usize,
) -> RefList {
    list.resize(num_active, None);
    let max_pic_num = cur.max_pic_num();
    let curr_pic_num = cur.pic_num();
    let mut pred = curr_pic_num;
    for (ref_idx, op) in ops.iter().enumerate().take(num_active) {
        let (target, long_term) = match *op {
            RefPicListModification::SubtractShortTerm(d)
            | RefPicListModification::AddShortTerm(d) => {
                let abs = d as i32 + 1;
                let mut no_wrap = if matches!(op, RefPicListModification::SubtractShortTerm(_)) {
                    pred - abs
                } else {
                    pred + abs
                };
                if no_wrap < 0 {
                    no_wrap += max_pic_num;
                } else if no_wrap >= max_pic_num {
                    no_wrap -= max_pic_num;
                }
                pred = no_wrap;
                let pic_num = if no_wrap > curr_pic_num {
                    no_wrap - max_pic_num
                } else {
                    no_wrap
                };
                (pic_num, false)
            }
            RefPicListModification::LongTerm(n) => (n as i32, true),
        };
        let Some(found) = find_by_pic_num(dpb, cur, target, long_term) else {
            warn!(
                target,
                long_term, "ref_pic_list_modification names a missing picture"
            );
            list.insert(ref_idx, None);
            list.truncate(num_active);
            continue;
        };
        list.insert(ref_idx, Some(found));
        // Drop the later duplicate of the inserted picture (8-37, 8-38).
        let mut n = ref_idx + 1;
        for c in ref_idx + 1..list.len() {
            let duplicate = list[c].is_some_and(|r| {
                if long_term {
                    long_term_pic_num(dpb, cur, &r) == Some(target)
                } else {
                    pic_num(dpb, cur, &r) == Some(target)
                }
            });
            if !duplicate {
                list[n] = list[c];
                n += 1;
            }
        }
        list.truncate(n.max(ref_idx + 1));
        list.resize(num_active, None);
    }
    list.truncate(num_active);
    list
}
