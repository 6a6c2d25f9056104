//! The player's subtitles: which track shows (`--sid`, `--no-sub`,
//! `--sub-file`, a same-named file beside the video, `j`, IPC `sid`), read
//! on a thread of its own and drawn for the frame on screen (its pts
//! against each cue's interval, less `sub-delay`), on the subtitles'
//! overlay, following seeks, steps, pause and speed as the frames do.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::time::Duration;

use serde_json::Value;
use tracing::{debug, info, warn};

use super::ipc::codec::IpcError;
use super::tracks::track_choice;
use super::Player;
use crate::media::location::Location;
use crate::media::tracks::{TrackInfo, TrackKind, TrackShape};
use crate::subtitle::{self, events, SubtitleError, SubtitleStream, Subtitles};

/// Which subtitle track to show at a file's start (`--sid`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SubtitleChoice {
    /// A subtitle file given or found beside the video, else the
    /// container's default (or forced) track, else none (mpv's `auto`).
    #[default]
    Auto,
    /// `--no-sub`, `--sid no`.
    None,
    Track(usize),
}

/// What the command line asks of subtitles.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SubtitleOptions {
    pub choice: SubtitleChoice,
    /// `--sub-file`: shown as tracks of every file, after its own.
    pub files: Vec<PathBuf>,
    /// `--sub-delay`, seconds (positive: later).
    pub delay: f64,
    /// `--sub-visibility`.
    pub visible: bool,
}

/// Parses `--sid`: a track id, `no` or `auto`.
pub fn parse_sid(text: &str) -> Result<SubtitleChoice, String> {
    match text {
        "auto" => Ok(SubtitleChoice::Auto),
        "no" => Ok(SubtitleChoice::None),
        id => id
            .parse::<usize>()
            .ok()
            .filter(|&id| id > 0)
            .map(SubtitleChoice::Track)
            .ok_or_else(|| format!("--sid takes a track id from 1, no or auto; got '{text}'")),
    }
}

/// The subtitles of the file playing.
#[derive(Default)]
pub(super) struct SubtitleState {
    loaded: Option<Subtitles>,
    /// A track being read: its id and the reader's answer.
    reading: Option<(usize, Receiver<Result<SubtitleStream, SubtitleError>>)>,
    /// Seconds added to every cue's time.
    pub delay: f64,
    pub visible: bool,
    /// The overlay shows a picture.
    showing: bool,
}

impl SubtitleState {
    pub(super) fn new(options: &SubtitleOptions) -> Self {
        Self {
            delay: options.delay,
            visible: options.visible,
            ..Self::default()
        }
    }
}

/// The subtitle tracks of a file from outside it: `--sub-file`s, then
/// those found beside it, numbered after its own.
fn external_tracks(video: &Path, files: &[PathBuf], own: usize) -> Vec<TrackInfo> {
    let mut paths: Vec<PathBuf> = files.to_vec();
    for found in subtitle::sidecars(video) {
        if !paths.contains(&found) {
            paths.push(found);
        }
    }
    paths
        .into_iter()
        .enumerate()
        .map(|(i, path)| TrackInfo {
            kind: TrackKind::Subtitle,
            id: own + i + 1,
            source_id: 0,
            stream_index: 0,
            codec: path
                .extension()
                .map_or_else(String::new, |e| e.to_string_lossy().to_lowercase()),
            title: path.file_name().map(|n| n.to_string_lossy().into_owned()),
            language: None,
            default: false,
            forced: false,
            shape: TrackShape::Subtitle,
            external: Some(path),
        })
        .collect()
}

/// The track `choice` picks among `tracks`.
fn pick(tracks: &[TrackInfo], choice: SubtitleChoice) -> Option<usize> {
    let mut subs = tracks.iter().filter(|t| t.kind == TrackKind::Subtitle);
    match choice {
        SubtitleChoice::None => None,
        SubtitleChoice::Track(id) => subs.any(|t| t.id == id).then_some(id),
        SubtitleChoice::Auto => {
            let subs: Vec<&TrackInfo> = subs.collect();
            subs.iter()
                .find(|t| t.external.is_some())
                .or_else(|| subs.iter().find(|t| t.forced || t.default))
                .map(|t| t.id)
        }
    }
}

