//! The glue on hand-made streams: requests and their controls, references
//! and display order, field pairs in one CAPTURE buffer, refusals.

use super::*;
use crate::codec::bitstream::reader::BitWriter;
use crate::codec::mpeg2::headers::{picture_coding_type as pct, picture_structure as ps};

fn unit(out: &mut Vec<u8>, w: BitWriter) {
    out.extend_from_slice(&[0, 0, 1]);
    out.extend_from_slice(&w.bytes);
}

fn sequence(out: &mut Vec<u8>, progressive: bool, intra: Option<u8>, mpeg1: bool) {
    let mut w = BitWriter::new();
    w.u(8, 0xb3);
    w.u(12, 320);
    w.u(12, 240);
    w.u(4, 2);
    w.u(4, 5);
    w.u(18, 2500);
    w.bit(true);
    w.u(10, 17);
    w.bit(false);
    w.bit(intra.is_some());
    if let Some(v) = intra {
        for _ in 0..64 {
            w.u(8, u32::from(v));
        }
    }
    w.bit(false);
    unit(out, w);
    if mpeg1 {
        return;
    }
    let mut w = BitWriter::new();
    w.u(8, 0xb5);
    w.u(4, 1);
    w.u(8, 0x48);
    w.bit(progressive);
    w.u(2, 1);
    w.u(4, 0);
    w.u(12, 0);
    w.bit(true);
    w.u(8, 0);
    w.bit(false);
    w.u(7, 0);
    unit(out, w);
}

fn gop(out: &mut Vec<u8>, closed: bool) {
    let mut w = BitWriter::new();
    w.u(8, 0xb8);
    w.u(25, 1 << 12);
    w.bit(closed);
    w.bit(false);
    unit(out, w);
}

/// A picture header, its coding extension, an optional quant matrix
/// extension loading a non-intra matrix, and two slices.
fn picture(out: &mut Vec<u8>, coding_type: u8, structure: u8, non_intra: Option<u8>) {
    let mut w = BitWriter::new();
    w.u(8, 0);
    w.u(10, 0);
    w.u(3, u32::from(coding_type));
    w.u(16, 0xffff);
    if coding_type != pct::I {
        w.bit(false);
        w.u(3, 7);
    }
    if coding_type == pct::B {
        w.bit(false);
        w.u(3, 7);
    }
    w.bit(false);
    unit(out, w);
    let mut w = BitWriter::new();
    w.u(8, 0xb5);
    w.u(4, 8);
    for f in [2, 3, 4, 5] {
        w.u(4, f);
    }
    w.u(2, 1);
    w.u(2, u32::from(structure));
    // top_field_first, frame_pred_frame_dct, concealment_motion_vectors,
    // q_scale_type, intra_vlc_format, alternate_scan, repeat_first_field,
    // chroma_420_type, progressive_frame, composite_display_flag.
    for bit in [
        true,
        structure == ps::FRAME,
        false,
        true,
        false,
        false,
        false,
        true,
        false,
        false,
    ] {
        w.bit(bit);
    }
    unit(out, w);
    if let Some(v) = non_intra {
        let mut w = BitWriter::new();
        w.u(8, 0xb5);
        w.u(4, 3);
        w.bit(false);
        w.bit(true);
        for _ in 0..64 {
            w.u(8, u32::from(v));
        }
        w.bit(false);
        w.bit(false);
        unit(out, w);
    }
    for row in [1u8, 2] {
        out.extend_from_slice(&[0, 0, 1, row, 0x28, 0xab, 0xcd, row]);
    }
}

fn frame_packet(coding_type: u8) -> Vec<u8> {
    let mut out = Vec::new();
    if coding_type == pct::I {
        sequence(&mut out, true, None, false);
        gop(&mut out, false);
    }
    picture(&mut out, coding_type, ps::FRAME, None);
    out
}

