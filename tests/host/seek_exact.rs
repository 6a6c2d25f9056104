//! Frame-exact seeking, checked headlessly for every codec and container:
//! `reel --output framemd5 --start T` must give exactly the frames of a
//! full `ffmpeg -f framemd5` decode from the first frame at or after T
//! onwards (mpv's rule for exact seeks, with its 5 ms tolerance).

use crate::support;

use support::media;
use support::picture::psnr;

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
/// 6 s of 320x240 at 25 fps in one GOP (150 frames), three B-frames
/// between references, none of them a reference.
fn long_gop_clip() -> std::path::PathBuf {
    media::encoded(
        "seek-media",
        "long_gop.mp4",
        "testsrc2=size=320x240:rate=25:duration=6",
        &[
            "-c:v",
            "libx264",
            "-preset",
            "veryfast",
            "-g",
            "150",
            "-bf",
            "3",
            "-x264-params",
            "b-pyramid=none",
        ],
    )
}

#[test]
fn an_exact_seek_decodes_only_the_references_before_its_target() {
    let clip = long_gop_clip();
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

/// Seeks over the JSON IPC in one long GOP, paused: forward ones decode on
/// from where decoding stands (no jump back to the keyframe), a backward
/// one goes back to it, and a storm of seeks sent at once ends on the last
/// one's target; each landing is the first frame at or after the target,
/// and its picture is FFmpeg's decode of that frame (nothing lost from the
/// references decoding on).
#[test]
fn forward_seeks_decode_on_and_land_on_the_exact_picture() {
    use serde_json::json;
    use support::mpv_ipc::{IpcClient, Player};
    let clip = long_gop_clip();
    let times = media::frame_times(&clip);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("seek-on");
    let mut reel = Player::spawn(
        "seek-on",
        env!("CARGO_BIN_EXE_reel"),
        &[
            "--idle",
            "--hwdec",
            "no",
            "--pause",
            "--output",
            "null",
            "--no-audio",
        ],
        &[(
            "RUST_LOG".into(),
            "warn,reel::player::pipeline=debug".into(),
        )],
        &dir,
    );
    let mut client = reel.connect();
    client.request(json!(["loadfile", clip]));
    client.wait_named("playback-restart");
    let landed_on = |client: &mut IpcClient, target: f64, dir: &Path| {
        let landing = media::seek_landing(&times, target, media::SEEK_TOLERANCE);
        let position = client.request(json!(["get_property", "time-pos"]));
        let position = position["data"].as_f64().unwrap_or(-1.0);
        assert!(
            (position - times[landing]).abs() < 0.001,
            "seek {target}: at {position}, not {}",
            times[landing]
        );
        let shot = dir.join(format!("at-{target}.png"));
        let reply = client.request(json!(["screenshot-to-file", shot]));
        assert_eq!(reply["error"], "success", "{reply}");
        let picture = support::compositor::decode_png(&shot);
        let index = landing as u32;
        let score = psnr(
            &picture.rgb,
            &media::ffmpeg_frame_rgb(&clip, index, 320, 240),
        );
        assert!(
            score >= 45.0,
            "seek {target}: frame {index} at {score:.1} dB"
        );
    };
    // Forward twice, back, forward again.
    for target in [1.02, 4.5, 2.0, 2.7] {
        let reply = client.request(json!(["seek", target, "absolute", "exact"]));
        assert_eq!(reply["error"], "success", "{reply}");
        client.wait_named("playback-restart");
        landed_on(&mut client, target, &dir);
    }
    // A storm: three seeks at once, the last one's picture ends on screen.
    let storm = [3.3, 5.1, 3.9];
    for target in storm {
        client.send_raw(
            format!("{{\"command\": [\"seek\", {target}, \"absolute\", \"exact\"]}}\n").as_bytes(),
        );
    }
    for _ in storm {
        assert_eq!(client.next_reply()["error"], "success");
    }
    let last = storm[storm.len() - 1];
    let landing = times[media::seek_landing(&times, last, media::SEEK_TOLERANCE)];
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while client.request(json!(["get_property", "time-pos"]))["data"]
        .as_f64()
        .is_none_or(|p| (p - landing).abs() >= 0.001)
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the storm did not end on {last}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    landed_on(&mut client, last, &dir);
    assert_eq!(client.request(json!(["quit"]))["error"], "success");
    assert!(reel.wait().success(), "{}", reel.log());
    let log = reel.log();
    let decoded_on = log
        .matches("decoding on from where decoding stands")
        .count();
    // 1.02, 4.5, 2.7, and in the storm 5.1 after 3.3.
    assert!(decoded_on >= 4, "{decoded_on} seeks decoded on:\n{log}");
    assert!(
        log.contains("seek position"),
        "no seek back to a keyframe:\n{log}"
    );
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