impl Player {
    /// A file started: its subtitle tracks with the external ones, and
    /// the one `--sid` picks read.
    pub(super) fn start_subtitles(&mut self, video: &Path) {
        self.subtitles.loaded = None;
        self.subtitles.reading = None;
        self.hide_subtitles();
        let own = self
            .tracks
            .list
            .iter()
            .filter(|t| t.kind == TrackKind::Subtitle)
            .count();
        let external = external_tracks(video, &self.options.subtitles.files, own);
        self.tracks.list.extend(external);
        let choice = pick(&self.tracks.list, self.options.subtitles.choice);
        self.select_subtitles(choice);
    }

    /// Shows subtitle track `id` (None: none), read on a thread.
    pub(super) fn select_subtitles(&mut self, id: Option<usize>) {
        self.tracks.sub = id;
        self.subtitles.loaded = None;
        self.subtitles.reading = None;
        self.hide_subtitles();
        let Some(track) = id.and_then(|id| {
            self.tracks
                .list
                .iter()
                .find(|t| t.kind == TrackKind::Subtitle && t.id == id)
        }) else {
            return;
        };
        info!(track = track.id, codec = %track.codec, "subtitles");
        let (path, stream) = match &track.external {
            Some(file) => (file.clone(), None),
            None => (
                self.playlist.current().to_path_buf(),
                Some(track.stream_index),
            ),
        };
        // A track is read whole, ahead: a stream's would be a second
        // download of it, a live one's never ends.
        if track.external.is_none() && Location::of(&path).is_url() {
            warn!(
                track = track.id,
                "subtitles inside a network stream are not shown (a subtitle file is)"
            );
            return;
        }
        let (done, answer) = mpsc::channel();
        let wake = self.wake.clone();
        let reader = std::thread::Builder::new()
            .name("reel-subtitles".into())
            .spawn(move || {
                let _ = done.send(events::read(&path, stream));
                wake.ping();
            });
        match reader {
            Ok(_) => self.subtitles.reading = Some((track.id, answer)),
            Err(e) => warn!("cannot start reading subtitles: {e}"),
        }
    }

    /// `j`: the next subtitle track, none after the last, the first after
    /// none.
    pub(super) fn cycle_subtitles(&mut self) {
        let ids: Vec<usize> = self
            .tracks
            .list
            .iter()
            .filter(|t| t.kind == TrackKind::Subtitle)
            .map(|t| t.id)
            .collect();
        let next = match self.tracks.sub {
            None => ids.first().copied(),
            Some(current) => ids.iter().copied().find(|&id| id > current),
        };
        self.select_subtitles(next);
        let text = match next {
            Some(id) => format!("Subtitles: {id}"),
            None => "Subtitles: no".to_string(),
        };
        self.osd
            .show_message(std::time::Instant::now(), &text, Duration::from_secs(1));
    }

    /// The time cues are compared with for the frame on screen: its pts
    /// (a subtitle file's from the start of the video) less the delay.
    fn subtitle_clock_ms(&self) -> Option<i64> {
        let shown = self.transport.shown?;
        let external = self
            .tracks
            .sub
            .and_then(|id| {
                self.tracks
                    .list
                    .iter()
                    .find(|t| t.id == id && t.kind == TrackKind::Subtitle)
            })
            .is_some_and(|t| t.external.is_some());
        let pts = if external {
            shown.position
        } else {
            self.start_time + shown.position
        };
        Some((pts.as_secs_f64() * 1e3 - self.subtitles.delay * 1e3).round() as i64)
    }

    /// Takes a track read meanwhile, and draws the subtitles for the frame
    /// on screen when they changed.
    pub(super) fn update_subtitles(&mut self) {
        if let Some((id, answer)) = &self.subtitles.reading {
            match answer.try_recv() {
                Err(TryRecvError::Empty) => return,
                Err(TryRecvError::Disconnected) => self.subtitles.reading = None,
                Ok(read) => {
                    let id = *id;
                    self.subtitles.reading = None;
                    match read
                        .map_err(|e| e.to_string())
                        .and_then(|stream| Subtitles::new(stream).map_err(|e| e.to_string()))
                    {
                        Ok(loaded) => self.subtitles.loaded = Some(loaded),
                        Err(e) => warn!("subtitle track {id}: {e}: the video plays on without it"),
                    }
                }
            }
        }
        if !self.subtitles.visible || self.subtitles.loaded.is_none() {
            self.hide_subtitles();
            return;
        }
        let (Some(ms), Some(surface), Some(shown)) = (
            self.subtitle_clock_ms(),
            self.display.surface_size(),
            self.transport.shown,
        ) else {
            return;
        };
        let scale = self.display.overlay_scale().max(1);
        let size = (surface.0 * scale, surface.1 * scale, scale);
        let Some(subtitles) = self.subtitles.loaded.as_mut() else {
            return;
        };
        let Some(image) = subtitles.draw(ms, size, (shown.width, shown.height)) else {
            return;
        };
        debug!(ms, shown = image.is_some(), "subtitles drawn");
        self.subtitles.showing = image.is_some();
        if let Err(e) = self.display.show_subtitles(image.as_ref()) {
            warn!("cannot show subtitles: {e}");
        }
    }

