use super::*;
use crate::codec::bitstream::reader::BitWriter;

/// What a hand-made frame is.
#[derive(Clone, Copy)]
struct Spec {
    key: bool,
    show: bool,
    size: (u32, u32),
    /// Inter frames: take the size of the last reference.
    found_ref: bool,
    refresh: u8,
    profile: u8,
    /// A hidden intra-only frame (not a key frame).
    intra_only: bool,
    /// `refresh_frame_context`: the probabilities adapted while decoding
    /// it are kept for later frames.
    keeps_context: bool,
}

const KEY: Spec = Spec {
    key: true,
    show: true,
    size: (320, 240),
    found_ref: false,
    refresh: 0xff,
    profile: 0,
    intra_only: false,
    keeps_context: true,
};

const INTER: Spec = Spec {
    key: false,
    show: true,
    size: (320, 240),
    found_ref: true,
    refresh: 0b001,
    profile: 0,
    intra_only: false,
    keeps_context: true,
};

/// A frame: its uncompressed header, a compressed header of zero bytes
/// (a boolean decoder reading zeros decides "no update" everywhere) and
/// eight bytes standing for the tiles.
fn frame(s: Spec) -> Vec<u8> {
    let mut w = BitWriter::new();
    w.u(2, 2);
    w.u(1, u32::from(s.profile & 1));
    w.u(1, u32::from(s.profile >> 1));
    w.u(1, 0); // show_existing_frame
    w.u(1, u32::from(!s.key));
    w.u(1, u32::from(s.show));
    w.u(1, 0); // error_resilient_mode
    let size = |w: &mut BitWriter| {
        w.u(16, s.size.0 - 1);
        w.u(16, s.size.1 - 1);
    };
    if s.key {
        w.u(24, 0x498342);
        w.u(3, 1); // color_space
        w.u(1, 0); // color_range
        if s.profile == 1 {
            w.u(3, 0); // 4:4:4, reserved
        }
        size(&mut w);
        w.u(1, 0);
    } else {
        if !s.show {
            w.u(1, u32::from(s.intra_only));
        }
        w.u(2, 0); // reset_frame_context
        if s.intra_only {
            // Profile 0: no colour config (8-bit 4:2:0 BT.601).
            w.u(24, 0x498342);
            w.u(8, u32::from(s.refresh));
            size(&mut w);
            w.u(1, 0);
            return finish(w, s);
        }
        w.u(8, u32::from(s.refresh));
        for i in 0..3 {
            w.u(3, i);
            w.u(1, 0);
        }
        if s.found_ref {
            w.u(1, 1);
        } else {
            w.u(3, 0);
            size(&mut w);
        }
        w.u(1, 0); // render_and_frame_size_different
        w.u(1, 0); // allow_high_precision_mv
        w.u(1, 1); // switchable
    }
    finish(w, s)
}

/// The header's second half, and the rest of the frame.
fn finish(mut w: BitWriter, s: Spec) -> Vec<u8> {
    w.u(1, u32::from(s.keeps_context)); // refresh_frame_context
    w.u(1, 1); // frame_parallel_decoding_mode
    w.u(2, 0);
    w.u(6, 10); // loop_filter_level
    w.u(3, 0);
    w.u(1, 0); // loop_filter_delta_enabled
    w.u(8, 60); // base_q_idx
    w.u(3, 0);
    w.u(1, 0); // segmentation_enabled
    if s.size.0 > 448 {
        w.u(1, 0); // increment_tile_cols_log2 (8 or more superblock columns)
    }
    w.u(1, 0); // tile_rows_log2
    w.u(16, 4); // header_size_in_bytes
    let mut bytes = w.bytes;
    bytes.extend([0; 4]);
    bytes.extend([0xaa; 8]);
    bytes
}

/// A superframe of `frames` with 2-byte sizes.
fn superframe(frames: &[Vec<u8>]) -> Vec<u8> {
    let marker = 0xc0 | (1 << 3) | (frames.len() as u8 - 1);
    let mut out: Vec<u8> = frames.concat();
    out.push(marker);
    for f in frames {
        out.extend((f.len() as u16).to_le_bytes());
    }
    out.push(marker);
    out
}

fn frame_control(request: &Request) -> b::v4l2_ctrl_vp9_frame {
    let control = &request.controls[0];
    assert_eq!(control.id, b::V4L2_CID_STATELESS_VP9_FRAME);
    let raw = control.raw();
    assert_eq!(
        { raw.size } as usize,
        std::mem::size_of::<b::v4l2_ctrl_vp9_frame>()
    );
    // SAFETY: the control holds one v4l2_ctrl_vp9_frame (size checked
    // above), alive as long as `request`.
    unsafe { *(raw.__bindgen_anon_1.ptr as *const b::v4l2_ctrl_vp9_frame) }
}

fn decode_err(codec: &mut Vp9Codec, ts: &mut Timestamps, packet: &[u8]) -> CodecError {
    ts.start_packet();
    match codec.decode(packet, ts) {
        Ok(_) => panic!("a bad packet decodes"),
        Err(e) => e,
    }
}

