//! Mid-stream resolution changes through reel's V4L2 stateless path, in the
//! QEMU guest with visl: one table row per clip (`CLIPS`, made by
//! tests/media/generate.sh's last section), the same checks for every row
//! (tests/vm/guest/resolution-change.sh runs them, all in one boot):
//! - `--output framemd5`: exit status 0, no panic, and the frame list (pts
//!   and picture size of every frame) FFmpeg's software decoder gives, of
//!   the whole file or of its segments placed end to end (`Expected`: where
//!   timestamps restart or repeat at a junction);
//! - rows with a session (`Session`), on weston 14 headless: exit status 0,
//!   every presented frame zero-copy, no protocol error in weston's log;
//!   paused, a seek across the change points shows a picture of the new
//!   size at a frame's pts; and once shown, reel holds CAPTURE dmabufs of
//!   that one size only (the old size's all released).
//!
//! The changes come with DPB needs that grow and shrink (H.264 refs and
//! B-frames, HEVC sps_max_dec_pic_buffering): the reordering a stream has
//! at the junction is what a regression once broke ("no free CAPTURE
//! buffer", fixed in 50ed461), which clips without B-frames did not catch.
//!
//! Failures are collected over the rows and reported at once, each naming
//! its clip. `REEL_RC_BINARY` replaces the reel binary the guest runs (to
//! see the checks fail against an older build).

mod support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use support::vm::{Guest, GuestCommand, GuestResult, ScriptCall};
use support::{media, reel_output, reel_runs, weston_log};

const SAVE_DIR: &str = "guest-resolution-change";

/// What a row's weston session does: pause, seek to `seek` seconds (in the
/// last segment) after playing past `play_to`.
#[derive(Clone, Copy)]
struct Session {
    play_to: f64,
    seek: f64,
}

/// Where a row's expected frame list comes from: FFmpeg's software
/// decoder, of the whole file or of the segments it was joined from.
enum Expected {
    /// The whole file's list.
    Whole,
    /// The segments', each decoded alone, placed end to end: each
    /// segment's first picture right after the last one of the segment
    /// before, every picture of every segment shown. Where the whole
    /// file's list is no oracle:
    /// - transport streams whose timestamps restart at a junction: reel
    ///   keeps them continuous so (media/timeline.rs), where FFmpeg's
    ///   command line continues the decode timestamps and so loses one
    ///   picture at rc_h264_down_refs.ts's junction (59 frames of 60) and
    ///   leaves a one-picture gap at rc_hevc_up.ts's;
    /// - MPEG-2 segments whose junction repeats a pts (the last P picture
    ///   of a segment and the next one's first I picture, both at 72/30 s
    ///   in rc_mpeg2_up.ts): FFmpeg's software decoder of the whole drops
    ///   one of the two (59 frames of 60); reel shows both, and its
    ///   framemd5 clock (FFmpeg's variable-frame-rate sync) moves the
    ///   second to the next slot, as it does every frame after it.
    PartsEndToEnd(&'static [&'static str]),
}

/// One clip of the table.
struct Clip {
    file: &'static str,
    /// How generate.sh made it.
    made: &'static str,
    /// What it must exercise.
    exercises: &'static str,
    /// The segments' picture sizes, in order.
    sizes: &'static [(u32, u32)],
    /// Where FFmpeg's frame list comes from (`expected_frames`).
    expected: Expected,
    session: Option<Session>,
}

const H264_BF2_UP: &str = "288x160 -> 400x224, main -bf 2 -g 30, -output_ts_offset per segment";
const DOWN_REFS: &str = "480x272 -bf 3 -refs 4 -> 320x176 -bf 0 -refs 1, no -output_ts_offset";

