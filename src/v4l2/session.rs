//! One stateless decoding session on one video node: formats, buffers,
//! the request pool, submission of decode requests and collection of the
//! decoded pictures. Codec-agnostic: the codec layer hands it controls and
//! bitstream per request, and says which decoded pictures it still needs as
//! references.
//!
//! CAPTURE buffer ownership: a dequeued buffer is wrapped in an
//! `Arc<CaptureHold>`; the session keeps one reference, every
//! `DecodedFrame` (and the frame made from it) one, and the reference list
//! set by the codec one per referenced timestamp. The buffer is queued back
//! to the driver only when the session's reference is the last one.

use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tracing::{debug, info, warn};
use v4l2r::bindings::{self, v4l2_ext_control};
use v4l2r::ioctl::{self, BufferFlags, CtrlWhich, Request, V4l2Buffer};
use v4l2r::nix::errno::Errno;
use v4l2r::{Format, PlaneLayout, QueueType};

use super::buffers::{self, CaptureBuffer, OutputBuffer};
use super::codec::Bitstream;
use super::controls::{control_name, ExtControl};
use super::discovery::queue_types;
use super::formats::{capture_format, fourcc_str, CaptureFormat, ModifierRule};
use super::requests::{self, RequestPool};
use crate::frame::{BufferId, CpuPlanes, DmabufPlane, DmabufSource};

#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("{path}: cannot open: {source}")]
    Open {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("device busy: {0}")]
    Busy(PathBuf),
    #[error("{ioctl} failed: {errno}")]
    Ioctl { ioctl: &'static str, errno: Errno },
    #[error("{queue:?} buffers: {reason}")]
    Buffers { queue: QueueType, reason: String },
    #[error("coded format {0} refused by the driver")]
    CodedFormat(String),
    #[error("no CAPTURE format reel can use among {0}")]
    NoCaptureFormat(String),
    #[error(
        "S_EXT_CTRLS refused {}: {errno} (error_idx {error_idx} of {count})",
        failing_control.map(control_name).unwrap_or_else(|| "the control set (no single control named)".into())
    )]
    Controls {
        errno: Errno,
        error_idx: u32,
        count: u32,
        /// The control at `error_idx`, when the kernel named one.
        failing_control: Option<u32>,
    },
    #[error("request lacks required control {}", control_name(*.0))]
    MissingControl(u32),
    #[error("bitstream of {size} bytes does not fit an OUTPUT buffer of {capacity} bytes")]
    BitstreamTooLarge { size: usize, capacity: usize },
    #[error("empty bitstream")]
    EmptyBitstream,
    #[error("timestamp {0} ns is not a whole number of microseconds (V4L2 keeps a timeval)")]
    TimestampPrecision(u64),
    #[error("timestamp {0} ns is already used by a picture in flight or held")]
    DuplicateTimestamp(u64),
    #[error("no free CAPTURE buffer: all {count} are held by frames or references")]
    NoCaptureBuffer { count: usize },
    #[error("all {limit} requests are in flight")]
    NoFreeRequest { limit: usize },
    #[error("decode request with timestamp {timestamp_ns} ns did not complete within {waited:?}")]
    RequestTimeout { timestamp_ns: u64, waited: Duration },
    #[error("{count} CAPTURE buffers are still held by frames: drop them before reallocating")]
    BuffersInUse { count: usize },
}

impl SessionError {
    /// Whether later requests can still succeed: a request the driver or
    /// the session refused, or one that timed out (the session is reset),
    /// costs that picture only; a failed ioctl on the queues or a lost
    /// device ends the stream.
    pub fn is_recoverable(&self) -> bool {
        matches!(
            self,
            Self::Controls { .. }
                | Self::MissingControl(_)
                | Self::BitstreamTooLarge { .. }
                | Self::EmptyBitstream
                | Self::RequestTimeout { .. }
                | Self::NoCaptureBuffer { .. }
                | Self::DuplicateTimestamp(_)
        )
    }

    pub(crate) fn ioctl(ioctl: &'static str, errno: Errno) -> Self {
        Self::Ioctl { ioctl, errno }
    }
}

/// How to set a session up.
#[derive(Clone)]
pub struct SessionConfig {
    pub video_node: PathBuf,
    pub media_node: PathBuf,
    /// OUTPUT fourcc, e.g. `formats::coded::H264_SLICE`.
    pub coded_format: u32,
    pub width: u32,
    pub height: u32,
    /// Size of each OUTPUT buffer; 0 lets the driver choose.
    pub bitstream_buffer_size: u32,
    /// Asked for with REQBUFS; the driver's answer is what is used.
    pub output_buffers: u32,
    /// DPB size + frames held downstream + decode-ahead.
    pub capture_buffers: u32,
    /// Controls set before the CAPTURE format is read (sequence headers,
    /// decode mode, start code).
    pub initial_controls: Vec<ExtControl>,
    /// Control ids every request must carry.
    pub required_controls: Vec<u32>,
    /// CAPTURE fourccs in order of preference; empty = the driver's choice
    /// if reel can read it, else the first in `formats::CAPTURE_FORMATS`.
    pub capture_preference: Vec<u32>,
    /// Orders the CAPTURE formats the driver offers once the sequence
    /// controls are set (the compositor's side of the negotiation); takes
    /// precedence over `capture_preference`.
    pub capture_chooser: Option<CaptureChooser>,
    /// The stream's luma bit depth, for `capture_chooser`.
    pub bit_depth: u32,
    /// A request not complete within this is an error.
    pub request_timeout: Duration,
}

impl SessionConfig {
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
            bitstream_buffer_size: 0,
            output_buffers: 4,
            capture_buffers: 20,
            initial_controls: Vec::new(),
            required_controls: Vec::new(),
            capture_preference: Vec::new(),
            capture_chooser: None,
            bit_depth: 8,
            request_timeout: Duration::from_secs(1),
        }
    }
}

/// Given the CAPTURE fourccs a driver offers and the stream's bit depth,
/// returns them in the order to try. How the compositor's formats reach the
/// session without v4l2/ knowing about Wayland.
#[derive(Clone)]
pub struct CaptureChooser(pub Arc<ChooseCapture>);

