//! A real HTTP(S) server on loopback for the network tests
//! (`http_server.py`: Python's http.server with byte ranges), killed when
//! dropped.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

pub struct HttpServer {
    child: Child,
    pub port: u16,
    scheme: &'static str,
}

impl HttpServer {
    /// Serves `dir` over HTTP.
    pub fn start(dir: &Path) -> HttpServer {
        Self::spawn(dir, None, 0)
    }

    /// Serves `dir` over HTTP on `port` (a server started again where a
    /// killed one was).
    pub fn start_on(dir: &Path, port: u16) -> HttpServer {
        Self::spawn(dir, None, port)
    }

    /// Serves `dir` over HTTPS with this certificate and key (PEM).
    pub fn start_tls(dir: &Path, cert: &Path, key: &Path) -> HttpServer {
        Self::spawn(dir, Some((cert, key)), 0)
    }

    fn spawn(dir: &Path, tls: Option<(&Path, &Path)>, port: u16) -> HttpServer {
        let script = super::project_dir().join("tests/support/http_server.py");
        let mut command = Command::new("python3");
        command.arg(script).arg(dir).arg(format!("--port={port}"));
        if let Some((cert, key)) = tls {
            command.arg("--cert").arg(cert).arg("--key").arg(key);
        }
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start http_server.py");
        let port = printed_port(&mut child, "http_server.py");
        HttpServer {
            child,
            port,
            scheme: if tls.is_some() { "https" } else { "http" },
        }
    }

    /// The URL of `name` under the served directory.
    pub fn url(&self, name: &str) -> String {
        format!("{}://127.0.0.1:{}/{name}", self.scheme, self.port)
    }
}

/// The port a server `name` prints on its first line once it listens.
pub fn printed_port(child: &mut Child, name: &str) -> u16 {
    let mut line = String::new();
    let stdout = child.stdout.take().expect("server stdout");
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("read the server's port");
    line.trim().parse().unwrap_or_else(|_| {
        let _ = child.kill();
        panic!("{name} printed no port: {line:?}")
    })
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
