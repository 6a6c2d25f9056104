//! Reading coded video, shared by every codec: bit-level header reads
//! ([`BitReader`], including H.264/HEVC RBSPs read through their emulation
//! prevention bytes), Annex-B NAL unit splitting, and the VP8/VP9 boolean
//! decoder.

pub mod annexb;
pub mod bool_decoder;
pub mod rbsp;
pub mod reader;

#[cfg(test)]
pub(crate) mod bool_encoder;
#[cfg(test)]
pub(crate) mod test_rng;

pub use annexb::{
    nal_unit_ranges, nal_units, starts_with_start_code, NalIndex, NalUnitRanges, NalUnits,
};
pub use bool_decoder::{BoolDecoder, BoolError};
pub use reader::{BitReader, ReadError, TraceEntry};
