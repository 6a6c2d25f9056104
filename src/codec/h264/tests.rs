//! Hand-made sequences for POC, marking, output order and reference lists,
//! each checked against what the spec's rules give when worked by hand.

use super::dpb::{CurrentPic, Dpb, PicStructure, Reference};
use super::poc::{PocInput, PocState};
use super::reflist::{initial_lists, modify_list, RefPic};
use super::slice::{DecRefPicMarking, Mmco, RefPicListModification};
use super::sps::Sps;
use crate::codec::access_unit::DpbOutput;
use crate::codec::bitstream::reader::{BitReader, BitWriter};

const MAX_FRAME_NUM: u32 = 16;

/// An SPS (Baseline-like, 4-bit frame_num) with the given POC type.
fn sps(poc_type: u32, max_num_ref_frames: u32, offsets: &[i32]) -> Sps {
    let mut w = BitWriter::new();
    w.u(8, 77); // profile_idc
    w.u(8, 0); // constraint flags + reserved
    w.u(8, 30); // level_idc
    w.ue(0); // sps id
    w.ue(0); // log2_max_frame_num_minus4
    w.ue(poc_type);
    match poc_type {
        0 => w.ue(0), // log2_max_pic_order_cnt_lsb_minus4: MaxLsb 16
        1 => {
            w.bit(false); // delta_pic_order_always_zero_flag
            w.se(-2); // offset_for_non_ref_pic
            w.se(1); // offset_for_top_to_bottom_field
            w.ue(offsets.len() as u32);
            for &o in offsets {
                w.se(o);
            }
        }
        _ => {}
    }
    w.ue(max_num_ref_frames);
    w.bit(false); // gaps
    w.ue(19); // 320 wide
    w.ue(14); // 240 high
    w.bit(true); // frame_mbs_only
    w.bit(true); // direct_8x8
    w.bit(false); // cropping
    w.bit(false); // vui
    w.trailing();
    Sps::parse(&mut BitReader::new(&w.bytes)).expect("hand-made SPS parses")
}

fn poc_input(idr: bool, reference: bool, frame_num: u32, lsb: u32) -> PocInput {
    PocInput {
        idr,
        reference,
        frame_num,
        field_pic: false,
        bottom_field: false,
        pic_order_cnt_lsb: lsb,
        delta_pic_order_cnt_bottom: 0,
        delta_pic_order_cnt: [0; 2],
    }
}

/// Runs a frame sequence through POC derivation: (idr, reference,
/// frame_num, lsb) -> (top, bottom).
fn pocs(sps: &Sps, pics: &[(bool, bool, u32, u32)]) -> Vec<(i32, i32)> {
    let mut state = PocState::default();
    pics.iter()
        .map(|&(idr, reference, frame_num, lsb)| {
            let input = poc_input(idr, reference, frame_num, lsb);
            let poc = state.compute(sps, &input);
            state.update(sps, &input, &poc, false, poc.top);
            (poc.top, poc.bottom)
        })
        .collect()
}

#[test]
fn poc_type0_wraps_the_lsb_into_the_msb() {
    let sps = sps(0, 4, &[]);
    // MaxPicOrderCntLsb = 16: 12 -> 2 wraps forwards (+16), and a
    // non-reference picture does not move prevPicOrderCntMsb.
    let got = pocs(
        &sps,
        &[
            (true, true, 0, 0),
            (false, true, 1, 8),
            (false, true, 2, 12),
            (false, true, 3, 2),
            (false, false, 4, 14),
            (false, true, 4, 6),
        ],
    );
    assert_eq!(
        got,
        vec![(0, 0), (8, 8), (12, 12), (18, 18), (14, 14), (22, 22)]
    );
}

#[test]
fn poc_type1_follows_the_offset_cycle() {
    // offset_for_ref_frame = [4, 6], non-ref offset -2, top-to-bottom 1.
    let sps = sps(1, 4, &[4, 6]);
    let got = pocs(
        &sps,
        &[
            (true, true, 0, 0),   // abs 0: expected 0
            (false, true, 1, 0),  // abs 1: 4
            (false, true, 2, 0),  // abs 2: 4 + 6 = 10
            (false, false, 3, 0), // abs 3 - 1 = 2: 10 - 2 = 8
            (false, true, 3, 0),  // abs 3: cycle 1, in 0: 10 + 4 = 14
        ],
    );
    assert_eq!(got, vec![(0, 1), (4, 5), (10, 11), (8, 9), (14, 15)]);
}

