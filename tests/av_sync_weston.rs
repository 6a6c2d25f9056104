//! Picture and sound in sync, measured outside reel: a clip with a white
//! flash and a beep at the same pts every second plays into weston 14
//! (headless) and a PipeWire null sink. When each flash reached the screen
//! is weston's wp_presentation feedback (reel logs it at debug); when each
//! beep was played is read off a recording of the sink's monitor, dated on
//! the same clock (CLOCK_MONOTONIC). Their distance must stay within 40 ms,
//! also after an exact seek and a pause, on a 60 Hz output.
//!
//! The binary holds reel's tests that measure timing against weston's
//! presentation feedback, run alone (tests/suite-times.tsv): besides A/V
//! sync, gapless playlist transitions (`playlist_gapless`), players on
//! one schedule (`video_wall`) and playback speed (`speed`).

mod support;

#[path = "timing/playlist_gapless.rs"]
mod playlist_gapless;
#[path = "timing/speed.rs"]
mod speed;
#[path = "timing/video_wall.rs"]
mod video_wall;

use std::path::PathBuf;
use std::thread::sleep;
use std::time::Duration;

use support::compositor::Weston;
use support::pcm;
use support::reel_process::Reel;
use support::sound_server::{monotonic_now, one_at_a_time, SoundServer, Timed, RATE};

const SECONDS: u32 = 20;
const TOLERANCE: Duration = Duration::from_millis(40);

/// Black 320x240 at 25 fps with one white frame at every whole second;
/// a 100 ms 1 kHz beep starting at every whole second (FLAC: exact).
fn flash_and_beep() -> PathBuf {
    flashes_with(
        "flash_beep.mkv",
        SECONDS,
        "0.5*cos(2*PI*1000*t)*lt(mod(t\\,1)\\,0.1)",
    )
}

/// `name`: black 320x240 at 25 fps for `seconds`, one white frame at every
/// whole second, over the sound `audio` (an aevalsrc expression), in
/// Matroska with FLAC.
fn flashes_with(name: &str, seconds: u32, audio: &str) -> PathBuf {
    let video = format!(
        "color=black:size=320x240:rate=25:duration={seconds},\
         drawbox=color=white:thickness=fill:enable='eq(mod(n\\,25)\\,0)'"
    );
    let audio = format!("aevalsrc='{audio}':s={RATE}:d={seconds}");
    pcm::made(
        name,
        &[
            "-f",
            "lavfi",
            "-i",
            &video,
            "-f",
            "lavfi",
            "-i",
            &audio,
            "-c:v",
            "libx264",
            "-preset",
            "ultrafast",
            "-g",
            "25",
            "-pix_fmt",
            "yuv420p",
            "-c:a",
            "flac",
            "-ac",
            "2",
        ],
    )
}

/// When each frame reached the screen, on CLOCK_MONOTONIC: (pts, shown)
/// from reel's log of weston's presentation feedback.
fn presentations(log: &str) -> Vec<(Duration, Duration)> {
    support::reel_output::frames_on_screen(log)
        .iter()
        .map(|frame| {
            assert!(frame.clock >= 0, "weston gave no presentation clock");
            // The presentation clock read against CLOCK_MONOTONIC now (the
            // same clock, or one that drifts from it by parts per million).
            let reading =
                nix::time::clock_gettime(nix::time::ClockId::from_raw(frame.clock as i32))
                    .expect("the presentation clock");
            let reading = Duration::new(reading.tv_sec() as u64, reading.tv_nsec() as u32);
            (frame.pts, monotonic_now() + frame.shown - reading)
        })
        .collect()
}

/// When each beep began: the first sample above half its level after at
/// at least 50 ms of quiet, on CLOCK_MONOTONIC, with the uncertainty of that
/// date.
fn beeps(recording: &Timed) -> Vec<(Duration, Duration)> {
    let mono = pcm::mono(&recording.samples);
    let mut onsets = Vec::new();
    let mut quiet_since = 0usize;
    for (i, &sample) in mono.iter().enumerate() {
        if sample.abs() < 0.01 {
            continue;
        }
        if sample.abs() > 0.25 && i - quiet_since > RATE as usize / 20 {
            onsets.push(recording.time_of(i));
        }
        quiet_since = i;
    }
    onsets
}

/// The flashes shown while sound played (pts k s), each against the
/// nearest beep: (pts, flash shown - beep played, the beep's dating
/// uncertainty).
fn offsets(
    shown: &[(Duration, Duration)],
    beeps: &[(Duration, Duration)],
) -> Vec<(Duration, f64, Duration)> {
    shown
        .iter()
        .filter(|(pts, _)| pts.subsec_micros() == 0 && !pts.is_zero())
        .filter_map(|&(pts, at)| {
            let (beep, spread) = beeps.iter().min_by_key(|(beep, _)| beep.abs_diff(at))?;
            let offset = at.as_secs_f64() - beep.as_secs_f64();
            (offset.abs() < 0.5).then_some((pts, offset, *spread))
        })
        .collect()
}