/// (offered CAPTURE formats, stream bit depth) -> fourccs in the order to try.
pub type ChooseCapture = dyn Fn(&[OfferedCapture], u32) -> Vec<u32> + Send + Sync;

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

/// The negotiated CAPTURE layout.
#[derive(Clone, Debug)]
pub struct CaptureLayout {
    pub format: &'static CaptureFormat,
    /// Allocated size (G_FMT), which may exceed the visible size.
    pub coded_width: u32,
    pub coded_height: u32,
    /// (bytesperline, sizeimage) per memory plane.
    pub planes: Vec<(u32, u32)>,
}

impl CaptureLayout {
    /// (memory plane, byte offset, stride) of each colour plane, for
    /// layouts the CPU path reads; `None` for tiled or packed ones.
    pub fn cpu_planes(&self) -> Option<Vec<(usize, usize, usize)>> {
        let cpu = self.format.cpu?;
        let (stride0, _) = *self.planes.first()?;
        let stride0 = stride0 as usize;
        let rows = self.coded_height as usize;
        if self.format.memory_planes == self.format.color_planes {
            if self.planes.len() != self.format.color_planes {
                return None;
            }
            return Some(
                self.planes
                    .iter()
                    .enumerate()
                    .map(|(i, (bpl, _))| (i, 0, *bpl as usize))
                    .collect(),
            );
        }
        // One memory plane: chroma follows luma, with strides derived from
        // the luma stride as the V4L2 single-buffer formats define.
        Some(match cpu.plane_count() {
            2 => vec![(0, 0, stride0), (0, stride0 * rows, stride0)],
            3 => {
                let luma = stride0 * rows;
                let chroma = (stride0 / 2) * rows.div_ceil(2);
                vec![
                    (0, 0, stride0),
                    (0, luma, stride0 / 2),
                    (0, luma + chroma, stride0 / 2),
                ]
            }
            _ => vec![(0, 0, stride0)],
        })
    }
}

impl CaptureLayout {
    /// The colour planes as the compositor imports them: the CPU layout for
    /// linear formats; for tiled single-buffer formats the chroma plane
    /// follows `coded_height` rows of luma at the luma pitch.
    pub fn dmabuf_planes(&self) -> Option<Vec<DmabufPlane>> {
        let planes = match self.cpu_planes() {
            Some(p) => p,
            None if self.format.memory_planes == self.format.color_planes => self
                .planes
                .iter()
                .enumerate()
                .map(|(i, (bpl, _))| (i, 0, *bpl as usize))
                .collect(),
            // SAND128: bytesperline is the column height in lines; each
            // 128-byte-wide column holds coded_height rows of luma, then
            // its chroma rows.
            None if self.format.modifier == ModifierRule::Sand128FromBytesPerLine => {
                let (column_height, _) = *self.planes.first()?;
                let column_height = column_height as usize;
                let chroma = 128 * self.coded_height as usize;
                vec![(0, 0, column_height), (0, chroma, column_height)]
            }
            None if self.format.color_planes == 2 => {
                let (bpl, _) = *self.planes.first()?;
                let bpl = bpl as usize;
                vec![(0, 0, bpl), (0, bpl * self.coded_height as usize, bpl)]
            }
            None => return None,
        };
        planes
            .into_iter()
            .map(|(memory_plane, offset, stride)| {
                Some(DmabufPlane {
                    memory_plane,
                    offset: u32::try_from(offset).ok()?,
                    stride: u32::try_from(stride).ok()?,
                })
            })
            .collect()
    }
}

/// One decode request.
pub struct DecodeRequest<'a> {
    /// Unique per picture (shared by the slices of one picture); must be a
    /// whole number of microseconds. References name pictures by it.
    pub timestamp_ns: u64,
    pub controls: &'a [ExtControl],
    pub bitstream: Bitstream<'a>,
    /// More slices of this picture follow (V4L2_BUF_FLAG_M2M_HOLD_CAPTURE_BUF).
    pub hold_capture: bool,
}

/// A dequeued CAPTURE buffer; it goes back to the driver only when the
/// last `Arc` to it other than the session's is gone.
pub struct CaptureHold {
    buffer: Arc<CaptureBuffer>,
    layout: Arc<CaptureLayout>,
    pub timestamp_ns: u64,
}

impl CaptureHold {
    pub fn buffer(&self) -> &CaptureBuffer {
        &self.buffer
    }
    pub fn id(&self) -> BufferId {
        BufferId {
            generation: self.buffer.generation,
            index: self.buffer.index,
        }
    }
    pub fn layout(&self) -> &CaptureLayout {
        &self.layout
    }
}

impl DmabufSource for CaptureHold {
    fn fd(&self, memory_plane: usize) -> Option<BorrowedFd<'_>> {
        self.buffer.dmabufs().get(memory_plane).map(|fd| fd.as_fd())
    }
}

/// A decoded picture as the driver returned it.
#[derive(Clone)]
pub struct DecodedFrame {
    pub timestamp_ns: u64,
    pub buffer_index: u32,
    pub sequence: u32,
    /// V4L2_BUF_FLAG_ERROR: the picture (or one it references) is corrupt.
    pub error: bool,
    pub hold: Arc<CaptureHold>,
}

impl DecodedFrame {
    /// CPU access to the picture, when the layout is linear.
    pub fn cpu_planes(&self) -> Option<V4l2CpuPlanes> {
        V4l2CpuPlanes::new(self.hold.clone())
    }
}

/// The planes of a CAPTURE buffer read through its mapping. Holding it
/// keeps the buffer away from the driver.
pub struct V4l2CpuPlanes {
    hold: Arc<CaptureHold>,
    /// (memory plane, offset, stride) per colour plane.
    planes: Vec<(usize, usize, usize)>,
}

