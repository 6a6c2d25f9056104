//! The playlist: the files to play and the ids the IPC names them by, and
//! the player's moves through it (opening a file, the next one at the end,
//! a loop, idling when nothing is left).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tracing::{debug, error, info};

use super::entry::{EntryOpener, Started};
use super::ipc::events::{EndReason, PlayerEvent};
use super::next_entry::{NextEntry, PREPARE_AHEAD};
use super::pacing::too_early;
use super::pipeline::PipelineOptions;
use super::source::Source;
use super::tracks::Tracks;
use super::{about_file, window_title, Player};
use crate::audio::follow_on::FollowOn;
use crate::audio::Audio;
use crate::exit::Exit;
use crate::frame::DecoderKind;
use crate::media::location::Location;
use crate::message::causes;

/// A file's decode thread and sound, kept past its end: the decoder until
/// the next file's first frame is shown, the sound until the output has
/// played what it holds (or, with the next file's queued after it, as the
/// next file's).
pub(super) struct Retired {
    source: Option<Source>,
    audio: Option<Audio>,
    /// When the file ended.
    since: Instant,
}

/// How long an ended file's sound is kept: longer than any output's
/// latency.
const SOUND_TAIL: Duration = Duration::from_secs(1);

impl Retired {
    /// The next file shows: the old decoder may go.
    pub(super) fn let_decoder_go(&mut self) {
        self.source = None;
    }

    /// Nothing of it is needed any more.
    pub(super) fn done(&self, now: Instant) -> bool {
        self.source.is_none() && (self.audio.is_none() || now >= self.since + SOUND_TAIL)
    }
}

/// The files to play, where playback is in them, and their IPC ids.
#[derive(Debug)]
pub(super) struct Playlist {
    pub(super) files: Vec<PathBuf>,
    /// The playlist entry ids the IPC names files by, one per file.
    pub(super) entry_ids: Vec<u64>,
    pub(super) next_entry_id: u64,
    /// The file playing (or last played).
    pub(super) index: usize,
    /// The id of the file loaded (None: idle).
    pub(super) loaded: Option<u64>,
    /// Files that failed to open in a row (stops a playlist of bad files).
    pub(super) failed_in_a_row: usize,
}

impl Playlist {
    pub(super) fn new(files: Vec<PathBuf>) -> Self {
        let count = files.len() as u64;
        Self {
            files,
            entry_ids: (1..=count).collect(),
            next_entry_id: count + 1,
            index: 0,
            loaded: None,
            failed_in_a_row: 0,
        }
    }

    pub(super) fn len(&self) -> usize {
        self.files.len()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// The file playing (or last played).
    pub(super) fn current(&self) -> &Path {
        &self.files[self.index]
    }

    /// Adds `path` at the end; its new entry id.
    pub(super) fn push(&mut self, path: PathBuf) -> u64 {
        let entry = self.next_entry_id;
        self.next_entry_id += 1;
        self.files.push(path);
        self.entry_ids.push(entry);
        entry
    }

    /// Forgets entry `index`; the file playing keeps its place.
    pub(super) fn remove(&mut self, index: usize) {
        if index < self.files.len() {
            self.files.remove(index);
            self.entry_ids.remove(index);
            if index < self.index {
                self.index -= 1;
            }
        }
    }

    /// Forgets every file (the ids go on counting).
    pub(super) fn clear(&mut self) {
        self.files.clear();
        self.entry_ids.clear();
    }
}

impl Player {
    /// What opening an entry takes from the options.
    fn entry_opener(&self) -> EntryOpener {
        EntryOpener {
            pipeline: PipelineOptions {
                for_display: !self.options.headless,
                threads: self.options.threads,
                decoder: self.options.decoder.clone(),
            },
            with_sound: self.options.audio.track.is_some(),
            damage: self.damage.clone(),
        }
    }

