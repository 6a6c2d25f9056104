//! The decode loop H.264 and HEVC share: a packet's decode jobs (from the
//! codec layer's decoding process) become requests through the codec's
//! [`SliceGlue`]; the pictures the DPB puts out become due for output; the
//! pictures the jobs and the DPB still refer to are kept from reuse.
//!
//! The stateless interface leaves the DPB to the client: the driver
//! decodes into the CAPTURE buffers it is given and shows nothing by
//! itself. So every picture the codec layer's DPB puts out is due, whether
//! or not the job that put it out carries a slice to decode.

use super::codec::{CodecError, OutputPicture, Request, StatelessCodec, Timestamps};
use super::decoder::REQUEST_LOG;
use super::output_queue::OutputQueue;
use crate::codec::bitstream::NalIndex;
use crate::codec::{h264, hevc};
use tracing::debug;

/// The codec layer's decoding state (`codec::h264::H264Decoder`,
/// `codec::hevc::decoder::HevcDecoder`) as the loop drives it.
pub trait SliceParser: Send {
    type Job: SliceJob;
    type Error;
    /// The jobs of one access unit, its NAL units located where the
    /// demuxer knows them.
    fn decode(
        &mut self,
        packet: &[u8],
        nal_units: Option<&NalIndex>,
        timestamp_ns: u64,
    ) -> Result<Vec<Self::Job>, Self::Error>;
    /// End of stream: the pictures still waiting, in display order.
    fn flush(&mut self) -> Vec<u64>;
    fn reset(&mut self);
    /// Adds the pictures the DPB keeps for reference to `into`.
    fn dpb_references(&self, into: &mut Vec<u64>);
}

/// What the loop reads of one decode job.
pub trait SliceJob {
    fn timestamp_ns(&self) -> u64;
    fn has_slices(&self) -> bool;
    /// Some slice refers to a picture the DPB lacks.
    fn missing_references(&self) -> bool;
    /// The sequence's visible size.
    fn visible_size(&self) -> (u32, u32);
    fn sample_aspect_ratio(&self) -> Option<(u32, u32)>;
    /// The reference pictures the job's DPB array names.
    fn references(&self) -> impl Iterator<Item = u64> + '_;
    /// Pictures that may be shown once the job is decoded, in display
    /// order.
    fn output(&self) -> &[u64];
    /// The picture's type as the per-request log names it.
    fn kind(&self) -> &'static str;
    /// Its picture order count.
    fn order(&self) -> i32;
    /// Whether later pictures may refer to it.
    fn is_reference(&self) -> bool;
}

/// [`SliceParser`] and [`SliceJob`] for a codec layer whose decoding
/// state and jobs carry the names H.264's and HEVC's share;
/// `|decoder| references` lists the pictures its DPB keeps for reference.
macro_rules! slice_parser {
    (
        $parser:ty,
        $job:ty,
        $error:ty,
        |$decoder:ident| $references:expr,
        $kind:path,
        $order:path,
        $is_reference:path
    ) => {
        impl SliceParser for $parser {
            type Job = $job;
            type Error = $error;

            fn decode(
                &mut self,
                packet: &[u8],
                nal_units: Option<&NalIndex>,
                timestamp_ns: u64,
            ) -> Result<Vec<$job>, $error> {
                match nal_units {
                    Some(units) => self.decode_nal_units(packet, units.ranges(), timestamp_ns),
                    None => self.decode_access_unit(packet, timestamp_ns),
                }
            }

            fn flush(&mut self) -> Vec<u64> {
                <$parser>::flush(self).output
            }

            fn reset(&mut self) {
                <$parser>::reset(self);
            }

            fn dpb_references(&self, into: &mut Vec<u64>) {
                let $decoder = self;
                into.extend($references);
            }
        }

        impl SliceJob for $job {
            fn timestamp_ns(&self) -> u64 {
                self.timestamp_ns
            }
            fn has_slices(&self) -> bool {
                !self.slices.is_empty()
            }
            fn missing_references(&self) -> bool {
                self.missing_references
            }
            fn visible_size(&self) -> (u32, u32) {
                let (_, _, w, h) = self.stream.visible;
                (w, h)
            }
            fn sample_aspect_ratio(&self) -> Option<(u32, u32)> {
                self.stream.sample_aspect_ratio
            }
            fn references(&self) -> impl Iterator<Item = u64> + '_ {
                self.dpb.iter().map(|r| r.timestamp_ns)
            }
            fn output(&self) -> &[u64] {
                &self.output
            }
            fn kind(&self) -> &'static str {
                $kind(self)
            }
            fn order(&self) -> i32 {
                $order(self)
            }
            fn is_reference(&self) -> bool {
                $is_reference(self)
            }
        }
    };
}

slice_parser!(
    h264::H264Decoder,
    h264::DecodeJob,
    h264::H264Error,
    |decoder| {
        decoder
            .dpb()
            .pictures()
            .iter()
            .filter(|p| p.is_reference() && !p.non_existing)
            .map(|p| p.timestamp_ns)
    },
    h264_kind,
    h264_order,
    h264_is_reference
);
slice_parser!(
    hevc::decoder::HevcDecoder,
    hevc::decoder::DecodeJob,
    hevc::HevcError,
    |decoder| decoder.dpb().references(),
    hevc_kind,
    hevc_order,
    hevc_is_reference
);

fn h264_is_reference(job: &h264::DecodeJob) -> bool {
    job.header.nal_ref_idc != 0
}

/// A sub-layer non-reference picture of the highest sub-layer: no picture
/// refers to it.
fn hevc_is_reference(job: &hevc::decoder::DecodeJob) -> bool {
    !(job.nal_header.is_sub_layer_non_reference()
        && job.nal_header.temporal_id() == job.sps.sps_max_sub_layers_minus1)
}

