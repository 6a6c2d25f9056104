//! The V4L2 side of the player's `FrameDecoder`: packets in, frames out.
//! Generic over codecs: a codec's glue ([`StatelessCodec`], found through
//! the [`super::registry`]) turns each packet into requests and says which
//! pictures are references and when each is due for output; this owns the
//! session, packet timing and frames.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::time::Duration;

use tracing::{debug, info, warn};

use super::codec::{
    Bitstream, CodecError, OutputPicture, Request, SequenceChange, StatelessCodec, Timestamps,
};
use super::codec::{CodecEntry, CodecOpenError};
use super::damage::Damage;
use super::detile::detiled_format;
use super::detiled_view::DetiledPlanes;
use super::discovery::{DecoderInfo, DiscoveryError};
use super::pictures::Pictures;
use super::session::{
    CaptureOptions, DecodeRequest, DecodedFrame, Session, SessionConfig, SessionError,
};
use crate::codec::bitstream::NalIndex;
use crate::frame::{CpuPlanes, DecoderKind, DmabufFrame, Frame, FrameStorage};
use crate::media::VideoStreamInfo;

#[derive(Debug, thiserror::Error)]
pub enum DecoderError {
    #[error(transparent)]
    Session(#[from] SessionError),
    #[error(transparent)]
    Codec(#[from] CodecError),
    #[error("picture {0} ns: no CAPTURE layout reel can read on the CPU")]
    Unreadable(u64),
    #[error("{0} (the V4L2 session was reset)")]
    Reset(SessionError),
    #[error("{count} decode requests in a row failed or did not complete, the device counts as failed; the last: {last}")]
    Stuck { count: u32, last: SessionError },
}

impl DecoderError {
    /// Whether playback can go on with later packets: a damaged or
    /// unreadable picture, or a request the device refused, costs that
    /// picture; a device or set-up failure ends the stream.
    pub fn is_recoverable(&self) -> bool {
        match self {
            Self::Session(e) => e.is_recoverable(),
            Self::Codec(e) => e.is_recoverable(),
            Self::Unreadable(_) | Self::Reset(_) => true,
            Self::Stuck { .. } => false,
        }
    }

    /// Whether the device failed rather than the stream: another decoder
    /// (software) can take over where it stopped.
    pub fn is_device_failure(&self) -> bool {
        match self {
            Self::Session(e) => e.is_device_lost(),
            Self::Stuck { .. } => true,
            Self::Codec(_) | Self::Unreadable(_) | Self::Reset(_) => false,
        }
    }

    /// Whether another decoder (software) should take over where this one
    /// stopped: the device failed, lacks the memory for the stream's
    /// buffers, or the stream now needs what the device or reel's V4L2
    /// glue cannot do (field pictures on a driver that cannot hold a
    /// CAPTURE buffer for the second field, say), which libavcodec may
    /// well decode.
    pub fn needs_another_decoder(&self) -> bool {
        self.is_device_failure()
            || matches!(self, Self::Codec(CodecError::Unsupported(_)))
            || matches!(self, Self::Session(e) if e.is_out_of_memory())
    }
}

/// Why a V4L2 decoder could not be opened for a stream.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The decoder has no media node to allocate requests from.
    #[error(transparent)]
    Discovery(#[from] DiscoveryError),
    /// The codec's glue refused the decoder (its decode-mode menus).
    #[error(transparent)]
    Codec(#[from] CodecOpenError),
    /// Setting up the device's queues failed (the error's text includes
    /// its cause).
    #[error("{}: {error}", device.display())]
    Session {
        device: PathBuf,
        error: DecoderError,
    },
}

/// Request time-outs or device faults in a row after which the device
/// counts as failed.
const STUCK_AFTER: u32 = 3;

/// The tracing target of the line logged for every request queued (debug
/// level: `-vv`, or `RUST_LOG=reel::request=debug` for these lines alone):
/// `request ts=T kind=K [order=O] refs=[..] slices=N bytes=B [hold]`.
pub const REQUEST_LOG: &str = "reel::request";

/// Whether `error` is answered by resetting the session: a request that
/// did not complete in time, or a device fault a reset may clear.
fn resets(error: &SessionError) -> bool {
    matches!(error, SessionError::RequestTimeout { .. }) || error.is_transient_fault()
}

/// Timing of one packet, kept until its picture comes out.
#[derive(Clone, Copy)]
struct PacketTiming {
    pts_raw: i64,
    duration_raw: i64,
}

/// CAPTURE buffers: the codec's pictures, the one being decoded, and the
/// frames held downstream (with zero-copy presentation each of them keeps
/// its CAPTURE buffer). 32 is VIDEO_MAX_FRAME.
fn capture_buffers(dpb_pictures: usize, frames_held_downstream: usize) -> u32 {
    (dpb_pictures + 1 + frames_held_downstream).min(32) as u32
}

/// The fewest CAPTURE buffers decoding goes on with: the codec's pictures,
/// the one being decoded and one frame on screen.
fn capture_buffers_needed(dpb_pictures: usize) -> u32 {
    capture_buffers(dpb_pictures, 1)
}

pub struct V4l2Decoder {
    session: Session,
    /// What the session was set up with (updated by a new sequence).
    config: SessionConfig,
    /// The picture whose CAPTURE buffer the driver holds for more slices.
    holding_for: Option<u64>,
    codec: Box<dyn StatelessCodec>,
    /// (numerator, denominator) of the stream's time base.
    time_base: (i64, i64),
    timestamps: Timestamps,
    /// By packet number.
    timings: HashMap<u64, PacketTiming>,
    /// Decoded pictures (each holding its CAPTURE buffer) and the pictures
    /// due for output.
    pictures: Pictures<DecodedFrame>,
    frames: VecDeque<Frame>,
    epoch: u64,
    pub errors: u64,
    /// Damaged pictures (errors and what may reference them): not shown.
    pub damage: Damage,
    /// Requests that timed out or that the device failed since a request
    /// last completed.
    faults_in_a_row: u32,
    /// The device and mode in words, for the OSD's stats page.
    description: String,
}

impl V4l2Decoder {
    /// Opens `info` for `stream` with the codec of `entry`.
    pub fn open(
        entry: &CodecEntry,
        info: &DecoderInfo,
        stream: &VideoStreamInfo,
        capture: CaptureOptions,
    ) -> Result<Self, OpenError> {
        let media = info
            .media_node
            .clone()
            .ok_or_else(|| DiscoveryError::NoMediaNode {
                path: info.video_node.clone(),
            })?;
        let setup = (entry.open)(info, stream)?;
        let needs = (entry.requirements)(stream);
        let mut config = SessionConfig::new(
            &info.video_node,
            &media,
            entry.coded_format,
            needs.width,
            needs.height,
        );
        config.initial_controls = setup.initial_controls;
        config.capture_buffers =
            capture_buffers(setup.dpb_pictures, capture.frames_held_downstream);
        config.min_capture_buffers = capture_buffers_needed(setup.dpb_pictures);
        config.output_buffers = setup.output_buffers;
        config.required_controls = entry.required_controls.to_vec();
        config.bit_depth = stream.bit_depth.max(8);
        config.capture = capture;
        let time_base = (i64::from(stream.time_base.0), i64::from(stream.time_base.1));
        let mut decoder =
            Self::new(config, setup.codec, time_base).map_err(|error| OpenError::Session {
                device: info.video_node.clone(),
                error,
            })?;
        decoder.description = format!("{} {}", info.driver, decoder.description);
        Ok(decoder)
    }

    pub fn new(
        config: SessionConfig,
        codec: Box<dyn StatelessCodec>,
        time_base: (i64, i64),
    ) -> Result<Self, DecoderError> {
        let path = config.video_node.clone();
        let session = Session::open(config.clone())?;
        info!(
            "decoding through V4L2 stateless decoder {} ({})",
            path.display(),
            codec.describe()
        );
        let description = format!("V4L2 {} ({})", path.display(), codec.describe());
        Ok(Self {
            description,
            session,
            config,
            holding_for: None,
            codec,
            time_base,
            timestamps: Timestamps::new(),
            timings: HashMap::new(),
            pictures: Pictures::new(),
            frames: VecDeque::new(),
            epoch: 0,
            errors: 0,
            damage: Damage::new(),
            faults_in_a_row: 0,
        })
    }

    pub fn kind(&self) -> DecoderKind {
        DecoderKind::V4l2Stateless
    }

    pub fn session(&self) -> &Session {
        &self.session
    }

    /// Feeds one packet. Device timestamps are a picture counter in
    /// microseconds (unique even when pts repeat or are unknown).
    /// `nal_units`: where the packet's NAL units are, when the demuxer
    /// knows.
    pub fn send(
        &mut self,
        packet: &[u8],
        nal_units: Option<&NalIndex>,
        pts_raw: i64,
        duration_raw: i64,
    ) -> Result<(), DecoderError> {
        let packet_number = self.timestamps.start_packet();
        let requests = self
            .codec
            .decode_units(packet, nal_units, &mut self.timestamps)
            .inspect_err(|_| self.errors += 1)?;
        self.forget_unreferenced_shown();
        self.forget_old_damage();
        let mut output = self.codec.take_output(false);
        // Only a packet that decoded a picture, or shows one again, needs
        // its timing (a second field in its own packet decodes under its
        // first field's).
        let issued = self.timestamps.issued();
        let decodes_a_picture = requests
            .iter()
            .any(|r| issued.iter().any(|&(t, _)| t == r.timestamp_ns));
        if decodes_a_picture || output.iter().any(|p| p.packet == packet_number) {
            self.timings.insert(
                packet_number,
                PacketTiming {
                    pts_raw,
                    duration_raw,
                },
            );
        }
        for request in &requests {
            if let Some(change) = &request.sequence {
                self.start_sequence(change, &mut output)?;
            }
            if let Err(e) = self.submit(packet, request) {
                self.errors += 1;
                if e.is_device_lost() {
                    // Not the stream's damage: whichever decoder takes
                    // over decodes this picture again.
                    return Err(e.into());
                }
                self.damage.failed(request.timestamp_ns);
                if resets(&e) {
                    // Pictures this packet made due before the fault are
                    // put out before the reset.
                    self.pictures.make_due(output);
                    return Err(self.reset_after(e));
                } else if self.holding_for.is_some() {
                    // The picture's earlier slices hold a CAPTURE buffer:
                    // FLUSH gives it back with what was decoded.
                    self.release_held();
                }
                return Err(e.into());
            }
            self.holding_for = request.hold_capture.then_some(request.timestamp_ns);
        }
        self.pictures.make_due(output);
        self.collect(Duration::ZERO)?;
        Ok(())
    }

    fn submit(&mut self, packet: &[u8], request: &Request) -> Result<(), SessionError> {
        let decode_request = || DecodeRequest {
            timestamp_ns: request.timestamp_ns,
            controls: &request.controls,
            bitstream: Bitstream::new(packet, &request.bitstream),
            hold_capture: request.hold_capture,
        };
        let references = self.codec.references();
        self.damage.submitted(request.timestamp_ns, &references);
        self.session.set_references(&references);
        let mut result = self.session.submit(decode_request());
        if matches!(result, Err(SessionError::NoCaptureBuffer { .. })) {
            // Pictures may be waiting in the driver: collect them and retry once.
            let completed = self.session.poll_completed(Duration::from_millis(50))?;
            self.store(completed);
            self.emit();
            self.session.set_references(&self.codec.references());
            result = self.session.submit(decode_request());
        }
        if result.is_ok() {
            debug!(
                target: REQUEST_LOG,
                "request ts={} {} bytes={}{}",
                request.timestamp_ns,
                request.summary,
                decode_request().bitstream.len(),
                if request.hold_capture { " hold" } else { "" }
            );
        }
        result
    }

    fn release_held(&mut self) {
        self.holding_for = None;
        match self.session.drain() {
            Ok(frames) => self.store(frames),
            Err(e) => {
                warn!("releasing the held CAPTURE buffer failed: {e}");
                self.recover();
            }
        }
    }

    /// A new sequence: earlier pictures are drained and put out; the queues
    /// are set up again when the coded size or buffer count no longer fit.
    /// `made_due`: what the codec made due with the packet that starts it
    /// (taken when the queues are set up again).
    fn start_sequence(
        &mut self,
        change: &SequenceChange,
        made_due: &mut Vec<OutputPicture>,
    ) -> Result<(), DecoderError> {
        let capture_buffers = capture_buffers(
            change.dpb_pictures,
            self.config.capture.frames_held_downstream,
        );
        let bit_depth = change.bit_depth.max(8);
        let fits = self.config.width == change.coded_width
            && self.config.height == change.coded_height
            && self.config.bit_depth == bit_depth
            && self.session.capture_buffer_count() >= capture_buffers as usize;
        if fits {
            return Ok(());
        }
        info!(
            width = change.coded_width,
            height = change.coded_height,
            bit_depth,
            buffers = capture_buffers,
            "new sequence: draining and setting the V4L2 queues up again"
        );
        self.holding_for = None;
        let drained = self.session.drain()?;
        self.store(drained);
        // The old sequence's last pictures, which the new sequence's first
        // bumped out of the codec's DPB, are due with this packet: they are
        // put out now, and the old sequence's other pictures let go (none
        // of them may hold the output, and the new buffers, behind it).
        let references = self.codec.references();
        for (picture, decoded) in self.pictures.end_sequence(made_due.drain(..), &references) {
            self.put_out(picture, decoded);
        }

        self.config
            .set_coded_size(change.coded_width, change.coded_height);
        self.config.bit_depth = bit_depth;
        self.config.capture_buffers = capture_buffers;
        self.config.min_capture_buffers = capture_buffers_needed(change.dpb_pictures);
        self.config
            .initial_controls
            .retain(|c| !change.controls.iter().any(|n| n.id == c.id));
        self.config
            .initial_controls
            .extend(change.controls.iter().cloned());
        // Frames still alive keep their buffers; every other one is freed
        // before the new ones are allocated.
        self.session.reconfigure(&self.config)?;
        Ok(())
    }

    /// The next frame in display order, if one is ready.
    pub fn receive(&mut self) -> Result<Option<Frame>, DecoderError> {
        if self.frames.is_empty() && self.pictures.has_due() {
            self.collect(Duration::from_millis(10))?;
        }
        Ok(self.frames.pop_front())
    }

    /// End of stream: every picture is decoded and due.
    pub fn send_eof(&mut self) -> Result<(), DecoderError> {
        self.holding_for = None;
        let drained = self.session.drain()?;
        self.store(drained);
        self.pictures.make_due(self.codec.take_output(true));
        self.emit();
        Ok(())
    }

    /// Whether a request completed since the last reset after a fault.
    /// Driver, device and mode in words, for the OSD's stats page.
    pub fn describe(&self) -> &str {
        &self.description
    }

    pub fn resumed(&self) -> bool {
        self.faults_in_a_row == 0
    }

    /// See `FrameDecoder::set_references_only`: the codec leaves out the
    /// pictures of the next packets that are not references (no request).
    pub fn set_references_only(&mut self, references_only: bool) {
        self.timestamps.set_references_only(references_only);
    }

    /// Forgets every packet and picture queued (a container seek).
    pub fn discard(&mut self) {
        self.epoch += 1;
        self.recover();
        self.frames.clear();
    }

    /// Before a reset: what came back is put out, as at the end of the
    /// stream, in display order up to the first picture lost. After a
    /// device fault the device may still complete what is in flight
    /// (`drain`); after a time-out nothing more is waited for. Failures
    /// here are the fault's own, already reported.
    fn salvage(&mut self, drain: bool) {
        self.holding_for = None;
        if drain {
            match self.session.drain() {
                Ok(drained) => self.store(drained),
                Err(e) => debug!("draining before the reset: {e}"),
            }
        }
        self.pictures.make_due(self.codec.take_output(true));
        // Up to the first picture that did not come back (the failed one,
        // in display order): one shown after it would leave a gap behind
        // it that a decoder taking over could not fill.
        self.emit();
    }

    /// Resets the session and the codec: decoding resumes at the next key
    /// frame. Frames already put out stay (their buffers stay held).
    fn recover(&mut self) {
        if let Err(e) = self.session.reset() {
            warn!("V4L2 session reset failed: {e}");
        }
        self.codec.reset();
        self.holding_for = None;
        self.timings.clear();
        self.pictures.clear();
        self.damage.clear();
    }

    fn collect(&mut self, timeout: Duration) -> Result<(), DecoderError> {
        let result = self.session.poll_completed(timeout);
        let completed = match result {
            Ok(c) => c,
            Err(e) => {
                self.errors += 1;
                if resets(&e) {
                    return Err(self.reset_after(e));
                }
                return Err(e.into());
            }
        };
        if !completed.is_empty() {
            self.faults_in_a_row = 0;
        }
        self.store(completed);
        self.emit();
        Ok(())
    }

    /// A request timed out or the device failed it: the session is reset
    /// (decoding resumes at the next key frame), and after `STUCK_AFTER`
    /// in a row with nothing completed between them the device counts as
    /// failed (another decoder may take over).
    fn reset_after(&mut self, error: SessionError) -> DecoderError {
        self.salvage(error.is_transient_fault());
        self.recover();
        self.faults_in_a_row += 1;
        if self.faults_in_a_row >= STUCK_AFTER {
            DecoderError::Stuck {
                count: self.faults_in_a_row,
                last: error,
            }
        } else {
            DecoderError::Reset(error)
        }
    }

    fn store(&mut self, completed: Vec<DecodedFrame>) {
        for frame in completed {
            if frame.error {
                self.errors += 1;
            }
            self.damage.completed(frame.timestamp_ns, frame.error);
            self.pictures.store(frame.timestamp_ns, frame);
        }
    }

    /// Turns due pictures that came back into frames, in order. A picture
    /// still referenced keeps its buffer once shown: the codec may show it
    /// again.
    fn emit(&mut self) {
        let references = self.codec.references();
        while let Some((picture, decoded)) = self.pictures.next_out(&references) {
            self.put_out(picture, decoded);
        }
    }

    /// A due picture that came back, as a frame unless damaged.
    fn put_out(&mut self, picture: OutputPicture, decoded: DecodedFrame) {
        let timestamp = picture.timestamp_ns;
        let timing = self.timings.remove(&picture.packet);
        if !self.damage.may_show(timestamp) {
            return;
        }
        match self.to_frame(decoded, timing, &picture) {
            Some(frame) => {
                debug!(
                    timestamp_ns = timestamp,
                    pts = frame.pts_raw,
                    "V4L2 frame out"
                );
                self.frames.push_back(frame)
            }
            None => {
                self.errors += 1;
                warn!("picture {timestamp} ns: CAPTURE layout not readable on the CPU");
            }
        }
    }

    /// Drops shown pictures no longer referenced, before their buffers are
    /// needed for the next requests.
    fn forget_unreferenced_shown(&mut self) {
        if !self.pictures.has_shown() {
            return;
        }
        let references = self.codec.references();
        self.pictures.forget_unreferenced_shown(&references);
    }

    /// Damaged pictures stay known while referenced, decoded or due.
    fn forget_old_damage(&mut self) {
        let references = self.codec.references();
        let pictures = &self.pictures;
        self.damage
            .retain(|p| references.contains(&p) || pictures.is_live(p));
    }

    fn to_frame(
        &self,
        decoded: DecodedFrame,
        timing: Option<PacketTiming>,
        picture: &OutputPicture,
    ) -> Option<Frame> {
        let (width, height) = picture.visible;
        let capture = decoded.hold.layout().format;
        let format = capture.cpu.or_else(|| detiled_format(capture.v4l2))?;
        let storage = frame_storage(&decoded, (width, height), self.config.bit_depth)?;
        let timing = timing.unwrap_or(PacketTiming {
            pts_raw: 0,
            duration_raw: 0,
        });
        Some(Frame {
            pts: self.to_duration(timing.pts_raw),
            pts_raw: timing.pts_raw,
            duration: self.to_duration(timing.duration_raw),
            duration_raw: timing.duration_raw,
            width,
            height,
            format,
            sample_aspect: picture.sample_aspect,
            decoder: DecoderKind::V4l2Stateless,
            epoch: self.epoch,
            storage,
        })
    }

    fn to_duration(&self, raw: i64) -> Duration {
        let (num, den) = self.time_base;
        if raw <= 0 || num <= 0 || den <= 0 {
            return Duration::ZERO;
        }
        let nanos = (raw as i128) * (num as i128) * 1_000_000_000 / (den as i128);
        Duration::from_nanos(nanos.min(u64::MAX as i128) as u64)
    }
}

/// The decoded picture as a dmabuf (with its CPU view) when its CAPTURE
/// format has a DRM fourcc and modifier, else as CPU planes only. Tiled and
/// packed layouts get a view that detiles the `visible` picture only when
/// first read (the copy path), never for a frame presented as is.
fn frame_storage(
    decoded: &DecodedFrame,
    visible: (u32, u32),
    stream_bit_depth: u32,
) -> Option<FrameStorage> {
    let cpu: Box<dyn CpuPlanes> = match decoded.cpu_planes() {
        Some(mapped) => Box::new(mapped),
        None => Box::new(DetiledPlanes::new(
            Box::new(decoded.hold.clone()),
            visible.0,
            visible.1,
        )?),
    };
    let layout = decoded.hold.layout();
    let format = layout.format;
    let bytes_per_line = layout.planes.first().map_or(0, |p| p.0);
    let shared = format.drm.zip(format.drm_modifier(bytes_per_line));
    let (Some((fourcc, modifier)), Some(planes)) = (shared, layout.dmabuf_planes()) else {
        return Some(FrameStorage::Cpu(cpu));
    };
    Some(FrameStorage::Dmabuf(DmabufFrame {
        fourcc,
        modifier,
        coded_width: layout.coded_width,
        coded_height: layout.coded_height,
        planes,
        bit_depth: format.bit_depth,
        stream_bit_depth,
        id: decoded.hold.id(),
        source: decoded.hold.clone(),
        cpu: Some(cpu),
    }))
}