    /// Opens playlist entry `index` and starts decoding it (from `start`;
    /// None: the beginning, where an entry opened ahead takes over); a
    /// file that cannot be opened is reported and skipped.
    /// The file playing before ends with `reason` (IPC `end-file`).
    pub(super) fn open_file(&mut self, index: usize, start: Option<Duration>, reason: EndReason) {
        self.close_file(reason);
        self.open_entries_from(index, start);
    }

    /// Plays entry `index`, or the first after it that opens. A network
    /// source is opened on a thread of its own (`settle_opening` takes it
    /// from there): its connect may take until `--network-timeout`, and
    /// the player answers commands meanwhile.
    fn open_entries_from(&mut self, index: usize, start: Option<Duration>) {
        let mut index = index;
        loop {
            let path = self.playlist.files[index].clone();
            let entry = self.playlist.entry_ids[index];
            let start = start.or_else(|| self.resume_point(&path));
            self.emit(PlayerEvent::StartFile { entry });
            let started = match self.take_ahead(entry, start) {
                Some(started) => Ok(started),
                None if self.opening.is_some() => return,
                None if Location::of(&path).is_url() => {
                    debug!(entry, file = %path.display(), "connecting on a thread of its own");
                    self.opening = Some(NextEntry::prepare(
                        entry,
                        path,
                        start,
                        self.transport.fresh_epoch(),
                        self.entry_opener(),
                        self.wake.clone(),
                    ));
                    return;
                }
                None => self.entry_opener().open(&path).map(|opened| {
                    let epoch = self.transport.fresh_epoch();
                    Started::spawn(opened, start, epoch, self.wake.clone())
                }),
            };
            match started {
                Ok(started) => {
                    self.load(started, index, &path, start);
                    return;
                }
                Err(e) => match self.skip_failed(index, entry, &path, &e) {
                    Some(next) => index = next,
                    None => return,
                },
            }
        }
    }

    /// The entry opened ahead if it is `entry` and decoding from its start
    /// (a `start` elsewhere opens it afresh); one still being opened
    /// becomes the entry being opened, one that failed is opened again
    /// (its error reported then).
    fn take_ahead(&mut self, entry: u64, start: Option<Duration>) -> Option<Started> {
        let mut next = self
            .next_entry
            .take()
            .filter(|next| start.is_none() && next.entry == entry)?;
        next.poll(&self.wake);
        if next.is_opening() {
            self.opening = Some(next);
            return None;
        }
        let started = next.into_started().ok()?;
        info!(entry, "the entry opened ahead plays");
        Some(started)
    }

    /// Plays the entry being opened on its own thread once it is open, or
    /// goes on to the next when it failed.
    pub(super) fn settle_opening(&mut self) {
        let Some(opening) = self.opening.as_mut() else {
            return;
        };
        opening.poll(&self.wake);
        if opening.is_opening() {
            return;
        }
        let Some(opening) = self.opening.take() else {
            return;
        };
        let (entry, start) = (opening.entry, opening.start);
        let Some(index) = self.playlist.entry_ids.iter().position(|&id| id == entry) else {
            // Removed from the playlist while it was being opened.
            self.end_of_playlist();
            return;
        };
        let path = self.playlist.files[index].clone();
        match opening.into_started() {
            Ok(started) => self.load(started, index, &path, start),
            Err(why) => {
                let e = why.unwrap_or_else(|| anyhow::anyhow!("it could not be opened"));
                if let Some(next) = self.skip_failed(index, entry, &path, &e) {
                    self.open_entries_from(next, start);
                }
            }
        }
    }

    /// Reports entry `index` (`entry`, at `path`) as unplayable; the entry
    /// to try next, None when the playlist has ended.
    fn skip_failed(
        &mut self,
        index: usize,
        entry: u64,
        path: &Path,
        e: &anyhow::Error,
    ) -> Option<usize> {
        let message = about_file(path, &causes(e));
        error!("{message}");
        self.outcome.fail(Exit::Failed, message);
        self.emit(PlayerEvent::EndFile {
            entry,
            reason: EndReason::Error,
        });
        self.playlist.failed_in_a_row += 1;
        let count = self.playlist.len();
        let next = index + 1;
        if self.playlist.failed_in_a_row >= count || (next >= count && !self.options.looping) {
            self.playlist.failed_in_a_row = 0;
            self.end_of_playlist();
            return None;
        }
        Some(next % count)
    }

