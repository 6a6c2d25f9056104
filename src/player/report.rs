//! Reports: one reading of the player's counters ([`Tally`]) that each
//! report formats, by the names it gives them: the control socket's
//! `status` reply, the `reel: stats:` line of `--stats`, and the OSD
//! (where playback stands, and its stats page).

use std::time::Instant;

use tracing::warn;

use super::clock::AvOffset;
use super::frame_decoder::DamageCounts;
use super::{window_title, Player};
use crate::display::{DisplayError, PresentStats};
use crate::frame::{DecoderKind, FrameStorage};
use crate::negotiation::Negotiation;
use crate::osd::text::{Playback, Stats};

/// What the player itself counts (the display and the decoders count the
/// rest of a [`Tally`]).
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Counters {
    pub(super) presented: u64,
    pub(super) dropped_late: u64,
    /// Turns of the event loop: how often the main thread woke.
    pub(super) wakeups: u64,
    /// What woke it: the frame timer, the compositor's events, the decode
    /// thread (one turn may have several).
    pub(super) woken_by_timer: u64,
    pub(super) woken_by_compositor: u64,
    pub(super) woken_by_decoder: u64,
    /// The largest and the last distance, in µs, of a frame's presentation
    /// (the compositor's feedback) from its time on the clock (on a
    /// schedule, `--sync-epoch`, its time on the schedule).
    pub(super) presentation_error_max_us: u64,
    pub(super) presentation_error_last_us: u64,
    /// Frames that reached the screen more than two refreshes from their
    /// time (mpv's `mistimed-frame-count` in spirit): one late frame under
    /// load shows in the maximum, a clock or pacing fault in this count.
    pub(super) mistimed_frames: u64,
}

/// Every counter the player reports, read at one moment.
#[derive(Debug, Clone, Copy)]
pub(super) struct Tally {
    counters: Counters,
    display: PresentStats,
    damage: DamageCounts,
    /// The decoder of the last frame shown (the last file's).
    decoder: Option<DecoderKind>,
    av_offset: AvOffset,
}

/// The counters of the control socket's `status` reply, in its order: the
/// playback's, then (after the frame and OSD words) the presentation's.
const STATUS_PLAYBACK: &[&str] = &[
    "presented",
    "dropped",
    "decode_errors",
    "frames_skipped",
    "presentation_error_max_us",
    "presentation_error_last_us",
];
const STATUS_PRESENTATION: &[&str] = &[
    "zero_copy_frames",
    "copy_frames",
    "dmabuf_frames",
    "shm_frames",
    "zero_copy_buffers",
    "copy_buffers",
    "wl_buffers",
    "wl_buffers_held",
];
/// The counters of the `reel: stats:` line, in its order.
const STATS_LINE: &[&str] = &[
    "presented",
    "dropped_late",
    "wakeups",
    "woken_by_timer",
    "woken_by_compositor",
    "woken_by_decoder",
    "zero_copy_frames",
    "copy_frames",
    "zero_copy_buffers",
    "dmabuf_frames",
    "shm_frames",
    "shown",
    "discarded",
    "buffers_allocated",
    "buffers_released",
    "dropped_no_buffer",
    "decode_errors",
    "frames_skipped",
    "presentation_error_max_us",
    "mistimed_frames",
    "decoder",
];

impl Tally {
    /// Frames the CPU copied, into a dmabuf or into wl_shm.
    fn copied_frames(&self) -> u64 {
        self.display.frames_dmabuf + self.display.frames_shm
    }

    /// Frames not shown at all: too late, or dropped by the display.
    fn dropped_in_all(&self) -> u64 {
        self.counters.dropped_late + self.display.frames_dropped
    }

