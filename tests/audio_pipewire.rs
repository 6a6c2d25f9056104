//! Audio playback against a real sound server: PipeWire (with WirePlumber)
//! and a null sink, started per test; what reel plays is recorded from the
//! sink's monitor and compared with FFmpeg's decode of the same stream
//! after the same resampling (48 kHz stereo). Video goes nowhere
//! (`--output null` under `--control`: real time, as with a window).

mod support;

use std::path::Path;
use std::thread::sleep;
use std::time::{Duration, Instant};

use support::pcm::{self, find, gain, mono, ncc, silences};
use support::reel_output;
use support::reel_process::Reel;
use support::sound_server::{one_at_a_time, SoundServer, RATE};

const MS: usize = RATE as usize / 1000;

const AAC: &[&str] = &["-c:a", "aac", "-ac", "2"];
/// For the tests that seek: AAC decoded from a seek is not sample for sample
/// what it is decoded from the start (even FFmpeg's own seek correlates at
/// 0.990 with it), FLAC is.
const FLAC: &[&str] = &["-c:a", "flac", "-ac", "2"];

fn pink(seed: u32, rate: u32) -> String {
    format!("anoisesrc=color=pink:seed={seed}:amplitude=0.5:sample_rate={rate}")
}

fn stereo_clip() -> std::path::PathBuf {
    pcm::clip("stereo_aac.mkv", 3.0, &pink(7, 48_000), AAC)
}

/// Plays `file` to its end with `args`; returns reel's exit status, its log
/// and the recording (mono).
fn play(server: &SoundServer, file: &Path, args: &[&str]) -> (i32, String, Vec<f32>) {
    let recording = server.record("play");
    let mut all = vec!["--output", "null", "--stats"];
    all.extend_from_slice(args);
    let mut reel = Reel::spawn(&server.client_env(), server.runtime_dir(), &all, &[file]);
    let status = reel.wait_exit();
    // What the server still holds plays out.
    sleep(Duration::from_millis(300));
    let recorded = mono(&recording.stop());
    (status.code().unwrap_or(-1), reel.log(), recorded)
}

/// The recording holds FFmpeg's decode of `file` (its first 100 ms and last
/// 400 ms aside: the start of playback and the tail reel's exit may cut)
/// at the same level: returns the correlation peak.
///
/// A machine too busy to run the sound server's graph on time leaves a gap
/// of zeros in the recording, which no player can prevent: where the
/// recording does not match whole, gaps of digital silence are cut out and
/// it is matched again. What was cut is bounded (100 ms within the
/// template) and printed, and reel itself must not have starved the output
/// (it logs when its queue runs dry).
fn assert_plays_as_ffmpeg(file: &Path, recorded: &[f32], log: &str) -> f64 {
    let oracle = mono(&pcm::decode(file, None, RATE, 2));
    let template = &oracle[100 * MS..oracle.len() - 400 * MS];
    let matched = |recorded: &[f32]| {
        find(template, recorded)
            .unwrap_or_else(|| panic!("recording too short ({} samples)\n{log}", recorded.len()))
    };
    let (mut lag, mut peak) = matched(recorded);
    let spliced;
    let mut recorded = recorded;
    if peak < 0.99 {
        let (kept, gaps) = pcm::without_dropouts(recorded, MS);
        let (new_lag, new_peak) = matched(&kept);
        // The gaps cut inside the span the template matched.
        let span = new_lag + 1..new_lag + template.len();
        let inside: Vec<_> = gaps
            .into_iter()
            .filter(|(at, _)| span.contains(at))
            .collect();
        let cut: usize = inside.iter().map(|&(_, len)| len).sum();
        eprintln!(
            "{}: peak {peak:.5} whole; {new_peak:.5} with {} gap(s) of silence cut ({:.1} ms in the template's span: {:?})",
            file.display(),
            inside.len(),
            cut as f64 / MS as f64,
            inside
                .iter()
                .map(|&(at, len)| format!("{:.1} ms at {:.1} s of what was kept", len as f64 / MS as f64, at as f64 / RATE as f64))
                .collect::<Vec<_>>()
        );
        assert!(
            !log.contains("the queue ran dry"),
            "{}: reel's own audio queue ran dry\n{log}",
            file.display()
        );
        assert!(
            cut <= 100 * MS,
            "{}: {:.1} ms of gaps\n{log}",
            file.display(),
            cut as f64 / MS as f64
        );
        spliced = kept;
        recorded = &spliced;
        (lag, peak) = (new_lag, new_peak);
    }
    let level = gain(&recorded[lag..lag + template.len()], template);
    eprintln!(
        "{}: correlation peak {peak:.5} at {:.1} ms, level {:+.2} dB",
        file.display(),
        lag as f64 / MS as f64,
        20.0 * level.log10()
    );
    assert!(
        peak >= 0.99,
        "{}: correlation peak {peak}\n{log}",
        file.display()
    );
    assert!(
        (20.0 * level.log10()).abs() < 0.5,
        "{}: level {level}\n{log}",
        file.display()
    );
    peak
}

