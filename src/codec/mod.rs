//! Bitstream headers and reference bookkeeping per codec, filling V4L2 stateless controls.

pub mod bitreader;
pub mod h264;
