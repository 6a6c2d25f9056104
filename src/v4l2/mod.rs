//! V4L2 stateless decoders: discovery, queues, requests, buffers.
pub mod controls;
pub mod decoder;
pub mod detile;
pub mod detiled_view;
pub mod discovery;
pub mod formats;
pub mod h264;
pub mod session;
pub mod topology;

/// Decoded frames that may hold a CAPTURE buffer outside the decoder at
/// once: the compositor's hold (2: on screen, and committed but not yet
/// shown), the player's decode-ahead queue (4, `player::source`), and 2 in
/// transit (the one the decode thread is handing over, the player's next).
/// CAPTURE buffers = DPB + the picture being decoded + this.
pub const FRAMES_HELD_DOWNSTREAM: usize = 2 + 4 + 2;
