//! The decoded samples waiting for the output, and what the output last
//! said about when they are heard: the audio clock.
//!
//! The samples may hold several segments, one per playlist file (gapless
//! playback): the next file's first sample follows the last one's, and the
//! media time heard moves on to the next file's where its first sample is
//! heard.

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

/// Where a sample the output took is heard: from `wall` on, the media
/// time heard is `pts` and runs on at `speed`, in `segment`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Anchor {
    pub wall: Instant,
    pub pts: Duration,
    /// Media seconds a second of output (the playback speed).
    pub speed: f64,
    pub segment: u64,
}

impl Anchor {
    /// The media time heard at `now` (before `wall`, the samples before
    /// this one, of the same segment).
    pub fn heard(&self, now: Instant) -> Duration {
        match now.checked_duration_since(self.wall) {
            Some(after) => self.pts + at_speed(after, self.speed),
            None => self
                .pts
                .saturating_sub(at_speed(self.wall - now, self.speed)),
        }
    }
}

/// Where a segment's samples start in the queue.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Mark {
    /// Interleaved values before it.
    at: usize,
    /// Media time of its first sample.
    pts: Duration,
    segment: u64,
    /// Frames of silence between the segment before and it (the file
    /// before's picture outlasting its sound).
    silence: usize,
    /// The sound before it had all been played when it came: it starts as
    /// a file's sound does, with `play_from`.
    waits: bool,
}

/// Where playback starts: the player's clock at media time `media` at
/// `at`, for the sound of `segment`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Start {
    media: Duration,
    at: Instant,
    segment: u64,
}

/// The longest silence put between two segments: a file whose picture
/// outlasts its sound further has its sound ended long before, and the next
/// segment waits for its start instead.
const SEGMENT_SILENCE_MAX: Duration = Duration::from_secs(3);