fn decode(codec: &mut Vp9Codec, ts: &mut Timestamps, packet: &[u8]) -> Vec<Request> {
    ts.start_packet();
    codec.decode(packet, ts).expect("a valid packet")
}

#[test]
fn frames_hidden_frames_and_frames_shown_again() {
    let mut codec = Vp9Codec::new((320, 240));
    let mut ts = Timestamps::new();
    // An inter frame before any key frame has nothing to predict from.
    assert!(decode(&mut codec, &mut ts, &frame(INTER)).is_empty());

    let key = decode(&mut codec, &mut ts, &frame(KEY));
    assert_eq!(key.len(), 1);
    assert!(
        key[0].sequence.is_some(),
        "the first frame starts a sequence"
    );
    assert_eq!(
        key[0].bitstream,
        vec![BitstreamPart::Packet(0..frame(KEY).len())]
    );
    assert_eq!(
        key[0].controls[1].id,
        b::V4L2_CID_STATELESS_VP9_COMPRESSED_HDR
    );
    let k = frame_control(&key[0]);
    assert_eq!(
        (
            k.flags & b::V4L2_VP9_FRAME_FLAG_KEY_FRAME,
            k.frame_width_minus_1
        ),
        (b::V4L2_VP9_FRAME_FLAG_KEY_FRAME, 319)
    );
    assert_eq!({ k.compressed_header_size }, 4);
    assert_eq!({ k.lf.ref_deltas }, [1, 0, -1, -1]);
    let key_ts = key[0].timestamp_ns;

    // A hidden frame refreshing slot 2 and a shown one, in one superframe.
    let hidden = frame(Spec {
        show: false,
        refresh: 0b100,
        ..INTER
    });
    let packet = superframe(&[hidden.clone(), frame(INTER)]);
    let pair = decode(&mut codec, &mut ts, &packet);
    assert_eq!(pair.len(), 2);
    assert_eq!(
        pair[0].bitstream,
        vec![BitstreamPart::Packet(0..hidden.len())]
    );
    assert!(pair.iter().all(|r| r.sequence.is_none()));
    let shown = frame_control(&pair[1]);
    assert_eq!(
        ({ shown.last_frame_ts }, { shown.golden_frame_ts }, {
            shown.alt_frame_ts
        }),
        (key_ts, key_ts, pair[0].timestamp_ns),
        "slots 0, 1 and 2"
    );
    assert_eq!(
        shown.interpolation_filter,
        b::V4L2_VP9_INTERP_FILTER_SWITCHABLE as u8
    );
    let hidden_ts = pair[0].timestamp_ns;
    assert!(codec.references().contains(&hidden_ts));

    // show_existing_frame of slot 2: no request, the hidden picture out
    // with this packet's timing.
    assert!(decode(&mut codec, &mut ts, &[0x88 | 2]).is_empty());
    let out: Vec<(u64, u64)> = codec
        .take_output(false)
        .iter()
        .map(|p| (p.timestamp_ns, p.packet))
        .collect();
    assert_eq!(
        out,
        vec![(key_ts, 2), (pair[1].timestamp_ns, 3), (hidden_ts, 4)]
    );
}

#[test]
fn smaller_inter_frames_keep_the_buffers_larger_ones_wait_for_a_key_frame() {
    let mut codec = Vp9Codec::new((320, 240));
    let mut ts = Timestamps::new();
    decode(&mut codec, &mut ts, &frame(KEY));
    let small = Spec {
        size: (160, 120),
        found_ref: false,
        ..INTER
    };
    let scaled = decode(&mut codec, &mut ts, &frame(small));
    assert_eq!(scaled.len(), 1);
    assert!(scaled[0].sequence.is_none(), "fits the 320x240 buffers");
    let out = codec.take_output(false);
    assert_eq!(out.last().map(|p| p.visible), Some((160, 120)));

    let large = Spec {
        size: (640, 480),
        found_ref: false,
        ..INTER
    };
    let err = decode_err(&mut codec, &mut ts, &frame(large));
    assert!(err.is_recoverable(), "{err}");
    assert!(codec.references().is_empty());
    // The next key frame of that size starts a sequence.
    let key = decode(
        &mut codec,
        &mut ts,
        &frame(Spec {
            size: (640, 480),
            ..KEY
        }),
    );
    let change = key[0].sequence.as_ref().expect("a new size");
    assert_eq!((change.coded_width, change.coded_height), (640, 480));
}

#[test]
fn damage_and_unsupported_streams_are_told_apart() {
    let mut codec = Vp9Codec::new((320, 240));
    let mut ts = Timestamps::new();
    decode(&mut codec, &mut ts, &frame(KEY));
    let key = frame(KEY);
    let err = decode_err(&mut codec, &mut ts, &key[..6]);
    assert!(err.is_recoverable(), "{err}");
    assert!(codec.references().is_empty(), "damage drops the references");
    let err = decode_err(&mut codec, &mut ts, &frame(Spec { profile: 1, ..KEY }));
    assert!(!err.is_recoverable(), "{err}");
}

