//! Gapless playlists in weston 14 (kiosk shell, fullscreen, as signage
//! plays them): six short files mixing codecs, sizes, frame rates (25,
//! 29.97, 50) and containers, looped through 20 and more transitions. From
//! weston's presentation feedback (reel's "frame on screen" log: each
//! frame's epoch, which names its file, pts and presentation time):
//! - at every transition the first frame of the incoming file is shown
//!   when the last of the outgoing one has had its time, give or take half
//!   a frame interval of the incoming file: the gap (the last frame to the
//!   first) at most the outgoing interval plus half the incoming one, 1.5
//!   frame intervals between files of one rate. (The last frame of a 30 fps
//!   file is due on screen for 33 ms, so a gap into a 50 fps file cannot be
//!   within 1.5 of its 20 ms intervals.)
//! - every frame of every file is presented, once.
//! - each file after the first was opened and decoding before its turn
//!   (reel's log says so at every transition).

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::support::compositor::Weston;
use crate::support::media;
use crate::support::reel_output::{frames_on_screen, OnScreen};
use crate::support::reel_process::Reel;
use crate::support::sound_server::one_at_a_time;

/// A 120 Hz output: frames of 25, 29.97 and 50 fps each land within a
/// refresh of their time, so that the gap measured is the player's.
const REFRESH_MILLIHERTZ: u32 = 120_000;
const TRANSITIONS: usize = 20;

struct Clip {
    path: PathBuf,
    /// Frame interval.
    interval: Duration,
    frames: usize,
}

fn clip(name: &str, size: &str, rate: &str, codec: &[&str]) -> Clip {
    let path = media::encoded(
        "gapless-media",
        name,
        &format!("testsrc2=size={size}:rate={rate}:duration=0.6"),
        codec,
    );
    let (num, den) = rate.split_once('/').unwrap_or((rate, "1"));
    let fps = num.parse::<f64>().expect("rate") / den.parse::<f64>().expect("rate");
    Clip {
        frames: media::frame_count(&path),
        interval: Duration::from_secs_f64(1.0 / fps),
        path,
    }
}

fn playlist() -> Vec<Clip> {
    vec![
        clip(
            "h264_bframes_25.mp4",
            "640x360",
            "25",
            &["-c:v", "libx264", "-preset", "ultrafast", "-bf", "2"],
        ),
        clip(
            "h264_30000_1001.mkv",
            "480x270",
            "30000/1001",
            &["-c:v", "libx264", "-preset", "ultrafast", "-bf", "0"],
        ),
        clip(
            "hevc_50.mp4",
            "320x240",
            "50",
            &[
                "-c:v",
                "libx265",
                "-preset",
                "ultrafast",
                "-x265-params",
                "log-level=error",
            ],
        ),
        clip(
            "vp9_25.webm",
            "352x288",
            "25",
            &[
                "-c:v",
                "libvpx-vp9",
                "-deadline",
                "realtime",
                "-cpu-used",
                "8",
            ],
        ),
        clip(
            "mpeg2_25.ts",
            "640x360",
            "25",
            &["-c:v", "mpeg2video", "-q:v", "4"],
        ),
        clip(
            "vp8_30000_1001.ivf",
            "400x224",
            "30000/1001",
            &["-c:v", "libvpx", "-deadline", "realtime", "-cpu-used", "8"],
        ),
    ]
}

/// The presentations in runs of one epoch each, in order.
fn runs(shown: &[OnScreen]) -> Vec<&[OnScreen]> {
    shown.chunk_by(|a, b| a.epoch == b.epoch).collect()
}

/// The gaps of every whole transition, reported, and those too long.
fn late_transitions(clips: &[Clip], runs: &[&[OnScreen]]) -> (String, Vec<usize>) {
    let mut report = String::new();
    let mut too_long = Vec::new();
    for transition in transitions(clips, runs) {
        report += &format!(
            "transition {} into {}: {:.1?} (at most {:.1?})\n",
            transition.index,
            transition.incoming.path.display(),
            transition.gap,
            transition.allowed(),
        );
        if transition.gap > transition.allowed() {
            too_long.push(transition.index);
        }
    }
    (report, too_long)
}

