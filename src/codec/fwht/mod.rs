//! FWHT, the Fast Walsh-Hadamard Transform codec of the kernel's vicodec
//! driver: a stream of frames, each a 44-byte big-endian header
//! (`struct fwht_cframe_hdr`) followed by `size` bytes of compressed planes.
//! The header's 8-byte magic cannot occur in the compressed data, so a
//! stream is self-delimiting and a reader can resynchronise on it.
//!
//! This module reads headers and keeps the reference state (a P frame
//! predicts from the frame decoded before it); `decode` decodes frames in
//! software, as the driver does.

pub mod decode;
pub mod refs;

use std::ops::Range;

pub use refs::{Decision, References};

/// `FWHT_MAGIC1` then `FWHT_MAGIC2`, as stored (the same in either byte order).
pub const MAGIC: [u8; 8] = [0x4f, 0x4f, 0x4f, 0x4f, 0xff, 0xff, 0xff, 0xff];
/// Bytes of `struct fwht_cframe_hdr`.
pub const HEADER_LEN: usize = 44;
/// The newest version (`V4L2_FWHT_VERSION`); the stateless interface takes
/// only this one.
pub const VERSION: u32 = 3;
/// Larger frames are refused as damage: vicodec's own limit is 4096x2160.
pub const MAX_DIMENSION: u32 = 16384;

/// Header flags (`V4L2_FWHT_FL_*`).
pub mod flags {
    pub const IS_INTERLACED: u32 = 1 << 0;
    pub const LUMA_IS_UNCOMPRESSED: u32 = 1 << 4;
    pub const CB_IS_UNCOMPRESSED: u32 = 1 << 5;
    pub const CR_IS_UNCOMPRESSED: u32 = 1 << 6;
    pub const CHROMA_FULL_HEIGHT: u32 = 1 << 7;
    pub const CHROMA_FULL_WIDTH: u32 = 1 << 8;
    pub const ALPHA_IS_UNCOMPRESSED: u32 = 1 << 9;
    pub const I_FRAME: u32 = 1 << 10;
    pub const COMPONENTS_NUM_MASK: u32 = 0b111 << 16;
    pub const COMPONENTS_NUM_SHIFT: u32 = 16;
    pub const PIXENC_MASK: u32 = 0b11 << 19;
    pub const PIXENC_YUV: u32 = 1 << 19;
    pub const PIXENC_RGB: u32 = 2 << 19;
    pub const PIXENC_HSV: u32 = 3 << 19;
}

/// Why bytes are not an FWHT frame.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FwhtError {
    #[error("FWHT frame truncated: {needed} bytes needed, {available} available")]
    Truncated { needed: usize, available: usize },
    #[error("no FWHT frame magic")]
    BadMagic,
    #[error("FWHT version {0} (1 to {VERSION} exist)")]
    Version(u32),
    #[error("FWHT frame size {width}x{height} out of range")]
    Size { width: u32, height: u32 },
    #[error("FWHT flags {0:#x}: no pixel encoding or more than 4 components")]
    Flags(u32),
    #[error("FWHT payload of {size} bytes is larger than a {width}x{height} frame can be")]
    PayloadSize { size: u32, width: u32, height: u32 },
}

/// One frame header (`struct fwht_cframe_hdr`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameHeader {
    pub version: u32,
    /// Visible size.
    pub width: u32,
    pub height: u32,
    pub flags: u32,
    /// `enum v4l2_colorspace`, `v4l2_xfer_func`, `v4l2_ycbcr_encoding`,
    /// `v4l2_quantization` values.
    pub colorspace: u32,
    pub xfer_func: u32,
    pub ycbcr_enc: u32,
    pub quantization: u32,
    /// Bytes of compressed data after the header.
    pub size: u32,
}

fn be32(bytes: &[u8], at: usize) -> u32 {
    let mut word = [0; 4];
    word.copy_from_slice(&bytes[at..at + 4]);
    u32::from_be_bytes(word)
}