#[test]
fn poc_type2_doubles_frame_num_across_wraps() {
    let sps = sps(2, 4, &[]);
    let got = pocs(
        &sps,
        &[
            (true, true, 0, 0),
            (false, true, 1, 0),
            (false, false, 2, 0),
            (false, true, 15, 0),
            (false, true, 0, 0), // wrap: FrameNumOffset 16
        ],
    );
    assert_eq!(got, vec![(0, 0), (2, 2), (3, 3), (30, 30), (32, 32)]);
}

fn frame(frame_num: u32) -> CurrentPic {
    CurrentPic {
        structure: PicStructure::Frame,
        frame_num,
        max_frame_num: MAX_FRAME_NUM,
        first_field_id: None,
    }
}

fn sliding() -> Option<DecRefPicMarking> {
    Some(DecRefPicMarking::default())
}

fn adaptive(ops: Vec<Mmco>) -> Option<DecRefPicMarking> {
    Some(DecRefPicMarking {
        adaptive: Some(ops),
        ..DecRefPicMarking::default()
    })
}

/// Decodes a frame into `dpb`: timestamp = frame's label `ts`.
fn decode(
    dpb: &mut Dpb,
    frame_num: u32,
    poc: i32,
    ts: u64,
    marking: Option<DecRefPicMarking>,
) -> (u64, DpbOutput) {
    let cur = frame(frame_num);
    let m = dpb.mark(&cur, false, marking.as_ref());
    dpb.store(&cur, m, ts, poc, poc)
}

fn decode_idr(dpb: &mut Dpb, ts: u64, long_term: bool) -> DpbOutput {
    let mut out = dpb.start_idr(false);
    let cur = frame(0);
    let marking = DecRefPicMarking {
        long_term_reference_flag: long_term,
        ..DecRefPicMarking::default()
    };
    let m = dpb.mark(&cur, true, Some(&marking));
    out.append(dpb.store(&cur, m, ts, 0, 0).1);
    out
}

/// Timestamps of the DPB's pictures marked `r`, in storage order.
fn marked(dpb: &Dpb, r: Reference) -> Vec<u64> {
    dpb.pictures()
        .iter()
        .filter(|p| p.is_frame_marked(r))
        .map(|p| p.timestamp_ns)
        .collect()
}

#[test]
fn sliding_window_drops_the_smallest_frame_num_wrap() {
    let mut dpb = Dpb::new(4, 0, 2);
    decode_idr(&mut dpb, 100, false);
    decode(&mut dpb, 1, 2, 101, sliding());
    assert_eq!(marked(&dpb, Reference::ShortTerm), vec![100, 101]);
    decode(&mut dpb, 2, 4, 102, sliding());
    assert_eq!(marked(&dpb, Reference::ShortTerm), vec![101, 102]);
    // Across the frame_num wrap, 15 is older than 0 (FrameNumWrap -1).
    let mut dpb = Dpb::new(4, 0, 2);
    decode_idr(&mut dpb, 0, false);
    for (i, frame_num) in (1..16).chain(0..1).enumerate() {
        decode(
            &mut dpb,
            frame_num,
            2 * (i as i32 + 1),
            i as u64 + 1,
            sliding(),
        );
    }
    assert_eq!(marked(&dpb, Reference::ShortTerm), vec![15, 16]);
}

