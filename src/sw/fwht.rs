//! FWHT decoded in software (FFmpeg has no FWHT decoder): packets through
//! `codec::fwht::decode`, one frame per packet, shown in decode order.

use std::collections::VecDeque;
use std::sync::Arc;

use super::SwError;
use crate::codec::fwht::decode::{decode_frame, Picture};
use crate::codec::fwht::{flags, split_frame, FrameHeader};
use crate::frame::{CpuPlanes, DecoderKind, Frame, FrameStorage, PixelFormat};
use crate::media::{ts_to_duration, Packet};

/// The name the software path gives this decoder (where libavcodec's
/// decoders are named).
pub const DECODER_NAME: &str = "fwht (reel)";

/// The software FWHT decoder of one stream.
#[derive(Default)]
pub struct FwhtDecoder {
    /// The picture the next P frame predicts from; none after a seek or
    /// a frame that failed.
    reference: Option<Arc<Picture>>,
    ready: VecDeque<Frame>,
    skipped_packets: u64,
    epoch: u64,
}

impl std::fmt::Debug for FwhtDecoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FwhtDecoder")
            .field("frames_ready", &self.ready.len())
            .field("epoch", &self.epoch)
            .finish()
    }
}

/// A decoded picture's planes as the display reads them.
struct PicturePlanes(Arc<Picture>);

impl CpuPlanes for PicturePlanes {
    fn plane(&self, plane: usize) -> &[u8] {
        self.0.planes.get(plane).map_or(&[], |p| &p.data)
    }

    fn stride(&self, plane: usize) -> usize {
        self.0.planes.get(plane).map_or(0, |p| p.stride)
    }
}

/// The layout reel shows a frame of `header` in, if it has one.
fn pixel_format(header: &FrameHeader) -> Option<PixelFormat> {
    if header.pixel_encoding() != flags::PIXENC_YUV {
        return None;
    }
    match (header.components(), header.chroma_divisors()) {
        (1, _) => Some(PixelFormat::Gray8),
        (3, (2, 2)) => Some(PixelFormat::Yuv420),
        (3, (2, 1)) => Some(PixelFormat::Yuv422),
        (3, (1, 1)) => Some(PixelFormat::Yuv444),
        _ => None,
    }
}

impl FwhtDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn describe(&self) -> String {
        format!("software, {DECODER_NAME}")
    }

    /// P frames dropped for want of a reference.
    pub fn skipped_packets(&self) -> u64 {
        self.skipped_packets
    }

    /// Decodes one frame. A damaged frame is a recoverable error; the P
    /// frames after it are skipped until the next I frame.
    pub fn send(&mut self, packet: &Packet) -> Result<(), SwError> {
        let data: &[u8] = &packet.data;
        let fail = |this: &mut Self, message: String| {
            this.reference = None;
            Err(SwError::Decode(message))
        };
        let (header, payload) = match split_frame(data) {
            Ok(frame) => frame,
            Err(e) => return fail(self, format!("packet at pts {:?}: {e}", packet.pts)),
        };
        if !header.is_intra() && self.reference.is_none() {
            self.skipped_packets += 1;
            return Ok(());
        }
        let Some(format) = pixel_format(&header) else {
            return fail(
                self,
                format!(
                    "FWHT frame with flags {:#x}: reel shows Y'CbCr 4:2:0, 4:2:2, 4:4:4 and grey",
                    header.flags
                ),
            );
        };
        let picture = match decode_frame(&header, &data[payload], self.reference.as_deref()) {
            Ok(picture) => Arc::new(picture),
            Err(e) => return fail(self, format!("packet at pts {:?}: {e}", packet.pts)),
        };
        self.reference = Some(picture.clone());
        let pts_raw = packet.pts.or(packet.dts).unwrap_or(0);
        self.ready.push_back(Frame {
            pts: ts_to_duration(pts_raw, packet.time_base),
            pts_raw,
            duration: ts_to_duration(packet.duration, packet.time_base),
            duration_raw: packet.duration,
            width: header.width,
            height: header.height,
            format,
            sample_aspect: (1, 1),
            decoder: DecoderKind::Software,
            epoch: self.epoch,
            storage: FrameStorage::Cpu(Box::new(PicturePlanes(picture))),
        });
        Ok(())
    }

    pub fn receive(&mut self) -> Option<Frame> {
        self.ready.pop_front()
    }

    /// Forgets the reference and the frames not taken (after a seek).
    pub fn discard(&mut self) {
        self.reference = None;
        self.ready.clear();
        self.epoch += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packet(data: Vec<u8>, pts: i64) -> Packet {
        crate::media::fwht::frame_packet(data, pts, false)
    }

    fn fixture_frames() -> Vec<Vec<u8>> {
        let stream = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/fwht/i_p_648x372.fwht"
        ))
        .unwrap();
        let (_, first) = split_frame(&stream).unwrap();
        vec![stream[..first.end].to_vec(), stream[first.end..].to_vec()]
    }

    #[test]
    fn frames_come_out_in_yuv420_with_their_timing() {
        let frames = fixture_frames();
        let mut decoder = FwhtDecoder::new();
        decoder.send(&packet(frames[0].clone(), 0)).unwrap();
        decoder.send(&packet(frames[1].clone(), 1)).unwrap();
        let first = decoder.receive().unwrap();
        let second = decoder.receive().unwrap();
        assert!(decoder.receive().is_none());
        assert_eq!(first.format, PixelFormat::Yuv420);
        assert_eq!((first.width, first.height), (648, 372));
        assert_eq!(second.pts_raw, 1);
        assert_eq!(second.pts, std::time::Duration::from_millis(40));
        assert_eq!(first.packed_size(), 648 * 372 + 2 * 324 * 186);
    }

    #[test]
    fn p_frames_wait_for_an_i_frame_after_damage_or_a_seek() {
        let frames = fixture_frames();
        let mut decoder = FwhtDecoder::new();
        decoder.send(&packet(frames[1].clone(), 1)).unwrap();
        assert!(decoder.receive().is_none());
        assert_eq!(decoder.skipped_packets(), 1);
        decoder.send(&packet(frames[0].clone(), 0)).unwrap();
        let mut cut = frames[1].clone();
        cut.truncate(cut.len() / 2);
        let error = decoder.send(&packet(cut, 1)).unwrap_err();
        assert!(error.is_recoverable(), "{error}");
        decoder.send(&packet(frames[1].clone(), 1)).unwrap();
        assert_eq!(decoder.skipped_packets(), 2);
        decoder.discard();
        assert!(decoder.receive().is_none());
    }
}
