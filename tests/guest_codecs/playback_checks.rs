//! The checks of reel's output, the same for every row or codec they
//! apply to: framemd5 in display order and deterministic, exact seeks,
//! zero-copy playback in weston, the damaged copies, `reel probe`; and
//! every guest call's exit status.

use std::path::Path;
use std::process::Command;

use crate::boot;
use crate::failures::check_each;
use crate::row_runs::{self, md5a_run, md5b_run, play_name, probe_run, seek_run};
use crate::rows::{SeekExpects, CODECS, ROWS};
use crate::support::{media, reel_output, reel_runs, weston_log};

/// Every call of the boot ran to its end with exit status 0 (the runs'
/// own statuses are in their `.rc`, checked by each check).
#[test]
fn every_guest_call_succeeded() {
    let boot = boot::boot();
    let statuses = boot::call_statuses(&boot.result);
    let failed: Vec<String> = boot
        .calls
        .iter()
        .filter_map(|name| match statuses.iter().find(|(n, _)| n == name) {
            Some((_, status)) if status == "0" => None,
            Some((_, status)) => Some(format!("{name}: exit status {status}")),
            None => Some(format!("{name}: did not run to its end")),
        })
        .collect();
    assert!(
        failed.is_empty(),
        "{} of {} guest calls failed:\n{}\n{}",
        failed.len(),
        boot.calls.len(),
        failed.join("\n"),
        boot.result.report()
    );
    boot.result.assert_success();
}

/// `--output framemd5` twice: FFmpeg's frame count (hidden frames decoded,
/// not shown; frames shown again included), increasing pts, the same
/// output twice.
#[test]
fn framemd5_has_every_shown_frame_in_order_and_is_deterministic() {
    let result = boot::result();
    let rows = ROWS.iter().filter(|r| r.framemd5);
    check_each("framemd5 decodes", rows, |row| {
        let runs = [md5a_run(row), md5b_run(row)];
        reel_runs::assert_framemd5_in_order_and_deterministic(
            result,
            [&runs[0], &runs[1]],
            &row.path(),
        );
    });
}

/// FFmpeg's framemd5 pts of `clip`, and their time base.
fn ffmpeg_pts(clip: &Path) -> (Vec<i64>, (i64, i64)) {
    let output = Command::new("ffmpeg")
        .args(["-nostdin", "-v", "error", "-i"])
        .arg(clip)
        .args(["-map", "0:v:0", "-f", "framemd5", "-"])
        .output()
        .unwrap_or_else(|e| panic!("ffmpeg: {e}"));
    assert!(
        output.status.success(),
        "ffmpeg failed on {}",
        clip.display()
    );
    let text = String::from_utf8_lossy(&output.stdout);
    let pts = reel_runs::framemd5_lines(&text)
        .iter()
        .map(|l| l.0)
        .collect();
    (pts, reel_runs::framemd5_time_base(&text))
}

/// `--start` gives exactly the frames from the one an exact seek to the
/// target lands on (the first starting at or after it, give or take mpv's
/// 5 ms): the decoder restarts at the key frame before it and the frames
/// before the target are dropped.
#[test]
fn seeking_starts_at_the_first_frame_at_or_after_the_target() {
    let result = boot::result();
    let rows = ROWS.iter().filter(|r| r.seek.is_some());
    check_each("seeks", rows, |row| {
        let seek = row.seek.expect("a seek row");
        let (log, out) = reel_runs::successful(result, &seek_run(row));
        let got = reel_runs::framemd5_lines(&out);
        // The whole clip's frames, the time base of their pts.
        let (all, (num, den)) = match seek.expects {
            SeekExpects::ReelPts | SeekExpects::ReelFrames => {
                let (_, full) = reel_runs::successful(result, &md5a_run(row));
                (
                    reel_runs::framemd5_lines(&full),
                    reel_runs::framemd5_time_base(&full),
                )
            }
            SeekExpects::FfmpegPts => {
                let (pts, time_base) = ffmpeg_pts(&row.path());
                assert_eq!(reel_runs::framemd5_time_base(&out), time_base, "{log}");
                (
                    pts.into_iter().map(|p| (p, String::new())).collect(),
                    time_base,
                )
            }
        };
        let first = all.first().map(|l| l.0).expect("frames");
        let ticks = |seconds: f64| (seconds * den as f64 / num as f64).round() as i64;
        let target = first + ticks(seek.seconds);
        let pts: Vec<i64> = all.iter().map(|l| l.0).collect();
        let landing = media::seek_landing(&pts, target, ticks(media::SEEK_TOLERANCE));
        let expected: Vec<&(i64, String)> = all[landing..].iter().collect();
        if seek.expects == SeekExpects::ReelFrames {
            // The same pictures too: decoding restarts at the key frame
            // before the target (hidden frames included).
            assert_eq!(got.iter().collect::<Vec<_>>(), expected, "{log}");
        } else {
            let pts = |lines: &[&(i64, String)]| lines.iter().map(|l| l.0).collect::<Vec<_>>();
            assert_eq!(
                pts(&got.iter().collect::<Vec<_>>()),
                pts(&expected),
                "{log}"
            );
        }
    });
}