/// Attempts at a measurement the recording can be trusted for.
const ATTEMPTS: usize = 3;

#[test]
fn flashes_reach_the_screen_with_their_beeps_also_after_a_seek_and_a_pause() {
    let _serial = one_at_a_time();
    until_trusted(&flash_and_beep(), measure_once);
}

/// `measure` of `clip` until a recording can be trusted (Ok), at most
/// `ATTEMPTS` times.
fn until_trusted(clip: &std::path::Path, measure: fn(&std::path::Path) -> Result<(), String>) {
    let mut doubts = Vec::new();
    for attempt in 1..=ATTEMPTS {
        match measure(clip) {
            Ok(()) => return,
            Err(doubt) => {
                eprintln!("attempt {attempt}: the recording cannot be trusted: {doubt}");
                doubts.push(doubt);
            }
        }
    }
    panic!(
        "no trustworthy recording in {ATTEMPTS} attempts:\n{}",
        doubts.join("\n\n")
    );
}

/// A sound server recording from now, weston (640x480, kiosk, GL) at
/// `refresh_millihertz`, and the environment a client of both needs.
fn recorded_screen(
    refresh_millihertz: u32,
) -> (
    SoundServer,
    Weston,
    Vec<(String, String)>,
    support::sound_server::TimedRecording,
) {
    let server = SoundServer::start();
    let weston = Weston::start_at(640, 480, "kiosk", "gl", refresh_millihertz);
    let mut env = server.client_env();
    env.push((
        "WAYLAND_DISPLAY".into(),
        weston.socket_path().display().to_string(),
    ));
    let recording = server.record_timed();
    (server, weston, env, recording)
}

/// One playback, its flashes against its beeps. Panics when a flash
/// measured is out of sync (reel's fault); Err when the recording cannot
/// be trusted (too coarse, or beeps missing: a loaded machine's sound
/// server now and then skips cycles of the recording), for another try.
fn measure_once(clip: &std::path::Path) -> Result<(), String> {
    // A monitor's 60 Hz: each frame can only go to a vblank, which reel
    // aims at from weston's presentation feedback.
    let (server, _weston, env, recording) = recorded_screen(60_000);
    let mut reel = Reel::spawn(&env, server.runtime_dir(), &["--stats"], &[clip]);
    reel.wait_for("playback", |s| {
        s["position"].parse::<f64>().is_ok_and(|p| p > 4.5)
    });
    // Exactly to the frame before a flash: the first frame after a seek
    // is shown while the sound starts (as the very first is), the flash is
    // the next.
    assert_eq!(reel.command("seek 8.96"), "ok");
    reel.wait_for("the seek", |s| {
        s["position"].parse::<f64>().is_ok_and(|p| p > 11.2)
    });
    assert_eq!(reel.command("pause"), "ok");
    sleep(Duration::from_millis(700));
    assert_eq!(reel.command("resume"), "ok");
    let status = reel.wait_exit();
    sleep(Duration::from_millis(300));
    let recording = recording.stop();
    let log = reel.log();
    assert!(status.success(), "{log}");

    let shown = presentations(&log);
    let beeps = beeps(&recording);
    let offsets = offsets(&shown, &beeps);
    let report = offsets
        .iter()
        .map(|(pts, offset, spread)| {
            format!(
                "{:>4.1}s {:+6.1} ms (beep dated within {:.1} ms)",
                pts.as_secs_f64(),
                offset * 1e3,
                spread.as_secs_f64() * 1e3
            )
        })
        .collect::<Vec<_>>()
        .join("\n");
    eprintln!("flash shown - beep played, by flash pts:\n{report}");
    // Flashes at 1-4 s, 9-11 s (after the seek) and 12-19 s (after the
    // pause). The first frame (0 s) is on screen before sound can be
    // heard: not counted. Most of each stretch must be measured (a beep at
    // 3 s once went unrecorded with its flash on screen on time).
    let seconds: Vec<u64> = offsets.iter().map(|(pts, ..)| pts.as_secs()).collect();
    let coverage = [(1..=4, 3), (9..=11, 2), (12..=19, 6)]
        .into_iter()
        .map(|(stretch, wanted)| {
            (
                stretch.clone().filter(|s| seconds.contains(s)).count(),
                wanted,
                stretch,
            )
        })
        .find(|(measured, wanted, _)| measured < wanted);
    if let Some((measured, wanted, stretch)) = coverage {
        return Err(format!(
            "{measured} flashes of {stretch:?} s seen with their beeps, of {wanted} wanted: \
             {seconds:?}\n{} beeps, {} frames shown; the recording began {:+.3} s from the \
             first frame on screen\n{report}",
            beeps.len(),
            shown.len(),
            recording.time_of(0).0.as_secs_f64() - shown.first().map_or(0.0, |s| s.1.as_secs_f64())
        ));
    }
    // The reads of the recording come at the pace of the sink's cycles, so
    // the beeps are dated to a few ms (a busy machine delays some reads,
    // which the dating leaves aside).
    let mut spreads: Vec<Duration> = offsets.iter().map(|(.., spread)| *spread).collect();
    spreads.sort();
    if spreads[spreads.len() / 2] >= Duration::from_millis(10) {
        return Err(format!("beeps dated too coarsely\n{report}"));
    }
    // A recording to trust: every flash measured in sync.
    for (pts, offset, _) in &offsets {
        assert!(
            offset.abs() <= TOLERANCE.as_secs_f64(),
            "the flash at {pts:?} was {:.1} ms from its beep\n{report}",
            offset * 1e3
        );
    }
    Ok(())
}

