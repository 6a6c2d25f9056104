//! The decode thread: runs a `Pipeline` (or a file's still picture) ahead
//! of presentation and hands frames to the event loop through a bounded
//! queue, so decoding never blocks the Wayland side and a paused player
//! holds only a few frames.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, TryRecvError};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::Context;
use calloop::ping::Ping;
use tracing::{debug, error};

use crate::frame::Frame;
use crate::media::network::SourceLink;
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
    events: Arc<Handoff>,
    newest: NewestQueued,
    wake: WakeOnDemand,
    /// Abandons the network source's reads when the source is dropped.
    cancel: SourceLink,
    thread: Option<JoinHandle<()>>,
}

/// The events on their way from the decode thread to the player: at most
/// [`DECODE_AHEAD`], the decode thread waiting while that many are queued.
/// A waiting decode thread is woken once the player has taken the queue
/// down to [`REFILL_AT`], not at each event taken: it then decodes
/// several frames per wake-up.
struct Handoff {
    state: Mutex<HandoffState>,
    space: Condvar,
}

#[derive(Default)]
struct HandoffState {
    queue: VecDeque<SourceEvent>,
    decoder_waits: bool,
    /// The player is gone: nothing more is taken.
    closed: bool,
}

/// How few queued events wake a decode thread waiting for room. At one,
/// the woken thread first hands over the frame it held (two queued, the
/// player's next besides: three frame times to decode the fourth) and
/// then decodes two more: a wake-up (a context switch) per three frames.
const REFILL_AT: usize = 1;

