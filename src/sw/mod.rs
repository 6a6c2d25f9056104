//! Software decoding into frames the display can show: libavcodec, and
//! reel's own FWHT decoder (FFmpeg has none).

mod decoder;
mod format;
mod fwht;
mod planes;
mod repack;

use thiserror::Error;

pub use decoder::SwDecoder;
pub use fwht::FwhtDecoder;
pub use planes::AvFramePlanes;
pub use repack::{pixel_by_name, Repacker};

/// The software decoder that would handle `codec`: libavcodec's, if this
/// FFmpeg has one, or reel's own for FWHT.
pub fn decoder_name(codec: crate::media::Codec) -> Option<String> {
    use crate::media::Codec;
    use ffmpeg_next::codec::Id;
    crate::media::init_ffmpeg();
    let id = match codec {
        Codec::H264 => Id::H264,
        Codec::Hevc => Id::HEVC,
        Codec::Vp8 => Id::VP8,
        Codec::Vp9 => Id::VP9,
        Codec::Av1 => Id::AV1,
        Codec::Mpeg2 => Id::MPEG2VIDEO,
        // FFmpeg has no FWHT decoder.
        Codec::Fwht => return Some(fwht::DECODER_NAME.to_owned()),
    };
    ffmpeg_next::decoder::find(id).map(|c| c.name().to_owned())
}

/// The layout frames of `stream` reach the display in, as far as the
/// container tells the decoder's pixel format.
pub fn display_format_for(
    stream: &crate::media::VideoStreamInfo,
) -> Option<crate::frame::PixelFormat> {
    let name = stream.pixel_format.as_deref()?;
    let pixel = ffmpeg_next::format::Pixel::from(
        // SAFETY: av_get_pix_fmt reads a NUL-terminated string we own for the call.
        unsafe { ffmpeg_next::ffi::av_get_pix_fmt(std::ffi::CString::new(name).ok()?.as_ptr()) },
    );
    Some(format::target_for(pixel, true))
}

/// How a software decoder is set up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SwOptions {
    /// Decoding threads (frame + slice threading); 0 = one per core.
    pub threads: usize,
    /// Convert frames to a layout `display/` can put in a buffer (see
    /// `format::target_for`); `false` keeps the decoder's own layout where
    /// reel can describe it (what `ffmpeg -f framemd5` hashes).
    pub for_display: bool,
}

impl Default for SwOptions {
    fn default() -> Self {
        Self {
            threads: 0,
            for_display: true,
        }
    }
}

#[derive(Debug, Error)]
pub enum SwError {
    #[error("no software decoder for {0} in this FFmpeg build")]
    NoDecoder(String),
    #[error("FFmpeg has no {0} decoder: only a V4L2 stateless {0} decoder can play this file")]
    NoSoftwareCodec(crate::media::Codec),
    #[error("cannot open the {codec} decoder: {message}")]
    Open { codec: String, message: String },
    /// A packet or frame failed to decode. Not fatal: decoding resumes at
    /// the next keyframe.
    #[error("decode error: {0}")]
    Decode(String),
    #[error("pixel format conversion failed: {0}")]
    Convert(String),
}

impl SwError {
    /// Whether the decoder can go on after this error.
    pub fn is_recoverable(&self) -> bool {
        matches!(self, Self::Decode(_))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn decoder_is_send() {
        fn send<T: Send>() {}
        send::<super::SwDecoder>();
    }
}
