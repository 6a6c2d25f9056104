//! reel against visl behaving like the real stateless drivers it meets on
//! boards (tests/vm/visl-personalities.patch, switched on by visl's module
//! parameters; visl's defaults stay as they are, so that the oracle traces
//! of the other suites stay comparable):
//! - `output_sizeimage=1024`: a driver that gives a client asking for no
//!   particular OUTPUT size a small one (cedrus): reel asks for a size from
//!   the stream, and an access unit larger than its buffers (1080p lossless
//!   I pictures) makes it add larger ones while decoding goes on;
//! - `hold_capture_buf=0`: a driver that cannot hold a CAPTURE buffer
//!   across requests (hantro, RK3399 rkvdec): reel decodes multi-slice
//!   pictures frame-based, and refuses clearly when slice-based is forced;
//! - `hold_capture_buf=2`: a driver that holds CAPTURE buffers only once
//!   the OUTPUT format is H.264 or HEVC (cedrus decides at S_FMT): reel
//!   reads the capability per coded format, and decodes slice by slice;
//! - `error_frames=5`: a driver returning a picture with
//!   `V4L2_BUF_FLAG_ERROR`: that picture and every one decoded from it
//!   (by the references each request carried, read from visl's trace) are
//!   not output, the others are, and the IDR after them is clean;
//! - `fail_requests=N,...` (with `fail_requests_errno`): a device that
//!   refuses to queue chosen requests (EBUSY, EIO), as a faulting one
//!   does: the pictures up to the fault are output, the session is reset
//!   and decoding resumes at the next key frame; three in a row make the
//!   device count as failed: software decoding takes over with `--hwdec
//!   auto`, `--hwdec v4l2` ends with the device-failure status;
//! - `stall_jobs=N`: a decode job that hangs until a watchdog completes it
//!   with an error 3 s later, as a hung device's driver does: reel's
//!   request times out after a second, it resets and resumes at the next
//!   key frame, the same as after a refused request.
//!
//! - `hold_capture_buf=0` with H.264 field pictures (PAFF): refused
//!   before a field reaches the driver with `--hwdec v4l2`, decoded by
//!   libavcodec from the first frame with `--hwdec auto`;
//! - `capture_memory_max=N`: CAPTURE memory bounded as a board's CMA
//!   pool bounds it: a stream whose pictures do not fit is refused with the
//!   reason (`--hwdec v4l2`) or decoded in software from the start, or from
//!   the sequence that no longer fits (`--hwdec auto`);
//! - `capture_tiled=1|2`: CAPTURE offered in one tiled layout only
//!   (NV12_32L32 as cedrus, NV12_4L4 as hantro G2): the detiled pictures
//!   equal those visl writes linearly;
//! - `av1_profile_max=0 av1_level_max=1 h264_level_max=3`: profile and
//!   level menus, as MediaTek's decoders have them: `reel probe` lists
//!   them; a profile the menu lacks (AV1 4:4:4) is refused, and software
//!   decodes it with `--hwdec auto`; a stream above the level menu (AV1
//!   level 3.0, H.264 level 1.3) is tried with one warning and decodes
//!   whole through V4L2.
//!
//! A device that disappears mid-stream (visl unbound from its driver after
//! 8 pictures): with `--hwdec auto` software decoding takes over from the
//! next frame, every frame output once and in order; with `--hwdec v4l2`
//! reel ends with an error naming the device, promptly.
//!
//! And with visl's defaults, under strace: every CPU read of a CAPTURE
//! buffer (framemd5 hashes each picture) is bracketed with
//! `DMA_BUF_IOCTL_SYNC` start and end, and a run that reads no picture
//! (`--output null`, as the zero-copy path) makes no such call, nor more
//! than two DQBUFs that find nothing to dequeue (each request's picture is
//! taken as it completes; slice by slice, with its last slice), nor maps
//! any CAPTURE buffer (hashing maps each plane once, through its dmabuf).
//!
//! And fluster (packaging/fluster/reel_fluster.py) with `reel-v4l2-<codec>`
//! on local suites of every codec (support::fluster): every vector runs to
//! its end and is reported a wrong md5 (visl draws a test pattern), none
//! timed out or failed to decode.
//!
//! Every run happens in one guest boot; each test checks its part.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use support::fluster;
use support::media;
use support::reel_output;
use support::reel_runs::{self, traced_decode};
use support::vm::{Guest, GuestCommand, GuestResult, ScriptCall};

/// 1080p clips whose pictures are larger than reel's first OUTPUT buffers
/// (a quarter of a raw picture): lossless coding of noise, about 3 MB each.
fn large_clips() -> &'static [PathBuf; 2] {
    static CLIPS: OnceLock<[PathBuf; 2]> = OnceLock::new();
    CLIPS.get_or_init(|| {
        let encode = |name: &str, codec: &[&str]| {
            media::encoded(
                "real-driver-media",
                name,
                "testsrc2=size=1920x1080:rate=25:duration=0.12,noise=alls=60:allf=t+u",
                codec,
            )
        };
        [
            encode(
                "h264_1080p_noise_lossless.mp4",
                &[
                    "-c:v",
                    "libx264",
                    "-preset",
                    "ultrafast",
                    "-qp",
                    "0",
                    "-g",
                    "2",
                ],
            ),
            encode(
                "hevc_1080p_noise_lossless.mkv",
                &[
                    "-c:v",
                    "libx265",
                    "-preset",
                    "ultrafast",
                    "-x265-params",
                    "lossless=1:keyint=2:log-level=error",
                ],
            ),
        ]
    })
}

/// One slice per picture, B-pyramid references, an IDR at packet 24.
const ERROR_CLIP: &str = "h264_main_bframes.mkv";
/// The request visl returns with V4L2_BUF_FLAG_ERROR (`error_frames=5`).
const ERROR_REQUEST: usize = 5;

const V4L2_FRAMEMD5: [&str; 4] = ["--hwdec", "v4l2", "--output", "framemd5"];

const AUTO_FRAMEMD5: [&str; 4] = ["--hwdec", "auto", "--output", "framemd5"];

const V4L2_RAW: [&str; 4] = ["--hwdec", "v4l2", "--output", "raw"];

const V4L2_NULL: [&str; 4] = ["--hwdec", "v4l2", "--output", "null"];

/// No reordering (decode order is display order), an IDR every 15 frames.
const FAULT_CLIP: &str = "h264_baseline.mp4";
/// An I picture every 12 frames: three key frames in 30, so that three
/// requests in a row can each be the first after a reset.
const FAULTS_IN_A_ROW_CLIP: &str = "mpeg2_matrices.ts";

