//! The player's side of the OSD: what shows now (the level, `o` and `i`,
//! a moment after a seek, pause, step or file change), drawn on the
//! screen's overlay only when its text, size or scale changes.

use std::time::{Duration, Instant};

use tracing::{debug, warn};

use super::screen::Screen;
use crate::display::{DisplayError, OVERLAY_MARGIN};
use crate::osd::raster::TextRenderer;
use crate::osd::text::{self, Playback, Stats};
use crate::osd::{font, OsdLevel};

/// How long an event's text stays (mpv's `--osd-duration`).
pub const EVENT_DURATION: Duration = Duration::from_secs(1);
/// The smallest text drawn to fit a narrow window.
const MIN_TEXT_SIZE: f32 = 8.0;
/// The stats page's counters refresh this often while playing.
const STATS_REFRESH: Duration = Duration::from_secs(1);

enum Renderer {
    Untried,
    Ready(TextRenderer),
    /// No font: said once, and the OSD stays off.
    Unavailable,
}

/// What the overlay shows: lines at a text size and buffer scale, fitted
/// into a window so wide.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Drawn {
    lines: Vec<String>,
    size: u32,
    scale: u32,
    window_width: Option<u32>,
}

pub struct Osd {
    level: OsdLevel,
    stats_page: bool,
    /// Until when an event's text shows, and whether a file change is in it.
    event: Option<(Instant, bool)>,
    /// A client's text (mpv's `show-text`) and until when it shows.
    message: Option<(Instant, String)>,
    renderer: Renderer,
    drawn: Option<Drawn>,
    /// The stats page's facts and when they were gathered.
    stats: Option<(Instant, Stats)>,
    redraws: u64,
}

/// Text size in surface pixels for a window `height` pixels high: a
/// twentieth of it, within reason.
pub fn text_size(height: Option<u32>) -> u32 {
    height.map_or(24, |h| (h / 20).clamp(16, 48))
}

impl Osd {
    pub fn new(level: OsdLevel) -> Self {
        Self {
            level,
            stats_page: false,
            event: None,
            message: None,
            renderer: Renderer::Untried,
            drawn: None,
            stats: None,
            redraws: 0,
        }
    }

    pub fn level(&self) -> OsdLevel {
        self.level
    }

    pub fn set_level(&mut self, level: OsdLevel) {
        self.level = level;
    }

    /// `o`: the status on for good, or back to events only (mpv's `O`).
    pub fn toggle_status(&mut self) {
        self.level = if self.level == OsdLevel::Status {
            OsdLevel::Events
        } else {
            OsdLevel::Status
        };
    }

    /// `i`: the stats page on or off.
    pub fn toggle_stats(&mut self) {
        self.stats_page = !self.stats_page;
        self.stats = None;
    }

    /// A seek, pause, step or (`file_changed`) a new file: its text shows
    /// for [`EVENT_DURATION`].
    pub fn event(&mut self, now: Instant, file_changed: bool) {
        let still_naming_file = self.event.is_some_and(|(until, file)| file && until > now);
        self.event = Some((now + EVENT_DURATION, file_changed || still_naming_file));
    }

    /// `text` on screen for `duration`, in place of the level's text (mpv's
    /// `show-text`); the stats page, when on, stays on top of it.
    pub fn show_message(&mut self, now: Instant, text: &str, duration: Duration) {
        self.message = Some((now + duration, text.to_string()));
    }

    fn message_at(&self, now: Instant) -> Option<&str> {
        self.message
            .as_ref()
            .filter(|(until, _)| *until > now)
            .map(|(_, text)| text.as_str())
    }

    /// The frame a seek or step asked for is on screen: its text stays a
    /// full [`EVENT_DURATION`] from now.
    pub fn landed(&mut self, now: Instant) {
        if let Some((until, file)) = self.event {
            if until > now {
                self.event = Some((now + EVENT_DURATION, file));
            }
        }
    }

    /// Times the overlay was drawn (a new text, size or scale).
    pub fn redraws(&self) -> u64 {
        self.redraws
    }

