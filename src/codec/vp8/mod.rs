//! VP8 (RFC 6386): the frame header with its probability updates, and the
//! last/golden/altref reference slots. A frame is one packet; an altref
//! frame the encoder keeps hidden (`show_frame` = 0) is decoded, never shown.

pub mod header;
pub mod refs;
pub mod tables;

pub use header::{parse_frame, FrameHeader, FrameTag, StreamState, Vp8Error};
pub use refs::{FrameRefs, References};

#[cfg(test)]
pub(crate) mod test_frames;
#[cfg(test)]
mod tests;