impl V4l2CpuPlanes {
    fn new(hold: Arc<CaptureHold>) -> Option<Self> {
        let layout = hold.layout.clone();
        let cpu = layout.format.cpu?;
        let planes = layout.cpu_planes()?;
        // Every row the frame will read must lie inside the mapping.
        for (p, &(memory, offset, stride)) in planes.iter().enumerate() {
            let (row_bytes, rows) = cpu.plane_extent(p, layout.coded_width, layout.coded_height);
            let needed = offset + stride * rows.saturating_sub(1) + row_bytes;
            if stride < row_bytes || needed > hold.buffer.plane(memory).len() {
                warn!("CAPTURE plane {p} does not fit its buffer ({needed} bytes needed)");
                return None;
            }
        }
        Some(Self { hold, planes })
    }

    pub fn hold(&self) -> &Arc<CaptureHold> {
        &self.hold
    }
}

impl CpuPlanes for V4l2CpuPlanes {
    fn plane(&self, plane: usize) -> &[u8] {
        let Some(&(memory, offset, _)) = self.planes.get(plane) else {
            return &[];
        };
        self.hold.buffer.plane(memory).get(offset..).unwrap_or(&[])
    }
    fn stride(&self, plane: usize) -> usize {
        self.planes.get(plane).map_or(0, |p| p.2)
    }
}

enum CaptureSlot {
    /// With the driver.
    Queued,
    /// Dequeued and waiting for its holders to go.
    Held(Arc<CaptureHold>),
    /// Dequeued by STREAMOFF, not yet queued again.
    Idle,
}

struct InFlight {
    request: Request,
    output_index: u32,
    timestamp_ns: u64,
    deadline: Instant,
}

pub struct Session {
    video: File,
    output_queue: QueueType,
    capture_queue: QueueType,
    output: Vec<OutputBuffer>,
    free_output: Vec<u32>,
    capture: Vec<Arc<CaptureBuffer>>,
    slots: Vec<CaptureSlot>,
    layout: Arc<CaptureLayout>,
    requests: RequestPool,
    in_flight: VecDeque<InFlight>,
    /// Pictures dequeued while waiting for an OUTPUT buffer in `submit`.
    ready: Vec<DecodedFrame>,
    references: Vec<Arc<CaptureHold>>,
    required_controls: Vec<u32>,
    timeout: Duration,
    /// The last submitted request asked to hold its CAPTURE buffer.
    holding: bool,
    /// CAPTURE buffers in the order they were queued: the driver decodes
    /// into the first.
    capture_fifo: VecDeque<usize>,
    /// Timestamp of the last submitted request.
    last_timestamp: Option<u64>,
    /// Times a held buffer had to be taken back by restarting CAPTURE.
    held_restarts: u32,
    path: PathBuf,
}

fn open_node(path: &Path) -> Result<File, SessionError> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(v4l2r::nix::libc::O_NONBLOCK | v4l2r::nix::libc::O_CLOEXEC)
        .open(path)
        .map_err(|source| {
            if source.raw_os_error() == Some(Errno::EBUSY as i32) {
                SessionError::Busy(path.to_path_buf())
            } else {
                SessionError::Open {
                    path: path.to_path_buf(),
                    source,
                }
            }
        })
}

fn errno_of(e: impl ioctl::IntoErrno) -> Errno {
    Errno::from_raw(e.into_errno())
}

fn timeval_of(ns: u64) -> (i64, i64) {
    (
        (ns / 1_000_000_000) as i64,
        ((ns % 1_000_000_000) / 1000) as i64,
    )
}

fn ns_of(tv: bindings::timeval) -> u64 {
    (tv.tv_sec as u64) * 1_000_000_000 + (tv.tv_usec as u64) * 1000
}

/// S_EXT_CTRLS of `controls` (`request` = None: current values).
fn set_controls(
    video: &File,
    request: Option<&Request>,
    controls: &[ExtControl],
) -> Result<(), SessionError> {
    if controls.is_empty() {
        return Ok(());
    }
    let mut raw: Vec<v4l2_ext_control> = controls.iter().map(ExtControl::raw).collect();
    let which = match request {
        Some(r) => CtrlWhich::Request(r.as_raw_fd()),
        None => CtrlWhich::Current,
    };
    ioctl::s_ext_ctrls(video, which, raw.as_mut_slice()).map_err(|e| {
        let ioctl::ExtControlErrorType::IoctlError(errno) = e.error;
        let count = controls.len() as u32;
        // error_idx == count: the kernel did not say which control (it does
        // so for request controls it cannot find); TRY each one alone.
        let failing_control = match controls.get(e.error_idx as usize) {
            Some(c) => Some(c.id),
            None => controls
                .iter()
                .find(|c| !try_control(video, c))
                .map(|c| c.id),
        };
        SessionError::Controls {
            errno,
            error_idx: e.error_idx,
            count,
            failing_control,
        }
    })
}

/// Whether the driver accepts `control` alone (VIDIOC_TRY_EXT_CTRLS).
fn try_control(video: &File, control: &ExtControl) -> bool {
    let mut raw = [control.raw()];
    ioctl::try_ext_ctrls(video, CtrlWhich::Current, raw.as_mut_slice()).is_ok()
}

impl Session {
    /// Opens the device and sets the session up to the point where
    /// requests can be submitted (both queues streaming).
    pub fn open(config: SessionConfig) -> Result<Self, SessionError> {
        let mut video = open_node(&config.video_node)?;
        let media = open_node(&config.media_node)?;
        let caps: ioctl::Capability = ioctl::querycap(&video)
            .map_err(|e| SessionError::ioctl("VIDIOC_QUERYCAP", e.into()))?;
        let multiplanar = caps
            .device_caps()
            .contains(ioctl::Capabilities::VIDEO_M2M_MPLANE);
        let (output_queue, capture_queue) = queue_types(multiplanar);

        let (layout, output, capture) =
            configure(&mut video, output_queue, capture_queue, &config)?;
        let requests = RequestPool::new(media, output.len());
        let mut session = Session {
            free_output: (0..output.len() as u32).rev().collect(),
            slots: capture.iter().map(|_| CaptureSlot::Idle).collect(),
            capture: capture.into_iter().map(Arc::new).collect(),
            output,
            video,
            output_queue,
            capture_queue,
            layout: Arc::new(layout),
            requests,
            in_flight: VecDeque::new(),
            ready: Vec::new(),
            references: Vec::new(),
            required_controls: config.required_controls,
            timeout: config.request_timeout,
            holding: false,
            capture_fifo: VecDeque::new(),
            last_timestamp: None,
            held_restarts: 0,
            path: config.video_node,
        };
        session.start()?;
        Ok(session)
    }