/// H.264 field pictures (PAFF): every frame a field pair, each field its
/// own request into the frame's CAPTURE buffer.
const PAFF_CLIP: &str = "h264_paff.ts";

/// 320x240 for 30 frames, then 480x272 (NV12: 112.5 and 191.25 KiB a
/// picture); headless decoding allocates DPB + 1 + 2 CAPTURE buffers.
const RESCHANGE_CLIP: &str = "h264_resolution_change.ts";
/// Frames of RESCHANGE_CLIP's first sequence.
const RESCHANGE_FIRST_FRAMES: usize = 30;
/// Room for two 320x240 pictures: ERROR_CLIP's DPB needs more.
const CMA_TOO_SMALL_KIB: u32 = 300;
/// Room for RESCHANGE_CLIP's first set of buffers (4 x 112.5 KiB), not for
/// the three 480x272 ones its second sequence needs at least.
const CMA_FIRST_SEQUENCE_KIB: u32 = 500;

/// `V4L2_MPEG_VIDEO_H264_LEVEL_1_2`: below h264_baseline.mp4's level 1.3.
const H264_LEVEL_MAX: u32 = 3;
/// AV1 4:4:4 (seq_profile 1, High).
const AV1_444: &str = "av1_444.mkv";
/// What reel says of a stream above the driver's level menu.
const LEVEL_WARNING: &str = "is above the driver's highest";

fn reload(params: &[&str]) -> ScriptCall {
    ScriptCall::new("visl-reload.sh").args(params)
}

/// A framemd5 run of `file` during which visl is unbound after 8 pictures.
fn unbound_during(name: &str, hwdec: &str, file: &Path) -> ScriptCall {
    ScriptCall::new("unbind-during.sh")
        .arg(name)
        .arg(UNBIND_AFTER.to_string())
        .arg(reel_runs::RUN_LIMIT_SECS.to_string())
        .arg(env!("CARGO_BIN_EXE_reel"))
        .args(["--hwdec", hwdec, "--output", "framemd5", "--stats"])
        .arg(file)
        .env("RUST_LOG", "reel=debug")
}

/// Pictures decoded through visl before it is unbound.
const UNBIND_AFTER: usize = 8;

/// One reel run under strace (tests/vm/guest/strace-run.sh).
fn straced(name: &str, options: &[&str], file: &Path) -> ScriptCall {
    ScriptCall::new("strace-run.sh")
        .arg(name)
        .arg(reel_runs::RUN_LIMIT_SECS.to_string())
        .arg(env!("CARGO_BIN_EXE_reel"))
        .args(options)
        .arg(file)
}

/// The DMA_BUF_IOCTL_SYNC calls of a run's strace (strace 6.1 names the
/// request but does not decode its flags), each checked to have succeeded.
fn dma_buf_syncs(name: &str) -> usize {
    let strace = strace_of(name);
    let syncs: Vec<&str> = strace
        .lines()
        .filter(|l| l.contains("DMA_BUF_IOCTL_SYNC"))
        .collect();
    assert!(
        syncs.iter().all(|l| l.trim_end().ends_with("= 0")),
        "{name}: a sync failed: {syncs:?}"
    );
    syncs.len()
}

