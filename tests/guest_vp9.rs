//! VP9 through reel's V4L2 stateless path, in the QEMU guest with visl,
//! against GStreamer 1.22's `v4l2slvp9dec` (host root) on the same clips
//! (the oracle stored by `support::oracle`):
//! - the normalised visl traces (frame control, compressed header with its
//!   coefficient and motion vector probability updates) match frame by
//!   frame for every VP9 clip: tiles and segmentation, profile 2, hidden
//!   altref frames in superframes, show_existing_frame;
//! - the OUTPUT buffers hold the same bytes as GStreamer's (the size and
//!   sha256 of each, stored with the oracle);
//! - `--output framemd5`: FFmpeg's frame count (frames shown again
//!   included, hidden ones not), increasing pts, the same output twice;
//! - reference scaling: a stream that goes from 320x240 to 240x180 on an
//!   inter frame (no GStreamer oracle: GStreamer drops such frames until
//!   the next key frame) decodes whole into the first CAPTURE buffers;
//! - exact seek lands on the frame shown at the target;
//! - a copy with a damaged frame header resumes at the next key frame;
//! - 24 damaged copies of a clip (support::damage; all 200 go through the
//!   software path in tests/damage_software.rs): no panic, no hang, the
//!   exit status README documents, every frame from the first key frame
//!   after the damage on output;
//! - in weston 14 headless the show_existing_frame clip plays zero-copy:
//!   every presented frame, shown-again ones included, is visl's own
//!   CAPTURE buffer.
//!
//! Every reel run happens in one guest boot; each test checks its part.

mod support;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use support::damage::{self, DamageRuns};
use support::media;
use support::oracle::{self, OracleClip};
use support::reel_runs::{self, traced_decode};
use support::visl_bitstream;
use support::visl_trace;
use support::vm::{Guest, GuestCommand, GuestResult, ScriptCall};

const LABEL: &str = "guest-vp9";

/// Where the seek test starts vp9.webm (30 fps, 30 frames, one key frame).
const SEEK_SECONDS: f64 = 0.5;

/// Key frames at 0 and 8 of 15: damage in frame 3 must not stop frames 8
/// on from decoding.
const CORRUPTED_SOURCE: &str = "vp9_profile2.webm";
const DAMAGED_FRAME: usize = 3;
const NEXT_KEY_FRAME: usize = 8;

/// Reference scaling: ten frames of 320x240, then ten of 240x180 from an
/// inter frame on.
const RESIZE_CLIP: &str = "vp9_resize.webm";

/// The clip played in weston, and its runs' name.
const WESTON_CLIP: &str = "vp9_show_existing.webm";
const WESTON_NAME: &str = "weston-vp9";

/// Clips whose OUTPUT buffers are compared byte for byte with GStreamer's.
const BITSTREAM_CLIPS: [&str; 2] = ["vp9_altref", "vp9_show_existing"];

/// The VP9 clips GStreamer's oracle covers.
fn vp9_clips() -> Vec<&'static OracleClip> {
    oracle::CLIPS
        .iter()
        .filter(|c| c.element == "v4l2slvp9dec")
        .collect()
}

/// The damaged copy of CORRUPTED_SOURCE: frame DAMAGED_FRAME's first byte
/// (frame marker and profile) zeroed, so that its header is refused; the
/// container is untouched. Made next to the other test files (the guest
/// sees the same path).
fn corrupted_clip(media: &Path) -> PathBuf {
    let source = media.join(CORRUPTED_SOURCE);
    let positions: Vec<usize> = media::ffprobe(&source, "packet=pos");
    let mut data = std::fs::read(&source).unwrap_or_else(|e| panic!("{}: {e}", source.display()));
    // A Matroska packet's position is its block's track number (a vint),
    // followed by a 2-byte timecode and a flags byte, then the frame.
    let block = positions[DAMAGED_FRAME];
    let track_number_len = data[block].leading_zeros() as usize + 1;
    let frame = block + track_number_len + 3;
    assert_eq!(data[frame] >> 6, 2, "no VP9 frame marker at byte {frame}");
    data[frame] = 0;
    let path = support::target_dir().join(LABEL).join("vp9_corrupted.webm");
    std::fs::create_dir_all(path.parent().expect("a directory")).expect("create directory");
    std::fs::write(&path, data).expect("write the damaged copy");
    path
}