    /// When the text changes by itself next (an event's ends).
    pub fn deadline(&self, now: Instant) -> Option<Instant> {
        let event = self.event.map(|(until, _)| until).filter(|&t| t > now);
        let message = self.message.as_ref().map(|(until, _)| *until);
        event.into_iter().chain(message).filter(|&t| t > now).min()
    }

    /// Whether anything is to show now: the player gathers the facts only
    /// then, not for every frame the OSD would leave hidden.
    pub fn wants_text(&self, now: Instant) -> bool {
        self.stats_page
            || self.message_at(now).is_some()
            || self.level == OsdLevel::Status
            || (self.level == OsdLevel::Events && self.event.is_some_and(|(until, _)| until > now))
    }

    /// Whether the stats page wants its facts gathered afresh: it shows,
    /// and they are older than a second (playing) or it is paused.
    pub fn stats_due(&self, now: Instant, paused: bool) -> bool {
        self.stats_page
            && self
                .stats
                .as_ref()
                .is_none_or(|(at, _)| paused || now.duration_since(*at) >= STATS_REFRESH)
    }

    /// The lines due now (none: hidden); `fresh` are the stats page's
    /// facts when [`Osd::stats_due`] asked for them.
    pub fn lines(
        &mut self,
        now: Instant,
        playback: Option<&Playback>,
        fresh: Option<Stats>,
    ) -> Vec<String> {
        if let Some(stats) = fresh {
            self.stats = Some((now, stats));
        }
        if self.event.is_some_and(|(until, _)| until <= now) {
            self.event = None;
        }
        if self.message_at(now).is_none() {
            self.message = None;
        }
        if let Some(text) = self.message_at(now).filter(|_| !self.stats_page) {
            return text.lines().map(str::to_string).collect();
        }
        let Some(p) = playback else {
            return if self.stats_page {
                vec!["idle".into()]
            } else {
                Vec::new()
            };
        };
        if self.stats_page {
            let facts = self
                .stats
                .as_ref()
                .map(|(_, s)| s.clone())
                .unwrap_or_default();
            return text::stats_lines(p, &facts);
        }
        match (self.level, self.event) {
            (OsdLevel::Status, _) => text::status_lines(p),
            (OsdLevel::Events, Some((_, file_changed))) => text::event_lines(p, file_changed),
            _ => Vec::new(),
        }
    }

    /// Shows `lines` on the screen's overlay if they differ from what it
    /// shows; hides it for none.
    pub fn draw(
        &mut self,
        screen: &mut dyn Screen,
        lines: Vec<String>,
    ) -> Result<(), DisplayError> {
        if !screen.has_overlay() {
            return Ok(());
        }
        if lines.is_empty() {
            if self.drawn.take().is_some() {
                screen.show_overlay(None)?;
            }
            return Ok(());
        }
        let surface = screen.surface_size();
        let wanted = Drawn {
            lines,
            size: text_size(surface.map(|(_, h)| h)),
            scale: screen.overlay_scale(),
            window_width: surface.map(|(w, _)| w),
        };
        if self.drawn.as_ref() == Some(&wanted) {
            return Ok(());
        }
        let Some(renderer) = self.renderer() else {
            return Ok(());
        };
        let mut image = renderer.render(&wanted.lines, wanted.size as f32, wanted.scale);
        // Too wide for the window: smaller text, in proportion.
        let room = wanted
            .window_width
            .map(|w| w.saturating_sub(2 * OVERLAY_MARGIN).max(1));
        let shown_width = image.width / wanted.scale;
        if let Some(room) = room.filter(|&room| shown_width > room) {
            let fitted = (wanted.size as f32 * room as f32 / shown_width as f32).floor();
            image = renderer.render(&wanted.lines, fitted.max(MIN_TEXT_SIZE), wanted.scale);
        }
        screen.show_overlay(Some(&image))?;
        self.redraws += 1;
        debug!(lines = ?wanted.lines, size = wanted.size, scale = wanted.scale, "osd text");
        self.drawn = Some(wanted);
        Ok(())
    }

