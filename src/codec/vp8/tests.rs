use super::header::{parse_frame, FrameTag, StreamState, Vp8Error};
use super::refs::References;
use super::tables::{DEFAULT_COEFF_PROBS, DEFAULT_MV_PROBS};
use super::test_frames::{build, inter_frame, key_frame};

#[test]
fn frame_tag_fields_by_hand() {
    // 0x5c = 010 1 110 0: key frame (bit 0 clear), version 6, show_frame,
    // size 0b010 | 0x2a << 3 | 0x01 << 11 = 2 + 336 + 2048 = 0x952.
    let tag = FrameTag::parse(&[0x5c, 0x2a, 0x01]).unwrap();
    assert!(tag.key_frame);
    assert_eq!(tag.version, 6);
    assert!(tag.show_frame);
    assert_eq!(tag.first_part_size, 0x952);
    assert_eq!(tag.first_part_offset(), 10);
    let inter = FrameTag::parse(&[0x01, 0x00, 0x00]).unwrap();
    assert!(!inter.key_frame && !inter.show_frame);
    assert_eq!(inter.first_part_offset(), 3);
    assert_eq!(FrameTag::parse(&[1, 2]), Err(Vp8Error::Short(2)));
}

#[test]
fn key_frame_header_fields() {
    let mut spec = key_frame();
    spec.key = Some((175 | 1 << 14, 143 | 2 << 14));
    spec.segmentation = Some(([-3, 0, 5, 0], [0, 2, 0, -1], [Some(7), None, Some(200)]));
    spec.loop_filter_level = 33;
    spec.lf_deltas = Some([
        Some(2),
        None,
        Some(-2),
        Some(-2),
        Some(4),
        Some(-12),
        None,
        Some(4),
    ]);
    spec.y2_dc_delta = Some(-5);
    spec.coeff_update = Some((1, 2, 0, 3, 77));
    spec.skip_prob = Some(105);
    spec.log2_partitions = 2;
    spec.partition_sizes = vec![3, 0, 9];
    let frame = build(&spec);
    let mut state = StreamState::default();
    let h = parse_frame(&frame, &mut state).unwrap();
    assert!(h.is_key_frame() && h.tag.show_frame);
    assert_eq!((h.width, h.height), (175, 143));
    assert_eq!((h.horizontal_scale, h.vertical_scale), (1, 2));
    let seg = &h.segmentation;
    assert!(seg.enabled && seg.update_map && seg.update_data && !seg.absolute);
    assert_eq!(seg.quant, [-3, 0, 5, 0]);
    assert_eq!(seg.lf, [0, 2, 0, -1]);
    assert_eq!(seg.tree_probs, [7, 255, 200]);
    assert_eq!(h.loop_filter_level, 33);
    assert!(h.lf_adj_enable && h.lf_delta_update);
    assert_eq!(h.lf_deltas.ref_frame, [2, 0, -2, -2]);
    assert_eq!(h.lf_deltas.mode, [4, -12, 0, 4]);
    assert_eq!(h.quant.y_ac_qi, 40);
    assert_eq!(h.quant.y2_dc_delta, -5);
    assert_eq!(h.quant.y_dc_delta, 0);
    assert_eq!(h.dct_partitions, 4);
    assert_eq!(h.dct_partition_sizes, vec![3, 0, 9, 10]);
    assert!(h.mb_no_coeff_skip);
    assert_eq!(h.prob_skip_false, 105);
    assert_eq!(h.probs.coeff[1][2][0][3], 77);
    let mut expected = DEFAULT_COEFF_PROBS;
    expected[1][2][0][3] = 77;
    assert_eq!(h.probs.coeff, expected);
    assert_eq!(h.probs.mv, DEFAULT_MV_PROBS);
    // A key frame refreshes every slot.
    assert!(h.refresh.golden && h.refresh.altref && h.refresh.last);
    // The header ends inside the first partition; the decoder's state
    // there is consistent: the bits left in the current byte.
    assert!(h.header_bits > 0 && (h.header_bits as usize) < 8 * (h.tag.first_part_size as usize));
    assert_eq!(
        u32::from(h.coder_state.bit_count),
        (8 - h.header_bits % 8) % 8
    );
    assert!(h.coder_state.range >= 128);
}

