//! The mouse cursor over the video: hidden after a second without motion,
//! and always in fullscreen (wl_pointer.set_cursor with no surface); shown
//! again (the theme's default arrow) when the pointer moves in a window.
//!
//! [`CursorPolicy`] decides from what the pointer did; `State::apply_cursor`
//! sends what it decides. The player wakes the display at
//! [`CursorPolicy::hide_deadline`] so that an idle cursor disappears without
//! an event from the compositor.

use std::time::{Duration, Instant};

/// How long the cursor stays after the pointer last moved over a window.
pub const CURSOR_IDLE: Duration = Duration::from_secs(1);

/// What to ask of the compositor for the pointer over the video surface.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum CursorRequest {
    Show,
    Hide,
}

#[derive(Debug, Default)]
pub(super) struct CursorPolicy {
    /// The pointer is over the video surface (between enter and leave).
    over_surface: bool,
    last_motion: Option<Instant>,
    fullscreen: bool,
    /// What was last asked since the pointer entered (`None`: nothing; a
    /// compositor expects the cursor set again at each enter).
    applied: Option<CursorRequest>,
}

impl CursorPolicy {
    pub(super) fn entered(&mut self, now: Instant) {
        self.over_surface = true;
        self.last_motion = Some(now);
        self.applied = None;
    }

    pub(super) fn left(&mut self) {
        self.over_surface = false;
        self.applied = None;
    }

    /// Motion, a button or a scroll over the surface.
    pub(super) fn moved(&mut self, now: Instant) {
        self.last_motion = Some(now);
    }

    pub(super) fn set_fullscreen(&mut self, fullscreen: bool) {
        self.fullscreen = fullscreen;
    }

    fn wanted(&self, now: Instant) -> CursorRequest {
        let recent = self
            .last_motion
            .is_some_and(|at| now.saturating_duration_since(at) < CURSOR_IDLE);
        if recent && !self.fullscreen {
            CursorRequest::Show
        } else {
            CursorRequest::Hide
        }
    }

    /// The request to send now, if what is on screen should change.
    pub(super) fn update(&mut self, now: Instant) -> Option<CursorRequest> {
        if !self.over_surface {
            return None;
        }
        let wanted = self.wanted(now);
        if self.applied == Some(wanted) {
            return None;
        }
        self.applied = Some(wanted);
        Some(wanted)
    }

    /// When the cursor shown now is due to disappear.
    pub(super) fn hide_deadline(&self) -> Option<Instant> {
        if !self.over_surface || self.applied != Some(CursorRequest::Show) {
            return None;
        }
        self.last_motion.map(|at| at + CURSOR_IDLE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_still_pointer_hides_the_cursor_after_a_second_and_motion_brings_it_back() {
        let t0 = Instant::now();
        let mut policy = CursorPolicy::default();
        assert_eq!(policy.update(t0), None, "not over the surface");
        policy.entered(t0);
        assert_eq!(policy.update(t0), Some(CursorRequest::Show));
        assert_eq!(policy.update(t0), None, "sent once");
        assert_eq!(policy.hide_deadline(), Some(t0 + CURSOR_IDLE));
        let t1 = t0 + Duration::from_millis(600);
        policy.moved(t1);
        assert_eq!(policy.update(t1 + Duration::from_millis(500)), None);
        assert_eq!(policy.hide_deadline(), Some(t1 + CURSOR_IDLE));
        assert_eq!(policy.update(t1 + CURSOR_IDLE), Some(CursorRequest::Hide));
        assert_eq!(policy.hide_deadline(), None);
        let t2 = t1 + Duration::from_secs(5);
        policy.moved(t2);
        assert_eq!(policy.update(t2), Some(CursorRequest::Show));
    }

    #[test]
    fn fullscreen_always_hides_and_each_enter_sets_the_cursor_again() {
        let t0 = Instant::now();
        let mut policy = CursorPolicy::default();
        policy.set_fullscreen(true);
        policy.entered(t0);
        assert_eq!(policy.update(t0), Some(CursorRequest::Hide));
        policy.moved(t0);
        assert_eq!(policy.update(t0), None);
        assert_eq!(policy.hide_deadline(), None);
        policy.left();
        assert_eq!(policy.update(t0), None);
        policy.entered(t0);
        assert_eq!(policy.update(t0), Some(CursorRequest::Hide));
        // Leaving fullscreen with a recent motion shows it.
        policy.set_fullscreen(false);
        assert_eq!(policy.update(t0), Some(CursorRequest::Show));
    }
}
