//! MPEG-2 through reel's V4L2 stateless path, in the QEMU guest with visl,
//! against GStreamer 1.22's `v4l2slmpeg2dec` (host root) on the same clips
//! (the oracle stored by `support::oracle`):
//! - the normalised visl traces match frame by frame (sequence, picture
//!   and quantisation controls, references by frame);
//! - the OUTPUT buffers hold the same bytes as GStreamer's (the size and
//!   sha256 of each, stored with the oracle);
//! - `--output framemd5`: FFmpeg's frame count, increasing pts, the same
//!   output twice; `--start` lands on the frame shown at the target;
//! - a corrupted copy plays on without a panic; MPEG-1 is refused;
//!   `reel probe` lists the MPEG-2 decoder;
//! - 24 damaged copies of a clip (support::damage; all 200 go through the
//!   software path in tests/damage_software.rs): no panic, no hang, the
//!   exit status README documents, every picture from the first I picture
//!   after the damage on (leading B pictures excepted) output.
//!
//! Every guest run happens in one boot; each test checks its part. The
//! first test runs on the host: the requests of the real clips.

mod support;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use support::damage::{self, DamageRuns};
use support::oracle::{self, OracleClip};
use support::reel_runs::{self, traced_decode};
use support::visl_bitstream;
use support::visl_trace::{self, FrameRecord};
use support::vm::{Guest, GuestCommand, GuestResult, ScriptCall};
use support::{media, reel_output, weston_log};

const SAVE_DIR: &str = "guest-mpeg2";

/// Where the seek test starts mpeg2_matrices (30 fps, 30 frames, a key
/// frame every 12).
const SEEK_SECONDS: f64 = 0.5;

/// OUTPUT buffers (requests) per frame: two for a clip of field pictures.
fn requests_per_frame(clip: &OracleClip) -> usize {
    if clip.name == "mpeg2_fields" {
        2
    } else {
        1
    }
}

/// The MPEG-2 clips GStreamer's oracle covers.
fn mpeg2_clips() -> Vec<&'static OracleClip> {
    oracle::CLIPS
        .iter()
        .filter(|c| c.element == "v4l2slmpeg2dec")
        .collect()
}

/// A copy of mpeg2_matrices.ts whose video is damaged a quarter in: the
/// first transport packet of 6 consecutive pictures (each starts a PES)
/// has its elementary stream bytes, the picture's headers, overwritten
/// with noise; adaptation fields and PES headers are kept, so that the
/// demuxer passes the damaged pictures on.
fn corrupted_clip(media: &Path) -> PathBuf {
    const TS_PACKET: usize = 188;
    let source = media.join("mpeg2_matrices.ts");
    let mut data = std::fs::read(&source).unwrap_or_else(|e| panic!("{}: {e}", source.display()));
    let first = data.len() / 4 / TS_PACKET;
    let mut noise = 0x9e37_79b9_u32;
    let mut damaged = 0;
    for packet in data.chunks_mut(TS_PACKET).skip(first) {
        assert_eq!(packet[0], 0x47, "not a transport packet boundary");
        let pes_start = packet[1] & 0x40 != 0;
        let payload = match packet[3] & 0x30 {
            0x10 => 4,
            0x30 => 5 + usize::from(packet[4]),
            _ => continue,
        };
        // A video PES (stream id 0xe0..=0xef; tables start sections, not
        // PES); its header's length is at its byte 8.
        let video_pes = pes_start
            && packet
                .get(payload..payload + 4)
                .is_some_and(|p| p[..3] == [0, 0, 1] && p[3] & 0xf0 == 0xe0);
        let Some(from) = packet
            .get(payload + 8)
            .filter(|_| video_pes)
            .map(|&length| payload + 9 + usize::from(length))
        else {
            continue;
        };
        for byte in packet.iter_mut().skip(from) {
            noise ^= noise << 13;
            noise ^= noise >> 17;
            noise ^= noise << 5;
            *byte = noise as u8;
        }
        damaged += 1;
        if damaged == 6 {
            break;
        }
    }
    assert_eq!(damaged, 6, "{}: too few pictures", source.display());
    let path = support::target_dir()
        .join(SAVE_DIR)
        .join("mpeg2_corrupted.ts");
    std::fs::create_dir_all(path.parent().expect("has a parent")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(&path, data).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    path
}

/// The first damaged copies of support::damage's mpeg2 source, made on
/// the host, where the guest sees them too (tests/damage_software.rs runs
/// the rest through the software path).
fn damaged() -> &'static DamageRuns {
    static DAMAGED: OnceLock<DamageRuns> = OnceLock::new();
    DAMAGED.get_or_init(|| DamageRuns::for_guest(damage::source("mpeg2")))
}