/// Plays `clips` looped until `transitions` file changes were presented;
/// the presentations.
fn play_looped(clips: &[Clip], transitions: usize) -> (Vec<OnScreen>, String) {
    let weston = Weston::start_at(640, 480, "kiosk", "gl", REFRESH_MILLIHERTZ);
    let files: Vec<&std::path::Path> = clips.iter().map(|c| c.path.as_path()).collect();
    let args = ["--loop", "--fullscreen"];
    let mut reel = Reel::spawn(&weston.client_env(), weston.runtime_dir(), &args, &files);
    let started = Instant::now();
    let limit = Duration::from_secs(60);
    loop {
        let log = reel.log();
        if runs(&frames_on_screen(&log)).len() > transitions + 1 {
            break;
        }
        assert!(
            started.elapsed() < limit,
            "{transitions} transitions not played in {limit:?}\n{log}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(reel.quit().success(), "{}", reel.log());
    assert!(weston.protocol_errors().is_empty(), "{}", weston.log());
    let log = reel.log();
    (frames_on_screen(&log), log)
}

struct Transition<'a> {
    index: usize,
    /// The last frame of the outgoing file to the first of the incoming.
    gap: Duration,
    outgoing: &'a Clip,
    incoming: &'a Clip,
}

impl Transition<'_> {
    /// The outgoing file's last frame has its time, and the incoming
    /// file's first follows within half of its frame interval.
    fn allowed(&self) -> Duration {
        self.outgoing.interval + self.incoming.interval / 2
    }
}

/// Each transition into a whole run (the last is cut short by the quit).
fn transitions<'a>(clips: &'a [Clip], runs: &[&[OnScreen]]) -> Vec<Transition<'a>> {
    (1..runs.len() - 1)
        .map(|index| {
            let last = runs[index - 1].last().expect("a run has frames").shown;
            Transition {
                index,
                gap: runs[index][0].shown.saturating_sub(last),
                outgoing: &clips[(index - 1) % clips.len()],
                incoming: &clips[index % clips.len()],
            }
        })
        .collect()
}

#[test]
fn a_looped_playlist_of_six_files_has_no_gap_at_its_transitions() {
    // Timing: not beside another test's players.
    let _serial = one_at_a_time();
    let clips = playlist();
    let (shown, log) = play_looped(&clips, TRANSITIONS);
    let runs = runs(&shown);
    let (report, too_long) = late_transitions(&clips, &runs);
    eprint!("{report}");
    assert!(
        too_long.is_empty(),
        "transitions {too_long:?} showed the next file's first frame late:\n{report}\n{log}"
    );
    let ahead = log.matches("the entry opened ahead plays").count();
    assert!(
        ahead >= TRANSITIONS,
        "only {ahead} of the transitions played an entry opened ahead\n{report}"
    );
    // Every frame of every whole run presented, once.
    for (i, run) in runs.iter().enumerate().take(runs.len() - 1) {
        let clip = &clips[i % clips.len()];
        let distinct: BTreeSet<Duration> = run.iter().map(|s| s.pts).collect();
        assert_eq!(
            distinct.len(),
            run.len(),
            "run {i} ({}) presented a frame twice",
            clip.path.display()
        );
        assert_eq!(
            run.len(),
            clip.frames,
            "run {i} ({}) presented {} of its {} frames\n{report}",
            clip.path.display(),
            run.len(),
            clip.frames
        );
    }
}

#[test]
fn a_file_looped_alone_is_gapless_too() {
    // Timing: not beside another test's players.
    let _serial = one_at_a_time();
    let clips: Vec<Clip> = playlist().into_iter().take(1).collect();
    let (shown, log) = play_looped(&clips, 4);
    let runs = runs(&shown);
    let (report, too_long) = late_transitions(&clips, &runs);
    eprint!("{report}");
    assert!(
        too_long.is_empty(),
        "loops {too_long:?} showed the first frame late:\n{report}\n{log}"
    );
    assert!(
        log.matches("the entry opened ahead plays").count() >= 4,
        "the loops did not play the file opened ahead\n{report}"
    );
}
