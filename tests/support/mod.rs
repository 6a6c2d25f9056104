//! Code shared by the integration tests; each test file pulls it in with
//! `mod support;`.
//!
//! - `media`: the generated test clips and the ffprobe/ffmpeg oracles;
//! - `vm`: the QEMU test guest (tests/vm) and its helper scripts;
//! - `compositor`: weston 14 headless on the host;
//! - `weston_log`: reading weston's protocol log;
//! - `oracle`, `visl_trace`: GStreamer's decodes through visl and the
//!   normalised visl traces they are compared by;
//! - `h264`: FFmpeg's Annex-B streams with their header traces.

// Every test binary compiles this whole tree but uses a different subset of
// it; what one binary leaves unused is used by another.
#![allow(dead_code)]

pub mod compositor;
pub mod h264;
pub mod media;
pub mod oracle;
pub mod visl_trace;
pub mod vm;
pub mod weston_log;
