//! H.264's own checks (the generic ones are in oracle_checks.rs and
//! playback_checks.rs): truncated and corrupted files (bounded time, no
//! panic, errors logged, decoding resumes at the next IDR), the decoder
//! chosen as asked and the fallback to software, `reel check` on visl
//! (a difference from frame 0, no crash), and on the host the
//! requests H264Codec makes in each decode mode and start-code setting.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::boot::{self, GuestCall, SAVE_DIR};
use crate::row_runs::{V4L2_FRAMEMD5, V4L2_NULL};
use crate::support::reel_runs::{self, traced_decode};
use crate::support::visl_trace::{self, FrameRecord};
use crate::support::vm::ScriptCall;
use crate::support::{self, media};

/// Two segments, each starting with an IDR: damage in the first must not
/// stop the second from decoding.
const CORRUPTED_SOURCE: &str = "h264_resolution_change.ts";

/// The runs of the damaged files.
const TRUNCATED: &str = "h264-truncated";
const CORRUPTED: &str = "h264-corrupted";

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
    let path = support::target_dir()
        .join(SAVE_DIR)
        .join("h264_corrupted.ts");
    std::fs::create_dir_all(path.parent().expect("has a parent")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(&path, data).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    path
}

/// An H.264 clip below visl's smallest size (64x64), made with FFmpeg.
fn too_small_clip() -> PathBuf {
    let path = support::target_dir().join(SAVE_DIR).join("h264_48x48.mp4");
    std::fs::create_dir_all(path.parent().expect("has a parent")).unwrap_or_else(|e| panic!("{e}"));
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

fn outcome(name: &str) -> (i32, String, String) {
    reel_runs::outcome(boot::result(), name)
}

fn successful(name: &str) -> (String, String) {
    reel_runs::successful(boot::result(), name)
}

/// H.264's own runs: the damaged files; choosing the decoder: by default
/// (auto), forced software, a named node, a node that is no decoder, a
/// clip below visl's smallest size.
pub fn guest_calls() -> Vec<GuestCall> {
    let media = media::dir();
    let baseline = media.join("h264_baseline.mp4");
    let small = too_small_clip();
    let null = ["--output", "null"];
    let software = ["--hwdec", "no", "--output", "null"];
    let device = |node| ["--hwdec", "v4l2", "--device", node, "--output", "null"];
    let runs: [(&str, &[&str], PathBuf); 9] = [
        (TRUNCATED, &V4L2_FRAMEMD5, media.join("truncated.mkv")),
        (CORRUPTED, &V4L2_FRAMEMD5, corrupted_clip(media)),
        ("h264-auto", &null, baseline.clone()),
        ("h264-software", &software, baseline.clone()),
        ("h264-device", &device("/dev/video0"), baseline.clone()),
        ("h264-not-a-decoder", &device("/dev/zero"), baseline.clone()),
        ("h264-vp9-v4l2", &V4L2_NULL, media.join("vp9.webm")),
        ("h264-small-auto", &null, small.clone()),
        ("h264-small-v4l2", &V4L2_NULL, small),
    ];
    let mut calls: Vec<GuestCall> = runs
        .into_iter()
        .map(|(name, options, file)| GuestCall::new(name, traced_decode(name, options, &file)))
        .collect();
    calls.push(GuestCall::new(
        CHECK,
        ScriptCall::new("reel-check.sh")
            .arg(env!("CARGO_BIN_EXE_reel"))
            .arg(CHECK)
            .arg(&baseline)
            .arg("-v"),
    ));
    calls
}

/// `reel check` on visl (tests/vm/guest/reel-check.sh): visl draws a test
/// pattern, so every frame differs from the software decode.
const CHECK: &str = "h264-check";

/// The oracle's slice-based frames as frame-based decoding sends them: one
/// run per picture, no slice parameters or prediction weights (the driver
/// parses the slices), controls of later slices dropped.
pub fn per_frame(frames: &[FrameRecord]) -> Vec<FrameRecord> {
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

/// Frames (decode order) the trace holds requests for, and IDR positions.
fn traced_frames(name: &str) -> (usize, Vec<usize>) {
    let trace = boot::result()
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
    let (rc, log, out) = outcome(TRUNCATED);
    assert_ne!(rc, 124, "timed out:\n{log}");
    assert!(!log.contains("panicked"), "{log}");
    assert!(
        log.contains("decoder: V4L2 stateless"),
        "not decoded through V4L2:\n{log}"
    );
    let frames = reel_runs::framemd5_lines(&out).len();
    assert!(frames > 0, "no frame out of the truncated file:\n{log}");
    let (traced, _) = traced_frames(TRUNCATED);
    assert!(traced >= frames, "{traced} requests for {frames} frames");
}

#[test]
fn corrupted_file_resumes_at_the_next_idr() {
    let (rc, log, out) = outcome(CORRUPTED);
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
    let (traced, idrs) = traced_frames(CORRUPTED);
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
    successful("h264-auto");
    successful("h264-device");
    let (rc, log, _) = outcome("h264-software");
    assert_eq!(rc, 0, "{log}");
    assert_eq!(
        reel_runs::stats_decoder("h264-software", &log),
        "software",
        "--hwdec=no must decode in software:\n{log}"
    );
    // A node that is no decoder: the error names it; no fallback.
    let (rc, log, _) = outcome("h264-not-a-decoder");
    assert_ne!(rc, 0, "{log}");
    assert!(log.contains("/dev/zero"), "{log}");
    assert!(log.contains("--hwdec=v4l2"), "{log}");
    // VP9 with --hwdec=v4l2 follows the codec registry: decoded through
    // visl (which offers VP9F) once reel has a VP9 path, else refused
    // saying there is none.
    if reel::v4l2::registry::lookup(reel::media::Codec::Vp9).is_some() {
        successful("h264-vp9-v4l2");
    } else {
        let (rc, log, _) = outcome("h264-vp9-v4l2");
        assert_ne!(rc, 0, "{log}");
        assert!(log.contains("no V4L2 path for"), "{log}");
    }
    // Below visl's smallest size: auto says why (naming the device and the
    // size) and decodes in software; --hwdec=v4l2 fails with that reason.
    let reason = "/dev/video0: 48x48 is outside the decoder's sizes";
    let (rc, log, _) = outcome("h264-small-auto");
    assert_eq!(rc, 0, "{log}");
    assert_eq!(
        log.matches("decoder: software, not V4L2:").count(),
        1,
        "{log}"
    );
    assert!(log.contains(reason), "{log}");
    assert_eq!(
        reel_runs::stats_decoder("h264-small-auto", &log),
        "software",
        "{log}"
    );
    let (rc, log, _) = outcome("h264-small-v4l2");
    assert_ne!(rc, 0, "{log}");
    assert!(
        log.contains("--hwdec=v4l2") && log.contains(reason),
        "{log}"
    );
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

/// One H.264 picture as visl received it: (IDR period, picture order
/// count, whether it is a reference), from its decode parameters.
fn traced_pictures(name: &str) -> Vec<(usize, i64, bool)> {
    let trace = boot::result()
        .read_result(&format!("{name}.trace"))
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let events = visl_trace::parse_events(&trace).unwrap_or_else(|e| panic!("{name}: {e}"));
    let runs = visl_trace::decode_runs(&events).unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut period = 0;
    runs.iter()
        .filter_map(|run| {
            run.events
                .iter()
                .find(|e| e.name == "v4l2_ctrl_h264_decode_params")
        })
        .enumerate()
        .map(|(i, params)| {
            let int = |key: &str| -> i64 {
                params
                    .field(key)
                    .and_then(|v| v.trim().parse().ok())
                    .unwrap_or_else(|| panic!("{name}: picture {i}: no {key}"))
            };
            let flags = params.field("flags").unwrap_or("");
            assert!(!flags.contains("FIELD_PIC"), "{name}: a frame clip");
            if flags.contains("IDR_PIC") && i > 0 {
                period += 1;
            }
            let poc = int("top_field_order_cnt").min(int("bottom_field_order_cnt"));
            (period, poc, int("nal_ref_idc") != 0)
        })
        .collect()
}

/// An exact seek asks visl for the reference pictures before its target
/// and every picture from the target on, and for no non-reference
/// picture before the target: the full decode's pictures in display
/// order, less the non-references among those before the frames the seek
/// put out.
#[test]
fn an_exact_seek_queues_no_request_for_a_non_reference_before_its_target() {
    boot::boot();
    let row = crate::rows::ROWS
        .iter()
        .find(|r| r.name == "h264_main_bframes")
        .expect("the row");
    let (_, out) = reel_runs::successful(boot::result(), &crate::row_runs::seek_run(row));
    let shown = reel_runs::framemd5_lines(&out).len();
    let mut full = traced_pictures(&crate::row_runs::trace_run(row));
    full.sort_unstable();
    assert!(
        shown > 0 && shown < full.len(),
        "{shown} of {} frames shown",
        full.len()
    );
    let (before, from_target) = full.split_at(full.len() - shown);
    assert!(
        before.iter().any(|p| !p.2),
        "no non-reference picture before the target: the check would prove nothing"
    );
    let mut expected: Vec<(usize, i64, bool)> = before
        .iter()
        .filter(|p| p.2)
        .chain(from_target)
        .copied()
        .collect();
    expected.sort_unstable();
    let mut seek = traced_pictures(&crate::row_runs::seek_run(row));
    seek.sort_unstable();
    assert_eq!(
        seek, expected,
        "pictures decoded for the seek (IDR period, POC, reference)"
    );
}

/// `reel check` on visl reports the mismatch honestly: a difference from
/// frame 0 on (visl's pictures are a test pattern), every frame of the
/// clip compared, exit 1, no crash, in bounded time.
#[test]
fn reel_check_on_visl_reports_a_difference_from_frame_0() {
    let result = boot::result();
    let read = |suffix: &str| {
        result
            .read_result(&format!("{CHECK}.check{suffix}"))
            .unwrap_or_default()
    };
    let (out, log) = (read(""), read(".log"));
    let context = format!("{CHECK}: status {}\n{out}\nstderr:\n{log}", read(".rc"));
    assert_eq!(read(".rc").trim(), "1", "{context}");
    assert!(!log.contains("panicked"), "{context}");
    let seconds: u64 = read(".seconds").trim().parse().unwrap_or(u64::MAX);
    assert!(seconds < 60, "{seconds} s: {context}");
    let frames: Vec<&str> = out.lines().filter(|l| l.starts_with("frame=")).collect();
    let first = frames
        .first()
        .unwrap_or_else(|| panic!("no frame: {context}"));
    assert!(
        first.starts_with("frame=0 ") && first.contains(" differ"),
        "{context}"
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with("first differing frame: frame=0 ") && l.contains("type=")),
        "{context}"
    );
    // -v: the first frame's requests, as sent.
    assert!(
        out.lines()
            .any(|l| l.trim_start().starts_with("request ts=")),
        "{context}"
    );
    let clip = crate::support::oracle::clip("h264_baseline").expect("known clip");
    let want =
        crate::support::oracle::ffmpeg_frame_count(clip, media::dir()).expect("ffmpeg counts");
    assert_eq!(frames.len(), want, "{context}");
}
