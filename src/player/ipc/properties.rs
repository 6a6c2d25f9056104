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
    ContainerFps,
    EstimatedVfFps,
    LoopFile,
    LoopPlaylist,
    /// Paused, idle or stopped at the end.
    CoreIdle,
    Speed,
    VideoCodec,
    FileFormat,
    MpvVersion,
    TimeRemaining,
    TrackList,
    Vid,
    Aid,
    Sid,
    SubText,
    SubDelay,
    SubVisibility,
    ChapterList,
    Chapter,
    PausedForCache,
    CacheBufferingState,
    DemuxerCacheDuration,
    DemuxerViaNetwork,
}

/// Every property, by its mpv name.
const NAMES: [(&str, Property); 44] = [
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
    ("container-fps", Property::ContainerFps),
    ("estimated-vf-fps", Property::EstimatedVfFps),
    ("loop-file", Property::LoopFile),
    ("loop-playlist", Property::LoopPlaylist),
    ("core-idle", Property::CoreIdle),
    ("speed", Property::Speed),
    ("video-codec", Property::VideoCodec),
    ("file-format", Property::FileFormat),
    ("mpv-version", Property::MpvVersion),
    ("time-remaining", Property::TimeRemaining),
    ("track-list", Property::TrackList),
    ("vid", Property::Vid),
    ("aid", Property::Aid),
    ("sid", Property::Sid),
    ("sub-text", Property::SubText),
    ("sub-delay", Property::SubDelay),
    ("sub-visibility", Property::SubVisibility),
    ("chapter-list", Property::ChapterList),
    ("chapter", Property::Chapter),
    ("paused-for-cache", Property::PausedForCache),
    ("cache-buffering-state", Property::CacheBufferingState),
    ("demuxer-cache-duration", Property::DemuxerCacheDuration),
    ("demuxer-via-network", Property::DemuxerViaNetwork),
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
    /// How long the frame on screen stays there, in seconds (0: unknown).
    pub frame_duration: f64,
    /// The video codec in mpv's words (`h264 (H.264 / AVC / ...)`).
    pub video_codec: Option<String>,
    /// The container's format in mpv's words (`mov,mp4,m4a,3gp,3g2,mj2`).
    pub file_format: Option<String>,
    /// mpv's `track-list`, `vid` and `aid`.
    pub track_list: Value,
    pub vid: Value,
    pub aid: Value,
    pub sid: Value,
    /// The text of the cues on screen (None: no subtitle track shown).
    pub sub_text: Option<String>,
    /// mpv's `chapter-list`, and the chapter playing (None: no chapters).
    pub chapter_list: Value,
    pub chapter: Option<i64>,
    pub cache: CacheState,
}

