//! The on-screen display and screenshots against a real compositor (weston
//! 14 headless): what the OSD says is read off weston's screenshots by OCR
//! (tesseract); that it lives on its own subsurface, leaving the video
//! surface the decoder's buffers, is read off weston's protocol log; a
//! screenshot (`s`, the control socket's `screenshot`) is compared with
//! ffmpeg's decode of the same frame.

use crate::support;

use std::collections::HashMap;
use std::thread::sleep;
use std::time::Duration;

use support::compositor::{decode_png, Weston};
use support::media;
use support::picture::{crop, psnr, read_text};
use support::reel_process::Reel;
use support::weston_log::OsdBuffers;

/// The OSD sits in the top rows of a 1280x720 output; the stats page is
/// longer.
const OSD_ROWS: u32 = 200;
const STATS_ROWS: u32 = 480;

fn count(status: &HashMap<String, String>, key: &str) -> u64 {
    status[key].parse().expect("a number")
}

fn start(weston: &Weston, args: &[&str]) -> Reel {
    Reel::spawn(
        &weston.client_env(),
        weston.runtime_dir(),
        args,
        &[&media::clip("h264_25fps.mp4")],
    )
}

/// The OSD's text now.
fn osd_text(weston: &Weston) -> String {
    read_text(&weston.screenshot(), OSD_ROWS, weston.runtime_dir())
}

#[test]
fn the_osd_shows_position_frame_and_pts_readably_after_a_seek_and_a_step() {
    let weston = Weston::start(1280, 720);
    let mut reel = start(&weston, &["--paused"]);
    reel.settled();
    assert_eq!(reel.command("osd 3"), "ok");
    assert_eq!(reel.command("seek 2.0"), "ok");
    let status = reel.settled();
    assert_eq!(status["osd_level"], "3");
    let text = osd_text(&weston);
    assert!(text.contains("00:00:02"), "OCR read: {text:?}");
    assert!(text.contains("frame 50"), "OCR read: {text:?}");
    assert!(text.contains("25fps.mp4"), "OCR read: {text:?}");
    assert_eq!(reel.command("step"), "ok");
    reel.wait_for("the step", |s| s["position"].starts_with("2.04"));
    let text = osd_text(&weston);
    assert!(text.contains("frame 51"), "OCR read after a step: {text:?}");
    assert!(text.contains("2.040000"), "OCR read after a step: {text:?}");

    // The stats page: the decoder, and how frames reach the screen.
    assert_eq!(reel.command("stats"), "ok");
    let status = reel.status();
    let text = read_text(&weston.screenshot(), STATS_ROWS, weston.runtime_dir());
    assert!(text.contains("decoder: software"), "OCR read: {text:?}");
    assert!(text.contains("320x240 visible"), "OCR read: {text:?}");
    assert!(
        text.contains("copied into"),
        "the stats page says how frames reach the screen: {text:?}"
    );
    assert!(count(&status, "osd_redraws") >= 3, "{status:?}");
    assert!(reel.quit().success(), "{}", reel.log());

    // The OSD had a subsurface of its own with wl_shm ARGB8888 buffers;
    // the video surface only ever got the frames' dmabufs.
    let seen = OsdBuffers::of(&weston.protocol_of(reel.child.id()));
    assert!(seen.other.is_empty(), "{:#?}", seen.other);
    assert!(seen.osd_shm >= 3, "{seen:?}");
    assert!(seen.video_dmabuf >= 3, "{seen:?}");
}

#[test]
fn at_level_1_a_seek_shows_the_position_for_a_second_then_the_picture_is_clear() {
    let weston = Weston::start(1280, 720);
    let mut reel = start(&weston, &["--paused", "--osd-level", "1"]);
    reel.settled();
    // The first picture is announced too; wait until that has gone.
    sleep(Duration::from_millis(1300));
    let clear = weston.screenshot();
    assert_eq!(reel.command("seek 2.0"), "ok");
    reel.settled();
    let text = osd_text(&weston);
    assert!(
        text.contains("00:00:02.000 / 00:00:04.000") && text.contains("paused"),
        "OCR read: {text:?}"
    );
    sleep(Duration::from_millis(1500));
    // Gone: the window shows the frame alone again (letterboxed 960x720).
    let later = weston.screenshot();
    let video = (160, 0, 960, 720);
    let expected = media::ffmpeg_frame_rgb(&media::clip("h264_25fps.mp4"), 50, 960, 720);
    let score = psnr(&crop(&later, video), &expected);
    assert!(score > 25.0, "frame 50 not clear of the OSD: {score:.1} dB");
    let text = read_text(&later, OSD_ROWS, weston.runtime_dir());
    assert!(!text.contains("00:00:02.000"), "still shown: {text:?}");
    // Level 0: nothing.
    assert_eq!(reel.command("osd 0"), "ok");
    assert_eq!(reel.command("seek 0"), "ok");
    reel.settled();
    let shot = weston.screenshot();
    assert!(
        psnr(&crop(&shot, video), &crop(&clear, video)) > 40.0,
        "level 0 drew something"
    );
    assert!(reel.quit().success(), "{}", reel.log());
}