fn runs() -> &'static GuestResult {
    static RUNS: OnceLock<GuestResult> = OnceLock::new();
    RUNS.get_or_init(|| {
        let media = media::dir();
        let v4l2_null = ["--hwdec", "v4l2", "--output", "null"];
        let v4l2_framemd5 = ["--hwdec", "v4l2", "--output", "framemd5"];
        let mut calls = vec![damaged().guest_call()];
        for clip in mpeg2_clips() {
            let file = media.join(clip.file);
            let name = clip.name;
            calls.push(traced_decode(&format!("trace-{name}"), &v4l2_null, &file));
            calls.extend(reel_runs::framemd5_twice(name, &file));
        }
        let seek = SEEK_SECONDS.to_string();
        calls.extend([
            traced_decode(
                "seek",
                &["--hwdec", "v4l2", "--start", &seek, "--output", "framemd5"],
                &media.join("mpeg2_matrices.ts"),
            ),
            traced_decode("corrupted", &v4l2_framemd5, &corrupted_clip(media)),
            traced_decode("mpeg1", &v4l2_null, &media.join("mpeg1.mpg")),
            traced_decode("probe", &["probe"], &media.join("mpeg2.ts")),
        ]);
        // Zero-copy in weston 14: a looping and a paused playback (the
        // script's framemd5 runs go unused here).
        calls.push(
            ScriptCall::new("fwht-play.sh")
                .arg(env!("CARGO_BIN_EXE_reel"))
                .arg("weston-mpeg2")
                .arg(media.join("mpeg2_matrices.ts"))
                .args(["320x240", &seek, "play"]),
        );
        // Last (they reload visl): the OUTPUT buffers' bytes (GStreamer's
        // are stored with its oracle).
        for clip in mpeg2_clips() {
            let file = media.join(clip.file);
            calls.push(
                ScriptCall::new("visl-bitstream.sh")
                    .arg(format!("bits-reel-{}", clip.name))
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
                .label(SAVE_DIR),
        )
        .unwrap_or_else(|e| panic!("the test guest did not run: {e}"));
        result.assert_success();
        result
    })
}

/// reel's sequence control as GStreamer 1.22 fills it. Two fields differ
/// from the uAPI there, and reel follows the uAPI: GStreamer sends
/// `vbv_buffer_size` in bits (the uAPI: in units of 16 kbit, the bits being
/// 16 * 1024 times it) and builds `profile_and_level_indication` as
/// `profile << 4 | level << 1 | escape` (the uAPI: the 8-bit syntax element,
/// `escape << 7 | profile << 4 | level`). No driver reads either field.
fn as_gstreamer_sends_it(frames: &mut [FrameRecord]) {
    // The control of every request of a frame (a second field's is
    // `slice1/...`).
    let sequences = frames.iter_mut().flat_map(|frame| {
        frame
            .controls
            .iter_mut()
            .filter(|(name, _)| name.ends_with("v4l2_ctrl_mpeg2_sequence"))
            .map(|(_, fields)| fields)
    });
    for sequence in sequences {
        let number = |v: Option<&String>| v.and_then(|v| v.parse::<u64>().ok());
        if let Some(vbv) = number(sequence.get("vbv_buffer_size")) {
            sequence.insert("vbv_buffer_size".into(), (vbv * 16 * 1024).to_string());
        }
        if let Some(pli) = number(sequence.get("profile_and_level_indication")) {
            let gst = ((pli >> 4) & 7) << 4 | (pli & 0xf) << 1 | pli >> 7;
            sequence.insert("profile_and_level_indication".into(), gst.to_string());
        }
    }
}

