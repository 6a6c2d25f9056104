//! The codecs reel decodes through V4L2 stateless decoders: one entry per
//! media codec, saying what the driver must offer and how to open the
//! codec's glue. Adding a codec is its module (`codec/<name>/` for the
//! bitstream, `v4l2/<name>/` for the glue) and one line in [`CODECS`]
//! (ARCHITECTURE.md, "Adding a codec").

use super::codec::StatelessCodec;
use super::controls::ExtControl;
use super::discovery::{DecoderInfo, StreamRequirements};
use crate::media::{Codec, VideoStreamInfo};

/// What the generic decoder needs from a codec to open a session.
pub struct CodecSetup {
    pub codec: Box<dyn StatelessCodec>,
    /// Controls set before the CAPTURE format is chosen: decode-mode
    /// menus, the container's sequence header when it has one.
    pub initial_controls: Vec<ExtControl>,
    /// Pictures the codec keeps at once (references and pictures waiting
    /// for output), as far as the container's headers tell; the first
    /// sequence may ask for more.
    pub dpb_pictures: usize,
    pub output_buffers: u32,
}

/// One codec on the V4L2 stateless path.
pub struct CodecEntry {
    pub codec: Codec,
    /// OUTPUT fourcc (`formats::coded::*`).
    pub coded_format: u32,
    /// Controls every request carries: a driver without one of them cannot
    /// decode the codec.
    pub required_controls: &'static [u32],
    /// Menus that say how the driver decodes the codec, with the label
    /// `reel probe` shows them under.
    pub menus: &'static [(u32, &'static str)],
    /// What a stream needs from a decoder (coded size, profile).
    pub requirements: fn(&VideoStreamInfo) -> StreamRequirements,
    /// Opens the codec's glue for a decoder and a stream.
    pub open: fn(&DecoderInfo, &VideoStreamInfo) -> Result<CodecSetup, String>,
}

impl std::fmt::Debug for CodecEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ({})",
            self.codec,
            super::formats::fourcc_str(self.coded_format)
        )
    }
}

/// Every codec with a V4L2 stateless path.
pub static CODECS: &[&CodecEntry] = &[&super::h264::ENTRY, &super::fwht::ENTRY];

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
