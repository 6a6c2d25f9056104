//! The V4L2 side of the player's `FrameDecoder`: access units in, frames
//! out, with a codec layer (`codec/<codec>`) turning each access unit into
//! decode jobs and saying which pictures are references and when each
//! picture is due for output.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use tracing::{debug, info, warn};

use super::controls::ExtControl;
use super::detile::detiled_format;
use super::detiled_view::DetiledPlanes;
use super::session::{DecodeRequest, DecodedFrame, Session, SessionConfig, SessionError};
use crate::frame::{CpuPlanes, DecoderKind, DmabufFrame, Frame, FrameStorage};

/// One request's worth of work from the codec layer.
pub struct DecodeJob {
    /// The picture's timestamp as given to `StatelessCodec::decode_jobs`
    /// (all slices of one picture share it).
    pub timestamp_ns: u64,
    pub controls: Vec<ExtControl>,
    pub bitstream: Vec<u8>,
    /// More jobs of this picture follow.
    pub hold_capture: bool,
    /// Set on the first job of a new sequence (stream start, resolution
    /// change): earlier pictures are drained and the queues set up again
    /// if the session does not fit it.
    pub sequence: Option<SequenceChange>,
}

/// What a new sequence needs from the session.
#[derive(Clone, Debug)]
pub struct SequenceChange {
    pub coded_width: u32,
    pub coded_height: u32,
    pub capture_buffers: u32,
    /// Sequence controls to set before the CAPTURE format is chosen.
    pub controls: Vec<ExtControl>,
}

/// What the V4L2 decoder needs from a codec layer.
pub trait StatelessCodec: Send {
    /// Parses one access unit (Annex-B for H.264/HEVC) into decode jobs.
    /// An access unit with parameter sets only gives none. An error is
    /// about this access unit only; the codec resynchronises by itself
    /// (e.g. at the next IDR).
    fn decode_jobs(
        &mut self,
        access_unit: &[u8],
        timestamp_ns: u64,
    ) -> Result<Vec<DecodeJob>, String>;
    /// Timestamps of decoded pictures later pictures may still reference.
    fn references(&self) -> Vec<u64>;
    /// Timestamps of pictures now due for output, in display order; with
    /// `end_of_stream`, every remaining one.
    fn take_output(&mut self, end_of_stream: bool) -> Vec<u64>;
    /// Visible picture size (the cropping of the current sequence).
    fn visible_size(&self) -> (u32, u32);
    /// Visible size of one picture, asked once when it is output (a
    /// resolution change leaves earlier pictures at their own size).
    fn visible_size_of(&mut self, _timestamp_ns: u64) -> (u32, u32) {
        self.visible_size()
    }
    /// Forgets all state (seek, or recovery after a device error).
    fn reset(&mut self);
}

#[derive(Debug, thiserror::Error)]
pub enum DecoderError {
    #[error(transparent)]
    Session(#[from] SessionError),
    #[error("bitstream: {0}")]
    Bitstream(String),
    #[error("picture {0} ns: no CAPTURE layout reel can read on the CPU")]
    Unreadable(u64),
}

/// Timing of one packet, kept until its picture comes out.
#[derive(Clone, Copy)]
struct PacketTiming {
    pts_raw: i64,
    duration_raw: i64,
}

pub struct V4l2Decoder<C: StatelessCodec> {
    session: Session,
    /// What the session was set up with (updated by a new sequence).
    config: SessionConfig,
    /// The picture whose CAPTURE buffer the driver holds for more slices.
    holding_for: Option<u64>,
    codec: C,
    /// (numerator, denominator) of the stream's time base.
    time_base: (i64, i64),
    timings: HashMap<u64, PacketTiming>,
    decoded: HashMap<u64, DecodedFrame>,
    /// Timestamps due for output whose pictures have not come back yet.
    due: VecDeque<u64>,
    frames: VecDeque<Frame>,
    next_timestamp: u64,
    epoch: u64,
    pub errors: u64,
}

impl<C: StatelessCodec> V4l2Decoder<C> {
    pub fn new(
        config: SessionConfig,
        codec: C,
        time_base: (i64, i64),
    ) -> Result<Self, DecoderError> {
        let path = config.video_node.clone();
        let session = Session::open(config.clone())?;
        info!("decoding through V4L2 stateless decoder {}", path.display());
        Ok(Self {
            session,
            config,
            holding_for: None,
            codec,
            time_base,
            timings: HashMap::new(),
            decoded: HashMap::new(),
            due: VecDeque::new(),
            frames: VecDeque::new(),
            next_timestamp: 0,
            epoch: 0,
            errors: 0,
        })
    }

