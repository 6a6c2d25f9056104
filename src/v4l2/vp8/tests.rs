use super::*;
use crate::codec::vp8::test_frames::{build, inter_frame, key_frame};

fn frame_of(request: &Request) -> b::v4l2_ctrl_vp8_frame {
    assert_eq!(request.controls.len(), 1);
    assert_eq!(request.controls[0].id, b::V4L2_CID_STATELESS_VP8_FRAME);
    let raw = request.controls[0].raw();
    assert_eq!(
        { raw.size } as usize,
        std::mem::size_of::<b::v4l2_ctrl_vp8_frame>()
    );
    // SAFETY: the control holds one v4l2_ctrl_vp8_frame (size checked
    // above), alive as long as `request`.
    unsafe { *(raw.__bindgen_anon_1.ptr as *const b::v4l2_ctrl_vp8_frame) }
}

fn decode(codec: &mut Vp8Codec, ts: &mut Timestamps, frame: &[u8]) -> Vec<Request> {
    ts.start_packet();
    codec.decode(frame, ts).unwrap()
}

#[test]
fn frames_become_requests_naming_their_references() {
    let mut codec = Vp8Codec::new();
    let mut ts = Timestamps::new();
    // Inter frames before a key frame: nothing to predict from.
    assert!(decode(&mut codec, &mut ts, &build(&inter_frame())).is_empty());

    let key = build(&key_frame());
    let requests = decode(&mut codec, &mut ts, &key);
    let first = &requests[0];
    assert_eq!(first.bitstream, vec![BitstreamPart::Packet(0..key.len())]);
    let change = first
        .sequence
        .as_ref()
        .expect("a key frame starts a sequence");
    assert_eq!((change.coded_width, change.coded_height), (320, 240));
    let f = frame_of(first);
    assert_eq!(
        { f.flags },
        u64::from(b::V4L2_VP8_FRAME_FLAG_KEY_FRAME | b::V4L2_VP8_FRAME_FLAG_SHOW_FRAME)
    );
    assert_eq!(({ f.width }, { f.height }), (320, 240));
    assert_eq!(f.entropy.y_mode_probs, [145, 156, 163, 128]);
    assert_eq!(f.quant.y_ac_qi, 40);
    assert_eq!({ f.num_dct_parts }, 1);
    assert_eq!(codec.references(), vec![first.timestamp_ns]);

    // A hidden altref frame: decoded, referenced, never shown.
    let mut hidden = inter_frame();
    hidden.show = false;
    hidden.refresh = (false, true, 0, 0, false, true, false);
    let requests = decode(&mut codec, &mut ts, &build(&hidden));
    let altref = &requests[0];
    assert!(altref.sequence.is_none());
    let f = frame_of(altref);
    assert_eq!(
        ({ f.last_frame_ts }, { f.golden_frame_ts }, {
            f.alt_frame_ts
        }),
        (first.timestamp_ns, first.timestamp_ns, first.timestamp_ns)
    );
    assert_eq!({ f.flags }, u64::from(b::V4L2_VP8_FRAME_FLAG_SIGN_BIAS_ALT));
    assert_eq!(f.entropy.y_mode_probs, [112, 86, 140, 37]);
    assert_eq!(
        codec.references(),
        vec![first.timestamp_ns, altref.timestamp_ns]
    );

    let requests = decode(&mut codec, &mut ts, &build(&inter_frame()));
    let shown = &requests[0];
    let f = frame_of(shown);
    assert_eq!({ f.alt_frame_ts }, altref.timestamp_ns);
    assert_eq!({ f.last_frame_ts }, first.timestamp_ns);
    assert_eq!(
        codec
            .take_output(false)
            .iter()
            .map(|p| (p.timestamp_ns, p.packet, p.visible))
            .collect::<Vec<_>>(),
        vec![
            (first.timestamp_ns, 2, (320, 240)),
            (shown.timestamp_ns, 4, (320, 240))
        ]
    );

    // After a reset (seek), inter frames wait for the next key frame.
    codec.reset();
    assert!(codec.references().is_empty());
    assert!(decode(&mut codec, &mut ts, &build(&inter_frame())).is_empty());
}

/// Before an exact seek's target, an inter frame stored in no reference
/// slot makes no request and is not shown; one refreshing a slot is
/// decoded.
#[test]
fn before_a_seek_target_frames_no_slot_keeps_are_left_undecoded() {
    let mut codec = Vp8Codec::new();
    let mut ts = Timestamps::new();
    let key = decode(&mut codec, &mut ts, &build(&key_frame()));
    codec.take_output(false);
    ts.set_references_only(true);
    let mut unreferenced = inter_frame();
    unreferenced.refresh = (false, false, 0, 0, false, false, false);
    assert!(decode(&mut codec, &mut ts, &build(&unreferenced)).is_empty());
    let golden = {
        let mut frame = inter_frame();
        frame.refresh = (true, false, 0, 0, false, false, false);
        decode(&mut codec, &mut ts, &build(&frame))
    };
    assert_eq!(golden.len(), 1);
    assert_eq!(frame_of(&golden[0]).golden_frame_ts, key[0].timestamp_ns);
    let last = decode(&mut codec, &mut ts, &build(&inter_frame()));
    assert_eq!(last.len(), 1);
    assert_eq!(frame_of(&last[0]).golden_frame_ts, golden[0].timestamp_ns);
    assert_eq!(codec.take_output(false).len(), 2);
}

#[test]
fn damage_resynchronises_at_the_next_key_frame() {
    let mut codec = Vp8Codec::new();
    let mut ts = Timestamps::new();
    decode(&mut codec, &mut ts, &build(&key_frame()));
    let mut cut = build(&inter_frame());
    cut[2] = 0xff;
    ts.start_packet();
    let Err(err) = codec.decode(&cut, &mut ts) else {
        panic!("a frame longer than its packet decodes");
    };
    assert!(err.is_recoverable(), "{err}");
    assert!(codec.references().is_empty());
    assert!(decode(&mut codec, &mut ts, &build(&inter_frame())).is_empty());
    let mut odd = key_frame();
    odd.key = Some((175, 143));
    let requests = decode(&mut codec, &mut ts, &build(&odd));
    let change = requests[0].sequence.as_ref().expect("a new size");
    assert_eq!((change.coded_width, change.coded_height), (176, 144));
    assert_eq!(
        codec.take_output(false).last().map(|p| p.visible),
        Some((175, 143))
    );
}
