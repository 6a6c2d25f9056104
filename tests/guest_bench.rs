//! The guest benchmark (benches/guest-compare.sh: reel against GStreamer's
//! v4l2codecs through visl, decode only and into weston) as a smoke test:
//! one round on a small clip with this build of reel, no thresholds on the
//! figures (timing belongs in BENCHMARKS.md, not in tests), but every
//! figure of the table must be there, measured, for both players: a
//! change that breaks a player's run, the strace counts or the first-
//! picture timing fails here rather than on the day someone benchmarks.
//! The same for what sound costs on the V4L2 path (benches/guest-audio-
//! cost.sh: reel and GStreamer, each with and without its sound, into the
//! guest's sound card (AC97)).
//!
//! Not part of `tests/run.sh`: the three smoke runs take 15 to 17 minutes
//! of guest time under TCG, most of it callgrind and strace, and prove the
//! benchmark scripts rather than reel. `benches/smoke.sh` runs them (before
//! a change to benches/ lands, and before the figures are made).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The rows the table must have, by the start of their label.
const ROWS: [&str; 19] = [
    "decode only: CPU per steady-state frame",
    "decode only: start-up CPU",
    "decode only: user-space instructions per steady-state frame",
    "decode only: user-space instructions at start-up",
    "decode only: CPU, 30 frames",
    "decode only: max RSS",
    "decode only: syscalls per steady-state frame",
    "time to the first decoded picture",
    "into weston: frames presented of 30",
    "into weston: time to the first picture on screen",
    "into weston: CPU per steady-state frame",
    "into weston: start-up CPU",
    "into weston: user-space instructions per steady-state frame",
    "into weston: user-space instructions at start-up",
    "into weston, under callgrind: frames presented of 30",
    "into weston: syscalls per steady-state frame",
    "into weston: wake-ups (voluntary context switches) per steady-state frame",
    "into weston: max RSS",
    "into weston: wall time",
];

/// The leading number of a cell ("12.5 [11.0-13.2]" gives 12.5).
fn number(cell: &str) -> Option<f64> {
    cell.split_whitespace().next()?.parse().ok()
}

/// `benches/SCRIPT --smoke ARGS...` with this build of reel, its runs in
/// target/vm-runs/DIR-PID: its table, the script having succeeded.
fn smoke_run(script: &str, dir: &str, args: &[&Path]) -> String {
    let project = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = project.join(format!("target/vm-runs/{dir}-{}", std::process::id()));
    let out = Command::new(project.join("benches").join(script))
        .arg("--smoke")
        .args(args)
        .env("REEL_BIN", env!("CARGO_BIN_EXE_reel"))
        .env("REEL_BENCH_DIR", &dir)
        .output()
        .unwrap_or_else(|e| panic!("run benches/{script}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{script} --smoke: {}\n{stdout}\n{stderr}",
        out.status
    );
    eprintln!("{stdout}");
    stdout
}

/// The cells of a Markdown table's rows (the separator line left out).
fn table_rows(table: &str) -> Vec<Vec<&str>> {
    table
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("|---"))
        .map(|l| l.trim_matches('|').split(" | ").map(str::trim).collect())
        .collect()
}

#[test]
#[ignore = "a benchmark's smoke run (minutes under TCG): benches/smoke.sh runs it"]
fn the_guest_benchmark_measures_both_players() {
    let stdout = smoke_run("guest-compare.sh", "guest-bench", &[]);
    let rows = table_rows(&stdout);
    for label in ROWS {
        let row = rows
            .iter()
            .find(|r| r[0].starts_with(label))
            .unwrap_or_else(|| panic!("no row {label:?} in\n{stdout}"));
        assert_eq!(row.len(), 4, "{label}: {row:?}");
        let (reel, gst) = (number(row[1]), number(row[2]));
        assert!(
            reel.is_some() && gst.is_some(),
            "{label}: not measured: {row:?}"
        );
        // The steady-state CPU and wake-ups per frame and the start-up CPU
        // are differences of two short runs' figures: one round of 30 and
        // 10 frames leaves them to noise (a player's two runs can take the
        // same clock ticks, making its figure 0 and the ratio undefined, or
        // the shorter run can take longer). The benchmark's rounds of 750
        // and 25 frames, fastest of several, do not. Every other figure is
        // a count, a size or a duration of something that ran. Into
        // weston under callgrind the players drop frames (the row "under
        // callgrind: frames presented" says how many: reel 13 and
        // GStreamer 1 of 30 were seen), so there the long and short runs'
        // instructions do not differ by 20 frames' work either, and may
        // not differ at all.
        let difference = label.contains("start-up CPU")
            || label.contains("CPU per steady-state")
            || label.contains("wake-ups")
            || label.starts_with("into weston: user-space instructions");
        if !difference {
            assert!(
                reel > Some(0.0) && gst > Some(0.0) && number(row[3]).is_some(),
                "{label}: not positive: {row:?}"
            );
        }
    }
}

