//! FWHT on a V4L2 stateless decoder (vicodec): one request per frame, the
//! header's fields in `V4L2_CID_STATELESS_FWHT_PARAMS`, the compressed
//! planes (the frame without its header) in the OUTPUT buffer, and a P
//! frame's reference named by the device timestamp of the frame before it.

pub mod controls;

use tracing::debug;
use v4l2r::bindings as b;
use v4l2r::controls::codec::FwhtParams;

use super::codec::{
    BitstreamPart, CodecError, OutputPicture, PictureSummary, Request, SequenceChange,
    StatelessCodec, Timestamps,
};
use super::codec::{CodecEntry, CodecOpenError, CodecSetup, Damage, Unsupported};
use super::controls::ExtControl;
use super::discovery::{DecoderInfo, StreamRequirements};
use super::formats::coded;
use super::output_queue::OutputQueue;
use crate::codec::fwht::{self, Decision, FrameHeader, References};
use crate::media::{Codec, VideoStreamInfo};

/// FWHT's line in the codec registry.
pub static ENTRY: CodecEntry = CodecEntry {
    codec: Codec::Fwht,
    coded_format: coded::FWHT_STATELESS,
    required_controls: &[b::V4L2_CID_STATELESS_FWHT_PARAMS],
    menus: &[],
    requirements,
    open,
};

/// The coded size of the stream's first frame (4:2:0, the only layout
/// decoded: each dimension rounded up to 16, as `FrameHeader::coded_size`).
fn requirements(stream: &VideoStreamInfo) -> StreamRequirements {
    StreamRequirements::in_blocks_of_16(coded::FWHT_STATELESS, stream)
}

fn open(_info: &DecoderInfo, _stream: &VideoStreamInfo) -> Result<CodecSetup, CodecOpenError> {
    Ok(CodecSetup {
        codec: Box::new(FwhtCodec::new()),
        initial_controls: Vec::new(),
        // The previous frame, kept while the next one decodes from it.
        dpb_pictures: 1,
        output_buffers: 2,
    })
}

/// The FWHT glue of [`super::decoder::V4l2Decoder`].
pub struct FwhtCodec {
    refs: References<u64>,
    /// The visible size of the sequence being decoded.
    size: Option<(u32, u32)>,
    /// Pictures due for output: FWHT shows frames in decode order.
    output: OutputQueue,
}

impl Default for FwhtCodec {
    fn default() -> Self {
        Self::new()
    }
}

impl FwhtCodec {
    pub fn new() -> Self {
        Self {
            refs: References::new(),
            size: None,
            output: OutputQueue::new(),
        }
    }

    fn check(header: &FrameHeader) -> Result<(), CodecError> {
        if header.version != fwht::VERSION {
            return Err(Unsupported::FwhtVersion(header.version).into());
        }
        if !header.is_yuv420() {
            return Err(Unsupported::FwhtFlags(header.flags).into());
        }
        Ok(())
    }
}

impl StatelessCodec for FwhtCodec {
    fn decode(
        &mut self,
        packet: &[u8],
        timestamps: &mut Timestamps,
    ) -> Result<Vec<Request>, CodecError> {
        let (header, payload) = fwht::split_frame(packet).map_err(|e| {
            self.refs.reset();
            CodecError::from(Damage::Fwht(e))
        })?;
        Self::check(&header)?;
        let reference = match self.refs.decide(&header) {
            Decision::Intra => 0,
            Decision::Inter { reference } => reference,
            Decision::Skip => {
                debug!("FWHT P frame without its reference: skipped");
                return Ok(Vec::new());
            }
        };
        let visible = (header.width, header.height);
        let sequence = (self.size != Some(visible)).then(|| {
            let (coded_width, coded_height) = header.coded_size();
            SequenceChange {
                coded_width,
                coded_height,
                dpb_pictures: 1,
                bit_depth: 8,
                controls: Vec::new(),
            }
        });
        self.size = Some(visible);
        let timestamp_ns = timestamps.next_picture();
        self.refs.decoded(&header, timestamp_ns);
        self.output
            .record(timestamp_ns, timestamps.packet(), visible, None);
        self.output.push_due([timestamp_ns]);
        Ok(vec![Request {
            timestamp_ns,
            controls: vec![ExtControl::typed::<FwhtParams>(controls::params(
                &header, reference,
            ))],
            bitstream: vec![BitstreamPart::Packet(payload)],
            hold_capture: false,
            sequence,
            summary: PictureSummary {
                kind: if reference == 0 { "I" } else { "P" },
                order: None,
                references: (reference != 0).then_some(reference).into_iter().collect(),
                slices: 1,
            },
        }])
    }

    fn references(&self) -> Vec<u64> {
        self.refs.reference().into_iter().collect()
    }

    fn take_output(&mut self, _end_of_stream: bool) -> Vec<OutputPicture> {
        self.output.take()
    }

    fn reset(&mut self) {
        self.refs.reset();
        self.output.clear();
    }