    /// Makes `started`, playlist entry `index`, the file playing.
    fn load(&mut self, started: Started, index: usize, path: &Path, start: Option<Duration>) {
        let info = started.info;
        self.playlist.failed_in_a_row = 0;
        self.playlist.index = index;
        self.decoder_opened = Some(info.decoder);
        self.codec_summary = info.codec;
        self.file_video_codec = info.video_codec;
        self.file_format = info.file_format;
        let audio_track = info
            .has_audio
            .then(|| Tracks::audio_for(&info.tracks, self.options.audio.track))
            .flatten();
        self.tracks = Tracks {
            list: info.tracks,
            audio: audio_track,
            sub: None,
            chapters: info.chapters,
        };
        self.start_time = info.start_time;
        self.file_duration = info.duration;
        self.file_frame_rate = info.frame_rate;
        self.transport.restart(start);
        self.transport.epoch = started.epoch;
        self.follow_schedule();
        self.cancel_timer();
        self.display.set_title(&window_title(path));
        self.source = Some(started.source);
        // An entry decoded ahead already spent its first wake-up.
        self.wake.ping();
        let continued = started
            .sound_ahead
            .filter(|_| info.has_audio)
            .and_then(|sound| self.continue_sound(sound));
        self.audio = continued.or_else(|| {
            info.has_audio
                .then(|| {
                    Audio::start(
                        path,
                        &self.options.audio,
                        start.map(|start| self.start_time + start),
                        self.volume.gain(),
                        self.speed(),
                    )
                })
                .flatten()
        });
        self.playlist.loaded = Some(self.playlist.entry_ids[index]);
        self.start_subtitles(path);
        self.osd.event(Instant::now(), true);
        self.transport.announce_restart = true;
        self.emit(PlayerEvent::FileLoaded);
    }

    /// The sound of the file that ended goes on into `sound`, the next
    /// file's queued after it (gapless playback): it is this file's.
    fn continue_sound(&mut self, sound: FollowOn) -> Option<Audio> {
        let retired = self.retired.as_mut()?;
        let audio = retired.audio.as_mut()?;
        if !audio.take_over(sound) {
            return None;
        }
        info!("the sound goes on into the next file");
        retired.audio.take()
    }

    /// The entry due after the current one: the next, or the first when
    /// looping.
    fn upcoming(&self) -> Option<usize> {
        let next = self.playlist.index + 1;
        if next < self.playlist.len() {
            Some(next)
        } else if self.options.looping && !self.playlist.is_empty() {
            Some(0)
        } else {
            None
        }
    }

    /// The next turn opens its file afresh (ahead of time, with gapless
    /// playback): always in a playlist; a file looped alone only when
    /// decoded in software, else it seeks back to its start, since a
    /// second V4L2 decoder of the same stream would double its CAPTURE
    /// buffers (a board's CMA pool).
    fn loops_by_reopening(&self) -> bool {
        self.playlist.len() > 1
            || (self.options.gapless
                && self
                    .decoder_opened
                    .as_ref()
                    .is_some_and(|(kind, _)| *kind == DecoderKind::Software))
    }

