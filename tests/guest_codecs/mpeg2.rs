//! MPEG-2's own checks (the generic ones are in oracle_checks.rs and
//! playback_checks.rs): on the host, the requests of the real clips and a
//! corrupted copy's recoverable errors; in the guest, the corrupted copy
//! plays on and MPEG-1 is refused clearly.

use std::path::{Path, PathBuf};

use crate::boot::{self, GuestCall, SAVE_DIR};
use crate::row_runs::{V4L2_FRAMEMD5, V4L2_NULL};
use crate::rows::{rows_of, Codec};
use crate::support::oracle::{self, OracleClip};
use crate::support::reel_runs::{self, traced_decode};
use crate::support::visl_trace::FrameRecord;
use crate::support::{self, media};

const CORRUPTED: &str = "mpeg2-corrupted";
const MPEG1: &str = "mpeg2-mpeg1";

/// MPEG-2's own runs: the corrupted copy, an MPEG-1 file.
pub fn guest_calls() -> Vec<GuestCall> {
    let media = media::dir();
    let corrupted = traced_decode(CORRUPTED, &V4L2_FRAMEMD5, &corrupted_clip(media));
    let mpeg1 = traced_decode(MPEG1, &V4L2_NULL, &media.join("mpeg1.mpg"));
    vec![
        GuestCall::new(CORRUPTED, corrupted),
        GuestCall::new(MPEG1, mpeg1),
    ]
}

/// OUTPUT buffers (requests) per frame of the clip named `name`: two for
/// a clip of field pictures.
pub fn requests_per_frame(name: &str) -> usize {
    if name == "mpeg2_fields" {
        2
    } else {
        1
    }
}

/// The MPEG-2 clips GStreamer's oracle covers.
fn mpeg2_clips() -> Vec<&'static OracleClip> {
    rows_of(Codec::Mpeg2)
        .filter_map(|row| oracle::clip(row.name))
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

/// reel's sequence control as GStreamer 1.22 fills it. Two fields differ
/// from the uAPI there, and reel follows the uAPI: GStreamer sends
/// `vbv_buffer_size` in bits (the uAPI: in units of 16 kbit, the bits being
/// 16 * 1024 times it) and builds `profile_and_level_indication` as
/// `profile << 4 | level << 1 | escape` (the uAPI: the 8-bit syntax element,
/// `escape << 7 | profile << 4 | level`). No driver reads either field.
pub fn as_gstreamer_sends_it(frames: &mut [FrameRecord]) {
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
        let per_frame = requests_per_frame(clip.name);
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
fn corrupted_copy_plays_on() {
    let (rc, log, out) = reel_runs::outcome(boot::result(), CORRUPTED);
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
    let (_, whole) = reel_runs::successful(boot::result(), "md5a-mpeg2_matrices");
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
    let (rc, log, _) = reel_runs::outcome(boot::result(), MPEG1);
    assert_ne!(rc, 0, "{log}");
    assert!(!log.contains("panicked"), "{log}");
    assert!(
        log.contains("mpeg1video"),
        "the refusal names the codec:\n{log}"
    );
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