#[test]
fn mmco_operations_1_to_4_and_6() {
    let mut dpb = Dpb::new(8, 0, 8);
    decode_idr(&mut dpb, 0, false);
    decode(&mut dpb, 1, 2, 1, sliding());
    decode(&mut dpb, 2, 4, 2, sliding());
    decode(&mut dpb, 3, 6, 3, sliding());
    // Frame 4: MMCO 1 drops PicNum 4 - (1 + 1) = 2; MMCO 3 makes PicNum
    // 4 - (0 + 1) = 3 long-term with LongTermFrameIdx 0 (after MMCO 4 allows
    // indices 0..=1).
    decode(
        &mut dpb,
        4,
        8,
        4,
        adaptive(vec![
            Mmco::ForgetShortTerm {
                difference_of_pic_nums_minus1: 1,
            },
            Mmco::SetMaxLongTermIdx {
                max_long_term_frame_idx_plus1: 2,
            },
            Mmco::ShortToLongTerm {
                difference_of_pic_nums_minus1: 0,
                long_term_frame_idx: 0,
            },
        ]),
    );
    assert_eq!(marked(&dpb, Reference::ShortTerm), vec![0, 1, 4]);
    assert_eq!(marked(&dpb, Reference::LongTerm), vec![3]);
    // Frame 5 becomes long-term index 0 itself (MMCO 6): frame 3 loses it.
    decode(
        &mut dpb,
        5,
        10,
        5,
        adaptive(vec![Mmco::CurrentToLongTerm {
            long_term_frame_idx: 0,
        }]),
    );
    assert_eq!(marked(&dpb, Reference::LongTerm), vec![5]);
    // MMCO 3 makes PicNum 6 - (4 + 1) = 1 long-term index 1, then MMCO 2
    // forgets LongTermPicNum 0 (frame 5).
    decode(
        &mut dpb,
        6,
        12,
        6,
        adaptive(vec![
            Mmco::ShortToLongTerm {
                difference_of_pic_nums_minus1: 4,
                long_term_frame_idx: 1,
            },
            Mmco::ForgetLongTerm {
                long_term_pic_num: 0,
            },
        ]),
    );
    assert_eq!(marked(&dpb, Reference::LongTerm), vec![1]);
    assert_eq!(marked(&dpb, Reference::ShortTerm), vec![0, 4, 6]);
    // MMCO 4 with 0: no long-term index left.
    decode(
        &mut dpb,
        7,
        14,
        7,
        adaptive(vec![Mmco::SetMaxLongTermIdx {
            max_long_term_frame_idx_plus1: 0,
        }]),
    );
    assert!(marked(&dpb, Reference::LongTerm).is_empty());
    assert_eq!(dpb.max_long_term_frame_idx(), None);
}

#[test]
fn mmco5_outputs_everything_before_and_resets() {
    let mut dpb = Dpb::new(4, 4, 4);
    decode_idr(&mut dpb, 0, false);
    decode(&mut dpb, 1, 4, 1, sliding());
    decode(&mut dpb, 2, 2, 2, sliding());
    let cur = frame(3);
    let m = dpb.mark(&cur, false, adaptive(vec![Mmco::ForgetAll]).as_ref());
    assert!(m.mmco5);
    let (_, out) = dpb.store(&cur, m, 3, 0, 0);
    assert_eq!(out.output, vec![0, 2, 1]);
    assert_eq!(dpb.pictures().len(), 1);
    assert_eq!(dpb.pictures()[0].frame_num, 0, "MMCO 5 makes frame_num 0");
}

#[test]
fn long_term_idr_and_no_output_of_prior_pics() {
    let mut dpb = Dpb::new(4, 4, 4);
    decode_idr(&mut dpb, 0, true);
    assert_eq!(marked(&dpb, Reference::LongTerm), vec![0]);
    assert_eq!(dpb.max_long_term_frame_idx(), Some(0));
    decode(&mut dpb, 1, 2, 1, sliding());
    let out = dpb.start_idr(true);
    assert!(out.output.is_empty(), "no_output_of_prior_pics drops them");
    assert_eq!(out.released, vec![0, 1]);
}

#[test]
fn bumping_follows_poc_within_the_reorder_limit() {
    // Decode order I0 P8 B4 b2 b6 P16 B12: display order by POC.
    let pics = [
        (0, 0, 0),
        (1, 8, 1),
        (2, 4, 2),
        (3, 2, 3),
        (3, 6, 4),
        (3, 16, 5),
        (4, 12, 6),
    ];
    for reorder in [2usize, 4] {
        let mut dpb = Dpb::new(5, reorder, 3);
        let mut shown = decode_idr(&mut dpb, 0, false).output;
        for &(frame_num, poc, ts) in &pics[1..] {
            // b2 and b6 are non-reference pictures.
            let marking = if ts == 3 || ts == 4 { None } else { sliding() };
            let (_, out) = decode(&mut dpb, frame_num, poc, ts, marking);
            shown.extend(out.output);
        }
        shown.extend(dpb.flush().output);
        assert_eq!(shown, vec![0, 3, 2, 4, 1, 6, 5], "reorder {reorder}");
    }
    // With no reordering allowed, pictures leave as soon as they are stored.
    let mut dpb = Dpb::new(4, 0, 2);
    assert_eq!(decode_idr(&mut dpb, 0, false).output, vec![0]);
    assert_eq!(decode(&mut dpb, 1, 2, 1, sliding()).1.output, vec![1]);
}