    /// One counter, by the name the reports give it.
    fn value(&self, name: &str) -> String {
        let (c, d) = (&self.counters, &self.display);
        let number = match name {
            "presented" => c.presented,
            // The player's own drops: `status` and `--stats` name them
            // differently.
            "dropped" | "dropped_late" => c.dropped_late,
            "wakeups" => c.wakeups,
            "woken_by_timer" => c.woken_by_timer,
            "woken_by_compositor" => c.woken_by_compositor,
            "woken_by_decoder" => c.woken_by_decoder,
            "presentation_error_max_us" => c.presentation_error_max_us,
            "presentation_error_last_us" => c.presentation_error_last_us,
            "mistimed_frames" => c.mistimed_frames,
            "zero_copy_frames" => d.frames_zero_copy,
            "copy_frames" => self.copied_frames(),
            "dmabuf_frames" => d.frames_dmabuf,
            "shm_frames" => d.frames_shm,
            "zero_copy_buffers" => d.buffers_zero_copy,
            "copy_buffers" | "buffers_allocated" => d.buffers_allocated,
            "buffers_released" => d.buffers_released,
            "wl_buffers" => d.live_now as u64,
            "wl_buffers_held" => d.held_now as u64,
            "shown" => d.frames_shown,
            "discarded" => d.frames_discarded,
            // Every frame the display dropped (no buffer free, or not ready).
            "dropped_no_buffer" => d.frames_dropped,
            "decode_errors" => self.damage.decode_errors,
            "frames_skipped" => self.damage.frames_skipped,
            "decoder" => {
                return self
                    .decoder
                    .map_or("none".to_owned(), |decoder| decoder.to_string())
            }
            _ => unreachable!("no counter named {name}"),
        };
        number.to_string()
    }

    /// `name=value` words of `names`.
    fn words(&self, names: &[&str]) -> String {
        let words: Vec<String> = names
            .iter()
            .map(|name| format!("{name}={}", self.value(name)))
            .collect();
        words.join(" ")
    }

    /// The `reel: stats:` line `--stats` prints at exit.
    fn stats_line(&self) -> String {
        format!("reel: stats: {} {}", self.words(STATS_LINE), self.av_offset)
    }
}

impl Player {
    /// Every counter, now.
    pub(super) fn tally(&self) -> Tally {
        Tally {
            counters: self.counters,
            display: self.display.stats(),
            damage: self.damage.get(),
            decoder: self.transport.shown.map(|shown| shown.decoder),
            av_offset: self.av_offset,
        }
    }

    /// The control socket's `status` reply: `key=value` words.
    pub(super) fn status(&self) -> String {
        let state = if self.quitting {
            "quitting"
        } else if self.playlist.loaded.is_none() {
            "idle"
        } else if self.transport.seek_target.is_some() {
            "seeking"
        } else if self.transport.at_end() {
            "ended"
        } else if self.transport.paused {
            "paused"
        } else {
            "playing"
        };
        let tally = self.tally();
        let file = match self.playlist.loaded {
            Some(_) => window_title(self.playlist.current()),
            None => "none".to_string(),
        };
        let mut reply = format!(
            "state={state} position={:.6} file={file} index={}/{} epoch={} {}",
            self.transport.position().as_secs_f64(),
            self.playlist.index + 1,
            self.playlist.len(),
            self.transport.epoch,
            tally.words(STATUS_PLAYBACK),
        );
        if let Some(shown) = self.transport.shown {
            reply.push_str(&format!(
                " width={} height={} format={} decoder={}",
                shown.width, shown.height, shown.format, shown.decoder
            ));
        }
        reply.push_str(&format!(
            " osd_level={} osd_redraws={} {} fullscreen={} volume={} mute={} speed={} {}",
            self.osd.level().number(),
            self.osd.redraws(),
            tally.words(STATUS_PRESENTATION),
            self.display.is_fullscreen(),
            self.volume.percent,
            if self.volume.muted { "yes" } else { "no" },
            self.speed(),
            tally.av_offset,
        ));
        reply
    }

    /// `--stats`: the counters at exit, on stderr.
    pub(super) fn print_stats(&self) {
        eprintln!("{}", self.tally().stats_line());
    }

