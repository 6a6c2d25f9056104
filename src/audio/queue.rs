//! The decoded samples waiting for the output, and what the output last
//! said about when they are heard: the audio clock.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crate::media::at_speed;

/// An output that has not asked for samples for this long has stalled (the
/// sound server went away): its clock is no longer trusted.
const STALL: Duration = Duration::from_millis(250);
/// Sound due later than this after playback starts is preceded by silence
/// (a stream starting after the picture); less is not worth a gap.
const LEAD_IN_MIN: Duration = Duration::from_millis(20);
/// Sound stops (pause) and starts (play, resume, after an underrun) along
/// a ramp this long: a cut mid-wave is a click.
const FADE: Duration = Duration::from_millis(5);

/// When the output took samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timing {
    /// When the output asked for them.
    pub at: Instant,
    /// Media time of the first sample it took.
    pub pts: Duration,
    /// How long after `at` that sample is heard (the output's latency).
    pub delay: Duration,
    /// Media seconds a second of output (the playback speed).
    pub speed: f64,
}

impl Timing {
    /// The media time heard at `now`; None once the output stalled.
    pub fn heard(&self, now: Instant) -> Option<Duration> {
        let since = now.saturating_duration_since(self.at);
        if since > STALL {
            return None;
        }
        // Before `at + delay` the output still plays earlier samples.
        Some(
            (self.pts + at_speed(since, self.speed))
                .saturating_sub(at_speed(self.delay, self.speed)),
        )
    }
}

/// Interleaved f32 samples in the output's layout, with the media time of
/// the first one.
#[derive(Debug)]
pub struct Queue {
    channels: usize,
    rate: u32,
    samples: VecDeque<f32>,
    /// Media time of `samples[0]`.
    head_pts: Duration,
    /// Media seconds a second of samples: the playback speed they were
    /// stretched for.
    speed: f64,
    /// Bumped by every seek: samples decoded for an older one are refused.
    generation: u64,
    /// The stream's last sample has been queued.
    ended: bool,
    timing: Option<Timing>,
    /// Where the player's clock was when it started playback: (media time,
    /// instant), until the output first takes samples.
    start: Option<(Duration, Instant)>,
    /// Frames of silence to play before `samples[0]`.
    lead_in: usize,
    /// How long after it is asked for the output's next sample is heard at
    /// the soonest (its latency and one request), once it asked.
    soonest: Option<Duration>,
    /// The last fill played sound: the next silent one fades it out, and
    /// sound after silence fades in.
    sounding: bool,
    /// Times the queue ran out of samples mid-sound, the stream not ended
    /// (the decoding thread fell behind), since last taken.
    underruns: u32,
    /// It ran out and has not filled a request whole since.
    dry: bool,
}

impl Queue {
    pub fn new(channels: usize, rate: u32) -> Self {
        Self {
            channels: channels.max(1),
            rate: rate.max(1),
            samples: VecDeque::new(),
            head_pts: Duration::ZERO,
            speed: 1.0,
            generation: 0,
            ended: false,
            timing: None,
            start: None,
            lead_in: 0,
            soonest: None,
            sounding: false,
            underruns: 0,
            dry: false,
        }
    }

    /// The output's layout, once it is open (drops what was queued).
    pub fn configure(&mut self, channels: usize, rate: u32) {
        self.channels = channels.max(1);
        self.rate = rate.max(1);
        self.samples.clear();
    }

    /// Drops everything for a seek, the samples to come stretched for
    /// `speed`; returns the new generation.
    pub fn flush(&mut self, speed: f64) -> u64 {
        self.generation += 1;
        self.speed = speed;
        self.samples.clear();
        self.ended = false;
        self.timing = None;
        self.start = None;
        self.lead_in = 0;
        // What follows a seek is a new start.
        self.sounding = false;
        self.dry = false;
        self.generation
    }

    /// Playback starts with the player's clock at media time `media` at
    /// `at`: sound due later is preceded by as much silence.
    pub fn play_from(&mut self, media: Duration, at: Instant) {
        self.start = Some((media, at));
    }

    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Seconds of audio queued.
    pub fn queued(&self) -> Duration {
        self.frames_to_duration(self.samples.len() / self.channels)
    }

    /// Appends samples starting at media time `pts` (used when the queue is
    /// empty; otherwise they follow on). False if `generation` is stale.
    pub fn push(&mut self, generation: u64, pts: Duration, samples: &[f32]) -> bool {
        if generation != self.generation {
            return false;
        }
        if self.samples.is_empty() {
            self.head_pts = pts;
        }
        self.samples.extend(samples);
        true
    }