/// The first damaged copies of support::damage's vp9 source, made on
/// the host, where the guest sees them too (tests/damage_software.rs runs
/// the rest through the software path).
fn damaged() -> &'static DamageRuns {
    static DAMAGED: OnceLock<DamageRuns> = OnceLock::new();
    DAMAGED.get_or_init(|| DamageRuns::for_guest(damage::source("vp9")))
}

fn runs() -> &'static GuestResult {
    static RUNS: OnceLock<GuestResult> = OnceLock::new();
    RUNS.get_or_init(|| {
        let media = media::dir();
        let v4l2_null = ["--hwdec", "v4l2", "--output", "null"];
        let v4l2_framemd5 = ["--hwdec", "v4l2", "--output", "framemd5"];
        let mut calls = vec![damaged().guest_call()];
        for clip in vp9_clips() {
            let file = media.join(clip.file);
            let name = clip.name;
            calls.push(traced_decode(&format!("trace-{name}"), &v4l2_null, &file));
            calls.extend(reel_runs::framemd5_twice(name, &file));
        }
        let resize = media.join(RESIZE_CLIP);
        calls.push(traced_decode("trace-vp9_resize", &v4l2_null, &resize));
        calls.push(traced_decode("md5a-vp9_resize", &v4l2_framemd5, &resize));
        calls.push(traced_decode("md5b-vp9_resize", &v4l2_framemd5, &resize));
        let seek = SEEK_SECONDS.to_string();
        calls.push(traced_decode(
            "seek",
            &["--hwdec", "v4l2", "--start", &seek, "--output", "framemd5"],
            &media.join("vp9.webm"),
        ));
        calls.push(traced_decode(
            "corrupted",
            &v4l2_framemd5,
            &corrupted_clip(media),
        ));
        // Playback in weston (the generic playback script: framemd5 runs,
        // then `--loop` and `--paused` playbacks, each until a frame is
        // presented).
        calls.push(
            ScriptCall::new("fwht-play.sh")
                .arg(env!("CARGO_BIN_EXE_reel"))
                .arg(WESTON_NAME)
                .arg(media.join(WESTON_CLIP))
                .arg("320x240")
                .arg("0.2")
                .arg("play"),
        );
        // Last (they reload visl): the OUTPUT buffers' bytes (GStreamer's
        // are stored with its oracle).
        for name in BITSTREAM_CLIPS {
            let file = media.join(oracle::clip(name).expect("known clip").file);
            calls.push(
                ScriptCall::new("visl-bitstream.sh")
                    .arg(format!("bits-reel-{name}"))
                    .args(["timeout", "120", env!("CARGO_BIN_EXE_reel")])
                    .args(v4l2_null)
                    .arg(&file),
            );
        }
        let count = calls.len();
        let result = Guest::run(
            &GuestCommand::scripts(calls)
                .timeout(Duration::from_secs(
                    120 + 60 * count as u64 + damaged().guest_seconds(),
                ))
                .env("RUST_BACKTRACE", "1")
                .label(LABEL),
        )
        .unwrap_or_else(|e| panic!("the test guest did not run: {e}"));
        result.assert_success();
        result
    })
}

