//! A real sound server for integration tests: PipeWire with WirePlumber
//! (which links streams to the default sink) and a null sink, in a private
//! runtime directory with its own session bus (WirePlumber needs one), as
//! a desktop session has. `pw-record` records the sink's monitor: what reel
//! played, as the server mixed it.
//!
//! `SoundServer::start` fails the test (with the logs) if the server cannot
//! run; it never skips.

use std::fs::{self, File};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread::sleep;
use std::time::{Duration, Instant};

const START_TIMEOUT: Duration = Duration::from_secs(20);
/// The rate and layout of the null sink, and of what is recorded.
pub const RATE: u32 = 48_000;
pub const CHANNELS: usize = 2;
const SINK: &str = "reel-test-sink";

static NEXT_ID: AtomicU32 = AtomicU32::new(0);

pub struct SoundServer {
    /// Session bus, pipewire, wireplumber: stopped in reverse order.
    children: Vec<(&'static str, Child)>,
    runtime_dir: PathBuf,
}

/// One test at a time in a test binary: on two cores, a test playing
/// sound starves another's sound server, whose recording then has gaps.
pub fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A running `pw-record`.
pub struct Recording {
    child: Child,
    wav: PathBuf,
}

/// A running `pw-record` writing raw samples into a pipe, each read of it
/// dated on CLOCK_MONOTONIC.
pub struct TimedRecording {
    child: Child,
    reader: std::thread::JoinHandle<(Vec<u8>, Vec<Read>)>,
}

/// One read of the pipe: how many sample frames came before it, and when it
/// returned.
#[derive(Debug, Clone, Copy)]
pub struct Read {
    frames_before: usize,
    at: Duration,
}

/// What a `TimedRecording` recorded.
pub struct Timed {
    /// Interleaved stereo.
    pub samples: Vec<f32>,
    reads: Vec<Read>,
}

/// Reads this side and that of a sample date it.
const DATING_WINDOW: usize = 60;

impl Timed {
    /// When sample frame `frame` was played, on CLOCK_MONOTONIC, and how
    /// far the reads around it disagree (10th to 90th percentile).
    ///
    /// A null sink's clock is a timer, not exactly `RATE` (1 % slow was
    /// seen): the reads around the sample give the local pace (a straight
    /// line through them), and their earliest tenth the hop through
    /// pw-record (a read returns at or after the cycle that played it).
    pub fn time_of(&self, frame: usize) -> (Duration, Duration) {
        let at = self
            .reads
            .partition_point(|read| read.frames_before <= frame)
            .max(2);
        let from = at.saturating_sub(DATING_WINDOW).max(1);
        let to = (at + DATING_WINDOW).min(self.reads.len());
        let window = &self.reads[from..to];
        let x = |r: &Read| r.frames_before as f64;
        let y = |r: &Read| r.at.as_secs_f64();
        let n = window.len() as f64;
        let (mx, my) = (
            window.iter().map(x).sum::<f64>() / n,
            window.iter().map(y).sum::<f64>() / n,
        );
        let sxy: f64 = window.iter().map(|r| (x(r) - mx) * (y(r) - my)).sum();
        let sxx: f64 = window.iter().map(|r| (x(r) - mx) * (x(r) - mx)).sum();
        let pace = if sxx > 0.0 {
            sxy / sxx
        } else {
            1.0 / f64::from(RATE)
        };
        let mut residuals: Vec<f64> = window
            .iter()
            .map(|r| y(r) - (my + pace * (x(r) - mx)))
            .collect();
        residuals.sort_by(f64::total_cmp);
        let percentile = |p: usize| residuals[(residuals.len() - 1) * p / 100];
        let time = my + pace * (frame as f64 - mx) + percentile(10);
        (
            Duration::from_secs_f64(time),
            Duration::from_secs_f64(percentile(90) - percentile(10)),
        )
    }
}

/// CLOCK_MONOTONIC now.
pub fn monotonic_now() -> Duration {
    let now =
        nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC).expect("CLOCK_MONOTONIC");
    Duration::new(now.tv_sec() as u64, now.tv_nsec() as u32)
}

