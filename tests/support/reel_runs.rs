//! reel runs in the test guest, each traced by visl
//! (tests/vm/guest/traced-run.sh), and what the tests read back from them:
//! exit status, log, output, the normalised visl trace.

use std::path::Path;

use super::reel_output;
use super::visl_trace::{self, FrameRecord};
use super::vm::{GuestResult, ScriptCall};

/// Seconds one reel run may take in the guest (TCG, loaded host).
pub const RUN_LIMIT_SECS: u32 = 90;

/// One reel decode of `file` in the guest, traced: its results are
/// NAME.out, NAME.log, NAME.rc and NAME.trace.
pub fn traced_decode(name: &str, options: &[&str], file: &Path) -> ScriptCall {
    let call = ScriptCall::new("traced-run.sh")
        .arg(name)
        .arg(RUN_LIMIT_SECS.to_string())
        .arg(env!("CARGO_BIN_EXE_reel"))
        .args(options);
    // Playback runs say which decoder they used on their stats line.
    let call = if options.first() == Some(&"probe") {
        call
    } else {
        call.arg("--stats")
    };
    call.arg(file).arg("-v")
}

/// The decoder a successful run's `reel: stats:` line names.
pub fn stats_decoder(name: &str, log: &str) -> String {
    let line = log
        .lines()
        .find(|l| l.starts_with("reel: stats:"))
        .unwrap_or_else(|| panic!("{name}: no stats line:\n{log}"));
    reel_output::fields(line)
        .remove("decoder")
        .unwrap_or_else(|| panic!("{name}: no decoder on the stats line: {line}"))
}

/// Exit status, stderr and stdout of one run.
pub fn outcome(result: &GuestResult, name: &str) -> (i32, String, String) {
    let rc = result
        .read_result(&format!("{name}.rc"))
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or_else(|| panic!("{name}: no exit status\n{}", result.report()));
    let log = result
        .read_result(&format!("{name}.log"))
        .unwrap_or_default();
    let out = result
        .read_result(&format!("{name}.out"))
        .unwrap_or_default();
    (rc, log, out)
}

/// A run that must succeed, decoding through V4L2: its log and output.
pub fn successful(result: &GuestResult, name: &str) -> (String, String) {
    let (rc, log, out) = outcome(result, name);
    assert_eq!(rc, 0, "{name}: exit status {rc}\n{log}");
    assert_eq!(
        stats_decoder(name, &log),
        "v4l2-stateless",
        "{name}: not decoded through V4L2:\n{log}"
    );
    assert!(!log.contains("panicked"), "{name}:\n{log}");
    (log, out)
}

/// The normalised visl trace of a successful run, also saved under
/// target/SAVE_DIR/NAME.normalised for a look when a comparison fails.
pub fn reel_frames(result: &GuestResult, name: &str, save_dir: &str) -> Vec<FrameRecord> {
    successful(result, name);
    let trace = result
        .read_result(&format!("{name}.trace"))
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let frames = visl_trace::normalise(&trace).unwrap_or_else(|e| panic!("{name}: {e}"));
    let dir = super::target_dir().join(save_dir);
    let _ = std::fs::create_dir_all(&dir);
    let _ = std::fs::write(
        dir.join(format!("{name}.normalised")),
        visl_trace::render(&frames),
    );
    frames
}

/// A failure message for a trace difference, the first 25 lines of it.
pub fn diff_report(clip: &str, diff: &[String]) -> Option<String> {
    (!diff.is_empty()).then(|| {
        format!(
            "{clip} ({} differences, GStreamer vs reel):\n  {}",
            diff.len(),
            diff[..diff.len().min(25)].join("\n  ")
        )
    })
}

/// The framemd5 runs `first` and `second` (any two `--hwdec v4l2
/// --output framemd5` decodes of `file` in the same mode): FFmpeg's frame
/// count of `file`, with strictly increasing pts, the same output twice.
pub fn assert_framemd5_in_order_and_deterministic(
    result: &GuestResult,
    [first, second]: [&str; 2],
    file: &Path,
) {
    let (_, first_out) = successful(result, first);
    let (_, second_out) = successful(result, second);
    let lines = framemd5_lines(&first_out);
    assert_eq!(
        lines.len(),
        super::media::frame_count(file),
        "{first}: frame count"
    );
    assert!(
        lines.windows(2).all(|w| w[0].0 < w[1].0),
        "{first}: pts not strictly increasing: {:?}",
        lines.iter().map(|l| l.0).collect::<Vec<_>>()
    );
    assert_eq!(first_out, second_out, "{first} and {second} differ");
}

/// (pts, md5) of each framemd5 line.
pub fn framemd5_lines(out: &str) -> Vec<(i64, String)> {
    out.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let cols: Vec<&str> = l.split(',').map(str::trim).collect();
            let pts = cols.get(2).and_then(|v| v.parse().ok());
            let md5 = cols.last().map(|s| s.to_string());
            (
                pts.unwrap_or_else(|| panic!("bad line {l}")),
                md5.unwrap_or_default(),
            )
        })
        .collect()
}

/// The framemd5 time base (`#tb 0: num/den`).
pub fn framemd5_time_base(out: &str) -> (i64, i64) {
    out.lines()
        .find_map(|l| l.strip_prefix("#tb 0: "))
        .and_then(|tb| tb.trim().split_once('/'))
        .and_then(|(n, d)| Some((n.parse().ok()?, d.parse().ok()?)))
        .unwrap_or_else(|| panic!("no time base in:\n{out}"))
}
