//! Timestamps made continuous across a transport stream's restarts.
//!
//! Broadcast switching and `cat` of recorded segments give MPEG-TS files
//! whose timestamps jump back (or far ahead) at a junction. Formats that
//! allow it (libavformat's `AVFMT_TS_DISCONT`: MPEG-TS, MPEG-PS, FLV) get
//! the FFmpeg command line's test for a restart: a decode timestamp more
//! than `BACKWARD_SLACK` behind the last one, or more than `JUMP_LIMIT` away
//! from where the stream's next packet was due. A restart moves an offset
//! added to every timestamp of the file from then on so that the packet's
//! picture comes right after the last one shown before it (where FFmpeg
//! continues the decode timestamps instead, which leaves a gap of as many
//! frames as the segments' reordering delays differ): the segments play
//! seamlessly, and players, A/V sync and `--output framemd5` see one clock.
//!
//! Seeking cannot ask libavformat for a mended time (the file's own
//! timestamps repeat), so the video keyframes read are remembered with
//! their byte position and offset: a seek in a file with restarts goes to
//! the one at or before the target and reads on from there.

use std::time::Duration;

/// A decode timestamp this far behind the last one is a restart.
const BACKWARD_SLACK: Duration = Duration::from_millis(100);
/// A jump of more than this either way is a restart (FFmpeg's
/// `-dts_delta_threshold` default).
const JUMP_LIMIT: Duration = Duration::from_secs(10);

/// Where one stream's packets are, on the mended clock (its time base).
#[derive(Clone, Copy, Debug)]
struct StreamClock {
    index: usize,
    last_dts: i64,
    next_dts: i64,
    /// The end of the latest picture or sample read: pts + duration.
    end_pts: i64,
}

/// A video keyframe read: where a seek can go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct KeyframeMark {
    /// Byte position of the packet in the file.
    pub position: i64,
    /// Mended pts (video time base).
    pub pts: i64,
    /// The offset in force there (video time base).
    pub offset: i64,
}

/// The offset and clocks of one file's continuous timeline.
#[derive(Debug)]
pub(super) struct ContinuousTimeline {
    /// Whether the format may restart its timestamps at all.
    enabled: bool,
    /// The video stream's time base: the unit of `offset`.
    video_time_base: (i32, i32),
    /// Added to every timestamp read (video time base).
    offset: i64,
    clocks: Vec<StreamClock>,
    /// Video keyframes in the order read, pts increasing.
    keyframes: Vec<KeyframeMark>,
    restarts: u32,
    /// Restarts were found ahead of what was read (`set_restarting`).
    restarts_ahead: bool,
}

