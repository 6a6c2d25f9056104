//! What a codec's V4L2 glue (`v4l2/<codec>/`) gives the generic decoder:
//! its registry entry (what the driver must offer, how to open the glue),
//! requests built from one packet, which pictures are references, and which
//! pictures are due for output. The generic side ([`super::decoder`]) owns
//! the session, timing and frames; the glue owns nothing device-related.

use std::ops::Range;
use std::path::PathBuf;

use tracing::debug;

use super::controls::ExtControl;
use super::discovery::{DecoderInfo, StreamRequirements};
use super::slice_mode::ModeError;
use crate::codec::av1::Av1Error;
use crate::codec::bitstream::NalIndex;
use crate::codec::fwht::FwhtError;
use crate::codec::h264::H264Error;
use crate::codec::hevc::HevcError;
use crate::codec::mpeg2::Mpeg2Error;
use crate::codec::vp8::Vp8Error;
use crate::codec::vp9::Vp9Error;
use crate::media::{Codec, VideoStreamInfo};

/// A device timestamp: unique per decoded picture, a whole number of
/// microseconds (the kernel keeps a `timeval`); references name pictures by it.
pub type DeviceTimestamp = u64;

/// Counts packets and hands out device timestamps for one packet's pictures.
/// A packet may hold several pictures (VP9 superframes, AV1 temporal units,
/// H.264 field pairs), each decoded into its own CAPTURE buffer.
#[derive(Debug)]
pub struct Timestamps {
    packet: u64,
    next: u64,
    /// (device timestamp, packet) of every timestamp handed out for this packet.
    issued: Vec<(DeviceTimestamp, u64)>,
    /// The packet's pictures are wanted only as references (an exact
    /// seek's target lies after them): a codec may leave out the others.
    references_only: bool,
}

impl Default for Timestamps {
    fn default() -> Self {
        Self::new()
    }
}

impl Timestamps {
    pub fn new() -> Self {
        Self {
            packet: 0,
            next: 0,
            issued: Vec::new(),
            references_only: false,
        }
    }

    /// Says that the pictures of the packets from now on are shown before
    /// an exact seek's target: a picture no other refers to need not be
    /// decoded (no request), and is not put out.
    pub fn set_references_only(&mut self, references_only: bool) {
        self.references_only = references_only;
    }

    /// Whether the picture of `timestamp_ns` is left undecoded: the packet
    /// is wanted only for references and `is_reference` says no later
    /// picture needs it.
    pub fn leaves_out(&self, timestamp_ns: DeviceTimestamp, is_reference: bool) -> bool {
        let leave = self.references_only && !is_reference;
        if leave {
            debug!(
                timestamp_ns,
                "non-reference picture before the seek target: not decoded"
            );
        }
        leave
    }

    /// Starts the next packet; returns its number.
    pub fn start_packet(&mut self) -> u64 {
        self.packet += 1;
        self.issued.clear();
        self.packet
    }

    /// The packet being decoded.
    pub fn packet(&self) -> u64 {
        self.packet
    }

    /// A fresh timestamp for a picture of the current packet.
    pub fn next_picture(&mut self) -> DeviceTimestamp {
        self.next += 1;
        let timestamp = self.next * 1000;
        self.issued.push((timestamp, self.packet));
        timestamp
    }

    /// Timestamps issued since the packet started.
    pub fn issued(&self) -> &[(DeviceTimestamp, u64)] {
        &self.issued
    }
}

/// A piece of an OUTPUT buffer: bytes of the packet being decoded (slices
/// are passed as ranges, never copied before the OUTPUT buffer), a start
/// code, or bytes the glue made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BitstreamPart {
    Packet(Range<usize>),
    StartCode,
    Owned(Vec<u8>),
}

/// The OUTPUT buffer's content: parts of `packet`, in order.
#[derive(Clone, Copy, Debug)]
pub struct Bitstream<'a> {
    packet: &'a [u8],
    parts: &'a [BitstreamPart],
}

const ANNEX_B_START_CODE: [u8; 3] = [0, 0, 1];

/// A whole-buffer bitstream (`Bitstream::whole`) is one range of itself.
static WHOLE: [BitstreamPart; 1] = [BitstreamPart::Packet(0..usize::MAX)];

impl<'a> Bitstream<'a> {
    pub fn new(packet: &'a [u8], parts: &'a [BitstreamPart]) -> Self {
        Self { packet, parts }
    }

