//! Runs commands in the QEMU test guest that has the kernel's virtual
//! stateless decoder visl (see tests/vm/prepare.sh and tests/vm/run.sh).
//!
//! The guest's root is the host's (read-only, with a tmpfs on top) or the
//! debootstrapped trixie root, so the checkout, its `target/` directory and
//! the binaries built there are at the same paths inside. A test that needs
//! the guest and cannot start it gets an error saying why; it must fail, never
//! skip.

use std::ffi::OsStr;
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::{media, project_dir, target_dir};

/// The guest's root filesystem.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Root {
    /// The host's own root: bookworm, GStreamer 1.22.
    Host,
    /// Debian trixie (debootstrapped into the cache): GStreamer 1.26, which
    /// decodes HEVC and AV1 through visl.
    Trixie,
}

/// What to run in the guest.
#[derive(Debug, Clone)]
pub struct GuestCommand {
    /// What `/bin/sh` runs in the checkout's directory: calls of the helper
    /// scripts in tests/vm/guest ([`ScriptCall`]) or a single command.
    /// `$REEL_RESULTS` is a directory whose files come back to the host.
    pub script: String,
    pub root: Root,
    /// The guest is killed (and the run fails) after this long.
    pub timeout: Duration,
    /// `modprobe` lines loaded before the script, e.g. `visl visl_debug=1`.
    pub modules: Vec<String>,
    /// Extra environment for the script.
    pub env: Vec<(String, String)>,
    /// Names the run's directory under `target/vm-runs/`.
    pub label: String,
}

/// One call of a helper script of the guest (tests/vm/guest/NAME), with its
/// arguments and environment: a line of a [`GuestCommand`].
#[derive(Debug, Clone)]
pub struct ScriptCall {
    name: String,
    env: Vec<(String, String)>,
    args: Vec<String>,
}

impl ScriptCall {
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            env: Vec::new(),
            args: Vec::new(),
        }
    }

    /// One argument; a path is passed as the host sees it, which is where
    /// the guest sees it too.
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.args.push(arg.as_ref().to_string_lossy().into_owned());
        self
    }

    pub fn args<S: AsRef<OsStr>>(mut self, args: impl IntoIterator<Item = S>) -> Self {
        for arg in args {
            self = self.arg(arg);
        }
        self
    }

    /// Another call run by this one (a script taking a command, as
    /// visl-bitstream.sh does): its script and arguments follow this call's
    /// arguments, its environment joins this call's.
    pub fn wrapping(mut self, inner: ScriptCall) -> Self {
        self.env.extend(inner.env);
        self.args
            .push(guest_script(&inner.name).to_string_lossy().into_owned());
        self.args.extend(inner.args);
        self
    }

    /// Environment for this call only.
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// The call as a shell command line, every word quoted.
    pub fn command_line(&self) -> String {
        let env = self
            .env
            .iter()
            .map(|(key, value)| format!("{key}={}", shell_quote(value)));
        let script = shell_quote(&guest_script(&self.name).to_string_lossy());
        let args = self.args.iter().map(|a| shell_quote(a));
        env.chain([script])
            .chain(args)
            .collect::<Vec<_>>()
            .join(" ")
    }
}

impl GuestCommand {
    /// Runs one helper script of tests/vm/guest; its exit status is the
    /// run's.
    pub fn script(call: ScriptCall) -> Self {
        Self::new(call.command_line())
    }

    /// Runs helper scripts one after the other; the last one's exit status
    /// is the run's.
    pub fn scripts(calls: impl IntoIterator<Item = ScriptCall>) -> Self {
        let lines: Vec<String> = calls.into_iter().map(|c| c.command_line()).collect();
        Self::new(lines.join("\n"))
    }

    /// A command line on the host root with visl loaded and a 120 s limit.
    pub fn new(script: impl Into<String>) -> Self {
        Self {
            script: script.into(),
            root: Root::Host,
            timeout: Duration::from_secs(120),
            modules: vec!["visl".to_string()],
            env: Vec::new(),
            label: "run".to_string(),
        }
    }

    /// Runs this test binary's `inguest_*` tests in the guest (they are
    /// `#[ignore]`d on the host, where the devices they need are missing).
    pub fn inguest_tests() -> Self {
        let exe = std::env::current_exe().expect("test binary path");
        Self::new(format!(
            "{} --ignored --test-threads=1 --nocapture inguest_ 2>&1",
            shell_quote(&exe.to_string_lossy())
        ))
        .env("RUST_BACKTRACE", "1")
    }

