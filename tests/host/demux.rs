//! The demuxer against ffmpeg/ffprobe as oracles: Annex-B output carries the
//! same NAL units as ffmpeg's `*_mp4toannexb` bitstream filters, parameter
//! sets precede every keyframe, and a seek lands on the keyframe ffprobe
//! lists at or before the target.

use crate::support;
use support::media::{self, clip};

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use reel::codec::bitstream::annexb::nal_units;
use reel::media::{duration_to_ts, Codec, Demuxer, MediaError, Packet, StreamKind};

fn all_packets(demuxer: &mut Demuxer) -> Vec<Packet> {
    let mut packets = Vec::new();
    while let Some(p) = demuxer.next_packet().expect("read packet") {
        packets.push(p);
    }
    packets
}

fn nal_type(codec: Codec, header: u8) -> u8 {
    match codec {
        Codec::Hevc => (header >> 1) & 0x3f,
        _ => header & 0x1f,
    }
}

fn is_parameter_set(codec: Codec, t: u8) -> bool {
    match codec {
        Codec::Hevc => (32..=34).contains(&t),
        _ => matches!(t, 7 | 8 | 13),
    }
}

fn is_vcl(codec: Codec, t: u8) -> bool {
    match codec {
        Codec::Hevc => t < 32,
        _ => (1..=5).contains(&t),
    }
}