#[test]
fn a_full_dpb_outputs_a_lower_non_reference_picture_directly() {
    let mut dpb = Dpb::new(2, 16, 2);
    decode_idr(&mut dpb, 0, false);
    decode(&mut dpb, 1, 8, 1, sliding());
    // Full of references waiting for output: a non-reference B with POC 4
    // needs POC 0 out first, then goes out itself without being stored.
    let (_, out) = decode(&mut dpb, 2, 4, 2, None);
    assert_eq!(out.output, vec![0, 2]);
    assert!(out.released.contains(&2));
}

#[test]
fn frame_num_gaps_insert_non_existing_references() {
    let mut dpb = Dpb::new(4, 0, 3);
    decode_idr(&mut dpb, 0, false);
    // Previous reference frame_num 0, next 5: frames 1..=4 inferred, only
    // the last max_num_ref_frames of which matter.
    let out = dpb.fill_frame_num_gap(0, 5, MAX_FRAME_NUM);
    assert!(out.output.is_empty());
    let non_existing: Vec<u32> = dpb
        .pictures()
        .iter()
        .filter(|p| p.non_existing)
        .map(|p| p.frame_num)
        .collect();
    assert_eq!(non_existing, vec![2, 3, 4]);
}

fn ids(dpb: &Dpb, ts: &[u64]) -> Vec<Option<RefPic>> {
    ts.iter()
        .map(|t| {
            dpb.pictures()
                .iter()
                .find(|p| p.timestamp_ns == *t)
                .map(|p| RefPic {
                    id: p.id,
                    structure: PicStructure::Frame,
                })
        })
        .collect()
}

#[test]
fn p_frame_list_short_by_pic_num_then_long_by_index() {
    let mut dpb = Dpb::new(8, 8, 8);
    decode_idr(&mut dpb, 0, false);
    decode(&mut dpb, 1, 2, 1, sliding());
    decode(
        &mut dpb,
        2,
        4,
        2,
        adaptive(vec![Mmco::CurrentToLongTerm {
            long_term_frame_idx: 1,
        }]),
    );
    decode(&mut dpb, 2, 6, 3, sliding());
    decode(
        &mut dpb,
        3,
        8,
        4,
        adaptive(vec![
            Mmco::SetMaxLongTermIdx {
                max_long_term_frame_idx_plus1: 3,
            },
            Mmco::CurrentToLongTerm {
                long_term_frame_idx: 0,
            },
        ]),
    );
    let cur = frame(4);
    let (l0, l1) = initial_lists(&dpb, &cur, false, 10);
    // Short: 3 (frame_num 2), 1, 0; long: idx 0 (ts 4), idx 1 (ts 2).
    assert_eq!(l0, ids(&dpb, &[3, 1, 0, 4, 2]));
    assert!(l1.is_empty());
    // Modification: abs_diff_pic_num_minus1 = 2 -> PicNum 4 - 3 = 1 first,
    // then long-term pic num 1 second.
    let modified = modify_list(
        &dpb,
        &cur,
        l0,
        &[
            RefPicListModification::SubtractShortTerm(2),
            RefPicListModification::LongTerm(1),
        ],
        4,
    );
    assert_eq!(modified, ids(&dpb, &[1, 2, 3, 0]));
}

#[test]
fn b_frame_lists_by_poc_with_the_identical_list_swap() {
    let mut dpb = Dpb::new(8, 8, 8);
    decode_idr(&mut dpb, 0, false);
    decode(&mut dpb, 1, 16, 1, sliding());
    decode(&mut dpb, 2, 8, 2, sliding());
    let cur = frame(3);
    let (l0, l1) = initial_lists(&dpb, &cur, true, 4);
    assert_eq!(l0, ids(&dpb, &[0, 2, 1]));
    assert_eq!(l1, ids(&dpb, &[2, 1, 0]));
    // All references before the current picture: the lists would be equal,
    // so list 1 starts with its second entry.
    let (l0, l1) = initial_lists(&dpb, &cur, true, 20);
    assert_eq!(l0, ids(&dpb, &[1, 2, 0]));
    assert_eq!(l1, ids(&dpb, &[2, 1, 0]));
}

