//! Raw FWHT streams, which FFmpeg cannot demux: reel's reader indexes the
//! frame headers, hands out one packet per frame at 25 fps, seeks to the I
//! frame at or before a target, skips damage, and the software path
//! decodes it as vicodec does.
//!
//! The streams are made here: real headers (as vicodec's encoder writes
//! them) around payload bytes the reader does not look into.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use reel::media::{Codec, Demuxer, MediaError, Packet, StreamKind};

const MAGIC: [u8; 8] = [0x4f, 0x4f, 0x4f, 0x4f, 0xff, 0xff, 0xff, 0xff];

/// One frame: a 4:2:0 Y'CbCr header of `width`x`height` and `payload_len`
/// bytes of payload (which never hold the magic).
fn frame(width: u32, height: u32, intra: bool, payload_len: usize, seed: u8) -> Vec<u8> {
    let flags = 0x80000 | (2 << 16) | if intra { 0x400 } else { 0 };
    let mut out = MAGIC.to_vec();
    for word in [3, width, height, flags, 3, 0, 0, 0, payload_len as u32] {
        out.extend_from_slice(&word.to_be_bytes());
    }
    out.extend((0..payload_len).map(|i| (i as u8).wrapping_mul(7).wrapping_add(seed) & 0x7f));
    out
}

/// `pattern` as frames ('I' or 'P'), each with a payload of its own length.
fn stream(pattern: &str) -> Vec<Vec<u8>> {
    pattern
        .bytes()
        .enumerate()
        .map(|(i, kind)| frame(640, 360, kind == b'I', 100 + i, i as u8))
        .collect()
}

fn write(name: &str, bytes: &[u8]) -> PathBuf {
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::write(&path, bytes).expect("write the stream");
    path
}

fn all_packets(demuxer: &mut Demuxer) -> Vec<Packet> {
    let mut out = Vec::new();
    while let Some(packet) = demuxer.next_packet().expect("read") {
        out.push(packet);
    }
    out
}

#[test]
fn frames_are_packets_at_25_fps() {
    let frames = stream("IPPIPPP");
    let path = write("clean.fwht", &frames.concat());
    let mut demuxer = Demuxer::open(&path).expect("open");
    let info = demuxer.stream().clone();
    assert_eq!(info.codec, Codec::Fwht);
    assert_eq!((info.width, info.height), (640, 360));
    assert_eq!(info.time_base, (1, 25));
    assert_eq!(info.frame_rate, Some((25, 1)));
    assert_eq!(info.duration, Some(Duration::from_millis(280)));
    let streams = demuxer.streams();
    assert_eq!(streams.len(), 1);
    assert_eq!(streams[0].kind, StreamKind::Video);
    assert!(demuxer.enable_stream(1).is_err());

    let packets = all_packets(&mut demuxer);
    assert_eq!(packets.len(), frames.len());
    for (i, (packet, bytes)) in packets.iter().zip(&frames).enumerate() {
        assert_eq!(&packet.data, bytes, "frame {i} is handed out whole");
        assert_eq!(packet.pts, Some(i as i64));
        assert_eq!(packet.duration, 1);
        assert_eq!(packet.keyframe, i == 0 || i == 3, "frame {i}");
        assert!(!packet.corrupt);
    }
}

#[test]
fn seeks_land_on_the_i_frame_at_or_before_the_target() {
    let path = write("seek.fwht", &stream("IPPIPPPIP").concat());
    let mut demuxer = Demuxer::open(&path).expect("open");
    let next_pts = |demuxer: &mut Demuxer, target_ms: u64| {
        demuxer
            .seek(Duration::from_millis(target_ms))
            .expect("seek");
        demuxer
            .next_packet()
            .expect("read")
            .map(|p| (p.pts, p.keyframe))
    };
    // Frame n is at n x 40 ms.
    assert_eq!(next_pts(&mut demuxer, 200), Some((Some(3), true)));
    assert_eq!(next_pts(&mut demuxer, 119), Some((Some(0), true)));
    assert_eq!(next_pts(&mut demuxer, 120), Some((Some(3), true)));
    assert_eq!(next_pts(&mut demuxer, 280), Some((Some(7), true)));
    assert_eq!(next_pts(&mut demuxer, 60_000), Some((Some(7), true)));
    assert_eq!(next_pts(&mut demuxer, 0), Some((Some(0), true)));
    // Reading goes on from the landing frame.
    assert_eq!(
        demuxer.next_packet().expect("read").and_then(|p| p.pts),
        Some(1)
    );
}