#[test]
fn while_playing_the_osd_is_redrawn_at_most_once_a_second() {
    let weston = Weston::start(1280, 720);
    let mut reel = start(&weston, &["--paused", "--osd-level", "3"]);
    let before = reel.settled();
    assert_eq!(reel.command("resume"), "ok");
    let after = reel.wait_for("the end", |s| {
        s["state"] == "ended" || s["position"].starts_with("3.9")
    });
    let redraws = count(&after, "osd_redraws") - count(&before, "osd_redraws");
    let presented = count(&after, "presented") - count(&before, "presented");
    // 4 s: a redraw per second shown plus the resume and the end.
    assert!(presented >= 50, "{presented} frames presented");
    assert!(
        redraws <= 4 + 2,
        "{redraws} OSD redraws for {presented} frames over 4 s"
    );
    assert!(
        redraws >= 3,
        "the OSD did not follow playback: {redraws} redraws"
    );
    assert!(reel.quit().success(), "{}", reel.log());
}

#[test]
fn a_screenshot_is_the_decoded_frame_at_its_visible_size() {
    let weston = Weston::start(1280, 720);
    let pictures = weston.runtime_dir().join("Pictures");
    std::fs::create_dir_all(&pictures).unwrap();
    let mut env = weston.client_env();
    env.push(("XDG_PICTURES_DIR".into(), pictures.display().to_string()));
    let clip = media::clip("h264_25fps.mp4");
    let mut reel = Reel::spawn(
        &env,
        weston.runtime_dir(),
        &["--paused", "--start", "2"],
        &[&clip],
    );
    reel.settled();
    let reply = reel.command("screenshot");
    let first = pictures.join("reel-shot-0001.png");
    assert_eq!(reply, format!("ok {}", first.display()));
    assert_eq!(reel.command("step"), "ok");
    reel.wait_for("the step", |s| s["position"].starts_with("2.04"));
    assert_eq!(
        reel.command("screenshot"),
        format!("ok {}", pictures.join("reel-shot-0002.png").display())
    );
    for (shot, frame) in [(first, 50), (pictures.join("reel-shot-0002.png"), 51)] {
        let picture = decode_png(&shot);
        assert_eq!((picture.width, picture.height), (320, 240));
        let score = |index| {
            psnr(
                &picture.rgb,
                &media::ffmpeg_frame_rgb(&clip, index, 320, 240),
            )
        };
        let wanted = score(frame);
        assert!(
            wanted >= 45.0,
            "{} vs frame {frame}: {wanted:.2} dB",
            shot.display()
        );
        assert!(score(frame + 1) + 3.0 < wanted);
    }
    let log = reel.log();
    assert!(
        log.contains("screenshot written") && log.contains("pts=2.04"),
        "{log}"
    );
    assert!(reel.quit().success(), "{}", reel.log());
}

/// In a window narrower than the OSD's text at its usual size, the text is
/// made smaller to fit; the window stays the video's size (the subsurface
/// is not counted in its geometry: a fullscreen window larger than the
/// output is a protocol error, which dropping `weston` checks for).
#[test]
fn in_a_small_window_the_osd_fits_and_the_window_keeps_its_size() {
    let weston = Weston::start(320, 240);
    let mut reel = start(&weston, &["--paused", "--osd-level", "3"]);
    reel.settled();
    assert_eq!(reel.command("seek 2"), "ok");
    let status = reel.settled();
    assert!(count(&status, "osd_redraws") >= 2, "{status:?}");
    assert!(reel.quit().success(), "{}", reel.log());
    let geometry: Vec<String> = weston
        .protocol_of(reel.child.id())
        .into_iter()
        .filter(|(_, m)| m.contains(".set_window_geometry("))
        .map(|(_, m)| m)
        .collect();
    assert!(
        geometry.iter().all(|m| m.ends_with("(0, 0, 320, 240)")),
        "{geometry:?}"
    );
    assert!(!geometry.is_empty());
    assert!(
        weston.protocol_errors().is_empty(),
        "{:?}",
        weston.protocol_errors()
    );
}

/// memfds of the OSD's buffers that process `pid` holds.
fn osd_memfds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|fds| {
            fds.filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok())
                .filter(|target| target.to_string_lossy().starts_with("/memfd:reel-osd"))
                .count()
        })
        .unwrap_or(0)
}

/// Texts of every size come and go (the stats page, the status, events
/// while playing and paused): the OSD keeps at most three buffers, so
/// nothing leaks however long reel runs.
#[test]
fn the_osd_keeps_a_few_buffers_however_often_its_text_changes() {
    let weston = Weston::start(1280, 720);
    let mut reel = start(&weston, &["--loop", "--osd-level", "1"]);
    reel.settled();
    let pid = reel.child.id();
    let mut most = 0;
    for round in 0..12 {
        let command = [
            "stats", "osd 3", "pause", "stats", "resume", "osd 1", "seek +1",
        ][round % 7];
        assert_eq!(reel.command(command), "ok");
        sleep(Duration::from_millis(250));
        most = most.max(osd_memfds(pid));
    }
    let status = reel.status();
    assert!(count(&status, "osd_redraws") >= 8, "{status:?}");
    assert!((1..=3).contains(&most), "{most} OSD buffers at once");
    assert!(reel.quit().success(), "{}", reel.log());
}