/// IDR, or the most predicted of the picture's slices (B over P over I).
fn h264_kind(job: &h264::DecodeJob) -> &'static str {
    use h264::slice::SliceType;
    if job.header.idr {
        return "IDR";
    }
    let types = || job.slices.iter().map(|s| s.header.slice_type);
    if types().any(|t| t == SliceType::B) {
        "B"
    } else if types().any(|t| matches!(t, SliceType::P | SliceType::Sp)) {
        "P"
    } else {
        "I"
    }
}

/// A field's own order count; a frame's is the smaller of its fields' (8.2.1).
fn h264_order(job: &h264::DecodeJob) -> i32 {
    use h264::PicStructure;
    match job.structure {
        PicStructure::Frame => job.top_field_order_cnt.min(job.bottom_field_order_cnt),
        PicStructure::TopField => job.top_field_order_cnt,
        PicStructure::BottomField => job.bottom_field_order_cnt,
    }
}

fn hevc_kind(job: &hevc::decoder::DecodeJob) -> &'static str {
    use hevc::slice::SliceType;
    if job.nal_header.is_idr() {
        return "IDR";
    }
    let types = || job.slices.iter().map(|s| s.header.slice_type);
    if types().any(|t| t == SliceType::B) {
        "B"
    } else if types().any(|t| t == SliceType::P) {
        "P"
    } else {
        "I"
    }
}

fn hevc_order(job: &hevc::decoder::DecodeJob) -> i32 {
    job.poc
}

type JobOf<G> = <<G as SliceGlue>::Parser as SliceParser>::Job;
type ErrorOf<G> = <<G as SliceGlue>::Parser as SliceParser>::Error;

/// What differs between the slice codecs: the requests of a picture, the
/// errors, the mode.
pub trait SliceGlue: Send {
    type Parser: SliceParser;
    /// The requests of one picture with slices.
    fn requests(&mut self, job: &JobOf<Self>) -> Result<Vec<Request>, CodecError>;
    fn codec_error(&self, error: ErrorOf<Self>) -> CodecError;
    /// Forgets what the glue keeps between pictures.
    fn reset(&mut self) {}
    fn describe(&self) -> String;
}

/// A slice codec's [`StatelessCodec`]: the codec layer's decoding state,
/// the codec's glue, and what the loop keeps between packets.
pub struct SliceCodec<G: SliceGlue> {
    parser: G::Parser,
    pub(super) glue: G,
    /// Timestamps named as references by the last access unit's jobs and
    /// kept by the DPB after it.
    batch_references: Vec<u64>,
    output: OutputQueue,
}

impl<G: SliceGlue> SliceCodec<G> {
    pub fn with_glue(parser: G::Parser, glue: G) -> Self {
        Self {
            parser,
            glue,
            batch_references: Vec::new(),
            output: OutputQueue::new(),
        }
    }
}

impl<G: SliceGlue> StatelessCodec for SliceCodec<G> {
    fn decode(
        &mut self,
        packet: &[u8],
        timestamps: &mut Timestamps,
    ) -> Result<Vec<Request>, CodecError> {
        self.decode_units(packet, None, timestamps)
    }

    fn decode_units(
        &mut self,
        packet: &[u8],
        nal_units: Option<&NalIndex>,
        timestamps: &mut Timestamps,
    ) -> Result<Vec<Request>, CodecError> {
        // One device timestamp per packet: an H.264 second field in its
        // own packet decodes under its first field's.
        let timestamp_ns = timestamps.next_picture();
        let jobs = self
            .parser
            .decode(packet, nal_units, timestamp_ns)
            .map_err(|e| self.glue.codec_error(e))?;
        let mut requests = Vec::new();
        // Kept sorted and without repeats below; the Vec's memory is reused
        // from access unit to access unit.
        let mut references = std::mem::take(&mut self.batch_references);
        references.clear();
        for job in &jobs {
            // Pictures whose output the DPB decided, even without slices.
            self.output.push_due(job.output().iter().copied());
            if !job.has_slices() {
                continue;
            }
            if timestamps.leaves_out(job.timestamp_ns(), job.is_reference()) {
                self.output.leave_out(job.timestamp_ns());
                continue;
            }
            if job.missing_references() {
                debug!(
                    timestamp_ns = job.timestamp_ns(),
                    "picture refers to pictures the DPB lacks"
                );
            }
            self.output.record(
                job.timestamp_ns(),
                timestamps.packet(),
                job.visible_size(),
                job.sample_aspect_ratio(),
            );
            references.extend(job.references());
            let first = requests.len();
            requests.extend(self.glue.requests(job)?);
            // The references are listed only for the request log.
            let logged = tracing::enabled!(target: REQUEST_LOG, tracing::Level::DEBUG);
            for request in &mut requests[first..] {
                request.summary.kind = job.kind();
                request.summary.order = Some(job.order());
                if logged {
                    request.summary.references = job.references().collect();
                }
            }
        }
        // The DPB after this unit, plus what its pictures referred to.
        self.parser.dpb_references(&mut references);
        references.sort_unstable();
        references.dedup();
        self.batch_references = references;
        Ok(requests)
    }

    fn references(&self) -> Vec<u64> {
        self.batch_references.clone()
    }

    fn take_output(&mut self, end_of_stream: bool) -> Vec<OutputPicture> {
        if end_of_stream {
            self.output.push_due(self.parser.flush());
        }
        self.output.take()
    }

    fn reset(&mut self) {
        self.parser.reset();
        self.output.clear();
        self.batch_references.clear();
        self.glue.reset();
    }

    fn describe(&self) -> String {
        self.glue.describe()
    }
}
