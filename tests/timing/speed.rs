//! Playback speed in weston 14 with sound, measured outside reel as the
//! A/V sync test measures (weston's presentation feedback for the picture,
//! a dated recording of the sink for the sound): a clip with a white flash
//! and a 300 ms 440 Hz tone at every whole second plays from `--speed 2`,
//! then at 0.5x (`speed 0.5` on the control socket). At each speed:
//! - the flashes reach the screen 1/speed s apart (wall time = media time /
//!   speed within 2 %);
//! - each flash is within 40 ms of its tone's start;
//! - the tone is still 440 Hz (within 1 %): the sound is time-stretched,
//!   not resampled.

use std::path::PathBuf;
use std::time::Duration;

use crate::support::pcm;
use crate::support::reel_process::Reel;
use crate::support::sound_server::{one_at_a_time, Timed, RATE};

const SECONDS: u32 = 12;
const TONE: f64 = 440.0;

/// Flashes at every whole second with a 300 ms 440 Hz tone starting at
/// each.
fn flash_and_tone() -> PathBuf {
    super::flashes_with(
        "flash_tone_12s.mkv",
        SECONDS,
        &format!("0.5*sin(2*PI*{TONE}*t)*lt(mod(t\\,1)\\,0.3)"),
    )
}

/// The frequency of the tone in `samples` (mono): the median of its
/// periods, each between two rising zero crossings placed between their
/// samples (a cycle the sink skipped on a busy machine moves one period,
/// not the median).
fn frequency(samples: &[f32]) -> Option<f64> {
    let crossings: Vec<f64> = samples
        .windows(2)
        .enumerate()
        .filter(|(_, w)| w[0] < 0.0 && w[1] >= 0.0)
        .map(|(i, w)| i as f64 + f64::from(w[0] / (w[0] - w[1])))
        .collect();
    let mut periods: Vec<f64> = crossings.windows(2).map(|w| w[1] - w[0]).collect();
    if periods.len() < 10 {
        return None;
    }
    periods.sort_by(f64::total_cmp);
    Some(f64::from(RATE) / periods[periods.len() / 2])
}

/// When each tone began: the first sample at half the tone's level after
/// at least 50 ms of quiet, on CLOCK_MONOTONIC, with the uncertainty of
/// that date. Half the level, not the first sound: the stretch's windows
/// fade a tone in over a few ms (tens at 0.5x), as a listener hears it.
fn tone_onsets(recording: &Timed) -> Vec<(Duration, Duration)> {
    let mono = pcm::mono(&recording.samples);
    let level = mono.iter().fold(0f32, |max, x| max.max(x.abs()));
    let mut onsets = Vec::new();
    let mut last_sound: Option<usize> = None;
    let mut rising = false;
    for (i, sample) in mono.iter().enumerate() {
        if sample.abs() < 0.01 {
            continue;
        }
        if last_sound.is_none_or(|last| i - last > RATE as usize / 20) {
            rising = true;
        }
        if rising && sample.abs() >= level / 2.0 {
            onsets.push(recording.time_of(i));
            rising = false;
        }
        last_sound = Some(i);
    }
    onsets
}

/// The tone's frequency in the middle half of each tone heard (the
/// stretch's joins at a tone's edges are left aside).
fn pitches(recording: &Timed, onsets: &[(Duration, Duration)], wall_length: f64) -> Vec<f64> {
    let mono = pcm::mono(&recording.samples);
    let start_of_recording = recording.time_of(0).0;
    onsets
        .iter()
        .filter_map(|(onset, _)| {
            let from = onset.checked_sub(start_of_recording)?.as_secs_f64() + wall_length / 4.0;
            let from = (from * f64::from(RATE)) as usize;
            let to = from + (wall_length / 2.0 * f64::from(RATE)) as usize;
            frequency(mono.get(from..to)?)
        })
        .collect()
}

/// The wall time between the first and the last flash of `flashes`
/// (pts, shown), against their media time.
fn wall_per_media(flashes: &[(Duration, Duration)]) -> Option<f64> {
    let (first, last) = (flashes.first()?, flashes.last()?);
    let media = (last.0 - first.0).as_secs_f64();
    (media >= 2.0).then(|| (last.1 - first.1).as_secs_f64() / media)
}

#[test]
fn at_half_and_twice_the_speed_the_picture_keeps_pace_and_the_tone_its_pitch() {
    let _serial = one_at_a_time();
    super::until_trusted(&flash_and_tone(), measure_once);
}

/// The recording dates a tone this closely or is not trusted for it (the
/// sink's reads come late on a busy machine).
const DATED_WITHIN: Duration = Duration::from_millis(10);