    fn hide_subtitles(&mut self) {
        if std::mem::take(&mut self.subtitles.showing) {
            if let Err(e) = self.display.show_subtitles(None) {
                warn!("cannot hide subtitles: {e}");
            }
        }
        if let Some(loaded) = &mut self.subtitles.loaded {
            loaded.forget_drawn();
        }
    }

    /// mpv's `sub-text`: the text of the cues on screen.
    pub(super) fn subtitle_text(&self) -> Option<String> {
        let ms = self.subtitle_clock_ms()?;
        Some(
            self.subtitles
                .loaded
                .as_ref()
                .map_or_else(String::new, |s| s.text_at(ms)),
        )
    }

    /// `set_property sid VALUE`.
    pub(super) fn set_subtitle_track(&mut self, value: &Value) -> Result<(), IpcError> {
        let choice = track_choice(value)?;
        if self.playlist.loaded.is_none() {
            return Err(IpcError::PropertyUnavailable);
        }
        // A track the file lacks shows nothing, as in mpv.
        let choice = choice.filter(|&id| {
            self.tracks
                .list
                .iter()
                .any(|t| t.kind == TrackKind::Subtitle && t.id == id)
        });
        if choice != self.tracks.sub {
            self.select_subtitles(choice);
        }
        Ok(())
    }

    /// `sub-delay` in seconds; `sub-visibility`.
    pub(super) fn set_subtitle_timing(&mut self, delay: Option<f64>, visible: Option<bool>) {
        if let Some(delay) = delay.filter(|d| d.is_finite()) {
            self.subtitles.delay = delay;
            self.osd.show_message(
                std::time::Instant::now(),
                &format!("Sub delay: {:.0} ms", delay * 1e3),
                Duration::from_secs(1),
            );
        }
        if let Some(visible) = visible {
            self.subtitles.visible = visible;
        }
        if let Some(loaded) = &mut self.subtitles.loaded {
            loaded.forget_drawn();
        }
        self.update_subtitles();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sub(id: usize, default: bool, external: bool) -> TrackInfo {
        TrackInfo {
            kind: TrackKind::Subtitle,
            id,
            source_id: 0,
            stream_index: id,
            codec: "subrip".into(),
            title: None,
            language: None,
            default,
            forced: false,
            shape: TrackShape::Subtitle,
            external: external.then(|| PathBuf::from("/m/a.srt")),
        }
    }

    #[test]
    fn auto_prefers_a_file_then_the_default_track() {
        let own = [sub(1, false, false), sub(2, true, false)];
        assert_eq!(pick(&own, SubtitleChoice::Auto), Some(2));
        assert_eq!(pick(&own[..1], SubtitleChoice::Auto), None);
        let with_file = [sub(1, true, false), sub(2, false, true)];
        assert_eq!(pick(&with_file, SubtitleChoice::Auto), Some(2));
        assert_eq!(pick(&with_file, SubtitleChoice::Track(1)), Some(1));
        assert_eq!(pick(&with_file, SubtitleChoice::Track(3)), None);
        assert_eq!(pick(&with_file, SubtitleChoice::None), None);
    }

    #[test]
    fn sid_option() {
        assert_eq!(parse_sid("2"), Ok(SubtitleChoice::Track(2)));
        assert_eq!(parse_sid("no"), Ok(SubtitleChoice::None));
        assert_eq!(parse_sid("auto"), Ok(SubtitleChoice::Auto));
        assert!(parse_sid("0").is_err());
        assert!(parse_sid("first").is_err());
    }
}
