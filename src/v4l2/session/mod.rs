//! One stateless decoding session on one video node: formats, buffers,
//! the request pool, submission of decode requests and collection of the
//! decoded pictures. Codec-agnostic: the codec layer hands it controls and
//! bitstream per request, and says which decoded pictures it still needs as
//! references.
//!
//! This file is the request path (submit, poll, drain, reset); set-up is in
//! `setup.rs` (configured by `config.rs`), the CAPTURE layout in
//! `layout.rs`, decoded pictures in `capture.rs`, the buffers and the
//! media request pool in `buffers.rs` and `requests.rs`.
//!
//! CAPTURE buffer ownership: a dequeued buffer is wrapped in an
//! `Arc<CaptureHold>`; the session keeps one reference, every
//! `DecodedFrame` (and the frame made from it) one, and the reference list
//! set by the codec one per referenced timestamp. The buffer is queued back
//! to the driver only when the session's reference is the last one.

pub mod buffers;
mod capture;
mod config;
mod device;
mod error;
mod layout;
mod output_growth;
pub mod requests;
mod setup;

use std::collections::VecDeque;
use std::fs::File;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tracing::{debug, warn};
use v4l2r::bindings;
use v4l2r::ioctl::{self, BufferFlags, Request, V4l2Buffer};
use v4l2r::QueueType;

pub use capture::{CaptureHold, DecodedFrame, V4l2CpuPlanes};
pub use config::{
    CaptureChoice, CaptureChooser, CaptureOptions, ChooseCapture, OfferedCapture, SessionConfig,
};
pub use error::SessionError;
pub use layout::CaptureLayout;

use super::codec::Bitstream;
use super::controls::ExtControl;
use super::discovery::queue_types;
use crate::frame::BufferId;
use crate::import_retirement::Retirement;
use buffers::{CaptureBuffer, OutputBuffer};
use device::{errno_of, ns_of, open_node, set_controls, timeval_of};
use requests::RequestPool;
use setup::configure;

/// How long a reallocation waits for the presenter to drop its imports of
/// the old CAPTURE buffers (a compositor round trip, or a repaint on a
/// slow one).
const IMPORT_RETIREMENT_WAIT: Duration = Duration::from_secs(1);

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
    /// CAPTURE buffers the driver has marked done by the time this request
    /// completes: its own picture unless it holds the buffer for more
    /// slices, plus a held one it released by starting a new picture (the
    /// m2m core does so when it schedules the job).
    pictures_done: usize,
    /// The pictures it decodes from: their buffers stay away from the
    /// driver until it completes, even if the codec lets them go meanwhile
    /// (the stateless decoder interface's second condition for reusing a
    /// CAPTURE buffer).
    pins: Vec<Arc<CaptureHold>>,
}