    /// Queues every idle CAPTURE buffer and starts both queues.
    fn start(&mut self) -> Result<(), SessionError> {
        for index in 0..self.slots.len() {
            if matches!(self.slots[index], CaptureSlot::Idle) {
                self.queue_capture(index)?;
            }
        }
        ioctl::streamon(&self.video, self.output_queue)
            .map_err(|e| SessionError::ioctl("VIDIOC_STREAMON(OUTPUT)", e.into()))?;
        ioctl::streamon(&self.video, self.capture_queue)
            .map_err(|e| SessionError::ioctl("VIDIOC_STREAMON(CAPTURE)", e.into()))?;
        Ok(())
    }

    fn queue_capture(&mut self, index: usize) -> Result<(), SessionError> {
        // A frame, a reference or the compositor still using the buffer
        // would see the driver overwrite it.
        debug_assert!(
            !matches!(&self.slots[index], CaptureSlot::Held(h) if Arc::strong_count(h) > 1),
            "CAPTURE buffer {index} queued while held"
        );
        let planes = self.capture[index].memory_planes();
        let mut buffer =
            ioctl::QBuffer::<v4l2r::memory::MmapHandle>::new(self.capture_queue, index as u32);
        buffer.planes = (0..planes).map(|_| ioctl::QBufPlane::new(0)).collect();
        ioctl::qbuf::<_, ()>(&self.video, buffer)
            .map_err(|e| SessionError::ioctl("VIDIOC_QBUF(CAPTURE)", errno_of(e)))?;
        self.slots[index] = CaptureSlot::Queued;
        self.capture_fifo.push_back(index);
        Ok(())
    }

    pub fn layout(&self) -> &CaptureLayout {
        &self.layout
    }

    pub fn capture_buffer_count(&self) -> usize {
        self.capture.len()
    }

    pub fn output_buffer_count(&self) -> usize {
        self.output.len()
    }