#[test]
fn probabilities_persist_unless_the_frame_keeps_them_to_itself() {
    let mut state = StreamState::default();
    let mut key = key_frame();
    key.coeff_update = Some((0, 1, 0, 0, 11));
    parse_frame(&build(&key), &mut state).unwrap();
    assert_eq!(state.probs.coeff[0][1][0][0], 11);

    // refresh_entropy_probs = 0: the frame decodes with its update, the
    // next one starts from the probabilities before it.
    let mut inter = inter_frame();
    inter.refresh_entropy_probs = false;
    inter.coeff_update = Some((3, 7, 2, 10, 99));
    inter.mv_update = Some((1, 4, 0));
    let h = parse_frame(&build(&inter), &mut state).unwrap();
    assert_eq!(h.probs.coeff[3][7][2][10], 99);
    assert_eq!(h.probs.coeff[0][1][0][0], 11);
    assert_eq!(h.probs.mv[1][4], 1, "a 7-bit 0 is probability 1");
    assert_eq!(
        state.probs.coeff[3][7][2][10],
        DEFAULT_COEFF_PROBS[3][7][2][10]
    );
    assert_eq!(state.probs.mv, DEFAULT_MV_PROBS);

    // refresh_entropy_probs = 1: the update stays.
    let mut inter = inter_frame();
    inter.mv_update = Some((0, 2, 50));
    let h = parse_frame(&build(&inter), &mut state).unwrap();
    assert_eq!(h.probs.mv[0][2], 100);
    assert_eq!(state.probs.mv[0][2], 100);
    assert_eq!(state.probs.coeff[0][1][0][0], 11);

    // A key frame starts over from the defaults.
    let h = parse_frame(&build(&key_frame()), &mut state).unwrap();
    assert_eq!(h.probs.coeff, DEFAULT_COEFF_PROBS);
    assert_eq!(h.probs.mv, DEFAULT_MV_PROBS);
}

#[test]
fn loop_filter_deltas_and_segmentation_persist_until_a_key_frame() {
    let mut state = StreamState::default();
    let mut key = key_frame();
    key.lf_deltas = Some([
        Some(1),
        Some(2),
        Some(3),
        Some(4),
        None,
        None,
        None,
        Some(-6),
    ]);
    key.segmentation = Some(([1, 2, 3, 4], [0; 4], [Some(9), Some(8), Some(7)]));
    parse_frame(&build(&key), &mut state).unwrap();
    let mut inter = inter_frame();
    inter.lf_deltas = Some([None, None, Some(-1), None, None, None, None, None]);
    let h = parse_frame(&build(&inter), &mut state).unwrap();
    assert_eq!(h.lf_deltas.ref_frame, [1, 2, -1, 4]);
    assert_eq!(h.lf_deltas.mode, [0, 0, 0, -6]);
    // Segmentation off for this frame; its data is kept for a later one.
    assert!(!h.segmentation.enabled);
    assert_eq!(state.segmentation.quant, [1, 2, 3, 4]);
    let h = parse_frame(&build(&key_frame()), &mut state).unwrap();
    assert_eq!(h.lf_deltas.ref_frame, [0; 4]);
    assert_eq!(h.segmentation.quant, [0; 4]);
    // The tree probabilities stay until a map update replaces them.
    assert_eq!(h.segmentation.tree_probs, [9, 8, 7]);
}

