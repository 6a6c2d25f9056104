//! HEVC through reel's V4L2 stateless path, in the QEMU guest with visl,
//! against GStreamer 1.26's `v4l2slh265dec` (trixie root) on the same clips
//! and the same visl settings (the oracle captured by `support::oracle`):
//! - slice-based without start codes (visl's defaults, what GStreamer
//!   uses): the normalised traces must match frame by frame, slice by slice;
//! - frame-based with Annex-B start codes (forced through
//!   `REEL_V4L2_HEVC_MODE`/`REEL_V4L2_HEVC_START_CODE`): every picture is
//!   one request carrying every slice segment's parameters;
//! - the bytes of every OUTPUT buffer visl received from reel in the
//!   slice-based runs equal those it received from GStreamer;
//! - `--output framemd5`: FFmpeg's frame count, increasing pts, the same
//!   output twice;
//! - 200 damaged copies of a clip (support::damage): no panic, no hang,
//!   the exit status README documents, every picture from the first IRAP
//!   after the damage on is output.
//!
//! Every reel run happens in one guest boot; each test checks its part.

mod support;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use support::damage::{self, DamagedCopy, Plan, Source};
use support::media;
use support::oracle::{self, OracleClip};
use support::reel_runs::{self, traced_decode};
use support::visl_bitstream;
use support::visl_trace;
use support::vm::{Guest, GuestCommand, GuestResult, ScriptCall};

/// HEVC clips with no GStreamer oracle (tests/support/oracle.rs says why)
/// that reel must still decode whole, in order.
const FRAMEMD5_ONLY: [&str; 1] = ["hevc_resolution_change.ts"];

/// Every clip of the framemd5 checks, as (name, file).
fn framemd5_clips() -> Vec<(&'static str, &'static str)> {
    hevc_clips()
        .iter()
        .map(|c| (c.name, c.file))
        .chain(
            FRAMEMD5_ONLY
                .iter()
                .map(|f| (f.trim_end_matches(".ts"), *f)),
        )
        .collect()
}

/// The HEVC clips GStreamer's oracle covers.
fn hevc_clips() -> Vec<&'static OracleClip> {
    oracle::CLIPS
        .iter()
        .filter(|c| c.element == "v4l2slh265dec")
        .collect()
}

/// How many damaged copies of the damage source go through the V4L2 path.
const DAMAGED_COPIES: usize = 200;
const DAMAGE_SEED: u64 = 0x4845_5643_0000;
/// README: a file whose data ends more than 100 ms (or 3 frames) before
/// the end its header declares is reported as truncated; with a frame of
/// margin for the header's rounding.
const REPORTED_TRUNCATION: Duration = Duration::from_millis(150);
/// Seconds one damaged copy may take (an undamaged one: about one).
const DAMAGE_RUN_LIMIT_SECS: u32 = 30;

/// A second of 320x240 HEVC with two slices per picture and an IRAP every
/// 6 pictures (CRAs with leading pictures: x265's open GOP), so that damage
/// before each IRAP has one to recover at. Made once with FFmpeg.
fn damage_source() -> PathBuf {
    let path = support::target_dir().join("guest-hevc/damage-source.mkv");
    if path.exists() {
        return path;
    }
    std::fs::create_dir_all(path.parent().expect("has a parent")).unwrap_or_else(|e| panic!("{e}"));
    let partial = path.with_extension("partial.mkv");
    let status = Command::new("ffmpeg")
        .args(["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i"])
        .arg("testsrc2=size=320x240:rate=30:duration=1")
        .args([
            "-c:v",
            "libx265",
            "-preset",
            "ultrafast",
            "-pix_fmt",
            "yuv420p",
        ])
        .args([
            "-x265-params",
            "log-level=error:keyint=6:min-keyint=6:scenecut=0:slices=2",
        ])
        .arg(&partial)
        .status()
        .unwrap_or_else(|e| panic!("ffmpeg: {e}"));
    assert!(
        status.success(),
        "ffmpeg could not make {}",
        partial.display()
    );
    std::fs::rename(&partial, &path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    path
}

/// The damage source and its damaged copies (made on the host, where the
/// guest sees them too).
fn damaged() -> &'static (Source, Vec<DamagedCopy>) {
    static DAMAGED: OnceLock<(Source, Vec<DamagedCopy>)> = OnceLock::new();
    DAMAGED.get_or_init(|| {
        let source = Source::open(&damage_source()).unwrap_or_else(|e| panic!("{e}"));
        let plan = Plan {
            copies: DAMAGED_COPIES,
            seed: DAMAGE_SEED,
            blank: damage::hevc_filler,
        };
        let dir = support::target_dir().join("guest-hevc/damaged");
        let copies = source
            .damaged_copies(&plan, &dir)
            .unwrap_or_else(|e| panic!("{e}"));
        (source, copies)
    })
}