    /// How often `drain` took a held CAPTURE buffer back by restarting the
    /// CAPTURE queue because FLUSH left it held.
    pub fn held_buffer_restarts(&self) -> u32 {
        self.held_restarts
    }

    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// The request fd of the oldest decode in flight: it signals POLLPRI
    /// when that decode completes (for an event loop that polls it).
    pub fn completion_fd(&self) -> Option<BorrowedFd<'_>> {
        self.in_flight.front().map(|f| {
            // SAFETY: the request owns the fd and lives as long as `self` borrows.
            unsafe { BorrowedFd::borrow_raw(f.request.as_raw_fd()) }
        })
    }

    /// The pictures still used as references, by timestamp; their CAPTURE
    /// buffers stay out of the driver's hands until dropped from this list.
    pub fn set_references(&mut self, timestamps_ns: &[u64]) {
        self.references = self
            .slots
            .iter()
            .filter_map(|s| match s {
                CaptureSlot::Held(h) if timestamps_ns.contains(&h.timestamp_ns) => Some(h.clone()),
                _ => None,
            })
            .collect();
        // Also keep references to pictures dequeued but not yet seen by the caller.
        for frame in &self.ready {
            if timestamps_ns.contains(&frame.timestamp_ns)
                && !self.references.iter().any(|h| Arc::ptr_eq(h, &frame.hold))
            {
                self.references.push(frame.hold.clone());
            }
        }
    }

    /// Queues back every CAPTURE buffer nobody holds any more.
    fn recycle(&mut self) -> Result<(), SessionError> {
        for index in 0..self.slots.len() {
            let free = matches!(&self.slots[index], CaptureSlot::Held(h) if Arc::strong_count(h) == 1)
                || matches!(self.slots[index], CaptureSlot::Idle);
            if free {
                self.queue_capture(index)?;
            }
        }
        Ok(())
    }

    fn queued_capture(&self) -> usize {
        self.slots
            .iter()
            .filter(|s| matches!(s, CaptureSlot::Queued))
            .count()
    }

    /// Submits one decode request. Waits (within the request timeout) for
    /// an OUTPUT buffer if all are in flight; pictures completed meanwhile
    /// are returned by the next `poll_completed`.
    pub fn submit(&mut self, job: DecodeRequest<'_>) -> Result<(), SessionError> {
        if job.bitstream.is_empty() {
            return Err(SessionError::EmptyBitstream);
        }
        if job.timestamp_ns % 1000 != 0 {
            return Err(SessionError::TimestampPrecision(job.timestamp_ns));
        }
        if let Some(&missing) = self
            .required_controls
            .iter()
            .find(|id| !job.controls.iter().any(|c| c.id == **id))
        {
            return Err(SessionError::MissingControl(missing));
        }
        let capacity = self.output.first().map_or(0, OutputBuffer::capacity);
        if job.bitstream.len() > capacity {
            return Err(SessionError::BitstreamTooLarge {
                size: job.bitstream.len(),
                capacity,
            });
        }

        // A CAPTURE buffer must be with the driver unless this continues a
        // picture whose buffer is already held for more slices.
        self.recycle()?;
        let continues = self.holding
            && self
                .in_flight
                .back()
                .is_some_and(|f| f.timestamp_ns == job.timestamp_ns);
        // References name pictures by timestamp: a new picture must not
        // reuse one still in flight or held.
        if !continues {
            let in_use = self
                .in_flight
                .iter()
                .any(|f| f.timestamp_ns == job.timestamp_ns)
                || self
                    .ready
                    .iter()
                    .any(|f| f.timestamp_ns == job.timestamp_ns)
                || self.slots.iter().any(
                    |s| matches!(s, CaptureSlot::Held(h) if h.timestamp_ns == job.timestamp_ns),
                );
            if in_use {
                return Err(SessionError::DuplicateTimestamp(job.timestamp_ns));
            }
        }
        if !continues && self.queued_capture() == 0 {
            return Err(SessionError::NoCaptureBuffer {
                count: self.capture.len(),
            });
        }

        if self.free_output.is_empty() {
            let frames = self.collect(self.timeout, true)?;
            self.ready.extend(frames);
        }
        let Some(output_index) = self.free_output.pop() else {
            return Err(SessionError::NoFreeRequest {
                limit: self.output.len(),
            });
        };

        let request = match self.requests.take() {
            Ok(r) => r,
            Err(e) => {
                self.free_output.push(output_index);
                return Err(e);
            }
        };
        if let Err(e) = self.queue_request(&request, output_index, &job) {
            self.free_output.push(output_index);
            self.requests.give_back(request);
            return Err(e);
        }
        self.holding = job.hold_capture;
        self.last_timestamp = Some(job.timestamp_ns);
        self.in_flight.push_back(InFlight {
            request,
            output_index,
            timestamp_ns: job.timestamp_ns,
            deadline: Instant::now() + self.timeout,
        });
        Ok(())
    }

    fn queue_request(
        &mut self,
        request: &Request,
        output_index: u32,
        job: &DecodeRequest<'_>,
    ) -> Result<(), SessionError> {
        set_controls(&self.video, Some(request), job.controls)?;
        let used = self.output[output_index as usize].write(&job.bitstream);
        let (sec, usec) = timeval_of(job.timestamp_ns);
        let mut buffer =
            ioctl::QBuffer::<v4l2r::memory::MmapHandle>::new(self.output_queue, output_index)
                .set_timestamp(sec, usec)
                .set_request(request.as_raw_fd());
        if job.hold_capture {
            buffer.flags |=
                BufferFlags::from_bits_retain(bindings::V4L2_BUF_FLAG_M2M_HOLD_CAPTURE_BUF);
        }
        buffer.planes = vec![ioctl::QBufPlane::new(used)];
        ioctl::qbuf::<_, ()>(&self.video, buffer)
            .map_err(|e| SessionError::ioctl("VIDIOC_QBUF(OUTPUT)", errno_of(e)))?;
        requests::queue(request)
    }

    /// Collects completed decodes, waiting up to `timeout` for the first.
    /// A request older than the request timeout is an error.
    pub fn poll_completed(&mut self, timeout: Duration) -> Result<Vec<DecodedFrame>, SessionError> {
        let mut frames = std::mem::take(&mut self.ready);
        let wait = if frames.is_empty() {
            timeout
        } else {
            Duration::ZERO
        };
        frames.extend(self.collect(wait, false)?);
        Ok(frames)
    }

    /// Completes in-flight requests in order. `until_output_free`: stop as
    /// soon as one OUTPUT buffer is free.
    fn collect(
        &mut self,
        timeout: Duration,
        until_output_free: bool,
    ) -> Result<Vec<DecodedFrame>, SessionError> {
        let start = Instant::now();
        let mut frames = Vec::new();
        let mut completed_any = false;
        while let Some(oldest) = self.in_flight.front() {
            let now = Instant::now();
            let budget = timeout.saturating_sub(now - start);
            let to_deadline = oldest.deadline.saturating_duration_since(now);
            let done = requests::wait_complete(&oldest.request, budget.min(to_deadline))?;
            if !done {
                if Instant::now() >= oldest.deadline {
                    return Err(SessionError::RequestTimeout {
                        timestamp_ns: oldest.timestamp_ns,
                        waited: self.timeout,
                    });
                }
                break;
            }
            let Some(finished) = self.in_flight.pop_front() else {
                break;
            };
            completed_any = true;
            self.dequeue_output(finished.output_index)?;
            self.requests.give_back(finished.request);
            frames.extend(self.dequeue_capture()?);
            if until_output_free {
                break;
            }
            // Later completions are collected without waiting.
            if (Instant::now() - start) >= timeout {
                break;
            }
        }
        // Pictures only appear when a request completes (or after a FLUSH,
        // when nothing is in flight).
        if completed_any || self.in_flight.is_empty() {
            frames.extend(self.dequeue_capture()?);
        }
        Ok(frames)
    }

    fn dequeue_output(&mut self, expected: u32) -> Result<(), SessionError> {
        match ioctl::dqbuf::<V4l2Buffer>(&self.video, self.output_queue) {
            Ok(buffer) => {
                if buffer.index() != expected {
                    warn!("OUTPUT buffer {} done, expected {expected}", buffer.index());
                }
                self.free_output.push(buffer.index());
                Ok(())
            }
            Err(e) => Err(SessionError::ioctl("VIDIOC_DQBUF(OUTPUT)", errno_of(e))),
        }
    }

    fn dequeue_capture(&mut self) -> Result<Vec<DecodedFrame>, SessionError> {
        let mut frames = Vec::new();
        loop {
            let buffer = match ioctl::dqbuf::<V4l2Buffer>(&self.video, self.capture_queue) {
                Ok(b) => b,
                Err(ioctl::IoctlConvertError::IoctlError(ioctl::DqBufIoctlError::NotReady)) => {
                    break
                }
                Err(ioctl::IoctlConvertError::IoctlError(ioctl::DqBufIoctlError::Eos)) => break,
                Err(e) => return Err(SessionError::ioctl("VIDIOC_DQBUF(CAPTURE)", errno_of(e))),
            };
            let index = buffer.index() as usize;
            let Some(capture) = self.capture.get(index) else {
                warn!("driver returned unknown CAPTURE buffer {index}");
                continue;
            };
            self.capture_fifo.retain(|&i| i != index);
            let timestamp_ns = ns_of(buffer.timestamp());
            let hold = Arc::new(CaptureHold {
                buffer: capture.clone(),
                layout: self.layout.clone(),
                timestamp_ns,
            });
            self.slots[index] = CaptureSlot::Held(hold.clone());
            let error = buffer.flags().contains(BufferFlags::ERROR);
            if error {
                warn!(
                    "{}: picture {timestamp_ns} ns decoded with V4L2_BUF_FLAG_ERROR",
                    self.path.display()
                );
            }
            frames.push(DecodedFrame {
                timestamp_ns,
                buffer_index: index as u32,
                sequence: buffer.sequence(),
                error,
                hold,
            });
        }
        Ok(frames)
    }

    /// V4L2_DEC_CMD_FLUSH: releases the CAPTURE buffer held for more
    /// slices (the last request was submitted with `hold_capture`). The
    /// requests in flight are completed first (their pictures are returned
    /// by the next `poll_completed`): a FLUSH issued while the driver runs
    /// the last request would miss the buffer it is about to hold.
    pub fn flush(&mut self) -> Result<(), SessionError> {
        while !self.in_flight.is_empty() {
            let frames = self.collect(self.timeout, false)?;
            self.ready.extend(frames);
        }
        let cmd = bindings::v4l2_decoder_cmd {
            cmd: bindings::V4L2_DEC_CMD_FLUSH,
            ..Default::default()
        };
        ioctl::decoder_cmd::<_, bindings::v4l2_decoder_cmd>(&self.video, cmd)
            .map_err(|e| SessionError::ioctl("VIDIOC_DECODER_CMD(FLUSH)", errno_of(e)))?;
        self.holding = false;
        Ok(())
    }

    /// Completes every request in flight and returns every picture,
    /// including one held for more slices.
    pub fn drain(&mut self) -> Result<Vec<DecodedFrame>, SessionError> {
        let held = self.holding;
        if held {
            self.flush()?;
        }
        let mut frames = std::mem::take(&mut self.ready);
        // After a FLUSH nothing is in flight: any new picture is the flushed one.
        let before = frames.len();
        while !self.in_flight.is_empty() {
            frames.extend(self.collect(self.timeout, false)?);
        }
        frames.extend(self.dequeue_capture()?);
        if held && frames.len() == before {
            // v4l2-mem2mem's FLUSH only releases a held buffer that is the
            // last CAPTURE buffer queued (it looks at the queue's tail, while
            // the held buffer is its head). Otherwise take the picture back by
            // stopping the CAPTURE queue: every slice of it was decoded.
            frames.extend(self.release_held_by_restart()?);
        }
        Ok(frames)
    }

    /// STREAMOFF/STREAMON of CAPTURE alone; the buffer at the head of the
    /// queue (the one the driver held) becomes the last request's picture.
    fn release_held_by_restart(&mut self) -> Result<Vec<DecodedFrame>, SessionError> {
        let Some(timestamp_ns) = self.last_timestamp else {
            return Ok(Vec::new());
        };
        let head = self.capture_fifo.front().copied();
        warn!(
            "{}: FLUSH did not release the held CAPTURE buffer; restarting the CAPTURE queue",
            self.path.display()
        );
        ioctl::streamoff(&self.video, self.capture_queue)
            .map_err(|e| SessionError::ioctl("VIDIOC_STREAMOFF(CAPTURE)", e.into()))?;
        self.held_restarts += 1;
        self.capture_fifo.clear();
        let mut frames = Vec::new();
        for (index, slot) in self.slots.iter_mut().enumerate() {
            if !matches!(slot, CaptureSlot::Queued) {
                continue;
            }
            if Some(index) == head {
                let hold = Arc::new(CaptureHold {
                    buffer: self.capture[index].clone(),
                    layout: self.layout.clone(),
                    timestamp_ns,
                });
                *slot = CaptureSlot::Held(hold.clone());
                frames.push(DecodedFrame {
                    timestamp_ns,
                    buffer_index: index as u32,
                    sequence: 0,
                    error: false,
                    hold,
                });
            } else {
                *slot = CaptureSlot::Idle;
            }
        }
        for index in 0..self.slots.len() {
            if matches!(self.slots[index], CaptureSlot::Idle) {
                self.queue_capture(index)?;
            }
        }
        ioctl::streamon(&self.video, self.capture_queue)
            .map_err(|e| SessionError::ioctl("VIDIOC_STREAMON(CAPTURE)", e.into()))?;
        Ok(frames)
    }

    /// Drops every request and picture in flight (seek or error recovery):
    /// STREAMOFF returns all buffers, then streaming restarts. Frames still
    /// alive keep their buffers until dropped.
    pub fn reset(&mut self) -> Result<(), SessionError> {
        ioctl::streamoff(&self.video, self.output_queue)
            .map_err(|e| SessionError::ioctl("VIDIOC_STREAMOFF(OUTPUT)", e.into()))?;
        ioctl::streamoff(&self.video, self.capture_queue)
            .map_err(|e| SessionError::ioctl("VIDIOC_STREAMOFF(CAPTURE)", e.into()))?;
        for f in self.in_flight.drain(..) {
            self.free_output.push(f.output_index);
            self.requests.discard(f.request);
        }
        self.ready.clear();
        self.references.clear();
        self.holding = false;
        self.capture_fifo.clear();
        for slot in &mut self.slots {
            if matches!(slot, CaptureSlot::Queued) {
                *slot = CaptureSlot::Idle;
            }
        }
        // Buffers whose holders are all gone become idle too.
        for slot in &mut self.slots {
            if matches!(slot, CaptureSlot::Held(h) if Arc::strong_count(h) == 1) {
                *slot = CaptureSlot::Idle;
            }
        }
        self.start()
    }

    /// Frees every buffer (STREAMOFF, REQBUFS(0)) and sets the session up
    /// again for `config` (a new resolution or sequence; the device paths in
    /// it are ignored). Every frame must have been dropped first: their
    /// buffers are about to be freed.
    pub fn reconfigure(&mut self, config: &SessionConfig) -> Result<(), SessionError> {
        self.references.clear();
        self.ready.clear();
        let in_use = self
            .slots
            .iter()
            .filter(|s| matches!(s, CaptureSlot::Held(h) if Arc::strong_count(h) > 1))
            .count();
        if in_use > 0 {
            return Err(SessionError::BuffersInUse { count: in_use });
        }
        ioctl::streamoff(&self.video, self.output_queue)
            .map_err(|e| SessionError::ioctl("VIDIOC_STREAMOFF(OUTPUT)", e.into()))?;
        ioctl::streamoff(&self.video, self.capture_queue)
            .map_err(|e| SessionError::ioctl("VIDIOC_STREAMOFF(CAPTURE)", e.into()))?;
        for f in self.in_flight.drain(..) {
            self.requests.discard(f.request);
        }
        // Unmap and close the dmabufs before REQBUFS(0): vb2 refuses to free
        // buffers that are still mapped or exported.
        self.slots.clear();
        self.capture.clear();
        self.output.clear();
        self.free_output.clear();
        self.capture_fifo.clear();
        self.holding = false;
        self.last_timestamp = None;
        buffers::request_buffers(&self.video, self.output_queue, 0)?;
        buffers::request_buffers(&self.video, self.capture_queue, 0)?;

        let (layout, output, capture) = configure(
            &mut self.video,
            self.output_queue,
            self.capture_queue,
            config,
        )?;
        self.free_output = (0..output.len() as u32).rev().collect();
        self.slots = capture.iter().map(|_| CaptureSlot::Idle).collect();
        self.capture = capture.into_iter().map(Arc::new).collect();
        self.output = output;
        self.layout = Arc::new(layout);
        self.required_controls = config.required_controls.clone();
        self.timeout = config.request_timeout;
        self.requests.set_limit(self.output.len());
        self.start()
    }
}

