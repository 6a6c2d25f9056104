//! The visl trace normaliser on real traces: the heads of GStreamer 1.22's
//! decodes of tests/media clips through visl (tests/data/visl/*.head.trace,
//! captured in the test guest by tests/vm/guest/gst-oracle.sh and cut after
//! a few frames).

use crate::support;

use support::visl_trace::{self, FrameRecord, TraceError};

fn sample(name: &str) -> String {
    let path = format!(
        "{}/tests/data/visl/{name}.head.trace",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn frames(text: &str) -> Vec<FrameRecord> {
    visl_trace::normalise(text).unwrap_or_else(|e| panic!("{e}"))
}

fn field<'a>(frame: &'a FrameRecord, control: &str, key: &str) -> &'a str {
    frame
        .controls
        .get(control)
        .and_then(|f| f.get(key))
        .map(String::as_str)
        .unwrap_or_else(|| {
            panic!(
                "frame {}: no {control}.{key} in {:?}",
                frame.index,
                frame.controls.keys()
            )
        })
}

/// Rewrites every OUTPUT/CAPTURE timestamp of a trace (buffer completions
/// and the reference fields) as `ts * 3 + 77`, as another client numbering
/// its requests differently would.
fn renumber(text: &str) -> String {
    let map = |n: &str| -> String {
        let n: u64 = n
            .parse()
            .unwrap_or_else(|_| panic!("numeric timestamp: {n:?}"));
        // Odd multiplier, wrapping: a bijection, so distinct stays distinct.
        n.wrapping_mul(3).wrapping_add(77).to_string()
    };
    text.lines()
        .map(|line| {
            for key in [
                "timestamp = ",
                "timestamp ",
                "reference_ts ",
                "last_frame_ts ",
                "golden_frame_ts ",
                "alt_frame_ts ",
                "backward_ref_ts ",
                "forward_ref_ts ",
            ] {
                if let Some(at) = line.find(key) {
                    let start = at + key.len();
                    let end = line[start..]
                        .find(|c: char| !c.is_ascii_digit())
                        .map_or(line.len(), |e| start + e);
                    return format!(
                        "{}{}{}",
                        &line[..start],
                        map(&line[start..end]),
                        &line[end..]
                    );
                }
            }
            line.to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn h264_frames_carry_their_controls_and_resolved_references() {
    let frames = frames(&sample("h264_main_bframes"));
    assert_eq!(frames.len(), 6);
    for frame in &frames {
        assert_eq!(frame.runs, 1, "GStreamer sends one slice per frame here");
        for control in [
            "v4l2_ctrl_h264_sps",
            "v4l2_ctrl_h264_pps",
            "v4l2_ctrl_h264_slice_params",
            "v4l2_ctrl_h264_decode_params",
        ] {
            assert!(
                frame.controls.contains_key(control),
                "frame {} lacks {control}",
                frame.index
            );
        }
    }
    let first = &frames[0];
    assert_eq!(
        field(first, "v4l2_ctrl_h264_decode_params", "flags"),
        "IDR_PIC"
    );
    assert_eq!(
        field(first, "v4l2_ctrl_h264_slice_params", "slice_type"),
        "I"
    );
    assert!(
        !first
            .controls
            .keys()
            .any(|k| k.contains("dpb_entry") || k.contains("ref_pic_list")),
        "an IDR frame has no references: {:?}",
        first.controls.keys()
    );
    // The clip is 320x240 main profile (tests/media/generate.sh).
    assert_eq!(field(first, "v4l2_ctrl_h264_sps", "profile_idc"), "77");
    assert_eq!(
        field(first, "v4l2_ctrl_h264_sps", "pic_width_in_mbs_minus1"),
        "19"
    );
    assert_eq!(
        field(
            first,
            "v4l2_ctrl_h264_sps",
            "pic_height_in_map_units_minus1"
        ),
        "14"
    );

    let mut saw_b = false;
    for frame in &frames[1..] {
        let kind = field(frame, "v4l2_ctrl_h264_slice_params", "slice_type");
        saw_b |= kind == "B";
        // Every active reference resolves, through its DPB slot, to a frame
        // decoded before, which the DPB holds.
        let l0 = field(frame, "v4l2_h264_ref_pic_list0[0]", "frame");
        let target: usize = l0
            .strip_prefix("frame ")
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("frame {}: list0[0] = {l0}", frame.index));
        assert!(target < frame.index);
        assert!(frame
            .controls
            .contains_key(&format!("v4l2_h264_dpb_entry[{l0}]")));
        assert_eq!(
            frame.controls.contains_key("v4l2_h264_ref_pic_list1[0]"),
            kind == "B"
        );
        // Entries past num_ref_idx_l0_active_minus1 are dropped.
        let active: usize = field(
            frame,
            "v4l2_ctrl_h264_slice_params",
            "num_ref_idx_l0_active_minus1",
        )
        .parse::<usize>()
        .expect("number")
            + 1;
        assert!(!frame
            .controls
            .contains_key(&format!("v4l2_h264_ref_pic_list0[{active}]")));
    }
    assert!(saw_b, "the clip has B frames");
}

#[test]
fn hex_dumps_over_several_lines_become_one_value() {
    let frames = frames(&sample("h264_main_bframes"));
    // Present in the raw trace even though this PPS does not use it.
    let events = visl_trace::parse_events(&sample("h264_main_bframes")).expect("parses");
    let matrix = events
        .iter()
        .find(|e| e.name == "v4l2_ctrl_h264_scaling_matrix")
        .expect("traced");
    let count = |key: &str| -> usize {
        let value = matrix.field(key).expect("field");
        assert!(value.starts_with('{') && value.ends_with('}'), "{value}");
        value
            .trim_matches(|c| c == '{' || c == '}')
            .split(' ')
            .count()
    };
    assert_eq!(count("scaling_list_4x4"), 6 * 16);
    assert_eq!(count("scaling_list_8x8"), 6 * 64);
    // ...and normalised away, since the PPS lacks SCALING_MATRIX_PRESENT.
    assert!(frames
        .iter()
        .all(|f| !f.controls.contains_key("v4l2_ctrl_h264_scaling_matrix")));
}

#[test]
fn timestamps_become_frame_indices_whatever_the_numbering() {
    for name in ["h264_main_bframes", "vp8", "vp9", "mpeg2", "hevc_main"] {
        let text = sample(name);
        let renumbered = renumber(&text);
        assert_ne!(text, renumbered);
        let (a, b) = (frames(&text), frames(&renumbered));
        let differences = visl_trace::diff(&a, &b);
        assert!(differences.is_empty(), "{name}: {differences:?}");
        assert_eq!(visl_trace::render(&a), visl_trace::render(&b));
    }
}

#[test]
fn vp8_and_vp9_intra_frames_have_no_references() {
    for (name, control) in [
        ("vp8", "v4l2_ctrl_vp8_frame"),
        ("vp9", "v4l2_ctrl_vp9_frame"),
    ] {
        let frames = frames(&sample(name));
        assert_eq!(frames.len(), 3, "{name}");
        assert!(field(&frames[0], control, "flags").contains("KEY_FRAME"));
        for key in ["last_frame_ts", "golden_frame_ts", "alt_frame_ts"] {
            assert_eq!(field(&frames[0], control, key), "unused", "{name}");
            assert_eq!(field(&frames[1], control, key), "frame 0", "{name}");
        }
        assert_eq!(
            field(&frames[2], control, "last_frame_ts"),
            "frame 1",
            "{name}"
        );
    }
}

#[test]
fn mpeg2_references_follow_the_picture_type() {
    let frames = frames(&sample("mpeg2"));
    fn refs(f: &FrameRecord) -> (&str, &str, &str) {
        let pic = "v4l2_ctrl_mpeg2_picture";
        (
            field(f, pic, "picture_coding_type"),
            field(f, pic, "forward_ref_ts"),
            field(f, pic, "backward_ref_ts"),
        )
    }
    // Decode order of an IBBP stream: I P B B.
    assert_eq!(refs(&frames[0]), ("1", "unused", "unused"));
    assert_eq!(refs(&frames[1]), ("2", "frame 0", "unused"));
    assert_eq!(refs(&frames[2]), ("3", "frame 0", "frame 1"));
    assert_eq!(refs(&frames[3]), ("3", "frame 0", "frame 1"));
}

#[test]
fn runs_sharing_a_timestamp_are_slices_of_one_frame() {
    // Give the second request the first one's timestamp, as slice-based
    // decoding does.
    let text = sample("mpeg2");
    let mut seen = 0;
    let merged: Vec<String> = text
        .lines()
        .map(|line| {
            if line.contains("vb2_buf_done") && line.contains("type = 10") {
                seen += 1;
                if seen == 2 {
                    let at = line.find("timestamp = ").expect("timestamp") + "timestamp = ".len();
                    return format!("{}{}", &line[..at], 0);
                }
            }
            line.to_string()
        })
        .collect();
    let first_ts = text
        .lines()
        .find(|l| l.contains("type = 10"))
        .expect("a run");
    assert!(
        first_ts.ends_with("timestamp = 0"),
        "sample starts at 0: {first_ts}"
    );
    let frames = frames(&merged.join("\n"));
    assert_eq!(frames.len(), 3);
    assert_eq!(frames[0].runs, 2);
    assert!(frames[0]
        .controls
        .contains_key("slice1/v4l2_ctrl_mpeg2_picture"));
    assert_eq!(frames[1].runs, 1);
}

#[test]
fn differences_are_reported_per_field() {
    let a = frames(&sample("vp8"));
    let mut b = a.clone();
    b[1].controls
        .get_mut("v4l2_ctrl_vp8_frame")
        .expect("control")
        .insert("last_frame_ts".into(), "frame 1".into());
    b.pop();
    let differences = visl_trace::diff(&a, &b);
    assert_eq!(
        differences,
        vec![
            "frame count: 3 vs 2".to_string(),
            "frame 1: v4l2_ctrl_vp8_frame.last_frame_ts: frame 0 vs frame 1".to_string(),
        ]
    );
}

#[test]
fn bad_traces_give_errors_not_panics() {
    let text = sample("vp8");
    // Cut before the last run's OUTPUT buffer completes.
    let last_done = text.rfind("vb2_buf_done").expect("runs");
    let line_start = text[..last_done].rfind('\n').expect("line");
    let cut = &text[..line_start];
    let cut = &cut[..cut
        .rfind("vb2_buf_done")
        .map_or(0, |p| cut[..p].rfind('\n').unwrap_or(0))];
    assert!(matches!(
        visl_trace::normalise(cut),
        Err(TraceError::UnterminatedRun(_))
    ));
    assert_eq!(visl_trace::normalise(""), Err(TraceError::Empty));
    assert_eq!(
        visl_trace::normalise("# tracer: nop\nnot a trace\n\u{0}\u{1}"),
        Err(TraceError::Empty)
    );
    // An unterminated hex dump.
    let broken =
        "  x-1 [000] ..... 1.0: v4l2_ctrl_h264_scaling_matrix: \nscaling_list_4x4 {\n10 10\n";
    assert!(matches!(
        visl_trace::normalise(broken),
        Err(TraceError::Malformed { .. })
    ));
}

#[test]
fn hevc_dpb_is_cut_to_the_active_entries() {
    let frames = frames(&sample("hevc_main"));
    assert_eq!(frames.len(), 3);
    for frame in &frames {
        let active: usize = field(
            frame,
            "v4l2_ctrl_hevc_decode_params",
            "num_active_dpb_entries",
        )
        .parse()
        .expect("number");
        let entries: Vec<&String> = frame
            .controls
            .keys()
            .filter(|k| k.starts_with("v4l2_hevc_dpb_entry["))
            .collect();
        assert_eq!(entries.len(), active, "frame {}: {entries:?}", frame.index);
        for entry in entries {
            let ts = field(frame, entry, "timestamp");
            assert!(
                ts.starts_with("frame "),
                "frame {}: {entry} = {ts}",
                frame.index
            );
        }
    }
    assert_eq!(
        field(
            &frames[0],
            "v4l2_ctrl_hevc_decode_params",
            "num_active_dpb_entries"
        ),
        "0"
    );
    assert_ne!(
        field(
            &frames[1],
            "v4l2_ctrl_hevc_decode_params",
            "num_active_dpb_entries"
        ),
        "0"
    );
}

#[test]
fn av1_fields_without_a_space_after_the_colon_parse() {
    let frames = frames(&sample("av1"));
    assert_eq!(frames.len(), 3);
    let feature = field(
        &frames[0],
        "v4l2_ctrl_av1_frame",
        "segmentation.feature_enabled",
    );
    assert!(
        feature.starts_with('{') && feature.ends_with('}'),
        "{feature}"
    );
    assert!(!frames[0].controls["v4l2_ctrl_av1_frame"]
        .keys()
        .any(|k| k.contains(':')));
    // The key frame refers to nothing; the third frame to the first two.
    assert!(!field(&frames[0], "v4l2_ctrl_av1_frame", "reference_frame_ts").contains("frame "));
    let refs = field(&frames[2], "v4l2_ctrl_av1_frame", "reference_frame_ts");
    assert!(
        refs.contains("frame 0") && refs.contains("frame 1"),
        "{refs}"
    );
}

#[test]
fn av1_loop_filter_flags_count_only_where_frames_are_deblocked() {
    // av1_altref (GStreamer 1.26): frame 0 is an intra block copy key frame
    // (no loop filter, its flags not coded, but defined by
    // setup_past_independence(): no primary reference frame), frame 1 is
    // deblocked.
    let frames = frames(&sample("av1_altref"));
    let frame = "v4l2_ctrl_av1_frame";
    assert!(field(&frames[0], frame, "flags").contains("ALLOW_INTRABC"));
    assert_eq!(field(&frames[0], frame, "primary_ref_frame"), "7");
    assert_eq!(
        field(&frames[0], frame, "loop_filter.flags"),
        "DELTA_ENABLED"
    );
    // The same frame naming a primary reference frame: the flags are the
    // last header's, not compared.
    let text = sample("av1_altref").replacen("primary_ref_frame: 7", "primary_ref_frame: 0", 1);
    let referenced = visl_trace::normalise(&text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(field(&referenced[0], frame, "loop_filter.flags"), "unused");
    assert_ne!(
        field(&frames[1], frame, "loop_filter.level"),
        "{0x0,0x0,0x0,0x0}"
    );
    assert_eq!(
        field(&frames[1], frame, "loop_filter.flags"),
        "DELTA_ENABLED"
    );
}

#[test]
fn a_trace_from_a_later_frame_is_numbered_from_it() {
    let all = frames(&sample("vp8"));
    let later = visl_trace::from_frame(&all, 1);
    assert_eq!(later.len(), all.len() - 1);
    assert_eq!(later[0].index, 0);
    // Frame 1's references were frame 0, before the cut: a decoder starting
    // at frame 1 has none.
    for key in ["last_frame_ts", "golden_frame_ts", "alt_frame_ts"] {
        assert_eq!(field(&later[0], "v4l2_ctrl_vp8_frame", key), "unknown");
    }
    // Frame 2's last frame was frame 1, now the first.
    assert_eq!(
        field(&later[1], "v4l2_ctrl_vp8_frame", "last_frame_ts"),
        "frame 0"
    );
    // Fields without references are as they were.
    let untouched = |f: &FrameRecord| {
        let mut c = f.controls["v4l2_ctrl_vp8_frame"].clone();
        for key in ["last_frame_ts", "golden_frame_ts", "alt_frame_ts"] {
            c.remove(key);
        }
        c
    };
    assert_eq!(untouched(&later[1]), untouched(&all[2]));
    assert!(visl_trace::from_frame(&all, all.len()).is_empty());
}
