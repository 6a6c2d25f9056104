//! H.264 through reel's V4L2 stateless path, in the QEMU guest with visl,
//! against GStreamer 1.22's `v4l2slh264dec` on the same clips and the same
//! visl settings (the oracle stored by `support::oracle`):
//! - slice-based without start codes (visl's defaults, what GStreamer
//!   uses): the normalised traces must match frame by frame, slice by slice;
//! - frame-based with Annex-B start codes (forced through
//!   `REEL_V4L2_H264_MODE`/`REEL_V4L2_H264_START_CODE`): the per-frame
//!   controls must match the oracle regrouped per frame;
//! - truncated and corrupted files: bounded time, no panic, errors logged,
//!   decoding resumes at the next IDR;
//! - `--output framemd5`: FFmpeg's frame count, increasing pts, the same
//!   output twice.
//!
//! Every reel run happens in one guest boot (a shell loop); each test
//! checks its part of the results. If the guest cannot start, every test
//! fails with the reason.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use support::media;
use support::oracle::{self, OracleClip};
use support::reel_runs;
use support::visl_bitstream;
use support::visl_trace::{self, FrameRecord};
use support::vm::{Guest, GuestCommand, GuestResult, ScriptCall};

/// The H.264 clips GStreamer's oracle covers.
fn h264_clips() -> Vec<&'static OracleClip> {
    oracle::CLIPS
        .iter()
        .filter(|c| c.element == "v4l2slh264dec")
        .collect()
}

/// Clips for the framemd5 checks (display order, determinism).
const FRAMEMD5_CLIPS: [&str; 4] = [
    "h264_main_bframes",
    "h264_mbaff",
    "h264_paff",
    "h264_resolution_change",
];

/// Where the seek test starts h264_main_bframes (30 fps, 30 frames).
const SEEK_SECONDS: f64 = 0.5;

/// Two segments, each starting with an IDR: damage in the first must not
/// stop the second from decoding.
const CORRUPTED_SOURCE: &str = "h264_resolution_change.ts";