#[test]
fn damage_is_skipped_up_to_the_next_i_frame() {
    let frames = stream("IPPIPPIP");
    let mut bytes = frames[..2].concat();
    // A P frame whose header is damaged, garbage, then the rest.
    let mut damaged = frames[2].clone();
    damaged[12] = 0xff; // width far beyond the limit
    bytes.extend_from_slice(&damaged);
    bytes.extend_from_slice(&[0x11; 37]);
    bytes.extend_from_slice(&frames[3..6].concat());
    bytes.extend_from_slice(&[0x4f; 20]); // half a magic, then damage
    bytes.extend_from_slice(&frames[6..].concat());
    // A last frame cut short.
    bytes.extend_from_slice(&frame(640, 360, false, 500, 1)[..300]);
    let path = write("damaged.fwht", &bytes);
    let mut demuxer = Demuxer::open(&path).expect("open");
    let packets = all_packets(&mut demuxer);
    let got: Vec<&[u8]> = packets.iter().map(|p| &p.data[..]).collect();
    // Frames 4 and 5 follow frame 3 without damage between; frame 7 is
    // the P frame after the I frame that follows the second damage.
    let want: Vec<&[u8]> = [0, 1, 3, 4, 5, 6, 7]
        .iter()
        .map(|&i| &frames[i][..])
        .collect();
    assert_eq!(got, want);
}

#[test]
fn p_frames_before_the_first_i_frame_are_left_out() {
    let frames = stream("PPIP");
    let path = write("late_i.fwht", &frames.concat());
    let mut demuxer = Demuxer::open(&path).expect("open");
    let packets = all_packets(&mut demuxer);
    assert_eq!(packets.len(), 2);
    assert!(packets[0].keyframe);
    assert_eq!(packets[0].data, frames[2]);
    assert_eq!(packets[0].pts, Some(0));
}

#[test]
fn a_magic_without_a_frame_is_refused() {
    let mut bytes = MAGIC.to_vec();
    bytes.extend_from_slice(&[0; 20]);
    let path = write("no_frame.fwht", &bytes);
    match Demuxer::open(&path) {
        Err(MediaError::Open(message)) => {
            assert!(message.contains("no complete FWHT frame"), "{message}")
        }
        other => panic!("opened a stream with no frame: {other:?}"),
    }
}

#[test]
fn software_decoding_plays_fwht_as_vicodec_decodes_it() {
    // The fixture's frames as vicodec's stateful decoder decoded them
    // (tests/data/fwht/README.md).
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fwht/i_p_648x372.fwht");
    let reference = [
        "648ebf1f31c818142b9fd28d14ab77aa",
        "c418d961529626811d4b4469e5a79721",
    ];
    let out = Command::new(env!("CARGO_BIN_EXE_reel"))
        .args(["--hwdec=no", "--output", "framemd5"])
        .arg(&fixture)
        .output()
        .expect("run reel");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let md5s: Vec<&str> = stdout
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.rsplit(',').next().map(str::trim))
        .collect();
    assert_eq!(md5s, reference, "{stdout}");
    // A stream whose payloads are not FWHT data: every frame fails to
    // decode, and reel says so rather than crash.
    let path = write("software.fwht", &stream("IPP").concat());
    let out = Command::new(env!("CARGO_BIN_EXE_reel"))
        .args(["--hwdec=no", "--output", "framemd5"])
        .arg(&path)
        .output()
        .expect("run reel");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stderr.contains("FWHT plane"), "no reason given:\n{stderr}");
}
