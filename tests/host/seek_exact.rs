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
