//! The mpv properties reel answers, read from a snapshot of the player.

use std::path::PathBuf;

use serde_json::{json, Value};

use super::codec::IpcError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Property {
    Pause,
    TimePos,
    Duration,
    PercentPos,
    Path,
    Filename,
    PlaylistPos,
    PlaylistCount,
    Playlist,
    Fullscreen,
    EstimatedFrameNumber,
    Width,
    Height,
    VideoParams,
    HwdecCurrent,
    EofReached,
    IdleActive,
    /// What the OSD shows unasked: 0, 1 or 3.
    OsdLevel,
    Volume,
    Mute,
    /// The names of all of these (clients ask it to learn what exists).
    PropertyList,
}

/// Every property, by its mpv name.
const NAMES: [(&str, Property); 21] = [
    ("pause", Property::Pause),
    ("time-pos", Property::TimePos),
    ("duration", Property::Duration),
    ("percent-pos", Property::PercentPos),
    ("path", Property::Path),
    ("filename", Property::Filename),
    ("playlist-pos", Property::PlaylistPos),
    ("playlist-count", Property::PlaylistCount),
    ("playlist", Property::Playlist),
    ("fullscreen", Property::Fullscreen),
    ("estimated-frame-number", Property::EstimatedFrameNumber),
    ("width", Property::Width),
    ("height", Property::Height),
    ("video-params", Property::VideoParams),
    ("hwdec-current", Property::HwdecCurrent),
    ("eof-reached", Property::EofReached),
    ("idle-active", Property::IdleActive),
    ("osd-level", Property::OsdLevel),
    ("volume", Property::Volume),
    ("mute", Property::Mute),
    ("property-list", Property::PropertyList),
];

impl Property {
    pub fn from_name(name: &str) -> Option<Self> {
        NAMES.iter().find(|(n, _)| *n == name).map(|&(_, p)| p)
    }
}

/// The picture on screen.
#[derive(Debug, Clone, PartialEq)]
pub struct Picture {
    pub width: u32,
    pub height: u32,
    pub sample_aspect: (u32, u32),
    /// libavcodec's name of the pixel layout, as mpv reports it.
    pub pixel_format: &'static str,
    pub bits_per_pixel: u32,
    /// mpv's `hwdec-current` word for the decoder that made it.
    pub hwdec: &'static str,
}

/// The file being played.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    /// Seconds from the start of the stream of the frame on screen; None
    /// before the first one is shown.
    pub position: Option<f64>,
    pub duration: Option<f64>,
    pub frame_rate: Option<f64>,
    pub picture: Option<Picture>,
    /// The last frame has been shown and playback stopped there (paused).
    pub eof_reached: bool,
}

/// What the properties are read from.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    pub paused: bool,
    /// Percent, 0..=100.
    pub volume: f64,
    pub muted: bool,
    pub fullscreen: bool,
    pub playlist: Vec<PathBuf>,
    pub playlist_ids: Vec<u64>,
    /// The playlist entry being played (None when idle).
    pub current: Option<usize>,
    pub loaded: Option<Loaded>,
    pub osd_level: i64,
}

impl Snapshot {
    pub fn get(&self, property: Property) -> Result<Value, IpcError> {
        let unavailable = IpcError::PropertyUnavailable;
        let loaded = self.loaded.as_ref();
        let picture = loaded.and_then(|l| l.picture.as_ref());
        let current_path = self.current.and_then(|i| self.playlist.get(i));
        Ok(match property {
            Property::Pause => json!(self.paused),
            Property::Fullscreen => json!(self.fullscreen),
            Property::Volume => json!(self.volume),
            Property::Mute => json!(self.muted),
            Property::IdleActive => json!(self.current.is_none()),
            Property::OsdLevel => json!(self.osd_level),
            Property::PropertyList => json!(NAMES.iter().map(|(n, _)| n).collect::<Vec<_>>()),
            Property::PlaylistCount => json!(self.playlist.len()),
            Property::PlaylistPos => json!(self.current.map_or(-1, |i| i as i64)),
            Property::Playlist => Value::Array(
                self.playlist
                    .iter()
                    .zip(&self.playlist_ids)
                    .enumerate()
                    .map(|(i, (path, id))| {
                        let mut entry = json!({"filename": path.to_string_lossy(), "id": id});
                        if self.current == Some(i) {
                            entry["current"] = json!(true);
                            entry["playing"] = json!(true);
                        }
                        entry
                    })
                    .collect(),
            ),
            Property::Path => json!(current_path.ok_or(unavailable)?.to_string_lossy()),
            Property::Filename => {
                let path = current_path.ok_or(unavailable)?;
                let name = path.file_name().unwrap_or(path.as_os_str());
                json!(name.to_string_lossy())
            }
            Property::EofReached => json!(loaded.ok_or(unavailable)?.eof_reached),
            Property::Duration => json!(loaded.and_then(|l| l.duration).ok_or(unavailable)?),
            Property::TimePos => json!(loaded.and_then(|l| l.position).ok_or(unavailable)?),
            Property::PercentPos => {
                let loaded = loaded.ok_or(unavailable)?;
                match (loaded.position, loaded.duration) {
                    (Some(position), Some(duration)) if duration > 0.0 => {
                        json!((position / duration * 100.0).clamp(0.0, 100.0))
                    }
                    _ => return Err(unavailable),
                }
            }
            Property::EstimatedFrameNumber => {
                let loaded = loaded.ok_or(unavailable)?;
                match (loaded.position, loaded.frame_rate) {
                    (Some(position), Some(rate)) => json!((position * rate).round() as i64),
                    _ => return Err(unavailable),
                }
            }
            Property::Width => json!(picture.ok_or(unavailable)?.width),
            Property::Height => json!(picture.ok_or(unavailable)?.height),
            Property::HwdecCurrent => json!(picture.ok_or(unavailable)?.hwdec),
            Property::VideoParams => video_params(picture.ok_or(unavailable)?),
        })
    }
}

