//! Picture and sound together: when playback (re)starts so that both
//! begin at once, the clock following what is heard while the sound plays,
//! the A/V offset measured at each frame's presentation, and the volume.

use std::time::{Duration, Instant};

use tracing::{debug, info, trace};

use super::commands::VolumeChange;
use super::Player;
use crate::audio::Audio;
use crate::display::Presented;

impl Player {
    /// When playback (re)starting now with a frame shown at `shown` begins:
    /// once that frame is on screen and sound queued now can be heard.
    pub(super) fn playback_start(&self, shown: Instant, now: Instant) -> Instant {
        match self.audio.as_ref().and_then(Audio::soonest) {
            Some(soonest) => shown.max(now + soonest),
            None => shown,
        }
    }

    /// How far each frame shown since the last call was from its time on
    /// the clock (on a schedule, its time on the schedule), and from the
    /// sound: its pts against what was heard when it reached the screen.
    pub(super) fn measure_sync(&mut self, now: Instant) {
        let presented = self.display.take_presented();
        self.start_where_first_shown(&presented);
        for frame in &presented {
            let current = frame.epoch == self.transport.epoch && frame.committed >= self.sync_since;
            if let (Some(shown), true) = (frame.shown, current) {
                self.note_presentation_error(frame.pts, shown, frame.refresh);
            }
        }
        if self.transport.paused || self.transport.preroll {
            return;
        }
        let Some(heard_now) = self.audio.as_ref().and_then(|audio| audio.position(now)) else {
            return;
        };
        for frame in presented {
            if frame.committed < self.sync_since {
                continue;
            }
            // Nothing restarted the sound since: it flowed at its pace.
            let shown = frame.shown.unwrap_or(frame.committed);
            let heard = match now.checked_duration_since(shown) {
                Some(ago) => heard_now.saturating_sub(ago),
                None => heard_now + (shown - now),
            };
            self.av_offset.add(frame.pts, heard);
        }
    }

    /// A silent start's first frame reached the screen later than aimed
    /// (its import, a loaded machine): the clock starts where it was shown,
    /// so that the frames after it keep their spacing from it.
    fn start_where_first_shown(&mut self, presented: &[Presented]) {
        let Some((epoch, pts)) = self.start_on_feedback else {
            return;
        };
        let Some(first) = presented
            .iter()
            .find(|frame| frame.epoch == epoch && frame.pts == pts)
        else {
            if self.transport.epoch != epoch {
                self.start_on_feedback = None;
            }
            return;
        };
        self.start_on_feedback = None;
        let running = self.transport.epoch == epoch && self.clock.is_running();
        if let (Some(shown), Some(due), true) = (first.shown, self.clock.instant_of(pts), running) {
            if shown > due + refresh_or_60_hz(first.refresh) {
                debug!(late = ?(shown - due), "the first frame was late: the clock starts where it was shown");
                self.clock.set(pts, shown);
            }
        }
    }

    /// While sound plays, the clock reads what is being heard.
    pub(super) fn follow_audio(&mut self, now: Instant) {
        if self.transport.paused
            || self.transport.preroll
            || !self.clock.is_running()
            || self.on_schedule()
        {
            return;
        }
        if let Some(heard) = self.audio.as_ref().and_then(|audio| audio.position(now)) {
            self.clock.set(heard, now);
        }
    }

    /// A frame of `pts` reached the screen at `shown`, on an output of
    /// `refresh` (zero if unknown): how far from when the clock had it due.
    fn note_presentation_error(&mut self, pts: Duration, shown: Instant, refresh: Duration) {
        let Some(due) = self.clock.instant_of(pts) else {
            return;
        };
        let error = if shown >= due {
            shown - due
        } else {
            due - shown
        };
        let error_us = u64::try_from(error.as_micros()).unwrap_or(u64::MAX);
        trace!(pts = ?pts, error_us, late = shown >= due, "presentation error");
        let counters = &mut self.counters;
        counters.presentation_error_max_us = counters.presentation_error_max_us.max(error_us);
        counters.presentation_error_last_us = error_us;
        if error > 2 * refresh_or_60_hz(refresh) {
            counters.mistimed_frames += 1;
        }
    }

    pub(super) fn change_volume(
        &mut self,
        change: Option<VolumeChange>,
        mute: Option<Option<bool>>,
    ) {
        match change {
            Some(VolumeChange::To(percent)) => self.volume.set(percent),
            Some(VolumeChange::By(delta)) => self.volume.add(delta),
            None => {}
        }
        match mute {
            Some(Some(muted)) => self.volume.muted = muted,
            Some(None) => self.volume.muted = !self.volume.muted,
            None => {}
        }
        info!(
            volume = self.volume.percent,
            muted = self.volume.muted,
            "volume"
        );
        if let Some(audio) = &self.audio {
            audio.set_gain(self.volume.gain());
        }
    }
}

/// `refresh`, or a 60 Hz output's when the compositor did not say.
fn refresh_or_60_hz(refresh: Duration) -> Duration {
    if refresh.is_zero() {
        Duration::from_micros(16_667)
    } else {
        refresh
    }
}