/// ffmpeg's own AVCC/HVCC to Annex-B conversion of the whole stream.
fn ffmpeg_annexb(path: &Path, codec: Codec) -> Vec<u8> {
    let (bsf, format) = match codec {
        Codec::Hevc => ("hevc_mp4toannexb", "hevc"),
        _ => ("h264_mp4toannexb", "h264"),
    };
    let out = Command::new("ffmpeg")
        .args(["-nostdin", "-hide_banner", "-loglevel", "error", "-i"])
        .arg(path)
        .args([
            "-map", "0:v:0", "-c:v", "copy", "-bsf:v", bsf, "-f", format, "-",
        ])
        .output()
        .expect("run ffmpeg");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn check_annexb(name: &str) {
    let path = clip(name);
    let mut demuxer = Demuxer::open(&path).expect("open");
    let codec = demuxer.stream().codec;
    let packets = all_packets(&mut demuxer);
    assert!(!packets.is_empty());

    // Every keyframe carries its parameter sets before its first slice.
    for p in packets.iter().filter(|p| p.keyframe) {
        let types: Vec<u8> = nal_units(&p.data).map(|n| nal_type(codec, n[0])).collect();
        let first_vcl = types
            .iter()
            .position(|&t| is_vcl(codec, t))
            .expect("keyframe without a slice");
        let needed: &[u8] = match codec {
            Codec::Hevc => &[32, 33, 34],
            _ => &[7, 8],
        };
        for t in needed {
            assert!(
                types[..first_vcl].contains(t),
                "{name}: keyframe at pts {:?} lacks NAL type {t} (has {types:?})",
                p.pts
            );
        }
    }

    // Outside parameter sets, the same NAL units in the same order as ffmpeg.
    let ours: Vec<u8> = packets.iter().flat_map(|p| p.data.to_vec()).collect();
    let theirs = ffmpeg_annexb(&path, codec);
    let slices = |data: &[u8]| -> Vec<Vec<u8>> {
        nal_units(data)
            .filter(|n| !is_parameter_set(codec, nal_type(codec, n[0])))
            .map(<[u8]>::to_vec)
            .collect()
    };
    let (a, b) = (slices(&ours), slices(&theirs));
    assert!(!b.is_empty(), "{name}: ffmpeg gave no NAL units");
    assert_eq!(a.len(), b.len(), "{name}: NAL unit count");
    assert!(a == b, "{name}: NAL units differ from ffmpeg's");
    // And the parameter sets we insert are the ones ffmpeg inserts.
    let sets = |data: &[u8]| -> std::collections::BTreeSet<Vec<u8>> {
        nal_units(data)
            .filter(|n| is_parameter_set(codec, nal_type(codec, n[0])))
            .map(<[u8]>::to_vec)
            .collect()
    };
    assert_eq!(sets(&ours), sets(&theirs), "{name}: parameter sets");
    assert_eq!(
        sets(&demuxer.stream().parameter_sets),
        sets(&theirs),
        "{name}: VideoStreamInfo::parameter_sets"
    );
}

#[test]
fn annexb_h264_mp4() {
    check_annexb("h264_baseline.mp4");
    check_annexb("h264_slices.mp4");
}

#[test]
fn annexb_h264_mkv() {
    check_annexb("h264_main_bframes.mkv");
}

#[test]
fn annexb_hevc() {
    check_annexb("hevc_main.mkv");
    check_annexb("hevc_main10.mp4");
}

/// Clips of every container and codec the stream probe treats apart: MP4
/// with the SPS in its record (the probe decodes no picture), MP4 whose
/// layout is left to the probe decoder (full range), Matroska (no parser, probe decoding kept),
/// MPEG-TS (parser and probe decoding kept).
const PROBED: [&str; 18] = [
    "h264_25fps.mp4",
    "h264_422_10bit.mp4",
    "h264_full_range.mp4",
    "h264_baseline.mp4",
    "h264_cqm_444.mp4",
    "h264_odd_size.mp4",
    "h264_scaling_matrix.mp4",
    "h264_slices.mp4",
    "h264_weighted.mp4",
    "hevc_main10.mp4",
    "h264_main_bframes.mkv",
    "h264_high10_intra.mkv",
    "hevc_main.mkv",
    "vp9_profile2.webm",
    "av1.mkv",
    "h264_high.ts",
    "mpeg2.ts",
    "vp9.webm",
];

#[test]
fn stream_info_matches_ffprobe() {
    for name in PROBED {
        let path = clip(name);
        let demuxer = Demuxer::open(&path).expect("open");
        let info = demuxer.stream();
        let out = Command::new("ffprobe")
            .args(["-v", "error", "-select_streams", "v:0", "-show_entries"])
            .arg("stream=index,codec_name,width,height,time_base,pix_fmt,start_pts,profile,level")
            .args(["-of", "default=nw=1"])
            .arg(&path)
            .output()
            .expect("run ffprobe");
        let text = String::from_utf8_lossy(&out.stdout);
        let field = |k: &str| -> String {
            text.lines()
                .find_map(|l| l.strip_prefix(&format!("{k}=")))
                .unwrap_or_else(|| panic!("ffprobe gave no {k} for {name}: {text}"))
                .to_owned()
        };
        assert_eq!(info.index.to_string(), field("index"), "{name}");
        assert_eq!(info.codec.to_string(), field("codec_name"), "{name}");
        assert_eq!(info.width.to_string(), field("width"), "{name}");
        assert_eq!(info.height.to_string(), field("height"), "{name}");
        let (n, d) = info.time_base;
        assert_eq!(format!("{n}/{d}"), field("time_base"), "{name}");
        assert_eq!(
            info.pixel_format.clone().unwrap_or_default(),
            field("pix_fmt"),
            "{name}"
        );
        assert_eq!(
            info.profile.clone().unwrap_or_else(|| "unknown".into()),
            field("profile"),
            "{name}"
        );
        // ffprobe prints -99 (FF_LEVEL_UNKNOWN) when there is none.
        let level: i32 = field("level").parse().expect("level");
        assert_eq!(info.level, (level > 0).then_some(level), "{name}");
        assert_eq!(info.start_pts.to_string(), field("start_pts"), "{name}");
        let pix_fmt = field("pix_fmt");
        let depth = ["12", "10"]
            .into_iter()
            .find(|d| pix_fmt.contains(d))
            .map_or(8, |d| d.parse().expect("depth"));
        assert_eq!(info.bit_depth, depth, "{name}");
    }
}

/// Without libavformat's parser on MP4 and Matroska video (the stream
/// probe turns it off), packets keep the timestamps, durations and key
/// flags ffprobe reads with it.
#[test]
fn video_packets_match_ffprobe() {
    let unparsed = PROBED
        .iter()
        .filter(|n| [".mp4", ".mkv", ".webm"].iter().any(|e| n.ends_with(e)));
    for name in unparsed {
        let path = clip(name);
        let mut demuxer = Demuxer::open(&path).expect("open");
        let packets = all_packets(&mut demuxer);
        let listed = ffprobe_packet_fields(&path, Some("v:0"), "pts,dts,duration,flags");
        assert_eq!(packets.len(), listed.len(), "{name}");
        for (i, (packet, fields)) in packets.iter().zip(&listed).enumerate() {
            let number = |k: usize| fields.get(k).and_then(|v| v.parse::<i64>().ok());
            assert_eq!(packet.pts, number(0), "{name} packet {i}: pts");
            assert_eq!(packet.dts, number(1), "{name} packet {i}: dts");
            assert_eq!(
                packet.duration,
                number(2).unwrap_or(0),
                "{name} packet {i}: duration"
            );
            let key = fields.get(3).is_some_and(|f| f.starts_with('K'));
            assert_eq!(packet.keyframe, key, "{name} packet {i}: key flag");
        }
    }
}

/// A clip with a keyframe every 10 frames (1/3 s) for 3 s, made with the
/// ffmpeg CLI in the test's scratch directory.
fn seek_clip(name: &str, codec_args: &[&str]) -> PathBuf {
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let status = Command::new("ffmpeg")
        .args(["-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i"])
        .arg("testsrc2=size=96x64:rate=30:duration=3")
        .args(codec_args)
        .args(["-g", "10"])
        .arg(&path)
        .status()
        .expect("run ffmpeg");
    assert!(status.success(), "making {name}");
    path
}

/// ffprobe's packet list: the `entries` of each packet (of `select`, when
/// given), in file order.
fn ffprobe_packet_fields(path: &Path, select: Option<&str>, entries: &str) -> Vec<Vec<String>> {
    let mut command = Command::new("ffprobe");
    command.args(["-v", "error"]);
    if let Some(stream) = select {
        command.args(["-select_streams", stream]);
    }
    let out = command
        .args(["-show_entries", &format!("packet={entries}")])
        .args(["-of", "csv=p=0"])
        .arg(path)
        .output()
        .expect("run ffprobe");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

/// (pts, keyframe) of every video packet, as ffprobe lists them.
fn ffprobe_packets(path: &Path) -> Vec<(i64, bool)> {
    ffprobe_packet_fields(path, Some("v:0"), "pts,flags")
        .iter()
        .filter_map(|f| Some((f.first()?.parse().ok()?, f.get(1)?.starts_with('K'))))
        .collect()
}

fn check_seeks(path: &Path) {
    let listed = ffprobe_packets(path);
    let keyframes: Vec<i64> = listed.iter().filter(|p| p.1).map(|p| p.0).collect();
    assert!(keyframes.len() >= 5, "{}: {keyframes:?}", path.display());
    let mut demuxer = Demuxer::open(path).expect("open");
    let info = demuxer.stream().clone();
    let start = info.start_time;
    // Forward, backward, exactly on a keyframe, before the start.
    for offset_ms in [1500, 400, 2600, 0, 1000, 2950, 10] {
        let target = start + Duration::from_millis(offset_ms);
        demuxer.seek(target).expect("seek");
        let packet = demuxer
            .next_packet()
            .expect("read after seek")
            .expect("a packet after seek");
        let target_ts = duration_to_ts(target, info.time_base);
        let expected = keyframes
            .iter()
            .copied()
            .filter(|&k| k <= target_ts)
            .max()
            .unwrap_or(keyframes[0]);
        assert!(
            packet.keyframe,
            "{}: seek to {target:?} landed on a non-keyframe at pts {:?}",
            path.display(),
            packet.pts
        );
        assert_eq!(
            packet.pts,
            Some(expected),
            "{}: seek to {target:?} (ts {target_ts})",
            path.display()
        );
    }
    // Before the start goes to the first keyframe.
    demuxer.seek(Duration::ZERO).expect("seek to 0");
    let first = demuxer.next_packet().expect("read").expect("packet");
    assert_eq!(first.pts, Some(keyframes[0]));
    // The rest of the file reads to the end after a seek.
    let rest = all_packets(&mut demuxer).len() + 1;
    assert_eq!(
        rest,
        listed.len(),
        "{}: packets after seek to 0",
        path.display()
    );
    // Seeking after the end of the file works (looping playback).
    let target = start + Duration::from_millis(1500);
    demuxer.seek(target).expect("seek after the end");
    let packet = demuxer.next_packet().expect("read").expect("packet");
    let target_ts = duration_to_ts(target, info.time_base);
    let expected = keyframes.iter().copied().filter(|&k| k <= target_ts).max();
    assert_eq!(
        packet.pts,
        expected,
        "{}: seek after the end",
        path.display()
    );
}

#[test]
fn seek_lands_on_the_keyframe_at_or_before_the_target() {
    check_seeks(&seek_clip(
        "seek_h264.mp4",
        &["-c:v", "libx264", "-bf", "2"],
    ));
    check_seeks(&seek_clip(
        "seek_hevc.mkv",
        &["-c:v", "libx265", "-x265-params", "log-level=error"],
    ));
    check_seeks(&seek_clip(
        "seek_vp9.webm",
        &["-c:v", "libvpx-vp9", "-deadline", "realtime"],
    ));
    check_seeks(&seek_clip("seek_h264.ts", &["-c:v", "libx264", "-bf", "2"]));
    check_seeks(&seek_clip("seek_mpeg2.ts", &["-c:v", "mpeg2video"]));
}

#[test]
fn open_errors_are_typed() {
    assert!(matches!(
        Demuxer::open(Path::new("/nonexistent/clip.mp4")),
        Err(MediaError::NotFound(_))
    ));
    assert!(matches!(
        Demuxer::open(&clip("audio_only.mka")),
        Err(MediaError::NoVideoStream(_))
    ));
    assert!(matches!(
        Demuxer::open(media::dir()),
        Err(MediaError::Open(_))
    ));
}

/// (stream index, pts) of every packet, as ffprobe lists them in file order.
fn ffprobe_all_packets(path: &Path) -> Vec<(usize, i64)> {
    ffprobe_packet_fields(path, None, "stream_index,pts")
        .iter()
        .filter_map(|f| Some((f.first()?.parse().ok()?, f.get(1)?.parse().ok()?)))
        .collect()
}

#[test]
fn other_streams_are_listed_and_handed_out_when_enabled() {
    let path = seek_clip(
        "video_and_audio.mkv",
        &[
            "-f",
            "lavfi",
            "-i",
            "sine=frequency=440:duration=3",
            "-c:v",
            "libx264",
            "-c:a",
            "libopus",
        ],
    );
    let mut demuxer = Demuxer::open(&path).expect("open");
    let video = demuxer.stream().index;
    let streams = demuxer.streams();
    assert_eq!(streams.len(), 2, "{streams:?}");
    let audio = streams
        .iter()
        .find(|s| s.kind == StreamKind::Audio)
        .unwrap_or_else(|| panic!("no audio stream in {streams:?}"));
    assert_eq!(audio.codec, "opus");
    assert!(!audio.enabled);
    assert!(streams.iter().any(|s| s.index == video && s.enabled));
    let audio = audio.index;

    // Video only by default: the same packets ffprobe lists for it.
    let video_only: Vec<Packet> = all_packets(&mut demuxer);
    assert!(video_only.iter().all(|p| p.stream_index == video));
    let listed = ffprobe_all_packets(&path);
    let listed_video: Vec<i64> = listed
        .iter()
        .filter(|p| p.0 == video)
        .map(|p| p.1)
        .collect();
    assert_eq!(
        video_only
            .iter()
            .map(|p| p.pts.unwrap_or(-1))
            .collect::<Vec<_>>(),
        listed_video
    );

    // Enabled: every packet of both streams, in file order, the video ones
    // unchanged.
    let mut demuxer = Demuxer::open(&path).expect("open");
    assert!(demuxer.enable_stream(video).is_err());
    assert!(matches!(
        demuxer.enable_stream(7),
        Err(MediaError::NoSuchStream { index: 7, .. })
    ));
    demuxer.enable_stream(audio).expect("enable audio");
    assert!(demuxer.streams().iter().all(|s| s.enabled));
    let both = all_packets(&mut demuxer);
    assert_eq!(
        both.iter()
            .map(|p| (p.stream_index, p.pts.unwrap_or(-1)))
            .collect::<Vec<_>>(),
        listed
    );
    let video_again: Vec<&Packet> = both.iter().filter(|p| p.stream_index == video).collect();
    assert_eq!(video_again.len(), video_only.len());
    assert!(video_again.iter().zip(&video_only).all(|(a, b)| *a == b));
    let audio_tb = both
        .iter()
        .find(|p| p.stream_index == audio)
        .expect("audio packets")
        .time_base;
    assert_eq!(audio_tb, (1, 1000), "Matroska time base");

    // A seek keeps the other stream from the video keyframe on.
    demuxer
        .seek(Duration::from_millis(1500))
        .expect("seek with audio enabled");
    let first = demuxer.next_packet().expect("read").expect("a packet");
    assert_eq!(first.stream_index, video);
    assert!(first.keyframe);
    let after: Vec<Packet> = all_packets(&mut demuxer);
    assert!(after.iter().any(|p| p.stream_index == audio));
    let key_pts = first.pts.expect("pts");
    assert!(
        after
            .iter()
            .filter(|p| p.stream_index == audio)
            .all(|p| p.pts.unwrap_or(0) + 100 >= key_pts),
        "audio before the keyframe after a seek"
    );
}

/// Two 2 s MPEG-TS segments (96x64 with B-frames, then 128x72 without)
/// whose timestamps both start at the muxer's 1.4 s, joined by `cat` as
/// recorded or switched broadcast segments are.
fn restarting_ts() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let mut joined = Vec::new();
    for (n, (size, bframes)) in [("96x64", "2"), ("128x72", "0")].iter().enumerate() {
        let part = dir.join(format!("restart_part{n}.ts"));
        let status = Command::new("ffmpeg")
            .args(["-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i"])
            .arg(format!("testsrc2=size={size}:rate=30:duration=2"))
            .args(["-c:v", "libx264", "-bf", bframes, "-g", "10"])
            .arg(&part)
            .status()
            .expect("run ffmpeg");
        assert!(status.success(), "making {}", part.display());
        joined.extend(std::fs::read(&part).expect("read a segment"));
    }
    let path = dir.join("restart.ts");
    std::fs::write(&path, joined).expect("write restart.ts");
    path
}

#[test]
fn timestamps_continue_across_a_restart_and_seeks_find_either_segment() {
    let path = restarting_ts();
    // The file's own timestamps go back at the junction.
    let listed = ffprobe_packets(&path);
    assert_eq!(listed.len(), 120, "{listed:?}");
    assert!(listed[60].0 < listed[59].0, "no restart in {listed:?}");

    let mut demuxer = Demuxer::open(&path).expect("open");
    let info = demuxer.stream().clone();
    let packets = all_packets(&mut demuxer);
    assert_eq!(packets.len(), 120);
    let pts: Vec<i64> = packets.iter().map(|p| p.pts.expect("pts")).collect();
    let frame = 3000; // 1/30 s at 90 kHz
                      // The second segment's first picture right after the first's last.
    let first_end = pts[..60].iter().max().copied().unwrap_or_default() + frame;
    assert!(packets[60].keyframe);
    assert_eq!(pts[60], first_end, "{pts:?}");
    let mut shown = pts.clone();
    shown.sort_unstable();
    shown.dedup();
    assert_eq!(shown.len(), 120, "every picture its own pts: {pts:?}");
    assert!(shown.windows(2).all(|w| w[1] - w[0] == frame), "{shown:?}");
    for w in packets.windows(2) {
        let (a, b) = (w[0].dts.expect("dts"), w[1].dts.expect("dts"));
        assert!(b >= a, "decode timestamps go back: {a} then {b}");
    }

    // Seeks, in the second segment and back in the first (keyframes every
    // 10 frames in each), on the continuous clock.
    let keyframes: Vec<i64> = packets
        .iter()
        .filter(|p| p.keyframe)
        .map(|p| p.pts.unwrap_or(0))
        .collect();
    let check = |demuxer: &mut Demuxer, offset_ms: u64| {
        let target = info.start_time + Duration::from_millis(offset_ms);
        demuxer.seek(target).expect("seek");
        let packet = demuxer
            .next_packet()
            .expect("read")
            .expect("a packet after seek");
        let target_ts = duration_to_ts(target, info.time_base);
        let expected = keyframes.iter().copied().filter(|&k| k <= target_ts).max();
        assert!(packet.keyframe, "seek to {target:?}: not a keyframe");
        assert_eq!(packet.pts, expected, "seek to {target:?}");
    };
    for offset_ms in [3100, 500, 2000, 3900, 100] {
        check(&mut demuxer, offset_ms);
    }
    // Reading on after a seek into the second segment stays continuous.
    check(&mut demuxer, 2400);
    let rest = all_packets(&mut demuxer);
    assert_eq!(rest.last().and_then(|p| p.pts), pts.last().copied());

    // A fresh demuxer, nothing read yet: a seek must not take the second
    // segment's timestamps for the first's (they repeat).
    for offset_ms in [500, 1500, 1900, 2100, 2500, 3100, 3700] {
        let mut fresh = Demuxer::open(&path).expect("open");
        check(&mut fresh, offset_ms);
    }
}