fn damaged_dir() -> PathBuf {
    let (_, copies) = damaged();
    copies[0]
        .path
        .parent()
        .expect("copies are in a directory")
        .to_path_buf()
}

fn runs() -> &'static GuestResult {
    static RUNS: OnceLock<GuestResult> = OnceLock::new();
    RUNS.get_or_init(|| {
        let media = media::dir();
        let v4l2_null = ["--hwdec", "v4l2", "--output", "null"];
        let v4l2_framemd5 = ["--hwdec", "v4l2", "--output", "framemd5"];
        let mut calls = vec![ScriptCall::new("damage-runs.sh")
            .arg("damage")
            .arg(damaged_dir())
            .arg(DAMAGE_RUN_LIMIT_SECS.to_string())
            .arg(env!("CARGO_BIN_EXE_reel"))
            .args(v4l2_framemd5)
            .arg("-v")];
        for clip in hevc_clips() {
            let file = media.join(clip.file);
            let name = clip.name;
            // visl keeps the OUTPUT buffers of the slice-based run.
            calls.push(
                ScriptCall::new("visl-bitstream.sh")
                    .arg(format!("bits-{name}"))
                    .wrapping(traced_decode(&format!("slice-{name}"), &v4l2_null, &file)),
            );
            calls.push(
                traced_decode(&format!("frame-{name}"), &v4l2_null, &file)
                    .env("REEL_V4L2_HEVC_MODE", "frame")
                    .env("REEL_V4L2_HEVC_START_CODE", "annexb"),
            );
        }
        for (name, file) in framemd5_clips() {
            let file = media.join(file);
            calls.extend(reel_runs::framemd5_twice(name, &file));
        }
        let count = calls.len();
        let result = Guest::run(
            &GuestCommand::scripts(calls)
                .timeout(Duration::from_secs(
                    120 + 60 * count as u64 + 5 * DAMAGED_COPIES as u64,
                ))
                .env("RUST_BACKTRACE", "1")
                .label("guest-hevc"),
        )
        .unwrap_or_else(|e| panic!("the test guest did not run: {e}"));
        result.assert_success();
        result
    })
}