/// The strace of a run (tests/vm/guest/strace-run.sh) that ended well.
fn strace_of(name: &str) -> String {
    let (rc, log, _) = reel_runs::outcome(runs(), name);
    assert_eq!(rc, 0, "{name}: {log}");
    runs()
        .read_result(&format!("{name}.strace"))
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn probe(name: &str) -> ScriptCall {
    traced_decode(name, &["probe"], &media::clip("h264_slices.mp4"))
}

fn runs() -> &'static GuestResult {
    static RUNS: OnceLock<GuestResult> = OnceLock::new();
    RUNS.get_or_init(|| {
        let [h264_large, hevc_large] = large_clips();
        let h264_slices = media::clip("h264_slices.mp4");
        let hevc_slices = media::clip("hevc_slices.mkv");
        let bframes = media::clip(ERROR_CLIP);
        let baseline = media::clip(FAULT_CLIP);
        let gops = media::clip(FAULTS_IN_A_ROW_CLIP);
        let paff = media::clip(PAFF_CLIP);
        let reschange = media::clip(RESCHANGE_CLIP);
        let calls = vec![
            // A small default OUTPUT size.
            reload(&["output_sizeimage=1024"]),
            traced_decode("small-h264", &V4L2_FRAMEMD5, h264_large),
            traced_decode("small-hevc", &V4L2_FRAMEMD5, hevc_large),
            traced_decode("small-h264-slices", &V4L2_FRAMEMD5, &h264_slices),
            // No HOLD at all.
            reload(&["hold_capture_buf=0"]),
            probe("nohold-probe"),
            traced_decode("nohold-h264", &V4L2_FRAMEMD5, &h264_slices),
            traced_decode("nohold-hevc", &V4L2_FRAMEMD5, &hevc_slices),
            traced_decode("nohold-forced-slice", &V4L2_FRAMEMD5, &h264_slices)
                .env("REEL_V4L2_H264_MODE", "slice"),
            traced_decode("nohold-paff-v4l2", &V4L2_FRAMEMD5, &paff),
            traced_decode("nohold-paff-auto", &AUTO_FRAMEMD5, &paff),
            // HOLD for H.264 and HEVC only, decided at S_FMT(OUTPUT).
            reload(&["hold_capture_buf=2"]),
            probe("cedrus-probe"),
            traced_decode("cedrus-h264", &V4L2_FRAMEMD5, &h264_slices),
            // A decode error on the sixth request.
            reload(&["error_frames=5"]),
            traced_decode("error-h264", &V4L2_FRAMEMD5, &bframes),
            // The device unbound mid-stream (visl slowed so that decoding
            // is under way when it goes).
            reload(&["visl_transtime_ms=40"]),
            unbound_during("lost-auto", "auto", &bframes),
            reload(&["visl_transtime_ms=40"]),
            unbound_during("lost-v4l2", "v4l2", &bframes),
            // A faulting device: one request's MEDIA_REQUEST_IOC_QUEUE fails
            // (EBUSY) ...
            reload(&["fail_requests=5", "fail_requests_errno=16"]),
            traced_decode("fault-once", &V4L2_FRAMEMD5, &baseline),
            // ... or a job hangs until the driver's watchdog ends it.
            reload(&["stall_jobs=5"]),
            traced_decode("stall-once", &V4L2_FRAMEMD5, &baseline),
            // ... or three in a row (EIO), each the first after a reset.
            reload(&["fail_requests=5,6,7"]),
            traced_decode("fault-stuck-auto", &AUTO_FRAMEMD5, &gops),
            reload(&["fail_requests=5,6,7"]),
            traced_decode("fault-stuck-v4l2", &V4L2_FRAMEMD5, &gops),
            // Profile and level menus, as MediaTek's decoders have them:
            // AV1 Main only, up to level 2.1; H.264 up to level 1.2.
            reload(&[
                "av1_profile_max=0",
                "av1_level_max=1",
                &format!("h264_level_max={H264_LEVEL_MAX}"),
            ]),
            traced_decode("menus-probe", &["probe"], &media::clip("av1.mkv")),
            traced_decode("menus-av1", &V4L2_FRAMEMD5, &media::clip("av1.mkv")),
            traced_decode(
                "menus-av1-level3",
                &V4L2_FRAMEMD5,
                &media::clip("av1_level3.mkv"),
            ),
            traced_decode("menus-h264", &V4L2_FRAMEMD5, &baseline),
            traced_decode("menus-444-v4l2", &V4L2_FRAMEMD5, &media::clip(AV1_444)),
            traced_decode("menus-444-auto", &AUTO_FRAMEMD5, &media::clip(AV1_444)),
            // Cache hints allowed on CAPTURE, as a driver on a
            // non-coherent SoC may: what the CPU reads is asked for
            // non-coherent, what it does not read is left coherent.
            reload(&["capture_cache_hints=1"]),
            traced_decode("hints-framemd5", &V4L2_FRAMEMD5, &bframes),
            traced_decode("hints-null", &V4L2_NULL, &bframes),
            // CAPTURE memory bounded, as a board's CMA pool bounds it: too
            // small for the stream's pictures ...
            reload(&[&format!("capture_memory_max={CMA_TOO_SMALL_KIB}")]),
            traced_decode("cma-small-v4l2", &V4L2_FRAMEMD5, &bframes),
            traced_decode("cma-small-auto", &AUTO_FRAMEMD5, &bframes),
            // ... or for the second sequence's only.
            reload(&[&format!("capture_memory_max={CMA_FIRST_SEQUENCE_KIB}")]),
            traced_decode("cma-change-v4l2", &V4L2_FRAMEMD5, &reschange),
            reload(&[&format!("capture_memory_max={CMA_FIRST_SEQUENCE_KIB}")]),
            traced_decode("cma-change-auto", &AUTO_FRAMEMD5, &reschange),
            // CAPTURE in one tiled layout: cedrus's and hantro G2's.
            reload(&["capture_tiled=1"]),
            traced_decode("tiled-32l32", &V4L2_FRAMEMD5, &bframes),
            traced_decode("tiled-32l32-raw", &V4L2_RAW, &bframes),
            reload(&["capture_tiled=2"]),
            traced_decode("tiled-4l4", &V4L2_FRAMEMD5, &bframes),
            // visl's defaults.
            reload(&[]),
            probe("default-probe"),
            traced_decode("clean-h264", &V4L2_FRAMEMD5, &bframes),
            traced_decode("clean-h264-raw", &V4L2_RAW, &bframes),
            straced("sync-framemd5", &V4L2_FRAMEMD5, &bframes),
            straced(
                "sync-null",
                &["--hwdec", "v4l2", "--output", "null"],
                &bframes,
            ),
            // Slice by slice, each picture's CAPTURE buffer held until its
            // last slice.
            straced(
                "sync-null-slices",
                &["--hwdec", "v4l2", "--output", "null"],
                &h264_slices,
            )
            .env("REEL_V4L2_H264_MODE", "slice"),
            ScriptCall::new("fluster-run.sh")
                .arg(fluster::venv_python())
                .arg(support::project_dir().join("packaging/fluster/reel_fluster.py"))
                .arg(env!("CARGO_BIN_EXE_reel"))
                .arg(fluster_dir())
                .args(
                    fluster_suites()
                        .iter()
                        .map(|(suite, codec)| format!("{suite}:reel-v4l2-{codec}")),
                ),
        ];
        let count = calls.len();
        let result = Guest::run(
            &GuestCommand::scripts(calls)
                .timeout(Duration::from_secs(120 + 60 * count as u64))
                .env("RUST_BACKTRACE", "1")
                .label("guest-real-drivers"),
        )
        .unwrap_or_else(|e| panic!("the test guest did not run: {e}"));
        result.assert_success();
        result
    })
}

/// Where the local fluster suites are (support::fluster), for the guest.
fn fluster_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("fluster-visl")
}

/// The local fluster suites, (name, codec), written once.
fn fluster_suites() -> &'static [(&'static str, &'static str)] {
    static SUITES: OnceLock<Vec<(&str, &str)>> = OnceLock::new();
    SUITES.get_or_init(|| {
        let _ = std::fs::remove_dir_all(fluster_dir());
        fluster::write_suites(&fluster_dir(), "")
    })
}

