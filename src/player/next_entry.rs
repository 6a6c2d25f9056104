//! Gapless playback: the playlist entry due next is opened on a thread of
//! its own while the current one plays, and its decoder started, so that
//! its first frames are decoded by the time the current file's last frame
//! has had its time, and the first follows it at the next refresh. Its
//! sound is queued after the current file's on the same output.

use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::time::Duration;

use anyhow::Result;
use calloop::ping::Ping;
use tracing::{debug, warn};

use super::entry::{EntryOpener, Opened, Started};
use crate::audio::follow_on::FollowOn;
use crate::audio::{Audio, Track};
use crate::message::causes;

/// How long before the current file's end the next one is made ready: a
/// network source's connection, a demuxer's probe and a decoder's set-up
/// fit in it with room to spare, and only one second of it holds two
/// decoders (each waits with a few frames decoded).
pub(super) const PREPARE_AHEAD: Duration = Duration::from_secs(2);

/// The next entry, on its way to being ready.
pub(super) struct NextEntry {
    /// The playlist entry (its IPC id).
    pub(super) entry: u64,
    pub(super) path: PathBuf,
    /// Its sound, queued after the current file's.
    pub(super) sound: Option<FollowOn>,
    state: State,
}

enum State {
    Opening {
        opened: Receiver<Result<Opened>>,
        epoch: u64,
    },
    Decoding(Box<Started>),
    /// It did not open ahead: it is opened, and its error reported, at
    /// its turn, as without gapless playback.
    Failed,
}

impl NextEntry {
    /// Starts opening `path`, playlist entry `entry`; its frames will carry
    /// `epoch`.
    pub(super) fn prepare(entry: u64, path: PathBuf, epoch: u64, opener: EntryOpener) -> Self {
        debug!(entry, file = %path.display(), "opening the next entry ahead");
        let (sender, opened) = mpsc::sync_channel(1);
        let opening = path.clone();
        let spawned = std::thread::Builder::new()
            .name("reel-next-entry".into())
            .spawn(move || {
                // The player may have gone on meanwhile: nobody to tell.
                let _ = sender.send(opener.open(&opening));
            });
        let state = match spawned {
            Ok(_) => State::Opening { opened, epoch },
            Err(e) => {
                warn!("cannot open the next entry ahead: {e}");
                State::Failed
            }
        };
        Self {
            entry,
            path,
            sound: None,
            state,
        }
    }

    /// Queues its sound after `audio`'s, unless it already follows it.
    pub(super) fn follow(
        &mut self,
        audio: &mut Audio,
        track: Track,
        previous_end: Option<Duration>,
    ) {
        if self
            .sound
            .as_ref()
            .is_some_and(|sound| sound.follows(audio))
        {
            return;
        }
        self.sound = audio.append(&self.path, track, previous_end);
    }

    /// Once opened, starts its decode thread (pinging `wake` as the player's
    /// sources do).
    pub(super) fn poll(&mut self, wake: &Ping) {
        let State::Opening { opened, epoch } = &self.state else {
            return;
        };
        self.state = match opened.try_recv() {
            Err(TryRecvError::Empty) => return,
            Ok(Ok(opened)) => {
                debug!(entry = self.entry, "next entry opened ahead, decoding");
                State::Decoding(Box::new(Started::spawn(opened, None, *epoch, wake.clone())))
            }
            Ok(Err(e)) => {
                debug!(
                    entry = self.entry,
                    "next entry failed to open ahead: {}",
                    causes(&e)
                );
                State::Failed
            }
            Err(TryRecvError::Disconnected) => State::Failed,
        };
    }

    /// The entry decoding from its start; None while it is still being
    /// opened (the caller opens it itself rather than wait) or failed.
    pub(super) fn into_started(self) -> Option<Started> {
        match self.state {
            State::Decoding(started) => Some(Started {
                sound_ahead: self.sound,
                ..*started
            }),
            State::Opening { .. } | State::Failed => None,
        }
    }
}
