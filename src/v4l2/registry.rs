//! The codecs reel decodes through V4L2 stateless decoders: one entry per
//! media codec, saying what the driver must offer and how to open the
//! codec's glue. Adding a codec is its module (`codec/<name>/` for the
//! bitstream, `v4l2/<name>/` for the glue) and one line in [`CODECS`]
//! (ARCHITECTURE.md, "Adding a codec").

pub use super::codec::{CodecEntry, CodecSetup};
use crate::media::Codec;

impl std::fmt::Debug for CodecEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ({})",
            self.codec,
            crate::fourcc::fourcc_text(self.coded_format)
        )
    }
}

/// Every codec with a V4L2 stateless path.
pub static CODECS: &[&CodecEntry] = &[
    &super::h264::ENTRY,
    &super::hevc::ENTRY,
    &super::fwht::ENTRY,
    &super::mpeg2::ENTRY,
    &super::vp8::ENTRY,
    &super::vp9::ENTRY,
    &super::av1::ENTRY,
];

/// The entry for `codec`, if it has a V4L2 stateless path.
pub fn lookup(codec: Codec) -> Option<&'static CodecEntry> {
    CODECS.iter().copied().find(|e| e.codec == codec)
}

/// The entry whose OUTPUT format is `coded_format`.
pub fn by_coded_format(coded_format: u32) -> Option<&'static CodecEntry> {
    CODECS
        .iter()
        .copied()
        .find(|e| e.coded_format == coded_format)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codecs_and_formats_are_unique() {
        for (i, a) in CODECS.iter().enumerate() {
            for b in &CODECS[i + 1..] {
                assert_ne!(a.codec, b.codec);
                assert_ne!(a.coded_format, b.coded_format);
            }
            assert_eq!(
                lookup(a.codec).map(|e| e.coded_format),
                Some(a.coded_format)
            );
            assert!(by_coded_format(a.coded_format).is_some());
            assert!(!a.required_controls.is_empty());
        }
    }
}