impl FrameHeader {
    /// Reads and checks the header at the start of `data` (the payload need
    /// not follow yet).
    pub fn parse(data: &[u8]) -> Result<Self, FwhtError> {
        let Some(bytes) = data.get(..HEADER_LEN) else {
            return Err(FwhtError::Truncated {
                needed: HEADER_LEN,
                available: data.len(),
            });
        };
        if bytes[..8] != MAGIC {
            return Err(FwhtError::BadMagic);
        }
        let header = Self {
            version: be32(bytes, 8),
            width: be32(bytes, 12),
            height: be32(bytes, 16),
            flags: be32(bytes, 20),
            colorspace: be32(bytes, 24),
            xfer_func: be32(bytes, 28),
            ycbcr_enc: be32(bytes, 32),
            quantization: be32(bytes, 36),
            size: be32(bytes, 40),
        };
        header.check()?;
        Ok(header)
    }

    fn check(&self) -> Result<(), FwhtError> {
        if !(1..=VERSION).contains(&self.version) {
            return Err(FwhtError::Version(self.version));
        }
        let dimension = 1..=MAX_DIMENSION;
        if !dimension.contains(&self.width) || !dimension.contains(&self.height) {
            return Err(FwhtError::Size {
                width: self.width,
                height: self.height,
            });
        }
        // Version 1 headers have no component count or encoding: 3, YUV.
        if self.version >= 2 && (self.components() > 4 || self.pixel_encoding() == 0) {
            return Err(FwhtError::Flags(self.flags));
        }
        if u64::from(self.size) > self.max_payload() {
            return Err(FwhtError::PayloadSize {
                size: self.size,
                width: self.width,
                height: self.height,
            });
        }
        Ok(())
    }

    /// The most compressed data a frame of this size can hold: a plane
    /// that would not shrink is stored raw, so every plane at full
    /// resolution plus a little slack.
    fn max_payload(&self) -> u64 {
        let (w, h) = self.coded_size();
        u64::from(w) * u64::from(h) * 4 + 1024
    }

    /// Predicted from the previous frame (not an I frame).
    pub fn is_intra(&self) -> bool {
        self.flags & flags::I_FRAME != 0
    }

    /// Planes: 1 (grey), 3 (Y'CbCr, RGB, HSV) or 4 (with alpha).
    pub fn components(&self) -> u32 {
        if self.version < 2 {
            return 3;
        }
        1 + ((self.flags & flags::COMPONENTS_NUM_MASK) >> flags::COMPONENTS_NUM_SHIFT)
    }

    /// `flags::PIXENC_*` (YUV for version 1).
    pub fn pixel_encoding(&self) -> u32 {
        if self.version < 2 {
            return flags::PIXENC_YUV;
        }
        self.flags & flags::PIXENC_MASK
    }

    /// Chroma subsampling divisors (horizontal, vertical): 2 unless the
    /// flags say the chroma planes are full width or height.
    pub fn chroma_divisors(&self) -> (u32, u32) {
        let div = |full: u32| if self.flags & full != 0 { 1 } else { 2 };
        (
            div(flags::CHROMA_FULL_WIDTH),
            div(flags::CHROMA_FULL_HEIGHT),
        )
    }

    /// Y'CbCr 4:2:0 in three planes.
    pub fn is_yuv420(&self) -> bool {
        self.components() == 3
            && self.pixel_encoding() == flags::PIXENC_YUV
            && self.chroma_divisors() == (2, 2)
    }

    /// The coded size vicodec allocates: each plane rounded up to a
    /// multiple of 8 (`vic_round_dim`).
    pub fn coded_size(&self) -> (u32, u32) {
        let (wdiv, hdiv) = self.chroma_divisors();
        let round = |dim: u32, div: u32| (dim / div).div_ceil(8) * 8 * div;
        (round(self.width, wdiv), round(self.height, hdiv))
    }

    /// Header plus payload.
    pub fn frame_len(&self) -> usize {
        HEADER_LEN + self.size as usize
    }
}

/// The frame at the start of `data`: its header and where its compressed
/// data lies in `data`.
pub fn split_frame(data: &[u8]) -> Result<(FrameHeader, Range<usize>), FwhtError> {
    let header = FrameHeader::parse(data)?;
    let end = header.frame_len();
    if data.len() < end {
        return Err(FwhtError::Truncated {
            needed: end,
            available: data.len(),
        });
    }
    Ok((header, HEADER_LEN..end))
}

