//! A live network source that fails mid-play (a read error, or an end,
//! which a live stream does not have) is opened again, after 1, 2, 4 ...
//! up to 30 seconds, until it answers or reel quits; the player meanwhile
//! keeps the last picture, since no frame comes.

use std::time::Duration;

use super::super::location::Location;
use super::super::network;
use super::super::MediaError;
use super::{discard_other_streams, pick_video_stream, FfmpegDemuxer, InputIo};

const FIRST_WAIT: Duration = Duration::from_secs(1);
const LONGEST_WAIT: Duration = Duration::from_secs(30);

impl FfmpegDemuxer {
    /// A network source without a duration: one to reconnect to when it
    /// fails (a file of known length ends, or fails, as a file does).
    pub(super) fn is_live_network(&self) -> bool {
        matches!(self._io, InputIo::Network { .. }) && self.info.duration.is_none()
    }

    /// Opens the source again until it answers with a stream of the same
    /// codec; an error when it comes back as another or reel quits.
    pub(super) fn reconnect(&mut self, why: &str) -> Result<(), MediaError> {
        let name = self.path.to_string_lossy().into_owned();
        let Location::Url { url, scheme } = Location::of(std::path::Path::new(&name)) else {
            return Err(MediaError::Read(format!("{name}: {why}")));
        };
        self.cancel.set_reconnecting(true);
        let reconnected = self.reconnect_with_backoff(url, scheme, why);
        self.cancel.set_reconnecting(false);
        reconnected
    }

    fn reconnect_with_backoff(
        &mut self,
        url: &str,
        scheme: super::super::location::Scheme,
        why: &str,
    ) -> Result<(), MediaError> {
        let mut wait = FIRST_WAIT;
        loop {
            tracing::warn!("{url}: {why}: reconnecting in {} s", wait.as_secs());
            network::sleep_unless_cancelled(wait, &self.cancel)?;
            match network::open(url, scheme, &self.cancel) {
                Ok(opened) => {
                    let (input, session) = opened.into_parts();
                    let (index, codec) = pick_video_stream(&input, &self.path)?;
                    if codec != self.info.codec {
                        return Err(MediaError::Read(format!(
                            "{url}: came back as {codec}, not {}",
                            self.info.codec
                        )));
                    }
                    // The old input goes first, then the session its hooks read.
                    self.input = input;
                    self._io = InputIo::Network { _session: session };
                    self.info.index = index;
                    self.enabled.clear();
                    discard_other_streams(&mut self.input, index);
                    tracing::warn!("{url}: reconnected");
                    return Ok(());
                }
                Err(e) => {
                    tracing::warn!("{e}");
                    wait = (wait * 2).min(LONGEST_WAIT);
                }
            }
        }
    }
}