fn warnings(log: &str) -> Vec<&str> {
    log.lines().filter(|l| l.contains(" WARN ")).collect()
}

#[test]
fn plays_the_default_audio_stream_as_ffmpeg_decodes_it() {
    let _serial = one_at_a_time();
    let server = SoundServer::start();
    let clip = stereo_clip();
    let (status, log, recorded) = play(&server, &clip, &[]);
    assert_eq!(status, 0, "{log}");
    assert!(warnings(&log).is_empty(), "{log}");
    assert_plays_as_ffmpeg(&clip, &recorded, &log);
    let stats = reel_output::fields(
        log.lines()
            .find(|l| l.starts_with("reel: stats:"))
            .unwrap_or_else(|| panic!("no stats line\n{log}")),
    );
    assert_eq!(
        stats.get("presented").map(String::as_str),
        Some("75"),
        "{log}"
    );
    assert_av_offset(&stats, &log);

    // Sound that starts 1 s after the picture waits for its time: the
    // picture is not hurried to it.
    let late = pcm::derived(
        &clip,
        "audio_starts_late.mkv",
        &[
            "-i",
            path_text(&clip),
            "-itsoffset",
            "1",
            "-i",
            path_text(&clip),
            "-map",
            "0:v",
            "-map",
            "1:a",
            "-t",
            "3",
            "-c",
            "copy",
        ],
    );
    let (status, log, recorded) = play(&server, &late, &[]);
    assert_eq!(status, 0, "{log}");
    let stats = reel_output::stats(&log).expect("stats");
    assert_eq!(reel_output::number(&stats, "presented"), 75, "{log}");
    assert_eq!(reel_output::number(&stats, "dropped_late"), 0, "{log}");
    let oracle = mono(&pcm::decode(&late, None, RATE, 2));
    let (_, peak) = find(&oracle[100 * MS..1500 * MS], &recorded).expect("the late sound");
    assert!(peak >= 0.99, "late sound: {peak}\n{log}");

    // --no-audio: silence, the video as before.
    let (status, log, recorded) = play(&server, &clip, &["--no-audio"]);
    assert_eq!(status, 0, "{log}");
    assert!(pcm::rms(&recorded) < 1e-4, "--no-audio played sound\n{log}");
}

