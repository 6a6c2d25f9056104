//! The OSD and screenshots on the V4L2 path, from tests/vm/guest/osd-play.sh
//! in the zero-copy guest boot: visl's pictures presented zero-copy to
//! weston (640x480, the clip scaled twice) with the OSD above them. Its text
//! is read off weston's screenshots by OCR on the host; reel's screenshot
//! is checked against weston's own rendering of the same CAPTURE buffer.

use super::support::compositor::{decode_png, Screenshot};
use super::support::picture::{psnr, read_text};
use super::support::reel_output;
use super::support::weston_log::{self, client_protocol, OsdBuffers};
use super::{read, result_path};

/// The OSD's rows in the 640x480 output.
const OSD_ROWS: u32 = 160;

/// The PNG weston-screenshooter wrote after session `name`.
fn shot(name: &str) -> Screenshot {
    let dir = result_path(&format!("{name}-shot"));
    let png = std::fs::read_dir(&dir)
        .ok()
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "png"))
        .unwrap_or_else(|| {
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

#[test]
fn on_the_v4l2_path_the_osd_reads_right_and_every_frame_stays_zero_copy() {
    let text = ocr("osd-seek");
    assert!(
        text.contains("00:00:02") && text.contains("frame 50"),
        "OCR read after seek 2: {text:?}"
    );
    let text = ocr("osd-step");
    assert!(text.contains("frame 51"), "OCR read after a step: {text:?}");
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
    // weston's screenshot, the OSD off, scaled back from 640x480), within
    // what two colour conversions and a scaling differ by.
    let screen = shot("osd-plain");
    assert_eq!((screen.width, screen.height), (640, 480));
    let mut halved = Vec::with_capacity(320 * 240 * 3);
    for y in 0..240 {
        for x in 0..320 {
            let mut sum = [0u32; 3];
            for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                let p = screen.pixel(2 * x + dx, 2 * y + dy);
                for c in 0..3 {
                    sum[c] += u32::from(p[c]);
                }
            }
            halved.extend(sum.map(|s| ((s + 2) / 4) as u8));
        }
    }
    let score = psnr(&picture.rgb, &halved);
    assert!(
        score > 28.0,
        "screenshot vs weston's picture: {score:.1} dB"
    );
}
