//! The media clock: maps stream time to wall time at the playback speed,
//! and stands still while the player is paused.

use std::time::{Duration, Instant};

use crate::media::at_speed as media_of;

#[derive(Debug, Clone)]
pub struct MediaClock {
    /// Media time at `anchor`.
    media_at_anchor: Duration,
    anchor: Instant,
    running: bool,
    /// Media seconds a wall second (the playback speed).
    rate: f64,
}

/// The wall time `media` takes at `rate`.
fn wall_of(media: Duration, rate: f64) -> Duration {
    media_of(media, 1.0 / rate)
}

impl MediaClock {
    /// A stopped clock reading `media`.
    pub fn new(media: Duration, now: Instant) -> Self {
        Self {
            media_at_anchor: media,
            anchor: now,
            running: false,
            rate: 1.0,
        }
    }

    /// The playback speed: media seconds a wall second.
    pub fn rate(&self) -> f64 {
        self.rate
    }

    /// Runs at `rate` (finite, positive) from `now` on, from where it
    /// stands now.
    pub fn set_rate(&mut self, rate: f64, now: Instant) {
        if rate.is_finite() && rate > 0.0 && rate != self.rate {
            if self.running && now > self.anchor {
                self.media_at_anchor = self.now(now);
                self.anchor = now;
            }
            self.rate = rate;
        }
    }

    pub fn is_running(&self) -> bool {
        self.running
    }

    /// The media time now (a running clock set to start later reads its
    /// start until then).
    pub fn now(&self, now: Instant) -> Duration {
        if self.running {
            self.media_at_anchor + media_of(now.saturating_duration_since(self.anchor), self.rate)
        } else {
            self.media_at_anchor
        }
    }

    /// Sets the clock to `media` without changing whether it runs.
    pub fn set(&mut self, media: Duration, now: Instant) {
        self.media_at_anchor = media;
        self.anchor = now;
    }

    pub fn pause(&mut self, now: Instant) {
        if self.running {
            self.media_at_anchor = self.now(now);
            self.anchor = now;
            self.running = false;
        }
    }

    pub fn resume(&mut self, now: Instant) {
        if !self.running {
            self.anchor = now;
            self.running = true;
        }
    }

    /// The instant media time `pts` is (or was) reached, if the clock runs.
    pub fn instant_of(&self, pts: Duration) -> Option<Instant> {
        if !self.running {
            return None;
        }
        match pts.checked_sub(self.media_at_anchor) {
            Some(ahead) => self.anchor.checked_add(wall_of(ahead, self.rate)),
            None => self
                .anchor
                .checked_sub(wall_of(self.media_at_anchor - pts, self.rate)),
        }
    }

    /// The wall-clock instant at which media time `pts` is reached (now if
    /// it has been), if the clock runs.
    pub fn deadline(&self, pts: Duration, now: Instant) -> Option<Instant> {
        if !self.running {
            return None;
        }
        Some(match pts.checked_sub(self.media_at_anchor) {
            Some(ahead) => (self.anchor + wall_of(ahead, self.rate)).max(now),
            None => now,
        })
    }
}

/// How far the pictures shown were from the sound heard (|A-V|).
#[derive(Debug, Default, Clone, Copy)]
pub struct AvOffset {
    count: u64,
    total: Duration,
    max: Duration,
}

impl AvOffset {
    /// A frame of media time `pts` shown while `heard` was heard.
    pub fn add(&mut self, pts: Duration, heard: Duration) {
        let offset = pts.abs_diff(heard);
        self.count += 1;
        self.total += offset;
        self.max = self.max.max(offset);
    }

    pub fn max(&self) -> Duration {
        self.max
    }

    pub fn mean(&self) -> Option<Duration> {
        u32::try_from(self.count)
            .ok()
            .filter(|&n| n > 0)
            .map(|n| self.total / n)
    }
}

