//! Gapless playback's sound: the next playlist file's samples queued after
//! the current file's last, on the one output stream. The player holds a
//! `FollowOn` for the entry it made ready ahead; the audio thread opens the
//! file's audio (`NextFile`) once it has decoded the current file to its
//! end.

use std::path::PathBuf;
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::Duration;

use tracing::{debug, warn};

use super::source::{AudioSource, Track};
use super::{Command, Shared};

/// The player's handle on the next file's sound, queued after the current
/// one's: taken over at the file's turn (`Audio::take_over`), its samples
/// dropped from the queue if it is let go before.
pub struct FollowOn {
    pub(super) segment: u64,
    pub(super) shared: Arc<Shared>,
    pub(super) commands: Sender<Command>,
    /// Taken over: nothing to drop.
    pub(super) taken: bool,
}

impl FollowOn {
    /// It follows the sound of `audio`.
    pub fn follows(&self, audio: &super::Audio) -> bool {
        Arc::ptr_eq(&self.shared, &audio.shared)
    }
}

impl Drop for FollowOn {
    fn drop(&mut self) {
        if !self.taken {
            // The thread may have ended: nothing queued then.
            let _ = self.commands.send(Command::Cancel {
                segment: self.segment,
            });
        }
    }
}

/// The next file, as the audio thread keeps it.
pub(super) struct NextFile {
    pub(super) path: PathBuf,
    pub(super) track: Track,
    pub(super) segment: u64,
    /// The current file's media time its sound lasts to at least (the end
    /// of its picture).
    pub(super) previous_end: Option<Duration>,
    source: Option<AudioSource>,
    /// Samples have been decoded from `source`.
    read: bool,
}

impl NextFile {
    pub(super) fn new(
        path: PathBuf,
        track: Track,
        segment: u64,
        previous_end: Option<Duration>,
    ) -> Self {
        Self {
            path,
            track,
            segment,
            previous_end,
            source: None,
            read: false,
        }
    }

    pub(super) fn name(&self) -> String {
        self.path.display().to_string()
    }

    /// Its audio stream, opened on first use; None when it has none or it
    /// cannot be read (said as for a file opened at its turn).
    pub(super) fn source(&mut self) -> Option<&mut AudioSource> {
        if self.source.is_none() {
            match AudioSource::open(&self.path, self.track) {
                Ok(Some(source)) => self.source = Some(source),
                Ok(None) => {
                    debug!("{}: no audio stream", self.name());
                    return None;
                }
                Err(e) => {
                    warn!("{}: {e}: playing without sound", self.name());
                    return None;
                }
            }
        }
        self.read = true;
        self.source.as_mut()
    }

    /// A seek in the current file: what was decoded of this one was
    /// dropped, it starts again from its beginning.
    pub(super) fn rewind(&mut self) {
        if self.read {
            self.source = None;
            self.read = false;
        }
    }

    /// Its audio stream (opened if it was not), to play as the current
    /// file's.
    pub(super) fn into_opened(mut self) -> Option<AudioSource> {
        self.source()?;
        self.source.take()
    }
}
