//! The one guest boot of the suite: every row's runs (row_runs.rs) and
//! every codec module's own calls, in one `Guest::run`. Each call is
//! wrapped in tests/vm/guest/record-call.sh, which records its exit status
//! under its name, so that a failing or hanging call names itself (and
//! with it its row or codec) instead of failing the boot as a whole.

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

use crate::rows::{Codec, CODECS, ROWS};
use crate::support::vm::{Guest, GuestCommand, GuestError, GuestResult, ScriptCall};
use crate::{h264, mpeg2, row_runs, vp8, vp9};

/// Where the suite keeps what it makes and reads on the host (damaged
/// copies, normalised traces) under target/.
pub const SAVE_DIR: &str = "guest-codecs";

/// Seconds each call may take on top of the boot's own.
const SECONDS_PER_CALL: u64 = 60;

/// One call of the boot, named as the results it leaves (`NAME.rc`...).
pub struct GuestCall {
    pub name: String,
    pub call: ScriptCall,
    /// Seconds it may need beyond [`SECONDS_PER_CALL`] (the damaged
    /// copies' runs).
    pub extra_seconds: u64,
}

impl GuestCall {
    pub fn new(name: impl Into<String>, call: ScriptCall) -> Self {
        Self {
            name: name.into(),
            call,
            extra_seconds: 0,
        }
    }
}

/// What the boot gave back, and the calls it ran, in order.
pub struct Boot {
    pub result: GuestResult,
    pub calls: Vec<String>,
}

/// Every call, in the order the guest runs them: first those on visl as
/// loaded at boot, then the traced decodes that reload it to keep their
/// OUTPUT buffers.
fn calls() -> Vec<GuestCall> {
    let mut calls = Vec::new();
    for codec in CODECS {
        calls.extend(codec_calls(codec));
    }
    for row in ROWS {
        calls.extend(row_runs::calls(row));
    }
    calls.extend(ROWS.iter().filter_map(row_runs::traced_call));
    calls
}

/// A codec module's own calls.
fn codec_calls(codec: Codec) -> Vec<GuestCall> {
    let mut calls = row_runs::codec_calls(codec);
    calls.extend(match codec {
        Codec::H264 => h264::guest_calls(),
        Codec::Vp8 => vp8::guest_calls(),
        Codec::Vp9 => vp9::guest_calls(),
        Codec::Mpeg2 => mpeg2::guest_calls(),
        Codec::Hevc | Codec::Av1 => Vec::new(),
    });
    calls
}

/// The boot, run once by whichever test needs it first; a boot that did
/// not run fails every test with the reason (and is not tried again).
pub fn boot() -> &'static Boot {
    static BOOT: OnceLock<Result<Boot, String>> = OnceLock::new();
    BOOT.get_or_init(run)
        .as_ref()
        .unwrap_or_else(|reason| panic!("{reason}"))
}

/// The guest's results.
pub fn result() -> &'static GuestResult {
    &boot().result
}

/// Names the run directory of an earlier boot whose results the checks
/// read instead of booting (to work on a check, or on a stored oracle,
/// without waiting for the guest).
const EARLIER_RUN: &str = "REEL_GUEST_CODECS_RUN";

fn run() -> Result<Boot, String> {
    let calls = calls();
    let names: Vec<String> = calls.iter().map(|c| c.name.clone()).collect();
    if let Some(run_dir) = std::env::var_os(EARLIER_RUN) {
        return earlier_run(run_dir.into()).map(|result| Boot {
            result,
            calls: names,
        });
    }
    if let Some(twice) = names
        .iter()
        .enumerate()
        .find(|(i, name)| names[..*i].contains(name))
    {
        return Err(format!("two guest calls are named {}", twice.1));
    }
    // As each codec suite's boot allowed: a minute a call, and the
    // damaged copies' time.
    let seconds = 120
        + calls
            .iter()
            .map(|c| SECONDS_PER_CALL + c.extra_seconds)
            .sum::<u64>();
    let script = calls.into_iter().map(|c| {
        ScriptCall::new("record-call.sh")
            .arg(&c.name)
            .wrapping(c.call)
    });
    let command = GuestCommand::scripts(script)
        .timeout(Duration::from_secs(seconds))
        .env("RUST_BACKTRACE", "1")
        .label(SAVE_DIR);
    let error = match Guest::run(&command) {
        Ok(result) => {
            return Ok(Boot {
                result,
                calls: names,
            })
        }
        Err(error) => error,
    };
    // Stopped at the time limit: the first call without a status was
    // running.
    let stopped_in = match &error {
        GuestError::Timeout { run_dir, .. } => {
            let statuses =
                std::fs::read_to_string(run_dir.join("out/calls.tsv")).unwrap_or_default();
            let finished = statuses.lines().count();
            let running = names.get(finished).map_or("none", String::as_str);
            format!(
                " in call {running} ({finished} of {} calls finished)",
                names.len()
            )
        }
        _ => String::new(),
    };
    Err(format!("the test guest did not run{stopped_in}: {error}"))
}

/// The results an earlier boot left in `run_dir` (target/vm-runs/...).
fn earlier_run(run_dir: PathBuf) -> Result<GuestResult, String> {
    let read = |name: &str| std::fs::read_to_string(run_dir.join(name)).unwrap_or_default();
    let exit_code = read("exit_code").trim().parse().map_err(|_| {
        format!(
            "{EARLIER_RUN}: no finished guest run in {}",
            run_dir.display()
        )
    })?;
    eprintln!("checking the results of {}", run_dir.display());
    Ok(GuestResult {
        exit_code,
        stdout: read("stdout"),
        stderr: read("stderr"),
        console_log: read("console.log"),
        dmesg: read("dmesg"),
        result_dir: run_dir.join("out"),
        elapsed: Duration::ZERO,
        run_dir,
    })
}

/// Each call's exit status as record-call.sh saved it, by name.
pub fn call_statuses(result: &GuestResult) -> Vec<(String, String)> {
    result
        .read_result("calls.tsv")
        .unwrap_or_default()
        .lines()
        .filter_map(|line| line.split_once('\t'))
        .map(|(name, status)| (name.to_string(), status.trim().to_string()))
        .collect()
}
