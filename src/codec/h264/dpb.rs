//! The decoded picture buffer: reference marking (8.2.5: sliding window,
//! memory management operations 1-6, IDR, frame_num gaps) and output order
//! (C.4: removal, bumping, max_num_reorder_frames).
//!
//! An entry holds a frame, a complementary field pair, or a single field,
//! like one frame buffer of the spec's DPB.

use tracing::warn;

use crate::codec::access_unit::DpbOutput;

use super::slice::{DecRefPicMarking, Mmco};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reference {
    Unused,
    ShortTerm,
    LongTerm,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PicStructure {
    Frame,
    TopField,
    BottomField,
}

impl PicStructure {
    pub fn is_field(self) -> bool {
        self != Self::Frame
    }

    pub fn opposite(self) -> Self {
        match self {
            Self::Frame => Self::Frame,
            Self::TopField => Self::BottomField,
            Self::BottomField => Self::TopField,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldState {
    pub decoded: bool,
    pub poc: i32,
    pub reference: Reference,
}

impl FieldState {
    const EMPTY: Self = Self {
        decoded: false,
        poc: 0,
        reference: Reference::Unused,
    };
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DpbPicture {
    /// Unique within one `Dpb`: how reference lists name pictures.
    pub id: u64,
    /// The caller's timestamp: the V4L2 CAPTURE buffer holding the picture.
    pub timestamp_ns: u64,
    pub frame_num: u32,
    pub long_term_frame_idx: u32,
    pub top: FieldState,
    pub bottom: FieldState,
    /// Decoded as field pictures (as opposed to a frame, MBAFF or not).
    pub field_coded: bool,
    pub needed_for_output: bool,
    /// Inferred for a frame_num gap: a reference with no pixels.
    pub non_existing: bool,
}

impl DpbPicture {
    pub fn field(&self, s: PicStructure) -> &FieldState {
        match s {
            PicStructure::BottomField => &self.bottom,
            _ => &self.top,
        }
    }

    fn field_mut(&mut self, s: PicStructure) -> &mut FieldState {
        match s {
            PicStructure::BottomField => &mut self.bottom,
            _ => &mut self.top,
        }
    }

    fn fields(&self) -> [&FieldState; 2] {
        [&self.top, &self.bottom]
    }

    pub fn is_complete(&self) -> bool {
        self.top.decoded && self.bottom.decoded
    }

    pub fn is_reference(&self) -> bool {
        self.fields()
            .iter()
            .any(|f| f.reference != Reference::Unused)
    }

    pub fn has_field_marked(&self, r: Reference) -> bool {
        self.fields().iter().any(|f| f.decoded && f.reference == r)
    }

    /// Both fields marked `r`: a reference frame or complementary pair.
    pub fn is_frame_marked(&self, r: Reference) -> bool {
        self.fields().iter().all(|f| f.decoded && f.reference == r)
    }

    /// The count that orders output: PicOrderCnt of the frame or pair, or of
    /// the single field.
    pub fn output_poc(&self) -> i32 {
        match (self.top.decoded, self.bottom.decoded) {
            (true, true) => self.top.poc.min(self.bottom.poc),
            (false, true) => self.bottom.poc,
            _ => self.top.poc,
        }
    }

    /// FrameNumWrap (8-27).
    pub fn frame_num_wrap(&self, current_frame_num: u32, max_frame_num: u32) -> i32 {
        if self.frame_num > current_frame_num {
            self.frame_num as i32 - max_frame_num as i32
        } else {
            self.frame_num as i32
        }
    }

    fn unmark(&mut self) {
        self.top.reference = Reference::Unused;
        self.bottom.reference = Reference::Unused;
    }
}

/// The picture being decoded, as marking and list construction see it.
#[derive(Debug, Clone, Copy)]
pub struct CurrentPic {
    pub structure: PicStructure,
    pub frame_num: u32,
    pub max_frame_num: u32,
    /// The DPB entry of its first field, when it is a second field.
    pub first_field_id: Option<u64>,
}

impl CurrentPic {
    /// CurrPicNum (7-xx): frame_num for frames, 2 * frame_num + 1 for fields.
    pub fn pic_num(&self) -> i32 {
        if self.structure.is_field() {
            2 * self.frame_num as i32 + 1
        } else {
            self.frame_num as i32
        }
    }

    /// MaxPicNum.
    pub fn max_pic_num(&self) -> i32 {
        if self.structure.is_field() {
            2 * self.max_frame_num as i32
        } else {
            self.max_frame_num as i32
        }
    }

    /// Which field (or frame) of an entry a field PicNum / LongTermPicNum
    /// names, and the frame-level number (FrameNumWrap / LongTermFrameIdx).
    pub fn split_pic_num(&self, pic_num: i32) -> (PicStructure, i32) {
        if self.structure.is_field() {
            let parity = if pic_num & 1 == 1 {
                self.structure
            } else {
                self.structure.opposite()
            };
            (parity, pic_num >> 1)
        } else {
            (PicStructure::Frame, pic_num)
        }
    }
}

/// How the current picture ends up marked (8.2.5.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CurrentMarking {
    pub reference: Reference,
    pub long_term_frame_idx: u32,
    pub mmco5: bool,
}

#[derive(Debug, Clone)]
pub struct Dpb {
    pictures: Vec<DpbPicture>,
    max_frames: usize,
    max_num_reorder: usize,
    max_num_ref_frames: usize,
    /// MaxLongTermFrameIdx; None is "no long-term frame indices".
    max_long_term_frame_idx: Option<u32>,
    next_id: u64,
}

impl Default for Dpb {
    fn default() -> Self {
        Self::new(16, 16, 16)
    }
}

impl Dpb {
    pub fn new(max_frames: usize, max_num_reorder: usize, max_num_ref_frames: usize) -> Self {
        Self {
            pictures: Vec::new(),
            max_frames: max_frames.clamp(1, 16),
            max_num_reorder,
            max_num_ref_frames,
            max_long_term_frame_idx: None,
            next_id: 0,
        }
    }

    /// New limits from a newly activated SPS (applies from the next IDR on).
    pub fn set_limits(
        &mut self,
        max_frames: usize,
        max_num_reorder: usize,
        max_num_ref_frames: usize,
    ) {
        self.max_frames = max_frames.clamp(1, 16);
        self.max_num_reorder = max_num_reorder;
        self.max_num_ref_frames = max_num_ref_frames;
    }

    pub fn max_frames(&self) -> usize {
        self.max_frames
    }

    /// Pictures in storage order (the order V4L2's DPB array follows).
    pub fn pictures(&self) -> &[DpbPicture] {
        &self.pictures
    }

    pub fn get(&self, id: u64) -> Option<&DpbPicture> {
        self.pictures.iter().find(|p| p.id == id)
    }

    pub fn max_long_term_frame_idx(&self) -> Option<u32> {
        self.max_long_term_frame_idx
    }

    fn allocate_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// Drops everything without output (a seek): returns the buffers freed.
    pub fn clear(&mut self) -> Vec<u64> {
        self.max_long_term_frame_idx = None;
        self.pictures
            .drain(..)
            .filter(|p| !p.non_existing)
            .map(|p| p.timestamp_ns)
            .collect()
    }

    /// Outputs every picture waiting, then empties the DPB (end of stream,
    /// IDR, memory_management_control_operation 5).
    pub fn flush(&mut self) -> DpbOutput {
        let mut out = DpbOutput::default();
        while self.bump(&mut out) {}
        out.released.extend(self.clear());
        out
    }

    /// C.4.4 for an IDR picture, before it is decoded: prior pictures are
    /// output (or dropped when `no_output_of_prior_pics`) and removed.
    pub fn start_idr(&mut self, no_output_of_prior_pics: bool) -> DpbOutput {
        if no_output_of_prior_pics {
            DpbOutput {
                output: Vec::new(),
                released: self.clear(),
            }
        } else {
            self.flush()
        }
    }

    /// Outputs the waiting picture with the smallest POC; removes it if it
    /// is no reference. False when nothing waits.
    fn bump(&mut self, out: &mut DpbOutput) -> bool {
        let Some(i) = self
            .pictures
            .iter()
            .enumerate()
            .filter(|(_, p)| p.needed_for_output)
            .min_by_key(|(_, p)| p.output_poc())
            .map(|(i, _)| i)
        else {
            return false;
        };
        let p = &mut self.pictures[i];
        p.needed_for_output = false;
        out.output.push(p.timestamp_ns);
        if !p.is_reference() {
            let p = self.pictures.remove(i);
            out.released.push(p.timestamp_ns);
        }
        true
    }

    /// Removes pictures neither waiting for output nor used for reference.
    fn remove_unused(&mut self, out: &mut DpbOutput) {
        self.pictures.retain(|p| {
            let keep = p.needed_for_output || p.is_reference();
            if !keep && !p.non_existing {
                out.released.push(p.timestamp_ns);
            }
            keep
        });
    }

    /// 8.2.5.2: frames inferred for the frame_num values skipped between the
    /// previous reference picture and this one (at most max_num_ref_frames
    /// of them matter: the sliding window would drop the others).
    pub fn fill_frame_num_gap(
        &mut self,
        prev_ref_frame_num: u32,
        frame_num: u32,
        max_frame_num: u32,
    ) -> DpbOutput {
        let mut out = DpbOutput::default();
        let prev_ref_frame_num = prev_ref_frame_num % max_frame_num;
        let gap = (frame_num + max_frame_num - prev_ref_frame_num - 1) % max_frame_num;
        let keep = (self.max_num_ref_frames.max(1) as u32).min(gap);
        for k in (gap - keep)..gap {
            let unused_frame_num = (prev_ref_frame_num + 1 + k) % max_frame_num;
            let current = CurrentPic {
                structure: PicStructure::Frame,
                frame_num: unused_frame_num,
                max_frame_num,
                first_field_id: None,
            };
            self.sliding_window(&current);
            self.remove_unused(&mut out);
            let id = self.allocate_id();
            let field = FieldState {
                decoded: true,
                poc: 0,
                reference: Reference::ShortTerm,
            };
            self.pictures.push(DpbPicture {
                id,
                timestamp_ns: 0,
                frame_num: unused_frame_num,
                long_term_frame_idx: 0,
                top: field,
                bottom: field,
                field_coded: false,
                needed_for_output: false,
                non_existing: true,
            });
        }
        out
    }

    /// 8.2.5.3. Skipped for the second field of a pair whose first field is
    /// a short-term reference (the pair is one frame of the window).
    fn sliding_window(&mut self, current: &CurrentPic) {
        let counted = |p: &DpbPicture| Some(p.id) != current.first_field_id && p.is_reference();
        let num_refs = self.pictures.iter().filter(|p| counted(p)).count();
        if num_refs < self.max_num_ref_frames.max(1) {
            return;
        }
        let oldest = self
            .pictures
            .iter_mut()
            .filter(|p| {
                Some(p.id) != current.first_field_id && p.has_field_marked(Reference::ShortTerm)
            })
            .min_by_key(|p| p.frame_num_wrap(current.frame_num, current.max_frame_num));
        if let Some(p) = oldest {
            p.unmark();
        }
    }

    /// Marks the DPB's pictures for the current picture's
    /// dec_ref_pic_marking() and says how the current picture is marked.
    /// `marking` is None for a non-reference picture.
    pub fn mark(
        &mut self,
        current: &CurrentPic,
        idr: bool,
        marking: Option<&DecRefPicMarking>,
    ) -> CurrentMarking {
        let mut result = CurrentMarking {
            reference: Reference::Unused,
            long_term_frame_idx: 0,
            mmco5: false,
        };
        let Some(marking) = marking else {
            return result;
        };
        result.reference = Reference::ShortTerm;
        if idr {
            // The first field of an IDR pair stays: it is the same picture.
            for p in &mut self.pictures {
                if Some(p.id) != current.first_field_id {
                    p.unmark();
                }
            }
            if marking.long_term_reference_flag {
                result.reference = Reference::LongTerm;
                self.max_long_term_frame_idx = Some(0);
            } else {
                self.max_long_term_frame_idx = None;
            }
            return result;
        }
        match &marking.adaptive {
            None => {
                let first_is_short = current
                    .first_field_id
                    .and_then(|id| self.get(id))
                    .is_some_and(|p| p.has_field_marked(Reference::ShortTerm));
                if !first_is_short {
                    self.sliding_window(current);
                }
            }
            Some(ops) => {
                for op in ops {
                    self.apply_mmco(current, op, &mut result);
                }
            }
        }
        // Tolerance for streams that keep more references than they declare.
        let first = current.first_field_id;
        let refs = self
            .pictures
            .iter()
            .filter(|p| Some(p.id) != first && p.is_reference())
            .count();
        if refs >= self.max_num_ref_frames.max(1) && first.is_none() {
            warn!(
                refs,
                max = self.max_num_ref_frames,
                "more reference frames than max_num_ref_frames"
            );
            self.sliding_window(current);
        }
        result
    }

    fn find_short_term(&self, current: &CurrentPic, pic_num: i32) -> Option<(usize, PicStructure)> {
        let (parity, wrap) = current.split_pic_num(pic_num);
        let i = self.pictures.iter().position(|p| {
            p.frame_num_wrap(current.frame_num, current.max_frame_num) == wrap
                && match parity {
                    PicStructure::Frame => p.is_frame_marked(Reference::ShortTerm),
                    s => p.field(s).decoded && p.field(s).reference == Reference::ShortTerm,
                }
        })?;
        Some((i, parity))
    }

    fn find_long_term(
        &self,
        current: &CurrentPic,
        long_term_pic_num: i32,
    ) -> Option<(usize, PicStructure)> {
        let (parity, idx) = current.split_pic_num(long_term_pic_num);
        let i = self.pictures.iter().position(|p| {
            p.long_term_frame_idx as i32 == idx
                && match parity {
                    PicStructure::Frame => p.is_frame_marked(Reference::LongTerm),
                    s => p.field(s).decoded && p.field(s).reference == Reference::LongTerm,
                }
        })?;
        Some((i, parity))
    }

    fn set_reference(&mut self, i: usize, s: PicStructure, r: Reference) {
        let p = &mut self.pictures[i];
        match s {
            PicStructure::Frame => {
                p.top.reference = r;
                p.bottom.reference = r;
            }
            s => p.field_mut(s).reference = r,
        }
    }

    /// Unmarks long-term pictures holding `idx`, except the entry `keep`.
    fn free_long_term_idx(&mut self, idx: u32, keep: Option<u64>) {
        for p in &mut self.pictures {
            if Some(p.id) != keep
                && p.long_term_frame_idx == idx
                && p.has_field_marked(Reference::LongTerm)
            {
                for f in [&mut p.top, &mut p.bottom] {
                    if f.reference == Reference::LongTerm {
                        f.reference = Reference::Unused;
                    }
                }
            }
        }
    }

    fn apply_mmco(&mut self, current: &CurrentPic, op: &Mmco, result: &mut CurrentMarking) {
        let pic_num_x = |diff: u32| current.pic_num() - (diff as i32 + 1);
        match *op {
            Mmco::ForgetShortTerm {
                difference_of_pic_nums_minus1,
            } => match self.find_short_term(current, pic_num_x(difference_of_pic_nums_minus1)) {
                Some((i, s)) => self.set_reference(i, s, Reference::Unused),
                None => warn!("MMCO 1 names no short-term picture"),
            },
            Mmco::ForgetLongTerm { long_term_pic_num } => {
                match self.find_long_term(current, long_term_pic_num as i32) {
                    Some((i, s)) => self.set_reference(i, s, Reference::Unused),
                    None => warn!("MMCO 2 names no long-term picture"),
                }
            }
            Mmco::ShortToLongTerm {
                difference_of_pic_nums_minus1,
                long_term_frame_idx,
            } => {
                let Some((i, s)) =
                    self.find_short_term(current, pic_num_x(difference_of_pic_nums_minus1))
                else {
                    warn!("MMCO 3 names no short-term picture");
                    return;
                };
                let id = self.pictures[i].id;
                // The other field of the same frame may keep the index.
                let same_frame_keeps_idx =
                    self.pictures[i].long_term_frame_idx == long_term_frame_idx;
                self.free_long_term_idx(long_term_frame_idx, same_frame_keeps_idx.then_some(id));
                if !same_frame_keeps_idx {
                    // A different index on the other field cannot stay.
                    let p = &mut self.pictures[i];
                    for f in [&mut p.top, &mut p.bottom] {
                        if f.reference == Reference::LongTerm {
                            f.reference = Reference::Unused;
                        }
                    }
                }
                self.pictures[i].long_term_frame_idx = long_term_frame_idx;
                self.set_reference(i, s, Reference::LongTerm);
            }
            Mmco::SetMaxLongTermIdx {
                max_long_term_frame_idx_plus1,
            } => {
                self.max_long_term_frame_idx = max_long_term_frame_idx_plus1.checked_sub(1);
                let max = self.max_long_term_frame_idx;
                for p in &mut self.pictures {
                    if p.has_field_marked(Reference::LongTerm)
                        && max.is_none_or(|m| p.long_term_frame_idx > m)
                    {
                        for f in [&mut p.top, &mut p.bottom] {
                            if f.reference == Reference::LongTerm {
                                f.reference = Reference::Unused;
                            }
                        }
                    }
                }
            }
            Mmco::ForgetAll => {
                for p in &mut self.pictures {
                    p.unmark();
                }
                self.max_long_term_frame_idx = None;
                result.mmco5 = true;
            }
            Mmco::CurrentToLongTerm {
                long_term_frame_idx,
            } => {
                self.free_long_term_idx(long_term_frame_idx, current.first_field_id);
                result.reference = Reference::LongTerm;
                result.long_term_frame_idx = long_term_frame_idx;
            }
        }
    }

    /// Stores the current picture after decoding and marking (C.4.4, C.4.5):
    /// removes what is no longer needed, bumps when full, and outputs as
    /// max_num_reorder_frames allows. `top_poc` / `bottom_poc` are the final
    /// counts (after an MMCO 5 reset). Returns the entry's id and what left.
    #[allow(clippy::too_many_arguments)]
    pub fn store(
        &mut self,
        current: &CurrentPic,
        marking: CurrentMarking,
        timestamp_ns: u64,
        top_poc: i32,
        bottom_poc: i32,
    ) -> (u64, DpbOutput) {
        let mut out = DpbOutput::default();
        if marking.mmco5 {
            // C.4.4: no_output_of_prior_pics_flag inferred 0.
            while self.bump(&mut out) {}
            out.released
                .extend(self.clear_except(current.first_field_id));
        }
        if let Some(first) = current.first_field_id {
            if let Some(p) = self.pictures.iter_mut().find(|p| p.id == first) {
                let f = p.field_mut(current.structure);
                *f = FieldState {
                    decoded: true,
                    poc: if current.structure == PicStructure::BottomField {
                        bottom_poc
                    } else {
                        top_poc
                    },
                    reference: marking.reference,
                };
                if marking.reference == Reference::LongTerm {
                    p.long_term_frame_idx = marking.long_term_frame_idx;
                }
                let id = p.id;
                self.output_by_reorder(&mut out);
                return (id, out);
            }
        }
        let reference = marking.reference;
        let poc_of_current = match current.structure {
            PicStructure::Frame => top_poc.min(bottom_poc),
            PicStructure::TopField => top_poc,
            PicStructure::BottomField => bottom_poc,
        };
        let id = self.allocate_id();
        loop {
            self.remove_unused(&mut out);
            if self.pictures.len() < self.max_frames {
                break;
            }
            let waiting_min = self
                .pictures
                .iter()
                .filter(|p| p.needed_for_output)
                .map(|p| p.output_poc())
                .min();
            if reference == Reference::Unused && waiting_min.is_none_or(|m| poc_of_current < m) {
                // C.4.5.2: output at once, never stored.
                out.output.push(timestamp_ns);
                out.released.push(timestamp_ns);
                return (id, out);
            }
            if !self.bump(&mut out) {
                warn!(
                    size = self.pictures.len(),
                    "DPB full of references; storing beyond its size"
                );
                break;
            }
        }
        let field = |decoded: bool, poc: i32| FieldState {
            decoded,
            poc,
            reference: if decoded {
                reference
            } else {
                Reference::Unused
            },
        };
        let (top, bottom) = match current.structure {
            PicStructure::Frame => (field(true, top_poc), field(true, bottom_poc)),
            PicStructure::TopField => (field(true, top_poc), FieldState::EMPTY),
            PicStructure::BottomField => (FieldState::EMPTY, field(true, bottom_poc)),
        };
        self.pictures.push(DpbPicture {
            id,
            timestamp_ns,
            frame_num: if marking.mmco5 { 0 } else { current.frame_num },
            long_term_frame_idx: marking.long_term_frame_idx,
            top,
            bottom,
            field_coded: current.structure.is_field(),
            needed_for_output: true,
            non_existing: false,
        });
        if !current.structure.is_field() {
            self.output_by_reorder(&mut out);
        }
        (id, out)
    }

    fn clear_except(&mut self, keep: Option<u64>) -> Vec<u64> {
        let mut freed = Vec::new();
        self.pictures.retain(|p| {
            let k = Some(p.id) == keep;
            if !k && !p.non_existing {
                freed.push(p.timestamp_ns);
            }
            k
        });
        freed
    }

    /// Outputs while more pictures wait than max_num_reorder_frames allows.
    fn output_by_reorder(&mut self, out: &mut DpbOutput) {
        while self.pictures.iter().filter(|p| p.needed_for_output).count() > self.max_num_reorder {
            if !self.bump(out) {
                break;
            }
        }
    }
}
