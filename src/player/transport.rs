//! The transport: the playback state machine (playing, paused, seeking,
//! stepping, ended) and the player's moves on it: seek, pause, restart
//! from a position (also to reopen the decoder for a new CAPTURE format).

use std::time::{Duration, Instant};

use tracing::{debug, info, warn};

use super::negotiator::Renegotiated;
use super::source::Request;
use super::Player;
use crate::frame::{DecoderKind, Frame, PixelFormat};

/// The frame on screen.
#[derive(Debug, Clone, Copy)]
pub(super) struct Shown {
    pub(super) position: Duration,
    pub(super) duration: Duration,
    pub(super) width: u32,
    pub(super) height: u32,
    pub(super) format: PixelFormat,
    pub(super) decoder: DecoderKind,
    pub(super) sample_aspect: (u32, u32),
}

/// Where playback stands in the loaded file.
pub(super) struct Transport {
    /// Bumped at each seek or file change; older frames are dropped.
    pub(super) epoch: u64,
    /// The last epoch handed out (to the transport or to the next file,
    /// decoded ahead under an epoch of its own).
    issued: u64,
    pub(super) paused: bool,
    /// The next frame is shown as soon as the display can take it (start,
    /// seek, step), and sets the clock.
    pub(super) preroll: bool,
    pub(super) seek_target: Option<Duration>,
    /// Frame steps asked for while a seek or step was still in flight.
    pub(super) pending_steps: u32,
    pub(super) next: Option<Frame>,
    pub(super) shown: Option<Shown>,
    /// The source delivered every frame of the current epoch.
    pub(super) ended: bool,
    /// A `playback-restart` is due when the next preroll ends.
    pub(super) announce_restart: bool,
    /// Where the file before ended (gapless playback): the first frame's
    /// time, rather than when it is shown.
    pub(super) continue_from: Option<Instant>,
}

impl Transport {
    pub(super) fn new(paused: bool) -> Self {
        Self {
            epoch: 0,
            issued: 0,
            paused,
            preroll: true,
            seek_target: None,
            pending_steps: 0,
            next: None,
            shown: None,
            ended: false,
            announce_restart: false,
            continue_from: None,
        }
    }

    /// A new epoch prerolling from `seek_target` (None: the start): what
    /// was decoded for the old one is dropped.
    pub(super) fn restart(&mut self, seek_target: Option<Duration>) {
        self.epoch = self.fresh_epoch();
        self.next = None;
        self.ended = false;
        self.preroll = true;
        self.seek_target = seek_target;
    }

    /// An epoch no frame carries yet.
    pub(super) fn fresh_epoch(&mut self) -> u64 {
        self.issued += 1;
        self.issued
    }

    /// The position of the frame on screen.
    pub(super) fn position(&self) -> Duration {
        self.shown.map(|s| s.position).unwrap_or(Duration::ZERO)
    }

    /// The last frame of the file is on screen and nothing more comes.
    pub(super) fn at_end(&self) -> bool {
        self.ended && self.next.is_none()
    }
}

impl Player {
    pub(super) fn seek_to(&mut self, position: Duration) {
        self.restart_at(position, false);
    }

    /// Drops what was decoded and prerolls from `position`, reopening the
    /// decoder first if asked.
    pub(super) fn restart_at(&mut self, position: Duration, reopen_decoder: bool) {
        self.sync_since = Instant::now();
        self.transport.pending_steps = 0;
        self.transport.restart(Some(position));
        self.cancel_timer();
        // A reopened decoder goes on from where the picture is: the sound
        // plays on.
        if let (Some(audio), false) = (&self.audio, reopen_decoder) {
            audio.seek(self.start_time + position);
        }
        if let Some(source) = &self.source {
            source.request(Request::Seek {
                position,
                epoch: self.transport.epoch,
                reopen_decoder,
            });
        }
    }

    /// The compositor's formats changed: when the decoder should now
    /// decode into another CAPTURE format, it is reopened and playback goes
    /// on from the frame due next (the one on screen, when paused).
    pub(super) fn renegotiate(&mut self) {
        let Some(negotiator) = &self.negotiator else {
            return;
        };
        let formats = match self.display.compositor_formats() {
            None => return,
            Some(Ok(formats)) => formats,
            Some(Err(e)) => {
                warn!("new dmabuf feedback unusable, keeping the negotiation: {e}");
                return;
            }
        };
        match negotiator.compositor_changed(formats) {
            Renegotiated::NotStarted | Renegotiated::Unchanged => {}
            Renegotiated::SameFormat(outcome) => {
                debug!(%outcome, "negotiation changed, CAPTURE format kept")
            }
            Renegotiated::Reallocate(_) => {
                let position = self.resume_position();
                info!(
                    ?position,
                    "reopening the decoder for the new CAPTURE format"
                );
                self.restart_at(position, true);
            }
        }
    }

    /// Where playback would go on from: a seek in flight's target, else the
    /// frame waiting to be shown, else the one on screen (paused) or the
    /// one after it.
    pub(super) fn resume_position(&self) -> Duration {
        if let Some(target) = self.transport.seek_target {
            return target;
        }
        if let Some(next) = &self.transport.next {
            return next.pts.saturating_sub(self.start_time);
        }
        match self.transport.shown {
            Some(shown) if self.transport.paused || self.transport.ended => shown.position,
            Some(shown) => shown.position + shown.duration,
            None => Duration::ZERO,
        }
    }

    pub(super) fn set_paused(&mut self, paused: bool) {
        let now = Instant::now();
        self.sync_since = now;
        self.transport.paused = paused;
        if paused {
            self.clock.pause(now);
            self.cancel_timer();
        } else if self.on_schedule() {
            // Back where the schedule stands now.
            self.join_schedule();
            return;
        } else {
            let media = self.clock.now(now);
            self.clock.resume(now);
            // A seek in flight starts the sound when its frame is shown.
            if !self.transport.preroll {
                let start = self.playback_start(now, now);
                self.clock.set(media, start);
                if let Some(audio) = &self.audio {
                    audio.play_from(media, start);
                }
                return;
            }
        }
        if let Some(audio) = &self.audio {
            audio.set_playing(false);
        }
    }
}
