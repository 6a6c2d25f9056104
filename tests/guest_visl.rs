//! The V4L2 stateless test bed itself, in the QEMU guest on the host's root:
//! the guest runs commands and reports back, visl is there with what its
//! source declares, and the trace helper records GStreamer's decodes through
//! visl request by request. (The stored GStreamer oracles the V4L2 tests
//! compare reel with are checked by tests/oracle_store.rs.)
//!
//! These tests need QEMU and the prepared test bed (tests/vm/prepare.sh runs
//! by itself); if the guest cannot start they fail and say why.

mod support;

use std::collections::BTreeSet;
use std::time::Duration;

use support::media;
use support::oracle;
use support::visl_trace;
use support::vm::{self, Guest, GuestCommand, GuestError, ScriptCall};

fn run(command: GuestCommand) -> vm::GuestResult {
    match Guest::run(&command) {
        Ok(result) => result,
        Err(e) => panic!("the test guest did not run: {e}"),
    }
}

#[test]
fn guest_returns_exit_code_output_and_files() {
    let result = run(GuestCommand::script(ScriptCall::new("guest-io.sh"))
        .env("REEL_PROBE", "two words, 'quoted' $NOT_EXPANDED")
        .modules(Vec::<String>::new())
        .label("exit-code"));
    assert_eq!(result.exit_code, 7, "{}", result.report());
    assert_eq!(result.stdout.trim(), "to-stdout");
    assert_eq!(result.stderr.trim(), "to-stderr");
    assert_eq!(
        result.read_result("file.txt").ok().as_deref(),
        Some("payload\n")
    );
    assert_eq!(
        result.read_result("env").ok().as_deref(),
        Some("two words, 'quoted' $NOT_EXPANDED\n")
    );
    // The guest runs the kernel the test bed prepared, not the host's.
    let kver = std::fs::read_to_string(vm::bed_dir().join("kver"))
        .expect("prepared test bed has cache/kver");
    assert_eq!(
        result
            .read_result("kernel")
            .ok()
            .map(|k| k.trim().to_string()),
        Some(kver.trim().to_string())
    );
    eprintln!(
        "guest run without modules: {:.1} s",
        result.elapsed.as_secs_f64()
    );
}

#[test]
fn guest_sees_the_checkout_and_runs_host_binaries() {
    let reel = env!("CARGO_BIN_EXE_reel");
    let result = run(
        GuestCommand::script(ScriptCall::new("checkout-probe.sh").arg(reel))
            .modules(Vec::<String>::new())
            .label("checkout"),
    );
    result.assert_success();
    assert_eq!(result.stdout.trim(), "ok");
    let help = result.read_result("help").unwrap_or_default();
    assert!(
        !help.trim().is_empty(),
        "reel --help printed nothing in the guest"
    );
    // Writes in the guest land in its tmpfs overlay, never on the host.
    assert!(
        !support::project_dir().join("guest-write-probe").exists(),
        "the guest wrote to the host's checkout"
    );
}

#[test]
fn a_stuck_guest_is_killed_and_reported() {
    let error = Guest::run(
        &GuestCommand::new("sleep 600")
            .modules(Vec::<String>::new())
            .timeout(Duration::from_secs(45))
            .label("stuck"),
    )
    .expect_err("a guest sleeping past its time limit must fail");
    match error {
        GuestError::Timeout { console_log, .. } => {
            assert!(
                console_log.contains("reel-guest: running"),
                "console log:\n{console_log}"
            )
        }
        other => panic!("expected a timeout, got: {other}"),
    }
}

#[test]
fn guest_sees_visl_video_and_media_nodes() {
    let result = run(GuestCommand::script(ScriptCall::new("visl-nodes.sh")).label("nodes"));
    result.assert_success();
    let out = &result.stdout;
    assert!(
        out.contains("Driver name      : visl"),
        "{}",
        result.report()
    );
    assert!(
        out.contains("Video Memory-to-Memory Multiplanar"),
        "{}",
        result.report()
    );
    for entity in ["visl-source", "visl-proc", "visl-sink"] {
        assert!(
            out.contains(entity),
            "media graph lacks {entity}:\n{}",
            result.report()
        );
    }
    for group in [
        "visl_h264_controls",
        "visl_hevc_controls",
        "visl_vp8_controls",
        "visl_vp9_controls",
        "visl_mpeg2_controls",
        "visl_av1_controls",
    ] {
        assert!(
            out.lines().any(|l| l == group),
            "no trace events {group}:\n{}",
            result.report()
        );
    }
}

