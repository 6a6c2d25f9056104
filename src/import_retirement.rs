//! Lets a V4L2 decoder free its old CAPTURE buffers before it allocates the
//! new ones of a new sequence. The compositor's imports of the old buffers
//! (one wl_buffer each, kept for reuse) keep their memory alive after the
//! decoder let go of it, so both sets would exist at once for a moment:
//! more than a board's CMA pool may hold. The decoder asks the presenter
//! to drop those imports and waits, boundedly, until it has.

use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::frame::BufferId;

pub struct ImportRetirement {
    generations: Mutex<Retired>,
    changed: Condvar,
    /// Makes the presenter look at `pending` soon, from any thread.
    wake: Box<dyn Fn() + Send + Sync>,
}

#[derive(Default)]
struct Retired {
    /// Imports of allocations up to this generation are to go ...
    asked: u64,
    /// ... but for these buffers', which frames still hold.
    kept: Vec<BufferId>,
    /// The presenter has dropped its imports up to this generation.
    done: u64,
    /// The presenter is going away (the player quits): nothing will show
    /// a new sequence's pictures.
    closed: bool,
}

/// How a wait for the presenter ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retirement {
    /// The imports are gone.
    Done,
    /// The presenter did not drop them within the limit.
    TimedOut,
    /// The presenter is closing: no new buffers are wanted.
    Closed,
}

impl ImportRetirement {
    pub fn new(wake: impl Fn() + Send + Sync + 'static) -> Self {
        Self {
            generations: Mutex::new(Retired::default()),
            changed: Condvar::new(),
            wake: Box::new(wake),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Retired> {
        self.generations
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Decoder side: the buffers of allocation `generation` and older ones
    /// are gone from the decoder, but for `kept` (frames still hold them:
    /// they may be shown yet). Waits, at most `limit`, until the presenter
    /// has dropped its imports of the others, or is closing.
    pub fn retire_through(
        &self,
        generation: u64,
        kept: Vec<BufferId>,
        limit: Duration,
    ) -> Retirement {
        let deadline = Instant::now() + limit;
        {
            let mut state = self.lock();
            if state.closed {
                return Retirement::Closed;
            }
            if state.done >= generation {
                return Retirement::Done;
            }
            state.asked = state.asked.max(generation);
            state.kept = kept;
        }
        (self.wake)();
        let mut state = self.lock();
        while state.done < generation {
            if state.closed {
                return Retirement::Closed;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Retirement::TimedOut;
            }
            state = self
                .changed
                .wait_timeout(state, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        Retirement::Done
    }

    /// Presenter side: it is going away; a decoder waiting, or about to,
    /// learns so at once.
    pub fn close(&self) {
        self.lock().closed = true;
        self.changed.notify_all();
    }

    /// Presenter side: the generation through which imports are to go,
    /// and the buffers whose imports stay, when that is not done yet.
    pub fn pending(&self) -> Option<(u64, Vec<BufferId>)> {
        let state = self.lock();
        (state.asked > state.done).then(|| (state.asked, state.kept.clone()))
    }

    /// Presenter side: imports through `generation` are gone.
    pub fn done(&self, generation: u64) {
        let mut state = self.lock();
        state.done = state.done.max(generation);
        self.changed.notify_all();
    }
}

impl std::fmt::Debug for ImportRetirement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.lock();
        f.debug_struct("ImportRetirement")
            .field("asked", &state.asked)
            .field("done", &state.done)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    #[test]
    fn the_decoder_waits_until_the_presenter_has_let_go() {
        let woken = Arc::new(AtomicUsize::new(0));
        let counter = woken.clone();
        let retirement = Arc::new(ImportRetirement::new(move || {
            counter.fetch_add(1, Ordering::SeqCst);
        }));
        assert_eq!(retirement.pending(), None);
        let presenter = retirement.clone();
        let handle = std::thread::spawn(move || {
            let (generation, kept) = loop {
                match presenter.pending() {
                    Some(asked) => break asked,
                    None => std::thread::yield_now(),
                }
            };
            assert_eq!(kept.len(), 1);
            presenter.done(generation);
        });
        let kept = vec![BufferId {
            generation: 3,
            index: 1,
        }];
        assert_eq!(
            retirement.retire_through(3, kept, Duration::from_secs(10)),
            Retirement::Done
        );
        handle.join().expect("presenter thread");
        assert_eq!(woken.load(Ordering::SeqCst), 1);
        assert_eq!(retirement.pending(), None);
        // Already done: no wake-up, no wait.
        assert_eq!(
            retirement.retire_through(2, Vec::new(), Duration::ZERO),
            Retirement::Done
        );
        assert_eq!(woken.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn without_a_presenter_the_wait_is_bounded() {
        let retirement = ImportRetirement::new(|| {});
        let start = Instant::now();
        assert_eq!(
            retirement.retire_through(1, Vec::new(), Duration::from_millis(30)),
            Retirement::TimedOut
        );
        assert!(start.elapsed() >= Duration::from_millis(30));
        assert_eq!(retirement.pending(), Some((1, Vec::new())));
    }

    #[test]
    fn a_closing_presenter_ends_the_wait_at_once() {
        let retirement = Arc::new(ImportRetirement::new(|| {}));
        let presenter = retirement.clone();
        let start = Instant::now();
        let handle = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            presenter.close();
        });
        assert_eq!(
            retirement.retire_through(1, Vec::new(), Duration::from_secs(10)),
            Retirement::Closed
        );
        assert!(start.elapsed() < Duration::from_secs(5));
        handle.join().expect("presenter thread");
        // And any later wait.
        assert_eq!(
            retirement.retire_through(2, Vec::new(), Duration::from_secs(10)),
            Retirement::Closed
        );
    }
}