/// A sound server and weston (640x480, kiosk), and the environment a
/// client of both needs.
fn sound_and_screen() -> (SoundServer, Weston, Vec<(String, String)>) {
    let server = SoundServer::start();
    let weston = Weston::start(640, 480);
    let mut env = server.client_env();
    env.push((
        "WAYLAND_DISPLAY".into(),
        weston.socket_path().display().to_string(),
    ));
    (server, weston, env)
}

fn half_a_second_in(reel: &mut Reel) {
    reel.wait_for("playback", |s| {
        s["position"].parse::<f64>().is_ok_and(|p| p > 0.5)
    });
}

#[test]
fn a_file_without_picture_plays_in_a_black_window_that_takes_keys() {
    let _serial = one_at_a_time();
    let music = pcm::made(
        "tone_only.flac",
        &[
            "-f",
            "lavfi",
            "-i",
            "sine=frequency=440:sample_rate=48000:duration=3",
        ],
    );
    let (server, weston, env) = sound_and_screen();
    let recording = server.record_timed();
    let mut reel = Reel::spawn(&env, server.runtime_dir(), &[], &[&music]);
    half_a_second_in(&mut reel);
    // The window is there, black.
    let shot = weston.screenshot();
    let [r, g, b] = shot.pixel(320, 240);
    assert!(r < 8 && g < 8 && b < 8, "not black: {:?}", [r, g, b]);
    // Its position moves with the sound, and it pauses.
    assert_eq!(reel.command("pause"), "ok");
    let paused = reel.settled()["position"].clone();
    sleep(Duration::from_millis(400));
    assert_eq!(reel.status()["position"], paused);
    assert_eq!(reel.command("resume"), "ok");
    let status = reel.wait_exit();
    let recording = recording.stop();
    assert!(status.success(), "{}", reel.log());
    let heard = pcm::rms(&pcm::mono(&recording.samples));
    assert!(
        heard > 0.01,
        "no sound recorded: rms {heard}\n{}",
        reel.log()
    );
}

#[test]
fn a_file_with_cover_art_plays_under_its_picture() {
    let _serial = one_at_a_time();
    // A red 300x200 cover (FLAC's PICTURE block), letterboxed in a 640x480
    // window: scaled to 640x427, black bands above and below.
    let music = pcm::made(
        "tone_with_cover.flac",
        &[
            "-f",
            "lavfi",
            "-i",
            "sine=frequency=440:sample_rate=48000:duration=2",
            "-f",
            "lavfi",
            "-i",
            "color=c=red:size=300x200:duration=0.04",
            "-frames:v",
            "1",
            "-map",
            "0",
            "-map",
            "1",
            "-c:a",
            "flac",
            "-c:v",
            "png",
            "-disposition:v:0",
            "attached_pic",
        ],
    );
    let (server, weston, env) = sound_and_screen();
    let mut reel = Reel::spawn(&env, server.runtime_dir(), &[], &[&music]);
    half_a_second_in(&mut reel);
    let shot = weston.screenshot();
    let [r, g, b] = shot.pixel(320, 240);
    assert!(
        r > 200 && g < 60 && b < 60,
        "the centre is not the cover's red: {:?}\n{}",
        [r, g, b],
        reel.log()
    );
    let [r, g, b] = shot.pixel(320, 5);
    assert!(
        r < 8 && g < 8 && b < 8,
        "no black band above: {:?}",
        [r, g, b]
    );
    let status = reel.wait_exit();
    assert!(status.success(), "{}", reel.log());
    assert!(
        reel.log()
            .contains("no video stream: the sound over cover art"),
        "{}",
        reel.log()
    );
}
