//! Pacing: frames from the decode thread to the screen, each at its time
//! on the clock (aimed at the vblank nearest it), late ones dropped when a
//! later one is due; the frame timer that wakes the loop for the next.

use std::time::{Duration, Instant};

use calloop::timer::{TimeoutAction, Timer};
use tracing::{debug, error, warn};

use super::ipc::events::PlayerEvent;
use super::source::SourceEvent;
use super::transport::Shown;
use super::{about_file, Player};
use crate::display::vblank::Aim;
use crate::display::DisplayError;
use crate::exit::Exit;
use crate::frame::Frame;

/// A file that ended this long before its successor's first frame could
/// be shown is not continued from: that frame starts the clock anew.
const CONTINUE_LATE: Duration = Duration::from_millis(100);
/// A frame this close to its deadline is shown now rather than after
/// another timer round trip.
pub(super) const EARLY_SLACK: Duration = Duration::from_millis(2);
/// How long after a vblank's commit deadline a frame for the next one is
/// committed: room for the deadline being a little later than learned.
const COMMIT_MARGIN: Duration = Duration::from_millis(1);
/// A frame later than this is dropped when a later frame is already
/// decoded and due too: a slow compositor then costs frames, never the
/// clock (the picture stays on media time), while a slow decoder, with
/// nothing decoded behind its late frame, still shows every frame.
const LATE_DROP: Duration = Duration::from_millis(80);
/// While the next wake-up is a timer at most this far away, the
/// compositor's events wait for it: the last frame's release, frame
/// callback and presentation feedback come in two bursts a frame, and
/// reading them with the next frame's commit makes one wake-up of three.
/// Keys are then answered within this.
pub(super) const COMPOSITOR_QUIET_FOR: Duration = Duration::from_millis(50);

impl Player {
    /// Moves frames from the decoder to the screen as far as time, the
    /// display and the state allow; arms a timer for the next deadline.
    pub(super) fn pump(&mut self) {
        if self.quitting {
            return;
        }
        if self.compositor.as_ref().is_some_and(|watch| !watch.watched) {
            self.read_compositor();
            if self.quitting {
                return;
            }
        }
        self.settle_opening();
        self.follow_connection();
        self.retire_imports();
        if self
            .retired
            .as_ref()
            .is_some_and(|r| r.done(Instant::now()))
        {
            self.retired = None;
        }
        self.update_screen();
        self.measure_sync(Instant::now());
        loop {
            if self.transport.next.is_none() && !self.fetch() {
                break;
            }
            let now = Instant::now();
            self.follow_audio(now);
            let Some(frame) = self.transport.next.as_ref() else {
                break;
            };
            // On a schedule even the first frame waits for its time.
            if !self.transport.preroll || self.on_schedule() {
                if self.transport.paused {
                    break;
                }
                let Some(deadline) = self.clock.deadline(frame.pts, now) else {
                    self.want_source_events();
                    break;
                };
                if let Some(wake) = too_early(deadline, now, self.display.next_vblank(now)) {
                    self.arm_timer(wake);
                    break;
                }
                let media_now = self.clock.now(now);
                let late = media_now.saturating_sub(frame.pts);
                // Late on the wall clock, whatever the speed.
                let late_drop = LATE_DROP.mul_f64(self.clock.rate());
                if late > late_drop && self.superseded(frame.pts, media_now) {
                    self.counters.dropped_late += 1;
                    debug!(pts = ?frame.pts, ?late, "dropped late frame");
                    self.transport.next = None;
                    continue;
                }
            }
            if !self.display.ready_for_frame() {
                // The frame callback wakes us; so does each frame decoded
                // meanwhile, which may make this one superseded (dropped
                // now, so that the decoder goes on at the clock's pace).
                self.want_source_events();
                break;
            }
            if let Some(frame) = self.transport.next.take() {
                self.present(frame, now);
            }
        }
        if self.transport.next.is_none()
            && self.transport.ended
            && !self.transport.preroll
            && !self.transport.paused
        {
            self.finish_file_when_due();
        }
        self.prepare_next_when_due();
        self.update_osd();
        self.update_subtitles();
    }

    /// The decode thread's next event wakes the loop, although the player
    /// holds a frame (it wakes it only when the player found none).
    pub(super) fn want_source_events(&self) {
        if let Some(source) = &self.source {
            source.want_events();
        }
    }