impl SoundServer {
    pub fn start() -> SoundServer {
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let runtime_dir =
            std::env::temp_dir().join(format!("reel-sound-{}-{id}", std::process::id()));
        let _ = fs::remove_dir_all(&runtime_dir);
        fs::create_dir_all(&runtime_dir).expect("create the sound server's runtime dir");
        fs::set_permissions(&runtime_dir, fs::Permissions::from_mode(0o700))
            .expect("chmod the runtime dir");
        let mut server = SoundServer {
            children: Vec::new(),
            runtime_dir,
        };
        let bus = server.runtime_dir.join("bus");
        server.spawn(
            "dbus-daemon",
            &[
                "--session",
                &format!("--address=unix:path={}", bus.display()),
                "--nofork",
                "--nopidfile",
            ],
        );
        server.wait_for("the session bus", |s| bus.exists() && s.alive());
        server.spawn("pipewire", &[]);
        let socket = server.runtime_dir.join("pipewire-0");
        server.wait_for("pipewire's socket", |s| socket.exists() && s.alive());
        server.spawn("wireplumber", &[]);
        let sink = format!(
            "{{ factory.name=support.null-audio-sink node.name={SINK} \
             media.class=Audio/Sink object.linger=true audio.rate={RATE} \
             audio.position=[FL FR] }}"
        );
        let created = server
            .command("pw-cli")
            .args(["create-node", "adapter", &sink])
            .output()
            .expect("cannot run pw-cli");
        assert!(
            created.status.success(),
            "pw-cli create-node failed: {}\n{}",
            String::from_utf8_lossy(&created.stderr),
            server.logs()
        );
        // The sink is the default once WirePlumber has seen it: it then
        // links new streams to it.
        server.wait_for("WirePlumber to choose the null sink", |s| {
            s.alive()
                && s.command("wpctl").arg("status").output().is_ok_and(|o| {
                    String::from_utf8_lossy(&o.stdout)
                        .lines()
                        .any(|l| l.contains('*') && l.contains(SINK))
                })
        });
        server
    }

    /// The environment a client of this server runs with.
    pub fn client_env(&self) -> Vec<(String, String)> {
        let dir = self.runtime_dir.display().to_string();
        vec![
            ("XDG_RUNTIME_DIR".into(), dir.clone()),
            (
                "DBUS_SESSION_BUS_ADDRESS".into(),
                format!("unix:path={dir}/bus"),
            ),
            // Nothing of the user's (stored volumes, configuration) applies.
            ("HOME".into(), dir.clone()),
            ("XDG_CONFIG_HOME".into(), format!("{dir}/config")),
            ("XDG_STATE_HOME".into(), format!("{dir}/state")),
        ]
    }

    pub fn runtime_dir(&self) -> &Path {
        &self.runtime_dir
    }

    /// Starts recording the null sink's monitor (f32, 48 kHz, stereo).
    pub fn record(&self, name: &str) -> Recording {
        let wav = self.runtime_dir.join(format!("{name}.wav"));
        let child = self
            .pw_record()
            .arg(&wav)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("cannot start pw-record");
        self.wait_for_recording_link();
        Recording { child, wav }
    }