#[test]
fn slice_based_traces_match_gstreamer() {
    let mut failures = Vec::new();
    for clip in hevc_clips() {
        let oracle = oracle::oracle_frames(clip).unwrap_or_else(|e| panic!("{e}"));
        let reel = reel_runs::reel_frames(runs(), &format!("slice-{}", clip.name), "guest-hevc");
        assert_eq!(reel.len(), oracle.len(), "{}: pictures traced", clip.name);
        let diff = visl_trace::diff(&oracle, &reel);
        failures.extend(reel_runs::diff_report(clip.name, &diff));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn frame_based_requests_carry_every_slice() {
    for clip in hevc_clips() {
        let name = format!("frame-{}", clip.name);
        let (log, _) = reel_runs::successful(runs(), &name);
        assert!(
            log.contains("mode=FrameBased annex_b=true"),
            "{name}: the forced mode was not used:\n{log}"
        );
        let frames = reel_runs::reel_frames(runs(), &name, "guest-hevc");
        let slice_based =
            reel_runs::reel_frames(runs(), &format!("slice-{}", clip.name), "guest-hevc");
        assert_eq!(frames.len(), slice_based.len(), "{name}: pictures");
        for (frame, sliced) in frames.iter().zip(&slice_based) {
            assert_eq!(
                frame.runs, 1,
                "{name}: picture {} in one request",
                frame.index
            );
            assert_eq!(
                frame.controls.get("v4l2_ctrl_hevc_decode_params"),
                sliced.controls.get("v4l2_ctrl_hevc_decode_params"),
                "{name}: picture {}",
                frame.index
            );
        }
    }
}

#[test]
fn framemd5_in_display_order_and_deterministic() {
    for (name, file) in framemd5_clips() {
        reel_runs::assert_framemd5_in_order_and_deterministic(
            runs(),
            name,
            &media::dir().join(file),
        );
    }
}

#[test]
fn output_buffer_bytes_equal_gstreamers() {
    let mut failures = Vec::new();
    for clip in hevc_clips() {
        let theirs = oracle::oracle_output_buffers(clip).unwrap_or_else(|e| panic!("{e}"));
        let name = format!("bits-{}", clip.name);
        let result = runs();
        let rc = result
            .read_result(&format!("{name}.rc"))
            .unwrap_or_default();
        assert_eq!(rc.trim(), "0", "{name}: exit status\n{}", result.report());
        let ours = visl_bitstream::read_dump(&result.result_dir.join(format!("{name}.bitstream")))
            .unwrap_or_else(|e| panic!("{e}"));
        // One buffer per slice segment: at least one per picture.
        let pictures = media::frame_count(&media::dir().join(clip.file));
        assert!(
            ours.len() >= pictures,
            "{name}: {} OUTPUT buffers for {pictures} pictures",
            ours.len()
        );
        failures.extend(visl_bitstream::differences(clip.name, &ours, &theirs));
        eprintln!("{}: {} OUTPUT buffers compared", clip.name, ours.len());
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// What one damaged copy's run did wrong, if anything.
fn damage_run_failure(source: &Source, copy: &DamagedCopy) -> Option<String> {
    let file = copy
        .path
        .file_name()
        .expect("copies are files")
        .to_string_lossy()
        .into_owned();
    let result = runs();
    let read = |ext: &str| result.read_result(&format!("damage/{file}.{ext}"));
    let what = format!("{file} ({}, seed {:#x})", copy.description, copy.seed);
    let Some(rc) = read("rc").ok().and_then(|rc| rc.trim().parse::<i32>().ok()) else {
        return Some(format!("{what}: no exit status\n{}", result.report()));
    };
    let log = read("log").unwrap_or_default();
    let out = read("out").unwrap_or_default();
    if rc == 124 {
        return Some(format!(
            "{what}: still running after {DAMAGE_RUN_LIMIT_SECS} s"
        ));
    }
    if log.contains("panicked") {
        return Some(format!("{what}: panicked:\n{log}"));
    }
    if !log.contains("decoder: V4L2 stateless") {
        return Some(format!("{what}: not decoded through V4L2:\n{log}"));
    }
    // README: 0 when every file played whole, 1 (with one error line naming
    // the file) when it had errors.
    let errors: Vec<&str> = log
        .lines()
        .filter(|l| l.starts_with("reel: error: "))
        .collect();
    let status_ok = match rc {
        0 => errors.is_empty(),
        1 => errors.len() == 1 && errors[0].contains(&file),
        _ => false,
    };
    if !status_ok {
        return Some(format!(
            "{what}: exit status {rc}, error lines {errors:?}:\n{log}"
        ));
    }
    if let Some(lost) = source.time_cut_off(copy) {
        if lost > REPORTED_TRUNCATION && rc != 1 {
            return Some(format!("{what}: {lost:?} cut off, not reported:\n{log}"));
        }
    }
    let shown: BTreeSet<i64> = reel_runs::framemd5_lines(&out)
        .iter()
        .map(|l| l.0)
        .collect();
    let expected = source.recovered_output(copy)?;
    let missing: Vec<i64> = expected
        .into_iter()
        .filter(|p| !shown.contains(p))
        .collect();
    (!missing.is_empty()).then(|| {
        format!(
            "{what}: not recovered at the next IRAP: pts {missing:?} missing from\n{out}\n{log}"
        )
    })
}

#[test]
fn damaged_copies_recover_at_the_next_irap() {
    let (source, copies) = damaged();
    assert_eq!(copies.len(), DAMAGED_COPIES);
    let failures: Vec<String> = copies
        .iter()
        .filter_map(|copy| damage_run_failure(source, copy))
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} damaged copies failed:\n{}",
        failures.len(),
        copies.len(),
        failures[..failures.len().min(10)].join("\n")
    );
    let reported = copies
        .iter()
        .filter(|c| {
            let name = c.path.file_name().unwrap_or_default().to_string_lossy();
            runs()
                .read_result(&format!("damage/{name}.rc"))
                .is_ok_and(|rc| rc.trim() == "1")
        })
        .count();
    let recoverable = copies
        .iter()
        .filter(|c| source.recovered_output(c).is_some())
        .count();
    eprintln!(
        "{} damaged copies: {recoverable} with an IRAP after the damage, all recovered; {reported} exited 1",
        copies.len()
    );
}
