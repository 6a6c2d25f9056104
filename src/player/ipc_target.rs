//! The player's side of the JSON IPC: its state as mpv's properties and
//! mpv's commands as the player's own operations.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{json, Value};
use tracing::warn;

use super::commands::{Command, SeekTarget, VolumeChange};
use super::ipc::codec::{IpcError, Outcome};
use super::ipc::commands::{number, IpcCommand, LoadMode, SeekTo};
use super::ipc::events::{EndReason, PlayerEvent};
use super::ipc::properties::{Loaded, Picture, Property, Snapshot};
use super::ipc::{IpcTarget, Server};
use super::speed::SpeedChange;
use super::Player;
use crate::frame::{DecoderKind, PixelFormat};
use crate::media::tracks::TrackKind;

/// libavcodec's name of a layout and its bits per pixel, as mpv reports
/// them in `video-params`.
fn pixel_format_name(format: PixelFormat) -> (&'static str, u32) {
    match format {
        PixelFormat::Yuv420 => ("yuv420p", 12),
        PixelFormat::Yuv422 => ("yuv422p", 16),
        PixelFormat::Yuv444 => ("yuv444p", 24),
        PixelFormat::Nv12 => ("nv12", 12),
        PixelFormat::Yuv420p10 => ("yuv420p10", 24),
        PixelFormat::P010 => ("p010", 24),
        PixelFormat::Gray8 => ("gray", 8),
    }
}

/// mpv's `hwdec-current` words: `no` for software decoding; FFmpeg's name
/// of the V4L2 request API hwaccel for reel's V4L2 path.
fn hwdec_name(decoder: DecoderKind) -> &'static str {
    match decoder {
        DecoderKind::Software => "no",
        DecoderKind::V4l2Stateless => "v4l2request",
    }
}

/// mpv's flag values: JSON booleans, or "yes"/"no".
fn flag(value: &Value) -> Result<bool, IpcError> {
    match value {
        Value::Bool(b) => Ok(*b),
        Value::String(s) if s == "yes" => Ok(true),
        Value::String(s) if s == "no" => Ok(false),
        _ => Err(IpcError::UnsupportedFormat),
    }
}

fn seconds(value: f64) -> Duration {
    Duration::try_from_secs_f64(value.max(0.0)).unwrap_or(Duration::ZERO)
}

impl Player {
    /// Queues `event` for the IPC clients. mpv reports a property's change
    /// before the event it leads to, except that a file's end and the next
    /// one's start come first.
    pub(super) fn emit(&mut self, event: PlayerEvent) {
        let changes_first = !matches!(
            event,
            PlayerEvent::EndFile { .. } | PlayerEvent::StartFile { .. }
        );
        if self.ipc.is_some() {
            let snapshot = changes_first.then(|| self.snapshot());
            if let Some(ipc) = self.ipc.as_mut() {
                ipc.broadcast(snapshot.as_ref(), &event);
            }
        }
    }

    pub(super) fn flush_ipc(&mut self) {
        if self.ipc.is_some() {
            let snapshot = self.snapshot();
            if let Some(ipc) = self.ipc.as_mut() {
                ipc.publish_changes(&snapshot);
                ipc.flush();
            }
        }
    }

    fn snapshot_loaded(&self) -> Loaded {
        let picture = self.transport.shown.map(|shown| {
            let (pixel_format, bits_per_pixel) = pixel_format_name(shown.format);
            Picture {
                width: shown.width,
                height: shown.height,
                sample_aspect: shown.sample_aspect,
                pixel_format,
                bits_per_pixel,
                hwdec: hwdec_name(shown.decoder),
            }
        });
        Loaded {
            position: self.transport.shown.map(|s| s.position.as_secs_f64()),
            duration: self.file_duration.map(|d| d.as_secs_f64()),
            frame_rate: self.file_frame_rate,
            picture,
            eof_reached: self.transport.at_end() && !self.transport.preroll,
            frame_duration: self
                .transport
                .shown
                .map_or(0.0, |s| s.duration.as_secs_f64()),
            video_codec: self.file_video_codec.clone(),
            file_format: self.file_format.clone(),
            track_list: self.tracks.to_json(),
            vid: self.tracks.selected(TrackKind::Video),
            aid: self.tracks.selected(TrackKind::Audio),
            sid: self.tracks.selected(TrackKind::Subtitle),
            sub_text: self.tracks.sub.and_then(|_| self.subtitle_text()),
            chapter_list: super::chapters::chapter_list(&self.tracks.chapters, self.start_time),
            chapter: super::chapters::chapter_at(
                &self.tracks.chapters,
                self.start_time,
                self.transport.position(),
            ),
            cache: self.cache_state(),
        }
    }

    fn screenshot_ipc(&mut self, out: Option<PathBuf>) -> Outcome {
        match self.screenshot(out) {
            Ok(_) => Ok(Some(Value::Null)),
            Err(e) => {
                warn!("screenshot: {e:#}");
                Err(IpcError::CommandFailed)
            }
        }
    }

