//! Picture order count (8.2.1), types 0, 1 and 2.
//!
//! Arithmetic wraps instead of overflowing: a hostile stream gets wrong
//! numbers, never a panic.

use super::slice::SliceHeader;
use super::sps::Sps;

/// What the next picture's POC derivation needs from the pictures before it.
#[derive(Debug, Clone, Default)]
pub struct PocState {
    /// prevPicOrderCntMsb / prevPicOrderCntLsb (type 0): of the previous
    /// reference picture.
    prev_poc_msb: i32,
    prev_poc_lsb: i32,
    /// prevFrameNumOffset / prevFrameNum (types 1, 2): of the previous picture.
    prev_frame_num_offset: i32,
    prev_frame_num: u32,
}

/// The derived counts of one picture. For a field only its own count is
/// meaningful; the other equals it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PicOrderCnt {
    pub top: i32,
    pub bottom: i32,
    /// PicOrderCntMsb (type 0) or FrameNumOffset (types 1, 2), kept for the
    /// state update after the picture.
    msb_or_offset: i32,
}

/// The parts of a slice header the derivation reads.
#[derive(Debug, Clone, Copy)]
pub struct PocInput {
    pub idr: bool,
    pub reference: bool,
    pub frame_num: u32,
    pub field_pic: bool,
    pub bottom_field: bool,
    pub pic_order_cnt_lsb: u32,
    pub delta_pic_order_cnt_bottom: i32,
    pub delta_pic_order_cnt: [i32; 2],
}

impl PocInput {
    pub fn from_header(h: &SliceHeader) -> Self {
        Self {
            idr: h.idr,
            reference: h.nal_ref_idc != 0,
            frame_num: h.frame_num,
            field_pic: h.field_pic_flag,
            bottom_field: h.bottom_field_flag,
            pic_order_cnt_lsb: h.pic_order_cnt_lsb,
            delta_pic_order_cnt_bottom: h.delta_pic_order_cnt_bottom,
            delta_pic_order_cnt: h.delta_pic_order_cnt,
        }
    }

    /// A frame inferred for a gap in frame_num (8.2.5.2).
    pub fn gap_frame(frame_num: u32) -> Self {
        Self {
            idr: false,
            reference: true,
            frame_num,
            field_pic: false,
            bottom_field: false,
            pic_order_cnt_lsb: 0,
            delta_pic_order_cnt_bottom: 0,
            delta_pic_order_cnt: [0; 2],
        }
    }
}

impl PocState {
    pub fn compute(&self, sps: &Sps, p: &PocInput) -> PicOrderCnt {
        match sps.pic_order_cnt_type {
            0 => self.type0(sps, p),
            1 => self.type1(sps, p),
            _ => self.type2(sps, p),
        }
    }

    fn type0(&self, sps: &Sps, p: &PocInput) -> PicOrderCnt {
        let (prev_msb, prev_lsb) = if p.idr {
            (0, 0)
        } else {
            (self.prev_poc_msb, self.prev_poc_lsb)
        };
        let max_lsb = sps.max_pic_order_cnt_lsb() as i32;
        let lsb = p.pic_order_cnt_lsb as i32;
        // 8-3
        let msb = if lsb < prev_lsb && prev_lsb.wrapping_sub(lsb) >= max_lsb / 2 {
            prev_msb.wrapping_add(max_lsb)
        } else if lsb > prev_lsb && lsb.wrapping_sub(prev_lsb) > max_lsb / 2 {
            prev_msb.wrapping_sub(max_lsb)
        } else {
            prev_msb
        };
        let poc = msb.wrapping_add(lsb);
        let (top, bottom) = if !p.field_pic {
            (poc, poc.wrapping_add(p.delta_pic_order_cnt_bottom))
        } else {
            (poc, poc)
        };
        PicOrderCnt {
            top,
            bottom,
            msb_or_offset: msb,
        }
    }

    /// FrameNumOffset (8-6, 8-11).
    fn frame_num_offset(&self, sps: &Sps, p: &PocInput) -> i32 {
        if p.idr {
            0
        } else if self.prev_frame_num > p.frame_num {
            self.prev_frame_num_offset
                .wrapping_add(sps.max_frame_num() as i32)
        } else {
            self.prev_frame_num_offset
        }
    }