/// The offset of the first frame magic in `data` at or after `from`.
pub fn find_magic(data: &[u8], from: usize) -> Option<usize> {
    data.get(from..)?
        .windows(MAGIC.len())
        .position(|w| w == MAGIC)
        .map(|p| from + p)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A header as vicodec's encoder writes it (4:2:0 YUV, Rec. 709).
    pub(crate) fn header_bytes(width: u32, height: u32, intra: bool, size: u32) -> Vec<u8> {
        let mut flags = flags::PIXENC_YUV | (2 << flags::COMPONENTS_NUM_SHIFT);
        if intra {
            flags |= flags::I_FRAME;
        }
        let mut out = MAGIC.to_vec();
        for word in [3, width, height, flags, 3, 0, 0, 0, size] {
            out.extend_from_slice(&u32::to_be_bytes(word));
        }
        out
    }

    #[test]
    fn reads_a_vicodec_header() {
        // The first frame vicodec's encoder made of a 640x360 clip.
        let bytes = header_bytes(640, 360, true, 34660);
        let header = FrameHeader::parse(&bytes).unwrap();
        assert_eq!(header.version, 3);
        assert_eq!((header.width, header.height), (640, 360));
        assert_eq!(header.flags, 0xa0400);
        assert!(header.is_intra() && header.is_yuv420());
        assert_eq!(header.components(), 3);
        assert_eq!(header.colorspace, 3);
        assert_eq!(header.coded_size(), (640, 368));
        assert_eq!(header.frame_len(), 44 + 34660);
        let p = FrameHeader::parse(&header_bytes(648, 372, false, 10)).unwrap();
        assert!(!p.is_intra());
        assert_eq!(p.coded_size(), (656, 384));
    }

    #[test]
    fn refuses_what_is_not_a_header() {
        let good = header_bytes(640, 360, true, 100);
        assert_eq!(
            FrameHeader::parse(&good[..43]),
            Err(FwhtError::Truncated {
                needed: 44,
                available: 43
            })
        );
        let mut bad = good.clone();
        bad[3] = 0;
        assert_eq!(FrameHeader::parse(&bad), Err(FwhtError::BadMagic));
        let with = |at: usize, word: u32| {
            let mut b = good.clone();
            b[at..at + 4].copy_from_slice(&word.to_be_bytes());
            FrameHeader::parse(&b)
        };
        assert_eq!(with(8, 0), Err(FwhtError::Version(0)));
        assert_eq!(with(8, 4), Err(FwhtError::Version(4)));
        assert!(matches!(with(12, 0), Err(FwhtError::Size { .. })));
        assert!(matches!(with(16, u32::MAX), Err(FwhtError::Size { .. })));
        assert_eq!(with(20, 0x20400), Err(FwhtError::Flags(0x20400)));
        assert_eq!(with(20, 0xf0400), Err(FwhtError::Flags(0xf0400)));
        assert!(matches!(
            with(40, u32::MAX),
            Err(FwhtError::PayloadSize { .. })
        ));
        // Version 1 has no encoding bits: 3 components, YUV.
        let mut old = good.clone();
        old[8..12].copy_from_slice(&1u32.to_be_bytes());
        old[20..24].copy_from_slice(&0x400u32.to_be_bytes());
        let old = FrameHeader::parse(&old).unwrap();
        assert!(old.is_yuv420() && old.is_intra());
    }

    #[test]
    fn splits_frames_and_finds_the_next_magic() {
        let mut stream = header_bytes(640, 360, true, 4);
        stream.extend_from_slice(&[1, 2, 3, 4]);
        let second = stream.len();
        stream.extend_from_slice(&header_bytes(640, 360, false, 2));
        stream.extend_from_slice(&[5, 6]);
        let (header, payload) = split_frame(&stream).unwrap();
        assert!(header.is_intra());
        assert_eq!(&stream[payload], &[1, 2, 3, 4]);
        let (header, payload) = split_frame(&stream[second..]).unwrap();
        assert!(!header.is_intra());
        assert_eq!(payload, 44..46);
        assert_eq!(
            split_frame(&stream[second..stream.len() - 1]),
            Err(FwhtError::Truncated {
                needed: 46,
                available: 45
            })
        );
        assert_eq!(find_magic(&stream, 0), Some(0));
        assert_eq!(find_magic(&stream, 1), Some(second));
        assert_eq!(find_magic(&stream, second + 1), None);
        assert_eq!(find_magic(&stream, 10_000), None);
    }
}
