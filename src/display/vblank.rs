//! When a commit made now reaches the screen, learned from the compositor's
//! presentation feedback: the output's vblank grid (a presentation time and
//! the refresh period), and how long before a vblank a commit can still make
//! it (the compositor's repaint deadline, found from which commits did).
//!
//! The player aims each frame at the vblank nearest its time with it. Not
//! every compositor keeps to a grid: one whose output idles between frames
//! (weston's headless backend, or any at 25 fps on a 60 Hz output) starts
//! a repaint when a commit arrives. Where the grid did not foretell recent
//! presentations, the aim is the commit plus the usual delay seen.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// Feedback older than this says little about the grid now (the window was
/// hidden or nothing played): no prediction.
const STALE: Duration = Duration::from_secs(1);
/// A presentation within this of the grid's vblank was foretold by it.
const ON_GRID: Duration = Duration::from_millis(1);
/// Of the last 16 presentations, how many the grid must have foretold.
const GRID_TRUSTED: u32 = 12;
/// Commit-to-screen delays remembered.
const LATENCIES: usize = 15;

/// Where a commit made now is aimed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Aim {
    /// When it is shown.
    pub vblank: Instant,
    /// How long before its time a frame may still go there: half a period
    /// on a grid (that vblank is the nearest), none without one.
    pub slack: Duration,
    /// The last moment a commit is still shown at `vblank`; later ones are
    /// shown later.
    pub commit_by: Instant,
}

#[derive(Debug, Default, Clone)]
pub struct VblankPredictor {
    /// Whether the grid foretold each of the last 16 presentations (bit 0:
    /// the last).
    grid_hits: u16,
    /// The last commit-to-screen delays.
    latencies: VecDeque<Duration>,
    /// Their median, kept here: the player asks for an aim several times
    /// per frame, feedback comes once.
    usual_latency: Option<Duration>,
    /// The last presentation time seen and the refresh period then.
    grid: Option<(Instant, Duration)>,
    /// The largest lead (commit to the next vblank) that missed that
    /// vblank, and the smallest that made it: the compositor's deadline
    /// lies between.
    missed_max: Option<Duration>,
    made_min: Option<Duration>,
}

impl VblankPredictor {
    /// A commit made at `committed` was shown at `shown`, on an output
    /// refreshing every `refresh` (zero: unknown, no grid).
    pub fn observe(&mut self, committed: Instant, shown: Instant, refresh: Duration) {
        if refresh.is_zero() {
            *self = Self::default();
            return;
        }
        let foretold = self.predict(committed).is_some_and(|vblank| {
            let (early, late) = (
                vblank.saturating_duration_since(shown),
                shown.saturating_duration_since(vblank),
            );
            early.max(late) <= ON_GRID
        });
        self.grid_hits = (self.grid_hits << 1) | u16::from(foretold);
        if let Some(latency) = shown.checked_duration_since(committed) {
            if self.latencies.len() == LATENCIES {
                self.latencies.pop_front();
            }
            self.latencies.push_back(latency);
            let mut sorted: Vec<Duration> = self.latencies.iter().copied().collect();
            sorted.sort_unstable();
            self.usual_latency = sorted.get(sorted.len() / 2).copied();
        }
        if self
            .grid
            .is_some_and(|(_, old)| old.abs_diff(refresh) > old / 100)
        {
            // Another mode or output: what was learned no longer holds.
            self.missed_max = None;
            self.made_min = None;
        }
        self.grid = Some((shown, refresh));
        let Some(since) = shown.checked_duration_since(committed) else {
            return;
        };
        if since < refresh {
            let lead = since;
            self.made_min = Some(self.made_min.map_or(lead, |m| m.min(lead)));
            if self.missed_max.is_some_and(|m| m >= lead) {
                self.missed_max = None; // the deadline moved
            }
        } else if since < 2 * refresh {
            let lead = since - refresh;
            self.missed_max = Some(self.missed_max.map_or(lead, |m| m.max(lead)));
            if self.made_min.is_some_and(|m| m <= lead) {
                self.made_min = None;
            }
        }
        // Later still: the compositor was busy, which says nothing of its
        // deadline.
    }

    /// The refresh period, once feedback gave it.
    pub fn refresh(&self) -> Option<Duration> {
        self.grid.map(|(_, refresh)| refresh)
    }