    pub fn kind(&self) -> DecoderKind {
        DecoderKind::V4l2Stateless
    }

    pub fn session(&self) -> &Session {
        &self.session
    }

    /// Feeds one access unit. Timestamps given to the device are a packet
    /// counter in microseconds (unique even when pts repeat or are unknown).
    pub fn send(
        &mut self,
        access_unit: &[u8],
        pts_raw: i64,
        duration_raw: i64,
    ) -> Result<(), DecoderError> {
        self.next_timestamp += 1;
        let timestamp_ns = self.next_timestamp * 1000;
        let jobs = self
            .codec
            .decode_jobs(access_unit, timestamp_ns)
            .map_err(|e| {
                self.errors += 1;
                DecoderError::Bitstream(e)
            })?;
        // A second field in its own packet decodes under its first field's
        // timestamp: only a picture of this packet needs its timing.
        if jobs.iter().any(|j| j.timestamp_ns == timestamp_ns) {
            self.timings.insert(
                timestamp_ns,
                PacketTiming {
                    pts_raw,
                    duration_raw,
                },
            );
        }
        for job in &jobs {
            if let Some(change) = &job.sequence {
                self.start_sequence(change)?;
            }
            if let Err(e) = self.submit(job) {
                self.errors += 1;
                if matches!(e, SessionError::RequestTimeout { .. }) {
                    self.recover();
                } else if self.holding_for.is_some() {
                    // The picture's earlier slices hold a CAPTURE buffer:
                    // FLUSH gives it back with what was decoded.
                    self.release_held();
                }
                return Err(e.into());
            }
            self.holding_for = job.hold_capture.then_some(job.timestamp_ns);
        }
        self.due.extend(self.codec.take_output(false));
        self.collect(Duration::ZERO)?;
        Ok(())
    }