/// What is read ahead of the position, as mpv's cache properties say.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CacheState {
    /// The source is a network one.
    pub via_network: bool,
    /// Playback waits for the source (it lost its connection and is
    /// opening it again).
    pub paused_for_cache: bool,
    /// Seconds of media decoded ahead of the frame on screen.
    pub ahead: f64,
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
    /// `--loop`: the playlist starts again at its end.
    pub loop_playlist: bool,
    pub speed: f64,
    /// `sub-delay`, seconds.
    pub sub_delay: f64,
    pub sub_visibility: bool,
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
            Property::ContainerFps => {
                json!(loaded.and_then(|l| l.frame_rate).ok_or(unavailable)?)
            }
            Property::EstimatedVfFps => {
                let loaded = loaded.filter(|l| l.position.is_some()).ok_or(unavailable)?;
                match (loaded.frame_duration, loaded.frame_rate) {
                    (duration, _) if duration > 0.0 => json!(1.0 / duration),
                    (_, Some(rate)) => json!(rate),
                    _ => return Err(unavailable),
                }
            }
            // mpv's loop options read `false` when off, `"inf"` forever.
            Property::LoopFile => json!(false),
            Property::LoopPlaylist if self.loop_playlist => json!("inf"),
            Property::LoopPlaylist => json!(false),
            Property::CoreIdle => json!(
                self.paused
                    || loaded.is_none_or(|l| {
                        l.eof_reached || l.position.is_none() || l.cache.paused_for_cache
                    })
            ),
            Property::PausedForCache => json!(loaded.ok_or(unavailable)?.cache.paused_for_cache),
            // mpv: how far the cache is filled towards playing on.
            Property::CacheBufferingState => {
                let waiting = loaded.ok_or(unavailable)?.cache.paused_for_cache;
                json!(if waiting { 0 } else { 100 })
            }
            Property::DemuxerCacheDuration => json!(loaded.ok_or(unavailable)?.cache.ahead),
            Property::DemuxerViaNetwork => json!(loaded.ok_or(unavailable)?.cache.via_network),
            Property::Speed => json!(self.speed),
            // Before a file is loaded mpv's track choices read "auto".
            Property::TrackList => loaded.map_or(json!([]), |l| l.track_list.clone()),
            Property::Vid => loaded.map_or(json!("auto"), |l| l.vid.clone()),
            Property::Aid => loaded.map_or(json!("auto"), |l| l.aid.clone()),
            Property::Sid => loaded.map_or(json!("auto"), |l| l.sid.clone()),
            Property::SubText => json!(loaded
                .and_then(|l| l.sub_text.as_deref())
                .ok_or(unavailable)?),
            Property::SubDelay => json!(self.sub_delay),
            Property::ChapterList => loaded.map_or(json!([]), |l| l.chapter_list.clone()),
            Property::Chapter => json!(loaded.and_then(|l| l.chapter).ok_or(unavailable)?),
            Property::SubVisibility => json!(self.sub_visibility),
            Property::VideoCodec => json!(loaded
                .and_then(|l| l.video_codec.as_deref())
                .ok_or(unavailable)?),
            Property::FileFormat => json!(loaded
                .and_then(|l| l.file_format.as_deref())
                .ok_or(unavailable)?),
            Property::MpvVersion => json!(concat!("reel ", env!("CARGO_PKG_VERSION"))),
            Property::TimeRemaining => {
                let loaded = loaded.ok_or(unavailable)?;
                match (loaded.position, loaded.duration) {
                    (Some(position), Some(duration)) => json!((duration - position).max(0.0)),
                    _ => return Err(unavailable),
                }
            }
        })
    }

    /// A property by its mpv name, or a part of one by its path
    /// (`video-params/w`, `playlist/0/filename`, `playlist/count`), as
    /// mpv's sub-properties.
    pub fn get_path(&self, path: &str) -> Result<Value, IpcError> {
        let mut parts = path.split('/');
        let name = parts.next().unwrap_or_default();
        let property = Property::from_name(name).ok_or(IpcError::PropertyNotFound)?;
        let mut value = self.get(property)?;
        for part in parts {
            value = match value {
                Value::Object(mut map) => map.remove(part),
                Value::Array(list) if part == "count" => Some(json!(list.len())),
                Value::Array(mut list) => part
                    .parse::<usize>()
                    .ok()
                    .filter(|&i| i < list.len())
                    .map(|i| list.swap_remove(i)),
                _ => None,
            }
            .ok_or(IpcError::PropertyNotFound)?;
        }
        Ok(value)
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
            speed: 1.0,
            sub_delay: 0.0,
            sub_visibility: true,
            loop_playlist: false,
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
                frame_duration: 1.0 / 30.0,
                video_codec: Some("h264 (H.264)".into()),
                file_format: Some("mov,mp4,m4a,3gp,3g2,mj2".into()),
                track_list: json!([]),
                vid: json!(1),
                aid: json!(false),
                sid: json!(false),
                sub_text: None,
                chapter_list: json!([]),
                chapter: None,
                cache: CacheState {
                    via_network: false,
                    paused_for_cache: false,
                    ahead: 0.25,
                },
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
        assert_eq!(s.get_path("video-params/w"), Ok(json!(320)));
        assert_eq!(s.get_path("playlist/1/filename"), Ok(json!("/m/b.mkv")));
        assert_eq!(s.get_path("playlist/count"), Ok(json!(2)));
        for missing in ["video-params/x", "playlist/2", "width/w", "x/y"] {
            assert_eq!(s.get_path(missing), Err(IpcError::PropertyNotFound));
        }
        assert_eq!(s.get(Property::TimeRemaining), Ok(json!(0.5)));
        assert_eq!(s.get(Property::CoreIdle), Ok(json!(true)));
        let playing = Snapshot {
            paused: false,
            ..playing()
        };
        assert_eq!(playing.get(Property::CoreIdle), Ok(json!(false)));
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