    /// All of `bytes`.
    pub fn whole(bytes: &'a [u8]) -> Self {
        Self {
            packet: bytes,
            parts: &WHOLE,
        }
    }

    fn part_bytes(&self, part: &'a BitstreamPart) -> &'a [u8] {
        match part {
            BitstreamPart::Packet(range) => {
                let end = range.end.min(self.packet.len());
                self.packet.get(range.start..end).unwrap_or(&[])
            }
            BitstreamPart::StartCode => &ANNEX_B_START_CODE,
            BitstreamPart::Owned(bytes) => bytes,
        }
    }

    pub fn len(&self) -> usize {
        self.parts.iter().map(|p| self.part_bytes(p).len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Copies the bitstream to the start of `out`; returns the bytes written
    /// (less than `len()` only when `out` is shorter).
    pub fn write_to(&self, out: &mut [u8]) -> usize {
        let mut written = 0;
        for part in self.parts {
            let bytes = self.part_bytes(part);
            let n = bytes.len().min(out.len() - written);
            out[written..written + n].copy_from_slice(&bytes[..n]);
            written += n;
        }
        written
    }

    /// The bytes as one vector (tests and traces).
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = vec![0; self.len()];
        self.write_to(&mut out);
        out
    }
}

/// What a new sequence needs from the session.
#[derive(Clone, Debug)]
pub struct SequenceChange {
    pub coded_width: u32,
    pub coded_height: u32,
    /// Pictures the codec keeps (references and pictures waiting for
    /// output): CAPTURE buffers are this + 1 + what is held downstream.
    pub dpb_pictures: usize,
    /// Bits per (luma) sample: another depth chooses the CAPTURE format again.
    pub bit_depth: u32,
    /// Sequence controls to set before the CAPTURE format is chosen.
    pub controls: Vec<ExtControl>,
}

/// What one request decodes, in its codec's terms: logged for every request
/// at debug level (`-vv`) to line up with a driver's or GStreamer's debug
/// log, and with the controls the driver received.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PictureSummary {
    /// The picture's type as its codec names it: `IDR`, `I`, `P`, `B`
    /// (H.264, HEVC, MPEG-2, FWHT), `key`, `inter` (VP8, VP9), `intra-only`,
    /// `switch` (VP9, AV1).
    pub kind: &'static str,
    /// Its order: the picture order count (H.264, HEVC), temporal_reference
    /// (MPEG-2), order_hint (AV1); none where the codec has no such field.
    pub order: Option<i32>,
    /// The pictures it refers to, by device timestamp, in the order the
    /// controls name them (DPB entries, reference slots).
    pub references: Vec<DeviceTimestamp>,
    /// Slices (H.264, HEVC, MPEG-2) or tiles (AV1) this request carries.
    pub slices: usize,
}

impl std::fmt::Display for PictureSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "kind={}", self.kind)?;
        if let Some(order) = self.order {
            write!(f, " order={order}")?;
        }
        write!(f, " refs=[")?;
        for (i, reference) in self.references.iter().enumerate() {
            let separator = if i == 0 { "" } else { "," };
            write!(f, "{separator}{reference}")?;
        }
        write!(f, "] slices={}", self.slices)
    }
}

/// One request: the controls and bitstream of one OUTPUT buffer.
pub struct Request {
    /// The picture's device timestamp (all slices of one picture share it).
    pub timestamp_ns: DeviceTimestamp,
    pub controls: Vec<ExtControl>,
    pub bitstream: Vec<BitstreamPart>,
    /// More requests of this picture follow.
    pub hold_capture: bool,
    /// Set on the first request of a new sequence (stream start, resolution
    /// change): earlier pictures are drained and the queues set up again if
    /// the session does not fit it.
    pub sequence: Option<SequenceChange>,
    /// What the request decodes, for the per-request log.
    pub summary: PictureSummary,
}

/// A decoded picture due for display.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutputPicture {
    /// The CAPTURE buffer to show (by its device timestamp).
    pub timestamp_ns: DeviceTimestamp,
    /// The packet whose timing the picture is shown with: the one that
    /// decoded it, or a later one that shows it again (VP9/AV1
    /// `show_existing_frame`).
    pub packet: u64,
    /// Visible size (the cropping of the picture's own sequence).
    pub visible: (u32, u32),
    /// Sample aspect ratio, 1:1 when the stream does not say.
    pub sample_aspect: (u32, u32),
}

