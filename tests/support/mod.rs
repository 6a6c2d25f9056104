//! Code shared by the integration tests; each test file pulls it in with
//! `mod support;`.
//!
//! - `media`: the generated test clips and the ffprobe/ffmpeg oracles;
//! - `vm`: the QEMU test guest (tests/vm) and its helper scripts;
//! - `compositor`: weston 14 headless on the host;
//! - `weston_log`: reading weston's protocol log;
//! - `oracle`, `visl_trace`, `visl_bitstream`: GStreamer's decodes through
//!   visl (stored in tests/data/oracles), the normalised visl traces and
//!   the OUTPUT buffers (bytes, and the digests the store keeps) they are
//!   compared by;
//! - `damage`: deterministic damaged copies of a clip, and what decoding
//!   each must still give;
//! - `sway`: sway headless, for the protocols weston lacks (idle inhibit,
//!   decorations, a virtual pointer);
//! - `pgs`: bitmap subtitles (PGS) of lines of text;
//! - `picture`: PSNR of RGB pictures, and text read off a screenshot (OCR);
//! - `reel_output`: reel's `--stats` line, control `status` reply and
//!   presentation log;
//! - `reel_process`: a reel process driven through its control socket;
//! - `h264`: FFmpeg's Annex-B streams with their header traces.
//! - `http_server`: a local HTTP(S) file server with byte ranges;
//!   `rtsp_server`: GStreamer's RTSP server.
//! - `mpv_ipc`: a client of mpv's JSON IPC and the player processes it drives.
//! - `sound_server`: PipeWire with a null sink, recording what is played;
//!   `pcm`: clips with sound, FFmpeg's decode of them and comparing PCM.
//! - `fluster`: local conformance suites and fluster runs through
//!   packaging/fluster/reel_fluster.py.

// Every test binary compiles this whole tree but uses a different subset of
// it; what one binary leaves unused is used by another.
#![allow(dead_code)]

pub mod compositor;
pub mod damage;
pub mod fluster;
pub mod h264;
pub mod http_server;
pub mod media;
pub mod mpv_ipc;
pub mod oracle;
pub mod pcm;
pub mod pgs;
pub mod picture;
pub mod reel_output;
pub mod reel_process;
pub mod reel_runs;
pub mod rtsp_server;
pub mod sound_server;
pub mod sway;
pub mod visl_bitstream;
pub mod visl_trace;
pub mod vm;
pub mod weston_log;

use std::path::PathBuf;

/// The checkout (the test guest sees it at the same path).
pub fn project_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The cargo target directory this test binary was built into.
pub fn target_dir() -> PathBuf {
    // target/<profile>/deps/<test binary>
    std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.parent()?.parent()?.to_path_buf()))
        .unwrap_or_else(|| project_dir().join("target"))
}