    pub fn end(&mut self, generation: u64) {
        if generation == self.generation {
            self.ended = true;
        }
    }

    /// Fills `out` (interleaved) with queued samples times `gain` (after
    /// any lead-in silence), silence for the rest, and records when they are
    /// heard. With `playing` false it is silence and the queue stays as it
    /// is, but for the few ms faded out when the sound stops.
    pub fn fill(
        &mut self,
        out: &mut [f32],
        gain: f32,
        playing: bool,
        at: Instant,
        delay: Duration,
    ) {
        out.fill(0.0);
        // The output asks again when about as much has played out.
        self.soonest = Some(delay + self.frames_to_duration(out.len() / self.channels));
        if !playing || self.samples.is_empty() {
            if playing && self.sounding {
                self.ran_dry();
            }
            if std::mem::take(&mut self.sounding) {
                self.fade_out(out, gain);
            }
            self.timing = None;
            return;
        }
        if let Some((media, since)) = self.start.take() {
            // By the player's clock, the media time a sample written now is
            // heard at (`since` may be ahead: the clock starts with a frame
            // still on its way to the screen).
            let heard_wall = at + delay;
            let early = match heard_wall.checked_duration_since(since) {
                Some(after) => self
                    .head_pts
                    .saturating_sub(media + at_speed(after, self.speed)),
                None => {
                    (self.head_pts + at_speed(since - heard_wall, self.speed)).saturating_sub(media)
                }
            };
            // Wall time, as the silence is played.
            let early = at_speed(early, 1.0 / self.speed);
            if early > LEAD_IN_MIN {
                self.lead_in = (early.as_secs_f64() * f64::from(self.rate)) as usize;
            }
        }
        let frames = out.len() / self.channels;
        let silent = self.lead_in.min(frames);
        let first_pts = self.head_pts.saturating_sub(self.media_of(self.lead_in));
        self.lead_in -= silent;
        let take = ((frames - silent) * self.channels).min(self.samples.len());
        let from = silent * self.channels;
        let fade_in = if self.sounding { 0 } else { self.fade_frames() };
        for (i, (slot, sample)) in out[from..]
            .iter_mut()
            .zip(self.samples.drain(..take))
            .enumerate()
        {
            *slot = sample * gain * ramp(i / self.channels, fade_in);
        }
        if take > 0 {
            self.sounding = true;
        }
        if from + take < out.len() {
            self.ran_dry();
        } else {
            self.dry = false;
        }
        self.head_pts += self.media_of(take / self.channels);
        self.timing = Some(Timing {
            at,
            pts: first_pts,
            delay,
            speed: self.speed,
        });
    }

    /// The sound that would have come next, faded to nothing over `FADE`
    /// (or what is left of it): taken from the queue, as played.
    fn fade_out(&mut self, out: &mut [f32], gain: f32) {
        let fade = self.fade_frames();
        let frames = fade
            .min(out.len() / self.channels)
            .min(self.samples.len() / self.channels);
        let take = frames * self.channels;
        for (i, (slot, sample)) in out.iter_mut().zip(self.samples.drain(..take)).enumerate() {
            *slot = sample * gain * (1.0 - ramp(i / self.channels + 1, fade));
        }
        self.head_pts += self.media_of(frames);
    }

    fn fade_frames(&self) -> usize {
        (FADE.as_secs_f64() * f64::from(self.rate)).ceil() as usize
    }

    /// How long from now sound queued now is heard at the soonest (None
    /// before the output first asked for samples).
    pub fn soonest(&self) -> Option<Duration> {
        self.soonest
    }

    /// The output took samples, then stopped asking for more while
    /// playing (the sound server went away).
    pub fn stalled(&self, now: Instant) -> bool {
        self.timing
            .is_some_and(|t| now.saturating_duration_since(t.at) > STALL)
    }

    /// The media time heard now, while samples are flowing.
    pub fn heard(&self, now: Instant) -> Option<Duration> {
        self.timing.and_then(|timing| timing.heard(now))
    }

    fn ran_dry(&mut self) {
        if !self.ended && !std::mem::replace(&mut self.dry, true) {
            self.underruns += 1;
        }
    }

    /// How often the queue ran dry mid-sound since the last call.
    pub fn take_underruns(&mut self) -> u32 {
        std::mem::take(&mut self.underruns)
    }