/// Interleaved f32 samples in the output's layout, with the media time of
/// the first one.
#[derive(Debug)]
pub struct Queue {
    channels: usize,
    rate: u32,
    samples: VecDeque<f32>,
    /// Media time of `samples[0]`.
    head_pts: Duration,
    /// The segment `samples[0]` belongs to.
    segment: u64,
    /// The segments queued after it.
    marks: VecDeque<Mark>,
    /// Media seconds a second of samples: the playback speed they were
    /// stretched for.
    speed: f64,
    /// Bumped by every seek: samples decoded for an older one are refused.
    generation: u64,
    /// The stream's last sample has been queued.
    ended: bool,
    /// When the output last took samples (None: silence).
    taken_at: Option<Instant>,
    /// Where the samples it took are heard, oldest first.
    anchors: VecDeque<Anchor>,
    /// Where the player's clock was when it started playback, until the
    /// output first takes samples of its segment.
    start: Option<Start>,
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
            segment: 0,
            marks: VecDeque::new(),
            speed: 1.0,
            generation: 0,
            ended: false,
            taken_at: None,
            anchors: VecDeque::new(),
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
        self.marks.clear();
    }

    /// Drops everything for a seek in `segment`, the samples to come
    /// stretched for `speed`; returns the new generation.
    pub fn flush(&mut self, speed: f64, segment: u64) -> u64 {
        self.generation += 1;
        self.speed = speed;
        self.samples.clear();
        self.marks.clear();
        self.segment = segment;
        self.ended = false;
        self.silent();
        self.start = None;
        self.lead_in = 0;
        // What follows a seek is a new start.
        self.sounding = false;
        self.dry = false;
        self.generation
    }

    /// Playback of `segment` starts with the player's clock at media time
    /// `media` at `at`: sound due later is preceded by as much silence.
    /// Sound flowing on from the segment before (gapless playback) goes on.
    pub fn play_from(&mut self, media: Duration, at: Instant, segment: u64) {
        self.start = Some(Start { media, at, segment });
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
        if self.samples.is_empty() && self.marks.is_empty() {
            self.head_pts = pts;
        }
        self.samples.extend(samples);
        true
    }

    /// Appends the first samples of `segment`, starting at media time
    /// `pts`, after those queued; the segment before lasts until its media
    /// time `previous_end` at least (silence up to it). When the sound
    /// before has all been played, the segment waits for its `play_from`.
    /// False if `generation` is stale.
    pub fn push_segment(
        &mut self,
        generation: u64,
        segment: u64,
        pts: Duration,
        previous_end: Option<Duration>,
        samples: &[f32],
    ) -> bool {
        if generation != self.generation {
            return false;
        }
        let gap = previous_end.map_or(Duration::ZERO, |end| end.saturating_sub(self.tail_pts()));
        let gap = at_speed(gap, 1.0 / self.speed);
        self.marks.push_back(Mark {
            at: self.samples.len(),
            pts,
            segment,
            silence: (gap.as_secs_f64() * f64::from(self.rate)) as usize,
            waits: (self.samples.is_empty() && !self.sounding) || gap > SEGMENT_SILENCE_MAX,
        });
        self.samples.extend(samples);
        self.ended = false;
        true
    }

    /// Drops the samples of `segment` and those after it, unless its first
    /// has been taken already.
    pub fn drop_segment(&mut self, segment: u64) {
        if let Some(index) = self.marks.iter().position(|m| m.segment == segment) {
            self.samples.truncate(self.marks[index].at);
            self.marks.truncate(index);
        }
    }

    /// The media time just after the last sample queued (of its segment).
    fn tail_pts(&self) -> Duration {
        let (pts, from) = self
            .marks
            .back()
            .map_or((self.head_pts, 0), |m| (m.pts, m.at));
        pts + self.media_of((self.samples.len() - from) / self.channels)
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
        if playing {
            self.release_waiting();
        }
        if !playing || self.samples.is_empty() || self.waiting() {
            if playing && self.sounding && !self.waiting() {
                self.ran_dry();
            }
            if std::mem::take(&mut self.sounding) {
                self.fade_out(out, gain);
            }
            self.silent();
            return;
        }
        self.take_start(at + delay);
        let frames = out.len() / self.channels;
        let silent = self.lead_in.min(frames);
        let first_pts = self.head_pts.saturating_sub(self.media_of(self.lead_in));
        self.lead_in -= silent;
        self.anchor(at, at + delay, first_pts, self.segment);
        let fade_in = if self.sounding { 0 } else { self.fade_frames() };
        let mut written = silent;
        let mut played = 0;
        while written < frames {
            // Where a segment starts: the silence before it, then it.
            if let Some(mark) = self.marks.front_mut().filter(|m| m.at == 0) {
                if mark.waits {
                    break;
                }
                if mark.silence > 0 {
                    let silence = mark.silence.min(frames - written);
                    mark.silence -= silence;
                    written += silence;
                    self.head_pts += self.media_of(silence);
                    continue;
                }
                let heard = at + delay + self.frames_to_duration(written);
                self.enter_next_segment();
                self.anchor(at, heard, self.head_pts, self.segment);
                continue;
            }
            let until = self.marks.front().map_or(self.samples.len(), |m| m.at);
            let take = ((frames - written) * self.channels).min(until);
            if take == 0 {
                break;
            }
            let from = written * self.channels;
            for (i, (slot, sample)) in out[from..]
                .iter_mut()
                .zip(self.samples.drain(..take))
                .enumerate()
            {
                *slot = sample * gain * ramp(played + i / self.channels, fade_in);
            }
            for mark in &mut self.marks {
                mark.at -= take;
            }
            played += take / self.channels;
            written += take / self.channels;
            self.head_pts += self.media_of(take / self.channels);
        }
        if played > 0 {
            self.sounding = true;
        }
        if written < frames && !self.waiting() {
            self.ran_dry();
        } else {
            self.dry = false;
        }
    }

    /// A segment whose sound had all been played before it came starts
    /// with its `play_from`.
    fn release_waiting(&mut self) {
        let Some(start) = self.start else {
            return;
        };
        if let Some(mark) = self.marks.front_mut() {
            if mark.at == 0 && mark.waits && mark.segment == start.segment {
                mark.waits = false;
                mark.silence = 0;
                self.enter_next_segment();
                // A fresh start: in along a ramp.
                self.sounding = false;
            }
        }
    }

    /// The queue's head is a segment waiting for its start.
    fn waiting(&self) -> bool {
        self.marks.front().is_some_and(|m| m.at == 0 && m.waits)
    }

    /// The next segment's first sample is at the head.
    fn enter_next_segment(&mut self) {
        if let Some(mark) = self.marks.pop_front() {
            self.head_pts = mark.pts;
            self.segment = mark.segment;
        }
    }

    /// The start asked for, if it is this segment's and the sound starts
    /// (rather than flows on from the segment before): silence before sound
    /// due later. A start for a segment still to come is kept for it.
    fn take_start(&mut self, heard_wall: Instant) {
        let Some(start) = self.start else {
            return;
        };
        if start.segment > self.segment {
            return;
        }
        self.start = None;
        if start.segment < self.segment || self.sounding {
            return;
        }
        // By the player's clock, the media time a sample written now is
        // heard at (`start.at` may be ahead: the clock starts with a frame
        // still on its way to the screen).
        let early = match heard_wall.checked_duration_since(start.at) {
            Some(after) => self
                .head_pts
                .saturating_sub(start.media + at_speed(after, self.speed)),
            None => (self.head_pts + at_speed(start.at - heard_wall, self.speed))
                .saturating_sub(start.media),
        };
        // Wall time, as the silence is played.
        let early = at_speed(early, 1.0 / self.speed);
        if early > LEAD_IN_MIN {
            self.lead_in = (early.as_secs_f64() * f64::from(self.rate)) as usize;
        }
    }

    /// Samples taken at `at` are heard from `wall` on as media time `pts`
    /// of `segment`.
    fn anchor(&mut self, at: Instant, wall: Instant, pts: Duration, segment: u64) {
        self.taken_at = Some(at);
        // Those heard before this fill's are no longer asked about.
        while self.anchors.len() > 1 && self.anchors[1].wall <= at {
            self.anchors.pop_front();
        }
        self.anchors.push_back(Anchor {
            wall,
            pts,
            speed: self.speed,
            segment,
        });
    }

    /// Silence: nothing is heard until the output takes samples again.
    fn silent(&mut self) {
        self.taken_at = None;
        self.anchors.clear();
    }

    /// The sound that would have come next, faded to nothing over `FADE`
    /// (or what is left of it): taken from the queue, as played.
    fn fade_out(&mut self, out: &mut [f32], gain: f32) {
        let fade = self.fade_frames();
        let queued = self.marks.front().map_or(self.samples.len(), |m| m.at);
        let frames = fade
            .min(out.len() / self.channels)
            .min(queued / self.channels);
        let take = frames * self.channels;
        for (i, (slot, sample)) in out.iter_mut().zip(self.samples.drain(..take)).enumerate() {
            *slot = sample * gain * (1.0 - ramp(i / self.channels + 1, fade));
        }
        for mark in &mut self.marks {
            mark.at -= take;
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
        self.taken_at
            .is_some_and(|at| now.saturating_duration_since(at) > STALL)
    }

    /// The segment and media time heard now, while samples are flowing.
    pub fn heard(&self, now: Instant) -> Option<(u64, Duration)> {
        if self.stalled(now) {
            return None;
        }
        let anchor = self
            .anchors
            .iter()
            .rev()
            .find(|a| a.wall <= now)
            .or(self.anchors.front())?;
        Some((anchor.segment, anchor.heard(now)))
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
        let mut queue = Queue::new(1, 1000);
        let generation = queue.generation();
        queue.push(generation, Duration::from_secs(10), &[1.0; 2000]);
        let mut out = [0.0; 10];
        queue.fill(&mut out, 1.0, true, t0, Duration::from_millis(40));
        let heard = |queue: &Queue, now| queue.heard(now).map(|(_, pts)| pts);
        assert_eq!(heard(&queue, t0), Some(Duration::from_millis(9_960)));
        assert_eq!(
            heard(&queue, t0 + Duration::from_millis(100)),
            Some(Duration::from_millis(10_060))
        );
        assert_eq!(heard(&queue, t0 + Duration::from_secs(1)), None);
    }

    #[test]
    fn sound_stretched_for_twice_the_speed_counts_twice_the_media_time() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut queue = Queue::new(1, 1000);
        let generation = queue.flush(2.0, 0);
        assert!(queue.push(generation, ms(4000), &[0.5; 1000]));
        let mut out = [0.0; 100];
        queue.fill(&mut out, 1.0, true, t0, ms(40));
        // 100 ms of output stood for 200 ms of media; the 40 ms of latency
        // for 80.
        assert_eq!(queue.heard(t0 + ms(40)).map(|(_, pts)| pts), Some(ms(4000)));
        assert_eq!(
            queue.heard(t0 + ms(140)).map(|(_, pts)| pts),
            Some(ms(4200))
        );
        queue.fill(&mut out, 1.0, true, t0 + ms(100), ms(40));
        assert_eq!(
            queue.heard(t0 + ms(140)).map(|(_, pts)| pts),
            Some(ms(4200))
        );
        // What is queued is counted as it plays out: 800 frames, 800 ms.
        assert_eq!(queue.queued(), ms(800));
    }

    #[test]
    fn fill_counts_media_time_and_applies_gain() {
        let t0 = Instant::now();
        let mut queue = Queue::new(2, 1000);
        let generation = queue.flush(1.0, 0);
        assert!(queue.push(generation, Duration::from_secs(2), &[1.0; 200]));
        assert_eq!(queue.queued(), Duration::from_millis(100));
        let mut out = [9.0; 40];
        queue.fill(&mut out, 0.5, true, t0, Duration::ZERO);
        // Faded in over 5 ms (5 frames, 10 values), then at the gain.
        assert_eq!(&out[..4], &[0.0, 0.0, 0.1, 0.1]);
        assert!(out[10..].iter().all(|&s| s == 0.5));
        // 20 frames at 1 kHz: the next sample is 20 ms later.
        queue.fill(&mut out, 1.0, true, t0, Duration::ZERO);
        assert_eq!(
            queue.heard(t0).map(|(_, pts)| pts),
            Some(Duration::from_millis(2_020))
        );
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
        queue.play_from(Duration::from_secs(5), t0, 0);
        let mut out = [9.0; 60];
        queue.fill(&mut out, 1.0, true, t0, Duration::ZERO);
        assert!(out.iter().all(|&s| s == 0.0));
        assert_eq!(
            queue.heard(t0).map(|(_, pts)| pts),
            Some(Duration::from_secs(5))
        );
        queue.fill(&mut out, 1.0, true, t0, Duration::ZERO);
        assert_eq!(&out[..40], &[0.0; 40]);
        assert_eq!(&out[40..50], &FADED_IN);
        assert_eq!(&out[50..], &[1.0; 10]);
        assert_eq!(
            queue.heard(t0).map(|(_, pts)| pts),
            Some(Duration::from_millis(5_060))
        );

        // Sound due now (or 20 ms on): no gap.
        let generation = queue.flush(1.0, 0);
        queue.push(generation, Duration::from_millis(5_010), &[1.0; 200]);
        queue.play_from(Duration::from_secs(5), t0, 0);
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
        queue.play_from(Duration::from_secs(5), t0 + Duration::from_millis(60), 0);
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
        let new = queue.flush(1.0, 0);
        assert!(!queue.push(old, Duration::ZERO, &[1.0]));
        assert!(queue.push(new, Duration::from_secs(5), &[1.0]));
        queue.end(old);
        assert!(!queue.drained());
        queue.end(new);
        let mut out = [0.0; 1];
        queue.fill(&mut out, 1.0, true, Instant::now(), Duration::ZERO);
        assert!(queue.drained());
    }

    #[test]
    fn the_next_segment_follows_the_last_sample_and_the_clock_moves_to_it() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut queue = Queue::new(1, 1000);
        let generation = queue.generation();
        queue.push(generation, ms(1000), &[1.0; 30]);
        queue.play_from(ms(1000), t0, 0);
        // The next file's sound, from its own media time 0, its picture
        // ending with its sound.
        assert!(queue.push_segment(generation, 1, ms(0), Some(ms(1030)), &[0.5; 30]));
        let mut out = [9.0; 40];
        queue.fill(&mut out, 1.0, true, t0, ms(10));
        assert_eq!(&out[..10], &FADED_IN);
        assert_eq!(&out[10..30], &[1.0; 20]);
        assert_eq!(&out[30..], &[0.5; 10]);
        // Heard from 10 ms on: segment 0 until 40 ms, then segment 1.
        assert_eq!(queue.heard(t0 + ms(25)), Some((0, ms(1015))));
        assert_eq!(queue.heard(t0 + ms(45)), Some((1, ms(5))));
        // A start for segment 1 while its sound flows on: no silence.
        queue.play_from(ms(0), t0 + ms(40), 1);
        queue.fill(&mut out, 1.0, true, t0 + ms(40), ms(10));
        assert_eq!(&out[..20], &[0.5; 20]);
        assert_eq!(queue.heard(t0 + ms(55)), Some((1, ms(15))));
    }

    #[test]
    fn a_picture_outlasting_its_sound_is_waited_for_in_silence() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut queue = Queue::new(1, 1000);
        let generation = queue.generation();
        queue.push(generation, ms(0), &[1.0; 20]);
        // The file's picture ends 10 ms after its sound.
        queue.push_segment(generation, 1, ms(0), Some(ms(30)), &[0.5; 20]);
        let mut out = [9.0; 40];
        queue.fill(&mut out, 1.0, true, t0, ms(0));
        assert_eq!(&out[10..20], &[1.0; 10]);
        assert_eq!(&out[20..30], &[0.0; 10]);
        assert_eq!(&out[30..], &[0.5; 10]);
        assert_eq!(queue.heard(t0 + ms(25)), Some((0, ms(25))));
        assert_eq!(queue.heard(t0 + ms(30)), Some((1, ms(0))));
        assert_eq!(queue.take_underruns(), 0);
    }

    #[test]
    fn a_segment_after_sound_played_out_waits_for_its_start() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut queue = Queue::new(1, 1000);
        let generation = queue.generation();
        queue.push(generation, ms(0), &[1.0; 10]);
        queue.end(generation);
        let mut out = [9.0; 20];
        queue.fill(&mut out, 1.0, true, t0, ms(0));
        queue.fill(&mut out, 1.0, true, t0, ms(0));
        assert_eq!(out, [0.0; 20]);
        queue.push_segment(generation, 1, ms(500), Some(ms(10)), &[0.5; 100]);
        // Not before its file's start.
        queue.fill(&mut out, 1.0, true, t0, ms(0));
        assert_eq!(out, [0.0; 20]);
        assert_eq!(queue.heard(t0), None);
        assert_eq!(queue.take_underruns(), 0);
        // Its start: 30 ms of lead-in, then in along a ramp.
        queue.play_from(ms(470), t0, 1);
        let mut out = [9.0; 40];
        queue.fill(&mut out, 1.0, true, t0, ms(0));
        assert_eq!(&out[..30], &[0.0; 30]);
        assert_eq!(out[30], 0.0);
        assert_eq!(out[35..], [0.5; 5]);
        assert_eq!(queue.heard(t0 + ms(30)), Some((1, ms(500))));
    }

    #[test]
    fn a_segment_let_go_is_dropped_and_a_seek_drops_every_segment() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut queue = Queue::new(1, 1000);
        let generation = queue.generation();
        queue.push(generation, ms(0), &[1.0; 20]);
        queue.push_segment(generation, 1, ms(0), None, &[0.5; 20]);
        queue.drop_segment(1);
        assert_eq!(queue.queued(), ms(20));
        queue.push_segment(generation, 2, ms(0), None, &[0.5; 20]);
        let generation = queue.flush(1.0, 0);
        assert_eq!(queue.queued(), Duration::ZERO);
        queue.push(generation, ms(300), &[1.0; 20]);
        let mut out = [9.0; 20];
        queue.fill(&mut out, 1.0, true, t0, ms(0));
        assert_eq!(queue.heard(t0 + ms(5)), Some((0, ms(305))));
    }
}