/// The video node, for an event loop (POLLIN: a CAPTURE buffer is ready)
/// or for diagnostics.
impl std::os::fd::AsFd for Session {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.video.as_fd()
    }
}

impl AsRawFd for Session {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.video.as_raw_fd()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // STREAMOFF so that no queued request outlives the session's buffers.
        let _ = ioctl::streamoff(&self.video, self.output_queue);
        let _ = ioctl::streamoff(&self.video, self.capture_queue);
    }
}

/// OUTPUT format, sequence controls, CAPTURE format, then buffers (the
/// stateless decoder interface's order).
fn configure(
    video: &mut File,
    output_queue: QueueType,
    capture_queue: QueueType,
    config: &SessionConfig,
) -> Result<(CaptureLayout, Vec<OutputBuffer>, Vec<CaptureBuffer>), SessionError> {
    // 1. OUTPUT format: the coded format and size.
    let wanted = Format {
        width: config.width,
        height: config.height,
        pixelformat: config.coded_format.into(),
        plane_fmt: vec![PlaneLayout {
            sizeimage: config.bitstream_buffer_size,
            bytesperline: 0,
        }],
    };
    let got: Format = ioctl::s_fmt(video, (output_queue, &wanted)).map_err(|e| match e {
        ioctl::SFmtError::DeviceBusy => SessionError::Busy(config.video_node.clone()),
        e => SessionError::ioctl("VIDIOC_S_FMT(OUTPUT)", e.into()),
    })?;
    if u32::from(got.pixelformat) != config.coded_format {
        return Err(SessionError::CodedFormat(fourcc_str(config.coded_format)));
    }

    // 2. Sequence-level controls, which decide the CAPTURE formats.
    set_controls(video, None, &config.initial_controls)?;

    // 3. CAPTURE format.
    let layout = choose_capture_format(video, capture_queue, config)?;
    info!(
        "{}: OUTPUT {} {}x{}, CAPTURE {} {}x{} planes {:?}",
        config.video_node.display(),
        fourcc_str(config.coded_format),
        got.width,
        got.height,
        layout.format.name,
        layout.coded_width,
        layout.coded_height,
        layout.planes
    );

    // 4. Buffers, read back from the driver.
    let output = buffers::allocate_output(video, output_queue, config.output_buffers.max(1))?;
    let capture = buffers::allocate_capture(video, capture_queue, config.capture_buffers.max(1))?;
    debug!(
        "buffers: {} OUTPUT, {} CAPTURE",
        output.len(),
        capture.len()
    );
    if capture.len() < config.capture_buffers as usize {
        // Fewer than the DPB plus the frames held downstream: decoding can
        // stall on "no free CAPTURE buffer" (growing with CREATE_BUFS is
        // not done yet).
        warn!(
            granted = capture.len(),
            wanted = config.capture_buffers,
            "the driver granted fewer CAPTURE buffers than needed"
        );
    }
    if output.is_empty() || capture.is_empty() {
        return Err(SessionError::Buffers {
            queue: if output.is_empty() {
                output_queue
            } else {
                capture_queue
            },
            reason: "the driver granted no buffers".into(),
        });
    }
    Ok((layout, output, capture))
}

