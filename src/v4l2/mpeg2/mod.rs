//! MPEG-2 on a V4L2 stateless decoder: one request per picture, its slices
//! (each behind its start code) in the OUTPUT buffer with the sequence,
//! picture and quantisation controls. The two fields of a field-coded
//! frame go into one CAPTURE buffer: two requests with the frame's
//! timestamp, the first holding the buffer
//! (`V4L2_BUF_FLAG_M2M_HOLD_CAPTURE_BUF`). References are named by device
//! timestamp; B pictures are shown at once, a reference when the next one
//! is decoded.

pub mod controls;

use tracing::{debug, info};
use v4l2r::bindings as b;

use super::codec::{
    BitstreamPart, CodecError, OutputPicture, PictureSummary, Request, SequenceChange,
    StatelessCodec, Timestamps,
};
use super::codec::{CodecEntry, CodecOpenError, CodecSetup, Damage, Unsupported};
use super::controls::ExtControl;
use super::discovery::{DecoderInfo, StreamRequirements};
use super::formats::coded;
use super::output_queue::OutputQueue;
use crate::codec::mpeg2::headers::picture_coding_type;
use crate::codec::mpeg2::picture::{Picture, PictureParser, Sequence};
use crate::codec::mpeg2::refs::{Decision, References};
use crate::codec::mpeg2::Mpeg2Error;
use crate::media::{Codec, VideoStreamInfo};
use controls::{
    picture_control, quantisation_control, sequence_control, Mpeg2Picture, Mpeg2Quantisation,
    Mpeg2Sequence, NO_REFERENCE,
};

/// MPEG-2's line in the codec registry.
pub static ENTRY: CodecEntry = CodecEntry {
    codec: Codec::Mpeg2,
    coded_format: coded::MPEG2_SLICE,
    required_controls: &REQUIRED,
    menus: &[
        (b::V4L2_CID_MPEG_VIDEO_MPEG2_PROFILE, "mpeg2 profile"),
        (b::V4L2_CID_MPEG_VIDEO_MPEG2_LEVEL, "mpeg2 level"),
    ],
    requirements,
    open,
};

/// Controls every request carries.
const REQUIRED: [u32; 3] = [
    b::V4L2_CID_STATELESS_MPEG2_SEQUENCE,
    b::V4L2_CID_STATELESS_MPEG2_PICTURE,
    b::V4L2_CID_STATELESS_MPEG2_QUANTISATION,
];

/// The two references, the newer one also waiting for output.
const DPB_PICTURES: usize = 2;

/// A frame's two field requests, and the next frame's, in flight.
const OUTPUT_BUFFERS: u32 = 4;

/// The sequence of the container's extradata, when it has one.
fn container_sequence(stream: &VideoStreamInfo) -> Option<Sequence> {
    let mut parser = PictureParser::new();
    parser.parse_sequence(&stream.parameter_sets).ok()?;
    parser.sequence().cloned()
}

fn requirements(stream: &VideoStreamInfo) -> StreamRequirements {
    let blocks = StreamRequirements::in_blocks_of_16(coded::MPEG2_SLICE, stream);
    match container_sequence(stream) {
        Some(sequence) => {
            let (width, height) = sequence.coded_size();
            StreamRequirements {
                width,
                height,
                ..blocks
            }
        }
        None => blocks,
    }
}

fn open(info: &DecoderInfo, stream: &VideoStreamInfo) -> Result<CodecSetup, CodecOpenError> {
    let initial_controls = container_sequence(stream)
        .map(|s| vec![ExtControl::typed::<Mpeg2Sequence>(sequence_control(&s))])
        .unwrap_or_default();
    // Drivers say per coded format whether they hold CAPTURE buffers
    // (cedrus decides at S_FMT(OUTPUT)): read for MPEG-2.
    let holds_capture = info.holds_capture(coded::MPEG2_SLICE);
    info!(
        device = %info.video_node.display(),
        hold_capture = holds_capture,
        "MPEG-2 through V4L2"
    );
    Ok(CodecSetup {
        codec: Box::new(Mpeg2Codec::new(holds_capture)),
        initial_controls,
        dpb_pictures: DPB_PICTURES,
        output_buffers: OUTPUT_BUFFERS,
    })
}

