//! The stored GStreamer oracles (`tests/data/oracles/`, see
//! `support::oracle`), on the host, without a guest: every clip of
//! `oracle::CLIPS` has one, each was made from the clip
//! `tests/media/generate.sh` makes today (the same sha256), by the GStreamer
//! of its root (1.22 on bookworm's root, 1.26 on trixie's), and the traces
//! are complete and sane: FFmpeg's frame count, the codec's controls in
//! every frame, references to earlier frames only.
//!
//! `refresh_the_store` (ignored) is how tests/oracles/refresh.sh captures
//! the store again; nothing else here boots a guest.

mod support;

use support::media;
use support::oracle::{self, OracleClip};
use support::visl_trace::FrameRecord;

/// Fails with every problem found, and what to do about them.
#[track_caller]
fn assert_none(what: &str, problems: &[String]) {
    assert!(
        problems.is_empty(),
        "{what}:\n{}\n{}",
        problems.join("\n"),
        oracle::REFRESH
    );
}

#[test]
fn every_oracle_clip_has_a_stored_oracle() {
    let index = oracle::index().unwrap_or_else(|e| panic!("{e}\n{}", oracle::REFRESH));
    let store = oracle::store_dir();
    let mut problems = Vec::new();
    for clip in oracle::CLIPS {
        let Some(entry) = index.iter().find(|e| e.name == clip.name) else {
            problems.push(format!("{}: no stored oracle", clip.name));
            continue;
        };
        if entry.file != clip.file {
            problems.push(format!(
                "{}: the stored oracle is of {}, the clip is {}",
                clip.name, entry.file, clip.file
            ));
        }
        for file in [&entry.trace, &entry.buffers] {
            if !store.join(file).is_file() {
                problems.push(format!("{}: {file} is not in the store", clip.name));
            }
        }
    }
    for entry in index {
        if oracle::clip(&entry.name).is_none() {
            problems.push(format!(
                "{}: stored, but not a clip of oracle::CLIPS",
                entry.name
            ));
        }
        if index.iter().filter(|e| e.name == entry.name).count() > 1 {
            problems.push(format!("{}: stored more than once", entry.name));
        }
    }
    assert_none("the oracle store", &problems);
}

#[test]
fn stored_oracles_were_made_from_the_generated_clips() {
    let index = oracle::index().unwrap_or_else(|e| panic!("{e}\n{}", oracle::REFRESH));
    let media = media::dir();
    let mut problems = Vec::new();
    for entry in index {
        let path = media.join(&entry.file);
        match oracle::file_sha256(&path) {
            Ok(sha256) if sha256 == entry.sha256 => {}
            Ok(sha256) => problems.push(format!(
                "{}: {} has sha256 {sha256}, its stored oracle was made from {}",
                entry.name, entry.file, entry.sha256
            )),
            Err(e) => problems.push(format!("{}: {e}", entry.name)),
        }
    }
    assert_none(
        "clips that are not the ones their stored oracle was made from \
         (tests/media/generate.sh or an encoder changed them)",
        &problems,
    );
}

/// Each root's GStreamer made its clips' oracles: bookworm's GStreamer 1.22
/// cannot decode HEVC on 6.12 (its element crashes) and has no AV1 element,
/// so those come from trixie's 1.26 (refresh.sh checks the root when it
/// captures).
#[test]
fn stored_oracles_come_from_their_roots_gstreamer() {
    let index = oracle::index().unwrap_or_else(|e| panic!("{e}\n{}", oracle::REFRESH));
    let mut problems = Vec::new();
    for entry in index {
        let Some(clip) = oracle::clip(&entry.name) else {
            continue; // every_oracle_clip_has_a_stored_oracle names it
        };
        let (version, codename) = oracle::expected_gstreamer(clip.root);
        if !entry.gstreamer.starts_with(version) {
            problems.push(format!(
                "{}: made by GStreamer {}, not {codename}'s {version}x",
                clip.name, entry.gstreamer
            ));
        }
    }
    assert_none("oracles from another GStreamer", &problems);
}

