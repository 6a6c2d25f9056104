//! Audio playback: the file's audio stream decoded on its own thread
//! (`job`, `source`, `convert`), queued (`queue`) for the sound output
//! (`output`), whose position is the media clock while it plays. With
//! gapless playback the next file's sound is queued after it on the same
//! output (`follow_on`).
//!
//! Nothing here can stop the video: a file without audio, a codec
//! libavcodec lacks, damaged packets or no sound server cost the sound
//! only (one warning), never the picture.

pub mod convert;
pub mod follow_on;
mod job;
pub mod output;
pub mod queue;
pub mod source;
pub mod tempo;
pub mod volume;

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tracing::{debug, warn};

use follow_on::{FollowOn, NextFile};
use job::Job;
use queue::Queue;
pub use source::Track;

/// How much decoded audio the thread keeps ahead of the output.
const AHEAD: Duration = Duration::from_millis(500);
/// How often a thread with a full queue looks for commands.
const IDLE_WAIT: Duration = Duration::from_millis(10);

/// "No audio output" is said once per run, not once per file.
static OUTPUT_WARNED: AtomicBool = AtomicBool::new(false);

/// What the command line asks of audio.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AudioOptions {
    /// None: `--no-audio`.
    pub track: Option<Track>,
    pub device: Option<String>,
}

impl Default for AudioOptions {
    fn default() -> Self {
        Self {
            track: Some(Track::Default),
            device: None,
        }
    }
}

/// What the player, the audio thread and the output callback share.
pub struct Shared {
    queue: Mutex<Queue>,
    /// The player plays (not paused, not prerolling a seek).
    playing: AtomicBool,
    /// `Volume::gain` as f32 bits.
    gain: AtomicU32,
    /// The playback speed as f64 bits.
    speed: AtomicU64,
    /// The output reported an error (the sound server went away).
    failed: AtomicBool,
    /// Underruns the output reported and recovered from, not yet logged.
    xruns: AtomicU32,
    /// The output's stall has been reported.
    stall_warned: AtomicBool,
}

impl Shared {
    fn queue(&self) -> MutexGuard<'_, Queue> {
        // A panic elsewhere cannot leave the queue inconsistent enough to
        // matter more than silence.
        self.queue
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The output callback: `out` is interleaved samples heard `delay`
    /// after `at`.
    fn fill(&self, out: &mut [f32], at: Instant, delay: Duration) {
        let gain = f32::from_bits(self.gain.load(Ordering::Relaxed));
        let playing = self.playing.load(Ordering::Relaxed);
        self.queue().fill(out, gain, playing, at, delay);
    }
}

enum Command {
    /// Restart at media time `target`, queueing samples as `generation`
    /// stretched to `speed`.
    Seek {
        target: Duration,
        generation: u64,
        speed: f64,
    },
    /// Queue the next file's sound after the current one's.
    Append(NextFile),
    /// Drop the next file's sound (its samples queued).
    Cancel { segment: u64 },
    /// The player plays the next file: its sound is now the current one.
    Advance { segment: u64 },
    /// The sound is let go: the thread ends.
    Stop,
}

/// The sound of one file, and with gapless playback of the files that
/// follow it on the same output.
pub struct Audio {
    shared: Arc<Shared>,
    commands: Sender<Command>,
    thread: Option<JoinHandle<()>>,
    /// The queue's segment of the file the player plays.
    segment: u64,
    /// The last segment handed out.
    segments: u64,
}

