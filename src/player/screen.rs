//! Where the player shows frames: a Wayland window, or nowhere
//! (`--output null` under remote control, paced in real time as mpv's
//! `--vo=null` is, so a controller sees playback as it would on screen).

use crate::display::dmabuf_formats::FeedbackError;
use crate::display::vblank::Aim;
use crate::display::{
    CompositorFormats, Display, DisplayError, DisplayEvent, PresentStats, Presented,
};
use crate::frame::{BufferId, Frame};
use crate::osd::OverlayImage;
use std::time::{Duration, Instant};

pub trait Screen {
    fn dispatch(&mut self) -> Result<(), DisplayError>;
    fn take_events(&mut self) -> Vec<DisplayEvent>;
    fn flush(&mut self) -> Result<(), DisplayError>;
    fn ready_for_frame(&self) -> bool;
    fn set_title(&mut self, title: &str);
    fn set_fullscreen(&mut self, on: bool);
    fn is_fullscreen(&self) -> bool;
    fn stats(&self) -> PresentStats;
    fn present(&mut self, frame: &Frame) -> Result<(), DisplayError>;
    /// What the compositor takes (None with no compositor).
    fn compositor_formats(&self) -> Option<Result<CompositorFormats, FeedbackError>>;
    /// Keeps the screen from blanking (while playing) or lets it.
    fn set_idle_inhibited(&mut self, inhibit: bool);
    /// When a still cursor is to be hidden, if it is shown.
    fn cursor_deadline(&self) -> Option<Instant>;
    /// Hides or shows the cursor as its policy says now.
    fn update_cursor(&mut self);
    /// Whether an OSD can be shown above the frames.
    fn has_overlay(&self) -> bool;
    /// The scale the OSD is drawn at.
    fn overlay_scale(&self) -> u32;
    /// Shows the OSD's image above the frames (None: hides it).
    fn show_overlay(&mut self, image: Option<&OverlayImage>) -> Result<(), DisplayError>;
    /// Shows the subtitles' image over the window, below the OSD (None:
    /// hides it); nowhere to show them, nothing done.
    fn show_subtitles(&mut self, _image: Option<&OverlayImage>) -> Result<(), DisplayError> {
        Ok(())
    }
    /// The window's size in surface pixels, once a frame set it.
    fn surface_size(&self) -> Option<(u32, u32)>;
    /// How the last frame reached the screen, in words.
    fn presentation_path(&self) -> Option<String>;
    /// The frames the compositor reported shown since the last call.
    fn take_presented(&mut self) -> Vec<Presented>;
    /// Where a frame committed now is aimed (None: unknown, a frame is
    /// shown when it is due).
    fn next_vblank(&self, now: Instant) -> Option<Aim>;
    /// Drops the imports of decoder buffers of allocation `generation` and
    /// older, but those of `kept` (frames hold them) and those the
    /// compositor holds (they go at their release).
    fn retire_imports_through(
        &mut self,
        _generation: u64,
        _kept: &[BufferId],
    ) -> Result<(), DisplayError> {
        Ok(())
    }
}