    /// Everything queued has been played and nothing more will come.
    pub fn drained(&self) -> bool {
        self.ended && self.samples.is_empty()
    }

    /// The media time `frames` frames of output stand for.
    fn media_of(&self, frames: usize) -> Duration {
        at_speed(self.frames_to_duration(frames), self.speed)
    }

    fn frames_to_duration(&self, frames: usize) -> Duration {
        Duration::from_nanos((frames as u128 * 1_000_000_000 / u128::from(self.rate)) as u64)
    }
}

/// Gain `frame` frames into a ramp of `length` frames up from silence.
fn ramp(frame: usize, length: usize) -> f32 {
    if frame >= length {
        1.0
    } else {
        frame as f32 / length as f32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1.0s faded in over 5 ms at 1 kHz.
    const FADED_IN: [f32; 10] = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0, 1.0, 1.0, 1.0, 1.0];

    #[test]
    fn heard_position_subtracts_the_latency() {
        let t0 = Instant::now();
        let timing = Timing {
            at: t0,
            pts: Duration::from_secs(10),
            delay: Duration::from_millis(40),
            speed: 1.0,
        };
        assert_eq!(timing.heard(t0), Some(Duration::from_millis(9_960)));
        assert_eq!(
            timing.heard(t0 + Duration::from_millis(100)),
            Some(Duration::from_millis(10_060))
        );
        assert_eq!(timing.heard(t0 + Duration::from_secs(1)), None);
    }

    #[test]
    fn sound_stretched_for_twice_the_speed_counts_twice_the_media_time() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut queue = Queue::new(1, 1000);
        let generation = queue.flush(2.0);
        assert!(queue.push(generation, ms(4000), &[0.5; 1000]));
        let mut out = [0.0; 100];
        queue.fill(&mut out, 1.0, true, t0, ms(40));
        // 100 ms of output stood for 200 ms of media; the 40 ms of latency
        // for 80.
        assert_eq!(queue.heard(t0 + ms(40)), Some(ms(4000)));
        assert_eq!(queue.heard(t0 + ms(140)), Some(ms(4200)));
        queue.fill(&mut out, 1.0, true, t0 + ms(100), ms(40));
        assert_eq!(queue.heard(t0 + ms(140)), Some(ms(4200)));
        // What is queued is counted as it plays out: 800 frames, 800 ms.
        assert_eq!(queue.queued(), ms(800));
    }

    #[test]
    fn fill_counts_media_time_and_applies_gain() {
        let t0 = Instant::now();
        let mut queue = Queue::new(2, 1000);
        let generation = queue.flush(1.0);
        assert!(queue.push(generation, Duration::from_secs(2), &[1.0; 200]));
        assert_eq!(queue.queued(), Duration::from_millis(100));
        let mut out = [9.0; 40];
        queue.fill(&mut out, 0.5, true, t0, Duration::ZERO);
        // Faded in over 5 ms (5 frames, 10 values), then at the gain.
        assert_eq!(&out[..4], &[0.0, 0.0, 0.1, 0.1]);
        assert!(out[10..].iter().all(|&s| s == 0.5));
        // 20 frames at 1 kHz: the next sample is 20 ms later.
        queue.fill(&mut out, 1.0, true, t0, Duration::ZERO);
        assert_eq!(queue.heard(t0), Some(Duration::from_millis(2_020)));
    }

    #[test]
    fn paused_and_underrun_output_silence_without_a_clock() {
        let t0 = Instant::now();
        let mut queue = Queue::new(1, 1000);
        let generation = queue.generation();
        queue.push(generation, Duration::ZERO, &[1.0; 10]);
        let mut out = [9.0; 16];
        queue.fill(&mut out, 1.0, false, t0, Duration::ZERO);
        assert!(out.iter().all(|&s| s == 0.0));
        assert_eq!(queue.heard(t0), None);
        assert_eq!(queue.queued(), Duration::from_millis(10));
        queue.fill(&mut out, 1.0, true, t0, Duration::ZERO);
        assert_eq!(&out[..10], &FADED_IN);
        assert_eq!(&out[10..], &[0.0; 6]);
        assert_eq!(queue.take_underruns(), 1);
        queue.fill(&mut out, 1.0, true, t0, Duration::ZERO);
        assert_eq!(queue.heard(t0), None);
        // Counted once per run dry, not per silent fill.
        assert_eq!(queue.take_underruns(), 0);
        // The stream's end is not an underrun.
        queue.push(generation, Duration::ZERO, &[1.0; 10]);
        queue.end(generation);
        queue.fill(&mut out, 1.0, true, t0, Duration::ZERO);
        queue.fill(&mut out, 1.0, true, t0, Duration::ZERO);
        assert_eq!(queue.take_underruns(), 0);
    }

    #[test]
    fn sound_due_after_the_start_is_preceded_by_silence() {
        let t0 = Instant::now();
        let mut queue = Queue::new(1, 1000);
        let generation = queue.generation();
        // The stream's sound starts at 5.1 s; playback starts at 5 s.
        queue.push(generation, Duration::from_millis(5_100), &[1.0; 200]);
        queue.play_from(Duration::from_secs(5), t0);
        let mut out = [9.0; 60];
        queue.fill(&mut out, 1.0, true, t0, Duration::ZERO);
        assert!(out.iter().all(|&s| s == 0.0));
        assert_eq!(queue.heard(t0), Some(Duration::from_secs(5)));
        queue.fill(&mut out, 1.0, true, t0, Duration::ZERO);
        assert_eq!(&out[..40], &[0.0; 40]);
        assert_eq!(&out[40..50], &FADED_IN);
        assert_eq!(&out[50..], &[1.0; 10]);
        assert_eq!(queue.heard(t0), Some(Duration::from_millis(5_060)));

        // Sound due now (or 20 ms on): no gap.
        let generation = queue.flush(1.0);
        queue.push(generation, Duration::from_millis(5_010), &[1.0; 200]);
        queue.play_from(Duration::from_secs(5), t0);
        queue.fill(&mut out, 1.0, true, t0, Duration::ZERO);
        assert_eq!(&out[..10], &FADED_IN);
        assert_eq!(&out[10..], &[1.0; 50]);
    }

    #[test]
    fn a_start_still_ahead_is_waited_for_in_silence() {
        let t0 = Instant::now();
        let mut queue = Queue::new(1, 1000);
        let generation = queue.generation();
        queue.push(generation, Duration::from_secs(5), &[1.0; 200]);
        // The frame at 5 s reaches the screen 60 ms from now; what is
        // written now is heard in 10 ms: 50 ms of silence first.
        queue.play_from(Duration::from_secs(5), t0 + Duration::from_millis(60));
        let mut out = [9.0; 80];
        queue.fill(&mut out, 1.0, true, t0, Duration::from_millis(10));
        assert_eq!(&out[..50], &[0.0; 50]);
        assert_eq!(&out[50..60], &FADED_IN);
        assert_eq!(&out[60..], &[1.0; 20]);
    }

    #[test]
    fn sound_stops_and_starts_along_a_ramp_not_a_cut() {
        let t0 = Instant::now();
        let mut queue = Queue::new(1, 1000);
        let generation = queue.generation();
        queue.push(generation, Duration::ZERO, &[1.0; 100]);
        let mut out = [9.0; 20];
        queue.fill(&mut out, 1.0, true, t0, Duration::ZERO);
        assert_eq!(&out[..10], &FADED_IN);
        // Paused: what came next fades out over 5 ms, played, then silence.
        queue.fill(&mut out, 1.0, false, t0, Duration::ZERO);
        for (got, want) in out[..5].iter().zip([0.8, 0.6, 0.4, 0.2, 0.0]) {
            assert!((got - want).abs() < 1e-6, "{:?}", &out[..5]);
        }
        assert_eq!(&out[5..], &[0.0; 15]);
        assert_eq!(queue.queued(), Duration::from_millis(75));
        queue.fill(&mut out, 1.0, false, t0, Duration::ZERO);
        assert_eq!(out, [0.0; 20]);
        // Resumed: in again.
        queue.fill(&mut out, 1.0, true, t0, Duration::ZERO);
        assert_eq!(&out[..10], &FADED_IN);
    }

    #[test]
    fn a_seek_refuses_samples_decoded_before_it() {
        let mut queue = Queue::new(1, 1000);
        let old = queue.generation();
        let new = queue.flush(1.0);
        assert!(!queue.push(old, Duration::ZERO, &[1.0]));
        assert!(queue.push(new, Duration::from_secs(5), &[1.0]));
        queue.end(old);
        assert!(!queue.drained());
        queue.end(new);
        let mut out = [0.0; 1];
        queue.fill(&mut out, 1.0, true, Instant::now(), Duration::ZERO);
        assert!(queue.drained());
    }
}