    /// Where playback stands, for the OSD (None: nothing loaded).
    fn playback(&self) -> Option<Playback> {
        self.playlist.loaded?;
        Some(Playback {
            position: self
                .transport
                .seek_target
                .unwrap_or_else(|| self.transport.position()),
            duration: self.file_duration,
            paused: self.transport.paused,
            frame_rate: self.file_frame_rate,
            pts: self.on_screen.as_ref().map(|f| f.pts),
            file_name: window_title(self.playlist.current()),
            index: self.playlist.index + 1,
            count: self.playlist.len(),
        })
    }

    /// The stats page's facts.
    fn osd_stats(&self) -> Stats {
        let tally = self.tally();
        let frame = self.on_screen.as_ref();
        let decoder = match (&self.decoder_opened, frame.map(|f| f.decoder)) {
            (Some((kind, text)), Some(now)) if *kind != now => {
                format!("{now} (took over from {text})")
            }
            (Some((_, text)), _) => text.clone(),
            (None, _) => "none".into(),
        };
        let coded = frame.map(|f| match &f.storage {
            FrameStorage::Dmabuf(d) => (d.coded_width, d.coded_height),
            FrameStorage::Cpu(_) => (f.width, f.height),
        });
        Stats {
            decoder,
            codec: self.codec_summary.clone(),
            visible: frame.map(|f| (f.width, f.height)),
            coded,
            path: self
                .display
                .presentation_path()
                .unwrap_or_else(|| "none yet".into()),
            negotiated: self
                .negotiator
                .as_ref()
                .and_then(|negotiator| negotiator.current())
                .map(|n: Negotiation| n.to_string()),
            presented: tally.counters.presented,
            dropped: tally.dropped_in_all(),
            decode_errors: tally.damage.decode_errors,
            frame_time: self.frame_time,
            av_offset: self
                .audio
                .as_ref()
                .and(tally.av_offset.mean())
                .map(|mean| (mean, tally.av_offset.max())),
        }
    }

    /// Draws what the OSD says now, and wakes the loop when an event's
    /// text is due to go.
    pub(super) fn update_osd(&mut self) {
        let now = Instant::now();
        let playback = self.osd.wants_text(now).then(|| self.playback()).flatten();
        let fresh = self
            .osd
            .stats_due(now, self.transport.paused)
            .then(|| self.osd_stats());
        let lines = self.osd.lines(now, playback.as_ref(), fresh);
        if let Err(e) = self.osd.draw(self.display.as_mut(), lines) {
            if matches!(e, DisplayError::Wayland(_) | DisplayError::Dispatch(_)) {
                self.compositor_lost(&e);
                return;
            }
            warn!("OSD not shown: {e}");
        }
        if let Some(deadline) = self.osd.deadline(now) {
            self.arm_timer(deadline);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tally() -> Tally {
        Tally {
            counters: Counters {
                presented: 10,
                dropped_late: 2,
                ..Counters::default()
            },
            display: PresentStats {
                frames_zero_copy: 7,
                frames_dmabuf: 2,
                frames_shm: 1,
                frames_dropped: 3,
                ..PresentStats::default()
            },
            damage: DamageCounts::default(),
            decoder: None,
            av_offset: AvOffset::default(),
        }
    }

    #[test]
    fn every_report_names_known_counters() {
        let tally = tally();
        for names in [STATUS_PLAYBACK, STATUS_PRESENTATION, STATS_LINE] {
            tally.words(names);
        }
    }

    #[test]
    fn the_stats_line_counts_as_before() {
        let line = tally().stats_line();
        assert!(line.starts_with("reel: stats: presented=10 dropped_late=2 "));
        assert!(line.contains(" zero_copy_frames=7 copy_frames=3 "));
        assert!(line.contains(" dropped_no_buffer=3 "));
        assert!(line.contains(" decoder=none av_offset_mean_ms=none"));
        assert_eq!(tally().dropped_in_all(), 5);
    }
}