/// On the host: every picture of every clip becomes one request with the
/// three controls, its slices behind start codes; the two fields of a frame
/// share a timestamp, the first holding the CAPTURE buffer.
#[test]
fn requests_of_the_real_clips() {
    use reel::v4l2::codec::{Bitstream, StatelessCodec, Timestamps};
    use reel::v4l2::mpeg2::Mpeg2Codec;
    use v4l2r::bindings as b;

    for clip in mpeg2_clips() {
        let path = media::dir().join(clip.file);
        let mut codec = Mpeg2Codec::new(true);
        let mut demuxer = reel::media::Demuxer::open(&path).unwrap_or_else(|e| panic!("{e}"));
        let mut timestamps = Timestamps::new();
        let mut requests = Vec::new();
        let mut shown = Vec::new();
        while let Some(packet) = demuxer.next_packet().unwrap_or_else(|e| panic!("{e}")) {
            timestamps.start_packet();
            for request in codec
                .decode(&packet.data, &mut timestamps)
                .unwrap_or_else(|e| panic!("{}: {e}", clip.name))
            {
                let ids: Vec<u32> = request.controls.iter().map(|c| c.id).collect();
                assert_eq!(
                    ids,
                    [
                        b::V4L2_CID_STATELESS_MPEG2_SEQUENCE,
                        b::V4L2_CID_STATELESS_MPEG2_PICTURE,
                        b::V4L2_CID_STATELESS_MPEG2_QUANTISATION
                    ]
                );
                let bytes = Bitstream::new(&packet.data, &request.bitstream).to_vec();
                assert_eq!(&bytes[..4], &[0, 0, 1, 1], "{}: first slice", clip.name);
                requests.push((request.timestamp_ns, request.hold_capture));
            }
            shown.extend(codec.take_output(false).iter().map(|p| p.packet));
        }
        shown.extend(codec.take_output(true).iter().map(|p| p.packet));
        let pictures = media::frame_count(&path);
        let per_frame = requests_per_frame(clip);
        assert_eq!(requests.len(), pictures * per_frame, "{}", clip.name);
        for (i, frame) in requests.chunks(per_frame).enumerate() {
            assert!(
                frame.iter().all(|r| r.0 == frame[0].0),
                "{}: frame {i}",
                clip.name
            );
            let holds: Vec<bool> = frame.iter().map(|r| r.1).collect();
            let mut expected = vec![true; per_frame - 1];
            expected.push(false);
            assert_eq!(holds, expected, "{}: frame {i}", clip.name);
        }
        assert_eq!(shown.len(), pictures, "{}", clip.name);
    }
}

#[test]
fn traces_match_gstreamer() {
    let mut failures = Vec::new();
    for clip in mpeg2_clips() {
        let oracle = oracle::oracle_frames(clip).unwrap_or_else(|e| panic!("{e}"));
        let mut reel = reel_runs::reel_frames(runs(), &format!("trace-{}", clip.name), SAVE_DIR);
        assert_eq!(reel.len(), oracle.len(), "{}: pictures traced", clip.name);
        as_gstreamer_sends_it(&mut reel);
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
            let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{e}"));
            (n, bytes)
        })
        .collect();
    numbered.sort_by_key(|(n, _)| *n);
    numbered.into_iter().map(|(_, bytes)| bytes).collect()
}

#[test]
fn output_buffer_bytes_equal_gstreamers() {
    for clip in mpeg2_clips() {
        let name = clip.name;
        let ours = output_buffers(&format!("bits-reel-{name}"));
        let theirs = oracle::oracle_output_digests(clip).unwrap_or_else(|e| panic!("{e}"));
        let pictures = media::frame_count(&media::dir().join(clip.file));
        assert_eq!(
            ours.len(),
            pictures * requests_per_frame(clip),
            "{name}: OUTPUT buffers"
        );
        let differences = visl_bitstream::differences(name, &ours, &theirs);
        assert!(differences.is_empty(), "{}", differences.join("\n"));
        eprintln!("{name}: {} OUTPUT buffers equal GStreamer's", ours.len());
    }
}

