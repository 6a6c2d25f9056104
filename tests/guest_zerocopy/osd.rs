//! The OSD, subtitles and screenshots on the V4L2 path, from
//! tests/vm/guest/osd-play.sh in the zero-copy guest boot: visl's pictures
//! presented zero-copy to weston (640x480, the clip scaled twice) with the
//! OSD and a PGS subtitle cue above them. Their text is read off weston's
//! screenshots by OCR on the host; reel's screenshot is checked against
//! weston's own rendering of the same CAPTURE buffer.

use std::path::PathBuf;

use super::support::compositor::{decode_png, Screenshot};
use super::support::pgs;
use super::support::picture::{psnr, read_text};
use super::support::reel_output;
use super::support::weston_log::{self, client_protocol, OsdBuffers};
use super::{read, result_path};

/// The OSD's rows in the 640x480 output.
const OSD_ROWS: u32 = 160;

/// The PNG weston-screenshooter wrote after session `name`.
fn shot(name: &str) -> Screenshot {
    let dir = result_path(&format!("{name}-shot"));
    let png = super::support::compositor::png_in(&dir).unwrap_or_else(|| {
        panic!(
            "{name}: no screenshot\n{}\nreel:\n{}",
            read(&format!("{name}-shot.log")),
            read("osd.log")
        )
    });
    decode_png(&png)
}

/// Session `name` ran to its end; its reply to `step`.
fn reply(name: &str, step: &str) -> String {
    assert_eq!(
        read(&format!("{name}.session.rc")).trim(),
        "0",
        "{name}:\n{}\nreel:\n{}",
        read(&format!("{name}.session")),
        read("osd.log")
    );
    read(&format!("{name}.session"))
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{step}\t")).map(str::to_owned))
        .unwrap_or_else(|| panic!("{name}: no reply to {step}"))
}

fn ocr(name: &str) -> String {
    read_text(&shot(name), OSD_ROWS, &result_path(""))
}

/// The subtitle cue: on the frame at 2.00 s (the seek's) and off the
/// next, at 2.04 s (the step's, and reel's screenshot's).
const CUE: &str = "HELLO WORLD";

/// A PGS file with `CUE` from 1.90 to 2.02 s, for the osd-play.sh session.
pub fn subtitle_file() -> PathBuf {
    let dir = super::support::target_dir().join("guest-subtitles");
    std::fs::create_dir_all(&dir).expect("guest subtitle dir");
    let path = dir.join("cue.sup");
    let cue = pgs::Cue {
        text: CUE,
        start: 1.90,
        end: 2.02,
    };
    pgs::write(&path, (640, 360), &[cue]);
    path
}

/// All the text on `name`'s screenshot.
fn ocr_all(name: &str) -> String {
    let shot = shot(name);
    read_text(&shot, shot.height, &result_path(""))
}

#[test]
fn on_the_v4l2_path_the_osd_and_subtitles_read_right_and_every_frame_stays_zero_copy() {
    let text = ocr("osd-seek");
    assert!(
        text.contains("00:00:02") && text.contains("frame 50"),
        "OCR read after seek 2: {text:?}"
    );
    let text = ocr("osd-step");
    assert!(text.contains("frame 51"), "OCR read after a step: {text:?}");
    // The subtitle cue on 2.00 s's frame, not on the next.
    let text = ocr_all("osd-seek");
    assert!(text.contains(CUE), "OCR read at 2.00 s: {text:?}");
    let text = ocr_all("osd-step");
    assert!(!text.contains("HELLO"), "OCR read at 2.04 s: {text:?}");
    assert!(read("osd.log").contains("subtitles ready"));
    let status = reel_output::fields(&reply("osd-plain", "status"));
    assert_eq!(status["decoder"], "v4l2-stateless", "{status:?}");
    assert!(
        status["presented"].parse::<u64>().unwrap() >= 3,
        "{status:?}"
    );
    assert_eq!(
        status["zero_copy_frames"], status["presented"],
        "a frame was copied with the OSD on: {status:?}"
    );
    assert!(
        status["osd_redraws"].parse::<u64>().unwrap() >= 2,
        "{status:?}"
    );
    assert_eq!(read("osd.rc").trim(), "0", "{}", read("osd.log"));

    let log = read("weston-osd.log");
    let pid = log
        .lines()
        .find(|l| l.contains(".get_subsurface("))
        .and_then(|l| l.split("(PID ").nth(1)?.split(')').next())
        .expect("no client made a subsurface");
    let seen = OsdBuffers::of(&client_protocol(&log, pid));
    assert!(seen.other.is_empty(), "{:#?}", seen.other);
    assert!(seen.osd_shm >= 2, "{seen:?}");
    assert!(seen.video_dmabuf >= 3, "{seen:?}");
    assert!(weston_log::protocol_errors(&log).is_empty());
}

#[test]
fn on_the_v4l2_path_a_screenshot_is_visls_picture() {
    let path = reply("osd-plain", "screenshot");
    let path = path
        .strip_prefix("ok ")
        .unwrap_or_else(|| panic!("screenshot: {path}"));
    let name = std::path::Path::new(path).file_name().expect("a file name");
    assert_eq!(name, "reel-shot-0001.png");
    let picture = decode_png(&result_path("osd-pictures").join(name));
    assert_eq!((picture.width, picture.height), (320, 240));

    // The frame on screen after the step: picture 51, at 2.04 s.
    let logged = read("osd.log")
        .lines()
        .find(|l| l.contains("screenshot written"))
        .map(str::to_owned)
        .expect("no screenshot line in reel's log");
    assert!(logged.contains("pts=2.04"), "{logged}");

    // The picture is visl's CAPTURE buffer as weston samples it (zero-copy:
    // weston's screenshot, the OSD off, at twice the size). visl's text
    // has hard edges that scaling blurs, so both are compared at 160x120
    // (30.8 dB when checked), and the colours on average (two conversions
    // of the same bytes: within a unit).
    let screen = shot("osd-plain");
    assert_eq!((screen.width, screen.height), (640, 480));
    let ours = shrink(&picture.rgb, 320, 2);
    let theirs = shrink(&screen.rgb, 640, 4);
    let score = psnr(&ours, &theirs);
    assert!(
        score > 28.0,
        "screenshot vs weston's picture: {score:.1} dB"
    );
    for c in 0..3 {
        let offset: f64 = ours
            .iter()
            .zip(&theirs)
            .skip(c)
            .step_by(3)
            .map(|(&a, &b)| f64::from(a) - f64::from(b))
            .sum::<f64>()
            / (ours.len() / 3) as f64;
        assert!(
            offset.abs() < 2.0,
            "channel {c} differs by {offset:.2} on average"
        );
    }
}

/// `rgb` (`width` wide) with each `f`x`f` block averaged.
fn shrink(rgb: &[u8], width: usize, f: usize) -> Vec<u8> {
    let height = rgb.len() / 3 / width;
    let mut out = Vec::with_capacity(rgb.len() / (f * f));
    for y in 0..height / f {
        for x in 0..width / f {
            for c in 0..3 {
                let mut sum = 0usize;
                for dy in 0..f {
                    for dx in 0..f {
                        sum += usize::from(rgb[((y * f + dy) * width + x * f + dx) * 3 + c]);
                    }
                }
                out.push((sum / (f * f)) as u8);
            }
        }
    }
    out
}
