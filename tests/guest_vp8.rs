//! VP8 through reel's V4L2 stateless path, in the QEMU guest with visl,
//! against GStreamer 1.22's `v4l2slvp8dec` (host root) on the same clips
//! (the oracle stored by `support::oracle`):
//! - the normalised `v4l2_ctrl_vp8_frame` traces must match frame by frame
//!   (headers, probabilities after their updates, boolean decoder state,
//!   partition sizes, last/golden/altref references);
//! - the OUTPUT buffers hold the same bytes as GStreamer's (the size and
//!   sha256 of each, stored with the oracle);
//! - `--output framemd5`: FFmpeg's frame count (hidden altref frames are
//!   decoded, not shown), increasing pts, the same output twice;
//! - an exact seek, a corrupted copy resuming at the next key frame, and
//!   `reel probe` naming VP8;
//! - 24 damaged copies of a clip (support::damage; all 200 go through the
//!   software path in tests/damage_software.rs): no panic, no hang, the
//!   exit status README documents, every frame from the first key frame
//!   after the damage on output;
//! - in weston 14 headless, every presented frame is visl's own CAPTURE
//!   buffer (zero-copy), looping and paused after a seek.
//!
//! Every reel run happens in one guest boot; each test checks its part.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use support::damage::{self, DamageRuns};
use support::media;
use support::oracle::{self, OracleClip};
use support::reel_output;
use support::reel_runs::{self, traced_decode};
use support::visl_bitstream;
use support::visl_trace::{self, FrameRecord};
use support::vm::{Guest, GuestCommand, GuestResult, ScriptCall};
use support::weston_log;

const FRAME_CONTROL: &str = "v4l2_ctrl_vp8_frame";

/// The VP8 clips GStreamer's oracle covers.
fn vp8_clips() -> Vec<&'static OracleClip> {
    oracle::CLIPS
        .iter()
        .filter(|c| c.element == "v4l2slvp8dec")
        .collect()
}

/// The clip the seek and OUTPUT-bytes checks use: it has a hidden frame.
const ALTREF_CLIP: &str = "vp8_altref";
/// Where the seek test starts it (30 fps, one key frame).
const SEEK_SECONDS: f64 = 0.5;
/// The name of the weston playbacks (`{PLAY}-loop`, `{PLAY}-paused`).
const PLAY: &str = "play-vp8";
/// Key frames at 0 and 15 of 30 frames: damage in the first half.
const CORRUPTED_SOURCE: &str = "vp8_odd_size";

/// The first damaged copies of support::damage's vp8 source, made on
/// the host, where the guest sees them too (tests/damage_software.rs runs
/// the rest through the software path).
fn damaged() -> &'static DamageRuns {
    static DAMAGED: OnceLock<DamageRuns> = OnceLock::new();
    DAMAGED.get_or_init(|| DamageRuns::for_guest(damage::source("vp8")))
}