#[test]
fn traces_match_gstreamer() {
    let mut failures = Vec::new();
    for clip in vp9_clips() {
        let oracle = oracle::oracle_frames(clip).unwrap_or_else(|e| panic!("{e}"));
        let reel = reel_runs::reel_frames(runs(), &format!("trace-{}", clip.name), LABEL);
        assert_eq!(reel.len(), oracle.len(), "{}: frames traced", clip.name);
        // Every frame a stateless decoder is given, hidden ones included
        // and frames shown again left out (they make no request).
        let given = oracle::ffmpeg_frame_count(clip, media::dir()).expect("ffmpeg");
        assert_eq!(reel.len(), given, "{}: requests", clip.name);
        let diff = visl_trace::diff(&oracle, &reel);
        failures.extend(reel_runs::diff_report(clip.name, &diff));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The OUTPUT buffers visl kept for one run (visl-bitstream.sh), in
/// sequence order.
fn output_buffers(name: &str) -> Vec<Vec<u8>> {
    let r = runs();
    let rc = r.read_result(&format!("{name}.rc")).unwrap_or_default();
    assert_eq!(rc.trim(), "0", "{name}: exit status\n{}", r.report());
    let dir = r.result_dir.join(format!("{name}.bitstream"));
    let mut numbered: Vec<(u32, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| {
            let path = entry.expect("directory entry").path();
            let n = path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_prefix("bitstream"))
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("unexpected dump {}", path.display()));
            (n, std::fs::read(&path).unwrap_or_else(|e| panic!("{e}")))
        })
        .collect();
    numbered.sort_by_key(|(n, _)| *n);
    numbered.into_iter().map(|(_, bytes)| bytes).collect()
}

#[test]
fn output_buffer_bytes_equal_gstreamers() {
    for name in BITSTREAM_CLIPS {
        let ours = output_buffers(&format!("bits-reel-{name}"));
        let clip = oracle::clip(name).expect("known clip");
        let theirs = oracle::oracle_output_digests(clip).unwrap_or_else(|e| panic!("{e}"));
        assert!(!ours.is_empty(), "{name}: no OUTPUT buffer dumped");
        let differences = visl_bitstream::differences(name, &ours, &theirs);
        assert!(differences.is_empty(), "{}", differences.join("\n"));
        eprintln!("{name}: {} OUTPUT buffers equal GStreamer's", ours.len());
    }
}

#[test]
fn framemd5_has_every_shown_frame_in_order_and_is_deterministic() {
    for clip in vp9_clips() {
        let name = clip.name;
        reel_runs::assert_framemd5_in_order_and_deterministic(
            runs(),
            name,
            &media::dir().join(clip.file),
        );
    }
}

#[test]
fn reference_scaling_keeps_the_capture_buffers() {
    let name = "trace-vp9_resize";
    let (log, _) = reel_runs::successful(runs(), name);
    assert!(
        !log.contains("new sequence"),
        "the smaller inter frames set the queues up again:\n{log}"
    );
    let frames = reel_runs::reel_frames(runs(), name, LABEL);
    let widths: Vec<String> = frames
        .iter()
        .map(|f| f.controls["v4l2_ctrl_vp9_frame"]["frame_width_minus_1"].clone())
        .collect();
    let mut expected = vec!["319".to_string(); 10];
    expected.extend(vec!["239".to_string(); 10]);
    assert_eq!(widths, expected, "{name}");
    // The first smaller frame predicts from the larger ones.
    let first_small = &frames[10].controls["v4l2_ctrl_vp9_frame"];
    assert!(
        !first_small["flags"].contains("KEY_FRAME"),
        "{first_small:?}"
    );
    assert_eq!(first_small["last_frame_ts"], "frame 9", "{first_small:?}");

    let (_, first) = reel_runs::successful(runs(), "md5a-vp9_resize");
    let (_, second) = reel_runs::successful(runs(), "md5b-vp9_resize");
    assert_eq!(first, second, "two runs differ");
    let sizes: Vec<u32> = first
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            l.split(',')
                .nth(4)
                .and_then(|v| v.trim().parse().ok())
                .expect("size")
        })
        .collect();
    let mut expected = vec![320 * 240 * 3 / 2; 10];
    expected.extend(vec![240 * 180 * 3 / 2; 10]);
    assert_eq!(sizes, expected, "frame sizes (4:2:0 bytes)");
    assert_eq!(
        sizes.len(),
        media::frame_count(&media::dir().join(RESIZE_CLIP))
    );
}

