//! H.264 NAL units (7.3.1, 7.4.1): the header byte and a reader of the
//! RBSP behind it. Splitting a stream into NAL units and emulation
//! prevention are shared with HEVC in [`crate::codec::bitstream`].

use super::H264Error;
use crate::codec::bitstream::rbsp::unescape;
use crate::codec::bitstream::BitReader;

/// nal_unit_type values reel acts on (Table 7-1).
pub mod nal_type {
    pub const SLICE_NON_IDR: u8 = 1;
    pub const SLICE_PARTITION_A: u8 = 2;
    pub const SLICE_PARTITION_C: u8 = 4;
    pub const SLICE_IDR: u8 = 5;
    pub const SEI: u8 = 6;
    pub const SPS: u8 = 7;
    pub const PPS: u8 = 8;
    pub const AUD: u8 = 9;
    pub const END_OF_SEQUENCE: u8 = 10;
    pub const END_OF_STREAM: u8 = 11;
}

/// One NAL unit as found in the stream: header byte included, emulation
/// prevention bytes still in, start code and trailing zero bytes removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Nal<'a> {
    pub bytes: &'a [u8],
    pub nal_ref_idc: u8,
    pub nal_unit_type: u8,
}

impl<'a> Nal<'a> {
    /// Reads the one-byte NAL header (forbidden_zero_bit must be 0).
    pub fn parse(bytes: &'a [u8]) -> Result<Self, H264Error> {
        let &first = bytes.first().ok_or(H264Error::Invalid("empty NAL unit"))?;
        if first & 0x80 != 0 {
            return Err(H264Error::Invalid("forbidden_zero_bit is set"));
        }
        Ok(Self {
            bytes,
            nal_ref_idc: (first >> 5) & 3,
            nal_unit_type: first & 0x1f,
        })
    }

    /// A reader of the RBSP from the header byte on (emulation prevention
    /// passed over as it reads), so that bit positions count from the
    /// NAL's first bit as the V4L2 controls and FFmpeg's traces do.
    pub fn reader(&self) -> BitReader<'a> {
        BitReader::rbsp(self.bytes)
    }

    /// The RBSP including the header byte, copied out unescaped.
    pub fn rbsp(&self) -> Vec<u8> {
        unescape(self.bytes)
    }
}

/// The Annex-B splitter under its former name, for callers not yet moved
/// to [`crate::codec::bitstream::annexb::nal_units`].
pub use crate::codec::bitstream::annexb::nal_units as split_annex_b;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reader_passes_over_emulation_prevention() {
        let nal = Nal::parse(&[0x65, 0x00, 0x00, 0x03, 0x01, 0x80]).unwrap();
        let mut r = nal.reader();
        r.skip(8, "nal_unit_header").unwrap();
        assert_eq!(r.u(24, "x").unwrap(), 1);
        assert_eq!(nal.rbsp(), [0x65, 0, 0, 1, 0x80]);
        assert!(!r.more_rbsp_data());
    }

    #[test]
    fn header_fields() {
        let nal = Nal::parse(&[0x65, 0x88]).unwrap();
        assert_eq!((nal.nal_ref_idc, nal.nal_unit_type), (3, 5));
        assert!(Nal::parse(&[0x80]).is_err());
        assert!(Nal::parse(&[]).is_err());
    }
}
