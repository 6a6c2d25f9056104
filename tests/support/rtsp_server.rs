//! GStreamer's RTSP server on loopback for the network tests
//! (`rtsp_server.py`), killed when dropped.

use std::path::Path;
use std::process::{Child, Command, Stdio};

pub struct RtspServer {
    child: Child,
    pub port: u16,
}

impl RtspServer {
    /// Serves `clips` (see rtsp_server.py for the mounts).
    pub fn start(clips: &[&Path]) -> RtspServer {
        Self::start_on(0, clips)
    }

    /// Serves `clips` on `port` (0: any free one; a server started again
    /// where a killed one was).
    pub fn start_on(port: u16, clips: &[&Path]) -> RtspServer {
        let script = super::project_dir().join("tests/support/rtsp_server.py");
        // Debian's Python: GStreamer's bindings (python3-gi) are its.
        let mut child = Command::new("/usr/bin/python3")
            .arg(script)
            .arg(format!("--port={port}"))
            .args(clips)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start rtsp_server.py");
        let port = super::http_server::printed_port(&mut child, "rtsp_server.py");
        RtspServer { child, port }
    }

    /// The URL of `mount` (a clip's name, `tcp/NAME`, `udp/NAME`, or
    /// `live`).
    pub fn url(&self, mount: &str) -> String {
        format!("rtsp://127.0.0.1:{}/{mount}", self.port)
    }
}

impl Drop for RtspServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