#[test]
fn fluster_runs_every_vector_through_visl_to_the_end() {
    let mut failures = Vec::new();
    for (suite, codec) in fluster_suites() {
        let read = |suffix: &str| runs().read_result(&format!("fluster-{suite}{suffix}"));
        let log = read(".log").unwrap_or_default();
        let Ok(summary) = read(".md") else {
            failures.push(format!("{suite}: no summary from fluster:\n{log}"));
            continue;
        };
        let results = fluster::summary_results(&summary);
        let vectors: Vec<&str> = fluster::VECTORS
            .iter()
            .filter(|v| v.0 == *suite)
            .map(|v| fluster::vector_name(v.4))
            .collect();
        let names: Vec<&str> = results.iter().map(|(n, _)| n.as_str()).collect();
        // Every vector decoded to its end through V4L2 and compared: a
        // wrong md5 (visl's pattern), no timeout, no decoder failure.
        if names != vectors || results.iter().any(|(_, verdict)| verdict != "KO") {
            failures.push(format!(
                "{suite} with reel-v4l2-{codec}: {results:?}, want every one of {vectors:?} KO:\n{log}"
            ));
        }
        if read(".rc").unwrap_or_default().trim() != "1" {
            failures.push(format!(
                "{suite}: fluster's exit status is not 1 (failures)\n{log}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// (pictures traced, requests of each picture) of one run.
fn requests_per_picture(name: &str) -> Vec<usize> {
    reel_runs::reel_frames(runs(), name, "guest-real-drivers")
        .iter()
        .map(|f| f.runs)
        .collect()
}

/// A run decoded every frame of `clip` through V4L2.
fn assert_whole(name: &str, clip: &Path) -> String {
    let (log, out) = reel_runs::successful(runs(), name);
    let frames = reel_runs::framemd5_lines(&out);
    assert_eq!(
        frames.len(),
        media::frame_count(clip),
        "{name}: frames decoded\n{log}"
    );
    assert_eq!(
        requests_per_picture(name).len(),
        frames.len(),
        "{name}: pictures sent to the driver"
    );
    log
}

/// The coded formats `reel probe` lists for visl, as (fourcc, holds CAPTURE).
fn probed_holds(name: &str) -> Vec<(String, bool)> {
    let (rc, log, out) = reel_runs::outcome(runs(), name);
    assert_eq!(rc, 0, "{name}: reel probe failed\n{log}");
    // "      S264 (H.264 Parsed Slice Data): 64x64..4096x2304 (step 1x1), hold capture buffer"
    let formats: Vec<(String, bool)> = out
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("coded formats:"))
        .skip(1)
        .map_while(|l| {
            let (fourcc, rest) = l.trim_start().split_once(" (")?;
            (fourcc.len() == 4)
                .then(|| (fourcc.to_string(), rest.ends_with(", hold capture buffer")))
        })
        .collect();
    assert!(
        formats.len() >= 6,
        "{name}: coded formats not listed:\n{out}"
    );
    formats
}

#[test]
fn a_small_default_output_size_grows_for_large_access_units() {
    let [h264_large, hevc_large] = large_clips();
    for (name, clip) in [("small-h264", h264_large), ("small-hevc", hevc_large)] {
        let log = assert_whole(name, clip);
        assert!(
            log.contains("an access unit outgrew the OUTPUT buffers"),
            "{name}: a lossless 1080p I picture should outgrow the first OUTPUT buffers:\n{log}"
        );
    }
    // Small pictures fit the size asked from the stream: no growth.
    let log = assert_whole("small-h264-slices", &media::clip("h264_slices.mp4"));
    assert!(!log.contains("outgrew"), "{log}");
}

#[test]
fn without_hold_multi_slice_pictures_decode_frame_based() {
    for (name, clip) in [
        ("nohold-h264", media::clip("h264_slices.mp4")),
        ("nohold-hevc", media::clip("hevc_slices.mkv")),
    ] {
        let log = assert_whole(name, &clip);
        assert!(
            log.contains("cannot hold CAPTURE buffers between requests: frame-based decoding"),
            "{name}: the reason for frame-based decoding is not logged:\n{log}"
        );
        assert!(log.contains("mode=FrameBased"), "{name}:\n{log}");
        let requests = requests_per_picture(name);
        assert!(
            requests.iter().all(|&r| r == 1),
            "{name}: one request per picture without HOLD, got {requests:?}"
        );
    }
}

#[test]
fn without_hold_forced_slice_based_decoding_is_refused_clearly() {
    let name = "nohold-forced-slice";
    let (rc, log, _) = reel_runs::outcome(runs(), name);
    assert_ne!(
        rc, 0,
        "{name}: decoding 4-slice pictures without HOLD must fail\n{log}"
    );
    assert_ne!(rc, 124, "{name}: hung\n{log}");
    assert!(!log.contains("panicked"), "{name}:\n{log}");
    assert!(
        log.contains("needs a driver that holds CAPTURE buffers between requests"),
        "{name}: no clear reason:\n{log}"
    );
    // Nothing half-decoded reached the driver: no picture of several
    // requests without HOLD.
    let trace = runs()
        .read_result(&format!("{name}.trace"))
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(
        !trace.contains("v4l2_ctrl_h264_decode_params"),
        "{name}: pictures were sent"
    );
    // The error is said once.
    assert_eq!(
        log.matches("needs a driver that holds").count(),
        1,
        "{name}: the cause is repeated:\n{log}"
    );
}

#[test]
fn without_hold_field_pictures_are_refused_clearly_or_decoded_in_software() {
    // `--hwdec v4l2`: the first field pair is refused before any of its
    // fields reaches the driver, with the reason, once.
    let name = "nohold-paff-v4l2";
    let (rc, log, out) = reel_runs::outcome(runs(), name);
    assert_eq!(rc, 1, "{name}: refused with the failure status\n{log}");
    assert!(!log.contains("panicked"), "{name}:\n{log}");
    assert_eq!(
        log.matches(
            "a field pair (interlaced field pictures) needs a driver that holds CAPTURE buffers"
        )
        .count(),
        1,
        "{name}: the reason, said once:\n{log}"
    );
    assert!(reel_runs::framemd5_lines(&out).is_empty(), "{name}: {out}");
    let trace = runs()
        .read_result(&format!("{name}.trace"))
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(
        !trace.contains("v4l2_ctrl_h264_decode_params"),
        "{name}: a field was sent to a driver that cannot hold its buffer"
    );
    // `--hwdec auto`: software decoding takes over at once; every frame is
    // FFmpeg's.
    let name = "nohold-paff-auto";
    let (rc, log, out) = reel_runs::outcome(runs(), name);
    assert_eq!(rc, 0, "{name}:\n{log}");
    assert_eq!(assert_handed_over(name, &log, &out, PAFF_CLIP), 0, "{log}");
    assert_eq!(
        reel_runs::framemd5_lines(&out).len(),
        media::frame_count(&media::clip(PAFF_CLIP)),
        "{name}"
    );
}

#[test]
fn without_capture_memory_for_the_stream_software_decodes_it() {
    const SHORT: &str = "out of CAPTURE memory: the driver granted";
    // Not even the first pictures fit: refused at open, or decoded in
    // software from the start.
    let (rc, log, _) = reel_runs::outcome(runs(), "cma-small-v4l2");
    assert_eq!(rc, 1, "{log}");
    assert!(log.contains(SHORT), "cma-small-v4l2: the reason:\n{log}");
    let (rc, log, out) = reel_runs::outcome(runs(), "cma-small-auto");
    assert_eq!(rc, 0, "{log}");
    assert_eq!(reel_runs::stats_decoder("cma-small-auto", &log), "software");
    assert_eq!(
        reel_runs::framemd5_lines(&out),
        ffmpeg_framemd5(&media::clip(ERROR_CLIP)),
        "cma-small-auto"
    );
    // The second sequence's pictures do not fit: its first sequence comes
    // from visl, then decoding ends with the reason, or software takes
    // over from the change on.
    let (rc, log, out) = reel_runs::outcome(runs(), "cma-change-v4l2");
    assert_eq!(rc, 1, "{log}");
    assert!(log.contains(SHORT), "cma-change-v4l2: the reason:\n{log}");
    assert_eq!(
        reel_runs::framemd5_lines(&out).len(),
        RESCHANGE_FIRST_FRAMES,
        "cma-change-v4l2: the first sequence\n{log}"
    );
    let (rc, log, out) = reel_runs::outcome(runs(), "cma-change-auto");
    assert_eq!(rc, 0, "{log}");
    assert!(log.contains(SHORT), "cma-change-auto:\n{log}");
    assert_eq!(
        assert_handed_over("cma-change-auto", &log, &out, RESCHANGE_CLIP),
        RESCHANGE_FIRST_FRAMES,
        "software from the second sequence on"
    );
    // visl's bound was met: it refused allocations and never exceeded it.
    let reports = capture_memory_bounds(runs());
    assert!(
        reports.iter().any(|r| r.refused > 0),
        "no allocation was refused: {reports:?}"
    );
    for r in &reports {
        assert!(r.peak_kib <= r.bound_kib, "{r:?}");
    }
}

/// visl's `capture_memory_max` report (at each refused allocation and CAPTURE STREAMOFF).
#[derive(Debug)]
struct MemoryBoundReport {
    bound_kib: u64,
    peak_kib: u64,
    refused: u64,
}

/// "capture_memory_max B KiB: U KiB in use, peak P KiB, R allocations refused"
fn capture_memory_bounds(result: &GuestResult) -> Vec<MemoryBoundReport> {
    result
        .kernel_reports("capture_memory_max ")
        .into_iter()
        .map(|(rest, numbers)| {
            let [bound_kib, _, peak_kib, refused] = numbers[..] else {
                panic!("visl's capture_memory_max line: {rest}");
            };
            MemoryBoundReport {
                bound_kib,
                peak_kib,
                refused,
            }
        })
        .collect()
}

#[test]
fn tiled_capture_layouts_are_detiled_into_the_linear_pictures() {
    // visl lays its picture out in the tiles it was asked for (sized as
    // cedrus sizes NV12_32L32: the height to 32; hantro NV12_4L4: to
    // macroblocks); reel, offered nothing else, reads each picture through
    // its detiler. The pictures must be those visl writes linearly.
    let (_, linear) = reel_runs::successful(runs(), "clean-h264");
    let linear = reel_runs::framemd5_lines(&linear);
    assert_eq!(linear.len(), media::frame_count(&media::clip(ERROR_CLIP)));
    for (name, capture) in [
        ("tiled-32l32", "CAPTURE NV12_32L32 320x256"),
        ("tiled-4l4", "CAPTURE NV12_4L4 320x240"),
    ] {
        let (log, out) = reel_runs::successful(runs(), name);
        assert!(log.contains(capture), "{name}: {capture}\n{log}");
        assert_eq!(reel_runs::framemd5_lines(&out), linear, "{name}\n{log}");
    }
}

#[test]
fn raw_output_of_a_tiled_capture_is_the_linear_pictures_planar() {
    // `--output raw` detiles NV12_32L32 and splits its CbCr plane: the
    // bytes must be those of the run on visl's linear CAPTURE, yuv420p
    // (320x240: 115200 bytes a picture) whatever layout visl used.
    let raw = |name: &str| {
        let (log, _) = reel_runs::successful(runs(), name);
        let path = runs().result_dir.join(format!("{name}.out"));
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        (log, bytes)
    };
    let (_, linear) = raw("clean-h264-raw");
    let frames = media::frame_count(&media::clip(ERROR_CLIP));
    assert_eq!(linear.len(), frames * 320 * 240 * 3 / 2, "raw output size");
    let (log, tiled) = raw("tiled-32l32-raw");
    assert!(log.contains("CAPTURE NV12_32L32 320x256"), "{log}");
    let first = tiled
        .chunks(115_200)
        .zip(linear.chunks(115_200))
        .position(|(a, b)| a != b);
    assert_eq!(tiled.len(), linear.len(), "tiled raw output size");
    assert_eq!(first, None, "first raw picture differing");
}

#[test]
fn hold_is_read_per_coded_format() {
    let nohold = probed_holds("nohold-probe");
    assert!(nohold.iter().all(|(_, hold)| !hold), "{nohold:?}");
    let default = probed_holds("default-probe");
    assert!(default.iter().all(|(_, hold)| *hold), "{default:?}");
    let cedrus = probed_holds("cedrus-probe");
    for (fourcc, hold) in &cedrus {
        assert_eq!(
            *hold,
            fourcc == "S264" || fourcc == "S265",
            "{fourcc}: hold capture buffer as the driver sets it at S_FMT: {cedrus:?}"
        );
    }
    // With HOLD for H.264, the driver's slice-based default is kept.
    let log = assert_whole("cedrus-h264", &media::clip("h264_slices.mp4"));
    assert!(log.contains("mode=SliceBased"), "{log}");
    let requests = requests_per_picture("cedrus-h264");
    assert!(
        requests.iter().all(|&r| r == 4),
        "four slices, four requests per picture: {requests:?}"
    );
}

/// The pictures (decode order) a decode error on `first` damages: it and
/// every picture whose request named a damaged picture in its DPB.
fn damaged_by(frames: &[support::visl_trace::FrameRecord], first: usize) -> Vec<usize> {
    let mut damaged = vec![first];
    for frame in frames.iter().filter(|f| f.index > first) {
        let references_damage = frame.controls.iter().any(|(name, fields)| {
            name.starts_with("v4l2_h264_dpb_entry[")
                && fields
                    .get("reference_ts")
                    .is_some_and(|r| damaged.iter().any(|d| r.as_str() == format!("frame {d}")))
        });
        if references_damage {
            damaged.push(frame.index);
        }
    }
    damaged
}

#[test]
fn pictures_decoded_with_errors_and_their_dependents_are_not_output() {
    let clip = media::clip(ERROR_CLIP);
    // Decode order is packet order: one picture per packet.
    let packet_pts: Vec<i64> = media::ffprobe(&clip, "packet=pts");
    let clean_frames = reel_runs::reel_frames(runs(), "clean-h264", "guest-real-drivers");
    assert_eq!(
        clean_frames.len(),
        packet_pts.len(),
        "one picture per packet"
    );
    let damaged = damaged_by(&clean_frames, ERROR_REQUEST);
    assert!(
        damaged.len() > 1 && damaged.iter().all(|&d| d < 24),
        "the error should reach dependents and stop at the IDR: {damaged:?}"
    );
    let (_, clean_out) = reel_runs::successful(runs(), "clean-h264");
    let (rc, log, out) = reel_runs::outcome(runs(), "error-h264");
    assert!(!log.contains("panicked"), "{log}");
    assert_eq!(rc, 1, "decode errors make the run fail:\n{log}");
    // The clean run's lines are in display order: the k-th is the picture
    // with the k-th smallest packet pts.
    let mut display_order = packet_pts.clone();
    display_order.sort_unstable();
    let damaged_display: Vec<usize> = damaged
        .iter()
        .filter_map(|&d| display_order.iter().position(|&p| p == packet_pts[d]))
        .collect();
    let clean: Vec<(i64, String)> = reel_runs::framemd5_lines(&clean_out);
    assert_eq!(clean.len(), packet_pts.len(), "clean run: every picture");
    let expected: Vec<(i64, String)> = clean
        .iter()
        .enumerate()
        .filter(|(k, _)| !damaged_display.contains(k))
        .map(|(_, line)| line.clone())
        .collect();
    let shown = reel_runs::framemd5_lines(&out);
    assert_eq!(
        shown.iter().map(|l| l.0).collect::<Vec<_>>(),
        expected.iter().map(|l| l.0).collect::<Vec<_>>(),
        "pictures output (pts) with pictures {damaged:?} damaged"
    );
    assert_eq!(shown, expected, "the pictures output are the clean run's");
    let stats = stats_line(&log);
    assert!(stats.contains("decode_errors=1 "), "{stats}");
    assert!(
        stats.ends_with(&format!("frames_skipped={}", damaged.len())),
        "{stats}"
    );
    // Said once per burst in display order (a picture decoded before the
    // error shows between damaged ones), not once per picture.
    let bursts = log.matches("decode error: not showing").count();
    assert!((1..=2).contains(&bursts), "{bursts} warnings:\n{log}");
    assert_eq!(
        log.matches("decoding is clean again").count(),
        bursts,
        "{log}"
    );
}

#[test]
fn cpu_reads_of_capture_buffers_are_bracketed_with_dma_buf_sync() {
    let frames = media::frame_count(&media::clip(ERROR_CLIP));
    // NV12 in one memory plane on visl: one dmabuf per picture.
    assert_eq!(
        dma_buf_syncs("sync-framemd5"),
        2 * frames,
        "a start and an end around each picture hashed"
    );
    assert_eq!(dma_buf_syncs("sync-null"), 0, "no CPU read, no sync");
}

/// A run's strace lines that name `call` with `all` of the texts.
fn calls_with(strace: &str, call: &str, all: &[&str]) -> usize {
    strace
        .lines()
        .filter(|l| l.contains(call) && all.iter().all(|t| l.contains(t)))
        .count()
}

#[test]
fn capture_buffers_are_mapped_only_when_the_cpu_reads_them() {
    for name in ["sync-null", "sync-framemd5"] {
        let strace = strace_of(name);
        // The CPU writes every access unit: each OUTPUT buffer (one plane)
        // is mapped once through the device, and nothing else is.
        let output_buffers = calls_with(&strace, "VIDIOC_QUERYBUF", &["VIDEO_OUTPUT"]);
        assert!(output_buffers > 0, "{name}: no OUTPUT buffer queried");
        assert_eq!(
            calls_with(&strace, "mmap(", &["/dev/video"]),
            output_buffers,
            "{name}: device mappings other than the OUTPUT buffers'"
        );
    }
    // Decoding for nothing reads no picture: none is mapped (each would
    // count in RSS whole).
    assert_eq!(
        calls_with(&strace_of("sync-null"), "mmap(", &["dmabuf"]),
        0,
        "sync-null: a CAPTURE dmabuf mapped"
    );
    // Hashing reads every picture: each CAPTURE plane is mapped through its
    // dmabuf, once, the first time it is read.
    let strace = strace_of("sync-framemd5");
    let exported = calls_with(&strace, "VIDIOC_EXPBUF", &["= 0"]);
    let mapped = calls_with(&strace, "mmap(", &["dmabuf"]);
    assert!(
        mapped > 0 && mapped <= exported,
        "sync-framemd5: {mapped} CAPTURE mappings for {exported} exported planes"
    );
}

/// What visl (`capture_cache_hints=1`) logs at each CAPTURE STREAMOFF:
/// (non-coherent, buffers queued, queued without a cache clean, without a
/// cache invalidate).
fn capture_cache_reports(result: &GuestResult) -> Vec<(bool, u64, u64, u64)> {
    result
        .kernel_reports("CAPTURE memory ")
        .into_iter()
        .map(|(rest, numbers)| {
            let [queued, no_clean, no_invalidate] = numbers[..] else {
                panic!("visl's CAPTURE memory line: {rest}");
            };
            (
                rest.starts_with("non-coherent"),
                queued,
                no_clean,
                no_invalidate,
            )
        })
        .collect()
}

#[test]
fn capture_memory_the_cpu_reads_is_non_coherent_where_the_driver_allows_it() {
    // Only the two runs under `capture_cache_hints=1` are reported.
    let reports = capture_cache_reports(runs());
    let [hashed, discarded] = reports[..] else {
        panic!("visl's CAPTURE memory reports: {reports:?}");
    };
    // Hashing reads every picture: non-coherent memory, cleaned when each
    // buffer is first queued (the allocation may leave dirty lines) and
    // never after, since the CPU only reads it; invalidated at every
    // dequeue, since vb2-dma-contig's DMA_BUF_IOCTL_SYNC does not.
    let (log, out) = reel_runs::successful(runs(), "hints-framemd5");
    let buffers: u32 = log
        .lines()
        .find(|l| l.contains("CAPTURE memory for CPU reads: non-coherent"))
        .and_then(|l| reel_output::fields(l).remove("buffers"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("hints-framemd5: no non-coherent CAPTURE memory\n{log}"));
    let (non_coherent, queued, no_clean, no_invalidate) = hashed;
    assert!(non_coherent, "hints-framemd5: {hashed:?}");
    assert!(
        queued > u64::from(buffers),
        "hints-framemd5: every buffer queued again"
    );
    assert_eq!(
        (no_clean, no_invalidate),
        (queued - u64::from(buffers), 0),
        "hints-framemd5: {buffers} buffers, queued {queued} times"
    );
    // The pictures are those of visl's defaults.
    let (_, coherent_out) = reel_runs::successful(runs(), "clean-h264");
    assert_eq!(
        reel_runs::framemd5_lines(&out),
        reel_runs::framemd5_lines(&coherent_out)
    );
    // Decoding for nothing reads no picture: coherent memory, nothing
    // skipped (zero-copy presentation is the same case).
    let (log, _) = reel_runs::successful(runs(), "hints-null");
    assert!(!log.contains("CAPTURE memory for CPU reads"), "{log}");
    let (non_coherent, queued, no_clean, no_invalidate) = discarded;
    assert!(!non_coherent && queued > 0, "hints-null: {discarded:?}");
    assert_eq!((no_clean, no_invalidate), (0, 0), "hints-null");
}

/// The DQBUFs of a run: the queue ("OUTPUT" or "CAPTURE") of each one
/// that succeeded, in order, and how many found nothing to dequeue.
fn dequeues(strace: &str) -> (Vec<&'static str>, usize) {
    let mut done = Vec::new();
    let mut failed = 0;
    for line in strace.lines().filter(|l| l.contains("VIDIOC_DQBUF")) {
        if line.trim_end().ends_with("= 0") {
            done.push(if line.contains("CAPTURE") {
                "CAPTURE"
            } else {
                "OUTPUT"
            });
        } else {
            failed += 1;
        }
    }
    (done, failed)
}

#[test]
fn completed_requests_are_collected_without_a_dequeue_known_to_fail() {
    let frames = media::frame_count(&media::clip(ERROR_CLIP));
    let strace = strace_of("sync-null");
    let ioctls = strace.lines().filter(|l| l.contains("ioctl(")).count();
    let (done, failed) = dequeues(&strace);
    eprintln!(
        "{ioctls} ioctls for {frames} frames ({:.1} a frame, start-up included), {failed} DQBUFs with nothing to dequeue",
        ioctls as f64 / frames as f64
    );
    // Each completed request's CAPTURE buffer is done before the request
    // (the m2m core's order): one DQBUF each, none past it to find the
    // queue empty. Only a look after the last picture may fail.
    assert!(failed <= 2, "{failed} failed DQBUFs for {frames} frames");
    // ... and taken as its request completes: frame by frame, an OUTPUT
    // buffer and then its picture, none left behind for later.
    assert_eq!(done.len(), 2 * frames, "dequeued: {done:?}");
    assert!(
        done.chunks(2).all(|pair| pair == ["OUTPUT", "CAPTURE"]),
        "a picture not taken with its request: {done:?}"
    );
}

#[test]
fn slice_by_slice_each_picture_is_collected_with_its_last_slice() {
    let frames = media::frame_count(&media::clip("h264_slices.mp4"));
    let (done, failed) = dequeues(&strace_of("sync-null-slices"));
    let requests = done.iter().filter(|&&q| q == "OUTPUT").count();
    let pictures = done.iter().filter(|&&q| q == "CAPTURE").count();
    assert!(
        requests > frames,
        "{requests} requests for {frames} frames: not slice by slice"
    );
    assert_eq!(pictures, frames, "pictures dequeued");
    assert!(failed <= 2, "{failed} failed DQBUFs for {frames} frames");
    // Every slice but a picture's last holds its CAPTURE buffer; the last
    // one's completion makes the picture, taken right after that
    // request's OUTPUT buffer, not left for a later look.
    assert!(
        done.windows(2)
            .filter(|w| w[1] == "CAPTURE")
            .all(|w| w[0] == "OUTPUT"),
        "a picture not taken with its last slice: {done:?}"
    );
    assert_eq!(done.first(), Some(&"OUTPUT"), "{done:?}");
}

/// FFmpeg's framemd5 of `clip` as (pts, md5).
fn ffmpeg_framemd5(clip: &Path) -> Vec<(i64, String)> {
    let out = Command::new("ffmpeg")
        .args(["-nostdin", "-v", "error", "-i"])
        .arg(clip)
        .args(["-autoscale", "0", "-f", "framemd5", "-"])
        .output()
        .unwrap_or_else(|e| panic!("ffmpeg: {e}"));
    assert!(
        out.status.success(),
        "ffmpeg framemd5 of {}",
        clip.display()
    );
    reel_runs::framemd5_lines(&String::from_utf8_lossy(&out.stdout))
}

/// A run's `reel: stats:` line.
fn stats_line(log: &str) -> &str {
    log.lines()
        .find(|l| l.starts_with("reel: stats:"))
        .unwrap_or_else(|| panic!("no stats line:\n{log}"))
}

/// A run that handed over from visl to software decoding: said once,
/// every frame of `clip` output once and in order, visl's pictures (test
/// bars) first, then libavcodec's, equal to FFmpeg's frame for frame.
/// Returns where software decoding took over.
fn assert_handed_over(name: &str, log: &str, out: &str, clip: &str) -> usize {
    assert_eq!(
        log.matches("the V4L2 decoder cannot go on; software decoding from the next frame")
            .count(),
        1,
        "{name}: {log}"
    );
    let ffmpeg = ffmpeg_framemd5(&media::clip(clip));
    let ours = reel_runs::framemd5_lines(out);
    assert_eq!(
        ours.iter().map(|l| l.0).collect::<Vec<_>>(),
        ffmpeg.iter().map(|l| l.0).collect::<Vec<_>>(),
        "{name}: pts of the frames output\n{log}"
    );
    let software_from = ours
        .iter()
        .zip(&ffmpeg)
        .position(|(a, b)| a == b)
        .unwrap_or_else(|| panic!("{name}: no frame equals FFmpeg's: no software frames"));
    assert_eq!(
        ours[software_from..],
        ffmpeg[software_from..],
        "{name}: the software part equals FFmpeg's frame for frame"
    );
    software_from
}

#[test]
fn profile_and_level_menus_are_listed_and_honoured() {
    // `reel probe` lists the menus the driver offers, and only those.
    let (rc, log, out) = reel_runs::outcome(runs(), "menus-probe");
    assert_eq!(rc, 0, "{log}");
    let menu = |label: &str| -> Vec<u32> {
        let line = out
            .lines()
            .find_map(|l| l.trim_start().strip_prefix(&format!("{label}: ")))
            .unwrap_or_else(|| panic!("probe lists no {label} menu:\n{out}"));
        line.split(", ")
            .map(|item| item.split('=').next().and_then(|v| v.parse().ok()))
            .collect::<Option<Vec<u32>>>()
            .unwrap_or_else(|| panic!("{label}: {line}"))
    };
    assert_eq!(menu("av1 profile"), [0], "{out}");
    assert_eq!(menu("av1 level"), [0, 1], "{out}");
    assert_eq!(
        menu("h264 level"),
        (0..=H264_LEVEL_MAX).collect::<Vec<_>>(),
        "{out}"
    );

    // Within the menus: decoded through V4L2, nothing said.
    let log = assert_whole("menus-av1", &media::clip("av1.mkv"));
    assert!(!log.contains(LEVEL_WARNING), "{log}");
    // Above the level menu (level bounds rate, not what the hardware can
    // decode): tried, said once, decoded whole through V4L2.
    for (name, clip, warning) in [
        (
            "menus-av1-level3",
            "av1_level3.mkv",
            "AV1 stream of level 3.0 is above the driver's highest, 2.1",
        ),
        (
            "menus-h264",
            FAULT_CLIP,
            "H.264 stream of level 1.3 is above the driver's highest, 1.2",
        ),
    ] {
        let log = assert_whole(name, &media::clip(clip));
        assert_eq!(log.matches(warning).count(), 1, "{name}:\n{log}");
    }
    // visl's own menus-less default: no level is above anything.
    let (log, _) = reel_runs::successful(runs(), "clean-h264");
    assert!(!log.contains(LEVEL_WARNING), "{log}");

    // A profile the menu lacks is never given to the driver: --hwdec v4l2
    // says why, auto decodes every frame in software.
    let (rc, log, _) = reel_runs::outcome(runs(), "menus-444-v4l2");
    assert_ne!(rc, 0, "{log}");
    assert!(
        log.contains("AV1 seq_profile 1 (yuv444p) is not among the decoder's profiles"),
        "{log}"
    );
    let (rc, log, out) = reel_runs::outcome(runs(), "menus-444-auto");
    assert_eq!(rc, 0, "{log}");
    assert_eq!(
        reel_runs::stats_decoder("menus-444-auto", &log),
        "software",
        "{log}"
    );
    let ours: Vec<i64> = reel_runs::framemd5_lines(&out)
        .iter()
        .map(|l| l.0)
        .collect();
    let ffmpeg: Vec<i64> = ffmpeg_framemd5(&media::clip(AV1_444))
        .iter()
        .map(|l| l.0)
        .collect();
    assert!(!ffmpeg.is_empty());
    assert_eq!(ours, ffmpeg, "menus-444-auto: frames output\n{log}");
}

#[test]
fn a_lost_device_hands_over_to_software_decoding() {
    let name = "lost-auto";
    let (rc, log, out) = reel_runs::outcome(runs(), name);
    assert!(
        runs().read_result(&format!("{name}.unbound")).is_ok(),
        "{name}: visl was never unbound (reel ended first?)\n{log}"
    );
    assert!(!log.contains("panicked"), "{log}");
    assert_eq!(rc, 0, "{name}: the software decoder took over:\n{log}");
    let software_from = assert_handed_over(name, &log, &out, ERROR_CLIP);
    assert!(
        software_from >= UNBIND_AFTER,
        "{name}: software from frame {software_from}, before the device went"
    );
    assert!(
        log.contains("decoder=software"),
        "the stats name the decoder at the end:\n{log}"
    );
}

#[test]
fn a_lost_device_ends_hwdec_v4l2_with_an_error() {
    let name = "lost-v4l2";
    let (rc, log, _) = reel_runs::outcome(runs(), name);
    assert!(
        runs().read_result(&format!("{name}.unbound")).is_ok(),
        "{name}: visl was never unbound\n{log}"
    );
    assert!(!log.contains("panicked"), "{log}");
    assert_eq!(rc, 5, "{name}: the device-failure exit status\n{log}");
    assert!(log.contains("reel: error:"), "{log}");
    assert!(
        log.contains("ENODEV") || log.contains("No such device"),
        "{name}: the cause is named:\n{log}"
    );
}

/// A run of FAULT_CLIP on visl that lost its sixth picture (request or job
/// 5) to `fault` and resumed: the fault named once at warning level, the
/// session reset, exit status 1 (pictures were lost); the five pictures
/// before it were put out before the reset, the rest up to the next IDR
/// could not be decoded, and decoding resumed there.
fn assert_resumed_at_the_next_key_frame(name: &str, fault: &str) -> String {
    let (rc, log, out) = reel_runs::outcome(runs(), name);
    assert!(!log.contains("panicked"), "{log}");
    assert_eq!(rc, 1, "{name}: pictures were lost: status 1\n{log}");
    assert_eq!(
        log.lines()
            .filter(|l| l.contains(" WARN ") && l.contains(fault))
            .count(),
        1,
        "{name}: the fault is named once:\n{log}"
    );
    assert!(
        log.contains("(the V4L2 session was reset)"),
        "{name}: {log}"
    );
    // One request per picture, in display order.
    let clip = media::clip(FAULT_CLIP);
    let keys: Vec<u8> = media::ffprobe(&clip, "frame=key_frame");
    let next_key = (6..keys.len())
        .find(|&i| keys[i] == 1)
        .unwrap_or_else(|| panic!("{FAULT_CLIP}: no key frame after the sixth"));
    let all = ffmpeg_framemd5(&clip);
    let expected: Vec<i64> = all
        .iter()
        .enumerate()
        .filter(|(i, _)| *i < 5 || *i >= next_key)
        .map(|(_, l)| l.0)
        .collect();
    let shown: Vec<i64> = reel_runs::framemd5_lines(&out)
        .iter()
        .map(|l| l.0)
        .collect();
    assert_eq!(shown, expected, "{name}: pts of the pictures output\n{log}");
    let stats = stats_line(&log);
    assert!(stats.contains("decoder=v4l2-stateless"), "{stats}");
    log
}

#[test]
fn a_request_the_device_refuses_costs_the_pictures_until_the_next_key_frame() {
    let log =
        assert_resumed_at_the_next_key_frame("fault-once", "MEDIA_REQUEST_IOC_QUEUE failed: EBUSY");
    assert!(stats_line(&log).contains("decode_errors=1 "), "{log}");
}

#[test]
fn a_request_that_does_not_complete_in_time_resets_and_resumes() {
    // visl's job hangs until its watchdog, 3 s later; reel gives up after
    // one second, and its reset waits for the watchdog: no hang.
    assert_resumed_at_the_next_key_frame("stall-once", "did not complete within 1s");
}

#[test]
fn three_refused_requests_in_a_row_hand_over_to_software_decoding() {
    let name = "fault-stuck-auto";
    let (rc, log, out) = reel_runs::outcome(runs(), name);
    assert!(!log.contains("panicked"), "{log}");
    assert_eq!(rc, 0, "{name}: the software decoder took over:\n{log}");
    assert_eq!(
        log.matches("(the V4L2 session was reset)").count(),
        2,
        "{name}: two resets before the third fault:\n{log}"
    );
    assert!(
        log.contains("3 decode requests in a row failed or did not complete"),
        "{name}: {log}"
    );
    let software_from = assert_handed_over(name, &log, &out, FAULTS_IN_A_ROW_CLIP);
    assert!(software_from >= 1, "{name}: visl decoded nothing first");
    // What the faults cost is decoded again: the file played whole.
    let stats = stats_line(&log);
    assert!(stats.contains("decoder=software"), "{name}: {stats}");
    assert!(stats.contains("decode_errors=0 "), "{name}: {stats}");
}

#[test]
fn three_refused_requests_in_a_row_end_hwdec_v4l2_with_the_device_failure_status() {
    let name = "fault-stuck-v4l2";
    let (rc, log, _) = reel_runs::outcome(runs(), name);
    assert!(!log.contains("panicked"), "{log}");
    assert_eq!(rc, 5, "{name}: the device-failure exit status\n{log}");
    assert!(
        log.contains("3 decode requests in a row failed or did not complete")
            && log.contains("MEDIA_REQUEST_IOC_QUEUE failed: EIO"),
        "{name}: the cause is named:\n{log}"
    );
}
