//! Window decorations, where the compositor offers
//! `zxdg_decoration_manager_v1` (sctk binds it and makes the window's
//! decoration object): a window asks the compositor for its title bar and
//! borders, as mpv does; fullscreen asks for client-side ones, which reel
//! does not draw, so the picture has none around it.

use smithay_client_toolkit::shell::xdg::window::{DecorationMode, Window};
use tracing::debug;

pub(super) fn wanted(fullscreen: bool) -> DecorationMode {
    if fullscreen {
        DecorationMode::Client
    } else {
        DecorationMode::Server
    }
}

/// Asks for the mode fitting `fullscreen` unless it was the last asked
/// (asking at every configure would make the compositor configure again).
pub(super) fn request(window: &Window, last: &mut Option<DecorationMode>, fullscreen: bool) {
    let mode = wanted(fullscreen);
    if *last != Some(mode) {
        debug!(?mode, "window decorations asked for");
        window.request_decoration_mode(Some(mode));
        *last = Some(mode);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fullscreen_asks_for_none_from_the_compositor() {
        assert_eq!(wanted(true), DecorationMode::Client);
        assert_eq!(wanted(false), DecorationMode::Server);
    }
}