impl Audio {
    /// Starts the audio of `path` at media time `start` (None: from the
    /// beginning) played at `speed`, silent until `play_from`. None with
    /// `--no-audio`.
    pub fn start(
        path: &Path,
        options: &AudioOptions,
        start: Option<Duration>,
        gain: f32,
        speed: f64,
    ) -> Option<Self> {
        let track = options.track?;
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue::new(2, 48_000)),
            playing: AtomicBool::new(false),
            gain: AtomicU32::new(gain.to_bits()),
            speed: AtomicU64::new(speed.to_bits()),
            failed: AtomicBool::new(false),
            xruns: AtomicU32::new(0),
            stall_warned: AtomicBool::new(false),
        });
        let (commands, command_rx) = mpsc::channel();
        if start.is_some() || speed != 1.0 {
            let generation = shared.queue().flush(speed, 0);
            let _ = commands.send(Command::Seek {
                target: start.unwrap_or(Duration::ZERO),
                generation,
                speed,
            });
        }
        let job = Job {
            path: path.to_owned(),
            track,
            device: options.device.clone(),
            shared: shared.clone(),
            commands: command_rx,
        };
        let thread = std::thread::Builder::new()
            .name("reel-audio".into())
            .spawn(move || job.run());
        let thread = match thread {
            Ok(thread) => Some(thread),
            Err(e) => {
                warn!("cannot start the audio thread, playing without sound: {e}");
                None
            }
        };
        Some(Self {
            shared,
            commands,
            thread,
            segment: 0,
            segments: 0,
        })
    }

    /// Queues the sound of `path` (its `track`) after this file's last
    /// sample, this file's sound lasting to its media time `previous_end`
    /// at least; None when this sound has stopped for good (no output, or
    /// it failed).
    pub fn append(
        &mut self,
        path: &Path,
        track: Track,
        previous_end: Option<Duration>,
    ) -> Option<FollowOn> {
        if !self.flowing() {
            return None;
        }
        self.segments += 1;
        let segment = self.segments;
        let next = NextFile::new(path.to_owned(), track, segment, previous_end);
        self.commands.send(Command::Append(next)).ok()?;
        Some(FollowOn {
            segment,
            shared: self.shared.clone(),
            commands: self.commands.clone(),
            taken: false,
        })
    }

    /// The player plays the file `follow` queued: its sound goes on from
    /// here. False (its samples dropped) when it follows another sound or
    /// this one has stopped for good.
    pub fn take_over(&mut self, mut follow: FollowOn) -> bool {
        if !follow.follows(self) || !self.flowing() {
            return false;
        }
        let segment = follow.segment;
        if self.commands.send(Command::Advance { segment }).is_err() {
            return false;
        }
        follow.taken = true;
        debug!(segment, "audio: the next file's sound goes on");
        self.segment = segment;
        true
    }

    /// The thread runs and the output has not failed.
    fn flowing(&self) -> bool {
        !self.shared.failed.load(Ordering::Relaxed)
            && self.thread.as_ref().is_some_and(|t| !t.is_finished())
    }

    /// Plays with the player's clock at media time `media` now (sound due
    /// later waits for its time).
    pub fn play_from(&self, media: Duration, now: Instant) {
        self.shared.queue().play_from(media, now, self.segment);
        self.set_playing(true);
    }

    /// Plays (true) or outputs silence and holds its position (false).
    pub fn set_playing(&self, playing: bool) {
        debug!(playing, "audio");
        self.shared.playing.store(playing, Ordering::Relaxed);
    }

    /// Drops what was queued and restarts at media time `target`, silent
    /// until `play_from`.
    pub fn seek(&self, target: Duration) {
        self.set_playing(false);
        let speed = f64::from_bits(self.shared.speed.load(Ordering::Relaxed));
        let generation = self.shared.queue().flush(speed, self.segment);
        let _ = self.commands.send(Command::Seek {
            target,
            generation,
            speed,
        });
    }

    /// Plays at `speed` from media time `media` on, heard from `now` (the
    /// sound queued at the old speed is dropped and decoded again).
    pub fn set_speed(&self, speed: f64, media: Duration, now: Instant) {
        let playing = self.shared.playing.load(Ordering::Relaxed);
        self.shared.speed.store(speed.to_bits(), Ordering::Relaxed);
        self.seek(media);
        if playing {
            self.play_from(media, now);
        }
    }

    pub fn set_gain(&self, gain: f32) {
        self.shared.gain.store(gain.to_bits(), Ordering::Relaxed);
    }

    /// How long from now sound started now is heard at the soonest: the
    /// output's latency (None before the output is open).
    pub fn soonest(&self) -> Option<Duration> {
        if self.shared.failed.load(Ordering::Relaxed) {
            return None;
        }
        self.shared.queue().soonest()
    }

    /// The media time being heard now, while sound flows (None before it
    /// starts, when paused, after its end or when the output failed: the
    /// player's own clock then runs on).
    pub fn position(&self, now: Instant) -> Option<Duration> {
        if self.shared.failed.load(Ordering::Relaxed) {
            return None;
        }
        let queue = self.shared.queue();
        if queue.stalled(now) {
            // Said once; should it come back (a machine too busy for a
            // while), the clock follows it again.
            if !self.shared.stall_warned.swap(true, Ordering::Relaxed) {
                warn!(
                    "the sound output stopped (sound server gone?): video goes on by its own clock"
                );
            }
            return None;
        }
        // The file before's sound, still heard, or the next one's,
        // already: the player's clock runs on by itself.
        queue
            .heard(now)
            .and_then(|(segment, media)| (segment == self.segment).then_some(media))
    }
}

impl Drop for Audio {
    fn drop(&mut self) {
        self.set_playing(false);
        // The thread sees it within `IDLE_WAIT` or a packet (the next
        // file's `FollowOn` may hold the channel open).
        let _ = self.commands.send(Command::Stop);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