/// Before its target an exact seek asks visl only for the pictures later
/// ones refer to (codec by codec, unit-tested in src/v4l2/): each picture
/// is decoded (a request in the seek's trace) or left out (logged), no
/// more than the whole decode's; clips with such pictures leave some out; and
/// the frames from the target on are right (the seek check above).
#[test]
fn an_exact_seek_asks_the_driver_for_no_picture_nothing_refers_to() {
    // Rows with such pictures before their target: non-reference B
    // pictures, and AV1 frames shown but kept in no slot.
    const LEAVE_SOME_OUT: [&str; 3] = ["h264_main_bframes", "mpeg2_matrices", "av1_superres"];
    let result = boot::result();
    let rows = ROWS.iter().filter(|r| r.seek.is_some());
    check_each("seeks' requests", rows, |row| {
        let (log, _) = reel_runs::successful(result, &seek_run(row));
        let left_out = log.matches(row_runs::LEFT_OUT).count();
        let decoded = reel_runs::reel_frames(result, &seek_run(row), boot::SAVE_DIR).len();
        let whole = reel_runs::reel_frames(result, &row_runs::trace_run(row), boot::SAVE_DIR).len();
        let context = format!(
            "{}: {decoded} decoded and {left_out} left out, of {whole} in the whole decode",
            row.name
        );
        assert!(decoded + left_out <= whole, "{context}\n{log}");
        if row
            .seek
            .is_some_and(|s| s.expects == SeekExpects::ReelFrames)
        {
            // Decoding restarts at the clip's first frame.
            assert_eq!(decoded + left_out, whole, "{context}\n{log}");
        }
        if LEAVE_SOME_OUT.contains(&row.name) {
            assert!(left_out > 0, "{context}");
        }
    });
}

/// In weston 14 headless, looping and paused after a seek: every presented
/// frame is visl's own CAPTURE buffer (zero-copy; frames shown again
/// included), imported by weston with no protocol error.
#[test]
fn playback_in_weston_is_zero_copy() {
    let result = boot::result();
    let read = |name: &str| result.read_result(name).unwrap_or_default();
    let rows = ROWS.iter().filter(|r| r.weston.is_some());
    check_each("weston playbacks", rows, |row| {
        let weston = row.weston.expect("a weston row");
        for play in ["loop", "paused"].map(|p| format!("{}-{p}", play_name(row))) {
            let log = read(&format!("{play}.log"));
            let rc = read(&format!("{play}.rc"));
            assert_eq!(rc.trim(), "0", "{play}: reel failed:\n{log}");
            assert!(!log.contains("panicked"), "{play}:\n{log}");
            let s =
                reel_output::stats(&log).unwrap_or_else(|| panic!("{play}: no stats line:\n{log}"));
            let compositor_log = read(&format!("weston-{play}.log"));
            weston_log::assert_zero_copy_playback(&play, &s, &log, &compositor_log);
        }
        // The looping playback went on until reel logged what it waited
        // for (AV1: hidden frames decoded, then shown again from their
        // CAPTURE buffers).
        if let Some(text) = weston.loop_until {
            let log = read(&format!("{}-loop.log", play_name(row)));
            assert!(
                log.contains(text),
                "no {text:?} in weston's playback:\n{log}"
            );
        }
    });
}

/// 24 damaged copies of each codec's source (support::damage; all 200 go
/// through the software path in tests/damage_software.rs): no panic, no
/// hang, the exit status README documents, every picture from the first
/// key frame (IRAP, I picture) after the damage on output.
#[test]
fn damaged_copies_recover_at_the_next_key_frame() {
    let result = boot::result();
    let codecs = CODECS.into_iter().filter(|c| c.has_damaged_copies());
    check_each("damaged copies", codecs, |codec| {
        let damaged = row_runs::damaged(*codec).expect("damaged copies");
        damaged.assert_recovered(result);
    });
}

/// `reel probe FILE` names the codec's decoder and what reel makes of it.
#[test]
fn probe_lists_each_decoder() {
    let result = boot::result();
    let codecs = CODECS.into_iter().filter(|c| c.probe().is_some());
    check_each("probes", codecs, |codec| {
        let probe = codec.probe().expect("a probe");
        let (rc, log, out) = reel_runs::outcome(result, &probe_run(*codec));
        assert_eq!(rc, 0, "{log}\n{out}");
        for expected in probe.expected {
            assert!(out.contains(expected), "probe lacks {expected:?}:\n{out}");
        }
    });
}
