//! VP8 on a V4L2 stateless decoder: one request per frame carrying the
//! whole frame (tag, first partition, DCT partitions) and
//! `V4L2_CID_STATELESS_VP8_FRAME`, references named by the device
//! timestamps the last, golden and altref slots hold. Hidden frames
//! (`show_frame` = 0, the encoder's altref) are decoded and never shown.

pub mod controls;

use tracing::debug;
use v4l2r::bindings as b;
use v4l2r::controls::codec::Vp8Frame;

use super::codec::{
    BitstreamPart, CodecError, OutputPicture, PictureSummary, Request, SequenceChange,
    StatelessCodec, Timestamps,
};
use super::codec::{CodecEntry, CodecOpenError, CodecSetup, Damage};
use super::controls::ExtControl;
use super::discovery::{in_blocks_of_16, DecoderInfo, StreamRequirements};
use super::formats::coded;
use super::output_queue::OutputQueue;
use crate::codec::vp8::{self, FrameHeader, References, StreamState, Vp8Error};
use crate::media::{Codec, VideoStreamInfo};

/// VP8's line in the codec registry.
pub static ENTRY: CodecEntry = CodecEntry {
    codec: Codec::Vp8,
    coded_format: coded::VP8_FRAME,
    required_controls: &[b::V4L2_CID_STATELESS_VP8_FRAME],
    menus: &[(b::V4L2_CID_MPEG_VIDEO_VP8_PROFILE, "vp8 profile")],
    requirements,
    open,
};

/// Last, golden and altref, each possibly a different picture.
const REFERENCE_PICTURES: usize = 3;

/// The container's size, in whole macroblocks (the frame's own size is
/// only known at its first key frame).
fn requirements(stream: &VideoStreamInfo) -> StreamRequirements {
    StreamRequirements::in_blocks_of_16(coded::VP8_FRAME, stream)
}

fn open(_info: &DecoderInfo, _stream: &VideoStreamInfo) -> Result<CodecSetup, CodecOpenError> {
    Ok(CodecSetup {
        codec: Box::new(Vp8Codec::new()),
        initial_controls: Vec::new(),
        dpb_pictures: REFERENCE_PICTURES,
        output_buffers: 2,
    })
}

/// The VP8 glue of [`super::decoder::V4l2Decoder`].
pub struct Vp8Codec {
    state: StreamState,
    refs: References<u64>,
    /// The visible size of the sequence being decoded.
    size: Option<(u32, u32)>,
    /// Pictures due for output: VP8 shows its shown frames in decode order.
    output: OutputQueue,
}

impl Default for Vp8Codec {
    fn default() -> Self {
        Self::new()
    }
}

impl Vp8Codec {
    pub fn new() -> Self {
        Self {
            state: StreamState::default(),
            refs: References::new(),
            size: None,
            output: OutputQueue::new(),
        }
    }

    /// Damage: nothing decodes until the next key frame.
    fn resynchronise(&mut self) {
        self.state = StreamState::default();
        self.refs.reset();
    }

    fn check(header: &FrameHeader) -> Result<(), CodecError> {
        if header.tag.version > 3 {
            return Err(Damage::Vp8Version(header.tag.version).into());
        }
        Ok(())
    }
}

impl StatelessCodec for Vp8Codec {
    fn decode(
        &mut self,
        packet: &[u8],
        timestamps: &mut Timestamps,
    ) -> Result<Vec<Request>, CodecError> {
        let header = match vp8::parse_frame(packet, &mut self.state) {
            Ok(header) => header,
            Err(Vp8Error::NoKeyFrame) => {
                debug!("VP8 inter frame before a key frame: skipped");
                return Ok(Vec::new());
            }
            Err(e) => {
                self.resynchronise();
                return Err(Damage::Vp8(e).into());
            }
        };
        if let Err(e) = Self::check(&header) {
            self.resynchronise();
            return Err(e);
        }
        if !self.refs.can_decode(&header) {
            debug!("VP8 inter frame without its references: skipped");
            return Ok(Vec::new());
        }
        let refs = self.refs.for_frame(&header);
        let visible = (u32::from(header.width), u32::from(header.height));
        let sequence = (header.is_key_frame() && self.size != Some(visible)).then(|| {
            let (coded_width, coded_height) = in_blocks_of_16(visible.0, visible.1);
            SequenceChange {
                coded_width,
                coded_height,
                dpb_pictures: REFERENCE_PICTURES,
                // VP8 is 8-bit only.
                bit_depth: 8,
                controls: Vec::new(),
            }
        });
        self.size = Some(visible);
        let timestamp_ns = timestamps.next_picture();
        debug!(
            timestamp_ns,
            key = header.is_key_frame(),
            show = header.tag.show_frame,
            refs = ?refs,
            refresh = ?header.refresh,
            "VP8 frame"
        );
        self.refs.decoded(&header, timestamp_ns);
        if timestamps.leaves_out(timestamp_ns, header.is_reference()) {
            return Ok(Vec::new());
        }
        if header.tag.show_frame {
            self.output
                .record(timestamp_ns, timestamps.packet(), visible, None);
            self.output.push_due([timestamp_ns]);
        }
        let summary = PictureSummary {
            kind: if header.is_key_frame() {
                "key"
            } else {
                "inter"
            },
            order: None,
            references: refs
                .as_ref()
                .map(|r| vec![r.last, r.golden, r.altref])
                .unwrap_or_default(),
            slices: 1,
        };
        Ok(vec![Request {
            timestamp_ns,
            controls: vec![ExtControl::typed::<Vp8Frame>(controls::frame(
                &header, refs,
            ))],
            bitstream: vec![BitstreamPart::Packet(0..packet.len())],
            hold_capture: false,
            sequence,
            summary,
        }])
    }

    fn references(&self) -> Vec<u64> {
        self.refs.pictures()
    }

    fn take_output(&mut self, _end_of_stream: bool) -> Vec<OutputPicture> {
        self.output.take()
    }

    fn reset(&mut self) {
        self.resynchronise();
        self.output.clear();
    }

    fn describe(&self) -> String {
        "VP8, one request per frame".into()
    }
}

#[cfg(test)]
mod tests;