fn picture_of(request: &Request) -> b::v4l2_ctrl_mpeg2_picture {
    let control = request
        .controls
        .iter()
        .find(|c| c.id == b::V4L2_CID_STATELESS_MPEG2_PICTURE)
        .expect("a picture control");
    let raw = control.raw();
    assert_eq!(
        { raw.size } as usize,
        std::mem::size_of::<b::v4l2_ctrl_mpeg2_picture>()
    );
    // SAFETY: the control holds one v4l2_ctrl_mpeg2_picture (size checked
    // above), alive as long as `request`.
    unsafe { *(raw.__bindgen_anon_1.ptr as *const b::v4l2_ctrl_mpeg2_picture) }
}

fn quantisation_of(request: &Request) -> b::v4l2_ctrl_mpeg2_quantisation {
    let control = request
        .controls
        .iter()
        .find(|c| c.id == b::V4L2_CID_STATELESS_MPEG2_QUANTISATION)
        .expect("a quantisation control");
    let raw = control.raw();
    assert_eq!(
        { raw.size } as usize,
        std::mem::size_of::<b::v4l2_ctrl_mpeg2_quantisation>()
    );
    // SAFETY: the control holds one v4l2_ctrl_mpeg2_quantisation (size
    // checked above), alive as long as `request`.
    unsafe { *(raw.__bindgen_anon_1.ptr as *const b::v4l2_ctrl_mpeg2_quantisation) }
}

fn decode(codec: &mut Mpeg2Codec, ts: &mut Timestamps, packet: &[u8]) -> Vec<Request> {
    ts.start_packet();
    codec.decode(packet, ts).expect("decodes")
}

#[test]
fn ipbb_references_and_display_order() {
    let mut codec = Mpeg2Codec::new(true);
    let mut ts = Timestamps::new();
    let mut requests = Vec::new();
    for t in [pct::I, pct::P, pct::B, pct::B] {
        let packet = frame_packet(t);
        let mut r = decode(&mut codec, &mut ts, &packet);
        assert_eq!(r.len(), 1);
        // Every slice behind its start code, from its start code value on.
        let slices: Vec<_> = r[0]
            .bitstream
            .iter()
            .filter_map(|p| match p {
                BitstreamPart::Packet(range) => Some(packet[range.clone()].to_vec()),
                _ => None,
            })
            .collect();
        assert_eq!(
            slices,
            vec![vec![1, 0x28, 0xab, 0xcd, 1], vec![2, 0x28, 0xab, 0xcd, 2]]
        );
        assert_eq!(r[0].bitstream[0], BitstreamPart::StartCode);
        requests.push(r.remove(0));
    }
    let ts_of: Vec<u64> = requests.iter().map(|r| r.timestamp_ns).collect();
    let change = requests[0].sequence.as_ref().expect("a first sequence");
    assert_eq!((change.coded_width, change.coded_height), (320, 240));
    assert!(requests[1..].iter().all(|r| r.sequence.is_none()));
    let refs: Vec<(u64, u64, u8)> = requests
        .iter()
        .map(|r| {
            let p = picture_of(r);
            (p.forward_ref_ts, p.backward_ref_ts, p.picture_coding_type)
        })
        .collect();
    assert_eq!(
        refs,
        vec![
            (NO_REFERENCE, NO_REFERENCE, 1),
            (ts_of[0], NO_REFERENCE, 2),
            (ts_of[0], ts_of[1], 3),
            (ts_of[0], ts_of[1], 3),
        ]
    );
    let p = picture_of(&requests[0]);
    assert_eq!(p.f_code, [[2, 3], [4, 5]]);
    assert_eq!(p.picture_structure, 3);
    assert_eq!(p.intra_dc_precision, 1);
    assert_eq!(
        p.flags,
        b::V4L2_MPEG2_PIC_FLAG_TOP_FIELD_FIRST
            | b::V4L2_MPEG2_PIC_FLAG_FRAME_PRED_DCT
            | b::V4L2_MPEG2_PIC_FLAG_Q_SCALE_TYPE
    );
    // Display order: I, B, B, then P at the end of the stream.
    let shown: Vec<u64> = codec
        .take_output(false)
        .iter()
        .map(|p| p.timestamp_ns)
        .collect();
    assert_eq!(shown, vec![ts_of[0], ts_of[2], ts_of[3]]);
    let mut references = codec.references();
    references.sort_unstable();
    assert_eq!(references, vec![ts_of[0], ts_of[1]]);
    let last = codec.take_output(true);
    assert_eq!(last.len(), 1);
    assert_eq!(
        (last[0].timestamp_ns, last[0].packet, last[0].visible),
        (ts_of[1], 2, (320, 240))
    );
    // Aspect 4:3 on 320x240: square samples.
    assert_eq!(last[0].sample_aspect, (1, 1));
}