#[test]
fn field_lists_alternate_parity_starting_with_the_current_one() {
    let mut dpb = Dpb::new(8, 8, 8);
    let field = |frame_num, structure, first_field_id| CurrentPic {
        structure,
        frame_num,
        max_frame_num: MAX_FRAME_NUM,
        first_field_id,
    };
    // Two field pairs (frame_num 0 and 1), then the top field of frame 2.
    let mut first = None;
    for (frame_num, s, poc) in [
        (0, PicStructure::TopField, 0),
        (0, PicStructure::BottomField, 1),
        (1, PicStructure::TopField, 4),
        (1, PicStructure::BottomField, 5),
    ] {
        let cur = field(
            frame_num,
            s,
            if s == PicStructure::BottomField {
                first
            } else {
                None
            },
        );
        let m = dpb.mark(
            &cur,
            frame_num == 0 && s == PicStructure::TopField,
            sliding().as_ref(),
        );
        let (id, _) = dpb.store(&cur, m, u64::from(frame_num), poc, poc);
        first = Some(id);
    }
    let cur = field(2, PicStructure::BottomField, None);
    let (l0, _) = initial_lists(&dpb, &cur, false, 9);
    let pair = |ts: u64| {
        dpb.pictures()
            .iter()
            .find(|p| p.timestamp_ns == ts)
            .map(|p| p.id)
    };
    let got: Vec<(Option<u64>, PicStructure)> = l0
        .iter()
        .map(|r| (r.map(|r| r.id), r.unwrap().structure))
        .collect();
    assert_eq!(
        got,
        vec![
            (pair(1), PicStructure::BottomField),
            (pair(1), PicStructure::TopField),
            (pair(0), PicStructure::BottomField),
            (pair(0), PicStructure::TopField),
        ]
    );
    assert_eq!(cur.pic_num(), 5);
}

/// Inserts emulation prevention bytes into an RBSP.
fn escape(rbsp: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut zeros = 0;
    for &b in rbsp {
        if zeros >= 2 && b <= 3 {
            out.push(3);
            zeros = 0;
        }
        zeros = if b == 0 { zeros + 1 } else { 0 };
        out.push(b);
    }
    out
}

fn nal(header: u8, w: BitWriter) -> Vec<u8> {
    let mut out = vec![0, 0, 0, 1, header];
    out.extend(escape(&w.bytes));
    out
}

/// SPS + PPS for field coding (frame_mbs_only_flag 0), POC type 0,
/// 4-bit frame_num and lsb, two references by default.
/// SPS and PPS of a small field-coded stream.
pub(crate) fn field_parameter_sets() -> Vec<u8> {
    let mut w = BitWriter::new();
    w.u(8, 77);
    w.u(8, 0);
    w.u(8, 30);
    w.ue(0); // sps id
    w.ue(0); // log2_max_frame_num_minus4
    w.ue(0); // poc type 0
    w.ue(0); // log2_max_pic_order_cnt_lsb_minus4
    w.ue(2); // max_num_ref_frames
    w.bit(false);
    w.ue(19); // 320 wide
    w.ue(7); // 8 map units: 256 lines of fields
    w.bit(false); // frame_mbs_only_flag: fields allowed
    w.bit(false); // mb_adaptive_frame_field_flag
    w.bit(true);
    w.bit(false);
    w.bit(false);
    w.trailing();
    let mut out = nal(0x67, w);
    // num_ref_idx_l0_default_active_minus1: 2 entries
    out.extend(nal(0x68, simple_pps(1)));
    out
}