/// The corrupted copy of a clip: in 24 transport packets a quarter in, the
/// H.264 bytes are overwritten with noise; packet headers, adaptation fields
/// and PES headers are kept, so that the demuxer passes the damaged NAL
/// units on rather than dropping them. Made on the host next to the test
/// media (the guest sees the same path).
fn corrupted_clip(media: &Path) -> PathBuf {
    const TS_PACKET: usize = 188;
    /// Room for a PES header (with PTS and DTS) at the start of a PES.
    const PES_HEADER: usize = 20;
    let source = media.join(CORRUPTED_SOURCE);
    let mut data = std::fs::read(&source).unwrap_or_else(|e| panic!("{}: {e}", source.display()));
    let first = data.len() / 4 / TS_PACKET;
    let mut noise = 0x2545_f491_u32;
    for packet in data.chunks_mut(TS_PACKET).skip(first).take(24) {
        assert_eq!(packet[0], 0x47, "not a transport packet boundary");
        let pes_start = packet[1] & 0x40 != 0;
        let adaptation = packet[3] & 0x20 != 0;
        if adaptation {
            continue;
        }
        let from = if pes_start { 4 + PES_HEADER } else { 4 };
        for byte in &mut packet[from..] {
            noise ^= noise << 13;
            noise ^= noise >> 17;
            noise ^= noise << 5;
            *byte = noise as u8;
        }
    }
    let path = support::target_dir().join("guest-h264/h264_corrupted.ts");
    std::fs::create_dir_all(path.parent().expect("has a parent")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(&path, data).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    path
}

/// An H.264 clip below visl's smallest size (64x64), made with FFmpeg.
fn too_small_clip() -> PathBuf {
    let path = support::target_dir().join("guest-h264/h264_48x48.mp4");
    let status = Command::new("ffmpeg")
        .args(["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i"])
        .arg("testsrc=size=48x48:rate=30:duration=0.2")
        .args(["-c:v", "libx264", "-pix_fmt", "yuv420p"])
        .arg(&path)
        .status()
        .unwrap_or_else(|e| panic!("ffmpeg: {e}"));
    assert!(status.success(), "ffmpeg could not make {}", path.display());
    path
}

struct GuestRuns {
    result: GuestResult,
}

fn outcome(name: &str) -> (i32, String, String) {
    reel_runs::outcome(&runs().result, name)
}

fn successful(name: &str) -> (String, String) {
    reel_runs::successful(&runs().result, name)
}

fn reel_frames(name: &str) -> Vec<FrameRecord> {
    reel_runs::reel_frames(&runs().result, name, "guest-h264")
}

/// One guest boot running every reel decode the tests look at.
fn runs() -> &'static GuestRuns {
    static RUNS: OnceLock<GuestRuns> = OnceLock::new();
    RUNS.get_or_init(|| {
        let media = media::dir();
        let v4l2_null = ["--hwdec", "v4l2", "--output", "null"];
        let v4l2_framemd5 = ["--hwdec", "v4l2", "--output", "framemd5"];
        let mut calls = Vec::new();
        for clip in h264_clips() {
            let file = media.join(clip.file);
            calls.push(reel_runs::traced_decode(
                &format!("slice-{}", clip.name),
                &v4l2_null,
                &file,
            ));
            calls.push(
                reel_runs::traced_decode(&format!("frame-{}", clip.name), &v4l2_null, &file)
                    .env("REEL_V4L2_H264_MODE", "frame")
                    .env("REEL_V4L2_H264_START_CODE", "annexb"),
            );
        }
        for name in FRAMEMD5_CLIPS {
            let file = media.join(oracle::clip(name).expect("known clip").file);
            calls.extend(reel_runs::framemd5_twice(name, &file));
        }
        let bframes = oracle::clip("h264_main_bframes").expect("known clip");
        let seek = SEEK_SECONDS.to_string();
        calls.push(reel_runs::traced_decode(
            "seek",
            &["--hwdec", "v4l2", "--start", &seek, "--output", "framemd5"],
            &media.join(bframes.file),
        ));
        calls.push(reel_runs::traced_decode(
            "truncated",
            &v4l2_framemd5,
            &media.join("truncated.mkv"),
        ));
        calls.push(reel_runs::traced_decode(
            "corrupted",
            &v4l2_framemd5,
            &corrupted_clip(media),
        ));
        // Choosing the decoder: by default (auto), forced software, a named
        // node, a node that is no decoder; and what `reel probe` says.
        let baseline = media.join("h264_baseline.mp4");
        let small = too_small_clip();
        let null = ["--output", "null"];
        let device = |node| ["--hwdec", "v4l2", "--device", node, "--output", "null"];
        calls.extend([
            reel_runs::traced_decode("auto", &null, &baseline),
            reel_runs::traced_decode(
                "software",
                &["--hwdec", "no", "--output", "null"],
                &baseline,
            ),
            reel_runs::traced_decode("device", &device("/dev/video0"), &baseline),
            reel_runs::traced_decode("not-a-decoder", &device("/dev/zero"), &baseline),
            reel_runs::traced_decode("vp9-v4l2", &v4l2_null, &media.join("vp9.webm")),
            reel_runs::traced_decode("small-auto", &null, &small),
            reel_runs::traced_decode("small-v4l2", &v4l2_null, &small),
            reel_runs::traced_decode("probe", &["probe"], &baseline),
        ]);
        // Last (they reload visl): the OUTPUT buffers' bytes, in visl's
        // default mode (GStreamer's are stored with its oracle).
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
                .timeout(Duration::from_secs(120 + 60 * count as u64))
                .env("RUST_BACKTRACE", "1")
                .label("guest-h264"),
        )
        .unwrap_or_else(|e| panic!("the test guest did not run: {e}"));
        result.assert_success();
        GuestRuns { result }
    })
}