pub struct Session {
    video: File,
    output_queue: QueueType,
    capture_queue: QueueType,
    output: Vec<OutputBuffer>,
    free_output: Vec<u32>,
    /// The size of the OUTPUT buffers new requests use; smaller ones (from
    /// before an access unit outgrew them) are retired as they come back.
    output_capacity: usize,
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
            output_capacity: min_capacity(&output),
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
        buffer.flags = self.capture[index].queue_flags();
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
        if job.bitstream.len() > self.output_capacity {
            self.grow_output(job.bitstream.len())?;
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

        // Retired buffers coming back free nothing: wait for a current one.
        while self.free_output.is_empty() && !self.in_flight.is_empty() {
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
        let releases_held = self.holding && self.last_timestamp != Some(job.timestamp_ns);
        let pictures_done = usize::from(!job.hold_capture) + usize::from(releases_held);
        self.holding = job.hold_capture;
        self.last_timestamp = Some(job.timestamp_ns);
        self.in_flight.push_back(InFlight {
            request,
            output_index,
            timestamp_ns: job.timestamp_ns,
            pictures_done,
            deadline: Instant::now() + self.timeout,
            pins: self.references.clone(),
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
            // Exactly the pictures this completion made: no DQBUF that is
            // known to find the queue empty.
            frames.extend(self.dequeue_capture(Some(finished.pictures_done))?);
            if until_output_free {
                break;
            }
            // Later completions are collected without waiting.
            if (Instant::now() - start) >= timeout {
                break;
            }
        }
        // Pictures only appear when a request completes (each completion
        // above took its pictures: the m2m core marks the CAPTURE buffer
        // done before the request it decoded) or after a FLUSH, when
        // nothing is in flight.
        if !completed_any && self.in_flight.is_empty() {
            frames.extend(self.dequeue_capture(None)?);
        }
        Ok(frames)
    }

    fn dequeue_output(&mut self, expected: u32) -> Result<(), SessionError> {
        match ioctl::dqbuf::<V4l2Buffer>(&self.video, self.output_queue) {
            Ok(buffer) => {
                if buffer.index() != expected {
                    warn!("OUTPUT buffer {} done, expected {expected}", buffer.index());
                }
                self.release_output(buffer.index());
                Ok(())
            }
            Err(e) => Err(SessionError::ioctl("VIDIOC_DQBUF(OUTPUT)", errno_of(e))),
        }
    }

    /// Dequeues up to `limit` done CAPTURE buffers (all of them when
    /// `None`), stopping early when the queue has none.
    fn dequeue_capture(&mut self, limit: Option<usize>) -> Result<Vec<DecodedFrame>, SessionError> {
        let mut frames = Vec::new();
        let mut dequeued = 0;
        while limit.is_none_or(|limit| dequeued < limit) {
            dequeued += 1;
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
                // The decoder says it once per burst of damaged pictures.
                debug!(
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

    /// Sends V4L2_DEC_CMD_FLUSH, which releases the CAPTURE buffer held for
    /// more slices (the last request was submitted with `hold_capture`);
    /// it drops nothing. The requests in flight are completed first (their
    /// pictures are returned by the next `poll_completed`): a FLUSH issued
    /// while the driver runs the last request would miss the buffer it is
    /// about to hold. `drain` calls it, and takes the buffer back another
    /// way when the driver did not release it.
    pub fn release_held_capture(&mut self) -> Result<(), SessionError> {
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
            self.release_held_capture()?;
        }
        let mut frames = std::mem::take(&mut self.ready);
        // After a FLUSH nothing is in flight: any new picture is the flushed one.
        let before = frames.len();
        while !self.in_flight.is_empty() {
            frames.extend(self.collect(self.timeout, false)?);
        }
        frames.extend(self.dequeue_capture(None)?);
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
        for f in std::mem::take(&mut self.in_flight) {
            self.release_output(f.output_index);
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

    /// Frees every buffer no frame holds (STREAMOFF, then REQBUFS(0), or
    /// closing the file when frames hold some) and sets the session up
    /// again for `config` (a new resolution or sequence; the device paths
    /// in it are ignored). A buffer a frame holds stays valid until the
    /// frame goes; the driver never sees it again.
    pub fn reconfigure(&mut self, config: &SessionConfig) -> Result<(), SessionError> {
        self.references.clear();
        self.ready.clear();
        for f in &mut self.in_flight {
            f.pins.clear();
        }
        let held_by_frames: Vec<BufferId> = self
            .slots
            .iter()
            .filter_map(|s| match s {
                CaptureSlot::Held(h) if Arc::strong_count(h) > 1 => Some(h.id()),
                _ => None,
            })
            .collect();
        let in_use = held_by_frames.len();
        ioctl::streamoff(&self.video, self.output_queue)
            .map_err(|e| SessionError::ioctl("VIDIOC_STREAMOFF(OUTPUT)", e.into()))?;
        ioctl::streamoff(&self.video, self.capture_queue)
            .map_err(|e| SessionError::ioctl("VIDIOC_STREAMOFF(CAPTURE)", e.into()))?;
        for f in self.in_flight.drain(..) {
            self.requests.discard(f.request);
        }
        let old_generation = self.capture.iter().map(|b| b.generation).max();
        // Unmap and close the dmabufs before REQBUFS(0): vb2 refuses to free
        // buffers that are still mapped or exported.
        self.slots.clear();
        self.capture.clear();
        self.output.clear();
        self.free_output.clear();
        self.capture_fifo.clear();
        self.holding = false;
        self.last_timestamp = None;
        // The compositor's imports keep the old buffers alive too: they go
        // first (those of frames on screen stay until released).
        if let (Some(retirement), Some(generation)) =
            (&config.capture.import_retirement, old_generation)
        {
            match retirement.retire_through(generation, held_by_frames, IMPORT_RETIREMENT_WAIT) {
                Retirement::Done => {}
                Retirement::TimedOut => warn!(
                    "the presenter did not drop its imports of the old CAPTURE buffers in time: \
                     they may still be allocated beside the new ones"
                ),
                // Allocating now could only take memory the old set's
                // imports still hold.
                Retirement::Closed => return Err(SessionError::PresenterClosed),
            }
        }
        if in_use == 0 {
            buffers::request_buffers(&self.video, self.output_queue, 0)?;
            buffers::request_buffers(&self.video, self.capture_queue, 0)?;
        } else {
            // Frames still hold some buffers, whose exported dmabufs keep
            // vb2 from freeing any buffer of the queue (REQBUFS(0): EBUSY).
            // Closing the file frees every buffer no frame holds, and a
            // held one goes with its last frame. Before the new buffers
            // are allocated: where CAPTURE memory is a small CMA pool, the
            // old and the new set may not fit at once.
            debug!(
                in_use,
                "frames still hold CAPTURE buffers: the node is opened again"
            );
            let fresh = open_node(&self.path)?;
            drop(std::mem::replace(&mut self.video, fresh));
        }

        let (layout, output, capture) = configure(
            &mut self.video,
            self.output_queue,
            self.capture_queue,
            config,
        )?;
        self.free_output = (0..output.len() as u32).rev().collect();
        self.output_capacity = min_capacity(&output);
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

/// The smallest buffer's size: what any OUTPUT buffer of the set can take.
fn min_capacity(output: &[OutputBuffer]) -> usize {
    output.iter().map(OutputBuffer::capacity).min().unwrap_or(0)
}