#[test]
fn unusual_layouts_and_rates_are_converted_like_ffmpeg() {
    let _serial = one_at_a_time();
    let server = SoundServer::start();
    let clips = [
        // 5.1, planar float (AAC's decoder output), 44.1 kHz: downmixed.
        pcm::clip(
            "surround_51_aac_44k.mkv",
            1.5,
            &format!("{},aformat=channel_layouts=5.1", pink(11, 44_100)),
            &["-c:a", "aac"],
        ),
        // Mono 8 kHz, 16-bit integers.
        pcm::clip(
            "mono_8k_pcm.mkv",
            1.5,
            &pink(12, 8_000),
            &["-c:a", "pcm_s16le", "-ac", "1"],
        ),
        // 96 kHz stereo FLAC (32-bit integers).
        pcm::clip(
            "stereo_96k_flac.mkv",
            1.5,
            &format!("{},aformat=sample_fmts=s32", pink(13, 96_000)),
            &["-c:a", "flac", "-ac", "2"],
        ),
    ];
    // One playlist, on the output named as `reel probe` lists it: the
    // files' sound follows on one output stream (gapless playback).
    let probe = std::process::Command::new(env!("CARGO_BIN_EXE_reel"))
        .arg("probe")
        .envs(server.client_env())
        .output()
        .expect("cannot run reel probe");
    let probe = String::from_utf8_lossy(&probe.stdout).into_owned();
    let outputs: Vec<&str> = probe
        .lines()
        .skip_while(|l| !l.starts_with("Audio outputs"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .map(str::trim)
        .collect();
    assert!(
        outputs.contains(&"pipewire"),
        "reel probe lists no pipewire output: {outputs:?}\n{probe}"
    );
    let recording = server.record("playlist");
    let files: Vec<&Path> = clips.iter().map(|c| c.as_path()).collect();
    let mut reel = Reel::spawn(
        &server.client_env(),
        server.runtime_dir(),
        &["--output", "null", "--audio-device", "pipewire"],
        &files,
    );
    let status = reel.wait_exit();
    sleep(Duration::from_millis(300));
    let recorded = mono(&recording.stop());
    let log = reel.log();
    assert!(status.success(), "{log}");
    assert!(warnings(&log).is_empty(), "{log}");
    for clip in &clips {
        assert_plays_as_ffmpeg(clip, &recorded, &log);
    }
}

/// The tones of a playlist's files (frequency, sample rate): 1.2 s each,
/// 30 frames of picture, each tone ending on a whole cycle.
const TONES: [(u32, u32); 3] = [(440, 48_000), (550, 44_100), (660, 48_000)];

fn tone_clips() -> Vec<std::path::PathBuf> {
    TONES
        .iter()
        .map(|&(hz, rate)| {
            pcm::clip(
                &format!("tone_{hz}_{rate}_1200ms_flac.mkv"),
                1.2,
                &format!("aevalsrc=0.5*sin(2*PI*{hz}*t):s={rate}"),
                FLAC,
            )
        })
        .collect()
}

/// The tone's frequency in each 40 ms window of `x`, from its zero
/// crossings (±13 Hz).
fn tone_frequencies(x: &[f32]) -> Vec<f64> {
    let window = 40 * MS;
    x.chunks_exact(window)
        .map(|w| {
            let crossings = w
                .windows(2)
                .filter(|p| (p[0] < 0.0) != (p[1] < 0.0))
                .count();
            crossings as f64 / 2.0 / 0.040
        })
        .collect()
}

/// The longest run of samples in `x` quieter than a tone at half scale
/// ever is but for a sample at a zero crossing, in ms.
fn longest_quiet_ms(x: &[f32]) -> f64 {
    let (mut longest, mut run) = (0, 0);
    for &s in x {
        run = if s.abs() < 0.01 { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    longest as f64 / MS as f64
}

/// Plays the tone playlist with `args`, `meanwhile` driving reel; for
/// each change of file, where the recording changes tone and the longest
/// silence around it (ms). Each tone lasts `seconds` of the recording
/// (±0.2 s), the first `first_seconds`.
fn tone_transitions(
    server: &SoundServer,
    args: &[&str],
    (first_seconds, seconds): (f64, f64),
    meanwhile: impl FnOnce(&mut Reel),
) -> (Vec<(usize, f64)>, String) {
    let clips = tone_clips();
    let files: Vec<&Path> = clips.iter().map(|c| c.as_path()).collect();
    let recording = server.record("tones");
    let mut all = vec!["--output", "null", "--stats"];
    all.extend_from_slice(args);
    let mut reel = Reel::spawn(&server.client_env(), server.runtime_dir(), &all, &files);
    meanwhile(&mut reel);
    let status = reel.wait_exit();
    sleep(Duration::from_millis(300));
    let recorded = mono(&recording.stop());
    let log = reel.log();
    assert!(status.success(), "{status}\n{log}");
    let near = |f: f64, hz: u32| (f - f64::from(hz)).abs() < 30.0;
    let frequencies = tone_frequencies(&recorded);
    let window = 40 * MS;
    // The windows of each tone, in order.
    let mut transitions = Vec::new();
    let mut from = 0;
    for (i, &(hz, _)) in TONES.iter().enumerate() {
        let first = from
            + frequencies[from..]
                .iter()
                .position(|&f| near(f, hz))
                .unwrap_or_else(|| panic!("no {hz} Hz tone: {frequencies:?}\n{log}"));
        // Up to the next tone (a seek's splice, a window or two of
        // another frequency, is within it).
        let next = TONES.get(i + 1).map_or(frequencies.len(), |&(next, _)| {
            first
                + frequencies[first..]
                    .iter()
                    .position(|&f| near(f, next))
                    .unwrap_or(frequencies.len() - first)
        });
        let last = first
            + 1
            + frequencies[first..next]
                .iter()
                .rposition(|&f| near(f, hz))
                .unwrap_or(0);
        let heard = (last - first) as f64 * 0.040;
        eprintln!(
            "{hz} Hz heard for {heard:.2} s from {:.2} s",
            first as f64 * 0.040
        );
        let due = if i == 0 { first_seconds } else { seconds };
        assert!(
            (heard - due).abs() <= 0.2,
            "{hz} Hz heard for {heard} s, not {due}: {frequencies:?}\n{log}"
        );
        if i > 0 {
            // Where the tone changed, and its silence within 100 ms.
            let at = from * window;
            let around =
                &recorded[at.saturating_sub(100 * MS)..(at + 100 * MS).min(recorded.len())];
            transitions.push((at, longest_quiet_ms(around)));
        }
        from = last;
    }
    (transitions, log)
}

#[test]
fn a_playlist_of_tones_is_heard_without_a_gap_between_files() {
    let _serial = one_at_a_time();
    let server = SoundServer::start();
    let (transitions, log) = tone_transitions(&server, &[], (1.2, 1.2), |_| {});
    for (i, &(at, quiet)) in transitions.iter().enumerate() {
        eprintln!(
            "file {} to {}: at {:.3} s, longest silence {quiet:.1} ms",
            i + 1,
            i + 2,
            at as f64 / RATE as f64
        );
    }
    for &(_, quiet) in &transitions {
        assert!(quiet <= 5.0, "a {quiet} ms silence: {transitions:?}\n{log}");
    }
    assert!(warnings(&log).is_empty(), "{log}");
    assert_eq!(
        log.matches("the sound goes on into the next file").count(),
        2,
        "{log}"
    );
    // The picture follows the sound across the changes of file.
    let stats = reel_output::fields(
        log.lines()
            .find(|l| l.starts_with("reel: stats:"))
            .unwrap_or_else(|| panic!("no stats line\n{log}")),
    );
    assert_eq!(reel_output::number(&stats, "presented"), 90, "{log}");
    assert_eq!(reel_output::number(&stats, "dropped_late"), 0, "{log}");
    assert_av_offset(&stats, &log);

    // Each file its own output: the measurement sees the gap.
    let (transitions, log) = tone_transitions(&server, &["--gapless", "no"], (1.2, 1.2), |_| {});
    eprintln!("--gapless no: {transitions:?}");
    assert!(
        transitions.iter().all(|&(_, quiet)| quiet > 5.0),
        "no gap without gapless playback: {transitions:?}\n{log}"
    );
}

#[test]
fn tones_stay_gapless_after_a_seek_near_the_end_and_at_twice_the_speed() {
    let _serial = one_at_a_time();
    let server = SoundServer::start();
    // At 0.9 s the next file's sound is queued after the first's end: a
    // seek back to 0.3 s drops it, and it follows the first file's end
    // again.
    let (transitions, log) = tone_transitions(&server, &[], (1.8, 1.2), |reel| {
        reel.wait_for("playback past 0.9 s", |s| {
            s.get("position").and_then(|p| p.parse::<f64>().ok()) > Some(0.9)
        });
        assert_eq!(reel.command("seek 0.3"), "ok");
    });
    eprintln!("after a seek: {transitions:?}");
    for &(_, quiet) in &transitions {
        assert!(quiet <= 5.0, "a {quiet} ms silence: {transitions:?}\n{log}");
    }
    // Each file's sound stretched afresh.
    let (transitions, log) = tone_transitions(&server, &["--speed", "2"], (0.6, 0.6), |_| {});
    eprintln!("at 2x: {transitions:?}");
    for &(_, quiet) in &transitions {
        assert!(quiet <= 5.0, "a {quiet} ms silence: {transitions:?}\n{log}");
    }
}

/// Where each 100 ms piece of the recording lies in `oracle` and at which
/// level, for the pieces that match it.
struct Piece {
    at: usize,
    media: usize,
    db: f64,
}

fn pieces(recorded: &[f32], oracle: &[f32]) -> Vec<Piece> {
    let len = 100 * MS;
    (0..recorded.len() / len)
        .filter_map(|i| {
            let piece = &recorded[i * len..(i + 1) * len];
            let (media, peak) = find(piece, oracle)?;
            (peak > 0.98).then(|| Piece {
                at: i * len,
                media,
                db: 20.0 * gain(piece, &oracle[media..media + len]).log10(),
            })
        })
        .collect()
}

#[test]
fn pause_volume_and_seek_through_the_control_socket() {
    let _serial = one_at_a_time();
    let server = SoundServer::start();
    let clip = pcm::clip("stereo_flac_6s.mkv", 6.0, &pink(21, 48_000), FLAC);
    let oracle = mono(&pcm::decode(&clip, None, RATE, 2));
    let recording = server.record("controls");
    let mut reel = Reel::spawn(
        &server.client_env(),
        server.runtime_dir(),
        &["--output", "null"],
        &[clip.as_path()],
    );
    let position =
        |reel: &mut Reel| -> f64 { reel.status()["position"].parse().expect("a position") };
    reel.wait_for("playback past 0.8 s", |s| {
        s.get("position").and_then(|p| p.parse::<f64>().ok()) > Some(0.8)
    });
    assert_eq!(reel.command("pause"), "ok");
    sleep(Duration::from_millis(1000));
    assert_eq!(reel.command("resume"), "ok");
    sleep(Duration::from_millis(600));
    assert_eq!(reel.command("volume 50"), "ok");
    assert!(reel.status()["volume"].starts_with("50"));
    sleep(Duration::from_millis(600));
    assert_eq!(reel.command("volume 100"), "ok");
    let before_seek = position(&mut reel);
    assert!(before_seek < 3.5, "playback went too fast: {before_seek}");
    let target = 4.0;
    assert_eq!(reel.command("seek 4"), "ok");
    reel.settled();
    let started = Instant::now();
    while started.elapsed() < Duration::from_millis(800) {
        sleep(Duration::from_millis(50));
    }
    let status = reel.quit();
    sleep(Duration::from_millis(300));
    let recorded = mono(&recording.stop());
    let log = reel.log();
    assert!(status.success(), "{status}\n{log}");

    // Pause: silence, then the sound goes on where it stopped.
    let quiet = silences(&recorded, 700 * MS);
    let &(silent_from, silent_to) = quiet
        .iter()
        .find(|(from, _)| *from > 500 * MS)
        .unwrap_or_else(|| panic!("no silence while paused: {quiet:?}\n{log}"));
    let len = 200 * MS;
    let (before, p1) =
        find(&recorded[silent_from - 250 * MS..][..len], &oracle).expect("sound before the pause");
    let (after, p2) =
        find(&recorded[silent_to + 50 * MS..][..len], &oracle).expect("sound after the pause");
    assert!(p1 > 0.98 && p2 > 0.98, "{p1} {p2}\n{log}");
    let stopped = (before + 250 * MS) as f64;
    let resumed = after as f64 - (50 * MS) as f64;
    let jump_ms = (resumed - stopped) / MS as f64;
    eprintln!(
        "paused for {:.0} ms; sound resumed {jump_ms:+.1} ms from where it stopped",
        (silent_to - silent_from) as f64 / MS as f64
    );
    assert!(jump_ms.abs() <= 40.0, "resumed {jump_ms} ms away\n{log}");

    // Volume 50 %: -18 dB on mpv's cubic curve, 100 %: as decoded.
    let pieces = pieces(&recorded[silent_to..], &oracle);
    let at = |db: f64| pieces.iter().filter(|p| (p.db - db).abs() < 0.5).count();
    let levels: Vec<String> = pieces.iter().map(|p| format!("{:.1}", p.db)).collect();
    eprintln!("levels after the pause (dB): {levels:?}");
    assert!(at(-18.06) >= 3, "no piece at -18 dB: {levels:?}\n{log}");
    assert!(at(0.0) >= 3, "no piece at 0 dB: {levels:?}\n{log}");

    // Seek: the sound restarts at the target.
    let video_start = pcm::start_time(&clip, "v");
    let audio_start = pcm::start_time(&clip, "a");
    let index = ((video_start + target - audio_start) * f64::from(RATE)) as usize;
    let template = &oracle[index..index + 300 * MS];
    let after_pause = &recorded[silent_to..];
    let (lag, peak) = find(template, after_pause).expect("sound after the seek");
    eprintln!("after the seek: correlation {peak:.4} with FFmpeg's decode from {target} s");
    // A start 20 ms late would read below 0.97 (300 ms compared).
    assert!(
        peak >= 0.99,
        "sound after the seek is not the target's: {peak}\n{log}"
    );
    let early = &after_pause[lag - 100 * MS..lag - 40 * MS];
    let earlier = ncc(early, &oracle[index - 100 * MS..index - 40 * MS]);
    assert!(
        earlier < 0.5,
        "sound restarted more than 40 ms before the target ({earlier})\n{log}"
    );
    let last = pieces.last().expect("pieces");
    assert!(last.media > index, "the seek was not heard\n{log}");
    let _ = last.at;
}

/// Video plays whole (every frame presented, status 0) and one warning
/// names what happened to the sound.
fn assert_video_only(status: i32, log: &str, frames: &str, warning: &str) {
    assert_eq!(status, 0, "{log}");
    let stats = reel_output::fields(
        log.lines()
            .find(|l| l.starts_with("reel: stats:"))
            .unwrap_or_else(|| panic!("no stats line\n{log}")),
    );
    assert_eq!(
        stats.get("presented").map(String::as_str),
        Some(frames),
        "{log}"
    );
    let warned = warnings(log);
    assert_eq!(warned.len(), 1, "one warning expected:\n{log}");
    assert!(warned[0].contains(warning), "{warned:?}");
}

/// A clip's path as ffmpeg's argument (the target dir's paths are UTF-8).
fn path_text(path: &std::path::Path) -> &str {
    path.to_str().expect("a UTF-8 path")
}

/// The largest step between neighbouring samples in `x[from..to]`.
fn largest_step(x: &[f32], from: usize, to: usize) -> f32 {
    x[from..to.min(x.len())]
        .windows(2)
        .map(|w| (w[1] - w[0]).abs())
        .fold(0.0, f32::max)
}

#[test]
fn pause_and_resume_ramp_the_sound_without_a_click() {
    let _serial = one_at_a_time();
    let server = SoundServer::start();
    // 440 Hz at half scale: neighbouring samples differ by 0.029 at most,
    // a cut mid-wave by up to 0.5.
    let clip = pcm::clip(
        "sine_440_half_flac.mkv",
        4.0,
        "aevalsrc=0.5*sin(2*PI*440*t):s=48000",
        FLAC,
    );
    let recording = server.record("click");
    let mut reel = Reel::spawn(
        &server.client_env(),
        server.runtime_dir(),
        &["--output", "null"],
        &[clip.as_path()],
    );
    reel.wait_for("playback past 1.2 s", |s| {
        s.get("position").and_then(|p| p.parse::<f64>().ok()) > Some(1.2)
    });
    assert_eq!(reel.command("pause"), "ok");
    sleep(Duration::from_millis(600));
    assert_eq!(reel.command("resume"), "ok");
    let status = reel.wait_exit();
    sleep(Duration::from_millis(300));
    let recorded = mono(&recording.stop());
    let log = reel.log();
    assert!(status.success(), "{status}\n{log}");

    let quiet = silences(&recorded, 400 * MS);
    let &(silent_from, silent_to) = quiet
        .iter()
        .find(|(from, _)| *from > 500 * MS)
        .unwrap_or_else(|| panic!("no silence while paused: {quiet:?}\n{log}"));
    let sine_step = largest_step(&recorded, silent_from - 300 * MS, silent_from - 100 * MS);
    let stop = largest_step(&recorded, silent_from - 40 * MS, silent_from + 10 * MS);
    let start = largest_step(&recorded, silent_to - 10 * MS, silent_to + 40 * MS);
    eprintln!(
        "largest step: playing {sine_step:.4}, at the pause {stop:.4}, at the resume {start:.4}"
    );
    assert!(
        sine_step > 0.02,
        "the sine was not recorded: {sine_step}\n{log}"
    );
    assert!(stop < 0.05, "a click when pausing: a step of {stop}\n{log}");
    assert!(
        start < 0.05,
        "a click when resuming: a step of {start}\n{log}"
    );
}

#[test]
fn a_file_without_picture_plays_its_sound_over_black_frames() {
    let _serial = one_at_a_time();
    let server = SoundServer::start();
    let music = pcm::made(
        "music_only.flac",
        &[
            "-f",
            "lavfi",
            "-i",
            &pink(5, 44_100),
            "-t",
            "2.5",
            "-ac",
            "2",
        ],
    );
    let (status, log, recorded) = play(&server, &music, &[]);
    assert_eq!(status, 0, "{log}");
    assert_plays_as_ffmpeg(&music, &recorded, &log);
    // Ten black frames a second, over the sound's 2.5 s.
    let stats = reel_output::stats(&log).expect("stats");
    assert_eq!(reel_output::number(&stats, "presented"), 25, "{log}");
    assert!(
        log.contains("no video stream: the sound over black"),
        "{log}"
    );

    // Without its sound such a file has nothing to play.
    let (status, log, _) = play(&server, &music, &["--no-audio"]);
    assert_ne!(status, 0, "{log}");
    assert!(log.contains("no video stream"), "{log}");
}

#[test]
fn bad_audio_costs_the_sound_only() {
    let _serial = one_at_a_time();
    let server = SoundServer::start();
    let clean = stereo_clip();

    // Damaged AAC packets (FFmpeg's noise filter): skipped, one warning.
    let damaged = pcm::derived(
        &clean,
        "stereo_aac_damaged.mkv",
        &[
            "-i",
            path_text(&clean),
            "-c",
            "copy",
            "-bsf:a",
            "noise=amount=1000",
        ],
    );
    let (status, log, recorded) = play(&server, &damaged, &[]);
    assert_video_only(status, &log, "75", "damaged audio skipped");
    assert!(pcm::rms(&recorded) > 0.01, "no sound at all\n{log}");

    // A codec libavcodec does not know: Matroska's PCM codec id renamed.
    let unknown = clean.with_file_name("unknown_audio_codec.mkv");
    if !unknown.exists() {
        let pcm_clip = pcm::derived(
            &clean,
            "pcm_for_unknown.mkv",
            &["-i", path_text(&clean), "-c:v", "copy", "-c:a", "pcm_s16le"],
        );
        let mut bytes = std::fs::read(&pcm_clip).expect("read the PCM clip");
        let id = b"A_PCM/INT/LIT";
        let at = bytes
            .windows(id.len())
            .position(|w| w == id)
            .expect("Matroska's PCM codec id");
        bytes[at..at + id.len()].copy_from_slice(b"A_XYZ/INT/LIT");
        std::fs::write(&unknown, bytes).expect("write the clip");
    }
    let (status, log, recorded) = play(&server, &unknown, &[]);
    assert_video_only(status, &log, "75", "is not supported");
    assert!(pcm::rms(&recorded) < 1e-4, "{log}");
}

#[test]
fn no_sound_server_costs_the_sound_only() {
    let _serial = one_at_a_time();
    // A runtime directory where no server listens.
    let dir = std::env::temp_dir().join(format!("reel-no-sound-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("runtime dir");
    let env = [
        ("XDG_RUNTIME_DIR".to_string(), dir.display().to_string()),
        ("HOME".to_string(), dir.display().to_string()),
    ];
    let clip = stereo_clip();
    let mut reel = Reel::spawn(
        &env,
        &dir,
        &["--output", "null", "--stats"],
        &[clip.as_path()],
    );
    let status = reel.wait_exit();
    let log = reel.log();
    assert_video_only(status.code().unwrap_or(-1), &log, "75", "no audio output");

    // A device that does not exist: the same.
    let args = [
        "--output",
        "null",
        "--stats",
        "--audio-device",
        "no-such-device",
    ];
    let mut reel = Reel::spawn(&env, &dir, &args, &[clip.as_path()]);
    let status = reel.wait_exit();
    let log = reel.log();
    assert_video_only(
        status.code().unwrap_or(-1),
        &log,
        "75",
        "no audio output device named \"no-such-device\"",
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn ipc_volume_mute_frame_step_and_loop() {
    let _serial = one_at_a_time();
    use serde_json::json;
    use support::mpv_ipc::Player;

    let server = SoundServer::start();
    let clip = pcm::clip("stereo_flac_3s.mkv", 3.0, &pink(22, 48_000), FLAC);
    let oracle = mono(&pcm::decode(&clip, None, RATE, 2));
    let recording = server.record("ipc");
    let mut env = server.client_env();
    env.push(("RUST_LOG".into(), "reel=debug".into()));
    let clip_arg = clip.display().to_string();
    let args = [
        "--no-config",
        "--output",
        "null",
        "--loop",
        "--volume",
        "50",
        clip_arg.as_str(),
    ];
    let mut reel = Player::spawn(
        "reel",
        env!("CARGO_BIN_EXE_reel"),
        &args,
        &env,
        &server.runtime_dir().join("ipc"),
    );
    let mut ipc = reel.connect();
    let ok = |reply: serde_json::Value| assert_eq!(reply["error"], "success", "{reply}");
    assert_eq!(
        ipc.request(json!(["get_property", "volume"]))["data"],
        json!(50.0)
    );
    sleep(Duration::from_millis(900));
    ok(ipc.request(json!(["set_property", "volume", 100])));
    assert_eq!(
        ipc.request(json!(["get_property", "volume"]))["data"],
        json!(100.0)
    );
    sleep(Duration::from_millis(500));
    ok(ipc.request(json!(["set_property", "mute", true])));
    assert_eq!(
        ipc.request(json!(["get_property", "mute"]))["data"],
        json!(true)
    );
    sleep(Duration::from_millis(600));
    ok(ipc.request(json!(["cycle", "mute"])));
    sleep(Duration::from_millis(300));
    // A frame step pauses: the sound stays paused.
    ok(ipc.request(json!(["frame-step"])));
    sleep(Duration::from_millis(800));
    ok(ipc.request(json!(["set_property", "pause", false])));
    // Past the end: the loop starts the sound again from the beginning.
    sleep(Duration::from_millis(2000));
    ok(ipc.request(json!(["quit"])));
    let status = reel.wait();
    sleep(Duration::from_millis(300));
    let recorded = mono(&recording.stop());
    let log = reel.log();
    assert!(status.success(), "{status}\n{log}");

    let pieces = pieces(&recorded, &oracle);
    let levels: Vec<String> = pieces.iter().map(|p| format!("{:.1}", p.db)).collect();
    eprintln!("levels (dB): {levels:?}");
    // --volume 50 from the start, then 100.
    let near = |p: &Piece, db: f64| (p.db - db).abs() < 0.5;
    let quiet_first = pieces.iter().take_while(|p| near(p, -18.06)).count();
    let loud = pieces.iter().filter(|p| near(p, 0.0)).count();
    assert!(
        quiet_first >= 5,
        "--volume 50 not heard at -18 dB: {levels:?}\n{log}"
    );
    assert!(loud >= 5, "volume 100 not heard at 0 dB: {levels:?}\n{log}");
    // Muted, then paused by the step: two silences.
    let quiet = silences(&recorded, 400 * MS);
    let quiet: Vec<_> = quiet.iter().filter(|(from, _)| *from > 500 * MS).collect();
    eprintln!(
        "silences (ms): {:?}",
        quiet
            .iter()
            .map(|(a, b)| (a / MS, b / MS))
            .collect::<Vec<_>>()
    );
    assert!(
        quiet.len() >= 2,
        "no silence for mute and step: {quiet:?}\n{log}"
    );
    // The loop: the beginning heard again after the step's pause.
    let after = &recorded[quiet[1].1..];
    let (_, peak) = find(&oracle[100 * MS..600 * MS], after).expect("sound after the step");
    eprintln!("loop: the beginning again with correlation {peak:.4}");
    assert!(
        peak >= 0.99,
        "the loop did not restart the sound: {peak}\n{log}"
    );
}

#[test]
fn sound_server_gone_mid_play_leaves_the_video_playing() {
    let _serial = one_at_a_time();
    let server = SoundServer::start();
    let env = server.client_env();
    let dir = std::env::temp_dir().join(format!("reel-sound-gone-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let clip = stereo_clip();
    let mut reel = Reel::spawn(
        &env,
        &dir,
        &["--output", "null", "--stats"],
        &[clip.as_path()],
    );
    reel.wait_for("playback past 0.8 s", |s| {
        s.get("position").and_then(|p| p.parse::<f64>().ok()) > Some(0.8)
    });
    drop(server);
    let started = Instant::now();
    let status = reel.wait_exit();
    let log = reel.log();
    eprintln!(
        "ended {:.1} s after the server went away",
        started.elapsed().as_secs_f64()
    );
    assert!(status.success(), "{status}\n{log}");
    let stats = reel_output::stats(&log).expect("stats");
    assert_eq!(reel_output::number(&stats, "presented"), 75, "{log}");
    let warned = warnings(&log);
    assert_eq!(warned.len(), 1, "one warning expected\n{log}");
    assert!(warned[0].contains("video goes on"), "{warned:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The comparison itself: a recording with a short gap of silence (a busy
/// machine's dropout) still matches, a long one or one reel caused does not.
#[test]
fn the_comparison_cuts_short_dropouts_only() {
    let clip = stereo_clip();
    let oracle = mono(&pcm::decode(&clip, None, RATE, 2));
    let with_gap = |gap_ms: usize| {
        let mut recorded = vec![0.0; 300 * MS];
        recorded.extend_from_slice(&oracle[..1000 * MS]);
        recorded.extend(std::iter::repeat_n(0.0, gap_ms * MS));
        recorded.extend_from_slice(&oracle[1000 * MS..]);
        recorded.extend(std::iter::repeat_n(0.0, 300 * MS));
        recorded
    };
    assert_plays_as_ffmpeg(&clip, &with_gap(0), "");
    assert_plays_as_ffmpeg(&clip, &with_gap(50), "");
    for (gap_ms, log) in [(150, ""), (50, "INFO audio: the queue ran dry")] {
        let recorded = with_gap(gap_ms);
        let failed = std::panic::catch_unwind(|| assert_plays_as_ffmpeg(&clip, &recorded, log));
        assert!(failed.is_err(), "a {gap_ms} ms gap with log {log:?} passed");
    }
}

/// The mean A/V offset of `--stats` is within 20 ms (the largest is shown).
fn assert_av_offset(stats: &std::collections::HashMap<String, String>, log: &str) {
    let mean: f64 = stats["av_offset_mean_ms"]
        .parse()
        .expect("a mean A/V offset");
    let max: f64 = stats["av_offset_max_ms"].parse().expect("a max A/V offset");
    eprintln!("A/V offset: mean {mean} ms, max {max} ms");
    assert!(mean <= 20.0, "mean A/V offset {mean} ms\n{log}");
}