/// The first field of a frame, waiting for its second.
#[derive(Debug, Clone, Copy)]
struct FirstField {
    timestamp_ns: u64,
    structure: u8,
    forward: u64,
    backward: u64,
    /// Pictures due for output once the frame is whole.
    due: [Option<u64>; 2],
}

/// The MPEG-2 glue of [`super::decoder::V4l2Decoder`].
pub struct Mpeg2Codec {
    parser: PictureParser,
    refs: References<u64>,
    output: OutputQueue,
    first_field: Option<FirstField>,
    /// Whether the driver can hold a CAPTURE buffer for a second field.
    hold_capture: bool,
}

impl Mpeg2Codec {
    pub fn new(hold_capture: bool) -> Self {
        Self {
            parser: PictureParser::new(),
            refs: References::new(),
            output: OutputQueue::new(),
            first_field: None,
            hold_capture,
        }
    }

    fn codec_error(&mut self, error: Mpeg2Error) -> CodecError {
        match error {
            Mpeg2Error::Unsupported(message) => Unsupported::Mpeg2(message).into(),
            error => {
                // Damage: predict nothing from what came before it.
                self.refs.reset();
                self.abandon_first_field();
                Damage::Mpeg2(error).into()
            }
        }
    }

    /// A first field whose second never came: its frame is shown as it is.
    fn abandon_first_field(&mut self) {
        if let Some(first) = self.first_field.take() {
            debug!(
                timestamp_ns = first.timestamp_ns,
                "MPEG-2 field without its pair"
            );
            self.output.push_due(first.due.into_iter().flatten());
        }
    }

