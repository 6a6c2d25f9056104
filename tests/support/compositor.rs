//! A real compositor for integration tests: weston 14, headless backend, GL
//! renderer (llvmpipe), kiosk shell by default, in its own runtime directory.
//!
//! `Weston::start` fails the test (with weston's log) if weston cannot run;
//! it never skips. Screenshots go through `weston-screenshooter` (allowed
//! because weston runs with `--debug`). Weston's protocol log (`-l proto`)
//! is kept so tests can check what the client really sent.

use std::fs::{self, File};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread::sleep;
use std::time::{Duration, Instant};

use super::weston_log;

const START_TIMEOUT: Duration = Duration::from_secs(20);
const SCREENSHOT_TIMEOUT: Duration = Duration::from_secs(20);
/// weston headless's repaint rate in the tests (mHz): fast enough that
/// frame callbacks never hold a client back.
const FAST_REFRESH_MHZ: u32 = 1_000_000;

static NEXT_ID: AtomicU32 = AtomicU32::new(0);

pub struct Weston {
    child: Child,
    runtime_dir: PathBuf,
    socket_name: String,
    log_path: PathBuf,
    pub width: u32,
    pub height: u32,
    shots: AtomicU32,
    /// Set by tests that provoke protocol errors on purpose; otherwise a
    /// protocol error in weston's log fails the test when weston is dropped.
    protocol_errors_expected: bool,
}

/// A screenshot as tightly packed RGB.
pub struct Screenshot {
    pub width: u32,
    pub height: u32,
    pub rgb: Vec<u8>,
}

impl Screenshot {
    pub fn pixel(&self, x: u32, y: u32) -> [u8; 3] {
        let i = (y as usize * self.width as usize + x as usize) * 3;
        [self.rgb[i], self.rgb[i + 1], self.rgb[i + 2]]
    }
}

impl Weston {
    /// Starts weston (kiosk shell: every window fullscreen) with one
    /// `width` x `height` output and waits for its socket. Panics with
    /// weston's log if it does not come up.
    pub fn start(width: u32, height: u32) -> Weston {
        Self::start_with_shell(width, height, "kiosk")
    }

    /// Like `start`, with another shell (`desktop`: ordinary windows that
    /// may be toggled fullscreen).
    pub fn start_with_shell(width: u32, height: u32, shell: &str) -> Weston {
        Self::start_with(width, height, shell, "gl")
    }

    /// Full control: `shell` (kiosk, desktop, fullscreen) and `renderer`
    /// (gl: linux-dmabuf available; pixman: no linux-dmabuf in Debian's
    /// build, for the wl_shm-only case).
    pub fn start_with(width: u32, height: u32, shell: &str, renderer: &str) -> Weston {
        // 1000 Hz: frame callbacks never hold a test back.
        Self::start_at(width, height, shell, renderer, 1_000_000)
    }

    /// `start_with` at a refresh rate of `millihertz` (60000: a monitor's
    /// 60 Hz).
    pub fn start_at(
        width: u32,
        height: u32,
        shell: &str,
        renderer: &str,
        millihertz: u32,
    ) -> Weston {
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let tag = format!("reel-test-{}-{id}", std::process::id());
        let runtime_dir = std::env::temp_dir().join(&tag);
        let _ = fs::remove_dir_all(&runtime_dir);
        fs::create_dir_all(&runtime_dir).expect("create weston runtime dir");
        fs::set_permissions(&runtime_dir, fs::Permissions::from_mode(0o700))
            .expect("chmod runtime dir");
        let log_path = runtime_dir.join("weston.log");
        let log = File::create(&log_path).expect("create weston log");
        let log_err = log.try_clone().expect("dup weston log");
        let socket_name = format!("wl-{tag}");
        let child = Command::new("weston")
            .args([
                "--backend=headless",
                "--debug",
                "--logger-scopes=log,proto",
                "--idle-time=0",
            ])
            .arg(format!("--refresh-rate={millihertz}"))
            .arg(format!("--shell={shell}"))
            .arg(format!("--renderer={renderer}"))
            .arg(format!("--width={width}"))
            .arg(format!("--height={height}"))
            .arg(format!("--socket={socket_name}"))
            .env("XDG_RUNTIME_DIR", &runtime_dir)
            .env_remove("WAYLAND_DISPLAY")
            .env_remove("DISPLAY")
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log_err)
            .spawn()
            .unwrap_or_else(|e| {
                panic!("cannot run weston (is weston 14 installed? packaging/install-deps.sh): {e}")
            });
        let mut weston = Weston {
            child,
            runtime_dir,
            socket_name,
            log_path,
            width,
            height,
            shots: AtomicU32::new(0),
            protocol_errors_expected: false,
        };
        weston.wait_for_socket();
        weston
    }

    fn wait_for_socket(&mut self) {
        let deadline = Instant::now() + START_TIMEOUT;
        let socket = self.socket_path();
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!(
                    "weston exited during start-up ({status}); its log:\n{}",
                    self.log()
                );
            }
            if answers_sync(&socket) {
                return;
            }
            if Instant::now() > deadline {
                panic!(
                    "weston did not come up within {START_TIMEOUT:?}; its log:\n{}",
                    self.log()
                );
            }
            sleep(Duration::from_millis(20));
        }
    }

    /// Absolute path of the Wayland socket.
    /// Kills weston at once (SIGKILL): a compositor crash, as its clients
    /// see it.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    pub fn socket_path(&self) -> PathBuf {
        self.runtime_dir.join(&self.socket_name)
    }

    pub fn socket_name(&self) -> &str {
        &self.socket_name
    }

    pub fn runtime_dir(&self) -> &Path {
        &self.runtime_dir
    }

    /// What a client process needs in its environment to reach this weston.
    pub fn client_env(&self) -> Vec<(String, String)> {
        vec![
            (
                "XDG_RUNTIME_DIR".into(),
                self.runtime_dir.display().to_string(),
            ),
            ("WAYLAND_DISPLAY".into(), self.socket_name.clone()),
        ]
    }

    /// Weston's log so far (stdout + stderr, including the protocol log).
    pub fn log(&self) -> String {
        fs::read_to_string(&self.log_path).unwrap_or_default()
    }

    /// Protocol log lines of the client with process id `pid`, as
    /// `("rq" | "ev", "interface@id.message(args)")`.
    pub fn protocol_of(&self, pid: u32) -> Vec<(String, String)> {
        weston_log::client_protocol(&self.log(), &pid.to_string())
    }

    /// For a test that provokes a protocol error on purpose.
    pub fn expect_protocol_errors(&mut self) {
        self.protocol_errors_expected = true;
    }

    /// The protocol errors weston sent to any client, as its protocol log
    /// shows them (`wl_display@1.error(object, code, "message")`).
    pub fn protocol_errors(&self) -> Vec<String> {
        weston_log::protocol_errors(&self.log())
            .into_iter()
            .map(str::to_owned)
            .collect()
    }

    /// Captures the output with weston-screenshooter and decodes it.
    pub fn screenshot(&self) -> Screenshot {
        let n = self.shots.fetch_add(1, Ordering::Relaxed);
        let dir = self.runtime_dir.join(format!("shot-{n}"));
        fs::create_dir_all(&dir).expect("create screenshot dir");
        let mut child = Command::new("weston-screenshooter")
            .current_dir(&dir)
            .env("XDG_RUNTIME_DIR", &self.runtime_dir)
            .env("WAYLAND_DISPLAY", &self.socket_name)
            .env("XDG_PICTURES_DIR", &dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run weston-screenshooter: {e}"));
        let deadline = Instant::now() + SCREENSHOT_TIMEOUT;
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait for screenshooter") {
                break status;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!("weston-screenshooter hung; weston log:\n{}", self.log());
            }
            sleep(Duration::from_millis(10));
        };
        let out = child.wait_with_output().expect("screenshooter output");
        assert!(
            status.success(),
            "weston-screenshooter failed ({status}): {}{}\nweston log:\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            self.log()
        );
        let png = png_in(&dir)
            .unwrap_or_else(|| panic!("weston-screenshooter wrote no PNG in {}", dir.display()));
        decode_png(&png)
    }
}