const CLIPS: &[Clip] = &[
    Clip {
        file: "rc_h264_up_bf2.ts",
        made: H264_BF2_UP,
        exercises: "issue stream: up, B-frames reordered across the junction",
        sizes: &[(288, 160), (400, 224)],
        expected: Expected::Whole,
        session: Some(Session { play_to: 0.3, seek: 1.5 }),
    },
    Clip {
        file: "rc_h264_down_refs.mkv",
        made: "rc_h264_down_refs.ts re-muxed: ffmpeg -c copy",
        exercises: "issue stream: the same change in Matroska",
        sizes: &[(480, 272), (320, 176)],
        expected: Expected::Whole,
        session: None,
    },
    Clip {
        file: "rc_h264_updown.ts",
        made: "320x176 bf0 refs1 -> 480x272 bf3 refs4 -> 320x176 bf0 refs1, offsets",
        exercises: "up and down, refs 1 -> 4 -> 1, B-frames off/on/off",
        sizes: &[(320, 176), (480, 272), (320, 176)],
        expected: Expected::Whole,
        session: Some(Session { play_to: 1.2, seek: 2.5 }),
    },
    Clip {
        file: "rc_hevc_updown.ts",
        made: "320x240 bframes=0 ref=1 -> 480x272 bframes=4 b-pyramid ref=3 -> 256x144 bframes=2 ref=2",
        exercises: "issue stream: up and down, sps_max_dec_pic_buffering 1 -> 5 -> 3",
        sizes: &[(320, 240), (480, 272), (256, 144)],
        expected: Expected::Whole,
        session: Some(Session { play_to: 1.2, seek: 2.5 }),
    },
    Clip {
        file: "rc_hevc_down.ts",
        made: "480x272 bframes=4 b-pyramid ref=4 -> 320x176 bframes=0 ref=1, offsets",
        exercises: "down, DPB shrinks",
        sizes: &[(480, 272), (320, 176)],
        expected: Expected::Whole,
        session: None,
    },
    Clip {
        file: "rc_vp8_up.webm",
        made: "IVF segments joined, muxed to WebM",
        exercises: "up: key frame of a new size in one track",
        sizes: &[(320, 176), (480, 272)],
        expected: Expected::Whole,
        session: None,
    },
    Clip {
        file: "rc_vp8_down.webm",
        made: "IVF segments joined, muxed to WebM",
        exercises: "down",
        sizes: &[(480, 272), (320, 176)],
        expected: Expected::Whole,
        session: None,
    },
    Clip {
        file: "rc_vp8_updown.webm",
        made: "IVF segments joined, muxed to WebM",
        exercises: "up and down",
        sizes: &[(320, 176), (480, 272), (256, 144)],
        expected: Expected::Whole,
        session: Some(Session { play_to: 1.2, seek: 2.5 }),
    },
    Clip {
        file: "rc_vp9_up.webm",
        made: "IVF segments joined, muxed to WebM",
        exercises: "up: key frame of a new size in one track",
        sizes: &[(320, 176), (480, 272)],
        expected: Expected::Whole,
        session: None,
    },
    Clip {
        file: "rc_vp9_down.webm",
        made: "IVF segments joined, muxed to WebM",
        exercises: "down",
        sizes: &[(480, 272), (320, 176)],
        expected: Expected::Whole,
        session: None,
    },
    Clip {
        file: "rc_vp9_updown.webm",
        made: "IVF segments joined, muxed to WebM",
        exercises: "up and down",
        sizes: &[(320, 176), (480, 272), (256, 144)],
        expected: Expected::Whole,
        session: Some(Session { play_to: 1.2, seek: 2.5 }),
    },
    Clip {
        file: "rc_av1_up.mkv",
        made: "low-overhead OBU segments joined, muxed to Matroska",
        exercises: "up: key frame with a new sequence header in one track",
        sizes: &[(320, 176), (480, 272)],
        expected: Expected::Whole,
        session: None,
    },
    Clip {
        file: "rc_av1_down.mkv",
        made: "low-overhead OBU segments joined, muxed to Matroska",
        exercises: "down",
        sizes: &[(480, 272), (320, 176)],
        expected: Expected::Whole,
        session: None,
    },
    Clip {
        file: "rc_av1_updown.mkv",
        made: "low-overhead OBU segments joined, muxed to Matroska",
        exercises: "up and down",
        sizes: &[(320, 176), (480, 272), (256, 144)],
        expected: Expected::Whole,
        session: Some(Session { play_to: 1.2, seek: 2.5 }),
    },
    Clip {
        file: "rc_h264_down_refs.ts",
        made: DOWN_REFS,
        exercises: "issue stream: down, DPB 4 refs + B -> 1 ref, timestamps restart, CC error",
        sizes: &[(480, 272), (320, 176)],
        expected: Expected::PartsEndToEnd(&["rc_h264_down_refs_part0.ts", "rc_h264_down_refs_part1.ts"]),
        session: Some(Session { play_to: 0.3, seek: 1.5 }),
    },
    Clip {
        file: "rc_hevc_up.ts",
        made: "256x144 bframes=0 ref=1 -> 384x216 bframes=3 ref=3, no -output_ts_offset",
        exercises: "up, DPB grows, timestamps restart, CC error",
        sizes: &[(256, 144), (384, 216)],
        expected: Expected::PartsEndToEnd(&["rc_hevc_up_part0.ts", "rc_hevc_up_part1.ts"]),
        session: Some(Session { play_to: 0.3, seek: 1.5 }),
    },
    Clip {
        file: "rc_mpeg2_up.ts",
        made: "352x288 -> 480x320, -bf 2 -g 15, offsets",
        exercises: "issue stream: up, B pictures across the junction",
        sizes: &[(352, 288), (480, 320)],
        expected: Expected::PartsEndToEnd(&["rc_mpeg2_up_part0.ts", "rc_mpeg2_up_part1.ts"]),
        session: Some(Session {
            play_to: 0.3,
            seek: 1.5,
        }),
    },
    Clip {
        file: "rc_mpeg2_down.ts",
        made: "480x320 -bf 2 -> 320x240 -bf 0, offsets",
        exercises: "down, B pictures before the junction",
        sizes: &[(480, 320), (320, 240)],
        expected: Expected::PartsEndToEnd(&["rc_mpeg2_down_part0.ts", "rc_mpeg2_down_part1.ts"]),
        session: None,
    },
    Clip {
        file: "rc_mpeg2_updown.ts",
        made: "320x240 -bf 0 -> 480x320 -bf 2 -> 320x240 -bf 2, offsets",
        exercises: "up and down",
        sizes: &[(320, 240), (480, 320), (320, 240)],
        expected: Expected::PartsEndToEnd(&[
            "rc_mpeg2_updown_part0.ts",
            "rc_mpeg2_updown_part1.ts",
            "rc_mpeg2_updown_part2.ts",
        ]),
        session: None,
    },
];

