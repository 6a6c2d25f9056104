//! Audio playback: the file's audio stream decoded on its own thread
//! (`source`, `convert`), queued (`queue`) for the sound output (`output`),
//! whose position is the media clock while it plays.
//!
//! Nothing here can stop the video: a file without audio, a codec
//! libavcodec lacks, damaged packets or no sound server cost the sound
//! only (one warning), never the picture.

pub mod convert;
pub mod output;
pub mod queue;
pub mod source;
pub mod tempo;
pub mod volume;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tracing::{debug, info, warn};

use queue::Queue;
use source::AudioSource;
pub use source::Track;
use tempo::Tempo;

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
}

/// The audio of one file.
pub struct Audio {
    shared: Arc<Shared>,
    commands: Sender<Command>,
    thread: Option<JoinHandle<()>>,
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
            let generation = shared.queue().flush(speed);
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
        })
    }

    /// Plays with the player's clock at media time `media` now (sound due
    /// later waits for its time).
    pub fn play_from(&self, media: Duration, now: Instant) {
        self.shared.queue().play_from(media, now);
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
        let generation = self.shared.queue().flush(speed);
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
        queue.heard(now)
    }
}

impl Drop for Audio {
    fn drop(&mut self) {
        self.set_playing(false);
        // The thread sees the channel close within `IDLE_WAIT` or a packet.
        let (closed, _) = mpsc::channel();
        self.commands = closed;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The audio thread's work for one file.
struct Job {
    path: PathBuf,
    track: Track,
    device: Option<String>,
    shared: Arc<Shared>,
    commands: Receiver<Command>,
}

impl Job {
    fn run(self) {
        let name = self.path.display().to_string();
        let mut source = match AudioSource::open(&self.path, self.track) {
            Ok(Some(source)) => source,
            Ok(None) => {
                debug!("{name}: no audio stream");
                return;
            }
            Err(e) => {
                warn!("{name}: {e}: playing without sound");
                return;
            }
        };
        let (_stream, layout, device) =
            match output::open(self.device.as_deref(), source.rate(), &self.shared) {
                Ok(opened) => opened,
                Err(e) => {
                    if OUTPUT_WARNED.swap(true, Ordering::Relaxed) {
                        debug!("no audio output: {e}");
                    } else {
                        warn!("no audio output, playing without sound: {e}");
                    }
                    return;
                }
            };
        info!(
            %device,
            channels = layout.channels,
            rate = layout.rate,
            kind = ?layout.kind,
            "audio output"
        );
        self.shared
            .queue()
            .configure(usize::from(layout.channels), layout.rate);
        let mut converter = convert::Converter::new(layout.channels, layout.rate);
        let mut generation = self.shared.queue().generation();
        let mut tempo: Option<Tempo> = None;
        let mut stretched = Vec::new();
        // Samples before this media time are dropped (a seek's target).
        let mut drop_before: Option<Duration> = None;
        let mut ended = false;
        let mut samples = Vec::new();
        loop {
            self.report_glitches();
            let command = if ended || self.shared.queue().queued() >= AHEAD {
                match self.commands.recv_timeout(IDLE_WAIT) {
                    Ok(command) => Some(command),
                    Err(RecvTimeoutError::Timeout) => None,
                    Err(RecvTimeoutError::Disconnected) => return,
                }
            } else {
                match self.commands.try_recv() {
                    Ok(command) => Some(command),
                    Err(TryRecvError::Empty) => None,
                    Err(TryRecvError::Disconnected) => return,
                }
            };
            if let Some(Command::Seek {
                target,
                generation: new,
                speed,
            }) = command
            {
                debug!(?target, speed, "audio seek");
                generation = new;
                // A new stretch: the old one holds sound from before.
                tempo = (speed != 1.0)
                    .then(|| Tempo::new(speed, layout.channels, layout.rate))
                    .and_then(|made| {
                        made.map_err(|e| warn!("{name}: no time-stretch ({e}): sound stops"))
                            .ok()
                    });
                if speed != 1.0 && tempo.is_none() {
                    self.shared.queue().end(generation);
                    ended = true;
                    continue;
                }
                drop_before = Some(target);
                ended = false;
                if let Err(e) = source.seek(target) {
                    warn!("{name}: audio seek failed, sound stops: {e}");
                    ended = true;
                }
                continue;
            }
            if ended || self.shared.queue().queued() >= AHEAD {
                continue;
            }
            let mut decoded = match source.decode() {
                Ok(Some(decoded)) => decoded,
                Ok(None) => {
                    debug!("audio: end of stream");
                    if let Some(tempo) = &mut tempo {
                        stretched.clear();
                        if let Ok(Some(out_pts)) = tempo.finish(&mut stretched) {
                            self.shared.queue().push(generation, out_pts, &stretched);
                        }
                    }
                    self.shared.queue().end(generation);
                    ended = true;
                    continue;
                }
                Err(e) => {
                    warn!("{name}: {e}: sound stops");
                    self.shared.queue().end(generation);
                    ended = true;
                    continue;
                }
            };
            samples.clear();
            if let Err(e) = converter.convert(&mut decoded.frame, &mut samples) {
                warn!("{name}: cannot convert audio, sound stops: {e}");
                ended = true;
                continue;
            }
            let mut pts = decoded.pts;
            if let Some(target) = drop_before {
                let skip = trim(pts, target, layout.rate, layout.channels, samples.len());
                if skip >= samples.len() {
                    continue;
                }
                samples.drain(..skip);
                pts = pts.max(target);
                drop_before = None;
            }
            if let Some(tempo) = &mut tempo {
                stretched.clear();
                match tempo.process(pts, &samples, &mut stretched) {
                    Ok(Some(out_pts)) => {
                        self.shared.queue().push(generation, out_pts, &stretched);
                    }
                    Ok(None) => {}
                    Err(e) => {
                        warn!("{name}: time-stretch failed, sound stops: {e}");
                        self.shared.queue().end(generation);
                        ended = true;
                    }
                }
                continue;
            }
            self.shared.queue().push(generation, pts, &samples);
        }
    }

    /// Gaps in the sound, said where they happen: they are the machine
    /// being too busy (or the decoder too slow), not a failure.
    fn report_glitches(&self) {
        let dry = self.shared.queue().take_underruns();
        if dry > 0 {
            info!(
                times = dry,
                "audio: the queue ran dry, the decoding thread fell behind"
            );
        }
        let xruns = self.shared.xruns.swap(0, Ordering::Relaxed);
        if xruns > 0 {
            info!(
                times = xruns,
                "audio output underrun (xrun): a gap in the sound, playback goes on"
            );
        }
    }
}

/// How many interleaved values of a block starting at `pts` lie before
/// `target` (a seek lands on the sample at its target).
fn trim(pts: Duration, target: Duration, rate: u32, channels: u16, values: usize) -> usize {
    let early = target.saturating_sub(pts);
    let frames = (early.as_secs_f64() * f64::from(rate)).round() as usize;
    frames.saturating_mul(usize::from(channels)).min(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trim_drops_whole_frames_before_the_target() {
        let ms = Duration::from_millis;
        assert_eq!(trim(ms(1000), ms(1010), 48_000, 2, 4096), 960);
        assert_eq!(trim(ms(1000), ms(900), 48_000, 2, 4096), 0);
        assert_eq!(trim(ms(1000), ms(2000), 48_000, 2, 4096), 4096);
    }
}