/// One playback from 2x to 0.5x. Panics when reel is out of pace, sync or
/// pitch; Err when the recording cannot be trusted, for another try.
fn measure_once(clip: &std::path::Path) -> Result<(), String> {
    // A 120 Hz output, as the gapless test's: 2x of 25 fps is 50 frames a
    // second, more than weston's GL renderer on llvmpipe repaints on these
    // machines (a frame each 25 ms at 60 Hz; at 120 Hz each 8.3 ms boundary
    // lets it keep up), and the player's late frames would be the
    // compositor's.
    let (server, _weston, env, recording) = super::recorded_screen(120_000);
    let mut reel = Reel::spawn(
        &env,
        server.runtime_dir(),
        &["--stats", "--speed", "2"],
        &[clip],
    );
    let status = reel.wait_for("playback at 2x", |s| {
        s["position"].parse::<f64>().is_ok_and(|p| p > 6.6)
    });
    assert_eq!(status["speed"], "2", "{status:?}");
    assert_eq!(reel.command("speed 0.5"), "ok");
    let status = reel.settled();
    assert_eq!(status["speed"], "0.5", "{status:?}");
    let exit = reel.wait_exit();
    std::thread::sleep(Duration::from_millis(300));
    let recording = recording.stop();
    let log = reel.log();
    assert!(exit.success(), "{log}");

    let shown = super::presentations(&log);
    let onsets = tone_onsets(&recording);
    let offsets = super::offsets(&shown, &onsets);
    let flashes: Vec<(Duration, Duration)> = shown
        .iter()
        .filter(|(pts, _)| pts.subsec_micros() == 0)
        .copied()
        .collect();
    // 2x until 6.6 s at least (from 2 s: the first frames wait for the
    // sound to start); 0.5x from the next flash after the change.
    let fast: Vec<_> = flashes
        .iter()
        .filter(|(pts, _)| (2..=6).contains(&pts.as_secs()))
        .copied()
        .collect();
    let slow: Vec<_> = flashes
        .iter()
        .filter(|(pts, _)| pts.as_secs() >= 8)
        .copied()
        .collect();
    let report =
        format!("flashes (pts, shown): {flashes:?}\noffsets: {offsets:?}\ntones at: {onsets:?}");
    for (speed, flashes) in [(2.0, &fast), (0.5, &slow)] {
        let ratio = wall_per_media(flashes)
            .unwrap_or_else(|| panic!("too few flashes at {speed}x\n{report}"));
        assert!(
            (ratio * speed - 1.0).abs() <= 0.02,
            "at {speed}x a media second took {ratio:.4} s on the wall\n{report}"
        );
    }
    // Each flash against its tone, at both speeds (the first frame comes
    // before any sound can be heard; the one at the change is left aside).
    let trusted: Vec<_> = offsets
        .iter()
        .filter(|(.., spread)| *spread < DATED_WITHIN)
        .collect();
    let measured: Vec<u64> = trusted.iter().map(|(pts, ..)| pts.as_secs()).collect();
    // At 2x a tone is 150 ms: a busy sink's late reads leave some undated.
    let fast_seen = (1..=6).filter(|s| measured.contains(s)).count();
    let slow_seen = (8..=11).filter(|s| measured.contains(s)).count();
    if fast_seen < 1 || slow_seen < 2 {
        return Err(format!(
            "flashes matched with well-dated tones: {measured:?}\n{report}"
        ));
    }
    for (pts, offset, _) in trusted {
        assert!(
            offset.abs() <= super::TOLERANCE.as_secs_f64(),
            "the flash at {pts:?} was {:.1} ms from its tone\n{report}",
            offset * 1e3
        );
    }
    // The tones: 150 ms on the wall at 2x, 600 ms at 0.5x.
    let start_of_slow = slow.first().map_or(Duration::MAX, |(_, at)| *at);
    let (fast_onsets, slow_onsets): (Vec<_>, Vec<_>) = onsets
        .iter()
        .partition(|(at, _)| *at < start_of_slow - Duration::from_millis(100));
    let fast_pitches = pitches(&recording, &fast_onsets, 0.15);
    let slow_pitches = pitches(&recording, &slow_onsets, 0.6);
    for (speed, pitches) in [(2.0, &fast_pitches), (0.5, &slow_pitches)] {
        assert!(
            pitches.len() >= 3,
            "{} tones measured at {speed}x\n{report}",
            pitches.len()
        );
        for pitch in pitches {
            assert!(
                (pitch / TONE - 1.0).abs() <= 0.01,
                "a tone at {speed}x was {pitch:.1} Hz: {pitches:?}"
            );
        }
    }
    eprintln!("pitches at 2x {fast_pitches:?}, at 0.5x {slow_pitches:?}");
    Ok(())
}