    fn seek_ipc(&mut self, to: SeekTo) -> Outcome {
        if self.playlist.loaded.is_none() {
            return Err(IpcError::CommandFailed);
        }
        if self.playing_live() {
            // As mpv: the command succeeds and nothing moves.
            warn!("cannot seek in a live stream");
            return Ok(Some(Value::Null));
        }
        let duration = self.file_duration.map(|d| d.as_secs_f64());
        let target = match to {
            SeekTo::Relative(delta) => {
                let from = self
                    .transport
                    .seek_target
                    .unwrap_or_else(|| self.transport.position());
                from.as_secs_f64() + delta
            }
            SeekTo::Absolute(at) if at < 0.0 => duration.ok_or(IpcError::CommandFailed)? + at,
            SeekTo::Absolute(at) => at,
            SeekTo::AbsolutePercent(percent) => {
                duration.ok_or(IpcError::CommandFailed)? * percent / 100.0
            }
        };
        self.execute(Command::Seek(SeekTarget::Absolute(seconds(target))));
        Ok(Some(Value::Null))
    }

    /// Whether the file loaded is a live network stream (no duration):
    /// nothing behind or ahead of now to seek to.
    fn playing_live(&self) -> bool {
        self.file_duration.is_none()
            && crate::media::location::Location::of(self.playlist.current()).is_url()
    }

    fn load_ipc(&mut self, path: std::path::PathBuf, mode: LoadMode) -> Outcome {
        if mode == LoadMode::Replace {
            self.close_file(EndReason::Stop);
            self.playlist.clear();
        }
        let entry = self.playlist.push(path);
        let index = self.playlist.len() - 1;
        if mode == LoadMode::Replace
            || (mode == LoadMode::AppendPlay && self.playlist.loaded.is_none())
        {
            self.open_file(index, None, EndReason::Stop);
            self.pump();
        }
        Ok(Some(json!({ "playlist_entry_id": entry })))
    }

    /// Plays playlist entry `index` if there is one (wrapping with `--loop`).
    fn move_in_playlist(&mut self, forward: bool) -> Outcome {
        let count = self.playlist.len();
        if self.playlist.loaded.is_none() || count == 0 {
            return Err(IpcError::CommandFailed);
        }
        let index = match (forward, self.playlist.index) {
            (true, i) if i + 1 < count => i + 1,
            (false, i) if i > 0 => i - 1,
            _ if self.options.looping => {
                (self.playlist.index + if forward { 1 } else { count - 1 }) % count
            }
            _ => return Err(IpcError::CommandFailed),
        };
        self.open_file(index, None, EndReason::Stop);
        self.pump();
        Ok(Some(Value::Null))
    }

    /// Removes playlist entry `which` (None: the one playing); removing
    /// the file playing plays the next one, or ends the playlist.
    fn playlist_remove_ipc(&mut self, which: Option<usize>) -> Outcome {
        let playing = self.playlist.loaded.map(|_| self.playlist.index);
        let index = which.or(playing).ok_or(IpcError::CommandFailed)?;
        if index >= self.playlist.len() {
            return Err(IpcError::CommandFailed);
        }
        if playing == Some(index) {
            self.close_file(EndReason::Stop);
        }
        self.playlist.remove(index);
        if playing == Some(index) {
            if index < self.playlist.len() {
                self.open_file(index, None, EndReason::Stop);
            } else {
                self.end_of_playlist();
            }
            self.pump();
        }
        Ok(Some(Value::Null))
    }

    fn show_text_ipc(&mut self, text: &str, duration_ms: Option<f64>) -> Outcome {
        let duration = match duration_ms {
            Some(ms) if ms >= 0.0 => seconds(ms / 1000.0),
            _ => super::osd_feed::EVENT_DURATION,
        };
        self.osd
            .show_message(std::time::Instant::now(), text, duration);
        self.pump();
        Ok(Some(Value::Null))
    }

    fn run_loaded(&mut self, command: Command) -> Outcome {
        if self.playlist.loaded.is_none() {
            return Err(IpcError::CommandFailed);
        }
        self.execute(command);
        Ok(Some(Value::Null))
    }
}

impl IpcTarget for Player {
    fn ipc_server(&mut self) -> Option<&mut Server> {
        self.ipc.as_mut()
    }

    fn snapshot(&self) -> Snapshot {
        Snapshot {
            paused: self.transport.paused,
            volume: self.volume.percent,
            muted: self.volume.muted,
            fullscreen: self.display.is_fullscreen(),
            playlist: self.playlist.files.clone(),
            playlist_ids: self.playlist.entry_ids.clone(),
            current: self.playlist.loaded.map(|_| self.playlist.index),
            loaded: self.playlist.loaded.map(|_| self.snapshot_loaded()),
            osd_level: self.osd.level().number(),
            loop_playlist: self.options.looping,
            speed: self.speed(),
            sub_delay: self.subtitles.delay,
            sub_visibility: self.subtitles.visible,
        }
    }

