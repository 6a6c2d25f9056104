//! Bitstream headers, reference bookkeeping and output order per codec; pure (the V4L2 glue in `v4l2/<codec>/` fills the controls).

pub mod access_unit;
pub mod av1;
pub mod bitstream;
pub mod fwht;
pub mod h264;
pub mod hevc;
pub mod mpeg2;
pub mod ref_slots;
pub mod vp8;
pub mod vp9;
pub mod vui;
