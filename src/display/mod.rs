//! Presentation: the Wayland window, buffers, and the headless sinks (framemd5, null).
pub mod framemd5;