/// A row's results are named after its file with the dots made dashes.
fn run_name(clip: &Clip) -> String {
    clip.file.replace('.', "-")
}

/// The reel binary the guest runs: this build's, or `REEL_RC_BINARY`'s.
fn reel_binary() -> PathBuf {
    std::env::var_os("REEL_RC_BINARY")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_reel")))
}

/// One guest boot running every row of `clips`.
fn runs(
    clips: &'static [Clip],
    cell: &'static OnceLock<GuestResult>,
    label: &str,
) -> &'static GuestResult {
    cell.get_or_init(|| {
        let media = media::dir();
        let reel = reel_binary();
        let calls: Vec<ScriptCall> = clips
            .iter()
            .map(|clip| {
                let (seek, play_to) = match clip.session {
                    Some(s) => (s.seek.to_string(), s.play_to.to_string()),
                    None => ("-".to_string(), "0".to_string()),
                };
                ScriptCall::new("resolution-change.sh")
                    .arg(&reel)
                    .arg(run_name(clip))
                    .arg(media.join(clip.file))
                    .args([seek, play_to])
            })
            .collect();
        let sessions = clips.iter().filter(|c| c.session.is_some()).count() as u64;
        let result = Guest::run(
            &GuestCommand::scripts(calls)
                .timeout(Duration::from_secs(
                    120 + 30 * clips.len() as u64 + 150 * sessions,
                ))
                .env("RUST_BACKTRACE", "1")
                .label(label),
        )
        .unwrap_or_else(|e| panic!("the test guest did not run: {e}"));
        result.assert_success();
        result
    })
}

/// One frame of a framemd5 list: pts in microseconds from the list's first
/// frame, its duration, and the picture's size in bytes (4:2:0, 8 bits: a size names
/// the picture's dimensions, see `size_name`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Frame {
    pts_us: i64,
    duration_us: i64,
    bytes: u64,
}

/// The frames of framemd5 text, pts from its first frame's.
fn frames(framemd5: &str) -> Vec<Frame> {
    let mut frames = frames_as_listed(framemd5);
    if let Some(first) = frames.first().map(|f| f.pts_us) {
        for frame in &mut frames {
            frame.pts_us -= first;
        }
    }
    frames
}

/// The frames of framemd5 text, pts as listed.
fn frames_as_listed(framemd5: &str) -> Vec<Frame> {
    let (num, den) = reel_runs::framemd5_time_base(framemd5);
    framemd5
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let cols: Vec<&str> = l.split(',').map(str::trim).collect();
            let number = |i: usize| -> i64 {
                cols.get(i)
                    .and_then(|v| v.parse().ok())
                    .unwrap_or_else(|| panic!("bad framemd5 line {l}"))
            };
            Frame {
                pts_us: number(2) * num * 1_000_000 / den,
                duration_us: number(3) * num * 1_000_000 / den,
                bytes: number(4) as u64,
            }
        })
        .collect()
}

