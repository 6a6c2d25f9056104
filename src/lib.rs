//! reel: a Wayland video player with V4L2 stateless decoding and zero-copy
//! dmabuf presentation, and a software decoding fallback.

pub mod audio;
pub mod check;
pub mod cli;
pub mod codec;
pub mod config;
pub mod display;
pub mod dmabuf_sync;
pub mod exit;
pub mod fourcc;
pub mod frame;
pub mod import_retirement;
pub mod media;
pub mod message;
pub mod negotiation;
pub mod osd;
pub mod player;
pub mod probe;
pub mod subtitle;
pub mod sw;
pub mod v4l2;
