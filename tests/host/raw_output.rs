//! `reel --output raw` (software path) against the oracle `ffmpeg -f
//! rawvideo` (`-autoscale 0 -fps_mode passthrough`: every decoded picture
//! at its own size) on every generated clip of every codec, 8 and 10 bit,
//! and on the elementary-stream forms conformance vectors come in (Annex-B
//! H.264/HEVC, IVF, AV1 OBU, MPEG-2 video): the same bytes.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;

/// Clips whose raw output differs from FFmpeg's by design, and what reel
/// writes instead (checked from its log).
const WRITTEN_OTHERWISE: &[(&str, &str)] = &[
    // The software path carries 4:2:2 10-bit pictures as 4:2:0 10-bit.
    (
        "h264_422_10bit.mp4",
        "pictures from frame 0 are yuv420p10le, not the stream's yuv422p10le",
    ),
    // Each picture at its own bit depth; FFmpeg converts all to the first's.
    (
        "hevc_bit_depth_change.ts",
        "pictures from frame 30 are yuv420p10le, not the stream's yuv420p",
    ),
];

/// Not video clips (or not playable: tests/host/bad_input.rs has them).
const NOT_VIDEO: &[&str] = &[
    "audio_only.mka",
    "garbage.bin",
    "truncated.mkv",
    "mpeg1.mpg",
];

/// (bytes, stderr) of reel's raw output of `path`.
fn reel_raw(path: &Path) -> (Vec<u8>, String) {
    reel_raw_with(path, &[])
}

/// As [`reel_raw`], with more options.
fn reel_raw_with(path: &Path, options: &[&str]) -> (Vec<u8>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_reel"))
        .args(["--hwdec", "no", "--output", "raw"])
        .args(options)
        .arg(path)
        .output()
        .expect("run reel");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success() && !stderr.contains("panicked"),
        "reel --output raw {}: {stderr}",
        path.display()
    );
    (out.stdout, stderr)
}

/// Where the first difference is, for a failure message.
fn first_difference(a: &[u8], b: &[u8]) -> String {
    match a.iter().zip(b).position(|(x, y)| x != y) {
        Some(at) => format!("first differing byte {at}"),
        None => format!("lengths {} and {}", a.len(), b.len()),
    }
}

#[test]
fn raw_output_equals_ffmpegs_rawvideo_on_every_clip() {
    let mut clips: Vec<PathBuf> = std::fs::read_dir(support::media::dir())
        .expect("list the test media")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            !name.starts_with('.') && !NOT_VIDEO.contains(&name)
        })
        .collect();
    clips.sort();
    assert!(clips.len() >= 60, "{} clips", clips.len());
    let mut failures = Vec::new();
    for clip in &clips {
        let name = clip
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let (reel, log) = reel_raw(clip);
        if let Some((_, says)) = WRITTEN_OTHERWISE.iter().find(|(n, _)| *n == name) {
            if !log.contains(says) {
                failures.push(format!("{name}: the log does not say \"{says}\":\n{log}"));
            }
            continue;
        }
        let ffmpeg = support::media::ffmpeg_rawvideo(clip);
        if reel != ffmpeg {
            failures.push(format!("{name}: {}", first_difference(&reel, &ffmpeg)));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} clips:\n{}",
        failures.len(),
        clips.len(),
        failures.join("\n")
    );
}

#[test]
fn elementary_streams_are_read_as_conformance_vectors_come() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let forms = [
        ("h264_high.ts", "h264", "raw.264"),
        ("hevc_main.mkv", "hevc", "raw.265"),
        ("hevc_main.mkv", "hevc", "raw_hevc.bit"),
        ("vp8.webm", "ivf", "raw_vp8.ivf"),
        ("vp9_profile2.webm", "ivf", "raw_vp9.ivf"),
        ("av1_10bit.mkv", "ivf", "raw_av1.ivf"),
        ("av1.mkv", "obu", "raw.obu"),
        ("mpeg2.ts", "mpeg2video", "raw.m2v"),
    ];
    let mut failures = Vec::new();
    for (source, format, file) in forms {
        let stream = dir.join(file);
        let status = Command::new("ffmpeg")
            .args(["-nostdin", "-loglevel", "error", "-y", "-i"])
            .arg(support::media::clip(source))
            .args(["-map", "0:v:0", "-c", "copy", "-f", format])
            .arg(&stream)
            .status()
            .expect("run ffmpeg");
        assert!(status.success(), "making {file}");
        let (reel, _) = reel_raw(&stream);
        let ffmpeg = support::media::ffmpeg_rawvideo(&stream);
        if reel.is_empty() || reel != ffmpeg {
            failures.push(format!("{file}: {}", first_difference(&reel, &ffmpeg)));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `--pix-fmt`: the layout asked for, as `ffmpeg -pix_fmt` writes it
/// (libswscale both times), from 8- and 10-bit streams of several codecs, into
/// packed RGB, semi-planar, other subsamplings and depths.
#[test]
fn pix_fmt_writes_the_layout_asked_for_as_ffmpeg_does() {
    let cases = [
        ("h264_main_bframes.mkv", "rgb24"),
        ("h264_main_bframes.mkv", "nv12"),
        ("vp9_profile2.webm", "p010le"),
        ("hevc_main10.mp4", "yuv420p"),
        ("h264_high.ts", "yuv422p10le"),
        ("av1.mkv", "yuv444p"),
        ("mpeg2.ts", "gray"),
    ];
    let mut failures = Vec::new();
    for (source, layout) in cases {
        let clip = support::media::clip(source);
        let (reel, _) = reel_raw_with(&clip, &["--pix-fmt", layout]);
        let ffmpeg = support::media::ffmpeg_rawvideo_as(&clip, &[layout]);
        if reel.is_empty() || reel != ffmpeg {
            failures.push(format!(
                "{source} as {layout}: {}",
                first_difference(&reel, &ffmpeg)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn pix_fmt_needs_raw_output_and_a_layout_ffmpeg_knows() {
    let clip = support::media::clip("vp8.webm");
    for (options, says) in [
        (
            &["--output", "raw", "--pix-fmt", "no-such-layout"][..],
            "FFmpeg knows no such pixel format",
        ),
        (
            &["--output", "framemd5", "--pix-fmt", "rgb24"][..],
            "--pix-fmt needs --output raw",
        ),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_reel"))
            .args(options)
            .arg(&clip)
            .output()
            .expect("run reel");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{options:?}: {stderr}");
        assert!(stderr.contains(says), "{options:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{options:?}: wrote output");
    }
}

#[test]
fn output_file_takes_the_raw_stream_and_needs_a_writing_output() {
    let clip = support::media::clip("vp8.webm");
    let file = Path::new(env!("CARGO_TARGET_TMPDIR")).join("raw_output_file.yuv");
    let status = Command::new(env!("CARGO_BIN_EXE_reel"))
        .args(["--hwdec", "no", "--output", "raw", "--output-file"])
        .arg(&file)
        .arg(&clip)
        .status()
        .expect("run reel");
    assert!(status.success());
    assert_eq!(
        std::fs::read(&file).expect("read the output file"),
        support::media::ffmpeg_rawvideo(&clip)
    );
    let out = Command::new(env!("CARGO_BIN_EXE_reel"))
        .args(["--output", "null", "--output-file"])
        .arg(&file)
        .arg(&clip)
        .output()
        .expect("run reel");
    assert_eq!(out.status.code(), Some(2), "a usage error");
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("--output-file needs --output framemd5 or raw"));
}
