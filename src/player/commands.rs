//! What a user can ask of a playing reel, from the keyboard or the control
//! socket, the text form the control socket speaks, the key table, and the
//! player doing what was asked.

use std::time::{Duration, Instant};

use tracing::{debug, info, warn};

use super::control;
use super::ipc::events::{EndReason, PlayerEvent};
use super::speed::SpeedChange;
use super::Player;
use crate::audio::volume;
use crate::display::Key;
use crate::osd::OsdLevel;

/// Step back by this much when the frame's duration is unknown.
const FALLBACK_FRAME_DURATION: Duration = Duration::from_millis(40);

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SeekTarget {
    Absolute(Duration),
    Forward(Duration),
    Backward(Duration),
}

impl SeekTarget {
    /// The absolute target from the current position, clamped at zero.
    pub fn resolve(self, current: Duration) -> Duration {
        match self {
            Self::Absolute(t) => t,
            Self::Forward(d) => current + d,
            Self::Backward(d) => current.saturating_sub(d),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum VolumeChange {
    To(f64),
    By(f64),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Command {
    TogglePause,
    Pause,
    Resume,
    Seek(SeekTarget),
    /// Show the next frame and stay paused.
    StepForward,
    /// Show the previous frame and stay paused.
    StepBackward,
    ToggleFullscreen,
    SetFullscreen(bool),
    NextFile,
    PreviousFile,
    /// `o`: the OSD's status (level 3) on or off.
    ToggleOsdStatus,
    /// `i`: the stats page on or off.
    ToggleStats,
    SetOsdLevel(OsdLevel),
    /// `s`: the frame on screen as a PNG, named `reel-shot-NNNN.png`.
    Screenshot,
    /// Set the volume (percent) or change it by so much.
    Volume(VolumeChange),
    /// Mute (true), unmute (false) or toggle (None).
    Mute(Option<bool>),
    /// Play faster or slower.
    Speed(SpeedChange),
    /// `j`: the next subtitle track (none after the last).
    CycleSubtitles,
    /// `v`: subtitles shown or hidden.
    ToggleSubtitles,
    /// `z` / `x`: subtitles earlier or later by so many seconds.
    SubtitleDelay(f64),
    /// `!` / `@`: the previous or next chapter.
    Chapter {
        forward: bool,
    },
    /// Answer with the player's state (control socket only).
    Status,
    Quit,
    /// `Q`: quit, saving the position to resume from.
    QuitSavingPosition,
}

/// Parses one control-socket line, e.g. `seek +5`, `pause`, `status`.
pub fn parse_command(line: &str) -> Result<Command, String> {
    let mut words = line.split_whitespace();
    let verb = words.next().ok_or_else(|| "empty command".to_string())?;
    let arg = words.next();
    if words.next().is_some() {
        return Err(format!("too many arguments to '{verb}'"));
    }
    let no_arg = |c: Command| match arg {
        None => Ok(c),
        Some(a) => Err(format!("'{verb}' takes no argument, got '{a}'")),
    };
    match verb.to_ascii_lowercase().as_str() {
        "pause" => no_arg(Command::Pause),
        "resume" | "play" => no_arg(Command::Resume),
        "toggle" => no_arg(Command::TogglePause),
        "step" => no_arg(Command::StepForward),
        "back" => no_arg(Command::StepBackward),
        "next" => no_arg(Command::NextFile),
        "prev" | "previous" => no_arg(Command::PreviousFile),
        "status" => no_arg(Command::Status),
        "osd" => match arg {
            None | Some("toggle") => Ok(Command::ToggleOsdStatus),
            Some(a) => a
                .parse::<i64>()
                .ok()
                .and_then(OsdLevel::from_number)
                .map(Command::SetOsdLevel)
                .ok_or_else(|| format!("osd takes 0, 1, 3 or toggle, got '{a}'")),
        },
        "stats" => no_arg(Command::ToggleStats),
        "screenshot" => no_arg(Command::Screenshot),
        "quit" => no_arg(Command::Quit),
        "fullscreen" => match arg {
            None | Some("toggle") => Ok(Command::ToggleFullscreen),
            Some("on") => Ok(Command::SetFullscreen(true)),
            Some("off") => Ok(Command::SetFullscreen(false)),
            Some(a) => Err(format!("fullscreen takes on|off|toggle, got '{a}'")),
        },
        "mute" => match arg {
            None | Some("toggle") => Ok(Command::Mute(None)),
            Some("on") | Some("yes") => Ok(Command::Mute(Some(true))),
            Some("off") | Some("no") => Ok(Command::Mute(Some(false))),
            Some(a) => Err(format!("mute takes on|off|toggle, got '{a}'")),
        },
        "volume" => {
            let arg = arg.ok_or_else(|| "volume needs a percentage: 50, +2 or -2".to_string())?;
            let number = |text: &str| match text.parse::<f64>() {
                Ok(value) if value.is_finite() => Ok(value),
                _ => Err(format!("invalid volume '{arg}': expected 0..100, +N or -N")),
            };
            Ok(Command::Volume(if let Some(rest) = arg.strip_prefix('+') {
                VolumeChange::By(number(rest)?)
            } else if let Some(rest) = arg.strip_prefix('-') {
                VolumeChange::By(-number(rest)?)
            } else {
                VolumeChange::To(number(arg)?)
            }))
        }
        "speed" => {
            let arg = arg.ok_or_else(|| "speed needs a factor: 1.5, or *2 or /2".to_string())?;
            let number = |text: &str| match text.parse::<f64>() {
                Ok(value) if value.is_finite() && value > 0.0 => Ok(value),
                _ => Err(format!("invalid speed '{arg}': expected 1.5, *2 or /2")),
            };
            Ok(Command::Speed(if let Some(rest) = arg.strip_prefix('*') {
                SpeedChange::Times(number(rest)?)
            } else if let Some(rest) = arg.strip_prefix('/') {
                SpeedChange::Times(1.0 / number(rest)?)
            } else {
                SpeedChange::To(number(arg)?)
            }))
        }
        "seek" => {
            let arg = arg.ok_or_else(|| "seek needs a time: 12.5, +5, -5 or 1:02".to_string())?;
            let target = if let Some(rest) = arg.strip_prefix('+') {
                SeekTarget::Forward(parse_time(rest)?)
            } else if let Some(rest) = arg.strip_prefix('-') {
                SeekTarget::Backward(parse_time(rest)?)
            } else {
                SeekTarget::Absolute(parse_time(arg)?)
            };
            Ok(Command::Seek(target))
        }
        other => Err(format!("unknown command '{other}'")),
    }
}

/// Parses `12.5`, `1:02.5` or `1:00:02.5` into a duration.
pub fn parse_time(text: &str) -> Result<Duration, String> {
    let bad = || format!("invalid time '{text}': expected seconds or [[HH:]MM:]SS[.frac]");
    let parts: Vec<&str> = text.trim().split(':').collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(bad());
    }
    let mut seconds = 0f64;
    let last = parts.len() - 1;
    for (i, part) in parts.iter().enumerate() {
        let value: f64 = if i == last {
            part.parse().map_err(|_| bad())?
        } else {
            part.parse::<u32>().map_err(|_| bad())? as f64
        };
        if !value.is_finite() || value < 0.0 || (i > 0 && value >= 60.0) {
            return Err(bad());
        }
        seconds = seconds * 60.0 + value;
    }
    Duration::try_from_secs_f64(seconds).map_err(|_| bad())
}

impl Player {
    pub(super) fn execute(&mut self, command: Command) {
        debug!(?command, "command");
        let shows_on_osd = matches!(
            command,
            Command::TogglePause
                | Command::Pause
                | Command::Resume
                | Command::Seek(_)
                | Command::StepForward
                | Command::StepBackward
        );
        if shows_on_osd && self.playlist.loaded.is_some() {
            self.osd.event(Instant::now(), false);
        }
        if self.on_schedule()
            && matches!(
                command,
                Command::Seek(_)
                    | Command::StepForward
                    | Command::StepBackward
                    | Command::NextFile
                    | Command::PreviousFile
            )
        {
            info!("{command:?} ignored: playback follows --sync-epoch");
            return;
        }
        match command {
            Command::TogglePause => self.set_paused(!self.transport.paused),
            Command::Pause => self.set_paused(true),
            Command::Resume => self.set_paused(false),
            Command::Seek(target) => {
                // From a seek in flight, relative seeks count from its target.
                let from = self
                    .transport
                    .seek_target
                    .unwrap_or_else(|| self.transport.position());
                self.seek_to(target.resolve(from));
                self.announce_seek();
            }
            Command::StepForward => {
                self.set_paused(true);
                if self.transport.preroll {
                    self.transport.pending_steps += 1;
                } else if self.transport.next.is_some() || !self.transport.ended {
                    self.transport.preroll = true;
                }
            }
            Command::StepBackward => {
                self.set_paused(true);
                if let Some(shown) = self.transport.shown {
                    let step = if shown.duration.is_zero() {
                        FALLBACK_FRAME_DURATION
                    } else {
                        shown.duration
                    };
                    self.seek_to(SeekTarget::Backward(step).resolve(shown.position));
                    self.announce_seek();
                }
            }
            Command::ToggleFullscreen => {
                let on = !self.display.is_fullscreen();
                self.display.set_fullscreen(on);
            }
            Command::SetFullscreen(on) => self.display.set_fullscreen(on),
            Command::NextFile | Command::PreviousFile if self.playlist.is_empty() => {}
            Command::NextFile => {
                let next = (self.playlist.index + 1) % self.playlist.len();
                self.open_file(next, None, EndReason::Stop);
            }
            Command::PreviousFile => {
                let count = self.playlist.len();
                self.open_file(
                    (self.playlist.index + count - 1) % count,
                    None,
                    EndReason::Stop,
                );
            }
            Command::ToggleOsdStatus => self.osd.toggle_status(),
            Command::ToggleStats => self.osd.toggle_stats(),
            Command::SetOsdLevel(level) => self.osd.set_level(level),
            Command::Screenshot => {
                if let Err(e) = self.screenshot(None) {
                    warn!("screenshot: {e:#}");
                }
            }
            Command::Volume(change) => self.change_volume(Some(change), None),
            Command::Mute(mute) => self.change_volume(None, Some(mute)),
            Command::Speed(change) => self.change_speed(change),
            Command::CycleSubtitles => self.cycle_subtitles(),
            Command::ToggleSubtitles => {
                let visible = !self.subtitles.visible;
                self.set_subtitle_timing(None, Some(visible));
            }
            Command::Chapter { forward } => self.step_chapter(forward),
            Command::SubtitleDelay(by) => {
                let delay = self.subtitles.delay + by;
                self.set_subtitle_timing(Some(delay), None);
            }
            Command::Status => {}
            Command::Quit => self.quit(),
            Command::QuitSavingPosition => {
                self.save_position();
                self.quit();
            }
        }
        self.pump();
    }

    /// A seek was asked for: `seek` now, `playback-restart` when it lands.
    pub(super) fn announce_seek(&mut self) {
        if self.source.is_some() {
            self.transport.announce_restart = true;
            self.emit(PlayerEvent::Seek);
        }
    }
}

impl control::CommandTarget for Player {
    fn control(&mut self, line: &str) -> String {
        match parse_command(line) {
            Ok(Command::Status) => self.status(),
            Ok(Command::Screenshot) => match self.screenshot(None) {
                Ok(path) => format!("ok {}", path.display()),
                Err(e) => {
                    warn!("screenshot: {e:#}");
                    format!("error: {e:#}")
                }
            },
            Ok(command) => {
                self.execute(command);
                "ok".to_string()
            }
            Err(e) => {
                warn!("control: {e}");
                format!("error: {e}")
            }
        }
    }
}

/// The keys, as the README lists them.
pub(super) fn key_command(key: Key) -> Option<Command> {
    let five = Duration::from_secs(5);
    let minute = Duration::from_secs(60);
    Some(match key {
        Key::Space => Command::TogglePause,
        Key::Left => Command::Seek(SeekTarget::Backward(five)),
        Key::Right => Command::Seek(SeekTarget::Forward(five)),
        Key::Up => Command::Seek(SeekTarget::Backward(minute)),
        Key::Down => Command::Seek(SeekTarget::Forward(minute)),
        Key::PageUp => Command::PreviousFile,
        Key::PageDown => Command::NextFile,
        Key::Escape | Key::Char('q') => Command::Quit,
        Key::Char('Q') => Command::QuitSavingPosition,
        Key::Char('f') => Command::ToggleFullscreen,
        Key::Char('.') => Command::StepForward,
        Key::Char(',') => Command::StepBackward,
        Key::Char('o') => Command::ToggleOsdStatus,
        Key::Char('i') => Command::ToggleStats,
        Key::Char('s') => Command::Screenshot,
        Key::Char('9') => Command::Volume(VolumeChange::By(-volume::KEY_STEP)),
        Key::Char('0') => Command::Volume(VolumeChange::By(volume::KEY_STEP)),
        Key::Char('m') => Command::Mute(None),
        // mpv's: 10 % slower or faster, half or twice, back to 1x.
        Key::Char('[') => Command::Speed(SpeedChange::Times(1.0 / 1.1)),
        Key::Char(']') => Command::Speed(SpeedChange::Times(1.1)),
        Key::Char('{') => Command::Speed(SpeedChange::Times(0.5)),
        Key::Char('}') => Command::Speed(SpeedChange::Times(2.0)),
        Key::Backspace => Command::Speed(SpeedChange::To(1.0)),
        Key::Char('j') => Command::CycleSubtitles,
        Key::Char('v') => Command::ToggleSubtitles,
        Key::Char('z') => Command::SubtitleDelay(-0.1),
        Key::Char('x') => Command::SubtitleDelay(0.1),
        Key::Char('!') => Command::Chapter { forward: false },
        Key::Char('@') => Command::Chapter { forward: true },
        Key::Char(_) => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_control_lines() {
        assert_eq!(parse_command("pause"), Ok(Command::Pause));
        assert_eq!(parse_command("  STATUS \n"), Ok(Command::Status));
        assert_eq!(
            parse_command("seek +5"),
            Ok(Command::Seek(SeekTarget::Forward(Duration::from_secs(5))))
        );
        assert_eq!(
            parse_command("seek -0.5"),
            Ok(Command::Seek(SeekTarget::Backward(Duration::from_millis(
                500
            ))))
        );
        assert_eq!(
            parse_command("seek 1:02"),
            Ok(Command::Seek(SeekTarget::Absolute(Duration::from_secs(62))))
        );
        assert_eq!(
            parse_command("fullscreen on"),
            Ok(Command::SetFullscreen(true))
        );
        assert_eq!(
            parse_command("osd 3"),
            Ok(Command::SetOsdLevel(OsdLevel::Status))
        );
        assert_eq!(parse_command("osd"), Ok(Command::ToggleOsdStatus));
        assert_eq!(parse_command("stats"), Ok(Command::ToggleStats));
        assert_eq!(parse_command("screenshot"), Ok(Command::Screenshot));
        assert_eq!(
            parse_command("volume 50"),
            Ok(Command::Volume(VolumeChange::To(50.0)))
        );
        assert_eq!(
            parse_command("volume -2"),
            Ok(Command::Volume(VolumeChange::By(-2.0)))
        );
        assert_eq!(parse_command("mute"), Ok(Command::Mute(None)));
        assert_eq!(parse_command("mute off"), Ok(Command::Mute(Some(false))));
        for bad in [
            "volume",
            "volume loud",
            "volume nan",
            "mute maybe",
            "",
            "seek",
            "seek x",
            "pause now",
            "fly",
            "fullscreen maybe",
            "seek 1 2",
            "osd 2",
            "osd x",
            "screenshot now",
        ] {
            assert!(parse_command(bad).is_err(), "'{bad}' accepted");
        }
    }

    #[test]
    fn relative_seeks_clamp_at_zero() {
        let at = Duration::from_secs(3);
        assert_eq!(
            SeekTarget::Backward(Duration::from_secs(5)).resolve(at),
            Duration::ZERO
        );
        assert_eq!(
            SeekTarget::Forward(Duration::from_secs(5)).resolve(at),
            Duration::from_secs(8)
        );
    }

    #[test]
    fn speed_keys_and_lines_as_mpv() {
        assert_eq!(
            key_command(Key::Char('}')),
            Some(Command::Speed(SpeedChange::Times(2.0)))
        );
        assert_eq!(
            key_command(Key::Char('[')),
            Some(Command::Speed(SpeedChange::Times(1.0 / 1.1)))
        );
        assert_eq!(
            key_command(Key::Backspace),
            Some(Command::Speed(SpeedChange::To(1.0)))
        );
        assert_eq!(
            parse_command("speed 0.5"),
            Ok(Command::Speed(SpeedChange::To(0.5)))
        );
        assert_eq!(
            parse_command("speed /2"),
            Ok(Command::Speed(SpeedChange::Times(0.5)))
        );
        for bad in ["speed", "speed 0", "speed -1", "speed *inf", "speed fast"] {
            assert!(parse_command(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn volume_keys_as_mpv() {
        assert_eq!(
            key_command(Key::Char('9')),
            Some(Command::Volume(VolumeChange::By(-2.0)))
        );
        assert_eq!(
            key_command(Key::Char('0')),
            Some(Command::Volume(VolumeChange::By(2.0)))
        );
        assert_eq!(key_command(Key::Char('m')), Some(Command::Mute(None)));
    }
}
