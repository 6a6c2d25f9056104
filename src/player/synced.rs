//! The player on a schedule (`--sync-epoch`, see `schedule.rs`): each
//! entry's media clock anchored to the entry's turn on the wall clock, so
//! that frame N of it is due at its start plus N frame intervals, whatever
//! happened before. Pacing then does the rest: a player behind drops the
//! late frames that newer ones supersede, one ahead waits. The sound
//! follows the clock here, not the clock the sound.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context, Result};
use tracing::{debug, info};

use super::ipc::events::EndReason;
use super::schedule::{wall_now, Schedule};
use super::Player;
use crate::media::Demuxer;

/// The schedule of `files` from `epoch`: every file's length is read
/// from its container, and none may be unknown (a live stream has no turn).
pub(super) fn schedule_of(files: &[std::path::PathBuf], epoch: Duration) -> Result<Schedule> {
    let durations = files
        .iter()
        .map(|path| duration_of(path))
        .collect::<Result<Vec<_>>>()?;
    Schedule::new(epoch, durations).map_err(|e| anyhow!("--sync-epoch: {e}"))
}

fn duration_of(path: &Path) -> Result<Duration> {
    let demuxer = Demuxer::open(path).with_context(|| format!("{}", path.display()))?;
    demuxer.stream().duration.ok_or_else(|| {
        anyhow!(
            "{}: its length is unknown (a live stream?): --sync-epoch needs every file's",
            path.display()
        )
    })
}

/// The instant the wall clock reads `wall` (time since 1970), on the
/// monotonic clock the player paces frames by.
fn instant_of_wall(wall: Duration, now: Instant) -> Instant {
    let wall_now = wall_now();
    match wall.checked_sub(wall_now) {
        Some(ahead) => now + ahead,
        None => now.checked_sub(wall_now - wall).unwrap_or(now),
    }
}

impl Player {
    /// Plays what the schedule says is on now, from where it is.
    pub(super) fn join_schedule(&mut self) {
        let Some(schedule) = &self.schedule else {
            return;
        };
        let (slot, into) = schedule.at(wall_now());
        info!(
            entry = slot.index,
            position = ?into,
            "joining the schedule"
        );
        self.slot = Some(slot);
        let start = (!into.is_zero()).then_some(into);
        self.open_file(slot.index, start, EndReason::Stop);
    }

    /// The next entry's turn, at the end of this one's.
    pub(super) fn next_turn(&mut self) {
        if let (Some(schedule), Some(slot)) = (&self.schedule, self.slot) {
            self.slot = Some(schedule.next(slot));
        }
    }

    /// Anchors the clock to the loaded entry's turn: its first frame's
    /// time at the turn's start.
    pub(super) fn follow_schedule(&mut self) {
        let Some(slot) = self.slot else {
            return;
        };
        let now = Instant::now();
        let start = instant_of_wall(slot.start, now);
        // Running first: resuming a stopped clock re-anchors it at now.
        self.clock.resume(now);
        self.clock.set(self.start_time, start);
        debug!(entry = slot.index, in_ = ?start.saturating_duration_since(now), "clock on the schedule");
    }

    /// Playback follows a schedule: the user's seeks and steps do not apply.
    pub(super) fn on_schedule(&self) -> bool {
        self.slot.is_some()
    }
}