/// Every stored trace has one OUTPUT buffer digest per decode run (request).
#[test]
fn stored_buffers_match_the_traces_requests() {
    let mut problems = Vec::new();
    for clip in oracle::CLIPS {
        let frames = match oracle::oracle_frames(clip) {
            Ok(frames) => frames,
            Err(e) => {
                problems.push(e);
                continue;
            }
        };
        let digests = match oracle::oracle_output_digests(clip) {
            Ok(digests) => digests,
            Err(e) => {
                problems.push(e);
                continue;
            }
        };
        let runs: usize = frames.iter().map(|f| f.runs).sum();
        if digests.len() != runs || digests.is_empty() {
            problems.push(format!(
                "{}: {} OUTPUT buffers stored, {runs} decode runs traced",
                clip.name,
                digests.len()
            ));
        }
    }
    assert_none("stored oracles", &problems);
}

/// Checks one clip's oracle against FFmpeg and the codec's control set.
fn check_capture(clip: &OracleClip) -> Result<(), String> {
    let media = media::dir();
    let frames = oracle::oracle_frames(clip)?;
    let expected = oracle::ffmpeg_frame_count(clip, media)?;
    let mut problems = Vec::new();
    if frames.len() != expected {
        problems.push(format!(
            "{} frames traced, FFmpeg counts {expected}",
            frames.len()
        ));
    }
    for frame in &frames {
        for control in clip.per_frame_controls {
            if !frame.controls.contains_key(*control) {
                problems.push(format!("frame {} lacks {control}", frame.index));
            }
        }
        // Every reference names a frame decoded before this one.
        for (control, fields) in &frame.controls {
            for (key, value) in fields {
                for part in value.trim_matches(|c| c == '{' || c == '}').split(',') {
                    if let Some(n) = part.strip_prefix("frame ") {
                        let n: usize = n.parse().map_err(|_| format!("bad frame ref {part}"))?;
                        if n > frame.index {
                            problems.push(format!(
                                "frame {}: {control}.{key} names a later frame {n}",
                                frame.index
                            ));
                        }
                    }
                    // AV1 key frames' references are left at any value
                    // and visl does not trace the frame type. The second
                    // field of the first MPEG-2 frame (I then P) predicts
                    // from the first field, in its own CAPTURE buffer,
                    // which drivers address themselves: there is no
                    // earlier frame to name.
                    let first_fields_own_reference = frame.index == 0
                        && control == "slice1/v4l2_ctrl_mpeg2_picture"
                        && key == "forward_ref_ts";
                    if part == "unknown"
                        && !control.starts_with("v4l2_ctrl_av1")
                        && !first_fields_own_reference
                    {
                        problems.push(format!(
                            "frame {}: {control}.{key} names no earlier frame",
                            frame.index
                        ));
                    }
                    if part.starts_with("invalid slot") {
                        problems.push(format!("frame {}: {control}.{key}: {part}", frame.index));
                    }
                }
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        problems.truncate(20);
        Err(format!("{}: {}", clip.name, problems.join("; ")))
    }
}

/// Every clip's, bookworm's (GStreamer 1.22) and trixie's (1.26).
#[test]
fn gstreamer_oracle_captures_are_complete() {
    let failures: Vec<String> = oracle::CLIPS
        .iter()
        .filter_map(|c| check_capture(c).err())
        .collect();
    assert!(
        failures.is_empty(),
        "oracle captures:\n{}",
        failures.join("\n")
    );
}

#[test]
fn gstreamer_decodes_h264_slice_based_without_start_codes() {
    // visl defaults to slice-based, no start code; GStreamer 1.22 uses what
    // the driver reports, so a 4-slice clip takes 4 requests per frame.
    let clip = oracle::clip("h264_slices").expect("known clip");
    let frames = oracle::oracle_frames(clip).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        frames.iter().all(|f| f.runs == 4),
        "runs per frame: {:?}",
        frames.iter().map(|f| f.runs).collect::<Vec<_>>()
    );
    let first_mb: Vec<&str> = (0..4)
        .map(|k| {
            let key = if k == 0 {
                "v4l2_ctrl_h264_slice_params".to_string()
            } else {
                format!("slice{k}/v4l2_ctrl_h264_slice_params")
            };
            frames[0].controls[&key]["first_mb_in_slice"].as_str()
        })
        .collect();
    assert_eq!(first_mb[0], "0");
    assert!(
        first_mb
            .windows(2)
            .all(|w| w[0].parse::<u32>().ok() < w[1].parse::<u32>().ok()),
        "{first_mb:?}"
    );
}

/// The values of one field over the controls whose name starts with a prefix.
fn referenced_frames(frame: &FrameRecord, control_prefix: &str, key: &str) -> Vec<String> {
    frame
        .controls
        .iter()
        .filter(|(name, _)| name.starts_with(control_prefix))
        .filter_map(|(_, fields)| fields.get(key).cloned())
        .collect()
}

/// The oracle has FFmpeg's frame count and the codec's controls per frame.
fn check(clip: &OracleClip) -> Vec<FrameRecord> {
    let media = media::dir();
    let frames = oracle::oracle_frames(clip).unwrap_or_else(|e| panic!("{e}"));
    let expected = oracle::ffmpeg_frame_count(clip, media).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        frames.len(),
        expected,
        "{}: frames traced vs FFmpeg's count",
        clip.name
    );
    for frame in &frames {
        for control in clip.per_frame_controls {
            assert!(
                frame.controls.contains_key(*control),
                "{}: frame {} lacks {control}",
                clip.name,
                frame.index
            );
        }
    }
    frames
}