    fn submit(&mut self, job: &DecodeJob) -> Result<(), SessionError> {
        self.session.set_references(&self.codec.references());
        let request = DecodeRequest {
            timestamp_ns: job.timestamp_ns,
            controls: &job.controls,
            bitstream: &job.bitstream,
            hold_capture: job.hold_capture,
        };
        let result = self.session.submit(request);
        if !matches!(result, Err(SessionError::NoCaptureBuffer { .. })) {
            return result;
        }
        // Pictures may be waiting in the driver: collect them and retry once.
        let completed = self.session.poll_completed(Duration::from_millis(50))?;
        self.store(completed);
        self.emit();
        self.session.set_references(&self.codec.references());
        self.session.submit(DecodeRequest {
            timestamp_ns: job.timestamp_ns,
            controls: &job.controls,
            bitstream: &job.bitstream,
            hold_capture: job.hold_capture,
        })
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
    fn start_sequence(&mut self, change: &SequenceChange) -> Result<(), DecoderError> {
        let fits = self.config.width == change.coded_width
            && self.config.height == change.coded_height
            && self.session.capture_buffer_count() >= change.capture_buffers as usize;
        if fits {
            return Ok(());
        }
        info!(
            width = change.coded_width,
            height = change.coded_height,
            buffers = change.capture_buffers,
            "new sequence: draining and setting the V4L2 queues up again"
        );
        self.holding_for = None;
        let drained = self.session.drain()?;
        self.store(drained);
        self.due.extend(self.codec.take_output(false));
        self.emit();
        // Pictures of the old sequence never due for output are dropped.
        let due = &self.due;
        self.decoded.retain(|ts, _| due.contains(ts));

        self.config.width = change.coded_width;
        self.config.height = change.coded_height;
        self.config.capture_buffers = change.capture_buffers;
        self.config
            .initial_controls
            .retain(|c| !change.controls.iter().any(|n| n.id == c.id));
        self.config
            .initial_controls
            .extend(change.controls.iter().cloned());
        match self.session.reconfigure(&self.config) {
            Ok(()) => {}
            // Frames still alive keep their buffers: a new session gets new
            // ones, the old buffers go when the last frame does.
            Err(SessionError::BuffersInUse { count }) => {
                debug!("{count} frames still hold buffers: opening a new session");
                self.session = Session::open(self.config.clone())?;
            }
            Err(e) => return Err(e.into()),
        }
        Ok(())
    }

    /// The next frame in display order, if one is ready.
    pub fn receive(&mut self) -> Result<Option<Frame>, DecoderError> {
        if self.frames.is_empty() && !self.due.is_empty() {
            self.collect(Duration::from_millis(10))?;
        }
        Ok(self.frames.pop_front())
    }

    /// End of stream: every picture is decoded and due.
    pub fn send_eof(&mut self) -> Result<(), DecoderError> {
        self.holding_for = None;
        let drained = self.session.drain()?;
        self.store(drained);
        self.due.extend(self.codec.take_output(true));
        self.emit();
        Ok(())
    }

    /// Forgets everything queued (container seek).
    pub fn flush(&mut self) {
        self.epoch += 1;
        self.recover();
    }

    fn recover(&mut self) {
        if let Err(e) = self.session.reset() {
            warn!("V4L2 session reset failed: {e}");
        }
        self.codec.reset();
        self.holding_for = None;
        self.timings.clear();
        self.decoded.clear();
        self.due.clear();
        self.frames.clear();
    }

    fn collect(&mut self, timeout: Duration) -> Result<(), DecoderError> {
        let result = self.session.poll_completed(timeout);
        let completed = match result {
            Ok(c) => c,
            Err(e) => {
                self.errors += 1;
                if matches!(e, SessionError::RequestTimeout { .. }) {
                    self.recover();
                }
                return Err(e.into());
            }
        };
        self.store(completed);
        self.emit();
        Ok(())
    }

    fn store(&mut self, completed: Vec<DecodedFrame>) {
        for frame in completed {
            if frame.error {
                self.errors += 1;
            }
            self.decoded.insert(frame.timestamp_ns, frame);
        }
    }

    /// Turns due pictures that came back into frames, in order.
    fn emit(&mut self) {
        while let Some(&timestamp) = self.due.front() {
            let Some(decoded) = self.decoded.remove(&timestamp) else {
                break;
            };
            self.due.pop_front();
            let timing = self.timings.remove(&timestamp);
            let size = self.codec.visible_size_of(timestamp);
            match self.to_frame(decoded, timing, size) {
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
    }

    fn to_frame(
        &self,
        decoded: DecodedFrame,
        timing: Option<PacketTiming>,
        (width, height): (u32, u32),
    ) -> Option<Frame> {
        let capture = decoded.hold.layout().format;
        let format = capture.cpu.or_else(|| detiled_format(capture.v4l2))?;
        let storage = frame_storage(&decoded, (width, height))?;
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
            sample_aspect: (1, 1),
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
fn frame_storage(decoded: &DecodedFrame, visible: (u32, u32)) -> Option<FrameStorage> {
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
        id: decoded.hold.id(),
        source: decoded.hold.clone(),
        cpu: Some(cpu),
    }))
}
