//! The audio thread: a file's audio decoded, converted to the output's
//! layout and stretched to the playback speed into the queue, ahead of the
//! output; seeks; and, with gapless playback, the next playlist file's
//! audio queued after the current one's last sample.

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, RecvTimeoutError, TryRecvError};
use std::sync::Arc;
use std::time::Duration;

use tracing::{debug, info, warn};

use super::convert::Converter;
use super::follow_on::NextFile;
use super::output::{self, Layout};
use super::source::{AudioSource, Decoded, Track};
use super::tempo::Tempo;
use super::{Command, Shared, AHEAD, IDLE_WAIT, OUTPUT_WARNED};

/// The audio thread's work, from the file it starts with.
pub(super) struct Job {
    pub(super) path: PathBuf,
    pub(super) track: Track,
    pub(super) device: Option<String>,
    pub(super) shared: Arc<Shared>,
    pub(super) commands: Receiver<Command>,
}

impl Job {
    pub(super) fn run(self) {
        let name = self.path.display().to_string();
        let source = match AudioSource::open(&self.path, self.track) {
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
        let mut decoding = Decoding {
            shared: &self.shared,
            layout,
            converter: Converter::new(layout.channels, layout.rate),
            name,
            source,
            current_done: false,
            next: None,
            on_next: false,
            segment_start: None,
            generation: self.shared.queue().generation(),
            speed: 1.0,
            tempo: None,
            drop_before: None,
            converted_end: Duration::ZERO,
            ended: false,
            samples: Vec::new(),
            stretched: Vec::new(),
        };
        loop {
            self.report_glitches();
            let idle = decoding.ended || self.shared.queue().queued() >= AHEAD;
            let command = if idle {
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
            match command {
                Some(Command::Stop) => return,
                Some(command) => decoding.command(command),
                None if idle => {}
                None => decoding.step(),
            }
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

/// Where the thread stands in the current file and the next.
struct Decoding<'a> {
    shared: &'a Shared,
    layout: Layout,
    converter: Converter,
    /// The current file's name, for messages.
    name: String,
    source: AudioSource,
    /// The current file has been decoded to its end (or its sound
    /// stopped).
    current_done: bool,
    /// The file due next (gapless playback).
    next: Option<NextFile>,
    /// Decoding `next`, after the current file's end.
    on_next: bool,
    /// The next samples queued start a segment: its number and the media
    /// time the segment before lasts to.
    segment_start: Option<(u64, Option<Duration>)>,
    generation: u64,
    speed: f64,
    tempo: Option<Tempo>,
    /// Samples before this media time are dropped (a seek's target).
    drop_before: Option<Duration>,
    /// The media time after the last sample converted.
    converted_end: Duration,
    /// Nothing more to decode until a command.
    ended: bool,
    samples: Vec<f32>,
    stretched: Vec<f32>,
}

impl Decoding<'_> {
    fn command(&mut self, command: Command) {
        match command {
            Command::Seek {
                target,
                generation,
                speed,
            } => self.seek(target, generation, speed),
            Command::Append(next) => {
                debug!(segment = next.segment, file = %next.name(), "audio: the next file follows");
                if let Some(old) = self.next.take() {
                    self.shared.queue().drop_segment(old.segment);
                }
                self.on_next = false;
                self.segment_start = None;
                self.next = Some(next);
                // At the current file's end: the next one starts at once.
                if self.current_done {
                    self.ended = false;
                }
            }
            Command::Cancel { segment } => {
                self.shared.queue().drop_segment(segment);
                if self.next.as_ref().is_some_and(|n| n.segment == segment) {
                    debug!(segment, "audio: the next file let go");
                    self.next = None;
                    self.on_next = false;
                    self.segment_start = None;
                    if self.current_done {
                        self.finish();
                    }
                }
            }
            Command::Advance { segment } => self.advance(segment),
            Command::Stop => {}
        }
    }

    /// Restarts at media time `target` of the current file.
    fn seek(&mut self, target: Duration, generation: u64, speed: f64) {
        debug!(?target, speed, "audio seek");
        self.generation = generation;
        self.speed = speed;
        // What was decoded of the next file was dropped with the rest.
        if let Some(next) = &mut self.next {
            next.rewind();
        }
        self.on_next = false;
        self.segment_start = None;
        self.current_done = false;
        self.ended = false;
        if !self.restretch() {
            return;
        }
        self.drop_before = Some(target);
        if let Err(e) = self.source.seek(target) {
            warn!("{}: audio seek failed, sound stops: {e}", self.name);
            self.current_done = true;
            self.ended = true;
        }
    }

    /// The player plays the next file: its sound is the current one's.
    fn advance(&mut self, segment: u64) {
        let Some(next) = self.next.take_if(|n| n.segment == segment) else {
            return;
        };
        debug!(segment, "audio: the next file is the current one");
        self.name = next.name();
        if self.on_next {
            // Already decoding it, after the file before's end.
            self.on_next = false;
            if let Some(source) = next.into_opened() {
                self.source = source;
            }
            self.current_done = self.ended;
            return;
        }
        // The file before's sound is cut where it was decoded to; this
        // one's follows what is queued.
        match next.into_opened() {
            Some(source) => {
                self.source = source;
                self.current_done = false;
                self.ended = false;
                self.drop_before = None;
                self.segment_start = Some((segment, None));
                self.restretch();
            }
            None => {
                self.current_done = true;
                self.finish();
            }
        }
    }

    /// Decodes and queues one frame (or goes on to the next file).
    fn step(&mut self) {
        if self.current_done && !self.on_next {
            self.start_next();
            return;
        }
        let decoded = if self.on_next {
            match self.next.as_mut().and_then(NextFile::source) {
                Some(source) => source.decode(),
                None => {
                    self.finish();
                    return;
                }
            }
        } else {
            self.source.decode()
        };
        match decoded {
            Ok(Some(decoded)) => self.queue_frame(decoded),
            Ok(None) => {
                debug!("audio: end of stream");
                self.queue_resampler_tail();
                if let Some(tempo) = &mut self.tempo {
                    let mut stretched = std::mem::take(&mut self.stretched);
                    stretched.clear();
                    if let Ok(Some(out_pts)) = tempo.finish(&mut stretched) {
                        self.push(out_pts, &stretched);
                    }
                    self.stretched = stretched;
                }
                self.file_done();
            }
            Err(e) => {
                let name = match (&self.next, self.on_next) {
                    (Some(next), true) => next.name(),
                    _ => self.name.clone(),
                };
                warn!("{name}: {e}: sound stops");
                self.file_done();
            }
        }
    }

    /// The file being decoded has nothing more: the next one follows, if
    /// any.
    fn file_done(&mut self) {
        if self.on_next || self.next.is_none() {
            self.finish();
        } else {
            self.current_done = true;
        }
    }

    /// The current file decoded to its end: the next one's audio follows
    /// (a new stretch, from its first sample).
    fn start_next(&mut self) {
        let Some(next) = &mut self.next else {
            self.finish();
            return;
        };
        if next.source().is_none() {
            self.next = None;
            self.finish();
            return;
        }
        self.on_next = true;
        self.segment_start = Some((next.segment, next.previous_end));
        self.drop_before = None;
        self.restretch();
    }

    /// A new time-stretch for the speed (none at 1x): the old one holds
    /// sound from before. False, the sound ended, if there is none.
    fn restretch(&mut self) -> bool {
        let speed = self.speed;
        self.tempo = (speed != 1.0)
            .then(|| Tempo::new(speed, self.layout.channels, self.layout.rate))
            .and_then(|made| {
                made.map_err(|e| warn!("{}: no time-stretch ({e}): sound stops", self.name))
                    .ok()
            });
        if speed != 1.0 && self.tempo.is_none() {
            self.finish();
            return false;
        }
        true
    }

    fn queue_frame(&mut self, mut decoded: Decoded) {
        let mut samples = std::mem::take(&mut self.samples);
        samples.clear();
        if let Err(e) = self.converter.convert(&mut decoded.frame, &mut samples) {
            warn!("{}: cannot convert audio, sound stops: {e}", self.name);
            self.samples = samples;
            self.finish();
            return;
        }
        self.queue_converted(decoded.pts, samples);
    }

    /// At a file's end: the samples the resampler still holds, which the
    /// next file's do not flush out.
    fn queue_resampler_tail(&mut self) {
        let mut samples = std::mem::take(&mut self.samples);
        samples.clear();
        if let Err(e) = self.converter.finish(&mut samples) {
            debug!("audio: the resampler's last samples lost: {e}");
        }
        self.queue_converted(self.converted_end, samples);
    }

    /// Queues converted samples starting at media time `pts` (stretched
    /// for the speed).
    fn queue_converted(&mut self, pts: Duration, mut samples: Vec<f32>) {
        let frames = samples.len() / usize::from(self.layout.channels);
        self.converted_end =
            pts + Duration::from_secs_f64(frames as f64 / f64::from(self.layout.rate));
        let mut pts = pts;
        if let Some(target) = self.drop_before {
            let skip = trim(
                pts,
                target,
                self.layout.rate,
                self.layout.channels,
                samples.len(),
            );
            if skip >= samples.len() {
                self.samples = samples;
                return;
            }
            samples.drain(..skip);
            pts = pts.max(target);
            self.drop_before = None;
        }
        if let Some(tempo) = &mut self.tempo {
            let mut stretched = std::mem::take(&mut self.stretched);
            stretched.clear();
            match tempo.process(pts, &samples, &mut stretched) {
                Ok(Some(out_pts)) => self.push(out_pts, &stretched),
                Ok(None) => {}
                Err(e) => {
                    warn!("{}: time-stretch failed, sound stops: {e}", self.name);
                    self.finish();
                }
            }
            self.stretched = stretched;
        } else {
            self.push(pts, &samples);
        }
        self.samples = samples;
    }

    /// Queues samples from media time `pts`, starting a segment if due.
    fn push(&mut self, pts: Duration, samples: &[f32]) {
        if samples.is_empty() {
            return;
        }
        let mut queue = self.shared.queue();
        match self.segment_start.take() {
            Some((segment, previous_end)) => {
                queue.push_segment(self.generation, segment, pts, previous_end, samples)
            }
            None => queue.push(self.generation, pts, samples),
        };
    }

    /// Nothing more to decode: the queue plays out.
    fn finish(&mut self) {
        self.shared.queue().end(self.generation);
        self.ended = true;
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