/// Before an exact seek's target, B pictures (never references) make no
/// request and are not put out; I and P pictures decode as ever.
#[test]
fn before_a_seek_target_b_pictures_are_left_undecoded() {
    let mut codec = Mpeg2Codec::new(true);
    let mut ts = Timestamps::new();
    ts.set_references_only(true);
    let kinds: Vec<Vec<u8>> = [pct::I, pct::P, pct::B, pct::B]
        .into_iter()
        .map(|t| {
            decode(&mut codec, &mut ts, &frame_packet(t))
                .iter()
                .map(|r| picture_of(r).picture_coding_type)
                .collect()
        })
        .collect();
    assert_eq!(kinds, vec![vec![pct::I], vec![pct::P], vec![], vec![]]);
    // The I picture is shown; the Bs are not; the P waits for the next
    // reference, as without the seek.
    assert_eq!(codec.take_output(false).len(), 1);
    // From the target on, B pictures decode again, predicted from both.
    ts.set_references_only(false);
    let b = decode(&mut codec, &mut ts, &frame_packet(pct::B));
    assert_eq!(b.len(), 1);
    let p = picture_of(&b[0]);
    assert_eq!(p.picture_coding_type, pct::B);
    assert_ne!(p.backward_ref_ts, NO_REFERENCE);
    assert_eq!(codec.take_output(false).len(), 1);
}

#[test]
fn quantiser_matrices_loaded_inherited_and_reset() {
    let mut codec = Mpeg2Codec::new(true);
    let mut ts = Timestamps::new();
    let mut packet = Vec::new();
    sequence(&mut packet, true, Some(9), false);
    picture(&mut packet, pct::I, ps::FRAME, Some(21));
    let q = quantisation_of(&decode(&mut codec, &mut ts, &packet)[0]);
    assert_eq!(q.intra_quantiser_matrix, [9; 64]);
    assert_eq!(q.non_intra_quantiser_matrix, [21; 64]);
    assert_eq!(q.chroma_intra_quantiser_matrix, [9; 64]);
    assert_eq!(q.chroma_non_intra_quantiser_matrix, [21; 64]);
    // Inherited by the next picture of the sequence.
    let q = quantisation_of(&decode(&mut codec, &mut ts, &frame_packet(pct::P))[0]);
    assert_eq!(q.non_intra_quantiser_matrix, [21; 64]);
    // A sequence header without matrices brings the defaults back.
    let q = quantisation_of(&decode(&mut codec, &mut ts, &frame_packet(pct::I))[0]);
    assert_eq!(q.non_intra_quantiser_matrix, [16; 64]);
    assert_eq!(q.intra_quantiser_matrix[..4], [8, 16, 16, 19]);
}