    fn run_ipc(&mut self, command: IpcCommand) -> Outcome {
        match command {
            IpcCommand::LoadFile { path, mode } => self.load_ipc(path, mode),
            IpcCommand::PlaylistNext => self.move_in_playlist(true),
            IpcCommand::PlaylistPrev => self.move_in_playlist(false),
            IpcCommand::Seek(to) => self.seek_ipc(to),
            IpcCommand::FrameStep => self.run_loaded(Command::StepForward),
            IpcCommand::FrameBackStep => self.run_loaded(Command::StepBackward),
            IpcCommand::Cycle(name) => {
                let command = match Property::from_name(&name) {
                    Some(Property::Pause) => Command::TogglePause,
                    Some(Property::Fullscreen) => Command::ToggleFullscreen,
                    Some(Property::Mute) => Command::Mute(None),
                    Some(Property::Sid) => Command::CycleSubtitles,
                    Some(Property::SubVisibility) => Command::ToggleSubtitles,
                    Some(_) => return Err(IpcError::CommandFailed),
                    None => return Err(IpcError::PropertyNotFound),
                };
                self.execute(command);
                Ok(Some(Value::Null))
            }
            IpcCommand::ScreenshotToFile(_) | IpcCommand::Screenshot
                if self.playlist.loaded.is_none() =>
            {
                Err(IpcError::CommandFailed)
            }
            IpcCommand::ScreenshotToFile(out) => self.screenshot_ipc(Some(out)),
            IpcCommand::Screenshot => self.screenshot_ipc(None),
            IpcCommand::Quit => {
                self.execute(Command::Quit);
                Ok(Some(Value::Null))
            }
            IpcCommand::ShowText { text, duration_ms } => self.show_text_ipc(&text, duration_ms),
            IpcCommand::PlaylistRemove(which) => self.playlist_remove_ipc(which),
            IpcCommand::GetProperty(_)
            | IpcCommand::GetPropertyString(_)
            | IpcCommand::Add(..)
            | IpcCommand::Multiply(..)
            | IpcCommand::GetVersion
            | IpcCommand::ClientName
            | IpcCommand::GetTimeUs
            | IpcCommand::SetProperty(..)
            | IpcCommand::ObserveProperty(..)
            | IpcCommand::UnobserveProperty(_) => Err(IpcError::InvalidParameter),
        }
    }

    fn set_property(&mut self, property: Property, value: &Value) -> Result<(), IpcError> {
        match property {
            Property::Pause => {
                let paused = flag(value)?;
                self.execute(if paused {
                    Command::Pause
                } else {
                    Command::Resume
                });
            }
            Property::Fullscreen => self.execute(Command::SetFullscreen(flag(value)?)),
            Property::OsdLevel => {
                let level = value
                    .as_i64()
                    .and_then(crate::osd::OsdLevel::from_number)
                    .ok_or(IpcError::UnsupportedFormat)?;
                self.execute(Command::SetOsdLevel(level));
            }
            Property::Mute => self.execute(Command::Mute(Some(flag(value)?))),
            Property::Volume => {
                let percent = number(value).ok_or(IpcError::UnsupportedFormat)?;
                self.execute(Command::Volume(VolumeChange::To(percent)));
            }
            Property::PlaylistPos => {
                let index = value.as_i64().ok_or(IpcError::UnsupportedFormat)?;
                // Out of range is accepted and does nothing, as in mpv.
                if let Ok(index) = usize::try_from(index) {
                    if index < self.playlist.len() {
                        self.open_file(index, None, EndReason::Stop);
                        self.pump();
                    }
                }
            }
            Property::TimePos | Property::PercentPos => {
                let at = number(value).ok_or(IpcError::UnsupportedFormat)?;
                let to = if property == Property::TimePos {
                    SeekTo::Absolute(at)
                } else {
                    SeekTo::AbsolutePercent(at)
                };
                self.seek_ipc(to)
                    .map_err(|_| IpcError::PropertyUnavailable)?;
            }
            Property::Speed => {
                let speed = number(value).ok_or(IpcError::UnsupportedFormat)?;
                if !(speed.is_finite() && speed > 0.0) {
                    return Err(IpcError::PropertyError);
                }
                self.execute(Command::Speed(SpeedChange::To(speed)));
            }
            Property::Aid => self.set_audio_track(value)?,
            Property::Sid => self.set_subtitle_track(value)?,
            Property::Chapter => {
                let index = value.as_i64().ok_or(IpcError::UnsupportedFormat)?;
                self.go_to_chapter(index)?;
            }
            Property::SubDelay => {
                let delay = number(value).ok_or(IpcError::UnsupportedFormat)?;
                self.set_subtitle_timing(Some(delay), None);
            }
            Property::SubVisibility => self.set_subtitle_timing(None, Some(flag(value)?)),
            Property::LoopPlaylist => {
                self.options.looping = match value {
                    Value::String(s) if s == "inf" || s == "yes" => true,
                    Value::String(s) if s == "no" => false,
                    Value::Bool(on) => *on,
                    _ => return Err(IpcError::UnsupportedFormat),
                };
            }
            _ => return Err(IpcError::PropertyError),
        }
        Ok(())
    }
}