#[test]
fn inter_frames_keep_the_key_frames_size_and_read_their_refresh_flags() {
    let mut state = StreamState::default();
    let mut inter = inter_frame();
    assert_eq!(
        parse_frame(&build(&inter), &mut state),
        Err(Vp8Error::NoKeyFrame)
    );
    parse_frame(&build(&key_frame()), &mut state).unwrap();
    inter.show = false;
    inter.refresh = (false, true, 2, 0, true, false, false);
    let h = parse_frame(&build(&inter), &mut state).unwrap();
    assert!(!h.is_key_frame() && !h.tag.show_frame);
    assert_eq!((h.width, h.height), (320, 240));
    assert!(!h.refresh.golden && h.refresh.altref && !h.refresh.last);
    assert_eq!((h.refresh.copy_to_golden, h.refresh.copy_to_altref), (2, 0));
    assert!(h.sign_bias_golden && !h.sign_bias_altref);
    assert_eq!((h.prob_intra, h.prob_last, h.prob_gf), (30, 200, 128));
}

#[test]
fn damaged_frames_are_errors_and_leave_the_state_alone() {
    let mut state = StreamState::default();
    let key = build(&key_frame());
    parse_frame(&key, &mut state).unwrap();
    let before = state.clone();
    let mut mutated = build(&inter_frame());
    for len in 0..mutated.len() {
        let _ = parse_frame(&mutated[..len], &mut state.clone());
    }
    // A first partition longer than the frame.
    mutated[2] = 0xff;
    assert!(matches!(
        parse_frame(&mutated, &mut state),
        Err(Vp8Error::FirstPartition { .. })
    ));
    let mut bad_start = key.clone();
    bad_start[4] = 0;
    assert_eq!(
        parse_frame(&bad_start, &mut state),
        Err(Vp8Error::StartCode)
    );
    let mut empty = key.clone();
    empty[6..8].copy_from_slice(&[0, 0]);
    assert!(matches!(
        parse_frame(&empty, &mut state),
        Err(Vp8Error::EmptySize(0, 240))
    ));
    // Partition sizes adding up to more than the frame holds.
    let mut spec = key_frame();
    spec.log2_partitions = 1;
    spec.partition_sizes = vec![50];
    let mut frame = build(&spec);
    frame.truncate(frame.len() - 45);
    assert!(matches!(
        parse_frame(&frame, &mut state),
        Err(Vp8Error::Partitions(_))
    ));
    assert_eq!(state.probs, before.probs);
    assert_eq!(state.segmentation, before.segmentation);
}

#[test]
fn reference_slots_follow_refreshes_and_copies() {
    let mut state = StreamState::default();
    let mut refs: References<u64> = References::new();
    let key = parse_frame(&build(&key_frame()), &mut state).unwrap();
    assert!(!refs.can_decode(&parse_frame(&build(&inter_frame()), &mut state.clone()).unwrap()));
    assert_eq!(refs.for_frame(&key), None);
    refs.decoded(&key, 1);
    assert_eq!(refs.pictures(), vec![1]);

    let mut decode = |refresh, picture| {
        let mut spec = inter_frame();
        spec.refresh = refresh;
        let h = parse_frame(&build(&spec), &mut state).unwrap();
        let before = refs.for_frame(&h).expect("references present");
        refs.decoded(&h, picture);
        let after = refs.for_frame(&h).expect("references present");
        (before, after)
    };
    // A hidden altref: only the altref slot takes it.
    let (_, after) = decode((false, true, 0, 0, false, false, false), 2);
    assert_eq!((after.last, after.golden, after.altref), (1, 1, 2));
    // A last-frame update with the old last copied to golden first.
    let (_, after) = decode((false, false, 1, 0, false, false, true), 3);
    assert_eq!((after.last, after.golden, after.altref), (3, 1, 2));
    // Golden from altref, altref from golden: the altref copy comes first,
    // so golden takes the altref slot as that copy left it (libvpx's order).
    let (before, after) = decode((false, false, 2, 2, false, false, false), 4);
    assert_eq!((before.last, before.golden, before.altref), (3, 1, 2));
    assert_eq!((after.last, after.golden, after.altref), (3, 1, 1));
    assert_eq!(refs.pictures(), vec![1, 3]);
    refs.reset();
    assert!(refs.pictures().is_empty());
}
