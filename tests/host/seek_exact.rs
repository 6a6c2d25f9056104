//! Frame-exact seeking, checked headlessly for every codec and container:
//! `reel --output framemd5 --start T` must give exactly the frames of a
//! full `ffmpeg -f framemd5` decode from the first frame at or after T
//! onwards (mpv's rule for exact seeks, with its 5 ms tolerance).

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
        let times = media::frame_times(&clip);
        assert_eq!(
            times.len(),
            all.len(),
            "{name}: ffprobe and ffmpeg disagree on the frame count"
        );
        let last = *times.last().expect("frames");
        for fraction in [0.0, 0.37, 0.5, 0.93] {
            let target = last * fraction;
            let on_screen = times.iter().rposition(|&t| t <= target + 1e-6).unwrap_or(0);
            // A time on a frame's start, and one inside its interval (not
            // on its edge): the first lands on it, the second on the next.
            for start in [times[on_screen], times[on_screen] + 0.25 / 30.0] {
                let index = media::seek_landing(&times, start, media::SEEK_TOLERANCE);
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

    // The oracle: the frames before the one the seek lands on (the first
    // starting at or after the target, give or take mpv's 5 ms), by type.
    let types: Vec<String> = media::ffprobe(&clip, "frame=pict_type");
    let times = media::frame_times(&clip);
    assert_eq!(types.len(), times.len());
    let landing = media::seek_landing(&times, start, media::SEEK_TOLERANCE);
    assert!(
        times[landing] > start,
        "{start} s is on a frame's start: the check would not tell the rules apart"
    );
    let before = &types[..landing];
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
    assert_eq!(shown, all[landing..], "the frames from the target on");
}

/// Near the end, where no frame starts at or after the target (inside the
/// last frame's interval, or past the end of the file), an exact seek shows
/// the last frame and ends there. Also on a clip whose last frame no other
/// refers to (VP8 with two temporal layers: every other frame updates no
/// reference), so that it is among the pictures an exact seek would leave
/// undecoded before its target.
#[test]
fn a_start_where_no_frame_follows_shows_the_last_frame() {
    let undecoded_last = media::encoded(
        "seek-media",
        "vp8_temporal_layers.webm",
        "testsrc2=size=320x240:rate=25:duration=2",
        &[
            "-c:v",
            "libvpx",
            "-b:v",
            "500k",
            "-g",
            "100",
            "-ts-parameters",
            "ts_number_layers=2:ts_target_bitrate=250,500:ts_rate_decimator=2,1:\
             ts_periodicity=2:ts_layer_id=0,1:ts_layering_mode=2",
        ],
    );
    // Decoding only the references leaves out the last frame.
    let references = Command::new("ffmpeg")
        .args(["-nostdin", "-v", "error", "-skip_frame", "noref", "-i"])
        .arg(&undecoded_last)
        .args(["-f", "framemd5", "-"])
        .output()
        .expect("run ffmpeg");
    assert!(references.status.success());
    let all = ffmpeg_hashes(&undecoded_last);
    assert_ne!(
        hashes(&String::from_utf8_lossy(&references.stdout)).last(),
        all.last(),
        "the last frame of {} is a reference",
        undecoded_last.display()
    );

    let clips = [
        media::clip("h264_main_bframes.mkv"),
        media::clip("hevc_main.mkv"),
        media::clip("mpeg2.ts"),
        undecoded_last,
    ];
    for clip in clips {
        let all = ffmpeg_hashes(&clip);
        let times = media::frame_times(&clip);
        assert_eq!(times.len(), all.len(), "{}", clip.display());
        let last = *times.last().expect("frames");
        for start in [last + 0.25 / 30.0, last + 10.0] {
            assert_eq!(
                media::seek_landing(&times, start, media::SEEK_TOLERANCE),
                all.len() - 1
            );
            let got = reel_hashes_from(&clip, start);
            assert_eq!(
                got,
                all[all.len() - 1..],
                "{}: --start {start:.4} should give the last frame alone",
                clip.display()
            );
        }
    }
}
