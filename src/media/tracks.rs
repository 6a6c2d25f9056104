//! A file's video, audio and subtitle tracks as a player lists them
//! (mpv's `track-list`): numbered per kind from 1 in the container's
//! order, with what the container says of each.

use std::path::{Path, PathBuf};

use ffmpeg_next as ff;

use super::{MediaError, SourceInput};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrackKind {
    Video,
    Audio,
    Subtitle,
}

/// What a track's container says about its pictures or its sound.
#[derive(Debug, Clone, PartialEq)]
pub enum TrackShape {
    Video {
        width: u32,
        height: u32,
        fps: Option<f64>,
    },
    Audio {
        channels: u32,
        sample_rate: u32,
    },
    Subtitle,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TrackInfo {
    pub kind: TrackKind,
    /// From 1 among the tracks of its kind (`--aid N`).
    pub id: usize,
    /// The container's own id of the stream (an MP4 track ID, ...).
    pub source_id: i32,
    /// libavformat's stream index.
    pub stream_index: usize,
    /// libavcodec's short name of the codec (`h264`, `aac`).
    pub codec: String,
    pub title: Option<String>,
    pub language: Option<String>,
    pub default: bool,
    pub forced: bool,
    pub shape: TrackShape,
    /// A subtitle file of its own (`--sub-file`, or beside the video).
    pub external: Option<PathBuf>,
}

/// A chapter as the container marks it.
#[derive(Debug, Clone, PartialEq)]
pub struct Chapter {
    pub title: Option<String>,
    /// Its start, in the container's time (as pts).
    pub start: std::time::Duration,
}

/// What a file holds besides its packets: tracks and chapters.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Contents {
    pub tracks: Vec<TrackInfo>,
    pub chapters: Vec<Chapter>,
}

/// The video, audio and subtitle tracks of `path` (other streams, data
/// and attachments, are left out), and its chapters in time order.
pub fn list_contents(path: &Path) -> Result<Contents, MediaError> {
    // Opened as the audio thread opens it: a URL under its network
    // whitelist, a local file behind `file:` (and no panic on a name that
    // is not UTF-8).
    let input = SourceInput::open(path)?;
    Ok(contents_of(&input))
}

/// The tracks and chapters of an open input.
pub fn contents_of(input: &ff::format::context::Input) -> Contents {
    let mut counts = (0, 0, 0);
    let mut tracks = Vec::new();
    for stream in input.streams() {
        let parameters = stream.parameters();
        let (kind, id) = match parameters.medium() {
            ff::media::Type::Video => {
                counts.0 += 1;
                (TrackKind::Video, counts.0)
            }
            ff::media::Type::Audio => {
                counts.1 += 1;
                (TrackKind::Audio, counts.1)
            }
            ff::media::Type::Subtitle => {
                counts.2 += 1;
                (TrackKind::Subtitle, counts.2)
            }
            _ => continue,
        };
        let context = ff::codec::context::Context::from_parameters(parameters.clone());
        let shape = match kind {
            TrackKind::Video => {
                let video = context.and_then(|c| c.decoder().video());
                let (width, height) = video.map_or((0, 0), |v| (v.width(), v.height()));
                let rate = stream.avg_frame_rate();
                let fps = (rate.numerator() > 0 && rate.denominator() > 0)
                    .then(|| f64::from(rate.numerator()) / f64::from(rate.denominator()));
                TrackShape::Video { width, height, fps }
            }
            TrackKind::Audio => {
                let audio = context.and_then(|c| c.decoder().audio());
                let (channels, sample_rate) =
                    audio.map_or((0, 0), |a| (u32::from(a.channels()), a.rate()));
                TrackShape::Audio {
                    channels,
                    sample_rate,
                }
            }
            TrackKind::Subtitle => TrackShape::Subtitle,
        };
        let metadata = stream.metadata();
        let tag = |key: &str| metadata.get(key).map(str::to_string);
        let disposition = stream.disposition();
        tracks.push(TrackInfo {
            kind,
            id,
            source_id: stream.id(),
            stream_index: stream.index(),
            codec: parameters.id().name().to_string(),
            title: tag("title"),
            language: tag("language").filter(|l| l != "und"),
            default: disposition.contains(ff::format::stream::Disposition::DEFAULT),
            forced: disposition.contains(ff::format::stream::Disposition::FORCED),
            shape,
            external: None,
        });
    }
    let mut chapters: Vec<Chapter> = input
        .chapters()
        .map(|chapter| {
            let tb = chapter.time_base();
            Chapter {
                title: chapter.metadata().get("title").map(str::to_string),
                start: crate::media::ts_to_duration(
                    chapter.start().max(0),
                    (tb.numerator(), tb.denominator()),
                ),
            }
        })
        .collect();
    chapters.sort_by_key(|c| c.start);
    Contents { tracks, chapters }
}