#[test]
fn framemd5_in_display_order_and_deterministic() {
    for clip in mpeg2_clips() {
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
    let (_, full) = reel_runs::successful(runs(), "md5a-mpeg2_matrices");
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
fn corrupted_copy_plays_on() {
    let (rc, log, out) = reel_runs::outcome(runs(), "corrupted");
    assert_ne!(rc, 124, "timed out:\n{log}");
    assert!(!log.contains("panicked"), "{log}");
    assert!(
        log.contains("decoder: V4L2 stateless"),
        "not decoded through V4L2:\n{log}"
    );
    // The damaged headers are errors the decoder counts and skips.
    let errors: u64 = log
        .lines()
        .find_map(|l| l.split_whitespace().find_map(|f| f.strip_prefix("errors=")))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no error count:\n{log}"));
    assert!(errors > 0, "the damage went unnoticed:\n{log}");
    // Damaged pictures are dropped (with what predicts from them) and
    // decoding resumes at the next I picture: the clip's last frames come
    // out as in the undamaged run (their pts: visl's pictures carry its
    // own frame counter).
    let total = media::frame_count(&media::dir().join("mpeg2_matrices.ts"));
    let frames = reel_runs::framemd5_lines(&out);
    assert!(
        frames.len() < total,
        "{} frames of {total}:\n{log}",
        frames.len()
    );
    let (_, whole) = reel_runs::successful(runs(), "md5a-mpeg2_matrices");
    let whole = reel_runs::framemd5_lines(&whole);
    assert_eq!(
        frames.iter().rev().take(6).map(|f| f.0).collect::<Vec<_>>(),
        whole.iter().rev().take(6).map(|f| f.0).collect::<Vec<_>>(),
        "{log}"
    );
    assert!(frames.windows(2).all(|w| w[0].0 < w[1].0), "{log}");
}

#[test]
fn mpeg1_is_refused_clearly() {
    let (rc, log, _) = reel_runs::outcome(runs(), "mpeg1");
    assert_ne!(rc, 0, "{log}");
    assert!(!log.contains("panicked"), "{log}");
    assert!(
        log.contains("mpeg1video"),
        "the refusal names the codec:\n{log}"
    );
}

#[test]
fn probe_lists_the_mpeg2_decoder() {
    let (rc, log, out) = reel_runs::outcome(runs(), "probe");
    assert_eq!(rc, 0, "{log}\n{out}");
    for expected in ["MG2S", "reel decodes mpeg2video here (MG2S)"] {
        assert!(out.contains(expected), "probe lacks {expected:?}:\n{out}");
    }
}

#[test]
fn weston_playback_is_zero_copy() {
    let read = |name: &str| runs().read_result(name).unwrap_or_default();
    for play in ["weston-mpeg2-loop", "weston-mpeg2-paused"] {
        let log = read(&format!("{play}.log"));
        assert_eq!(
            read(&format!("{play}.rc")).trim(),
            "0",
            "{play}: reel failed:\n{log}"
        );
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
        let weston = read(&format!("weston-{play}.log"));
        let imports = weston
            .lines()
            .filter(|l| l.contains("rq zwp_linux_buffer_params_v1") && l.contains(".add("))
            .count();
        assert!(imports > 0, "{play}: no dmabuf import in weston's log");
        let errors = weston_log::protocol_errors(&weston);
        assert!(errors.is_empty(), "{play}: protocol errors: {errors:#?}");
    }
}

/// On the host: the corrupted copy's damage reaches the codec as errors it
/// recovers from (no refusal), and pictures decode again after it.
#[test]
fn corrupted_copy_gives_recoverable_errors() {
    use reel::v4l2::codec::{StatelessCodec, Timestamps};
    use reel::v4l2::mpeg2::Mpeg2Codec;

    let path = corrupted_clip(media::dir());
    let mut codec = Mpeg2Codec::new(true);
    let mut demuxer = reel::media::Demuxer::open(&path).unwrap_or_else(|e| panic!("{e}"));
    let mut timestamps = Timestamps::new();
    let (mut errors, mut requests_after_error) = (0, 0);
    while let Some(packet) = demuxer.next_packet().unwrap_or_else(|e| panic!("{e}")) {
        timestamps.start_packet();
        match codec.decode(&packet.data, &mut timestamps) {
            Ok(requests) if errors > 0 => requests_after_error += requests.len(),
            Ok(_) => {}
            Err(e) => {
                assert!(e.is_recoverable(), "{e}");
                errors += 1;
            }
        }
    }
    assert!(errors > 0, "the damage went unnoticed");
    assert!(requests_after_error > 0, "nothing decoded after the damage");
    eprintln!("{errors} damaged packets, {requests_after_error} requests after the first");
}

#[test]
fn damaged_copies_recover_at_the_next_key_frame() {
    damaged().assert_recovered(runs());
}