/// `av_offset_mean_ms=... av_offset_max_ms=...` (`none` without sound).
impl std::fmt::Display for AvOffset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.mean() {
            Some(mean) => write!(
                f,
                "av_offset_mean_ms={:.1} av_offset_max_ms={:.1}",
                mean.as_secs_f64() * 1e3,
                self.max.as_secs_f64() * 1e3
            ),
            None => f.write_str("av_offset_mean_ms=none av_offset_max_ms=none"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn av_offset_is_mean_and_max_of_the_distance() {
        let mut offset = AvOffset::default();
        assert_eq!(
            offset.to_string(),
            "av_offset_mean_ms=none av_offset_max_ms=none"
        );
        let ms = Duration::from_millis;
        offset.add(ms(1000), ms(990));
        offset.add(ms(2000), ms(2030));
        assert_eq!(offset.mean(), Some(ms(20)));
        assert_eq!(
            offset.to_string(),
            "av_offset_mean_ms=20.0 av_offset_max_ms=30.0"
        );
    }

    #[test]
    fn paused_clock_stands_still_and_resumes_where_it_stopped() {
        let t0 = Instant::now();
        let mut clock = MediaClock::new(Duration::from_secs(5), t0);
        assert_eq!(
            clock.now(t0 + Duration::from_secs(3)),
            Duration::from_secs(5)
        );
        assert_eq!(clock.deadline(Duration::from_secs(6), t0), None);

        clock.resume(t0 + Duration::from_secs(1));
        assert_eq!(
            clock.now(t0 + Duration::from_secs(3)),
            Duration::from_secs(7)
        );

        clock.pause(t0 + Duration::from_secs(4));
        assert_eq!(
            clock.now(t0 + Duration::from_secs(100)),
            Duration::from_secs(8)
        );

        clock.resume(t0 + Duration::from_secs(10));
        assert_eq!(
            clock.now(t0 + Duration::from_millis(10_500)),
            Duration::from_millis(8_500)
        );
    }

    #[test]
    fn deadline_of_a_late_frame_is_now() {
        let t0 = Instant::now();
        let mut clock = MediaClock::new(Duration::ZERO, t0);
        clock.resume(t0);
        let now = t0 + Duration::from_secs(2);
        assert_eq!(clock.deadline(Duration::from_secs(1), now), Some(now));
        assert_eq!(
            clock.deadline(Duration::from_secs(3), now),
            Some(now + Duration::from_secs(1))
        );
    }

    #[test]
    fn a_clock_set_to_start_later_counts_deadlines_from_its_start() {
        let t0 = Instant::now();
        let mut clock = MediaClock::new(Duration::ZERO, t0);
        clock.resume(t0);
        // Playback of 9 s starts 80 ms from now (the sound's latency).
        let start = t0 + Duration::from_millis(80);
        clock.set(Duration::from_secs(9), start);
        assert_eq!(
            clock.now(t0 + Duration::from_millis(30)),
            Duration::from_secs(9)
        );
        assert_eq!(
            clock.deadline(Duration::from_millis(9_040), t0),
            Some(start + Duration::from_millis(40))
        );
        assert_eq!(clock.deadline(Duration::from_secs(9), t0), Some(start));
        assert_eq!(clock.deadline(Duration::from_secs(8), t0), Some(t0));
    }

    #[test]
    fn at_twice_the_speed_media_time_runs_twice_as_fast() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut clock = MediaClock::new(ms(1000), t0);
        clock.resume(t0);
        clock.set_rate(2.0, t0 + ms(100));
        // 100 ms at 1x, then 2x.
        assert_eq!(clock.now(t0 + ms(300)), ms(1500));
        assert_eq!(clock.deadline(ms(1700), t0 + ms(300)), Some(t0 + ms(400)));
        assert_eq!(clock.instant_of(ms(1300)), Some(t0 + ms(200)));
        clock.pause(t0 + ms(400));
        clock.set_rate(0.5, t0 + ms(500));
        clock.resume(t0 + ms(600));
        assert_eq!(clock.now(t0 + ms(800)), ms(1800));
        // Nonsense rates are ignored.
        clock.set_rate(0.0, t0 + ms(800));
        clock.set_rate(f64::NAN, t0 + ms(800));
        assert_eq!(clock.rate(), 0.5);
    }

    #[test]
    fn set_keeps_the_running_state() {
        let t0 = Instant::now();
        let mut clock = MediaClock::new(Duration::ZERO, t0);
        clock.resume(t0);
        clock.set(Duration::from_secs(30), t0 + Duration::from_secs(1));
        assert!(clock.is_running());
        assert_eq!(
            clock.now(t0 + Duration::from_secs(2)),
            Duration::from_secs(31)
        );
    }
}