impl Screen for Display {
    fn dispatch(&mut self) -> Result<(), DisplayError> {
        Display::dispatch(self)
    }
    fn take_events(&mut self) -> Vec<DisplayEvent> {
        Display::take_events(self)
    }
    fn flush(&mut self) -> Result<(), DisplayError> {
        Display::flush(self)
    }
    fn ready_for_frame(&self) -> bool {
        Display::ready_for_frame(self)
    }
    fn set_title(&mut self, title: &str) {
        Display::set_title(self, title)
    }
    fn set_fullscreen(&mut self, on: bool) {
        Display::set_fullscreen(self, on)
    }
    fn is_fullscreen(&self) -> bool {
        Display::is_fullscreen(self)
    }
    fn stats(&self) -> PresentStats {
        Display::stats(self)
    }
    fn present(&mut self, frame: &Frame) -> Result<(), DisplayError> {
        Display::present(self, frame)
    }
    fn compositor_formats(&self) -> Option<Result<CompositorFormats, FeedbackError>> {
        Some(Display::compositor_formats(self))
    }
    fn set_idle_inhibited(&mut self, inhibit: bool) {
        Display::set_idle_inhibited(self, inhibit)
    }
    fn cursor_deadline(&self) -> Option<Instant> {
        Display::cursor_deadline(self)
    }
    fn update_cursor(&mut self) {
        Display::update_cursor(self)
    }
    fn has_overlay(&self) -> bool {
        Display::has_overlay(self)
    }
    fn overlay_scale(&self) -> u32 {
        Display::overlay_scale(self)
    }
    fn show_overlay(&mut self, image: Option<&OverlayImage>) -> Result<(), DisplayError> {
        Display::show_overlay(self, image)
    }
    fn show_subtitles(&mut self, image: Option<&OverlayImage>) -> Result<(), DisplayError> {
        Display::show_subtitles(self, image)
    }
    fn surface_size(&self) -> Option<(u32, u32)> {
        Display::surface_size(self)
    }
    fn presentation_path(&self) -> Option<String> {
        Display::presentation_path(self)
    }
    fn retire_imports_through(
        &mut self,
        generation: u64,
        kept: &[BufferId],
    ) -> Result<(), DisplayError> {
        Display::retire_imports_through(self, generation, kept)
    }
    fn take_presented(&mut self) -> Vec<Presented> {
        Display::take_presented(self)
    }
    fn next_vblank(&self, now: Instant) -> Option<Aim> {
        Display::next_vblank(self, now)
    }
}

/// No window: frames are counted and let go. Fullscreen is only a flag.
#[derive(Default)]
pub struct NullScreen {
    fullscreen: bool,
    stats: PresentStats,
    presented: Vec<Presented>,
}

impl Screen for NullScreen {
    fn dispatch(&mut self) -> Result<(), DisplayError> {
        Ok(())
    }
    fn take_events(&mut self) -> Vec<DisplayEvent> {
        Vec::new()
    }
    fn flush(&mut self) -> Result<(), DisplayError> {
        Ok(())
    }
    fn ready_for_frame(&self) -> bool {
        true
    }
    fn set_title(&mut self, _: &str) {}
    fn set_fullscreen(&mut self, on: bool) {
        self.fullscreen = on;
    }
    fn is_fullscreen(&self) -> bool {
        self.fullscreen
    }
    fn stats(&self) -> PresentStats {
        self.stats
    }
    fn present(&mut self, frame: &Frame) -> Result<(), DisplayError> {
        self.stats.frames_shown += 1;
        // Shown, as far as there is a screen, when let go.
        let now = Instant::now();
        self.presented.push(Presented {
            pts: frame.pts,
            epoch: frame.epoch,
            shown_at: Duration::ZERO,
            shown: Some(now),
            committed: now,
            refresh: Duration::ZERO,
        });
        Ok(())
    }
    fn compositor_formats(&self) -> Option<Result<CompositorFormats, FeedbackError>> {
        None
    }
    fn set_idle_inhibited(&mut self, _: bool) {}
    fn cursor_deadline(&self) -> Option<Instant> {
        None
    }
    fn update_cursor(&mut self) {}
    fn has_overlay(&self) -> bool {
        false
    }
    fn overlay_scale(&self) -> u32 {
        1
    }
    fn show_overlay(&mut self, _: Option<&OverlayImage>) -> Result<(), DisplayError> {
        Ok(())
    }
    fn surface_size(&self) -> Option<(u32, u32)> {
        None
    }
    fn presentation_path(&self) -> Option<String> {
        Some("not shown (no window)".into())
    }
    fn take_presented(&mut self) -> Vec<Presented> {
        std::mem::take(&mut self.presented)
    }
    fn next_vblank(&self, _: Instant) -> Option<Aim> {
        None
    }
}