    /// Gapless playback: once the current file is within
    /// [`PREPARE_AHEAD`] of its end (or has been decoded to it), the entry
    /// due next is opened and starts decoding. An entry made ready for a
    /// playlist that has changed since is dropped for the one now due, and
    /// one made ready before a seek back from the end is dropped.
    pub(super) fn prepare_next_when_due(&mut self) {
        if !self.options.gapless || self.playlist.loaded.is_none() {
            return;
        }
        let Some(index) = self.upcoming().filter(|_| self.loops_by_reopening()) else {
            self.next_entry = None;
            return;
        };
        let entry = self.playlist.entry_ids[index];
        let position = self
            .transport
            .seek_target
            .unwrap_or_else(|| self.transport.position());
        let near_end = self
            .file_duration
            .is_some_and(|duration| duration.saturating_sub(position) <= PREPARE_AHEAD);
        let due = near_end || self.transport.ended;
        // A seek away from the end lets it go (a second decoder's buffers
        // are not held for a whole file), as does a playlist change.
        if let Some(next) = self.next_entry.take_if(|next| next.entry != entry || !due) {
            info!(entry = next.entry, "the entry opened ahead is let go");
        }
        match &mut self.next_entry {
            Some(next) => next.poll(&self.wake),
            None if !due => return,
            None => {
                let epoch = self.transport.fresh_epoch();
                let path = self.playlist.files[index].clone();
                debug!(entry, file = %path.display(), "opening the next entry ahead");
                self.next_entry = Some(NextEntry::prepare(
                    entry,
                    path,
                    None,
                    epoch,
                    self.entry_opener(),
                    self.wake.clone(),
                ));
            }
        }
        // Its sound queued after the sound playing (again, when that was
        // replaced by another track).
        if let (Some(next), Some(audio), Some(track)) = (
            &mut self.next_entry,
            &mut self.audio,
            self.options.audio.track,
        ) {
            let end = self.file_duration.map(|d| self.start_time + d);
            next.follow(audio, track, end);
        }
    }

    /// At the end of the current file, once the last frame has had its time
    /// on screen: the next file, a loop, or the end.
    pub(super) fn finish_file_when_due(&mut self) {
        let now = Instant::now();
        if let Some(shown) = self.transport.shown {
            // The next file's first frame goes to the vblank nearest the
            // end of this one's last.
            let end = self.start_time + shown.position + shown.duration;
            if let Some(deadline) = self.clock.deadline(end, now) {
                // The next file's clock goes on from there.
                self.transport.continue_from = Some(deadline);
                if let Some(wake) = too_early(deadline, now, self.display.next_vblank(now)) {
                    self.arm_timer(wake);
                    return;
                }
            }
        }
        let count = self.playlist.len();
        if let Some(next) = self.upcoming() {
            if next == 0 {
                info!("looping");
            }
            self.next_turn();
            if count == 1 && !self.loops_by_reopening() {
                self.seek_to(Duration::ZERO);
                self.follow_schedule();
            } else {
                self.open_file(next, None, EndReason::Eof);
            }
        } else {
            self.close_file(EndReason::Eof);
            self.end_of_playlist();
        }
    }

    /// Nothing left to play: wait for `loadfile` with `--idle`, else end.
    pub(super) fn end_of_playlist(&mut self) {
        if self.options.idle {
            self.go_idle();
        } else {
            info!("end of playlist");
            self.quit();
        }
    }

    pub(super) fn go_idle(&mut self) {
        info!("idle: waiting for a file to play");
        self.next_entry = None;
        self.close_file(EndReason::Stop);
        self.emit(PlayerEvent::Idle);
    }

    /// Stops the file loaded, if any, announcing why.
    pub(super) fn close_file(&mut self, reason: EndReason) {
        // A source still connecting is let go (its thread ends with its
        // connect).
        self.opening = None;
        let source = self.source.take();
        let audio = self.audio.take();
        // At a file's end the next one's first frame is due on the next
        // refresh: the old decoder and sound are let go once it is shown
        // (a decoder's teardown takes a while), any other time at once.
        self.retired = None;
        if reason != EndReason::Eof {
            self.transport.continue_from = None;
        }
        if reason == EndReason::Eof && self.options.gapless {
            self.retired = Some(Retired {
                source,
                audio,
                since: Instant::now(),
            });
        }
        self.transport.epoch = self.transport.fresh_epoch();
        self.transport.next = None;
        self.transport.shown = None;
        self.on_screen = None;
        self.transport.ended = false;
        self.transport.preroll = false;
        self.transport.seek_target = None;
        self.transport.pending_steps = 0;
        self.transport.announce_restart = false;
        self.cancel_timer();
        if let Some(entry) = self.playlist.loaded.take() {
            self.emit(PlayerEvent::EndFile { entry, reason });
        }
    }
}
