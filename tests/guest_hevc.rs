//! HEVC through reel's V4L2 stateless path, in the QEMU guest with visl,
//! against GStreamer 1.26's `v4l2slh265dec` (trixie root) on the same clips
//! and the same visl settings (the oracle captured by `support::oracle`):
//! - slice-based without start codes (visl's defaults, what GStreamer
//!   uses): the normalised traces must match frame by frame, slice by slice;
//! - frame-based with Annex-B start codes (forced through
//!   `REEL_V4L2_HEVC_MODE`/`REEL_V4L2_HEVC_START_CODE`): every picture is
//!   one request carrying every slice segment's parameters;
//! - `--output framemd5`: FFmpeg's frame count, increasing pts, the same
//!   output twice.
//!
//! Every reel run happens in one guest boot; each test checks its part.

mod support;

use std::sync::OnceLock;
use std::time::Duration;

use support::media;
use support::oracle::{self, OracleClip};
use support::reel_runs::{self, traced_decode};
use support::visl_trace;
use support::vm::{Guest, GuestCommand, GuestResult};

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

fn runs() -> &'static GuestResult {
    static RUNS: OnceLock<GuestResult> = OnceLock::new();
    RUNS.get_or_init(|| {
        let media = media::dir();
        let v4l2_null = ["--hwdec", "v4l2", "--output", "null"];
        let v4l2_framemd5 = ["--hwdec", "v4l2", "--output", "framemd5"];
        let mut calls = Vec::new();
        for clip in hevc_clips() {
            let file = media.join(clip.file);
            let name = clip.name;
            calls.push(traced_decode(&format!("slice-{name}"), &v4l2_null, &file));
            calls.push(
                traced_decode(&format!("frame-{name}"), &v4l2_null, &file)
                    .env("REEL_V4L2_HEVC_MODE", "frame")
                    .env("REEL_V4L2_HEVC_START_CODE", "annexb"),
            );
        }
        for (name, file) in framemd5_clips() {
            let file = media.join(file);
            calls.push(traced_decode(
                &format!("md5a-{name}"),
                &v4l2_framemd5,
                &file,
            ));
            calls.push(traced_decode(
                &format!("md5b-{name}"),
                &v4l2_framemd5,
                &file,
            ));
        }
        let count = calls.len();
        let result = Guest::run(
            &GuestCommand::scripts(calls)
                .timeout(Duration::from_secs(120 + 60 * count as u64))
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
        let (_, first) = reel_runs::successful(runs(), &format!("md5a-{name}"));
        let (_, second) = reel_runs::successful(runs(), &format!("md5b-{name}"));
        let lines = reel_runs::framemd5_lines(&first);
        assert_eq!(
            lines.len(),
            media::frame_count(&media::dir().join(file)),
            "{name}: frame count"
        );
        assert!(
            lines.windows(2).all(|w| w[0].0 < w[1].0),
            "{name}: pts not strictly increasing: {:?}",
            lines.iter().map(|l| l.0).collect::<Vec<_>>()
        );
        assert_eq!(first, second, "{name}: two runs differ");
    }
}