    pub fn root(mut self, root: Root) -> Self {
        self.root = root;
        self
    }

    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Replaces the modules to load (`name args...` each).
    pub fn modules<S: Into<String>>(mut self, modules: impl IntoIterator<Item = S>) -> Self {
        self.modules = modules.into_iter().map(Into::into).collect();
        self
    }

    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    pub fn label(mut self, label: impl Into<String>) -> Self {
        self.label = label.into();
        self
    }

    /// Runs the script with visl's trace events recorded; the trace lands in
    /// `$REEL_RESULTS/visl-trace.txt` (read it with [`GuestResult::trace`]).
    pub fn traced(mut self) -> Self {
        self.script = format!(
            "{} /bin/sh -c {}",
            guest_script("visl-trace.sh").display(),
            shell_quote(&self.script)
        );
        self
    }
}

/// What a guest run gave back.
#[derive(Debug, Clone)]
pub struct GuestResult {
    /// The script's exit status.
    pub exit_code: i32,
    pub stdout: String,
    pub stderr: String,
    /// The guest's serial console (kernel messages, init's progress).
    pub console_log: String,
    /// The guest kernel's log at power-off.
    pub dmesg: String,
    /// The files the script wrote to `$REEL_RESULTS`.
    pub result_dir: PathBuf,
    /// Everything about the run (script, logs, result_dir).
    pub run_dir: PathBuf,
    /// Wall time of the run, guest boot included.
    pub elapsed: Duration,
}

impl GuestResult {
    /// The kernel log lines holding `marker` (a driver's report, e.g.
    /// visl's "capture_memory_max "): for each, the text after the marker
    /// and the numbers in it, in order.
    pub fn kernel_reports(&self, marker: &str) -> Vec<(String, Vec<u64>)> {
        self.dmesg
            .lines()
            .filter_map(|line| line.split_once(marker).map(|(_, rest)| rest))
            .map(|rest| {
                let numbers = rest
                    .split(|c: char| !c.is_ascii_digit())
                    .filter_map(|n| n.parse().ok())
                    .collect();
                (rest.to_string(), numbers)
            })
            .collect()
    }

    /// Panics with the script's output and the guest's logs unless it exited 0.
    #[track_caller]
    pub fn assert_success(&self) -> &Self {
        assert!(
            self.exit_code == 0,
            "guest command failed:\n{}",
            self.report()
        );
        self
    }

    /// For [`GuestCommand::inguest_tests`]: every one of the `expected`
    /// in-guest tests ran and passed.
    #[track_caller]
    pub fn assert_tests_passed(&self, expected: usize) {
        println!("{}", self.stdout);
        self.assert_success();
        let summary = format!("test result: ok. {expected} passed; 0 failed");
        assert!(
            self.stdout.contains(&summary),
            "expected '{summary}' from the guest:\n{}",
            self.report()
        );
    }

    /// Output and logs, for failure messages.
    pub fn report(&self) -> String {
        format!(
            "exit code {} after {:.1} s (run dir {})\n--- stdout\n{}\n--- stderr\n{}\n--- dmesg (tail)\n{}\n",
            self.exit_code,
            self.elapsed.as_secs_f64(),
            self.run_dir.display(),
            self.stdout,
            self.stderr,
            tail(&self.dmesg, 40),
        )
    }

    /// A file the script wrote to `$REEL_RESULTS`.
    pub fn read_result(&self, name: &str) -> Result<String, GuestError> {
        let path = self.result_dir.join(name);
        std::fs::read_to_string(&path)
            .map_err(|e| GuestError::Io(format!("{}: {e}", path.display())))
    }

    /// The trace of a [`GuestCommand::traced`] run.
    pub fn trace(&self) -> Result<String, GuestError> {
        self.read_result("visl-trace.txt")
    }
}

#[derive(Debug, thiserror::Error)]
pub enum GuestError {
    #[error("preparing the test bed failed (tests/vm/prepare.sh):\n{0}")]
    Prepare(String),
    #[error("the guest timed out after {timeout:?} (run dir {}); console log:\n{console_log}", run_dir.display())]
    Timeout {
        timeout: Duration,
        console_log: String,
        /// What the script had written by then is in its `out/`.
        run_dir: PathBuf,
    },
    #[error("the guest did not run the command:\n{0}")]
    Start(String),
    #[error("{0}")]
    Io(String),
}