    /// Where a commit made at `now` is aimed; None without recent feedback.
    pub fn aim(&self, now: Instant) -> Option<Aim> {
        let refresh = self.refresh()?;
        if self.grid_hits.count_ones() >= GRID_TRUSTED {
            let vblank = self.predict(now)?;
            return Some(Aim {
                vblank,
                slack: refresh / 2,
                commit_by: vblank.checked_sub(self.deadline()).unwrap_or(vblank),
            });
        }
        let (shown, _) = self.grid?;
        if now.saturating_duration_since(shown) > STALE {
            return None;
        }
        let latency = self.usual_latency?;
        Some(Aim {
            vblank: now + latency,
            slack: Duration::ZERO,
            commit_by: now,
        })
    }

    /// How long before a vblank a commit must be made to be shown at it.
    fn deadline(&self) -> Duration {
        match (self.missed_max, self.made_min) {
            (Some(missed), Some(made)) => (missed + made) / 2,
            (None, Some(made)) => made,
            (Some(missed), None) => missed + Duration::from_micros(1),
            (None, None) => Duration::ZERO,
        }
    }

    /// When a commit made at `now` would be shown if the output keeps to
    /// its grid; None without recent feedback.
    pub fn predict(&self, now: Instant) -> Option<Instant> {
        let (shown, refresh) = self.grid?;
        if now.saturating_duration_since(shown) > STALE {
            return None;
        }
        // The first vblank at or after `now`.
        let next = match now.checked_duration_since(shown) {
            Some(since) => {
                let periods = since.as_nanos().div_ceil(refresh.as_nanos());
                shown + mul(refresh, periods)
            }
            None => {
                let before = shown - now;
                let periods = before.as_nanos() / refresh.as_nanos();
                shown - mul(refresh, periods)
            }
        };
        let lead = next - now;
        Some(if lead >= self.deadline() {
            next
        } else {
            next + refresh
        })
    }
}

fn mul(period: Duration, times: u128) -> Duration {
    Duration::from_nanos(u64::try_from(period.as_nanos() * times).unwrap_or(u64::MAX))
}