#[test]
#[ignore = "a benchmark's smoke run (minutes under TCG): benches/smoke.sh runs it"]
fn the_guest_audio_benchmark_measures_both_players_with_and_without_sound() {
    // The script fails when a run failed, when reel played without its
    // sound card, or when a run was not in real time.
    let stdout = smoke_run("guest-audio-cost.sh", "guest-audio-bench", &[]);
    for player in ["| reel |", "| gst-launch"] {
        let row: Vec<&str> = stdout
            .lines()
            .find(|l| l.starts_with(player))
            .unwrap_or_else(|| panic!("no row {player:?} in\n{stdout}"))
            .trim_matches('|')
            .split(" | ")
            .map(str::trim)
            .collect();
        assert_eq!(row.len(), 4, "{row:?}");
        // CPU with and without sound, each a run that happened.
        for cell in &row[1..3] {
            assert!(
                number(cell).is_some_and(|v| v > 0.0),
                "{player}: not measured: {row:?}"
            );
        }
    }
}

/// The A/B benchmark (benches/guest-ab.sh) with two builds of reel (this
/// one under two names) and GStreamer: every row measured for each, and a
/// ratio to the first for the others.
#[test]
#[ignore = "a benchmark's smoke run (minutes under TCG): benches/smoke.sh runs it"]
fn the_guest_ab_benchmark_measures_builds_side_by_side() {
    let project = Path::new(env!("CARGO_MANIFEST_DIR"));
    let builds = project.join(format!(
        "target/vm-runs/guest-ab-builds-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&builds).expect("a directory for the builds");
    let copies: Vec<PathBuf> = ["reel-a", "reel-b"]
        .iter()
        .map(|name| {
            let copy = builds.join(name);
            std::fs::copy(env!("CARGO_BIN_EXE_reel"), &copy).expect("a copy of reel");
            copy
        })
        .collect();
    let stdout = smoke_run(
        "guest-ab.sh",
        "guest-ab",
        &[&copies[0], &copies[1], Path::new("gst")],
    );
    let rows = table_rows(&stdout);
    let header = rows
        .first()
        .unwrap_or_else(|| panic!("no table in\n{stdout}"));
    assert_eq!(
        header[1..],
        ["reel-a", "reel-b", "gst", "reel-b / reel-a", "gst / reel-a"],
        "{header:?}"
    );
    for label in [
        "CPU per steady-state frame",
        "start-up CPU",
        "CPU, 30 frames",
        "wake-ups",
        "syscalls per steady-state frame",
        "frames presented of 30",
        "time to the first picture on screen",
    ] {
        let row = rows
            .iter()
            .find(|r| r[0].starts_with(label))
            .unwrap_or_else(|| panic!("no row {label:?} in\n{stdout}"));
        assert_eq!(row.len(), 6, "{label}: {row:?}");
        let values: Vec<Option<f64>> = row[1..4].iter().map(|c| number(c)).collect();
        assert!(
            values.iter().all(Option::is_some),
            "{label}: not measured: {row:?}"
        );
        // As in the comparison's smoke run, differences of one short
        // round are left to noise; counts and durations are positive.
        let difference = label.contains("steady-state frame") && !label.starts_with("syscalls")
            || label.contains("start-up")
            || label.contains("wake-ups");
        if !difference {
            assert!(
                values.iter().all(|v| *v > Some(0.0)),
                "{label}: not positive: {row:?}"
            );
            assert!(
                row[4..].iter().all(|c| number(c).is_some()),
                "{label}: no ratio: {row:?}"
            );
        }
    }
}
