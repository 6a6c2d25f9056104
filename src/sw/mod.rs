//! Software decoding with libavcodec into frames the display can show.

mod decoder;
mod driver;
mod format;
mod planes;

use thiserror::Error;

pub use decoder::SwDecoder;
pub use driver::{decode_file, decode_to_null, DecodeError, DecodeStats};
pub use planes::AvFramePlanes;

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