#[test]
fn field_pairs_share_one_capture_buffer() {
    let mut codec = Mpeg2Codec::new(true);
    let mut ts = Timestamps::new();
    // An I/P field pair, then a P field pair, each frame in one packet.
    let mut first = Vec::new();
    sequence(&mut first, false, None, false);
    picture(&mut first, pct::I, ps::TOP_FIELD, None);
    picture(&mut first, pct::P, ps::BOTTOM_FIELD, None);
    let requests = decode(&mut codec, &mut ts, &first);
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].timestamp_ns, requests[1].timestamp_ns);
    assert_eq!(
        (requests[0].hold_capture, requests[1].hold_capture),
        (true, false)
    );
    let change = requests[0].sequence.as_ref().expect("a sequence");
    // An interlaced sequence counts rows in field macroblock pairs.
    assert_eq!((change.coded_width, change.coded_height), (320, 256));
    assert_eq!(picture_of(&requests[0]).picture_structure, 1);
    assert_eq!(picture_of(&requests[1]).picture_structure, 2);
    let frame = requests[0].timestamp_ns;
    assert!(codec.take_output(false).is_empty());

    let mut second = Vec::new();
    picture(&mut second, pct::P, ps::TOP_FIELD, None);
    picture(&mut second, pct::P, ps::BOTTOM_FIELD, None);
    let requests = decode(&mut codec, &mut ts, &second);
    assert_eq!(requests.len(), 2);
    assert_ne!(requests[0].timestamp_ns, frame);
    for r in &requests {
        assert_eq!(picture_of(r).forward_ref_ts, frame);
    }
    // The first frame is shown when the second one is whole.
    let shown: Vec<u64> = codec
        .take_output(false)
        .iter()
        .map(|p| p.timestamp_ns)
        .collect();
    assert_eq!(shown, vec![frame]);

    // Without HOLD_CAPTURE_BUF field pictures cannot be decoded.
    let mut codec = Mpeg2Codec::new(false);
    ts.start_packet();
    let Err(err) = codec.decode(&first, &mut ts) else {
        panic!("field pictures decoded without HOLD_CAPTURE_BUF");
    };
    assert!(!err.is_recoverable(), "{err}");
}

#[test]
fn mpeg1_refused_and_damage_recovered_at_the_next_i_picture() {
    let mut codec = Mpeg2Codec::new(true);
    let mut ts = Timestamps::new();
    let mut mpeg1 = Vec::new();
    sequence(&mut mpeg1, true, None, true);
    picture(&mut mpeg1, pct::I, ps::FRAME, None);
    ts.start_packet();
    let Err(err) = codec.decode(&mpeg1, &mut ts) else {
        panic!("MPEG-1 decoded");
    };
    assert!(
        !err.is_recoverable() && err.to_string().contains("MPEG-1"),
        "{err}"
    );

    let mut codec = Mpeg2Codec::new(true);
    decode(&mut codec, &mut ts, &frame_packet(pct::I));
    let mut damaged = frame_packet(pct::P);
    // picture_coding_type 0 is forbidden.
    damaged[4] = 0;
    damaged[5] &= 0xc7;
    ts.start_packet();
    let Err(err) = codec.decode(&damaged, &mut ts) else {
        panic!("a damaged picture decoded");
    };
    assert!(err.is_recoverable(), "{err}");
    assert!(codec.references().is_empty());
    // P and B pictures wait for the next I picture.
    assert!(decode(&mut codec, &mut ts, &frame_packet(pct::P)).is_empty());
    assert!(decode(&mut codec, &mut ts, &frame_packet(pct::B)).is_empty());
    assert_eq!(decode(&mut codec, &mut ts, &frame_packet(pct::I)).len(), 1);
    // A lost picture header: the next picture's slices follow the last
    // one's rows, going back to row 1.
    let mut merged = frame_packet(pct::I);
    merged.extend_from_slice(&[0, 0, 1, 1, 0x28, 0xab]);
    ts.start_packet();
    let Err(err) = codec.decode(&merged, &mut ts) else {
        panic!("slices going back a row decoded");
    };
    assert!(
        err.is_recoverable() && err.to_string().contains("row"),
        "{err}"
    );
    // A row below the picture (240 lines: 15 rows).
    let mut below = frame_packet(pct::I);
    below.extend_from_slice(&[0, 0, 1, 16, 0x28, 0xab]);
    ts.start_packet();
    assert!(codec.decode(&below, &mut ts).is_err());
    // Truncated anywhere: an error or fewer pictures, never a panic.
    let whole = frame_packet(pct::I);
    for cut in 0..whole.len() {
        let mut codec = Mpeg2Codec::new(true);
        ts.start_packet();
        let _ = codec.decode(&whole[..cut], &mut ts);
    }
}