    fn renderer(&mut self) -> Option<&TextRenderer> {
        if let Renderer::Untried = self.renderer {
            self.renderer = match font::locate() {
                Some(path) => match TextRenderer::open(&path) {
                    Ok(renderer) => Renderer::Ready(renderer),
                    Err(e) => {
                        warn!("no OSD: {e}");
                        Renderer::Unavailable
                    }
                },
                None => {
                    warn!(
                        "no OSD: DejaVu Sans Mono not found (looked for {}); install fonts-dejavu-core",
                        font::searched()
                    );
                    Renderer::Unavailable
                }
            };
        }
        match &self.renderer {
            Renderer::Ready(renderer) => Some(renderer),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn playback(paused: bool) -> Playback {
        Playback {
            position: Duration::from_secs(2),
            duration: Some(Duration::from_secs(10)),
            paused,
            frame_rate: Some(25.0),
            pts: Some(Duration::from_secs(2)),
            file_name: "a.mp4".into(),
            index: 1,
            count: 1,
        }
    }

    #[test]
    fn events_show_for_a_second_at_level_1_and_never_at_level_0() {
        let t0 = Instant::now();
        let p = playback(true);
        let mut osd = Osd::new(OsdLevel::Events);
        assert!(!osd.wants_text(t0));
        assert!(osd.lines(t0, Some(&p), None).is_empty());
        osd.event(t0, false);
        assert!(osd.wants_text(t0));
        assert_eq!(osd.deadline(t0), Some(t0 + EVENT_DURATION));
        assert_eq!(osd.lines(t0, Some(&p), None).len(), 1);
        // The seek's frame lands later: a full second from then.
        let landed = t0 + Duration::from_millis(600);
        osd.landed(landed);
        let later = t0 + Duration::from_millis(1500);
        assert_eq!(osd.lines(later, Some(&p), None).len(), 1);
        let after = landed + EVENT_DURATION;
        assert!(osd.lines(after, Some(&p), None).is_empty());
        assert!(!osd.wants_text(after));
        assert_eq!(osd.deadline(after), None);

        let mut off = Osd::new(OsdLevel::Off);
        off.event(t0, true);
        assert!(off.lines(t0, Some(&p), None).is_empty());
    }

    #[test]
    fn o_toggles_the_status_and_i_the_stats_page() {
        let t0 = Instant::now();
        let p = playback(true);
        let mut osd = Osd::new(OsdLevel::Off);
        osd.toggle_status();
        assert_eq!(osd.level(), OsdLevel::Status);
        let lines = osd.lines(t0, Some(&p), None);
        assert_eq!(lines[1], "frame 50  pts 2.000000");
        osd.toggle_status();
        assert_eq!(osd.level(), OsdLevel::Events);
        assert!(!osd.stats_due(t0, true));
        osd.toggle_stats();
        assert!(osd.stats_due(t0, false));
        let fresh = Stats {
            decoder: "software".into(),
            ..Stats::default()
        };
        let stats = osd.lines(t0, Some(&p), Some(fresh));
        assert!(
            stats.contains(&"decoder: software".to_string()),
            "{stats:?}"
        );
        // Playing, the facts are gathered once a second; paused, always.
        assert!(!osd.stats_due(t0 + Duration::from_millis(900), false));
        assert!(osd.stats_due(t0 + Duration::from_millis(1000), false));
        assert!(osd.stats_due(t0, true));
        let again = osd.lines(t0, Some(&playback(false)), None);
        assert!(again.contains(&"decoder: software".to_string()));
        osd.toggle_stats();
        assert!(osd.lines(t0, Some(&p), None).is_empty());
    }

    #[test]
    fn a_file_change_is_named_until_its_event_ends() {
        let t0 = Instant::now();
        let p = playback(false);
        let mut osd = Osd::new(OsdLevel::Events);
        osd.event(t0, true);
        osd.event(t0 + Duration::from_millis(100), false);
        assert_eq!(osd.lines(t0, Some(&p), None)[0], "file 1/1 a.mp4");
    }

    #[test]
    fn text_grows_with_the_window() {
        assert_eq!(text_size(Some(240)), 16);
        assert_eq!(text_size(Some(720)), 36);
        assert_eq!(text_size(Some(4320)), 48);
        assert_eq!(text_size(None), 24);
    }
}
