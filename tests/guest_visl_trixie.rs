//! HEVC and AV1 oracles: GStreamer 1.26 from a debootstrapped Debian trixie
//! root, booted as the test guest's root with the same kernel and visl
//! (bookworm's GStreamer 1.22 cannot: its HEVC element crashes on 6.12, it
//! has no AV1 element). Separate from guest_visl so that the host-root tests
//! run whatever happens here.

mod support;

use support::media;
use support::oracle::{self, OracleClip};
use support::visl_trace::FrameRecord;
use support::vm::{Guest, GuestCommand, Root, ScriptCall};

/// The values of one field over the controls whose name starts with a prefix.
fn referenced_frames(frame: &FrameRecord, control_prefix: &str, key: &str) -> Vec<String> {
    frame
        .controls
        .iter()
        .filter(|(name, _)| name.starts_with(control_prefix))
        .filter_map(|(_, fields)| fields.get(key).cloned())
        .collect()
}

/// The capture has FFmpeg's frame count and the codec's controls per frame.
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
fn trixie_root_runs_gstreamer_1_26() {
    let result = Guest::run(
        &GuestCommand::script(ScriptCall::new("gst-version.sh"))
            .root(Root::Trixie)
            .label("trixie-version"),
    )
    .unwrap_or_else(|e| panic!("the trixie guest did not run: {e}"));
    result.assert_success();
    assert!(
        result.stdout.contains("GStreamer 1.26"),
        "{}",
        result.report()
    );
    assert!(
        result.stdout.lines().any(|l| l == "trixie"),
        "{}",
        result.report()
    );
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