    /// A frame later than `pts` is already decoded and due at `media_now`.
    pub(super) fn superseded(&self, pts: Duration, media_now: Duration) -> bool {
        self.source
            .as_ref()
            .and_then(|source| source.newest_frame(self.transport.epoch))
            .is_some_and(|newest| newest > pts && newest <= media_now)
    }

    /// Takes the next event from the decode thread; true when a frame of
    /// the current epoch is ready.
    pub(super) fn fetch(&mut self) -> bool {
        let Some(source) = self.source.as_ref() else {
            return false;
        };
        let mut restart_without_frame = false;
        while let Some(event) = source.try_event() {
            match event {
                SourceEvent::Frame(frame) if frame.epoch == self.transport.epoch => {
                    self.transport.next = Some(frame);
                    return true;
                }
                SourceEvent::EndOfStream { epoch, errors } if epoch == self.transport.epoch => {
                    debug!(epoch, ?errors, "source ended");
                    self.transport.ended = true;
                    if let Some(errors) = errors {
                        let message = about_file(self.playlist.current(), &errors);
                        if !self.outcome.failures.contains(&message) {
                            self.outcome.fail(Exit::Failed, message);
                        }
                    }
                    // A seek that found nothing to show ends its preroll here.
                    self.transport.preroll = false;
                    restart_without_frame = std::mem::take(&mut self.transport.announce_restart);
                    self.transport.pending_steps = 0;
                    self.transport.seek_target = None;
                }
                SourceEvent::Failed {
                    epoch,
                    message,
                    exit,
                } if epoch == self.transport.epoch => {
                    let message = about_file(self.playlist.current(), &message);
                    error!("{message}");
                    self.outcome.fail(exit, message);
                    self.transport.ended = true;
                    self.transport.preroll = false;
                    self.transport.seek_target = None;
                }
                _ => {} // from before a seek
            }
        }
        if restart_without_frame {
            self.emit(PlayerEvent::PlaybackRestart);
        }
        false
    }

    pub(super) fn present(&mut self, frame: Frame, now: Instant) {
        // Where this commit lands: a prerolled frame starts the clock (and
        // the sound) there.
        let shows_at = self.display.next_vblank(now).map_or(now, |aim| aim.vblank);
        if let Err(e) = self.display.present(&frame) {
            // A malformed frame costs that frame; a broken connection ends playback.
            if matches!(e, DisplayError::BadFrame { .. } | DisplayError::Copy(_)) {
                warn!("frame at {:?} not shown: {e}", frame.pts);
                return;
            }
            // The compositor gone: said once, as when dispatch notices it.
            if matches!(e, DisplayError::Wayland(_) | DisplayError::Dispatch(_)) {
                self.compositor_lost(&e);
                return;
            }
            self.fail(format!("cannot present a frame: {e}"));
            return;
        }
        let position = frame.pts.saturating_sub(self.start_time);
        debug!(
            position = ?position,
            decoder = %frame.decoder,
            format = %frame.format,
            width = frame.width,
            height = frame.height,
            "frame shown"
        );
        if self.transport.preroll {
            if let Some(retired) = &mut self.retired {
                retired.let_decoder_go();
            }
            // After a file that ended: its end is this frame's time.
            let continued = self
                .transport
                .continue_from
                .take()
                .filter(|&at| at + CONTINUE_LATE >= now);
            self.transport.preroll = false;
            self.transport.seek_target = None;
            self.osd.landed(now);
            if self.on_schedule() {
                // The clock is the schedule's; the sound starts where it is.
                if let Some(audio) = &self.audio {
                    audio.play_from(self.clock.now(shows_at), shows_at);
                    self.sync_since = now;
                }
            } else {
                self.clock.set(frame.pts, now);
            }
            if !self.transport.paused && !self.on_schedule() {
                // The clock stands at the frame until it is on screen and
                // its sound can be heard (or the file before ends).
                let start = continued.unwrap_or_else(|| self.playback_start(shows_at, now));
                self.clock.resume(now);
                self.clock.set(frame.pts, start);
                // Without sound the aim is all the clock has: a first frame
                // that misses it would make the next ones catch up.
                self.start_on_feedback = (continued.is_none() && self.audio.is_none())
                    .then_some((self.transport.epoch, frame.pts));
                if let Some(audio) = &self.audio {
                    audio.play_from(frame.pts, start);
                    self.sync_since = now;
                }
            }
            if self.transport.pending_steps > 0 {
                self.transport.pending_steps -= 1;
                self.transport.preroll = true;
            }
        }
        self.counters.presented += 1;
        self.transport.shown = Some(Shown {
            position,
            duration: frame.duration,
            width: frame.width,
            height: frame.height,
            format: frame.format,
            decoder: frame.decoder,
            sample_aspect: frame.sample_aspect,
        });
        self.measure_frame_time(now);
        self.on_screen = Some(frame);
        if !self.transport.preroll && std::mem::take(&mut self.transport.announce_restart) {
            self.emit(PlayerEvent::PlaybackRestart);
        }
    }