/// True if a compositor on `socket` answers a `wl_display.sync`. The socket
/// exists before weston has loaded its shell (and weston may still exit if
/// that fails); an answer means its event loop runs with everything loaded.
pub fn answers_sync(socket: &Path) -> bool {
    use std::io::{Read, Write};
    let Ok(mut stream) = std::os::unix::net::UnixStream::connect(socket) else {
        return false;
    };
    // wl_display@1.sync(new id wl_callback@2): object, size << 16 | opcode, new id.
    let mut request = Vec::new();
    for word in [1u32, 12 << 16, 2] {
        request.extend_from_slice(&word.to_ne_bytes());
    }
    if stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .is_err()
        || stream.write_all(&request).is_err()
    {
        return false;
    }
    // The reply starts with wl_callback@2.done (object 2, opcode 0).
    let mut reply = [0u8; 8];
    stream.read_exact(&mut reply).is_ok() && reply[..4] == 2u32.to_ne_bytes()
}

/// The PNG in `dir` (weston-screenshooter names its own), if any.
pub fn png_in(dir: &Path) -> Option<PathBuf> {
    fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "png"))
}

/// A PNG (a screenshot weston-screenshooter wrote) as RGB.
pub fn decode_png(path: &Path) -> Screenshot {
    let file = File::open(path).expect("open screenshot");
    let mut decoder = png::Decoder::new(file);
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info().expect("screenshot PNG header");
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).expect("screenshot PNG data");
    let channels = match info.color_type {
        png::ColorType::Rgb => 3,
        png::ColorType::Rgba => 4,
        other => panic!("unexpected screenshot colour type {other:?}"),
    };
    let mut rgb = Vec::with_capacity(info.width as usize * info.height as usize * 3);
    for row in buf[..info.buffer_size()].chunks_exact(info.line_size) {
        for px in row.chunks_exact(channels).take(info.width as usize) {
            rgb.extend_from_slice(&px[..3]);
        }
    }
    Screenshot {
        width: info.width,
        height: info.height,
        rgb,
    }
}

impl Drop for Weston {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            // The test failed: show the end of weston's log with it.
            let log = self.log();
            let lines: Vec<&str> = log.lines().collect();
            let tail = lines[lines.len().saturating_sub(150)..].join("\n");
            eprintln!("--- weston log (last 150 lines) ---\n{tail}");
            eprintln!(
                "weston runtime dir kept for inspection: {}",
                self.runtime_dir.display()
            );
        } else {
            // Every test that used this weston also proves no client got a
            // protocol error (a client sees one only as a lost connection).
            let errors = self.protocol_errors();
            if !errors.is_empty() && !self.protocol_errors_expected {
                panic!(
                    "weston sent protocol errors (log kept in {}):\n{}",
                    self.runtime_dir.display(),
                    errors.join("\n")
                );
            }
            let _ = fs::remove_dir_all(&self.runtime_dir);
        }
    }
}