#[test]
fn hevc_oracle_capture_is_complete() {
    let frames = check(oracle::clip("hevc_main").expect("known clip"));
    for frame in &frames {
        // One DPB entry per active reference, each an earlier frame.
        let active: usize = frame.controls["v4l2_ctrl_hevc_decode_params"]
            ["num_active_dpb_entries"]
            .parse()
            .expect("number");
        let refs = referenced_frames(frame, "v4l2_hevc_dpb_entry", "timestamp");
        assert_eq!(refs.len(), active, "frame {}", frame.index);
        for r in refs {
            let n: usize = r
                .strip_prefix("frame ")
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("frame {}: DPB entry {r}", frame.index));
            assert!(n < frame.index, "frame {} refers to {n}", frame.index);
        }
    }
    assert!(frames
        .iter()
        .any(|f| !referenced_frames(f, "v4l2_hevc_dpb_entry", "timestamp").is_empty()));
}

#[test]
fn av1_oracle_capture_is_complete() {
    let frames = check(oracle::clip("av1").expect("known clip"));
    // Inter frames name earlier frames in their reference slots.
    let inter = frames
        .iter()
        .filter(|f| f.controls["v4l2_ctrl_av1_frame"]["reference_frame_ts"].contains("frame "))
        .count();
    assert!(
        inter >= frames.len() / 2,
        "only {inter} of {} frames reference others",
        frames.len()
    );
}

/// The screen-content clip does what it was made for: a frame with intra
/// block copy and no primary reference frame, whose loop filter GStreamer
/// describes as setup_past_independence() leaves it (deltas enabled), the
/// case reel's AV1 trace comparison (tests/guest_codecs/) checks with it.
#[test]
fn av1_intrabc_clip_has_an_intra_block_copy_frame() {
    let frames = check(oracle::clip("av1_intrabc").expect("known clip"));
    let intrabc: Vec<&FrameRecord> = frames
        .iter()
        .filter(|f| {
            f.controls["v4l2_ctrl_av1_frame"]
                .get("flags")
                .is_some_and(|flags| flags.contains("ALLOW_INTRABC"))
        })
        .collect();
    assert!(
        !intrabc.is_empty(),
        "av1_intrabc: no frame with ALLOW_INTRABC"
    );
    for frame in intrabc {
        let av1_frame = &frame.controls["v4l2_ctrl_av1_frame"];
        assert_eq!(
            av1_frame.get("primary_ref_frame").map(String::as_str),
            Some("7"),
            "frame {}",
            frame.index
        );
        assert!(
            av1_frame
                .get("loop_filter.flags")
                .is_some_and(|flags| flags.contains("DELTA_ENABLED")),
            "frame {}: {:?}",
            frame.index,
            av1_frame.get("loop_filter.flags")
        );
    }
}

/// tests/oracles/refresh.sh: captures every oracle again (a guest boot on
/// each root) and replaces the store. Never part of a test run.
#[test]
#[ignore = "tests/oracles/refresh.sh runs it"]
fn refresh_the_store() {
    assert!(
        std::env::var_os("REEL_ORACLE_REFRESH").is_some(),
        "this rewrites tests/data/oracles: run tests/oracles/refresh.sh"
    );
    let summary = oracle::refresh_store().unwrap_or_else(|e| panic!("{e}"));
    for line in summary {
        eprintln!("{line}");
    }
}