/// `ts` from time base `from` to time base `to`, rounded to nearest.
fn rescale(ts: i64, from: (i32, i32), to: (i32, i32)) -> i64 {
    let num = i128::from(from.0) * i128::from(to.1);
    let den = i128::from(from.1) * i128::from(to.0);
    if den == 0 {
        return ts;
    }
    let scaled = i128::from(ts) * num;
    let rounded = if (scaled < 0) == (den < 0) {
        (scaled + den / 2) / den
    } else {
        (scaled - den / 2) / den
    };
    rounded.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

/// `span` in time base `tb`.
fn ticks(span: Duration, (num, den): (i32, i32)) -> i64 {
    if num <= 0 {
        return 0;
    }
    let ticks =
        span.as_nanos() * den.unsigned_abs() as u128 / (1_000_000_000 * num.unsigned_abs() as u128);
    i64::try_from(ticks).unwrap_or(i64::MAX)
}

impl ContinuousTimeline {
    /// A timeline for a file of a format that may (`enabled`) or may not
    /// restart its timestamps.
    pub fn new(enabled: bool, video_time_base: (i32, i32)) -> ContinuousTimeline {
        ContinuousTimeline {
            enabled,
            video_time_base,
            offset: 0,
            clocks: Vec::new(),
            keyframes: Vec::new(),
            restarts: 0,
            restarts_ahead: false,
        }
    }

    /// Whether the format may restart its timestamps.
    pub fn may_restart(&self) -> bool {
        self.enabled
    }

    /// Notes that the file's timestamps restart somewhere (found by
    /// sampling it), before reading got there.
    pub fn set_restarting(&mut self) {
        self.restarts_ahead = self.enabled;
    }

    /// Whether the file's own timestamps repeat: seeks must then go by
    /// the keyframes read (`mark_at_or_before`), not libavformat's seek.
    pub fn restarting(&self) -> bool {
        self.restarts > 0 || self.restarts_ahead
    }

    /// How many restarts were mended so far.
    #[cfg(test)]
    pub fn restarts(&self) -> u32 {
        self.restarts
    }

    /// Puts one packet's timestamps (time base `tb`, `duration` in it, 0
    /// when unknown) on the continuous clock, noting a restart first if
    /// this packet makes one.
    pub fn mend(
        &mut self,
        stream: usize,
        tb: (i32, i32),
        pts: &mut Option<i64>,
        dts: &mut Option<i64>,
        duration: i64,
    ) {
        if !self.enabled {
            return;
        }
        if let Some(read) = dts.or(*pts) {
            let here = read.saturating_add(rescale(self.offset, self.video_time_base, tb));
            if let Some(clock) = self.clocks.iter().find(|c| c.index == stream) {
                let delta = here.saturating_sub(clock.next_dts);
                let limit = ticks(JUMP_LIMIT, tb);
                let behind = here.saturating_add(ticks(BACKWARD_SLACK, tb)) < clock.last_dts;
                if behind || delta.abs() > limit {
                    // The picture where the last one ended; without a pts,
                    // the decode timestamp where it was due.
                    let shift = match *pts {
                        Some(pts) => pts
                            .saturating_add(here.saturating_sub(read))
                            .saturating_sub(clock.end_pts),
                        None => delta,
                    };
                    self.offset =
                        self.offset
                            .saturating_sub(rescale(shift, tb, self.video_time_base));
                    self.restarts += 1;
                    tracing::info!(
                        "timestamps of stream {stream} jump by {:.3} s: continuing them where they were due",
                        delta as f64 * f64::from(tb.0) / f64::from(tb.1)
                    );
                }
            }
        }
        let offset = rescale(self.offset, self.video_time_base, tb);
        *pts = pts.map(|t| t.saturating_add(offset));
        *dts = dts.map(|t| t.saturating_add(offset));
        let Some(at) = dts.or(*pts) else {
            return;
        };
        let next_dts = at.saturating_add(duration.max(0));
        let end_pts = pts.unwrap_or(at).saturating_add(duration.max(0));
        match self.clocks.iter_mut().find(|c| c.index == stream) {
            Some(clock) => {
                clock.last_dts = at;
                clock.next_dts = next_dts;
                clock.end_pts = clock.end_pts.max(end_pts);
            }
            None => self.clocks.push(StreamClock {
                index: stream,
                last_dts: at,
                next_dts,
                end_pts,
            }),
        }
    }

    /// Remembers a video keyframe read at byte `position` with mended
    /// `pts`, for seeking.
    pub fn note_keyframe(&mut self, position: i64, pts: Option<i64>) {
        let (true, Some(pts), true) = (self.enabled, pts, position >= 0) else {
            return;
        };
        if self.keyframes.last().is_some_and(|last| last.pts >= pts) {
            // Read again after a seek, or out of order: known already.
            return;
        }
        self.keyframes.push(KeyframeMark {
            position,
            pts,
            offset: self.offset,
        });
    }

    /// The last keyframe read at or before mended `target` (video time
    /// base), with the offset then in force: where a seek in a restarting
    /// file starts reading. `None` before every keyframe read.
    pub fn mark_at_or_before(&self, target: i64) -> Option<KeyframeMark> {
        let after = self.keyframes.partition_point(|k| k.pts <= target);
        after.checked_sub(1).map(|i| self.keyframes[i])
    }

    /// After a seek: reading goes on from a point whose offset is
    /// `offset`, with no packet of any stream read yet.
    pub fn restart_reading(&mut self, offset: i64) {
        self.offset = offset;
        self.clocks.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TB: (i32, i32) = (1, 90_000);

    /// Mends a video packet; returns its (pts, dts).
    fn video(t: &mut ContinuousTimeline, pts: i64, dts: i64) -> (i64, i64) {
        let (mut p, mut d) = (Some(pts), Some(dts));
        t.mend(0, TB, &mut p, &mut d, 3000);
        (p.unwrap_or(-1), d.unwrap_or(-1))
    }

    #[test]
    fn a_restart_shows_its_picture_after_the_last_one() {
        let mut t = ContinuousTimeline::new(true, TB);
        assert_eq!(video(&mut t, 132_000, 126_000), (132_000, 126_000));
        assert_eq!(video(&mut t, 219_000, 207_000), (219_000, 207_000));
        assert_eq!(video(&mut t, 213_000, 210_000), (213_000, 210_000));
        // Back to 126000 (1 s): the picture ending last ends at 222000.
        assert_eq!(video(&mut t, 132_000, 126_000), (222_000, 216_000));
        assert_eq!(video(&mut t, 144_000, 129_000), (234_000, 219_000));
        assert_eq!(t.restarts(), 1);
        // Less than the slack behind: reordering noise, not a restart.
        assert_eq!(video(&mut t, 135_000, 126_000), (225_000, 216_000));
        assert_eq!(t.restarts(), 1);
    }

    #[test]
    fn a_restart_without_pts_continues_the_decode_timestamps() {
        let mut t = ContinuousTimeline::new(true, TB);
        video(&mut t, 129_000, 126_000);
        video(&mut t, 135_000, 213_000);
        let (mut p, mut d) = (None, Some(126_000));
        t.mend(0, TB, &mut p, &mut d, 3000);
        assert_eq!(d, Some(216_000));
    }

    #[test]
    fn reordering_and_small_gaps_are_not_restarts() {
        let mut t = ContinuousTimeline::new(true, TB);
        video(&mut t, 126_000, 120_000);
        // B-frame reordering leaves dts increasing; a dropped frame or a
        // slightly early dts stays within the slack.
        video(&mut t, 135_000, 123_000);
        video(&mut t, 129_000, 129_000);
        video(&mut t, 132_000, 126_000);
        assert_eq!(t.restarts(), 0);
        // A 5 s hole forward is a gap, not a restart.
        assert_eq!(video(&mut t, 600_000, 600_000), (600_000, 600_000));
        assert_eq!(t.restarts(), 0);
    }

    #[test]
    fn a_far_jump_forward_is_a_restart() {
        let mut t = ContinuousTimeline::new(true, TB);
        video(&mut t, 0, 0);
        assert_eq!(video(&mut t, 90_000 * 3600, 90_000 * 3600), (3000, 3000));
        assert_eq!(t.restarts(), 1);
    }

    #[test]
    fn other_streams_share_the_offset_in_their_own_time_base() {
        let mut t = ContinuousTimeline::new(true, TB);
        video(&mut t, 90_000, 90_000);
        let (mut p, mut d) = (Some(48_000), Some(48_000));
        t.mend(1, (1, 48_000), &mut p, &mut d, 1024);
        video(&mut t, 0, 0);
        // The video restart moved the clock 93000 ticks (1.0333 s) on.
        let (mut p, mut d) = (Some(1024), Some(1024));
        t.mend(1, (1, 48_000), &mut p, &mut d, 1024);
        assert_eq!(p, Some(1024 + 49_600));
        assert_eq!(t.restarts(), 1);
    }

    #[test]
    fn formats_without_restarts_are_left_alone() {
        let mut t = ContinuousTimeline::new(false, TB);
        video(&mut t, 126_000, 126_000);
        assert_eq!(video(&mut t, 0, 0), (0, 0));
        t.note_keyframe(0, Some(0));
        assert_eq!(t.mark_at_or_before(10), None);
        t.set_restarting();
        assert!(!t.restarting());
    }

    #[test]
    fn seeks_go_to_the_keyframe_read_at_or_before_the_target() {
        let mut t = ContinuousTimeline::new(true, TB);
        let (p, _) = video(&mut t, 126_000, 126_000);
        t.note_keyframe(0, Some(p));
        video(&mut t, 213_000, 213_000);
        assert!(!t.restarting(), "no restart yet");
        let (p, _) = video(&mut t, 126_000, 126_000);
        t.note_keyframe(9400, Some(p));
        let second = KeyframeMark {
            position: 9400,
            pts: 216_000,
            offset: 90_000,
        };
        assert!(t.restarting());
        assert_eq!(t.mark_at_or_before(500_000), Some(second));
        assert_eq!(t.mark_at_or_before(216_000), Some(second));
        assert_eq!(t.mark_at_or_before(215_999).map(|k| k.position), Some(0));
        assert_eq!(t.mark_at_or_before(100), None);
        // Read again after a seek: not noted twice.
        t.restart_reading(0);
        t.note_keyframe(0, Some(126_000));
        assert_eq!(t.mark_at_or_before(500_000), Some(second));
    }
}