fn stream(bit_depth: u32, pixel_format: &str) -> VideoStreamInfo {
    VideoStreamInfo {
        index: 0,
        codec: Codec::Vp9,
        width: 320,
        height: 240,
        time_base: (1, 1000),
        frame_rate: None,
        duration: None,
        start_time: std::time::Duration::ZERO,
        start_pts: 0,
        container_start_us: 0,
        sample_aspect: (1, 1),
        bit_depth,
        pixel_format: Some(pixel_format.to_owned()),
        profile: None,
        level: None,
        parameter_sets: Vec::new(),
        container_format: None,
        parameters: crate::media::CodecParameters::new(ffmpeg_next::codec::Parameters::new()),
    }
}

#[test]
fn the_profile_menu_value_follows_the_pixel_layout() {
    let p0 = b::v4l2_mpeg_video_vp9_profile_V4L2_MPEG_VIDEO_VP9_PROFILE_0;
    let p2 = b::v4l2_mpeg_video_vp9_profile_V4L2_MPEG_VIDEO_VP9_PROFILE_2;
    let p3 = b::v4l2_mpeg_video_vp9_profile_V4L2_MPEG_VIDEO_VP9_PROFILE_3;
    let need = |depth, layout| {
        requirements(&stream(depth, layout))
            .profile
            .expect("a need")
    };
    // A profile 2 decoder takes profile 0 streams too.
    assert_eq!(need(8, "yuv420p").accepted, vec![p0, p2]);
    assert_eq!(need(10, "yuv420p10le").accepted, vec![p2]);
    assert_eq!(need(10, "yuv444p10le").accepted, vec![p3]);
    assert_eq!(need(8, "yuv420p").menu, b::V4L2_CID_MPEG_VIDEO_VP9_PROFILE);
}

#[test]
fn a_packet_that_fails_shows_nothing() {
    let mut codec = Vp9Codec::new((320, 240));
    let mut ts = Timestamps::new();
    decode(&mut codec, &mut ts, &frame(KEY));
    codec.take_output(false);
    // A shown frame, then a damaged one, in one superframe.
    let packet = superframe(&[frame(INTER), vec![0x00, 0x01, 0x02]]);
    decode_err(&mut codec, &mut ts, &packet);
    assert!(codec.take_output(false).is_empty());
}

#[test]
fn intra_only_frames_need_no_reference() {
    let mut codec = Vp9Codec::new((320, 240));
    let mut ts = Timestamps::new();
    decode(&mut codec, &mut ts, &frame(KEY));
    // After a seek past the key frame, the slots are empty: an intra-only
    // frame decodes anyway and refreshes the slots it names.
    codec.reset();
    let intra = Spec {
        show: false,
        intra_only: true,
        refresh: 0b011,
        ..INTER
    };
    let requests = decode(&mut codec, &mut ts, &frame(intra));
    assert_eq!(requests.len(), 1);
    let c = frame_control(&requests[0]);
    assert_eq!(
        c.flags & (b::V4L2_VP9_FRAME_FLAG_INTRA_ONLY | b::V4L2_VP9_FRAME_FLAG_KEY_FRAME),
        b::V4L2_VP9_FRAME_FLAG_INTRA_ONLY
    );
    assert_eq!((c.bit_depth, { c.last_frame_ts }), (8, 0));
    assert_eq!({ c.lf.ref_deltas }, [1, 0, -1, -1], "past independence");
    assert!(codec.take_output(false).is_empty(), "hidden");
    // An inter frame predicting from slots 0, 1 and 2 (empty) waits.
    assert!(decode(&mut codec, &mut ts, &frame(INTER)).is_empty());
    assert_eq!(codec.references(), vec![requests[0].timestamp_ns]);
}

/// Before an exact seek's target, a frame no slot keeps and whose
/// adapted probabilities nothing keeps makes no request and is not shown;
/// one that keeps either is decoded.
#[test]
fn before_a_seek_target_frames_nothing_needs_are_left_undecoded() {
    let mut codec = Vp9Codec::new((320, 240));
    let mut ts = Timestamps::new();
    assert_eq!(decode(&mut codec, &mut ts, &frame(KEY)).len(), 1);
    codec.take_output(false);
    ts.set_references_only(true);
    let unneeded = Spec {
        refresh: 0,
        keeps_context: false,
        ..INTER
    };
    assert!(decode(&mut codec, &mut ts, &frame(unneeded)).is_empty());
    let context_kept = Spec {
        refresh: 0,
        ..INTER
    };
    assert_eq!(decode(&mut codec, &mut ts, &frame(context_kept)).len(), 1);
    let stored = Spec {
        keeps_context: false,
        ..INTER
    };
    assert_eq!(decode(&mut codec, &mut ts, &frame(stored)).len(), 1);
    // Only what was decoded is shown.
    assert_eq!(codec.take_output(false).len(), 2);
    ts.set_references_only(false);
    assert_eq!(decode(&mut codec, &mut ts, &frame(unneeded)).len(), 1);
}