    /// Starts recording the null sink's monitor into a pipe: the samples of
    /// a graph cycle reach it as the sink plays them, so the time each read
    /// returns, less the samples before it, dates the recording's start
    /// (a little late, by the hop through pw-record: the median is taken).
    pub fn record_timed(&self) -> TimedRecording {
        let mut child = self
            .pw_record()
            // Small cycles date the samples finely.
            .args(["--latency", "256", "-"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("cannot start pw-record");
        let mut pipe = child.stdout.take().expect("pw-record's stdout");
        let reader = std::thread::spawn(move || {
            use std::io::Read as _;
            let (mut bytes, mut reads) = (Vec::new(), Vec::new());
            let mut buffer = vec![0u8; 1 << 16];
            while let Ok(n @ 1..) = pipe.read(&mut buffer) {
                reads.push(Read {
                    frames_before: bytes.len() / (4 * CHANNELS),
                    at: monotonic_now(),
                });
                bytes.extend_from_slice(&buffer[..n]);
            }
            (bytes, reads)
        });
        self.wait_for_recording_link();
        TimedRecording { child, reader }
    }

    /// Returns once WirePlumber has linked both of the monitor's channels
    /// to pw-record: only then is what reel plays recorded. (A fixed wait
    /// was not enough on a loaded machine: the link came a second late and
    /// the first beeps were never recorded.)
    fn wait_for_recording_link(&self) {
        let deadline = Instant::now() + START_TIMEOUT;
        let linked = || {
            self.command("pw-link")
                .arg("--links")
                .output()
                .is_ok_and(|out| {
                    let links = String::from_utf8_lossy(&out.stdout);
                    ["FL", "FR"]
                        .iter()
                        .all(|channel| links.contains(&format!("|<- {SINK}:monitor_{channel}")))
                })
        };
        while !linked() {
            assert!(
                Instant::now() < deadline,
                "pw-record was not linked to {SINK}'s monitor\n{}",
                self.logs()
            );
            sleep(Duration::from_millis(20));
        }
    }

    /// `pw-record` on the null sink's monitor, f32 stereo at `RATE`.
    fn pw_record(&self) -> Command {
        let mut command = self.command("pw-record");
        command
            .args(["--target", SINK, "--format", "f32", "--channels", "2"])
            .arg(format!("--rate={RATE}"));
        command
    }

    fn command(&self, program: &str) -> Command {
        let mut command = Command::new(program);
        command.envs(self.client_env());
        command
    }

    fn spawn(&mut self, name: &'static str, args: &[&str]) {
        let log = File::create(self.runtime_dir.join(format!("{name}.log"))).expect("log file");
        let err = log.try_clone().expect("dup log file");
        let child = self
            .command(name)
            .args(args)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(err)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name} (packaging/install-deps.sh): {e}"));
        self.children.push((name, child));
    }

    fn alive(&mut self) -> bool {
        self.children
            .iter_mut()
            .all(|(_, child)| matches!(child.try_wait(), Ok(None)))
    }

    fn wait_for(&mut self, what: &str, mut ready: impl FnMut(&mut Self) -> bool) {
        let deadline = Instant::now() + START_TIMEOUT;
        while !ready(self) {
            assert!(
                Instant::now() < deadline && self.alive(),
                "the sound server did not start: no {what}\n{}",
                self.logs()
            );
            sleep(Duration::from_millis(50));
        }
    }

    fn logs(&self) -> String {
        let mut text = String::new();
        for (name, _) in &self.children {
            let log = fs::read_to_string(self.runtime_dir.join(format!("{name}.log")))
                .unwrap_or_default();
            let tail: Vec<&str> = log.lines().rev().take(40).collect();
            text.push_str(&format!("--- {name} log (last lines) ---\n"));
            for line in tail.iter().rev() {
                text.push_str(line);
                text.push('\n');
            }
        }
        text
    }
}

impl Drop for SoundServer {
    fn drop(&mut self) {
        while let Some((_, mut child)) = self.children.pop() {
            let _ = child.kill();
            let _ = child.wait();
        }
        if std::thread::panicking() {
            eprintln!("{}", self.logs());
            eprintln!("sound server dir kept: {}", self.runtime_dir.display());
        } else {
            let _ = fs::remove_dir_all(&self.runtime_dir);
        }
    }
}

impl Recording {
    /// Stops recording and returns what was recorded, interleaved stereo.
    pub fn stop(mut self) -> Vec<f32> {
        // SIGINT: pw-record finishes the WAV header on it.
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-INT", &pid]).status();
        let _ = self.child.wait();
        let pcm = super::pcm::decode(&self.wav, None, RATE, CHANNELS);
        assert!(
            !pcm.is_empty(),
            "nothing recorded in {}",
            self.wav.display()
        );
        pcm
    }
}

impl TimedRecording {
    pub fn stop(mut self) -> Timed {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-INT", &pid]).status();
        let _ = self.child.wait();
        let (bytes, reads) = self.reader.join().expect("the recording's reader");
        let samples: Vec<f32> = bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        // (The first read holds what queued while pw-record started: the
        // dating leaves it out.)
        assert!(
            reads.len() > 2 * DATING_WINDOW,
            "too few reads to date the recording: {}",
            reads.len()
        );
        Timed { samples, reads }
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
