//! A second real compositor for what weston 14 does not offer: sway
//! (wlroots) headless with the pixman renderer. It has
//! `zwp_idle_inhibit_manager_v1`, `zxdg_decoration_manager_v1` and a seat
//! that a `zwlr_virtual_pointer_v1` gives a pointer, so that a test can
//! move the mouse over reel's window. No linux-dmabuf without a GPU: reel
//! presents through wl_shm here.
//!
//! Everything clients send and receive is in sway's log (libwayland's
//! `WAYLAND_DEBUG=server`): requests as `[ms] interface#id.request(args)`,
//! events as `[ms]  -> interface#id.event(args)`. sway refuses to run as
//! root: as root it is started as `nobody` (setpriv), in a runtime
//! directory that user owns.

use std::fs::{self, File};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread::sleep;
use std::time::{Duration, Instant};

use wayland_client::globals::{registry_queue_init, GlobalListContents};
use wayland_client::protocol::{wl_registry, wl_seat::WlSeat};
use wayland_client::{Connection, Dispatch, EventQueue, QueueHandle};
use wayland_protocols_wlr::virtual_pointer::v1::client::{
    zwlr_virtual_pointer_manager_v1::ZwlrVirtualPointerManagerV1,
    zwlr_virtual_pointer_v1::ZwlrVirtualPointerV1,
};

use super::compositor::answers_sync;

const START_TIMEOUT: Duration = Duration::from_secs(20);
/// The user sway runs as when the tests run as root.
const NOBODY: u32 = 65534;

static NEXT_ID: AtomicU32 = AtomicU32::new(0);

pub struct Sway {
    child: Child,
    runtime_dir: PathBuf,
    socket_name: String,
    log_path: PathBuf,
    pub width: u32,
    pub height: u32,
}

/// One line of sway's protocol log.
#[derive(Clone, Debug, PartialEq)]
pub struct Message {
    /// Milliseconds on libwayland's clock.
    pub at_ms: f64,
    /// An event sent to a client (else a request from one).
    pub event: bool,
    /// `interface#id.name(args)`.
    pub text: String,
}

impl Sway {
    /// Starts sway with one `width` x `height` headless output; panics with
    /// its log if it does not come up.
    pub fn start(width: u32, height: u32) -> Sway {
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let tag = format!("reel-sway-{}-{id}", std::process::id());
        let runtime_dir = std::env::temp_dir().join(&tag);
        let _ = fs::remove_dir_all(&runtime_dir);
        fs::create_dir_all(&runtime_dir).expect("create sway runtime dir");
        fs::set_permissions(&runtime_dir, fs::Permissions::from_mode(0o700))
            .expect("chmod runtime dir");
        let config = runtime_dir.join("config");
        fs::write(
            &config,
            format!("output HEADLESS-1 resolution {width}x{height}\n"),
        )
        .expect("write sway config");
        // /proc/self belongs to the process's effective user.
        let as_root = fs::metadata("/proc/self").expect("/proc/self").uid() == 0;
        if as_root {
            for path in [&runtime_dir, &config] {
                std::os::unix::fs::chown(path, Some(NOBODY), Some(NOBODY))
                    .expect("give the runtime dir to nobody");
            }
        }
        let log_path = runtime_dir.join("sway.log");
        let log = File::create(&log_path).expect("create sway log");
        let mut command = if as_root {
            let mut c = Command::new("setpriv");
            c.args([
                &format!("--reuid={NOBODY}"),
                &format!("--regid={NOBODY}"),
                "--clear-groups",
                "sway",
            ]);
            c
        } else {
            Command::new("sway")
        };
        let child = command
            .arg("--config")
            .arg(&config)
            .env("XDG_RUNTIME_DIR", &runtime_dir)
            .env("HOME", &runtime_dir)
            .env("WLR_BACKENDS", "headless")
            .env("WLR_RENDERER", "pixman")
            .env("WLR_LIBINPUT_NO_DEVICES", "1")
            .env("WAYLAND_DEBUG", "server")
            .env_remove("WAYLAND_DISPLAY")
            .env_remove("DISPLAY")
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("dup sway log"))
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| {
                panic!("cannot run sway (packaging/install-deps.sh installs it): {e}")
            });
        let mut sway = Sway {
            child,
            runtime_dir,
            socket_name: String::new(),
            log_path,
            width,
            height,
        };
        sway.wait_for_socket();
        sway
    }

    fn wait_for_socket(&mut self) {
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("sway exited during start-up ({status}):\n{}", self.log());
            }
            // sway names its socket itself (wayland-N), alone in this directory.
            if let Some(name) = self.find_socket() {
                if answers_sync(&self.runtime_dir.join(&name)) {
                    self.socket_name = name;
                    return;
                }
            }
            assert!(
                Instant::now() < deadline,
                "sway did not come up within {START_TIMEOUT:?}:\n{}",
                self.log()
            );
            sleep(Duration::from_millis(20));
        }
    }

    fn find_socket(&self) -> Option<String> {
        fs::read_dir(&self.runtime_dir)
            .ok()?
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .find(|n| n.starts_with("wayland-") && !n.ends_with(".lock"))
    }

    /// What a client process needs in its environment to reach this sway.
    pub fn client_env(&self) -> Vec<(String, String)> {
        vec![
            (
                "XDG_RUNTIME_DIR".into(),
                self.runtime_dir.display().to_string(),
            ),
            ("WAYLAND_DISPLAY".into(), self.socket_name.clone()),
        ]
    }

    pub fn runtime_dir(&self) -> &Path {
        &self.runtime_dir
    }

    pub fn log(&self) -> String {
        fs::read_to_string(&self.log_path).unwrap_or_default()
    }

    /// Every protocol message so far, in order.
    pub fn messages(&self) -> Vec<Message> {
        self.log().lines().filter_map(parse_message).collect()
    }

    /// Waits until a message satisfies `wanted`; returns it.
    pub fn wait_for(&self, what: &str, wanted: impl Fn(&Message) -> bool) -> Message {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(found) = self.messages().into_iter().find(|m| wanted(m)) {
                return found;
            }
            assert!(
                Instant::now() < deadline,
                "sway's protocol log never showed {what}"
            );
            sleep(Duration::from_millis(20));
        }
    }

    /// A virtual mouse on sway's seat (it gives the seat its pointer).
    pub fn virtual_pointer(&self) -> VirtualPointer {
        VirtualPointer::connect(&self.runtime_dir.join(&self.socket_name), self)
    }
}