fn runs() -> &'static GuestResult {
    static RUNS: OnceLock<GuestResult> = OnceLock::new();
    RUNS.get_or_init(|| {
        let media = media::dir();
        let v4l2_null = ["--hwdec", "v4l2", "--output", "null"];
        let v4l2_framemd5 = ["--hwdec", "v4l2", "--output", "framemd5"];
        let mut calls = vec![damaged().guest_call()];
        for clip in vp8_clips() {
            let file = media.join(clip.file);
            let name = clip.name;
            calls.push(traced_decode(&format!("trace-{name}"), &v4l2_null, &file));
            calls.extend(reel_runs::framemd5_twice(name, &file));
        }
        let altref = media.join(clip(ALTREF_CLIP).file);
        let seek = SEEK_SECONDS.to_string();
        calls.push(traced_decode(
            "seek",
            &["--hwdec", "v4l2", "--start", &seek, "--output", "framemd5"],
            &altref,
        ));
        calls.push(traced_decode(
            "corrupted",
            &v4l2_framemd5,
            &corrupted_clip(&media.join(clip(CORRUPTED_SOURCE).file)),
        ));
        calls.push(traced_decode("probe", &["probe"], &altref));
        // Two playbacks in weston 14 headless (looping; paused at
        // SEEK_SECONDS), through the generic playback script FWHT's test
        // uses too (it runs any clip with `--hwdec v4l2`; visl is loaded).
        calls.push(
            ScriptCall::new("fwht-play.sh")
                .arg(env!("CARGO_BIN_EXE_reel"))
                .arg(PLAY)
                .arg(&altref)
                .arg("320x240")
                .arg(SEEK_SECONDS.to_string())
                .arg("play"),
        );
        // Last (it reloads visl): the OUTPUT buffers' bytes, in visl's
        // default mode (GStreamer's are stored with its oracle).
        calls.push(
            ScriptCall::new("visl-bitstream.sh")
                .arg("bits-reel")
                .args(["timeout", "120", env!("CARGO_BIN_EXE_reel")])
                .args(v4l2_null)
                .arg(&altref),
        );
        let count = calls.len();
        let result = Guest::run(
            &GuestCommand::scripts(calls)
                .timeout(Duration::from_secs(
                    120 + 60 * count as u64 + damaged().guest_seconds(),
                ))
                .env("RUST_BACKTRACE", "1")
                .label("guest-vp8"),
        )
        .unwrap_or_else(|e| panic!("the test guest did not run: {e}"));
        result.assert_success();
        result
    })
}

fn clip(name: &str) -> &'static OracleClip {
    oracle::clip(name).unwrap_or_else(|| panic!("{name}: not an oracle clip"))
}

fn reel_frames(name: &str) -> Vec<FrameRecord> {
    reel_runs::reel_frames(runs(), name, "guest-vp8")
}

fn frame_flags(frame: &FrameRecord) -> &str {
    frame
        .controls
        .get(FRAME_CONTROL)
        .and_then(|c| c.get("flags"))
        .map_or("", String::as_str)
}

/// The frames of a VP8 file as the container holds them (one per packet),
/// through FFmpeg's IVF muxer.
fn packets(file: &Path) -> Vec<Vec<u8>> {
    let output = Command::new("ffmpeg")
        .args(["-nostdin", "-v", "error", "-i"])
        .arg(file)
        .args(["-map", "0:v:0", "-c", "copy", "-f", "ivf", "-"])
        .output()
        .unwrap_or_else(|e| panic!("ffmpeg: {e}"));
    assert!(
        output.status.success(),
        "ffmpeg failed on {}",
        file.display()
    );
    let ivf = output.stdout;
    let mut at = usize::from(u16::from_le_bytes([ivf[6], ivf[7]]));
    let mut frames = Vec::new();
    while at + 12 <= ivf.len() {
        let size = u32::from_le_bytes(ivf[at..at + 4].try_into().expect("4 bytes")) as usize;
        frames.push(ivf[at + 12..at + 12 + size].to_vec());
        at += 12 + size;
    }
    frames
}

