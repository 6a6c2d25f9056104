//! A client of mpv's JSON IPC, for driving mpv (the oracle) and reel
//! through the same script; and the players it drives.

use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

pub const TIMEOUT: Duration = Duration::from_secs(20);

/// A player process serving the IPC at `socket`.
pub struct Player {
    pub child: Child,
    pub socket: PathBuf,
    pub log: PathBuf,
    pub name: String,
}

impl Player {
    /// `program args... --input-ipc-server=SOCKET`, its stderr in `dir`.
    pub fn spawn(
        name: &str,
        program: &str,
        args: &[&str],
        env: &[(String, String)],
        dir: &Path,
    ) -> Player {
        std::fs::create_dir_all(dir).expect("player dir");
        let socket = dir.join(format!("{name}.sock"));
        let log = dir.join(format!("{name}.log"));
        let _ = std::fs::remove_file(&socket);
        let child = Command::new(program)
            .args(args)
            .arg(format!("--input-ipc-server={}", socket.display()))
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(File::create(&log).expect("player log"))
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {program}: {e}"));
        Player {
            child,
            socket,
            log,
            name: name.to_string(),
        }
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    pub fn connect(&mut self) -> IpcClient {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            if let Ok(stream) = UnixStream::connect(&self.socket) {
                return IpcClient::new(stream, &self.name);
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!(
                    "{} exited ({status}) before listening:\n{}",
                    self.name,
                    self.log()
                );
            }
            assert!(
                Instant::now() < deadline,
                "{} never listened on {}:\n{}",
                self.name,
                self.socket.display(),
                self.log()
            );
            sleep(Duration::from_millis(20));
        }
    }

    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Waits for the process to end by itself.
    pub fn wait(&mut self) -> std::process::ExitStatus {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "{} did not exit:\n{}",
                self.name,
                self.log()
            );
            sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Player {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // Its directory (socket, log, screenshots) is kept when a test fails.
        if !std::thread::panicking() {
            if let Some(dir) = self.log.parent() {
                let _ = std::fs::remove_dir_all(dir);
                // The run's directory, once its last player is gone.
                if let Some(run) = dir.parent() {
                    let _ = std::fs::remove_dir(run);
                }
            }
        }
    }
}

pub struct IpcClient {
    stream: UnixStream,
    buffer: Vec<u8>,
    name: String,
    /// Every event received, in order.
    pub events: Vec<Value>,
    /// Events before this index were already waited for.
    cursor: usize,
    next_id: i64,
    closed: bool,
}

impl IpcClient {
    pub fn new(stream: UnixStream, name: &str) -> IpcClient {
        IpcClient {
            stream,
            buffer: Vec::new(),
            name: name.to_string(),
            events: Vec::new(),
            cursor: 0,
            next_id: 1,
            closed: false,
        }
    }

    pub fn stream(&self) -> &UnixStream {
        &self.stream
    }

    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.stream
            .write_all(bytes)
            .unwrap_or_else(|e| panic!("{}: cannot send: {e}", self.name));
    }

    /// The next message; None once the player closed the connection.
    fn read_message(&mut self, deadline: Instant) -> Option<Value> {
        loop {
            if let Some(end) = self.buffer.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.buffer.drain(..=end).collect();
                let text = String::from_utf8_lossy(&line);
                return Some(serde_json::from_str(&text).unwrap_or_else(|e| {
                    panic!("{} sent a line that is not JSON ({e}): {text}", self.name)
                }));
            }
            if self.closed {
                return None;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(
                !left.is_zero(),
                "{}: no message in time; events: {:?}",
                self.name,
                self.events
            );
            self.stream.set_read_timeout(Some(left)).expect("timeout");
            let mut chunk = [0u8; 65536];
            match self.stream.read(&mut chunk) {
                Ok(0) => self.closed = true,
                Ok(n) => self.buffer.extend_from_slice(&chunk[..n]),
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                Err(e) if e.kind() == ErrorKind::ConnectionReset => self.closed = true,
                Err(e) => panic!("{}: read failed: {e}", self.name),
            }
        }
    }

    /// The next reply (a message that is not an event), events kept.
    pub fn next_reply(&mut self) -> Value {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let message = self
                .read_message(deadline)
                .unwrap_or_else(|| panic!("{}: connection closed awaiting a reply", self.name));
            if message.get("event").is_some() {
                self.events.push(message);
            } else {
                return message;
            }
        }
    }

    /// Sends `command` with a fresh request id and returns the reply.
    pub fn request(&mut self, command: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let line = json!({"command": command, "request_id": id}).to_string() + "\n";
        self.send_raw(line.as_bytes());
        let reply = self.next_reply();
        assert_eq!(
            reply["request_id"],
            json!(id),
            "{}: reply to another request",
            self.name
        );
        reply
    }

    /// The first event not yet waited for that satisfies `matches`.
    pub fn wait_event(&mut self, what: &str, matches: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            if let Some(at) = self.events[self.cursor..].iter().position(&matches) {
                self.cursor += at + 1;
                return self.events[self.cursor - 1].clone();
            }
            match self.read_message(deadline) {
                Some(message) if message.get("event").is_some() => self.events.push(message),
                Some(reply) => panic!("{}: unexpected reply {reply} awaiting {what}", self.name),
                None => panic!(
                    "{}: closed awaiting {what}; events: {:?}",
                    self.name, self.events
                ),
            }
        }
    }

    pub fn wait_named(&mut self, event: &str) -> Value {
        self.wait_event(event, |e| e["event"] == event)
    }

    /// Waits for the change of observer `id` to `data` (None: unavailable).
    pub fn wait_change(&mut self, id: i64, data: Option<Value>) -> Value {
        self.wait_event("property-change", move |e| {
            e["event"] == "property-change" && e["id"] == id && e.get("data") == data.as_ref()
        })
    }

    /// Reads until the player closes the connection; the events kept.
    pub fn read_to_close(&mut self) {
        let deadline = Instant::now() + TIMEOUT;
        while let Some(message) = self.read_message(deadline) {
            if message.get("event").is_some() {
                self.events.push(message);
            }
        }
    }
}