    /// The request of one picture, or none when its references are missing.
    fn picture_request(
        &mut self,
        picture: &Picture,
        timestamps: &mut Timestamps,
    ) -> Result<Option<Request>, CodecError> {
        let is_field = picture.coding.is_field();
        if is_field && !self.hold_capture {
            return Err(Unsupported::Mpeg2FieldPictures.into());
        }
        let second_field = self
            .first_field
            .filter(|f| is_field && f.structure != picture.coding.picture_structure);
        let (timestamp_ns, forward, backward, hold_capture) = match second_field {
            Some(first) => {
                self.first_field = None;
                self.output.push_due(first.due.into_iter().flatten());
                (first.timestamp_ns, first.forward, first.backward, false)
            }
            None => {
                self.abandon_first_field();
                let (forward, backward) = match self
                    .refs
                    .decide(picture.header.picture_coding_type, picture.gop.as_ref())
                {
                    Decision::Decode { forward, backward } => (forward, backward),
                    Decision::Skip(why) => {
                        debug!(why, "MPEG-2 picture skipped");
                        return Ok(None);
                    }
                };
                // A closed group's leading B picture predicts backwards only:
                // name its one reference for both directions, so drivers find
                // a buffer either way.
                let forward = forward.or(backward).unwrap_or(NO_REFERENCE);
                let backward = backward.unwrap_or(NO_REFERENCE);
                let timestamp_ns = timestamps.next_picture();
                if timestamps.leaves_out(timestamp_ns, picture.header.is_reference()) {
                    // Shown at once when decoded: due now, and dropped.
                    self.output.leave_out(timestamp_ns);
                    let due = self.refs.decoded(false, timestamp_ns);
                    self.output.push_due(due);
                    return Ok(None);
                }
                let (width, height) = (
                    picture.sequence.horizontal_size(),
                    picture.sequence.vertical_size(),
                );
                self.output.record(
                    timestamp_ns,
                    timestamps.packet(),
                    (width, height),
                    picture.sequence.sample_aspect(),
                );
                let due = self
                    .refs
                    .decoded(picture.header.is_reference(), timestamp_ns);
                if is_field {
                    self.first_field = Some(FirstField {
                        timestamp_ns,
                        structure: picture.coding.picture_structure,
                        forward,
                        backward,
                        due: [due.first().copied(), due.get(1).copied()],
                    });
                } else {
                    self.output.push_due(due);
                }
                (timestamp_ns, forward, backward, is_field)
            }
        };
        debug!(
            timestamp_ns,
            coding_type = picture.header.picture_coding_type,
            structure = picture.coding.picture_structure,
            forward,
            backward,
            slices = picture.slices.len(),
            "MPEG-2 picture"
        );
        let sequence = picture.new_sequence.then(|| {
            let (coded_width, coded_height) = picture.sequence.coded_size();
            SequenceChange {
                coded_width,
                coded_height,
                dpb_pictures: DPB_PICTURES,
                // MPEG-2 Main profile (4:2:0, 8-bit) is what the interface decodes.
                bit_depth: 8,
                controls: vec![ExtControl::typed::<Mpeg2Sequence>(sequence_control(
                    &picture.sequence,
                ))],
            }
        });
        let mut bitstream = Vec::with_capacity(2 * picture.slices.len());
        for slice in &picture.slices {
            bitstream.push(BitstreamPart::StartCode);
            bitstream.push(BitstreamPart::Packet(slice.clone()));
        }
        Ok(Some(Request {
            timestamp_ns,
            controls: vec![
                ExtControl::typed::<Mpeg2Sequence>(sequence_control(&picture.sequence)),
                ExtControl::typed::<Mpeg2Picture>(picture_control(picture, forward, backward)),
                ExtControl::typed::<Mpeg2Quantisation>(quantisation_control(picture)),
            ],
            bitstream,
            hold_capture,
            sequence,
            summary: PictureSummary {
                kind: picture_coding_type::name(picture.header.picture_coding_type),
                order: Some(i32::from(picture.header.temporal_reference)),
                references: [forward, backward]
                    .into_iter()
                    .filter(|&r| r != NO_REFERENCE)
                    .collect(),
                slices: picture.slices.len(),
            },
        }))
    }
}

impl StatelessCodec for Mpeg2Codec {
    fn decode(
        &mut self,
        packet: &[u8],
        timestamps: &mut Timestamps,
    ) -> Result<Vec<Request>, CodecError> {
        let pictures = match self.parser.parse_packet(packet) {
            Ok(pictures) => pictures,
            Err(e) => return Err(self.codec_error(e)),
        };
        if pictures
            .iter()
            .any(|p| p.sequence.extension.chroma_format != 1)
        {
            return Err(Unsupported::Mpeg2Chroma.into());
        }
        let mut requests = Vec::with_capacity(pictures.len());
        for picture in &pictures {
            requests.extend(self.picture_request(picture, timestamps)?);
        }
        Ok(requests)
    }

    fn references(&self) -> Vec<u64> {
        let mut held = self.refs.held();
        held.extend(self.first_field.map(|f| f.timestamp_ns));
        held
    }

    fn take_output(&mut self, end_of_stream: bool) -> Vec<OutputPicture> {
        if end_of_stream {
            self.abandon_first_field();
            self.output.push_due(self.refs.flush());
        }
        self.output.take()
    }

    fn reset(&mut self) {
        self.parser.reset();
        self.refs.reset();
        self.output.clear();
        self.first_field = None;
    }

    fn describe(&self) -> String {
        format!(
            "MPEG-2, one request per picture{}",
            if self.hold_capture {
                ", field pairs in one CAPTURE buffer"
            } else {
                ", frame pictures only"
            }
        )
    }
}

#[cfg(test)]
mod tests;