/// A copy of `source` with frame 5's first partition overwritten with
/// noise and frame 6's tag claiming a first partition larger than the
/// frame: both inter frames of the first key frame's group. Found by their
/// bytes in the file, so that the container stays intact.
fn corrupted_clip(source: &Path) -> PathBuf {
    let mut data = std::fs::read(source).unwrap_or_else(|e| panic!("{}: {e}", source.display()));
    let frames = packets(source);
    let find = |data: &[u8], frame: &[u8]| {
        data.windows(32)
            .position(|w| w == &frame[..32])
            .unwrap_or_else(|| panic!("frame not found in {}", source.display()))
    };
    let noisy = find(&data, &frames[5]);
    let mut noise = 0x2545_f491_u32;
    for byte in &mut data[noisy + 3..noisy + 3 + 24] {
        noise ^= noise << 13;
        noise ^= noise >> 17;
        noise ^= noise << 5;
        *byte = noise as u8;
    }
    let cut = find(&data, &frames[6]);
    data[cut..cut + 3].copy_from_slice(&[0xf1, 0xff, 0xff]);
    let path = support::target_dir().join("guest-vp8/vp8_corrupted.webm");
    std::fs::create_dir_all(path.parent().expect("has a parent")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(&path, data).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    path
}

#[test]
fn traces_match_gstreamer() {
    let mut failures = Vec::new();
    for clip in vp8_clips() {
        let oracle = oracle::oracle_frames(clip).unwrap_or_else(|e| panic!("{e}"));
        let reel = reel_frames(&format!("trace-{}", clip.name));
        assert_eq!(
            reel.len(),
            oracle::ffmpeg_frame_count(clip, media::dir()).unwrap_or_else(|e| panic!("{e}")),
            "{}: one request per packet",
            clip.name
        );
        assert_eq!(reel.len(), oracle.len(), "{}: frames traced", clip.name);
        let diff = visl_trace::diff(&oracle, &reel);
        failures.extend(reel_runs::diff_report(clip.name, &diff));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The clips do what they were made for: a hidden altref frame, golden
/// and altref references that differ from the last frame, segmentation
/// with map updates, several DCT partitions.
#[test]
fn clips_exercise_hidden_frames_references_and_segmentation() {
    let altref = reel_frames(&format!("trace-{ALTREF_CLIP}"));
    assert!(
        altref
            .iter()
            .any(|f| !frame_flags(f).contains("SHOW_FRAME")),
        "no hidden frame in {ALTREF_CLIP}"
    );
    let field = |f: &FrameRecord, key: &str| {
        f.controls
            .get(FRAME_CONTROL)
            .and_then(|c| c.get(key))
            .cloned()
            .unwrap_or_default()
    };
    assert!(
        altref
            .iter()
            .any(|f| field(f, "alt_frame_ts") != field(f, "last_frame_ts")),
        "the altref slot never differs from the last frame"
    );
    let segmented = reel_frames("trace-vp8_segmentation");
    assert!(segmented.iter().all(|f| {
        let flags = field(f, "segment.flags");
        flags.contains("SEGMENT_ENABLED") || flags.contains("ENABLED")
    }));
    assert!(segmented
        .iter()
        .any(|f| field(f, "segment.flags").contains("UPDATE_MAP")));
    assert!(segmented.iter().all(|f| field(f, "num_dct_parts") == "4"));
}

#[test]
fn framemd5_counts_shown_frames_in_order_and_is_deterministic() {
    for clip in vp8_clips() {
        let name = clip.name;
        reel_runs::assert_framemd5_in_order_and_deterministic(
            runs(),
            name,
            &media::dir().join(clip.file),
        );
    }
}

#[test]
fn seeking_starts_at_the_frame_shown_at_the_target() {
    let (_, full) = reel_runs::successful(runs(), &format!("md5a-{ALTREF_CLIP}"));
    let (log, seek) = reel_runs::successful(runs(), "seek");
    let (num, den) = reel_runs::framemd5_time_base(&full);
    let full = reel_runs::framemd5_lines(&full);
    let first = full.first().map(|l| l.0).expect("frames");
    let target = first + (SEEK_SECONDS * den as f64 / num as f64).round() as i64;
    let expected: Vec<&(i64, String)> = full.iter().filter(|l| l.0 >= target).collect();
    let got = reel_runs::framemd5_lines(&seek);
    assert!(!expected.is_empty());
    // The same pictures too: decoding restarts at the key frame before the
    // target, with the hidden altref frame before it.
    assert_eq!(got.iter().collect::<Vec<_>>(), expected, "{log}");
}

#[test]
fn corrupted_file_resumes_at_the_next_key_frame() {
    let (rc, log, out) = reel_runs::outcome(runs(), "corrupted");
    assert_ne!(rc, 124, "timed out:\n{log}");
    assert!(!log.contains("panicked"), "{log}");
    assert!(
        log.contains("WARN") || log.contains("ERROR"),
        "the damage was not logged:\n{log}"
    );
    let trace = runs()
        .read_result("corrupted.trace")
        .unwrap_or_else(|e| panic!("{e}"));
    let frames = visl_trace::normalise(&trace).unwrap_or_else(|e| panic!("{e}"));
    let keys: Vec<usize> = frames
        .iter()
        .filter(|f| frame_flags(f).contains("KEY_FRAME"))
        .map(|f| f.index)
        .collect();
    let total = media::frame_count(&media::dir().join(clip(CORRUPTED_SOURCE).file));
    // The second key frame (frame 15) and every frame after it decoded.
    let last_key = keys.last().copied().unwrap_or(0);
    assert!(
        keys.len() == 2 && frames.len() - last_key == total / 2,
        "key frames {keys:?}, {} traced, {total} in the clip:\n{log}",
        frames.len()
    );
    // The damaged group ends at the cut tag: at most frames 0 to 5 of it.
    assert!(last_key <= 6, "key frames {keys:?}:\n{log}");
    assert!(reel_runs::framemd5_lines(&out).len() > total / 2, "{out}");
}

#[test]
fn probe_lists_vp8() {
    let (rc, log, out) = reel_runs::outcome(runs(), "probe");
    assert_eq!(rc, 0, "{log}\n{out}");
    for expected in [
        "VP8F",
        "reel decodes vp8 here (VP8F)",
        "decoder: V4L2 stateless /dev/video0 (visl; VP8, one request per frame)",
    ] {
        assert!(out.contains(expected), "probe lacks {expected:?}:\n{out}");
    }
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
    let ours = output_buffers("bits-reel");
    let theirs = oracle::oracle_output_digests(clip(ALTREF_CLIP)).unwrap_or_else(|e| panic!("{e}"));
    let packets = packets(&media::dir().join(clip(ALTREF_CLIP).file));
    assert_eq!(ours.len(), packets.len(), "one OUTPUT buffer per frame");
    let differences = visl_bitstream::differences(ALTREF_CLIP, &ours, &theirs);
    assert!(differences.is_empty(), "{}", differences.join("\n"));
    for (i, (a, packet)) in ours.iter().zip(&packets).enumerate() {
        assert_eq!(a, packet, "OUTPUT buffer {i}: not the whole frame");
    }
}

#[test]
fn playback_in_weston_is_zero_copy() {
    for play in ["loop", "paused"].map(|p| format!("{PLAY}-{p}")) {
        let r = runs();
        let log = r.read_result(&format!("{play}.log")).unwrap_or_default();
        let rc = r.read_result(&format!("{play}.rc")).unwrap_or_default();
        assert_eq!(rc.trim(), "0", "{play}: reel failed:\n{log}");
        assert!(!log.contains("panicked"), "{play}:\n{log}");
        let s = reel_output::stats(&log).unwrap_or_else(|| panic!("{play}: no stats:\n{log}"));
        let presented = reel_output::number(&s, "presented");
        assert!(presented > 0, "{play}: nothing presented: {s:?}");
        assert_eq!(
            reel_output::number(&s, "zero_copy_frames"),
            presented,
            "{play}: {s:?}"
        );
        assert_eq!(reel_output::number(&s, "copy_frames"), 0, "{play}: {s:?}");
        assert!(
            log.contains("dmabuf negotiation: zero-copy: V4L2"),
            "{play}: no zero-copy negotiation in reel's log"
        );
        let weston = r
            .read_result(&format!("weston-{play}.log"))
            .unwrap_or_default();
        let errors = weston_log::protocol_errors(&weston);
        assert!(errors.is_empty(), "{play}: protocol errors: {errors:#?}");
    }
}

#[test]
fn damaged_copies_recover_at_the_next_key_frame() {
    damaged().assert_recovered(runs());
}
