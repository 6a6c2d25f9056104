//! The decode thread: runs a `Pipeline` (or a file's still picture) ahead
//! of presentation and hands frames to the event loop through a bounded
//! queue, so decoding never blocks the Wayland side and a paused player
//! holds only a few frames.

use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TryRecvError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::Context;
use calloop::ping::Ping;
use tracing::{debug, error};

use crate::frame::Frame;
use crate::message::causes;

use super::pipeline::Pipeline;
use super::still::StillPicture;
use crate::exit::Exit;

use super::frame_decoder::DECODE_AHEAD;

pub enum Request {
    Seek {
        position: Duration,
        epoch: u64,
        /// Reopen the decoder first (a new CAPTURE format and buffers).
        reopen_decoder: bool,
    },
    Stop,
}

pub enum SourceEvent {
    Frame(Frame),
    /// Every frame of `epoch` has been delivered.
    EndOfStream {
        epoch: u64,
        /// The errors the stream went on after, summarised.
        errors: Option<String>,
    },
    /// The pipeline cannot go on (e.g. a seek failed).
    Failed {
        epoch: u64,
        message: String,
        /// The status reel ends with if this ends it.
        exit: Exit,
    },
}

/// Where the decode thread takes frames from.
pub enum Frames {
    /// The file's video, decoded.
    Decoded(Box<Pipeline>),
    /// A file with sound and no picture: its cover art or black, over its
    /// length.
    Still(StillPicture),
}

impl Frames {
    fn set_epoch(&mut self, epoch: u64) {
        match self {
            Self::Decoded(pipeline) => pipeline.set_epoch(epoch),
            Self::Still(still) => still.set_epoch(epoch),
        }
    }

    fn seek(&mut self, position: Duration, epoch: u64, reopen_decoder: bool) -> anyhow::Result<()> {
        match self {
            Self::Decoded(pipeline) => {
                if reopen_decoder {
                    pipeline
                        .reopen_decoder()
                        .context("cannot reopen the decoder")?;
                }
                pipeline.seek(position, epoch)
            }
            Self::Still(still) => {
                still.seek(position, epoch);
                Ok(())
            }
        }
    }

    fn next_frame(&mut self) -> anyhow::Result<Option<Frame>> {
        match self {
            Self::Decoded(pipeline) => pipeline.next_frame(),
            Self::Still(still) => Ok(still.next_frame()),
        }
    }

    fn error_summary(&self) -> Option<String> {
        match self {
            Self::Decoded(pipeline) => pipeline.error_summary(),
            Self::Still(_) => None,
        }
    }
}

pub struct Source {
    requests: mpsc::Sender<Request>,
    events: Receiver<SourceEvent>,
    newest: NewestQueued,
    thread: Option<JoinHandle<()>>,
}

/// The epoch and pts of the newest frame the decode thread has queued. It
/// lets the player tell a late frame that a later, also due, frame
/// already follows (drop it: the display is the slow part) from a late
/// frame with nothing behind it yet (show it: the decoder is).
#[derive(Clone, Default)]
struct NewestQueued(Arc<Mutex<Option<(u64, Duration)>>>);

impl NewestQueued {
    fn set(&self, epoch: u64, pts: Duration) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some((epoch, pts));
    }

    fn of_epoch(&self, epoch: u64) -> Option<Duration> {
        match *self.0.lock().unwrap_or_else(PoisonError::into_inner) {
            Some((queued_epoch, pts)) if queued_epoch == epoch => Some(pts),
            _ => None,
        }
    }
}

