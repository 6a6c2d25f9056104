//! Frame-exact seeking, checked headlessly for every codec and container:
//! `reel --output framemd5 --start T` must give exactly the frames of a
//! full `ffmpeg -f framemd5` decode from the frame on screen at T onwards.

use crate::support;

use support::media;

use std::path::Path;
use std::process::Command;

/// (size, md5) of every frame as ffmpeg decodes it, in presentation order.
fn ffmpeg_hashes(clip: &Path) -> Vec<String> {
    let out = Command::new("ffmpeg")
        .args(["-nostdin", "-v", "error", "-i"])
        .arg(clip)
        .args(["-autoscale", "0", "-f", "framemd5", "-"])
        .output()
        .expect("run ffmpeg");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    hashes(&String::from_utf8_lossy(&out.stdout))
}

fn hashes(framemd5: &str) -> Vec<String> {
    framemd5
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let cols: Vec<&str> = l.split(',').map(str::trim).collect();
            (cols.len() == 6).then(|| format!("{} {}", cols[4], cols[5]))
        })
        .collect()
}

/// Presentation times (seconds from the stream's start) of every frame, from ffprobe.
fn ffprobe_times(clip: &Path) -> Vec<f64> {
    let start = media::ffprobe::<f64>(clip, "stream=start_time")[0];
    media::ffprobe::<f64>(clip, "frame=best_effort_timestamp_time")
        .iter()
        .map(|t| t - start)
        .collect()
}

fn reel_hashes_from(clip: &Path, start: f64) -> Vec<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_reel"))
        .args(["--output", "framemd5", "--start", &format!("{start}")])
        .arg(clip)
        .output()
        .expect("run reel");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "reel --start {start} {}: {stderr}",
        clip.display()
    );
    hashes(&String::from_utf8_lossy(&out.stdout))
}

#[test]
fn start_positions_give_the_exact_frames_for_every_clip() {
    let clips = [
        "h264_baseline.mp4",
        "h264_main_bframes.mkv",
        "h264_high.ts",
        "h264_resolution_change.ts",
        "hevc_main.mkv",
        "hevc_main10.mp4",
        "vp8.webm",
        "vp9.webm",
        "av1.mkv",
        "mpeg2.ts",
    ];
    for name in clips {
        let clip = media::clip(name);
        let all = ffmpeg_hashes(&clip);
        let times = ffprobe_times(&clip);
        assert_eq!(
            times.len(),
            all.len(),
            "{name}: ffprobe and ffmpeg disagree on the frame count"
        );
        let last = *times.last().expect("frames");
        for fraction in [0.0, 0.37, 0.5, 0.93] {
            let target = last * fraction;
            // The frame on screen at `target`: the last one starting at or before it.
            let index = times.iter().rposition(|&t| t <= target + 1e-6).unwrap_or(0);
            // Ask for a time inside that frame's interval, not on its edge.
            let start = times[index] + 0.25 / 30.0;
            let got = reel_hashes_from(&clip, start);
            assert_eq!(
                got,
                all[index..].to_vec(),
                "{name}: --start {start:.4} should begin at frame {index} of {}",
                all.len()
            );
        }
    }
}

/// An exact seek decodes from the key frame on only what the target needs:
/// on a long GOP whose B-frames are not references (x264 without B-pyramid),
/// the pictures decoded and dropped before the target are exactly its I
/// and P pictures (ffprobe's picture types), the B-frames' packets sent
/// with libavcodec's `skip_frame` at non-reference; and the frames from
/// the target on are still FFmpeg's.
#[test]
fn an_exact_seek_decodes_only_the_references_before_its_target() {
    let clip = Path::new(env!("CARGO_TARGET_TMPDIR")).join("seek_long_gop.mp4");
    let made = Command::new("ffmpeg")
        .args(["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i"])
        .arg("testsrc2=size=320x240:rate=25:duration=6")
        .args([
            "-c:v", "libx264", "-preset", "veryfast", "-g", "150", "-bf", "3",
        ])
        .args(["-x264-params", "b-pyramid=none", "-pix_fmt", "yuv420p"])
        .arg(&clip)
        .status()
        .expect("run ffmpeg");
    assert!(made.success());
    let start = 5.5;
    let out = Command::new(env!("CARGO_BIN_EXE_reel"))
        .args(["--hwdec", "no", "--output", "framemd5", "--start", "5.5"])
        .arg(&clip)
        .env("RUST_LOG", "warn,reel::player::pipeline=debug")
        .output()
        .expect("run reel");
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{log}");
    let field = |line: &str, key: &str| -> Option<u64> {
        let at = line.find(&format!("{key}="))? + key.len() + 1;
        line[at..]
            .split(|c: char| !c.is_ascii_digit())
            .next()?
            .parse()
            .ok()
    };
    let landed = log
        .lines()
        .find(|l| l.contains("seek landed"))
        .unwrap_or_else(|| panic!("no landing logged:\n{log}"));
    let decoded_before = field(landed, "decoded_before").expect("decoded_before");
    let references_only = field(landed, "references_only").expect("references_only");

    // The oracle: the frames shown wholly before the frame on screen at
    // the target, by type.
    let types: Vec<String> = media::ffprobe(&clip, "frame=pict_type");
    let times = ffprobe_times(&clip);
    assert_eq!(types.len(), times.len());
    let frame_duration = 1.0 / 25.0;
    let before: Vec<&String> = types
        .iter()
        .zip(&times)
        .filter(|(_, t)| **t + frame_duration <= start + 1e-6)
        .map(|(p, _)| p)
        .collect();
    let references = before.iter().filter(|p| p.as_str() != "B").count() as u64;
    assert!(
        references < before.len() as u64 / 2,
        "{before:?}: not a B-frame clip"
    );
    assert_eq!(
        decoded_before, references,
        "pictures decoded before the target"
    );
    assert_eq!(
        references_only,
        before.len() as u64,
        "packets sent for references only"
    );

    let shown = hashes(&String::from_utf8_lossy(&out.stdout));
    let all = ffmpeg_hashes(&clip);
    assert_eq!(shown, all[before.len()..], "the frames from the target on");
}
