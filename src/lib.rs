//! reel: a Wayland video player with V4L2 stateless decoding and zero-copy
//! dmabuf presentation, and a software decoding fallback.

pub mod cli;
pub mod codec;
pub mod display;
pub mod frame;
pub mod media;
pub mod sw;
pub mod v4l2;
