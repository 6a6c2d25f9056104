//! A reel process in a compositor (weston or sway), driven through its
//! control socket (`--control`), its stderr kept in a file.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use super::reel_output;

const TIMEOUT: Duration = Duration::from_secs(30);

/// A reel process playing in a compositor, driven through `--control`.
pub struct Reel {
    pub child: Child,
    pub control: PathBuf,
    stderr: PathBuf,
}

impl Reel {
    /// Starts reel with the compositor's client environment `env`, its
    /// control socket and log in `dir`.
    pub fn spawn(env: &[(String, String)], dir: &Path, args: &[&str], files: &[&Path]) -> Reel {
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let control = dir.join(format!("reel-{n}.sock"));
        let stderr = dir.join(format!("reel-{n}.log"));
        let child = Command::new(env!("CARGO_BIN_EXE_reel"))
            .envs(env.iter().cloned())
            .env(
                "RUST_LOG",
                std::env::var("REEL_TEST_LOG").unwrap_or("reel=debug".into()),
            )
            // A configuration file on the machine must not change the test.
            .arg("--no-config")
            // Pictures are compared with the decoder's frames: no OSD over
            // them unless a test asks for it (a later --osd-level wins).
            .args(["--osd-level", "0"])
            .arg("--control")
            .arg(&control)
            .args(args)
            .args(files)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(File::create(&stderr).expect("reel log file"))
            .spawn()
            .expect("cannot start reel");
        Reel {
            child,
            control,
            stderr,
        }
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// Sends one control line and returns the reply.
    pub fn command(&mut self, line: &str) -> String {
        let deadline = Instant::now() + TIMEOUT;
        let stream = loop {
            match UnixStream::connect(&self.control) {
                Ok(stream) => break stream,
                Err(e) => {
                    if let Ok(Some(status)) = self.child.try_wait() {
                        panic!(
                            "reel exited ({status}) before answering '{line}':\n{}",
                            self.log()
                        );
                    }
                    assert!(
                        Instant::now() < deadline,
                        "no control socket ({e}):\n{}",
                        self.log()
                    );
                    sleep(Duration::from_millis(20));
                }
            }
        };
        stream
            .set_read_timeout(Some(TIMEOUT))
            .expect("socket timeout");
        (&stream)
            .write_all(format!("{line}\n").as_bytes())
            .expect("send command");
        let mut reply = String::new();
        BufReader::new(&stream)
            .read_line(&mut reply)
            .unwrap_or_else(|e| panic!("no reply to '{line}' ({e}):\n{}", self.log()));
        reply.trim().to_string()
    }

    pub fn status(&mut self) -> HashMap<String, String> {
        reel_output::fields(&self.command("status"))
    }

    /// Polls `status` until `done` holds.
    pub fn wait_for(
        &mut self,
        what: &str,
        done: impl Fn(&HashMap<String, String>) -> bool,
    ) -> HashMap<String, String> {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let status = self.status();
            if done(&status) {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}; last status {status:?}\n{}",
                self.log()
            );
            sleep(Duration::from_millis(20));
        }
    }

    /// Waits until a seek or step has put its frame on screen.
    pub fn settled(&mut self) -> HashMap<String, String> {
        self.wait_for("the frame to be shown", |s| {
            s.get("state").is_some_and(|st| st != "seeking") && s.contains_key("width")
        })
    }

    pub fn wait_exit(&mut self) -> ExitStatus {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait for reel") {
                return status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("reel did not exit:\n{}", self.log());
            }
            sleep(Duration::from_millis(20));
        }
    }

    pub fn quit(&mut self) -> ExitStatus {
        assert_eq!(self.command("quit"), "ok");
        self.wait_exit()
    }
}

impl Drop for Reel {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
