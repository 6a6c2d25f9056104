//! An entry opened on a thread of its own, its decoder started once it
//! is open, while the player goes on: for gapless playback the entry due
//! next, while the current one plays, so that its first frames are decoded
//! by the time the current file's last frame has had its time, and the
//! first follows it at the next refresh (its sound queued after the current
//! file's on the same output); and a network source about to play, whose
//! connect may take until `--network-timeout`, while the player answers its
//! commands (`quit`, `loadfile`) meanwhile.

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

/// An entry on its way to being ready.
pub(super) struct NextEntry {
    /// The playlist entry (its IPC id).
    pub(super) entry: u64,
    pub(super) path: PathBuf,
    /// Where its decoding starts (None: the beginning).
    pub(super) start: Option<Duration>,
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
    /// It did not open: why, if it got as far as trying.
    Failed(Option<anyhow::Error>),
}

impl NextEntry {
    /// Starts opening `path`, playlist entry `entry`, to decode from
    /// `start`; its frames will carry `epoch`. `wake` is pinged once the
    /// opening is done.
    pub(super) fn prepare(
        entry: u64,
        path: PathBuf,
        start: Option<Duration>,
        epoch: u64,
        opener: EntryOpener,
        wake: Ping,
    ) -> Self {
        let (sender, opened) = mpsc::sync_channel(1);
        let opening = path.clone();
        let spawned = std::thread::Builder::new()
            .name("reel-open-entry".into())
            .spawn(move || {
                // The player may have gone on meanwhile: nobody to tell.
                let _ = sender.send(opener.open(&opening));
                wake.ping();
            });
        let state = match spawned {
            Ok(_) => State::Opening { opened, epoch },
            Err(e) => {
                warn!("cannot open an entry on a thread of its own: {e}");
                State::Failed(None)
            }
        };
        Self {
            entry,
            path,
            start,
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
                debug!(entry = self.entry, "entry opened, decoding");
                let started = Started::spawn(opened, self.start, *epoch, wake.clone());
                State::Decoding(Box::new(started))
            }
            Ok(Err(e)) => {
                debug!(entry = self.entry, "entry failed to open: {}", causes(&e));
                State::Failed(Some(e))
            }
            Err(TryRecvError::Disconnected) => State::Failed(None),
        };
    }

    /// Still being opened.
    pub(super) fn is_opening(&self) -> bool {
        matches!(self.state, State::Opening { .. })
    }

    /// The entry decoding; else why it did not open (None: still being
    /// opened, or no reason known: the caller opens it itself).
    pub(super) fn into_started(self) -> Result<Started, Option<anyhow::Error>> {
        match self.state {
            State::Decoding(started) => Ok(Started {
                sound_ahead: self.sound,
                ..*started
            }),
            State::Opening { .. } => Err(None),
            State::Failed(why) => Err(why),
        }
    }
}
