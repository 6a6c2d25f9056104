//! The loaded file's tracks as the IPC shows them (mpv's `track-list`,
//! `vid`, `aid`, `sid`) and the player switching its audio track while
//! it plays (`set_property aid N|no`).

use serde_json::{json, Value};
use tracing::info;

use super::ipc::codec::IpcError;
use super::Player;
use crate::audio::{Audio, AudioOptions, Track};
use crate::media::tracks::{Chapter, TrackInfo, TrackKind, TrackShape};

/// The tracks of the file loaded and which audio track plays.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tracks {
    pub list: Vec<TrackInfo>,
    /// The audio track playing, by its id (None: none).
    pub audio: Option<usize>,
    /// The subtitle track shown, by its id (None: none).
    pub sub: Option<usize>,
    /// The file's chapters, in time order.
    pub chapters: Vec<Chapter>,
}

impl Tracks {
    /// The audio track reel plays for `choice`: the one asked for, or the
    /// container's default one (the first otherwise).
    pub fn audio_for(list: &[TrackInfo], choice: Option<Track>) -> Option<usize> {
        let mut audio = list.iter().filter(|t| t.kind == TrackKind::Audio);
        match choice? {
            Track::Number(n) => audio.any(|t| t.id == n).then_some(n),
            Track::Default => {
                let all: Vec<&TrackInfo> = audio.collect();
                all.iter().find(|t| t.default).or(all.first()).map(|t| t.id)
            }
        }
    }

    /// mpv's `track-list`.
    pub fn to_json(&self) -> Value {
        Value::Array(
            self.list
                .iter()
                .map(|track| {
                    let selected = match track.kind {
                        TrackKind::Video => track.id == 1,
                        TrackKind::Audio => self.audio == Some(track.id),
                        TrackKind::Subtitle => self.sub == Some(track.id),
                    };
                    track_json(track, selected)
                })
                .collect(),
        )
    }

    /// mpv's `vid` and `aid`: the id playing, or false for none.
    pub fn selected(&self, kind: TrackKind) -> Value {
        let id = match kind {
            TrackKind::Video => self
                .list
                .iter()
                .any(|t| t.kind == TrackKind::Video)
                .then_some(1),
            TrackKind::Audio => self.audio,
            TrackKind::Subtitle => self.sub,
        };
        id.map_or(json!(false), |id| json!(id))
    }
}

fn track_json(track: &TrackInfo, selected: bool) -> Value {
    let mut entry = json!({
        "id": track.id,
        "type": match track.kind {
            TrackKind::Video => "video",
            TrackKind::Audio => "audio",
            TrackKind::Subtitle => "sub",
        },
        "src-id": track.source_id,
        "default": track.default,
        "forced": track.forced,
        "external": track.external.is_some(),
        "selected": selected,
        "ff-index": track.stream_index,
        "codec": track.codec,
    });
    if let Some(title) = &track.title {
        entry["title"] = json!(title);
    }
    if let Some(language) = &track.language {
        entry["lang"] = json!(language);
    }
    match track.shape {
        TrackShape::Video { width, height, fps } => {
            entry["demux-w"] = json!(width);
            entry["demux-h"] = json!(height);
            if let Some(fps) = fps {
                entry["demux-fps"] = json!(fps);
            }
        }
        TrackShape::Audio {
            channels,
            sample_rate,
        } => {
            entry["demux-channel-count"] = json!(channels);
            entry["demux-samplerate"] = json!(sample_rate);
        }
        TrackShape::Subtitle => {}
    }
    if let Some(file) = &track.external {
        entry["external-filename"] = json!(file.to_string_lossy());
    }
    entry
}

/// What `set_property aid|sid VALUE` asks: a track by id, or none.
pub(super) fn track_choice(value: &Value) -> Result<Option<usize>, IpcError> {
    match value {
        Value::Bool(false) => Ok(None),
        Value::String(s) if s == "no" => Ok(None),
        Value::Number(n) => n
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .filter(|&n| n > 0)
            .map(Some)
            .ok_or(IpcError::UnsupportedFormat),
        Value::String(s) => s
            .parse::<usize>()
            .ok()
            .filter(|&n| n > 0)
            .map(Some)
            .ok_or(IpcError::UnsupportedFormat),
        _ => Err(IpcError::UnsupportedFormat),
    }
}

impl Player {
    /// `aid`: plays audio track `value` (by id) from where the picture is,
    /// or no sound for `no`; an id the file lacks is refused.
    pub(super) fn set_audio_track(&mut self, value: &Value) -> Result<(), IpcError> {
        let choice = track_choice(value)?;
        if self.playlist.loaded.is_none() {
            return Err(IpcError::PropertyUnavailable);
        }
        if choice == self.tracks.audio {
            return Ok(());
        }
        if let Some(id) = choice {
            let known = self
                .tracks
                .list
                .iter()
                .any(|t| t.kind == TrackKind::Audio && t.id == id);
            if !known {
                return Err(IpcError::PropertyError);
            }
        }
        info!(track = ?choice, "audio track");
        let position = self.resume_position();
        self.audio = None;
        self.tracks.audio = choice;
        if let Some(id) = choice {
            let options = AudioOptions {
                track: Some(Track::Number(id)),
                ..self.options.audio.clone()
            };
            let path = self.playlist.current().to_path_buf();
            self.audio = Audio::start(
                &path,
                &options,
                Some(self.start_time + position),
                self.volume.gain(),
                self.speed(),
            );
        }
        // Picture and the new sound start again together from here.
        self.seek_to(position);
        self.announce_seek();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn audio(id: usize, default: bool) -> TrackInfo {
        TrackInfo {
            kind: TrackKind::Audio,
            id,
            source_id: id as i32 + 1,
            stream_index: id,
            codec: "aac".into(),
            title: None,
            language: Some("eng".into()),
            default,
            forced: false,
            shape: TrackShape::Audio {
                channels: 2,
                sample_rate: 48_000,
            },
            external: None,
        }
    }

    #[test]
    fn picks_and_lists_audio_tracks_as_mpv() {
        let list = vec![audio(1, false), audio(2, true)];
        assert_eq!(Tracks::audio_for(&list, Some(Track::Default)), Some(2));
        assert_eq!(Tracks::audio_for(&list, Some(Track::Number(1))), Some(1));
        assert_eq!(Tracks::audio_for(&list, Some(Track::Number(3))), None);
        assert_eq!(Tracks::audio_for(&list, None), None);
        let tracks = Tracks {
            list,
            audio: Some(1),
            sub: None,
            chapters: Vec::new(),
        };
        let json = tracks.to_json();
        assert_eq!(json[0]["selected"], true);
        assert_eq!(json[1]["selected"], false);
        assert_eq!(json[0]["lang"], "eng");
        assert_eq!(json[0]["demux-samplerate"], 48_000);
        assert_eq!(tracks.selected(TrackKind::Audio), json!(1));
        assert_eq!(tracks.selected(TrackKind::Video), json!(false));
        assert_eq!(track_choice(&json!("no")), Ok(None));
        assert_eq!(track_choice(&json!(2)), Ok(Some(2)));
        assert!(track_choice(&json!("x")).is_err());
    }
}