/// The framemd5 header's time base of the video stream.
#[test]
fn seeking_starts_at_the_frame_shown_at_the_target() {
    let (_, full) = reel_runs::successful(runs(), "md5a-vp9");
    let (log, seek) = reel_runs::successful(runs(), "seek");
    let (num, den) = reel_runs::framemd5_time_base(&full);
    let full = reel_runs::framemd5_lines(&full);
    let first = full.first().map(|l| l.0).expect("frames");
    let target = first + (SEEK_SECONDS * den as f64 / num as f64).round() as i64;
    let expected: Vec<i64> = full.iter().map(|l| l.0).filter(|&p| p >= target).collect();
    let got: Vec<i64> = reel_runs::framemd5_lines(&seek)
        .iter()
        .map(|l| l.0)
        .collect();
    assert!(!expected.is_empty());
    assert_eq!(got, expected, "{log}");
}

#[test]
fn a_damaged_frame_header_resumes_at_the_next_key_frame() {
    let (rc, log, out) = reel_runs::outcome(runs(), "corrupted");
    assert_ne!(rc, 124, "timed out:\n{log}");
    assert!(!log.contains("panicked"), "{log}");
    assert!(
        log.contains("frame_marker 0"),
        "the damaged header was not reported:\n{log}"
    );
    // Frames before the damage, then from the next key frame on; the
    // frames between need references the damage took.
    let total = media::frame_count(&media::dir().join(CORRUPTED_SOURCE));
    let trace = runs()
        .read_result("corrupted.trace")
        .unwrap_or_else(|e| panic!("corrupted: {e}"));
    let frames = visl_trace::normalise(&trace).unwrap_or_else(|e| panic!("corrupted: {e}"));
    assert_eq!(
        frames.len(),
        DAMAGED_FRAME + total - NEXT_KEY_FRAME,
        "{log}"
    );
    let key_frames: Vec<usize> = frames
        .iter()
        .enumerate()
        .filter(|(_, f)| {
            f.controls
                .get("v4l2_ctrl_vp9_frame")
                .and_then(|c| c.get("flags"))
                .is_some_and(|flags| flags.split('|').any(|f| f == "KEY_FRAME"))
        })
        .map(|(i, _)| i)
        .collect();
    assert_eq!(key_frames, vec![0, DAMAGED_FRAME], "{log}");
    assert_eq!(
        reel_runs::framemd5_lines(&out).len(),
        DAMAGED_FRAME + total - NEXT_KEY_FRAME,
        "{log}"
    );
}

#[test]
fn playback_in_weston_is_zero_copy() {
    for play in ["loop", "paused"].map(|p| format!("{WESTON_NAME}-{p}")) {
        let log = runs()
            .read_result(&format!("{play}.log"))
            .unwrap_or_default();
        let rc = runs()
            .read_result(&format!("{play}.rc"))
            .unwrap_or_default();
        assert_eq!(rc.trim(), "0", "{play}: reel failed:\n{log}");
        assert!(!log.contains("panicked"), "{play}:\n{log}");
        let s = support::reel_output::stats(&log)
            .unwrap_or_else(|| panic!("{play}: no stats line:\n{log}"));
        let presented = support::reel_output::number(&s, "presented");
        assert!(presented > 0, "{play}: nothing presented: {s:?}");
        assert_eq!(
            support::reel_output::number(&s, "zero_copy_frames"),
            presented,
            "{play}: {s:?}"
        );
        assert_eq!(
            support::reel_output::number(&s, "copy_frames"),
            0,
            "{play}: {s:?}"
        );
        assert!(
            log.contains("dmabuf negotiation: zero-copy: V4L2"),
            "{play}: no zero-copy negotiation in reel's log"
        );
    }
}

#[test]
fn damaged_copies_recover_at_the_next_key_frame() {
    damaged().assert_recovered(runs());
}