/// Clips whose OUTPUT buffers are compared with GStreamer's (their size and
/// sha256, stored with its oracle).
const BITSTREAM_CLIPS: [&str; 4] = [
    "h264_main_bframes",
    "h264_slices",
    "h264_weighted",
    "h264_paff",
];

/// The OUTPUT buffers visl kept for one run (visl-bitstream.sh), in
/// sequence order.
fn output_buffers(name: &str) -> Vec<Vec<u8>> {
    let r = &runs().result;
    let rc = r.read_result(&format!("{name}.rc")).unwrap_or_default();
    assert_eq!(rc.trim(), "0", "{name}: exit status\n{}", r.report());
    visl_bitstream::read_dump(&r.result_dir.join(format!("{name}.bitstream")))
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn slice_based_traces_match_gstreamer() {
    let mut failures = Vec::new();
    for clip in h264_clips() {
        let oracle = oracle::oracle_frames(clip).unwrap_or_else(|e| panic!("{e}"));
        let reel = reel_frames(&format!("slice-{}", clip.name));
        // No difference is intended: slot choices, unused list entries and
        // unused weights/matrices are already hidden by the normaliser, and
        // reel sets the PFRAME/BFRAME flags as GStreamer does.
        let diff = visl_trace::diff(&oracle, &reel);
        failures.extend(reel_runs::diff_report(clip.name, &diff));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The oracle's slice-based frames as frame-based decoding sends them: one
/// run per picture, no slice parameters or prediction weights (the driver
/// parses the slices), controls of later slices dropped.
fn per_frame(frames: &[FrameRecord]) -> Vec<FrameRecord> {
    frames
        .iter()
        .map(|f| {
            let mut f = f.clone();
            f.runs = 0;
            f.controls.retain(|name, _| {
                !name.starts_with("slice")
                    && !name.starts_with("v4l2_ctrl_h264_slice_params")
                    && !name.starts_with("v4l2_ctrl_h264_pred_weights")
                    && !name.starts_with("v4l2_h264_ref_pic_list")
            });
            f
        })
        .collect()
}

#[test]
fn frame_based_annex_b_traces_match_gstreamer_per_frame() {
    let mut failures = Vec::new();
    for clip in h264_clips() {
        let name = format!("frame-{}", clip.name);
        let (log, _) = successful(&name);
        assert!(
            log.contains("mode=FrameBased annex_b=true"),
            "{name}: not frame-based with start codes:\n{log}"
        );
        let oracle = oracle::oracle_frames(clip).unwrap_or_else(|e| panic!("{e}"));
        let reel = reel_frames(&name);
        // One request per picture (two for a field pair).
        for (o, r) in oracle.iter().zip(&reel) {
            let fields = o.controls["v4l2_ctrl_h264_decode_params"]["flags"].contains("FIELD_PIC");
            let expected = if fields { 2 } else { 1 };
            assert!(
                r.runs == expected,
                "{name}: frame {} took {} requests",
                r.index,
                r.runs
            );
        }
        let diff = visl_trace::diff(&per_frame(&oracle), &per_frame(&reel));
        failures.extend(reel_runs::diff_report(clip.name, &diff));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn framemd5_in_display_order_and_deterministic() {
    for name in FRAMEMD5_CLIPS {
        let clip = oracle::clip(name).expect("known clip");
        reel_runs::assert_framemd5_in_order_and_deterministic(
            &runs().result,
            name,
            &media::dir().join(clip.file),
        );
    }
}

/// Frames (decode order) the trace holds requests for, and IDR positions.
fn traced_frames(name: &str) -> (usize, Vec<usize>) {
    let trace = runs()
        .result
        .read_result(&format!("{name}.trace"))
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let frames = visl_trace::normalise(&trace).unwrap_or_else(|e| panic!("{name}: {e}"));
    let idrs = frames
        .iter()
        .filter(|f| {
            f.controls
                .get("v4l2_ctrl_h264_decode_params")
                .and_then(|d| d.get("flags"))
                .is_some_and(|v| v.contains("IDR_PIC"))
        })
        .map(|f| f.index)
        .collect();
    (frames.len(), idrs)
}

#[test]
fn truncated_file_ends_cleanly() {
    let (rc, log, out) = outcome("truncated");
    assert_ne!(rc, 124, "timed out:\n{log}");
    assert!(!log.contains("panicked"), "{log}");
    assert!(
        log.contains("decoder: V4L2 stateless"),
        "not decoded through V4L2:\n{log}"
    );
    let frames = reel_runs::framemd5_lines(&out).len();
    assert!(frames > 0, "no frame out of the truncated file:\n{log}");
    let (traced, _) = traced_frames("truncated");
    assert!(traced >= frames, "{traced} requests for {frames} frames");
}

#[test]
fn corrupted_file_resumes_at_the_next_idr() {
    let (rc, log, out) = outcome("corrupted");
    assert_ne!(rc, 124, "timed out:\n{log}");
    assert!(!log.contains("panicked"), "{log}");
    assert!(
        log.contains("decoder: V4L2 stateless"),
        "not decoded through V4L2:\n{log}"
    );
    assert!(
        log.contains("WARN") || log.contains("ERROR"),
        "the damage was not logged:\n{log}"
    );
    // Requests go on after the damage (in the first segment): the second
    // segment's IDR and every frame after it (its half of the clip) are
    // decoded.
    let total = media::frame_count(&media::dir().join(CORRUPTED_SOURCE));
    let (traced, idrs) = traced_frames("corrupted");
    let last_idr = idrs.last().copied().unwrap_or(0);
    assert!(
        idrs.len() >= 2 && traced - last_idr == total / 2,
        "IDR frames {idrs:?}, {traced} traced, {total} in the clip:\n{log}"
    );
    let frames = reel_runs::framemd5_lines(&out);
    assert!(
        frames.len() > total / 2,
        "{} frames of {total}",
        frames.len()
    );
}

#[test]
fn the_decoder_is_chosen_as_asked() {
    // auto: visl handles H.264, so V4L2 is used.
    successful("auto");
    successful("device");
    let (rc, log, _) = outcome("software");
    assert_eq!(rc, 0, "{log}");
    assert_eq!(
        reel_runs::stats_decoder("software", &log),
        "software",
        "--hwdec=no must decode in software:\n{log}"
    );
    // A node that is no decoder: the error names it; no fallback.
    let (rc, log, _) = outcome("not-a-decoder");
    assert_ne!(rc, 0, "{log}");
    assert!(log.contains("/dev/zero"), "{log}");
    assert!(log.contains("--hwdec=v4l2"), "{log}");
    // VP9 with --hwdec=v4l2 follows the codec registry: decoded through
    // visl (which offers VP9F) once reel has a VP9 path, else refused
    // saying there is none.
    if reel::v4l2::registry::lookup(reel::media::Codec::Vp9).is_some() {
        successful("vp9-v4l2");
    } else {
        let (rc, log, _) = outcome("vp9-v4l2");
        assert_ne!(rc, 0, "{log}");
        assert!(log.contains("no V4L2 path for"), "{log}");
    }
    // Below visl's smallest size: auto says why (naming the device and the
    // size) and decodes in software; --hwdec=v4l2 fails with that reason.
    let reason = "/dev/video0: 48x48 is outside the decoder's sizes";
    let (rc, log, _) = outcome("small-auto");
    assert_eq!(rc, 0, "{log}");
    assert_eq!(
        log.matches("decoder: software, not V4L2:").count(),
        1,
        "{log}"
    );
    assert!(log.contains(reason), "{log}");
    assert_eq!(
        reel_runs::stats_decoder("small-auto", &log),
        "software",
        "{log}"
    );
    let (rc, log, _) = outcome("small-v4l2");
    assert_ne!(rc, 0, "{log}");
    assert!(
        log.contains("--hwdec=v4l2") && log.contains(reason),
        "{log}"
    );
    // probe: the discovery report and the choice for the file.
    let (rc, log, out) = outcome("probe");
    assert_eq!(rc, 0, "{log}\n{out}");
    for expected in [
        "/dev/video0: driver visl",
        "coded formats:",
        "S264",
        "h264 decode mode: 0=Slice-Based, 1=Frame-Based",
        "reel decodes h264 here (S264)",
        "decoder: V4L2 stateless /dev/video0 (visl; SliceBased, Annex-B start codes: false)",
    ] {
        assert!(out.contains(expected), "probe lacks {expected:?}:\n{out}");
    }
}

/// On the host (no V4L2 decoder at all): auto falls back to software with
/// one line saying why; --hwdec=v4l2 fails with that reason.
#[test]
fn without_a_decoder_auto_falls_back_and_v4l2_fails() {
    let media = media::dir();
    let clip = media.join("h264_baseline.mp4");
    let reel = env!("CARGO_BIN_EXE_reel");
    let run = |args: &[&str]| {
        Command::new(reel)
            .arg("-v")
            .args(args)
            .arg(&clip)
            .output()
            .unwrap_or_else(|e| panic!("reel: {e}"))
    };
    // A host may have a real decoder; this test is about the fallback.
    if discovery_finds_a_decoder() {
        panic!("this host has a V4L2 stateless decoder: run this test where there is none");
    }
    let auto = run(&["--output", "null"]);
    let log = String::from_utf8_lossy(&auto.stderr);
    assert!(auto.status.success(), "{log}");
    assert_eq!(
        log.matches("decoder: software, not V4L2: no V4L2 stateless decoder found")
            .count(),
        1,
        "{log}"
    );
    let forced = run(&["--hwdec", "v4l2", "--output", "null"]);
    let log = String::from_utf8_lossy(&forced.stderr);
    assert!(!forced.status.success(), "{log}");
    assert!(
        log.contains(
            "--hwdec=v4l2: no V4L2 decoding for this file: no V4L2 stateless decoder found"
        ),
        "{log}"
    );
}

fn discovery_finds_a_decoder() -> bool {
    !reel::v4l2::discovery::discover().decoders.is_empty()
}

#[test]
fn seeking_starts_at_the_frame_shown_at_the_target() {
    // The whole clip (checked against FFmpeg's count above) gives the pts;
    // starting at SEEK_SECONDS must give exactly those from the frame
    // showing at that time on (the decoder restarts at the keyframe before
    // it and the frames before the target are dropped).
    let (_, full) = successful("md5a-h264_main_bframes");
    let (log, seek) = successful("seek");
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

/// On the host, from a real clip (4 slices per picture, as made by
/// tests/media/generate.sh): the requests H264Codec makes in each mode.
#[test]
fn requests_follow_the_decode_mode_and_start_code() {
    use reel::v4l2::codec::{Bitstream, StatelessCodec, Timestamps};
    use reel::v4l2::h264::H264Codec;
    use reel::v4l2::slice_mode::{DecodeMode, SliceMode};
    use v4l2r::bindings as b;

    const SLICES: usize = 4;
    let media = media::dir();
    let clip = media.join("h264_slices.mp4");
    let pictures = media::frame_count(&clip);
    for decode_mode in [DecodeMode::SliceBased, DecodeMode::FrameBased] {
        for start_codes in [false, true] {
            let what = format!("{decode_mode:?}, start codes {start_codes}");
            let mut codec = H264Codec::new(
                SliceMode {
                    decode_mode,
                    start_codes,
                    holds_capture: true,
                },
                "/dev/video-test".into(),
            );
            let mut demuxer = reel::media::Demuxer::open(&clip).unwrap_or_else(|e| panic!("{e}"));
            let mut requests = Vec::new();
            let mut timestamps = Timestamps::new();
            while let Some(packet) = demuxer.next_packet().unwrap_or_else(|e| panic!("{e}")) {
                timestamps.start_packet();
                let decoded = codec
                    .decode(&packet.data, &mut timestamps)
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                for request in decoded {
                    let bytes = Bitstream::new(&packet.data, &request.bitstream).to_vec();
                    requests.push((request, bytes));
                }
            }
            let per_picture = match decode_mode {
                DecodeMode::SliceBased => SLICES,
                DecodeMode::FrameBased => 1,
            };
            assert_eq!(requests.len(), pictures * per_picture, "{what}");
            for (i, (request, bitstream)) in requests.iter().enumerate() {
                let last_of_picture = i % per_picture == per_picture - 1;
                assert_eq!(
                    request.hold_capture, !last_of_picture,
                    "{what}: request {i}"
                );
                let ids: Vec<u32> = request.controls.iter().map(|c| c.id).collect();
                for id in [
                    b::V4L2_CID_STATELESS_H264_SPS,
                    b::V4L2_CID_STATELESS_H264_PPS,
                    b::V4L2_CID_STATELESS_H264_DECODE_PARAMS,
                ] {
                    assert!(ids.contains(&id), "{what}: request {i} lacks {id:#x}");
                }
                assert_eq!(
                    ids.contains(&b::V4L2_CID_STATELESS_H264_SLICE_PARAMS),
                    decode_mode == DecodeMode::SliceBased,
                    "{what}: request {i}"
                );
                // Slices of one picture share its timestamp; pictures differ.
                let picture_start = i - i % per_picture;
                assert_eq!(
                    request.timestamp_ns, requests[picture_start].0.timestamp_ns,
                    "{what}: request {i}"
                );
                // Bitstream: NAL units of slices (types 1 and 5), each after a
                // 3-byte start code when asked; without, one NAL unit.
                let nal_starts: Vec<usize> = if start_codes {
                    bitstream
                        .windows(3)
                        .enumerate()
                        .filter(|(_, w)| *w == [0, 0, 1])
                        .map(|(at, _)| at + 3)
                        .collect()
                } else {
                    vec![0]
                };
                if start_codes {
                    assert_eq!(&bitstream[..3], &[0, 0, 1], "{what}: request {i}");
                    let slices = if decode_mode == DecodeMode::SliceBased {
                        1
                    } else {
                        SLICES
                    };
                    assert_eq!(nal_starts.len(), slices, "{what}: request {i}");
                }
                for at in nal_starts {
                    let nal_type = bitstream[at] & 0x1f;
                    assert!(
                        matches!(nal_type, 1 | 5),
                        "{what}: request {i}: NAL type {nal_type}"
                    );
                }
            }
            let mut stamps: Vec<u64> = requests.iter().map(|r| r.0.timestamp_ns).collect();
            stamps.dedup();
            assert_eq!(stamps.len(), pictures, "{what}");
            assert!(
                requests[0].0.sequence.is_some(),
                "{what}: first request starts a sequence"
            );
            assert!(
                requests[1..].iter().all(|r| r.0.sequence.is_none()),
                "{what}"
            );
        }
    }
}

#[test]
fn output_buffer_bytes_equal_gstreamers() {
    for name in BITSTREAM_CLIPS {
        let ours = output_buffers(&format!("bits-reel-{name}"));
        let clip = oracle::clip(name).expect("known clip");
        let theirs = oracle::oracle_output_digests(clip).unwrap_or_else(|e| panic!("{e}"));
        let pictures = media::frame_count(&media::dir().join(clip.file));
        assert!(
            ours.len() >= pictures,
            "{name}: {} OUTPUT buffers for {pictures} pictures",
            ours.len()
        );
        let differences = visl_bitstream::differences(name, &ours, &theirs);
        assert!(differences.is_empty(), "{}", differences.join("\n"));
        eprintln!("{name}: {} OUTPUT buffers equal GStreamer's", ours.len());
    }
}