impl Handoff {
    fn new() -> Self {
        Self {
            state: Mutex::new(HandoffState::default()),
            space: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, HandoffState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues `event`, waiting for room; false once the player is gone.
    fn push(&self, event: SourceEvent) -> bool {
        let mut state = self.lock();
        while state.queue.len() >= DECODE_AHEAD && !state.closed {
            state.decoder_waits = true;
            state = self
                .space
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
        if state.closed {
            return false;
        }
        state.queue.push_back(event);
        true
    }

    fn pop(&self) -> Option<SourceEvent> {
        let mut state = self.lock();
        let event = state.queue.pop_front();
        if state.decoder_waits && state.queue.len() <= REFILL_AT {
            state.decoder_waits = false;
            self.space.notify_one();
        }
        event
    }

    /// The player is gone: drops what is queued and lets a waiting decode
    /// thread go.
    fn close(&self) {
        let mut state = self.lock();
        state.closed = true;
        state.queue.clear();
        self.space.notify_all();
    }
}

/// Wakes the event loop for a new event only when the player asked: when
/// it found the queue empty, or holds a frame a newer one may supersede
/// (the compositor is slow). While it holds a frame for its time, the
/// frames queued behind it need no wake-up (each would cost the loop a
/// turn and the eventfd a write and a read), as it looks at the queue
/// again after showing that frame.
#[derive(Clone)]
struct WakeOnDemand {
    ping: Ping,
    wanted: Arc<AtomicBool>,
}

impl WakeOnDemand {
    /// After queueing an event.
    fn queued(&self) {
        if self.wanted.swap(false, Ordering::SeqCst) {
            self.ping.ping();
        }
    }

    /// The player found the queue empty.
    fn want(&self) {
        self.wanted.store(true, Ordering::SeqCst);
    }
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
        let events = Arc::new(Handoff::new());
        let event_tx = events.clone();
        let newest = NewestQueued::default();
        let queued = newest.clone();
        let wake = WakeOnDemand {
            ping: wake,
            wanted: Arc::new(AtomicBool::new(true)),
        };
        let waker = wake.clone();
        let cancel = match &frames {
            Frames::Decoded(pipeline) => pipeline.canceller(),
            Frames::Still(_) => SourceLink::default(),
        };
        // A network source losing or finding its connection again wakes
        // the player (no frame would: the OSD and IPC say so).
        let reconnect_ping = wake.ping.clone();
        cancel.watch(move || reconnect_ping.ping());
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
                decode_loop(&mut frames, epoch, &request_rx, &event_tx, &queued, &waker);
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
            wake,
            cancel,
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

    /// The next event if one is queued; if none is, the event loop is
    /// woken when one is.
    pub fn try_event(&self) -> Option<SourceEvent> {
        if let Some(event) = self.events.pop() {
            return Some(event);
        }
        self.wake.want();
        // One may have been queued between the look and the wish.
        self.events.pop()
    }

    /// The next event wakes the event loop, even if the player does not
    /// find the queue empty first.
    pub fn want_events(&self) {
        self.wake.want();
    }

    /// The source lost its network connection and is opening it again.
    pub fn reconnecting(&self) -> bool {
        self.cancel.is_reconnecting()
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
        // A network read or reconnection under way gives up at once.
        self.cancel.cancel();
        // Unblocks a thread waiting for queue space; it stops at its next
        // event.
        self.events.close();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The decode thread failed at `epoch`: `message` says what, and `error`
/// what exit status it calls for.
fn failed(epoch: u64, message: String, error: &anyhow::Error) -> SourceEvent {
    SourceEvent::Failed {
        epoch,
        message,
        exit: Exit::of(error),
    }
}

fn decode_loop(
    pipeline: &mut Frames,
    mut epoch: u64,
    requests: &Receiver<Request>,
    events: &Handoff,
    newest: &NewestQueued,
    wake: &WakeOnDemand,
) {
    let send = |event: SourceEvent| -> bool {
        let ok = events.push(event);
        wake.queued();
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
                    if !send(failed(epoch, message, &error)) {
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
                if !send(failed(epoch, causes(&error), &error)) {
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use calloop::ping::make_ping;
    use calloop::EventLoop;

    /// Wake-ups the event loop receives within a dispatch that waits for none.
    fn wakes(event_loop: &mut EventLoop<'static, u32>, count: &mut u32) -> u32 {
        *count = 0;
        event_loop
            .dispatch(Some(Duration::ZERO), count)
            .expect("dispatch");
        *count
    }

    fn event(epoch: u64) -> SourceEvent {
        SourceEvent::EndOfStream {
            epoch,
            errors: None,
        }
    }

    /// Pushes one event from another thread; the flag rises once it is in.
    fn push_from_thread(handoff: &Arc<Handoff>) -> (Arc<AtomicBool>, JoinHandle<bool>) {
        let (handoff, pushed) = (handoff.clone(), Arc::new(AtomicBool::new(false)));
        let flag = pushed.clone();
        let thread = std::thread::spawn(move || {
            let ok = handoff.push(event(99));
            flag.store(true, Ordering::SeqCst);
            ok
        });
        (pushed, thread)
    }

    /// A handoff holding as many events as it takes (epochs 0, 1, ...).
    fn full_handoff() -> Arc<Handoff> {
        let handoff = Arc::new(Handoff::new());
        for epoch in 0..DECODE_AHEAD as u64 {
            assert!(handoff.push(event(epoch)));
        }
        handoff
    }

    fn rises_within(flag: &AtomicBool, limit: Duration) -> bool {
        let deadline = std::time::Instant::now() + limit;
        while std::time::Instant::now() < deadline {
            if flag.load(Ordering::SeqCst) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        false
    }

    #[test]
    fn a_full_handoff_lets_the_decoder_go_on_only_when_down_to_the_refill_mark() {
        let handoff = full_handoff();
        let (pushed, thread) = push_from_thread(&handoff);
        assert!(
            !rises_within(&pushed, Duration::from_millis(50)),
            "pushed into a full queue"
        );
        // Taken down to just above the mark: the decoder still waits.
        while handoff.lock().queue.len() > REFILL_AT + 1 {
            assert!(handoff.pop().is_some());
        }
        assert!(
            !rises_within(&pushed, Duration::from_millis(50)),
            "woken above the mark"
        );
        // At the mark it is woken, and the events come out in order.
        let first = handoff.pop();
        assert!(matches!(first, Some(SourceEvent::EndOfStream { .. })));
        assert!(
            rises_within(&pushed, Duration::from_secs(5)),
            "not woken at the mark"
        );
        assert!(thread.join().expect("pusher"));
        let mut epochs = Vec::new();
        while let Some(SourceEvent::EndOfStream { epoch, .. }) = handoff.pop() {
            epochs.push(epoch);
        }
        let expected: Vec<u64> = (DECODE_AHEAD - REFILL_AT..DECODE_AHEAD)
            .map(|e| e as u64)
            .chain([99])
            .collect();
        assert_eq!(epochs, expected);
    }

    #[test]
    fn closing_the_handoff_frees_a_waiting_decoder() {
        let handoff = full_handoff();
        let (pushed, thread) = push_from_thread(&handoff);
        handoff.close();
        assert!(
            rises_within(&pushed, Duration::from_secs(5)),
            "still waiting"
        );
        assert!(
            !thread.join().expect("pusher"),
            "pushed after the player left"
        );
        assert!(handoff.pop().is_none());
    }

    #[test]
    fn the_loop_is_woken_only_when_the_player_found_the_queue_empty() {
        let mut event_loop: EventLoop<'static, u32> = EventLoop::try_new().expect("event loop");
        let (ping, source) = make_ping().expect("ping");
        event_loop
            .handle()
            .insert_source(source, |_, _, count: &mut u32| *count += 1)
            .expect("insert");
        let wake = WakeOnDemand {
            ping,
            wanted: Arc::new(AtomicBool::new(true)),
        };
        let mut count = 0;
        // The player starts out waiting for the first event.
        wake.queued();
        assert_eq!(wakes(&mut event_loop, &mut count), 1);
        // More events while it holds a frame: no wake-up.
        wake.queued();
        wake.queued();
        assert_eq!(wakes(&mut event_loop, &mut count), 0);
        // It found the queue empty: the next event wakes it, once.
        wake.want();
        wake.queued();
        wake.queued();
        assert_eq!(wakes(&mut event_loop, &mut count), 1);
    }
}