/// visl's OUTPUT formats, as its source declares them, read from the kernel
/// source the test bed extracted.
fn formats_in_visl_source() -> BTreeSet<String> {
    let cache = vm::bed_dir();
    let source =
        std::fs::read_to_string(cache.join("src/drivers/media/test-drivers/visl/visl-video.c"))
            .expect("the test bed keeps visl's source");
    let header = std::fs::read_to_string(
        cache
            .join("kernel/usr/src")
            .join(
                std::fs::read_dir(cache.join("kernel/usr/src"))
                    .expect("headers extracted")
                    .filter_map(Result::ok)
                    .map(|e| e.file_name())
                    .find(|n| n.to_string_lossy().ends_with("-common"))
                    .expect("common headers"),
            )
            .join("include/uapi/linux/videodev2.h"),
    )
    .expect("videodev2.h in the kernel headers");
    let fourcc = |name: &str| -> Option<String> {
        let line = header
            .lines()
            .find(|l| l.starts_with(&format!("#define {name} ")))?;
        let inner = line.split("v4l2_fourcc(").nth(1)?;
        Some(inner.split('\'').skip(1).step_by(2).take(4).collect())
    };
    let coded = source
        .split("visl_coded_fmts")
        .nth(1)
        .expect("visl_coded_fmts in visl-video.c");
    let coded = &coded[..coded.find("};").unwrap_or(coded.len())];
    coded
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.starts_with("V4L2_PIX_FMT_"))
        .filter_map(fourcc)
        .collect()
}

#[test]
fn visl_offers_the_formats_and_controls_of_its_source() {
    let result = run(
        GuestCommand::script(ScriptCall::new("v4l2-formats.sh").arg("/dev/video0"))
            .label("formats"),
    );
    result.assert_success();
    let out = &result.stdout;
    let expected = formats_in_visl_source();
    assert!(
        expected.len() >= 7,
        "parsed too few formats from visl's source: {expected:?}"
    );
    for fourcc in &expected {
        assert!(
            out.contains(&format!("'{fourcc}'")),
            "visl lacks OUTPUT format {fourcc}:\n{out}"
        );
    }
    for control in [
        "h264_decode_mode",
        "h264_start_code",
        "hevc_decode_mode",
        "hevc_start_code",
        "h264_sequence_parameter_set",
        "hevc_sequence_parameter_set",
        "vp8_frame_parameters",
        "vp9_frame_decode_parameters",
        "mpeg_2_picture_header",
        "av1_frame_parameters",
    ] {
        assert!(
            out.contains(control),
            "visl lacks control {control}:\n{out}"
        );
    }
    for mode in [
        "Slice-Based",
        "Frame-Based",
        "No Start Code",
        "Annex B Start Code",
    ] {
        assert!(out.contains(mode), "visl lacks menu entry {mode}:\n{out}");
    }
    std::fs::create_dir_all(oracle::oracle_dir()).ok();
    std::fs::write(oracle::oracle_dir().join("visl-formats-controls.txt"), out).ok();
}

#[test]
fn the_trace_helper_records_controls_per_request() {
    let media = media::dir();
    let clip = media.join("h264_baseline.mp4");
    let decode = ScriptCall::new("gst-decode.sh")
        .arg("v4l2slh264dec")
        .arg(&clip);
    let result = run(GuestCommand::script(decode).traced().label("traced"));
    result.assert_success();
    let trace = result.trace().unwrap_or_else(|e| panic!("{e}"));
    let frames = visl_trace::normalise(&trace).unwrap_or_else(|e| panic!("{e}"));
    let clip = oracle::clip("h264_baseline").expect("known clip");
    assert_eq!(
        frames.len(),
        oracle::ffmpeg_frame_count(clip, media).expect("ffmpeg counts")
    );
}

#[test]
fn a_module_that_cannot_load_fails_the_run_with_the_reason() {
    let error = Guest::run(
        &GuestCommand::new("echo should-not-run")
            .modules(["visl", "no_such_module_reel"])
            .label("bad-module"),
    )
    .expect_err("a missing module must fail the run");
    let message = error.to_string();
    assert!(
        matches!(error, GuestError::Start(_)) && message.contains("modprobe no_such_module_reel"),
        "{message}"
    );
}

#[test]
fn vicodec_loads_next_to_visl() {
    let result = run(GuestCommand::new("v4l2-ctl --list-devices")
        .modules(["visl", "vicodec"])
        .label("vicodec"));
    result.assert_success();
    for driver in ["visl", "vicodec"] {
        assert!(
            result.stdout.contains(driver),
            "no {driver} device:\n{}",
            result.report()
        );
    }
}