/// Bytes of a 4:2:0 8-bit picture.
fn picture_bytes((width, height): (u32, u32)) -> u64 {
    let (w, h) = (u64::from(width), u64::from(height));
    w * h + 2 * w.div_ceil(2) * h.div_ceil(2)
}

/// `WxH` of the row's segment size a picture of `bytes` has.
fn size_name(clip: &Clip, bytes: u64) -> String {
    clip.sizes
        .iter()
        .find(|&&s| picture_bytes(s) == bytes)
        .map(|(w, h)| format!("{w}x{h}"))
        .unwrap_or_else(|| format!("?({bytes} bytes)"))
}

/// FFmpeg's framemd5 of `file`.
fn ffmpeg_framemd5(file: &Path) -> String {
    let out = Command::new("ffmpeg")
        .args(["-nostdin", "-v", "error"])
        .arg("-i")
        .arg(file)
        .args(["-autoscale", "0", "-f", "framemd5", "-"])
        .output()
        .unwrap_or_else(|e| panic!("ffmpeg: {e}"));
    assert!(
        out.status.success(),
        "ffmpeg framemd5 of {}",
        file.display()
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// FFmpeg's frame list of a row (`Expected`).
fn expected_frames(clip: &Clip) -> Vec<Frame> {
    let media = media::dir();
    match clip.expected {
        Expected::Whole => frames(&ffmpeg_framemd5(&media.join(clip.file))),
        Expected::PartsEndToEnd(parts) => {
            let mut list: Vec<Frame> = Vec::new();
            for part in parts {
                let text = ffmpeg_framemd5(&media.join(part));
                let start = list.last().map_or(0, |f| f.pts_us + f.duration_us);
                list.extend(frames(&text).into_iter().map(|f| Frame {
                    pts_us: f.pts_us + start,
                    ..f
                }));
            }
            list
        }
    }
}

/// Frame lists as text for a failure message: `pts_us WxH` per frame.
fn render(clip: &Clip, frames: &[Frame]) -> String {
    frames
        .iter()
        .map(|f| format!("{} {}", f.pts_us, size_name(clip, f.bytes)))
        .collect::<Vec<_>>()
        .join(", ")
}

fn read(result: &GuestResult, name: &str) -> String {
    result.read_result(name).unwrap_or_default()
}

/// The failures of the framemd5 run of one row.
fn framemd5_failures(result: &GuestResult, clip: &Clip) -> Vec<String> {
    let name = run_name(clip);
    let rc = read(result, &format!("{name}.md5.rc"));
    let log = read(result, &format!("{name}.md5.log"));
    let out = read(result, &format!("{name}.md5"));
    let mut failures = Vec::new();
    if rc.trim() != "0" {
        failures.push(format!("framemd5 exit status {:?}:\n{log}", rc.trim()));
    }
    if log.contains("panicked") {
        failures.push(format!("framemd5 panicked:\n{log}"));
    }
    if !log.contains("decoder=v4l2-stateless") {
        failures.push(format!("framemd5 not decoded through V4L2:\n{log}"));
    }
    let expected = expected_frames(clip);
    let got = if out.contains("#tb 0:") {
        frames(&out)
    } else {
        Vec::new()
    };
    // Time bases may differ (FFmpeg's and reel's, e.g. 1/30 against
    // 90 kHz): a pts matches within a millisecond.
    let same = got.len() == expected.len()
        && got
            .iter()
            .zip(&expected)
            .all(|(g, e)| g.bytes == e.bytes && (g.pts_us - e.pts_us).abs() <= 1000);
    if !same {
        failures.push(format!(
            "frame list (pts in us from the first, size) differs:\n    FFmpeg ({}): {}\n    reel ({}): {}",
            expected.len(),
            render(clip, &expected),
            got.len(),
            render(clip, &got)
        ));
    }
    failures
}

/// The `dmabuf_sizes` of a reel-watch.py snapshot, as the set of sizes.
fn dmabuf_sizes(snapshot: &str) -> BTreeSet<String> {
    snapshot
        .lines()
        .find_map(|l| l.strip_prefix("dmabuf_sizes="))
        .unwrap_or_default()
        .split(',')
        .filter(|s| !s.is_empty())
        .filter_map(|s| s.split_once('x').map(|(_, size)| size.to_string()))
        .collect()
}

/// The failures of the weston session of one row.
fn session_failures(result: &GuestResult, clip: &Clip, session: Session) -> Vec<String> {
    let name = run_name(clip);
    let rc = read(result, &format!("{name}.rc"));
    let log = read(result, &format!("{name}.log"));
    let steps = read(result, &format!("{name}.session"));
    let weston = read(result, &format!("weston-{name}.log"));
    let tail = |text: &str| {
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    };
    let mut failures = Vec::new();
    if rc.trim() != "0" {
        failures.push(format!(
            "session exit status {:?}:\n{steps}\n{}",
            rc.trim(),
            tail(&log)
        ));
    }
    if log.contains("panicked") {
        failures.push(format!("session panicked:\n{}", tail(&log)));
    }
    match reel_output::stats(&log) {
        Some(stats) => {
            let count = |key: &str| stats.get(key).copied().unwrap_or(u64::MAX);
            let presented = count("presented");
            if presented == 0 || count("zero_copy_frames") != presented || count("copy_frames") != 0
            {
                failures.push(format!(
                    "not every presented frame zero-copy: presented={presented} zero_copy_frames={} copy_frames={}",
                    count("zero_copy_frames"),
                    count("copy_frames")
                ));
            }
        }
        None => failures.push(format!("session: no stats line:\n{}", tail(&log))),
    }
    let errors = weston_log::protocol_errors(&weston);
    if !errors.is_empty() || weston.is_empty() {
        failures.push(format!(
            "weston's log: protocol errors {errors:?} (log of {} bytes)",
            weston.len()
        ));
    }
    // The picture shown after the seek: the last segment's size, at a
    // frame's pts (FFmpeg's list, from the first frame) at the target.
    let last = *clip.sizes.last().expect("a row has sizes");
    let shown = steps
        .lines()
        .filter_map(|l| l.strip_prefix("shown\t"))
        .filter_map(reel_output::status)
        .nth(1);
    match shown {
        Some(status) => {
            let size = (
                status
                    .get("width")
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0),
                status
                    .get("height")
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0),
            );
            let position = status
                .get("position")
                .and_then(|v| v.parse::<f64>().ok())
                .unwrap_or(f64::NAN);
            let position_us = (position * 1e6).round() as i64;
            let expected = expected_frames(clip);
            let frame = expected
                .iter()
                .find(|f| (f.pts_us - position_us).abs() <= 1000);
            if size != last {
                failures.push(format!(
                    "after the seek to {} s: a {}x{} picture, not {}x{}",
                    session.seek, size.0, size.1, last.0, last.1
                ));
            }
            let near = (position - session.seek).abs() < 0.05;
            if !near || frame.is_none_or(|f| f.bytes != picture_bytes(last)) {
                failures.push(format!(
                    "after the seek to {} s: position {position} is not the pts of a {}x{} frame there (FFmpeg: {})",
                    session.seek,
                    last.0,
                    last.1,
                    render(clip, &expected)
                ));
            }
        }
        None => failures.push(format!("no picture shown after the seek:\n{steps}")),
    }
    // Once the new size is shown (and weston had a second to let the old
    // buffers go), reel's dmabufs are of one size, not the first
    // segment's unless the last has the same size.
    let before = dmabuf_sizes(&read(result, &format!("{name}.before")));
    let after = dmabuf_sizes(&read(result, &format!("{name}.after")));
    let same_ends = clip.sizes.first() == clip.sizes.last();
    if before.is_empty() || after.len() != 1 || (!same_ends && !before.is_disjoint(&after)) {
        failures.push(format!(
            "dmabuf sizes: {before:?} at the start, {after:?} after the seek: the old size's not all released"
        ));
    }
    failures
}

/// Every check of every row of `clips`, failures reported at once.
fn check_rows(clips: &[Clip], result: &GuestResult) {
    let mut report = Vec::new();
    for clip in clips {
        let mut failures = framemd5_failures(result, clip);
        if let Some(session) = clip.session {
            failures.extend(session_failures(result, clip, session));
        }
        if !failures.is_empty() {
            report.push(format!(
                "{} ({}; {}):\n  {}",
                clip.file,
                clip.made,
                clip.exercises,
                failures.join("\n  ")
            ));
        }
    }
    assert!(
        report.is_empty(),
        "{} of {} clips failed:\n{}",
        report.len(),
        clips.len(),
        report.join("\n")
    );
}

#[test]
fn every_clip_follows_its_resolution_changes() {
    static RUNS: OnceLock<GuestResult> = OnceLock::new();
    check_rows(CLIPS, runs(CLIPS, &RUNS, SAVE_DIR));
}