fn read_capture_layout(
    video: &File,
    queue: QueueType,
) -> Result<Option<CaptureLayout>, SessionError> {
    let format: Format = ioctl::g_fmt(video, queue)
        .map_err(|e| SessionError::ioctl("VIDIOC_G_FMT(CAPTURE)", e.into()))?;
    Ok(
        capture_format(format.pixelformat.into()).map(|f| CaptureLayout {
            format: f,
            coded_width: format.width,
            coded_height: format.height,
            planes: format
                .plane_fmt
                .iter()
                .map(|p| (p.bytesperline, p.sizeimage))
                .collect(),
        }),
    )
}

/// The first plane's bytesperline the driver would give `fourcc` in place
/// of `current`'s format (TRY_FMT changes nothing); 0 if it says nothing.
fn try_bytes_per_line(video: &File, queue: QueueType, current: &Format, fourcc: u32) -> u32 {
    let mut format = current.clone();
    format.pixelformat = fourcc.into();
    ioctl::try_fmt::<_, Format>(video, (queue, &format))
        .ok()
        .and_then(|f| f.plane_fmt.first().map(|p| p.bytesperline))
        .unwrap_or(0)
}

/// Keeps the driver's CAPTURE format when reel reads it and nothing else is
/// preferred; otherwise picks the first offered format by preference.
fn choose_capture_format(
    video: &mut File,
    queue: QueueType,
    config: &SessionConfig,
) -> Result<CaptureLayout, SessionError> {
    let offered: Vec<u32> = ioctl::FormatIterator::new(video, queue)
        .map(|d| d.pixelformat.into())
        .collect();
    let chosen;
    let preference: &[u32] = match &config.capture_chooser {
        Some(chooser) => {
            let current: Option<Format> = ioctl::g_fmt(video, queue).ok();
            let offered: Vec<OfferedCapture> = offered
                .iter()
                .map(|&fourcc| OfferedCapture {
                    fourcc,
                    bytes_per_line: current
                        .as_ref()
                        .map_or(0, |f| try_bytes_per_line(video, queue, f, fourcc)),
                })
                .collect();
            chosen = (chooser.0)(&offered, config.bit_depth);
            &chosen
        }
        None => &config.capture_preference,
    };
    let current = read_capture_layout(video, queue)?;
    if let Some(layout) = &current {
        let preferred_first = preference.iter().find(|p| offered.contains(p));
        let fits = layout.coded_width >= config.width && layout.coded_height >= config.height;
        if fits
            && layout.format.cpu.is_some()
            && preferred_first.is_none_or(|p| *p == layout.format.v4l2)
        {
            return Ok(layout.clone());
        }
    }
    // Linear layouts first, then those the CPU reads by detiling.
    let linear = super::formats::CAPTURE_FORMATS
        .iter()
        .filter(|f| f.cpu.is_some());
    let detiled = super::formats::CAPTURE_FORMATS
        .iter()
        .filter(|f| f.cpu.is_none() && super::detile::detiled_format(f.v4l2).is_some());
    let table_order = linear.chain(detiled).map(|f| f.v4l2);
    let candidate = preference
        .iter()
        .copied()
        .chain(table_order)
        .find(|f| offered.contains(f))
        .ok_or_else(|| {
            SessionError::NoCaptureFormat(
                offered
                    .iter()
                    .map(|f| fourcc_str(*f))
                    .collect::<Vec<_>>()
                    .join(" "),
            )
        })?;
    let mut format: Format = ioctl::g_fmt(video, queue)
        .map_err(|e| SessionError::ioctl("VIDIOC_G_FMT(CAPTURE)", e.into()))?;
    format.pixelformat = candidate.into();
    // Most drivers size CAPTURE from the OUTPUT format; vicodec keeps its
    // default (1280x720) and refuses larger pictures' controls.
    if format.width < config.width || format.height < config.height {
        format.width = format.width.max(config.width);
        format.height = format.height.max(config.height);
        for plane in &mut format.plane_fmt {
            *plane = PlaneLayout {
                sizeimage: 0,
                bytesperline: 0,
            };
        }
    }
    let _: Format = ioctl::s_fmt(video, (queue, &format))
        .map_err(|e| SessionError::ioctl("VIDIOC_S_FMT(CAPTURE)", e.into()))?;
    read_capture_layout(video, queue)?
        .ok_or_else(|| SessionError::NoCaptureFormat(fourcc_str(candidate)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(v4l2: &[u8; 4], planes: Vec<(u32, u32)>) -> CaptureLayout {
        CaptureLayout {
            format: capture_format(crate::v4l2::formats::fourcc(v4l2)).unwrap(),
            coded_width: 320,
            coded_height: 240,
            planes,
        }
    }

    #[test]
    fn cpu_plane_offsets_follow_the_v4l2_layouts() {
        // NV12: CbCr right after 240 rows of luma, same stride.
        let nv12 = layout(b"NV12", vec![(384, 384 * 360)]);
        assert_eq!(
            nv12.cpu_planes(),
            Some(vec![(0, 0, 384), (0, 384 * 240, 384)])
        );
        // NV12M: one buffer per plane.
        let nm12 = layout(b"NM12", vec![(320, 76800), (320, 38400)]);
        assert_eq!(nm12.cpu_planes(), Some(vec![(0, 0, 320), (1, 0, 320)]));
        // YUV420: Cb then Cr, half stride, half height.
        let yu12 = layout(b"YU12", vec![(320, 115200)]);
        assert_eq!(
            yu12.cpu_planes(),
            Some(vec![
                (0, 0, 320),
                (0, 76800, 160),
                (0, 76800 + 160 * 120, 160)
            ])
        );
        // Tiled: not for the CPU path.
        assert_eq!(layout(b"ST12", vec![(320, 115200)]).cpu_planes(), None);
        // A multi-planar format with a plane missing is refused.
        assert_eq!(layout(b"NM12", vec![(320, 76800)]).cpu_planes(), None);
    }

    #[test]
    fn dmabuf_planes_of_tiled_and_column_layouts() {
        let planes = |l: &CaptureLayout| -> Vec<(usize, u32, u32)> {
            l.dmabuf_planes()
                .unwrap()
                .iter()
                .map(|p| (p.memory_plane, p.offset, p.stride))
                .collect()
        };
        // NV12_32L32 (320x240 coded): chroma after 240 rows of 320-byte pitch.
        let st12 = layout(b"ST12", vec![(320, 320 * 240 * 3 / 2)]);
        assert_eq!(planes(&st12), vec![(0, 0, 320), (0, 320 * 240, 320)]);
        // SAND128: bytesperline is the column height (here 240 luma + 120
        // chroma lines); chroma starts after 240 rows of 128 bytes inside
        // each column, not after 240 x bytesperline.
        let sand = layout(b"NC12", vec![(360, 360 * 128 * 3)]);
        assert_eq!(planes(&sand), vec![(0, 0, 360), (0, 128 * 240, 360)]);
    }

    #[test]
    fn timestamps_round_trip_through_timeval() {
        for ns in [0u64, 1000, 33_366_000, 1_000_000_000, 3_600_123_456_000] {
            let (sec, usec) = timeval_of(ns);
            let tv = bindings::timeval {
                tv_sec: sec,
                tv_usec: usec,
            };
            assert_eq!(ns_of(tv), ns);
        }
    }
}