/// Why a packet could not be turned into requests.
#[derive(Debug, thiserror::Error)]
pub enum CodecError {
    /// Damaged or unexpected data: the codec skips ahead and resynchronises
    /// by itself (e.g. at the next keyframe); playback goes on.
    #[error("{0}")]
    Bitstream(Damage),
    /// The stream uses something the codec layer or the driver cannot
    /// decode: later pictures would fail the same way.
    #[error("unsupported: {0}")]
    Unsupported(Unsupported),
}

impl CodecError {
    pub fn is_recoverable(&self) -> bool {
        matches!(self, Self::Bitstream(_))
    }
}

impl From<Damage> for CodecError {
    fn from(damage: Damage) -> Self {
        Self::Bitstream(damage)
    }
}

impl From<Unsupported> for CodecError {
    fn from(unsupported: Unsupported) -> Self {
        Self::Unsupported(unsupported)
    }
}

/// What in a packet was damaged or unexpected. The codec layer's error is
/// part of the message, not a separate cause.
#[derive(Debug, thiserror::Error)]
pub enum Damage {
    /// An H.264 access unit the decoding process refused, on `device`.
    #[error("{}: {error}", device.display())]
    H264 { device: PathBuf, error: H264Error },
    /// An HEVC access unit the decoding process refused, on `device`.
    #[error("{}: {error}", device.display())]
    Hevc { device: PathBuf, error: HevcError },
    #[error("{0}")]
    Mpeg2(Mpeg2Error),
    #[error("{0}")]
    Vp8(Vp8Error),
    #[error("VP8 version {0} (0 to 3 exist)")]
    Vp8Version(u8),
    #[error("{0}")]
    Vp9(Vp9Error),
    #[error("{0}")]
    Av1(Av1Error),
    /// A non-key AV1 frame larger than the CAPTURE buffers: new buffers
    /// would lose its references.
    #[error(
        "CAPTURE buffers of {}x{} for a non-key AV1 frame larger than them ({}x{})",
        buffers.0, buffers.1, frame.0, frame.1
    )]
    Av1FrameOutgrowsBuffers {
        buffers: (u32, u32),
        frame: (u32, u32),
    },
    #[error("{0}")]
    Fwht(FwhtError),
}

/// What a stream needs that the codec layer, reel's glue or the driver
/// does not do.
#[derive(Debug, thiserror::Error)]
pub enum Unsupported {
    /// A feature H.264's decoding process does not decode, on `device`.
    #[error("{}: {error}", device.display())]
    H264 { device: PathBuf, error: H264Error },
    /// A feature HEVC's decoding process does not decode, on `device`.
    #[error("{}: {error}", device.display())]
    Hevc { device: PathBuf, error: HevcError },
    /// The MPEG-2 parser's words (MPEG-1, say).
    #[error("{0}")]
    Mpeg2(String),
    #[error("{0}")]
    Av1(Av1Error),
    /// A picture needing more than one request on a driver that cannot
    /// hold its CAPTURE buffer between them.
    #[error(
        "{0} needs a driver that holds CAPTURE buffers between requests \
         (V4L2_BUF_CAP_SUPPORTS_M2M_HOLD_CAPTURE_BUF); this one does not for this codec"
    )]
    HoldCapture(SeveralRequests),
    #[error(
        "MPEG-2 field pictures: the driver cannot hold a CAPTURE buffer for the \
         second field (no V4L2_BUF_CAP_SUPPORTS_M2M_HOLD_CAPTURE_BUF)"
    )]
    Mpeg2FieldPictures,
    #[error("MPEG-2 4:2:2/4:4:4: stateless decoders take 4:2:0 only")]
    Mpeg2Chroma,
    #[error(
        "AV1 seq_profile {seq_profile} with {bit_depth}-bit samples{}: reel decodes 4:2:0 of \
         8 and 10 bits on V4L2",
        not_420(*is_420)
    )]
    Av1Format {
        seq_profile: u8,
        bit_depth: u8,
        is_420: bool,
    },
    #[error(
        "VP9 profile {profile} with {bit_depth}-bit samples{}: reel decodes 4:2:0 profiles 0 \
         and 2 (8 and 10 bits) on V4L2",
        not_420(*is_420)
    )]
    Vp9Format {
        profile: u8,
        bit_depth: u8,
        is_420: bool,
    },
    #[error(
        "FWHT version {0}: the stateless interface takes version {only} only",
        only = crate::codec::fwht::VERSION
    )]
    FwhtVersion(u32),
    #[error("FWHT flags {0:#x}: reel decodes 4:2:0 Y'CbCr FWHT only")]
    FwhtFlags(u32),
}