/// `[1234.567] iface#1.msg(...)` or `[1234.567]  -> iface#1.msg(...)`.
fn parse_message(line: &str) -> Option<Message> {
    let rest = line.strip_prefix('[')?;
    let (ms, rest) = rest.split_once(']')?;
    let at_ms = ms.trim().parse().ok()?;
    let rest = rest.trim_start();
    let (event, text) = match rest.strip_prefix("-> ") {
        Some(text) => (true, text),
        None => (false, rest),
    };
    text.contains('#').then(|| Message {
        at_ms,
        event,
        text: text.to_owned(),
    })
}

impl Drop for Sway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            eprintln!("sway's log kept in {}", self.log_path.display());
        } else {
            let _ = fs::remove_dir_all(&self.runtime_dir);
        }
    }
}

struct PointerClient;

impl Dispatch<wl_registry::WlRegistry, GlobalListContents> for PointerClient {
    fn event(
        _: &mut Self,
        _: &wl_registry::WlRegistry,
        _: wl_registry::Event,
        _: &GlobalListContents,
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
    }
}

wayland_client::delegate_noop!(PointerClient: ignore WlSeat);
wayland_client::delegate_noop!(PointerClient: ZwlrVirtualPointerManagerV1);
wayland_client::delegate_noop!(PointerClient: ZwlrVirtualPointerV1);

/// A mouse that exists only as a Wayland client of sway.
pub struct VirtualPointer {
    _conn: Connection,
    queue: EventQueue<PointerClient>,
    pointer: ZwlrVirtualPointerV1,
    extent: (u32, u32),
    started: Instant,
}

impl VirtualPointer {
    fn connect(socket: &Path, sway: &Sway) -> VirtualPointer {
        let stream = std::os::unix::net::UnixStream::connect(socket).expect("connect to sway");
        let conn = Connection::from_socket(stream).expect("Wayland connection to sway");
        let (globals, mut queue) =
            registry_queue_init::<PointerClient>(&conn).expect("sway's globals");
        let qh = queue.handle();
        let seat: WlSeat = globals.bind(&qh, 1..=7, ()).expect("sway has a wl_seat");
        let manager: ZwlrVirtualPointerManagerV1 = globals
            .bind(&qh, 1..=2, ())
            .expect("sway has zwlr_virtual_pointer_manager_v1");
        let pointer = manager.create_virtual_pointer(Some(&seat), &qh, ());
        queue.roundtrip(&mut PointerClient).expect("roundtrip");
        VirtualPointer {
            _conn: conn,
            queue,
            pointer,
            extent: (sway.width, sway.height),
            started: Instant::now(),
        }
    }

    /// Moves the pointer to (`x`, `y`) in output pixels.
    pub fn move_to(&mut self, x: u32, y: u32) {
        let time = self.started.elapsed().as_millis() as u32;
        self.pointer
            .motion_absolute(time, x, y, self.extent.0, self.extent.1);
        self.pointer.frame();
        self.queue.roundtrip(&mut PointerClient).expect("roundtrip");
    }
}
