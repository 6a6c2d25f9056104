//! The playlist: the files to play and the ids the IPC names them by, and
//! the player's moves through it (opening a file, the next one at the end,
//! a loop, idling when nothing is left).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Result;
use tracing::{error, info};

use super::ipc::events::{EndReason, PlayerEvent};
use super::pacing::EARLY_SLACK;
use super::pipeline::{Pipeline, PipelineOptions};
use super::source::{Frames, Source};
use super::still::StillPicture;
use super::{about_file, window_title, Player};
use crate::audio::Audio;
use crate::exit::Exit;
use crate::frame::DecoderKind;
use crate::media::MediaError;
use crate::message::causes;

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

/// libavformat's name of a container format as mpv reports it in
/// `file-format`: mpv reads Matroska with its own demuxer, named `mkv`.
fn mpv_format_name(libavformat: &str) -> String {
    match libavformat {
        "matroska,webm" => "mkv".to_string(),
        other => other.to_string(),
    }
}

/// A file opened for playing: where its frames come from and what it is.
struct Opened {
    frames: Frames,
    decoder: (DecoderKind, String),
    codec: String,
    /// The codec and container in mpv's words (IPC `video-codec`,
    /// `file-format`).
    video_codec: Option<String>,
    file_format: Option<String>,
    start_time: Duration,
    duration: Option<Duration>,
    frame_rate: Option<f64>,
    has_audio: bool,
}

/// The file could not be played for want of a video stream.
fn has_no_video(error: &anyhow::Error) -> bool {
    error
        .chain()
        .any(|cause| matches!(cause.downcast_ref(), Some(MediaError::NoVideoStream(_))))
}

impl Player {
    /// A file with sound and no picture, played over its cover art or
    /// black frames; None when it has no sound either (the caller's error
    /// stands).
    fn audio_only(&self, path: &std::path::Path) -> Option<Result<Opened>> {
        let still = match StillPicture::for_audio_only(path) {
            Ok(Some(still)) => still,
            Ok(None) => return None,
            Err(e) => return Some(Err(e)),
        };
        let picture = if still.is_cover() {
            "cover art"
        } else {
            "black"
        };
        info!(file = %path.display(), "no video stream: the sound over {picture}");
        Some(Ok(Opened {
            decoder: (
                DecoderKind::Software,
                format!("none (no video stream: {picture})"),
            ),
            codec: "no video (sound only)".into(),
            video_codec: None,
            file_format: None,
            start_time: still.start_time(),
            duration: Some(still.duration()),
            frame_rate: Some(still.frame_rate()),
            has_audio: true,
            frames: Frames::Still(still),
        }))
    }

    /// Opens playlist entry `index` and starts decoding it; a file that
    /// cannot be opened is reported and skipped.
    /// The file playing before ends with `reason` (IPC `end-file`).
    pub(super) fn open_file(&mut self, index: usize, start: Option<Duration>, reason: EndReason) {
        self.close_file(reason);
        let count = self.playlist.len();
        let mut index = index;
        loop {
            let path = self.playlist.files[index].clone();
            let entry = self.playlist.entry_ids[index];
            self.emit(PlayerEvent::StartFile { entry });
            let options = PipelineOptions {
                for_display: !self.options.headless,
                threads: self.options.threads,
                decoder: self.options.decoder.clone(),
            };
            let opened = Pipeline::open(&path, &options).map(|mut pipeline| {
                pipeline.count_damage_in(self.damage.clone());
                let stream = pipeline.stream();
                Opened {
                    decoder: (pipeline.decoder_kind(), pipeline.describe_decoder()),
                    codec: stream.codec_summary(),
                    video_codec: Some(stream.codec_description()),
                    file_format: stream.container_format.as_deref().map(mpv_format_name),
                    start_time: stream.start_time,
                    duration: stream.duration,
                    frame_rate: stream
                        .frame_rate
                        .filter(|&(_, den)| den != 0)
                        .map(|(num, den)| f64::from(num) / f64::from(den)),
                    has_audio: pipeline.has_audio(),
                    frames: Frames::Decoded(Box::new(pipeline)),
                }
            });
            let opened = match opened {
                Err(e) if self.options.audio.track.is_some() && has_no_video(&e) => {
                    self.audio_only(&path).unwrap_or(Err(e))
                }
                opened => opened,
            };
            match opened {
                Ok(opened) => {
                    self.playlist.failed_in_a_row = 0;
                    self.playlist.index = index;
                    self.decoder_opened = Some(opened.decoder);
                    self.codec_summary = opened.codec;
                    self.file_video_codec = opened.video_codec;
                    self.file_format = opened.file_format;
                    self.start_time = opened.start_time;
                    self.file_duration = opened.duration;
                    self.file_frame_rate = opened.frame_rate;
                    self.transport.restart(start);
                    self.cancel_timer();
                    self.display.set_title(&window_title(&path));
                    self.source = Some(Source::spawn(
                        opened.frames,
                        start,
                        self.transport.epoch,
                        self.wake.clone(),
                    ));
                    self.audio = opened
                        .has_audio
                        .then(|| {
                            Audio::start(
                                &path,
                                &self.options.audio,
                                start.map(|start| self.start_time + start),
                                self.volume.gain(),
                            )
                        })
                        .flatten();
                    self.playlist.loaded = Some(entry);
                    self.osd.event(Instant::now(), true);
                    self.transport.announce_restart = true;
                    self.emit(PlayerEvent::FileLoaded);
                    return;
                }
                Err(e) => {
                    let message = about_file(&path, &causes(&e));
                    error!("{message}");
                    self.outcome.fail(Exit::Failed, message);
                    self.emit(PlayerEvent::EndFile {
                        entry,
                        reason: EndReason::Error,
                    });
                    self.playlist.failed_in_a_row += 1;
                    let next = index + 1;
                    if self.playlist.failed_in_a_row >= count
                        || (next >= count && !self.options.looping)
                    {
                        self.playlist.failed_in_a_row = 0;
                        self.end_of_playlist();
                        return;
                    }
                    index = next % count;
                }
            }
        }
    }

    /// At the end of the current file, once the last frame has had its time
    /// on screen: the next file, a loop, or the end.
    pub(super) fn finish_file_when_due(&mut self) {
        let now = Instant::now();
        if let Some(shown) = self.transport.shown {
            let end = self.start_time + shown.position + shown.duration;
            if let Some(deadline) = self.clock.deadline(end, now) {
                if deadline > now + EARLY_SLACK {
                    self.arm_timer(deadline);
                    return;
                }
            }
        }
        let count = self.playlist.len();
        let next = self.playlist.index + 1;
        if next < count {
            self.open_file(next, None, EndReason::Eof);
        } else if self.options.looping {
            if count == 1 {
                info!("looping");
                self.seek_to(Duration::ZERO);
            } else {
                self.open_file(0, None, EndReason::Eof);
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
        self.close_file(EndReason::Stop);
        self.emit(PlayerEvent::Idle);
    }

    /// Stops the file loaded, if any, announcing why.
    pub(super) fn close_file(&mut self, reason: EndReason) {
        self.source = None;
        self.audio = None;
        self.transport.epoch += 1;
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