    fn type1(&self, sps: &Sps, p: &PocInput) -> PicOrderCnt {
        let offset = self.frame_num_offset(sps, p);
        let cycle_len = sps.offset_for_ref_frame.len() as i64;
        let mut abs_frame_num: i64 = if cycle_len != 0 {
            i64::from(offset) + i64::from(p.frame_num)
        } else {
            0
        };
        if !p.reference && abs_frame_num > 0 {
            abs_frame_num -= 1;
        }
        let mut expected: i64 = 0;
        if abs_frame_num > 0 {
            let cycle_cnt = (abs_frame_num - 1) / cycle_len;
            let in_cycle = ((abs_frame_num - 1) % cycle_len) as usize;
            let delta_per_cycle: i64 = sps.offset_for_ref_frame.iter().map(|&o| i64::from(o)).sum();
            expected = cycle_cnt.wrapping_mul(delta_per_cycle);
            for &o in &sps.offset_for_ref_frame[..=in_cycle] {
                expected = expected.wrapping_add(i64::from(o));
            }
        }
        if !p.reference {
            expected = expected.wrapping_add(i64::from(sps.offset_for_non_ref_pic));
        }
        let expected = expected as i32;
        let d0 = p.delta_pic_order_cnt[0];
        let t2b = sps.offset_for_top_to_bottom_field;
        let (top, bottom) = if !p.field_pic {
            let top = expected.wrapping_add(d0);
            (
                top,
                top.wrapping_add(t2b).wrapping_add(p.delta_pic_order_cnt[1]),
            )
        } else if !p.bottom_field {
            let top = expected.wrapping_add(d0);
            (top, top)
        } else {
            let bottom = expected.wrapping_add(t2b).wrapping_add(d0);
            (bottom, bottom)
        };
        PicOrderCnt {
            top,
            bottom,
            msb_or_offset: offset,
        }
    }

    fn type2(&self, sps: &Sps, p: &PocInput) -> PicOrderCnt {
        let offset = self.frame_num_offset(sps, p);
        let temp = if p.idr {
            0
        } else {
            let doubled = offset.wrapping_add(p.frame_num as i32).wrapping_mul(2);
            if p.reference {
                doubled
            } else {
                doubled.wrapping_sub(1)
            }
        };
        PicOrderCnt {
            top: temp,
            bottom: temp,
            msb_or_offset: offset,
        }
    }

    /// Records a decoded picture. `mmco5` is whether it carried
    /// memory_management_control_operation 5; `top_after_mmco5` is its top
    /// field's count after the reset that operation implies (8.2.1).
    pub fn update(
        &mut self,
        sps: &Sps,
        p: &PocInput,
        poc: &PicOrderCnt,
        mmco5: bool,
        top_after_mmco5: i32,
    ) {
        if sps.pic_order_cnt_type == 0 {
            if p.reference {
                if mmco5 {
                    self.prev_poc_msb = 0;
                    self.prev_poc_lsb = if p.field_pic && p.bottom_field {
                        0
                    } else {
                        top_after_mmco5
                    };
                } else {
                    self.prev_poc_msb = poc.msb_or_offset;
                    self.prev_poc_lsb = p.pic_order_cnt_lsb as i32;
                }
            }
        } else if mmco5 {
            self.prev_frame_num_offset = 0;
            self.prev_frame_num = 0;
        } else {
            self.prev_frame_num_offset = poc.msb_or_offset;
            self.prev_frame_num = p.frame_num;
        }
    }

    /// Records a frame inferred for a frame_num gap: only types 1 and 2
    /// follow frame_num.
    pub fn update_gap_frame(&mut self, sps: &Sps, frame_num: u32) {
        if sps.pic_order_cnt_type != 0 {
            let p = PocInput::gap_frame(frame_num);
            self.prev_frame_num_offset = self.frame_num_offset(sps, &p);
            self.prev_frame_num = frame_num;
        }
    }
}