    /// Wakes the loop at `deadline`. Timers are never removed (removing one
    /// whose expiry is already queued makes calloop warn); a stale timer
    /// only causes an extra, harmless pump.
    pub(super) fn arm_timer(&mut self, deadline: Instant) {
        if self.timer.is_some_and(|armed| armed <= deadline) {
            return; // an earlier wake-up re-evaluates anyway
        }
        let inserted =
            self.handle
                .insert_source(Timer::from_deadline(deadline), move |_, _, player| {
                    // The loop pumps after each dispatch.
                    player.counters.woken_by_timer += 1;
                    if player.timer == Some(deadline) {
                        player.timer = None;
                    }
                    TimeoutAction::Drop
                });
        match inserted {
            Ok(_) => self.timer = Some(deadline),
            Err(e) => self.fail(format!("cannot arm the frame timer: {e}")),
        }
    }

    pub(super) fn cancel_timer(&mut self) {
        self.timer = None;
    }

    /// The screen besides the frames: kept awake while playing (not when
    /// paused or with nothing to play), and a wake-up armed to hide a
    /// still cursor (one at a time; it re-arms while the pointer moves).
    pub(super) fn update_screen(&mut self) {
        let playing = !self.transport.paused && self.source.is_some();
        self.display.set_idle_inhibited(playing);
        let Some(deadline) = self.display.cursor_deadline() else {
            return;
        };
        if self.cursor_timer {
            return;
        }
        let inserted = self
            .handle
            .insert_source(Timer::from_deadline(deadline), |_, _, player| {
                player.cursor_timer = false;
                player.display.update_cursor();
                player.update_screen();
                TimeoutAction::Drop
            });
        match inserted {
            Ok(_) => self.cursor_timer = true,
            Err(e) => warn!("cannot arm the cursor timer: {e}"),
        }
    }

    /// Frames presented per second, measured over whole seconds.
    pub(super) fn measure_frame_time(&mut self, now: Instant) {
        let (since, count) = self.frame_time_window;
        let count = count + 1;
        let elapsed = now.duration_since(since);
        if elapsed >= Duration::from_secs(1) {
            self.frame_time = Some(elapsed / count.max(1) as u32);
            self.frame_time_window = (now, 0);
        } else {
            self.frame_time_window = (since, count);
        }
    }
}

/// When a frame due at `deadline` is too early to commit now: the moment
/// to look again. With presentation feedback a frame goes to the vblank
/// nearest its time (a commit now is shown at `aim.vblank`); without, it
/// is committed when due.
pub(super) fn too_early(deadline: Instant, now: Instant, aim: Option<Aim>) -> Option<Instant> {
    let Some(aim) = aim else {
        return (deadline > now + EARLY_SLACK).then_some(deadline);
    };
    if deadline <= aim.vblank + aim.slack {
        return None;
    }
    // Due at a later vblank: not before a commit misses this one.
    Some((now + (deadline - aim.vblank - aim.slack)).max(aim.commit_by + COMMIT_MARGIN))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_aimed_at_the_vblank_nearest_their_time() {
        let now = Instant::now();
        let ms = Duration::from_millis;
        // No feedback: committed when due.
        assert_eq!(too_early(now + ms(1), now, None), None);
        assert_eq!(too_early(now + ms(30), now, None), Some(now + ms(30)));
        // A commit now shows in 10 ms, at 60 Hz; its deadline is in 3 ms.
        let aim = Aim {
            vblank: now + ms(10),
            slack: ms(8),
            commit_by: now + ms(3),
        };
        // Due up to half a period after that vblank: it is the nearest.
        assert_eq!(too_early(now + ms(18), now, Some(aim)), None);
        assert_eq!(too_early(now, now, Some(aim)), None);
        // Nearer the next one: wait until a commit misses this vblank.
        assert_eq!(
            too_early(now + ms(19), now, Some(aim)),
            Some(now + ms(3) + COMMIT_MARGIN)
        );
        // Further still: until it is due for the vblank it is nearest.
        assert_eq!(too_early(now + ms(60), now, Some(aim)), Some(now + ms(42)));
    }
}