/// The test bed's cache (`REEL_VM_CACHE`, default `tests/vm/cache`).
pub fn cache_dir() -> PathBuf {
    std::env::var_os("REEL_VM_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| project_dir().join("tests/vm/cache"))
}

/// The prepared kernel, modules and initramfs (`kver`, `kernel/`, `src/`
/// with the visl, vicodec, v4l2-mem2mem and vkms sources).
pub fn bed_dir() -> PathBuf {
    cache_dir().join("current")
}

/// A helper script the guest runs (tests/vm/guest/NAME).
pub fn guest_script(name: &str) -> PathBuf {
    project_dir().join("tests/vm/guest").join(name)
}

/// Runs tests/vm/prepare.sh (once per process per root; a fast no-op when
/// the cache is complete).
pub fn prepare(root: Root) -> Result<(), GuestError> {
    static HOST: OnceLock<Result<(), String>> = OnceLock::new();
    static TRIXIE: OnceLock<Result<(), String>> = OnceLock::new();
    let (cell, args): (_, &[&str]) = match root {
        Root::Host => (&HOST, &[]),
        Root::Trixie => (&TRIXIE, &["--trixie"]),
    };
    cell.get_or_init(|| {
        let output = Command::new(project_dir().join("tests/vm/prepare.sh"))
            .args(args)
            .output()
            .map_err(|e| format!("cannot run tests/vm/prepare.sh: {e}"))?;
        if output.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{}{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            ))
        }
    })
    .clone()
    .map_err(GuestError::Prepare)
}

pub struct Guest;

impl Guest {
    /// Boots the guest, runs the command, powers off. Prepares the test bed
    /// first if needed. Safe to call from parallel tests: each run has its
    /// own directory, and run.sh lets only a few guests run at once.
    pub fn run(command: &GuestCommand) -> Result<GuestResult, GuestError> {
        prepare(command.root)?;
        let run_dir = new_run_dir(&command.label)?;
        let io = |what: &str, e: std::io::Error| GuestError::Io(format!("{what}: {e}"));
        std::fs::write(run_dir.join("script.sh"), &command.script)
            .map_err(|e| io("writing script.sh", e))?;

        let mut run = Command::new(project_dir().join("tests/vm/run.sh"));
        run.arg("--dir")
            .arg(&run_dir)
            .arg("--timeout")
            .arg(command.timeout.as_secs().max(1).to_string())
            .arg("--root")
            .arg(match command.root {
                Root::Host => "host",
                Root::Trixie => "trixie",
            });
        if command.modules.is_empty() {
            run.arg("--no-modules");
        }
        for module in &command.modules {
            run.arg("--module").arg(module);
        }
        for (key, value) in &command.env {
            run.arg("--env").arg(format!("{key}={value}"));
        }
        // Another root sees the checkout; the target directory and the test
        // media may live elsewhere (CARGO_TARGET_DIR, REEL_TEST_MEDIA).
        run.arg("--bind").arg(target_dir());
        let media = media::location();
        if !media.starts_with(target_dir()) {
            run.arg("--bind").arg(media);
        }
        run.env_remove("REEL_VM_SHOW");

        let start = Instant::now();
        let output = run
            .output()
            .map_err(|e| io("cannot run tests/vm/run.sh", e))?;
        let elapsed = start.elapsed();
        let read = |name: &str| std::fs::read_to_string(run_dir.join(name)).unwrap_or_default();
        let console_log = read("console.log");
        match output.status.code() {
            Some(0) => {}
            Some(124) => {
                return Err(GuestError::Timeout {
                    timeout: command.timeout,
                    console_log,
                    run_dir,
                })
            }
            _ => {
                return Err(GuestError::Start(format!(
                    "{}\n(run dir {})",
                    String::from_utf8_lossy(&output.stderr),
                    run_dir.display()
                )))
            }
        }
        let exit_code = read("exit_code").trim().parse().map_err(|_| {
            GuestError::Start(format!(
                "no exit code from the guest; console log:\n{console_log}"
            ))
        })?;
        Ok(GuestResult {
            exit_code,
            stdout: read("stdout"),
            stderr: read("stderr"),
            console_log,
            dmesg: read("dmesg"),
            result_dir: run_dir.join("out"),
            run_dir,
            elapsed,
        })
    }
}

/// `target/vm-runs/<label>-<pid>-<n>`, fresh.
fn new_run_dir(label: &str) -> Result<PathBuf, GuestError> {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    static CREATE: Mutex<()> = Mutex::new(());
    let _guard = CREATE.lock().unwrap_or_else(|e| e.into_inner());
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let safe: String = label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let dir = target_dir()
        .join("vm-runs")
        .join(format!("{safe}-{}-{n}", std::process::id()));
    if dir.exists() {
        std::fs::remove_dir_all(&dir)
            .map_err(|e| GuestError::Io(format!("{}: {e}", dir.display())))?;
    }
    std::fs::create_dir_all(&dir).map_err(|e| GuestError::Io(format!("{}: {e}", dir.display())))?;
    Ok(dir)
}

/// Quotes a string for /bin/sh.
pub fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}
