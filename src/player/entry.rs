//! Opening one playlist entry: the file's demuxer and decoder (or, for a
//! file with sound only, its still picture) and what the player reports
//! of it. Free of the player's context, so that the next entry can be
//! opened on a thread of its own while the current one plays.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use calloop::ping::Ping;
use tracing::{info, warn};

use super::frame_decoder::DamageCounters;
use super::pipeline::{Pipeline, PipelineOptions};
use super::source::{Frames, Source};
use super::still::StillPicture;
use crate::audio::follow_on::FollowOn;
use crate::frame::DecoderKind;
use crate::media::tracks::{list_contents, Chapter, TrackInfo};
use crate::media::MediaError;

/// What the player reports of an opened file.
#[derive(Debug, Clone)]
pub(super) struct EntryInfo {
    pub(super) decoder: (DecoderKind, String),
    pub(super) codec: String,
    /// The codec and container in mpv's words (IPC `video-codec`,
    /// `file-format`).
    pub(super) video_codec: Option<String>,
    pub(super) file_format: Option<String>,
    pub(super) start_time: Duration,
    pub(super) duration: Option<Duration>,
    pub(super) frame_rate: Option<f64>,
    pub(super) has_audio: bool,
    /// Its video and audio tracks (IPC `track-list`).
    pub(super) tracks: Vec<TrackInfo>,
    /// Its chapters (IPC `chapter-list`).
    pub(super) chapters: Vec<Chapter>,
}

/// A file opened for playing: where its frames come from and what it is.
pub(super) struct Opened {
    pub(super) info: EntryInfo,
    pub(super) frames: Frames,
}

/// What opening an entry takes from the player's options.
#[derive(Clone)]
pub(super) struct EntryOpener {
    pub(super) pipeline: PipelineOptions,
    /// Sound is wanted: a file without video plays over its cover art.
    pub(super) with_sound: bool,
    pub(super) damage: Arc<DamageCounters>,
}

impl EntryOpener {
    pub(super) fn open(&self, path: &Path) -> Result<Opened> {
        let mut opened = self.open_media(path)?;
        // From the demuxer already open where there is one: a network
        // source opened again would cost a second connection (and a UDP
        // port is not bound twice).
        let listed = match &opened.frames {
            Frames::Decoded(pipeline) => pipeline.contents().map(Ok),
            Frames::Still(_) => None,
        };
        let contents = listed
            .unwrap_or_else(|| list_contents(path))
            .unwrap_or_else(|e| {
                warn!("cannot list the tracks: {e}");
                Default::default()
            });
        opened.info.tracks = contents.tracks;
        opened.info.chapters = contents.chapters;
        Ok(opened)
    }

    fn open_media(&self, path: &Path) -> Result<Opened> {
        match Pipeline::open(path, &self.pipeline) {
            Ok(mut pipeline) => {
                pipeline.count_damage_in(self.damage.clone());
                let stream = pipeline.stream();
                let info = EntryInfo {
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
                    tracks: Vec::new(),
                    chapters: Vec::new(),
                };
                Ok(Opened {
                    info,
                    frames: Frames::Decoded(Box::new(pipeline)),
                })
            }
            Err(e) if self.with_sound && has_no_video(&e) => audio_only(path).unwrap_or(Err(e)),
            Err(e) => Err(e),
        }
    }
}

/// An opened entry decoding: its decode thread and what it is.
pub(super) struct Started {
    pub(super) info: EntryInfo,
    pub(super) source: Source,
    /// The epoch the source's frames carry.
    pub(super) epoch: u64,
    /// Its sound, queued after the file before's (gapless playback).
    pub(super) sound_ahead: Option<FollowOn>,
}

impl Started {
    /// Starts decoding `opened` from `start` (None: the beginning), its
    /// frames carrying `epoch`.
    pub(super) fn spawn(opened: Opened, start: Option<Duration>, epoch: u64, wake: Ping) -> Self {
        Self {
            source: Source::spawn(opened.frames, start, epoch, wake),
            info: opened.info,
            epoch,
            sound_ahead: None,
        }
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

/// The file could not be played for want of a video stream.
fn has_no_video(error: &anyhow::Error) -> bool {
    error
        .chain()
        .any(|cause| matches!(cause.downcast_ref(), Some(MediaError::NoVideoStream(_))))
}

/// A file with sound and no picture, played over its cover art or black
/// frames; None when it has no sound either (the caller's error stands).
fn audio_only(path: &Path) -> Option<Result<Opened>> {
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
        info: EntryInfo {
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
            tracks: Vec::new(),
            chapters: Vec::new(),
        },
        frames: Frames::Still(still),
    }))
}