/// The instant a time read on the clock `clock_id` (a `clockid_t`, as
/// wp_presentation names it) stands for, `Instant` being
/// CLOCK_MONOTONIC: both clocks are read now and the difference applied.
pub fn instant_of(clock_id: u32, time: Duration) -> Option<Instant> {
    let clock = nix::time::ClockId::from_raw(i32::try_from(clock_id).ok()?);
    let now = Instant::now();
    let reading = nix::time::clock_gettime(clock).ok()?;
    let reading = Duration::new(
        u64::try_from(reading.tv_sec()).ok()?,
        u32::try_from(reading.tv_nsec()).ok()?,
    );
    match reading.checked_sub(time) {
        Some(ago) => now.checked_sub(ago),
        None => now.checked_add(time - reading),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const REFRESH: Duration = Duration::from_nanos(16_666_667);

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn nothing_is_predicted_without_feedback_or_after_a_long_silence() {
        let t0 = Instant::now();
        let mut vblank = VblankPredictor::default();
        assert_eq!(vblank.predict(t0), None);
        vblank.observe(t0, t0 + ms(10), REFRESH);
        assert!(vblank.predict(t0 + ms(20)).is_some());
        assert_eq!(vblank.predict(t0 + ms(10) + STALE + ms(1)), None);
        vblank.observe(t0, t0 + ms(10), Duration::ZERO);
        assert_eq!(vblank.predict(t0 + ms(20)), None);
    }

    #[test]
    fn a_commit_is_aimed_at_the_first_vblank_its_deadline_allows() {
        // A compositor that needs commits 7 ms before the vblank: seen
        // making it with 9 ms and missing it with 5 ms of lead.
        let t0 = Instant::now();
        let mut vblank = VblankPredictor::default();
        vblank.observe(t0, t0 + ms(9), REFRESH);
        let v1 = t0 + ms(9) + REFRESH;
        vblank.observe(v1 - ms(5), v1 + REFRESH, REFRESH);
        let v2 = v1 + REFRESH;
        // The deadline is taken half-way: 7 ms.
        assert_eq!(vblank.predict(v2 + ms(1)), Some(v2 + REFRESH));
        assert_eq!(vblank.predict(v2 + REFRESH - ms(8)), Some(v2 + REFRESH));
        assert_eq!(vblank.predict(v2 + REFRESH - ms(6)), Some(v2 + 2 * REFRESH));
        // A commit on a vblank is too late for it.
        assert_eq!(vblank.predict(v2), Some(v2 + REFRESH));
    }

    /// Sixteen frames, each committed 9 ms before the vblank it was shown
    /// at, from `t0`: the last shown at the returned instant.
    fn steady(vblank: &mut VblankPredictor, t0: Instant) -> Instant {
        let mut shown = t0;
        for n in 0..16 {
            shown = t0 + REFRESH * n;
            vblank.observe(shown - ms(9), shown, REFRESH);
        }
        shown
    }

    #[test]
    fn a_grid_that_foretells_presentations_is_aimed_at() {
        let t0 = Instant::now() + ms(100);
        let mut vblank = VblankPredictor::default();
        let last = steady(&mut vblank, t0);
        // Made with 9 ms of lead, never missed: 9 ms is the deadline.
        let aim = vblank.aim(last + ms(1)).expect("an aim");
        assert_eq!(aim.vblank, last + REFRESH);
        assert_eq!(aim.commit_by, last + REFRESH - ms(9));
        assert_eq!(aim.slack, REFRESH / 2);
        let aim = vblank.aim(last + REFRESH - ms(8)).expect("an aim");
        assert_eq!(aim.vblank, last + 2 * REFRESH);
    }

    #[test]
    fn without_a_grid_a_commit_is_aimed_at_its_usual_delay() {
        // An output that repaints when a commit arrives: shown 3 ms after
        // each commit, wherever the grid of the last one would say.
        let t0 = Instant::now() + ms(100);
        let mut vblank = VblankPredictor::default();
        for n in 0..16u32 {
            let committed = t0 + ms(40) * n + ms(u64::from(n % 5));
            vblank.observe(committed, committed + ms(3), REFRESH);
        }
        let now = t0 + ms(40) * 16;
        let aim = vblank.aim(now).expect("an aim");
        assert_eq!(aim.vblank, now + ms(3));
        assert_eq!(aim.slack, Duration::ZERO);
        // After a steady run the grid is trusted again.
        let mut vblank = VblankPredictor::default();
        let last = steady(&mut vblank, now);
        assert_eq!(vblank.aim(last + ms(2)).map(|a| a.slack), Some(REFRESH / 2));
    }

    #[test]
    fn a_frame_shown_much_later_says_nothing_of_the_deadline() {
        let t0 = Instant::now();
        let mut vblank = VblankPredictor::default();
        vblank.observe(t0, t0 + ms(9), REFRESH);
        // A busy compositor: shown three periods after a 12 ms lead.
        vblank.observe(t0 + ms(30), t0 + ms(42) + 2 * REFRESH, REFRESH);
        let shown = t0 + ms(42) + 2 * REFRESH;
        // 9 ms of lead still makes the next vblank.
        let next = shown + REFRESH;
        assert_eq!(vblank.predict(next - ms(9)), Some(next));
    }

    #[test]
    fn a_moved_deadline_replaces_what_it_contradicts() {
        let t0 = Instant::now();
        let mut vblank = VblankPredictor::default();
        vblank.observe(t0, t0 + ms(3), REFRESH); // made with 3 ms
        vblank.observe(t0 + ms(10), t0 + ms(14) + REFRESH, REFRESH); // missed with 4 ms
        let shown = t0 + ms(14) + REFRESH;
        let next = shown + REFRESH;
        // Only "missed with 4 ms" stands: 5 ms of lead makes it, 3 does not.
        assert_eq!(vblank.predict(next - ms(5)), Some(next));
        assert_eq!(vblank.predict(next - ms(3)), Some(next + REFRESH));
    }

    #[test]
    fn another_refresh_rate_forgets_the_deadline() {
        let t0 = Instant::now();
        let mut vblank = VblankPredictor::default();
        vblank.observe(t0, t0 + ms(9), REFRESH);
        let slow = ms(40);
        vblank.observe(t0 + ms(20), t0 + ms(60), slow);
        assert_eq!(vblank.refresh(), Some(slow));
        // No deadline known: the next vblank is the aim.
        assert_eq!(vblank.predict(t0 + ms(99)), Some(t0 + ms(100)));
    }

    #[test]
    fn the_monotonic_clock_maps_onto_instants() {
        let before = Instant::now();
        let reading =
            nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC).expect("CLOCK_MONOTONIC");
        let time = Duration::new(reading.tv_sec() as u64, reading.tv_nsec() as u32);
        let clock = nix::time::ClockId::CLOCK_MONOTONIC.as_raw() as u32;
        let instant = instant_of(clock, time).expect("an instant");
        let after = Instant::now();
        assert!(instant + ms(1) >= before && instant <= after + ms(1));
    }
}
