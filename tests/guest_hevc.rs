//! HEVC through reel's V4L2 stateless path, in the QEMU guest with visl,
//! against GStreamer 1.26's `v4l2slh265dec` (trixie root) on the same clips
//! and the same visl settings (the oracle stored by `support::oracle`):
//! - slice-based without start codes (visl's defaults, what GStreamer
//!   uses): the normalised traces must match frame by frame, slice by slice;
//! - frame-based with Annex-B start codes (forced through
//!   `REEL_V4L2_HEVC_MODE`/`REEL_V4L2_HEVC_START_CODE`): every picture is
//!   one request carrying every slice segment's parameters;
//! - every OUTPUT buffer visl received from reel in the slice-based runs
//!   has the size and sha256 of the one it received from GStreamer;
//! - `--output framemd5`: FFmpeg's frame count, increasing pts, the same
//!   output twice;
//! - 24 damaged copies of a clip (support::damage; all 200 go through the
//!   software path in tests/damage_software.rs): no panic, no hang, the
//!   exit status README documents, every picture from the first IRAP after
//!   the damage on is output.
//!
//! Every reel run happens in one guest boot; each test checks its part.

mod support;

use std::sync::OnceLock;
use std::time::Duration;

use support::damage::{self, DamageRuns};
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

/// The first damaged copies of support::damage's hevc source, made on
/// the host, where the guest sees them too (tests/damage_software.rs runs
/// the rest through the software path).
fn damaged() -> &'static DamageRuns {
    static DAMAGED: OnceLock<DamageRuns> = OnceLock::new();
    DAMAGED.get_or_init(|| DamageRuns::for_guest(damage::source("hevc")))
}

fn runs() -> &'static GuestResult {
    static RUNS: OnceLock<GuestResult> = OnceLock::new();
    RUNS.get_or_init(|| {
        let media = media::dir();
        let v4l2_null = ["--hwdec", "v4l2", "--output", "null"];
        let mut calls = vec![damaged().guest_call()];
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
                    120 + 60 * count as u64 + damaged().guest_seconds(),
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
        let theirs = oracle::oracle_output_digests(clip).unwrap_or_else(|e| panic!("{e}"));
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

#[test]
fn damaged_copies_recover_at_the_next_irap() {
    damaged().assert_recovered(runs());
}
