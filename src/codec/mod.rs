//! Bitstream headers and reference bookkeeping per codec, filling V4L2 stateless controls.

pub mod bitstream;
pub mod h264;

/// The bit reader's former home, for callers not yet moved to
/// [`bitstream::reader`].
pub use bitstream::reader as bitreader;