fn not_420(is_420: bool) -> &'static str {
    if is_420 {
        ""
    } else {
        " not 4:2:0"
    }
}

/// A picture that takes more than one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SeveralRequests {
    /// An H.264 first field, whose second field decodes into its buffer.
    #[error("a field pair (interlaced field pictures)")]
    FieldPair,
    /// A picture of several slices in slice-based mode.
    #[error("a picture of {0} slices decoded slice by slice")]
    Slices(usize),
}

/// A codec's V4L2 glue, driven by [`super::decoder::V4l2Decoder`].
pub trait StatelessCodec: Send {
    /// Parses one packet (Annex-B for H.264/HEVC) into requests, taking a
    /// device timestamp from `timestamps` for each picture it decodes. A
    /// packet with parameter sets only gives none. After an error the codec
    /// resynchronises by itself (e.g. at the next keyframe).
    fn decode(
        &mut self,
        packet: &[u8],
        timestamps: &mut Timestamps,
    ) -> Result<Vec<Request>, CodecError>;
    /// As `decode`, with the packet's NAL units located when the demuxer
    /// knows where they are (H.264/HEVC from MP4 or Matroska), so the codec
    /// need not search the packet for start codes. Other codecs ignore it.
    fn decode_units(
        &mut self,
        packet: &[u8],
        nal_units: Option<&NalIndex>,
        timestamps: &mut Timestamps,
    ) -> Result<Vec<Request>, CodecError> {
        let _ = nal_units;
        self.decode(packet, timestamps)
    }
    /// Device timestamps of decoded pictures later pictures may still
    /// reference (or show again): their CAPTURE buffers stay out of reuse.
    fn references(&self) -> Vec<DeviceTimestamp>;
    /// Pictures now due for output, in display order; with
    /// `end_of_stream`, every remaining one.
    fn take_output(&mut self, end_of_stream: bool) -> Vec<OutputPicture>;
    /// Forgets all state (seek, or recovery after a device error).
    fn reset(&mut self);
    /// How the codec decodes on this device, for `reel probe` and logs.
    fn describe(&self) -> String;
}

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

/// Why a codec's glue could not be opened for a decoder.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CodecOpenError {
    /// No decode mode or start code fits the driver's menus and the
    /// environment's overrides (H.264, HEVC).
    #[error(transparent)]
    Mode(#[from] ModeError),
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
    pub open: fn(&DecoderInfo, &VideoStreamInfo) -> Result<CodecSetup, CodecOpenError>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bitstream_parts_are_written_in_order() {
        let packet = [9, 8, 7, 6, 5];
        let parts = [
            BitstreamPart::StartCode,
            BitstreamPart::Packet(1..3),
            BitstreamPart::Owned(vec![1]),
            BitstreamPart::Packet(4..9),
        ];
        let bitstream = Bitstream::new(&packet, &parts);
        assert_eq!(bitstream.len(), 3 + 2 + 1 + 1);
        assert_eq!(bitstream.to_vec(), vec![0, 0, 1, 8, 7, 1, 5]);
        let mut short = [0u8; 4];
        assert_eq!(bitstream.write_to(&mut short), 4);
        assert_eq!(short, [0, 0, 1, 8]);
        assert_eq!(Bitstream::whole(&packet).to_vec(), packet.to_vec());
    }

    #[test]
    fn a_summary_reads_as_key_value_pairs() {
        let summary = PictureSummary {
            kind: "B",
            order: Some(-4),
            references: vec![1000, 3000],
            slices: 2,
        };
        assert_eq!(
            summary.to_string(),
            "kind=B order=-4 refs=[1000,3000] slices=2"
        );
        let key = PictureSummary {
            kind: "key",
            slices: 1,
            ..Default::default()
        };
        assert_eq!(key.to_string(), "kind=key refs=[] slices=1");
    }

    #[test]
    fn timestamps_are_unique_microseconds_and_name_their_packet() {
        let mut t = Timestamps::new();
        assert_eq!(t.start_packet(), 1);
        let a = t.next_picture();
        let b = t.next_picture();
        assert_eq!(t.start_packet(), 2);
        let c = t.next_picture();
        assert_eq!((a, b, c), (1000, 2000, 3000));
        assert_eq!(t.issued(), &[(3000, 2)]);
    }
}