/// PPS 0 of SPS 0, CAVLC, one slice group, no weighted prediction, no
/// deblocking control: the RBSP after the NAL header.
pub(crate) fn simple_pps(num_ref_idx_l0_default_active_minus1: u32) -> BitWriter {
    let mut w = BitWriter::new();
    w.ue(0); // pps id
    w.ue(0); // sps id
    w.bit(false); // CAVLC
    w.bit(false); // bottom_field_pic_order_in_frame_present_flag
    w.ue(0); // slice groups
    w.ue(num_ref_idx_l0_default_active_minus1);
    w.ue(0);
    w.bit(false);
    w.u(2, 0);
    w.se(0);
    w.se(0);
    w.se(0);
    w.bit(false); // deblocking control
    w.bit(false);
    w.bit(false);
    w.trailing();
    w
}

/// A field slice header (with a stand-in byte of slice data).
/// One field's slice of the stream of `field_parameter_sets`.
pub(crate) fn field_slice(idr: bool, p: bool, frame_num: u32, bottom: bool, lsb: u32) -> Vec<u8> {
    let mut w = BitWriter::new();
    w.ue(0); // first_mb_in_slice
    w.ue(if p { 5 } else { 7 });
    w.ue(0); // pps id
    w.u(4, frame_num);
    w.bit(true); // field_pic_flag
    w.bit(bottom);
    if idr {
        w.ue(0); // idr_pic_id
    }
    w.u(4, lsb);
    if p {
        w.bit(false); // num_ref_idx_active_override_flag
        w.bit(false); // ref_pic_list_modification_flag_l0
    }
    if idr {
        w.bit(false);
        w.bit(false);
    } else {
        w.bit(false); // adaptive_ref_pic_marking_mode_flag
    }
    w.se(0); // slice_qp_delta
    w.u(8, 0xa5);
    w.trailing();
    nal(if idr { 0x65 } else { 0x61 }, w)
}

#[test]
fn poc_of_fields_and_bottom_deltas() {
    // Type 0: a frame's bottom is top + delta_pic_order_cnt_bottom; a bottom
    // field's count is its own msb + lsb.
    let sps0 = sps(0, 4, &[]);
    let state = PocState::default();
    let mut frame = poc_input(true, true, 0, 0);
    frame.delta_pic_order_cnt_bottom = 3;
    let poc = state.compute(&sps0, &frame);
    assert_eq!((poc.top, poc.bottom), (0, 3));
    let mut bottom = poc_input(false, true, 1, 5);
    bottom.field_pic = true;
    bottom.bottom_field = true;
    assert_eq!(state.compute(&sps0, &bottom).bottom, 5);

    // Type 1 (cycle [4, 6], top-to-bottom offset 1): a bottom field adds
    // offset_for_top_to_bottom_field and its delta_pic_order_cnt[0].
    let sps1 = sps(1, 4, &[4, 6]);
    let mut state = PocState::default();
    let idr = poc_input(true, true, 0, 0);
    let first = state.compute(&sps1, &idr);
    state.update(&sps1, &idr, &first, false, first.top);
    let mut bottom = poc_input(false, true, 1, 0);
    bottom.field_pic = true;
    bottom.bottom_field = true;
    bottom.delta_pic_order_cnt = [2, 0];
    // expected 4 (abs 1) + 1 + 2.
    assert_eq!(state.compute(&sps1, &bottom).bottom, 7);
    let mut top = bottom;
    top.bottom_field = false;
    assert_eq!(state.compute(&sps1, &top).top, 6);
}

#[test]
fn both_fields_in_one_access_unit_give_two_jobs_on_one_buffer() {
    use super::H264Decoder;

    let mut decoder = H264Decoder::new();
    let mut first = field_parameter_sets();
    first.extend(field_slice(true, false, 0, false, 0));
    first.extend(field_slice(false, false, 0, true, 1));
    let mut second = field_slice(false, true, 1, false, 4);
    second.extend(field_slice(false, true, 1, true, 5));
    let jobs0 = decoder.decode_access_unit(&first, 10).expect("decodes");
    let jobs1 = decoder.decode_access_unit(&second, 20).expect("decodes");
    let ts: Vec<u64> = jobs0.iter().chain(&jobs1).map(|j| j.timestamp_ns).collect();
    assert_eq!(ts, vec![10, 10, 20, 20]);
    let mut shown: Vec<u64> = jobs0
        .iter()
        .chain(&jobs1)
        .flat_map(|j| j.output.clone())
        .collect();
    shown.extend(decoder.flush().output);
    assert_eq!(shown, vec![10, 20]);
}
