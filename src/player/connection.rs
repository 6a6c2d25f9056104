//! A source's connection as the viewer and mpv's clients see it: while a
//! network source reconnects, the OSD says so (the last picture stays)
//! and the IPC's cache properties say playback waits for it
//! (`paused-for-cache`, `cache-buffering-state`); what is read ahead
//! (`demuxer-cache-duration`), and whether the source is a network one
//! (`demuxer-via-network`).

use std::time::{Duration, Instant};

use tracing::info;

use super::ipc::properties::CacheState;
use super::Player;
use crate::media::location::Location;

/// "Reconnecting" stays on screen until the source is back.
const UNTIL_BACK: Duration = Duration::from_secs(24 * 3600);
/// "Reconnected" shows this long.
const BACK_FOR: Duration = Duration::from_secs(2);

impl Player {
    /// Tells the viewer when the source loses its connection and when it
    /// has it again (the source wakes the loop at each change).
    pub(super) fn follow_connection(&mut self) {
        let reconnecting = self.source.as_ref().is_some_and(|s| s.reconnecting());
        if reconnecting == self.reconnecting_shown {
            return;
        }
        self.reconnecting_shown = reconnecting;
        let now = Instant::now();
        if reconnecting {
            info!(
                osd = "Reconnecting",
                "the source is reconnecting: playback waits for it"
            );
            self.osd.show_message(now, "Reconnecting", UNTIL_BACK);
        } else if self.source.is_some() {
            info!(osd = "Reconnected", "the source is back");
            self.osd.show_message(now, "Reconnected", BACK_FOR);
        } else {
            // The file was closed while it reconnected.
            self.osd.show_message(now, "", Duration::ZERO);
        }
    }

    /// mpv's cache properties for the file playing.
    pub(super) fn cache_state(&self) -> CacheState {
        let epoch = self.transport.epoch;
        let ahead = self
            .source
            .as_ref()
            .and_then(|source| source.newest_frame(epoch))
            .map_or(0.0, |newest| {
                newest
                    .saturating_sub(self.transport.position())
                    .as_secs_f64()
            });
        CacheState {
            via_network: self
                .playlist
                .files
                .get(self.playlist.index)
                .is_some_and(|path| Location::of(path).is_url()),
            paused_for_cache: self.reconnecting_shown,
            ahead,
        }
    }
}
