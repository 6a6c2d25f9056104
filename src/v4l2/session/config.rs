//! How a session is set up, and how the caller (the compositor's side of
//! the negotiation) orders the CAPTURE formats the driver offers without
//! v4l2/ knowing about Wayland.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::import_retirement::ImportRetirement;
use crate::v4l2::controls::ExtControl;

/// How to set a session up.
#[derive(Clone)]
pub struct SessionConfig {
    pub video_node: PathBuf,
    pub media_node: PathBuf,
    /// OUTPUT fourcc, e.g. `formats::coded::H264_SLICE`.
    pub coded_format: u32,
    pub width: u32,
    pub height: u32,
    /// Size asked for each OUTPUT buffer (the driver may give more); an
    /// access unit that does not fit makes the session add larger ones.
    pub bitstream_buffer_size: u32,
    /// Asked for with REQBUFS; the driver's answer is what is used.
    pub output_buffers: u32,
    /// DPB size + frames held downstream + decode-ahead.
    pub capture_buffers: u32,
    /// Fewer CAPTURE buffers than this and decoding cannot go on (the
    /// codec's pictures, the one being decoded, one on screen): a driver
    /// that grants fewer lacks the memory for the stream.
    pub min_capture_buffers: u32,
    /// Controls set before the CAPTURE format is read (sequence headers,
    /// decode mode, start code).
    pub initial_controls: Vec<ExtControl>,
    /// Control ids every request must carry.
    pub required_controls: Vec<u32>,
    /// The CAPTURE side as the player asked for it.
    pub capture: CaptureOptions,
    /// The stream's luma bit depth, for `capture.chooser`.
    pub bit_depth: u32,
    /// A request not complete within this is an error.
    pub request_timeout: Duration,
}

impl SessionConfig {
    /// The coded size of a new sequence; the OUTPUT buffers follow it
    /// (never shrinking below what earlier access units needed).
    pub fn set_coded_size(&mut self, width: u32, height: u32) {
        self.width = width;
        self.height = height;
        self.bitstream_buffer_size = self
            .bitstream_buffer_size
            .max(bitstream_buffer_size(width, height));
    }

    pub fn new(
        video_node: &Path,
        media_node: &Path,
        coded_format: u32,
        width: u32,
        height: u32,
    ) -> Self {
        Self {
            video_node: video_node.to_path_buf(),
            media_node: media_node.to_path_buf(),
            coded_format,
            width,
            height,
            bitstream_buffer_size: bitstream_buffer_size(width, height),
            output_buffers: 4,
            capture_buffers: 20,
            min_capture_buffers: 1,
            initial_controls: Vec::new(),
            required_controls: Vec::new(),
            capture: CaptureOptions::default(),
            bit_depth: 8,
            request_timeout: Duration::from_secs(1),
        }
    }
}

/// The OUTPUT buffer size asked for pictures of `width`x`height`: a
/// quarter of the raw 4:2:0 picture, at least 256 KiB. Never 0: drivers
/// pick their own size for 0, and some pick one too small for an I picture
/// (cedrus). Larger access units grow the queue (`Session::submit`).
pub fn bitstream_buffer_size(width: u32, height: u32) -> u32 {
    const MIN: u64 = 256 * 1024;
    // No more than an 8K picture's share first: larger ones grow.
    const MAX: u64 = 32 << 20;
    let raw = (u64::from(width) * u64::from(height)).saturating_mul(3) / 2;
    let size = (raw / 4).clamp(MIN, MAX).next_multiple_of(4096);
    u32::try_from(size).unwrap_or(MAX as u32)
}

/// How the CAPTURE side of a decoder is set up, as its user asks: one value
/// handed whole from the player's decoder choice to the session.
#[derive(Clone, Debug, Default)]
pub struct CaptureOptions {
    /// Orders the CAPTURE formats the driver offers once the sequence
    /// controls are set (the compositor's side of the negotiation); takes
    /// precedence over `preference`.
    pub chooser: Option<CaptureChooser>,
    /// CAPTURE fourccs in order of preference; empty = the driver's choice
    /// if reel can read it, else the first in `formats::CAPTURE_FORMATS`.
    pub preference: Vec<u32>,
    /// Decoded frames that may hold a CAPTURE buffer outside the decoder at
    /// once (the compositor's, the player's queue, frames in transit):
    /// CAPTURE buffers are allocated for them.
    pub frames_held_downstream: usize,
    /// The CPU reads the decoded pictures (copies, detiling, checksums):
    /// CAPTURE memory is then asked for non-coherent where the driver
    /// allows it, which the CPU reads through its cache. A chooser's answer
    /// replaces this.
    pub cpu_reads_pictures: bool,
    /// The presenter of the pictures, asked to drop its imports of the old
    /// CAPTURE buffers before a new sequence's are allocated (None: nothing
    /// imports them).
    pub import_retirement: Option<Arc<ImportRetirement>>,
}

/// Given the CAPTURE fourccs a driver offers and the stream's bit depth,
/// returns them in the order to try. How the compositor's formats reach the
/// session without v4l2/ knowing about Wayland.
#[derive(Clone)]
pub struct CaptureChooser(pub Arc<ChooseCapture>);

/// (offered CAPTURE formats, stream bit depth) -> what to try.
pub type ChooseCapture = dyn Fn(&[OfferedCapture], u32) -> CaptureChoice + Send + Sync;

/// A chooser's answer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CaptureChoice {
    /// CAPTURE fourccs in the order to try.
    pub order: Vec<u32>,
    /// Whether the CPU will read the pictures (no zero-copy for them).
    pub cpu_reads: bool,
}

/// A CAPTURE format the driver offers for the current sequence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OfferedCapture {
    pub fourcc: u32,
    /// The first plane's bytesperline TRY_FMT gives for it (0 if it
    /// failed); SAND128 formats carry their column height there.
    pub bytes_per_line: u32,
}

impl std::fmt::Debug for CaptureChooser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CaptureChooser")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bitstream_buffers_follow_the_coded_size() {
        assert_eq!(bitstream_buffer_size(320, 240), 256 * 1024);
        assert_eq!(bitstream_buffer_size(1920, 1088), 786_432);
        assert_eq!(bitstream_buffer_size(3840, 2160) % 4096, 0);
        assert!(bitstream_buffer_size(3840, 2160) >= 3840 * 2160 * 3 / 8);
        assert_eq!(bitstream_buffer_size(u32::MAX, u32::MAX), 32 << 20);
        assert_eq!(bitstream_buffer_size(0, 0), 256 * 1024);
        let mut config = SessionConfig::new(Path::new("/v"), Path::new("/m"), 0, 3840, 2160);
        let large = config.bitstream_buffer_size;
        config.set_coded_size(320, 240);
        assert_eq!(config.bitstream_buffer_size, large, "never shrinks");
    }
}