    fn describe(&self) -> String {
        "FWHT, one request per frame".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(width: u32, height: u32, intra: bool, payload: &[u8]) -> Vec<u8> {
        let flags = 0x80000 | (2 << 16) | if intra { 0x400 } else { 0 };
        let mut out = fwht::MAGIC.to_vec();
        for word in [3, width, height, flags, 3, 0, 0, 0, payload.len() as u32] {
            out.extend_from_slice(&word.to_be_bytes());
        }
        out.extend_from_slice(payload);
        out
    }

    fn params_of(request: &Request) -> v4l2r::bindings::v4l2_ctrl_fwht_params {
        assert_eq!(request.controls.len(), 1);
        assert_eq!(request.controls[0].id, b::V4L2_CID_STATELESS_FWHT_PARAMS);
        let raw = request.controls[0].raw();
        assert_eq!(
            { raw.size } as usize,
            std::mem::size_of::<v4l2r::bindings::v4l2_ctrl_fwht_params>()
        );
        // SAFETY: the control holds one v4l2_ctrl_fwht_params (size checked
        // above), alive as long as `request`.
        unsafe { *(raw.__bindgen_anon_1.ptr as *const v4l2r::bindings::v4l2_ctrl_fwht_params) }
    }

    #[test]
    fn frames_become_requests_with_their_reference() {
        let mut codec = FwhtCodec::new();
        let mut ts = Timestamps::new();
        // A P frame before any I frame has nothing to predict from.
        ts.start_packet();
        assert!(codec
            .decode(&frame(640, 360, false, &[1, 2]), &mut ts)
            .unwrap()
            .is_empty());

        ts.start_packet();
        let i = frame(640, 360, true, &[9, 8, 7, 6]);
        let requests = codec.decode(&i, &mut ts).unwrap();
        assert_eq!(requests.len(), 1);
        let first = &requests[0];
        assert_eq!(first.bitstream, vec![BitstreamPart::Packet(44..48)]);
        let change = first
            .sequence
            .as_ref()
            .expect("a first frame starts a sequence");
        assert_eq!((change.coded_width, change.coded_height), (640, 368));
        let p = params_of(first);
        assert_eq!(
            (p.version, p.width, p.height, p.flags),
            (3, 640, 360, 0xa0400)
        );
        assert_eq!({ p.backward_ref_ts }, 0);
        assert_eq!(codec.references(), vec![first.timestamp_ns]);

        ts.start_packet();
        let requests = codec
            .decode(&frame(640, 360, false, &[1, 2]), &mut ts)
            .unwrap();
        let second = &requests[0];
        assert!(second.sequence.is_none());
        assert_eq!({ params_of(second).backward_ref_ts }, first.timestamp_ns);
        assert_eq!(codec.references(), vec![second.timestamp_ns]);

        let shown = codec.take_output(false);
        assert_eq!(
            shown
                .iter()
                .map(|p| (p.timestamp_ns, p.packet, p.visible))
                .collect::<Vec<_>>(),
            vec![
                (first.timestamp_ns, 2, (640, 360)),
                (second.timestamp_ns, 3, (640, 360))
            ]
        );

        // After a reset (seek), P frames wait for the next I frame.
        codec.reset();
        assert!(codec.references().is_empty());
        ts.start_packet();
        assert!(codec
            .decode(&frame(640, 360, false, &[1, 2]), &mut ts)
            .unwrap()
            .is_empty());
    }

    #[test]
    fn damage_and_unsupported_streams_are_told_apart() {
        let mut codec = FwhtCodec::new();
        let mut ts = Timestamps::new();
        ts.start_packet();
        codec
            .decode(&frame(640, 360, true, &[1, 2]), &mut ts)
            .unwrap();
        let cut = frame(640, 360, false, &[1, 2, 3]);
        let Err(err) = codec.decode(&cut[..cut.len() - 1], &mut ts) else {
            panic!("a cut frame decodes");
        };
        assert!(err.is_recoverable(), "{err}");
        // The damage took the reference with it.
        assert!(codec.references().is_empty());
        let mut rgb = frame(640, 360, true, &[1, 2]);
        rgb[20..24].copy_from_slice(&(0x100000u32 | (2 << 16) | 0x400).to_be_bytes());
        let Err(err) = codec.decode(&rgb, &mut ts) else {
            panic!("an RGB stream decodes");
        };
        assert!(!err.is_recoverable(), "{err}");
    }

    #[test]
    fn a_new_size_starts_a_new_sequence() {
        let mut codec = FwhtCodec::new();
        let mut ts = Timestamps::new();
        ts.start_packet();
        assert!(
            codec.decode(&frame(640, 360, true, &[]), &mut ts).unwrap()[0]
                .sequence
                .is_some()
        );
        ts.start_packet();
        let requests = codec.decode(&frame(648, 372, true, &[]), &mut ts).unwrap();
        let change = requests[0].sequence.as_ref().expect("new size");
        assert_eq!((change.coded_width, change.coded_height), (656, 384));
    }
}