/// The part of mpv's `video-params` reel knows: sizes, aspect, layout.
fn video_params(picture: &Picture) -> Value {
    let (num, den) = picture.sample_aspect;
    let par = if num == 0 || den == 0 {
        1.0
    } else {
        f64::from(num) / f64::from(den)
    };
    let display_width = (f64::from(picture.width) * par).round();
    json!({
        "pixelformat": picture.pixel_format,
        "average-bpp": picture.bits_per_pixel,
        "w": picture.width,
        "h": picture.height,
        "dw": display_width as u32,
        "dh": picture.height,
        "aspect": display_width / f64::from(picture.height.max(1)),
        "par": par,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn playing() -> Snapshot {
        Snapshot {
            paused: true,
            volume: 50.0,
            muted: false,
            fullscreen: false,
            playlist: vec!["/m/a.mp4".into(), "/m/b.mkv".into()],
            playlist_ids: vec![1, 2],
            current: Some(0),
            osd_level: 1,
            loaded: Some(Loaded {
                position: Some(0.5),
                duration: Some(1.0),
                frame_rate: Some(30.0),
                picture: Some(Picture {
                    width: 320,
                    height: 240,
                    sample_aspect: (1, 1),
                    pixel_format: "yuv420p",
                    bits_per_pixel: 12,
                    hwdec: "no",
                }),
                eof_reached: false,
            }),
        }
    }

    #[test]
    fn reads_properties_of_a_playing_file() {
        let s = playing();
        assert_eq!(s.get(Property::Filename), Ok(json!("a.mp4")));
        assert_eq!(s.get(Property::PercentPos), Ok(json!(50.0)));
        assert_eq!(s.get(Property::EstimatedFrameNumber), Ok(json!(15)));
        assert_eq!(s.get(Property::IdleActive), Ok(json!(false)));
        assert_eq!(s.get(Property::Volume), Ok(json!(50.0)));
        assert_eq!(s.get(Property::Mute), Ok(json!(false)));
        assert_eq!(Property::from_name("volume"), Some(Property::Volume));
        assert_eq!(
            s.get(Property::Playlist),
            Ok(json!([
                {"filename": "/m/a.mp4", "id": 1, "current": true, "playing": true},
                {"filename": "/m/b.mkv", "id": 2}
            ]))
        );
        assert_eq!(
            s.get(Property::VideoParams).map(|v| v["aspect"].clone()),
            Ok(json!(320.0 / 240.0))
        );
    }

    #[test]
    fn idle_has_no_file_properties() {
        let s = Snapshot {
            current: None,
            loaded: None,
            playlist: vec![],
            playlist_ids: vec![],
            ..playing()
        };
        assert_eq!(s.get(Property::TimePos), Err(IpcError::PropertyUnavailable));
        assert_eq!(
            s.get(Property::Filename),
            Err(IpcError::PropertyUnavailable)
        );
        assert_eq!(s.get(Property::PlaylistPos), Ok(json!(-1)));
        assert_eq!(s.get(Property::IdleActive), Ok(json!(true)));
        assert_eq!(Property::from_name("nonexistent"), None);
    }
}