impl Source {
    /// Starts taking frames from `frames` from `start` (None: from the
    /// beginning), pinging `wake` whenever an event is queued.
    pub fn spawn(mut frames: Frames, start: Option<Duration>, epoch: u64, wake: Ping) -> Self {
        frames.set_epoch(epoch);
        let (requests, request_rx) = mpsc::channel();
        let (event_tx, events) = mpsc::sync_channel(DECODE_AHEAD);
        let newest = NewestQueued::default();
        let queued = newest.clone();
        if let Some(position) = start {
            let _ = requests.send(Request::Seek {
                position,
                epoch,
                reopen_decoder: false,
            });
        }
        let thread = std::thread::Builder::new()
            .name("reel-decode".into())
            .spawn(move || {
                decode_loop(&mut frames, epoch, &request_rx, &event_tx, &queued, &wake);
            });
        let thread = match thread {
            Ok(handle) => Some(handle),
            Err(error) => {
                error!("cannot start the decode thread: {error}");
                None
            }
        };
        Self {
            requests,
            events,
            newest,
            thread,
        }
    }

    /// Asks the thread to stop without waiting for it, for an exit that
    /// must not wait for the picture being decoded (the compositor gone):
    /// the thread ends with the process, and the kernel releases the
    /// decoder's buffers then.
    pub fn abandon(mut self) {
        let _ = self.requests.send(Request::Stop);
        self.thread = None;
    }

    pub fn request(&self, request: Request) {
        // A closed channel means the thread ended; `try_event` reports why.
        let _ = self.requests.send(request);
    }

    pub fn try_event(&self) -> Option<SourceEvent> {
        self.events.try_recv().ok()
    }

    /// The pts of the newest frame of `epoch` handed over so far (taken by
    /// the player or still queued).
    pub fn newest_frame(&self, epoch: u64) -> Option<Duration> {
        self.newest.of_epoch(epoch)
    }
}

impl Drop for Source {
    fn drop(&mut self) {
        let _ = self.requests.send(Request::Stop);
        // Unblock a thread waiting for queue space.
        while self.events.try_recv().is_ok() {}
        if let Some(thread) = self.thread.take() {
            while !thread.is_finished() {
                while self.events.try_recv().is_ok() {}
                std::thread::sleep(Duration::from_millis(1));
            }
            let _ = thread.join();
        }
    }
}

fn decode_loop(
    pipeline: &mut Frames,
    mut epoch: u64,
    requests: &Receiver<Request>,
    events: &SyncSender<SourceEvent>,
    newest: &NewestQueued,
    wake: &Ping,
) {
    let send = |event: SourceEvent| -> bool {
        let ok = events.send(event).is_ok();
        wake.ping();
        ok
    };
    let mut ended = false;
    loop {
        // Requests first; once the stream ended, wait for one.
        let request = if ended {
            match requests.recv_timeout(Duration::from_millis(500)) {
                Ok(request) => Some(request),
                Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => return,
            }
        } else {
            match requests.try_recv() {
                Ok(request) => Some(request),
                Err(TryRecvError::Empty) => None,
                Err(TryRecvError::Disconnected) => return,
            }
        };
        match request {
            Some(Request::Stop) => return,
            Some(Request::Seek {
                position,
                epoch: new_epoch,
                reopen_decoder,
            }) => {
                epoch = new_epoch;
                ended = false;
                if let Err(error) = pipeline.seek(position, epoch, reopen_decoder) {
                    let message = format!("seek to {position:?} failed: {}", causes(&error));
                    let exit = Exit::of(&error);
                    if !send(SourceEvent::Failed {
                        epoch,
                        message,
                        exit,
                    }) {
                        return;
                    }
                    ended = true;
                }
                continue;
            }
            None => {}
        }
        match pipeline.next_frame() {
            Ok(Some(frame)) => {
                let (frame_epoch, pts) = (frame.epoch, frame.pts);
                if !send(SourceEvent::Frame(frame)) {
                    return;
                }
                newest.set(frame_epoch, pts);
            }
            Ok(None) => {
                debug!(epoch, "end of stream");
                ended = true;
                if !send(SourceEvent::EndOfStream {
                    epoch,
                    errors: pipeline.error_summary(),
                }) {
                    return;
                }
            }
            Err(error) => {
                ended = true;
                let message = causes(&error);
                let exit = Exit::of(&error);
                if !send(SourceEvent::Failed {
                    epoch,
                    message,
                    exit,
                }) {
                    return;
                }
            }
        }
    }
}
