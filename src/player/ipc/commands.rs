//! mpv's commands, parsed from a request's command array. Arguments may be
//! JSON numbers or strings holding numbers, as mpv accepts both.

use std::path::PathBuf;

use serde_json::Value;

use super::codec::IpcError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadMode {
    /// Stop what plays and play this (mpv's default).
    Replace,
    Append,
    /// Append, and start playing it if nothing plays.
    AppendPlay,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SeekTo {
    Relative(f64),
    Absolute(f64),
    AbsolutePercent(f64),
}

#[derive(Debug, Clone, PartialEq)]
pub enum IpcCommand {
    LoadFile {
        path: PathBuf,
        mode: LoadMode,
    },
    PlaylistNext,
    PlaylistPrev,
    /// Seeks are frame-exact in reel whether `exact` or `keyframes` is asked.
    Seek(SeekTo),
    FrameStep,
    FrameBackStep,
    /// `cycle NAME`: only boolean properties (pause, fullscreen).
    Cycle(String),
    SetProperty(String, Value),
    GetProperty(String),
    ObserveProperty(Value, String),
    UnobserveProperty(Value),
    /// The value as text (`yes`/`no`, `0.500000`...), null when unknown.
    GetPropertyString(String),
    /// `add NAME [VALUE]`: a number property changed by VALUE (1 unless
    /// given); a flag set on by a positive VALUE, off by a negative one.
    Add(String, f64),
    /// `multiply NAME FACTOR`.
    Multiply(String, f64),
    /// `show-text TEXT [DURATION_MS [LEVEL]]`: TEXT on the OSD.
    ShowText {
        text: String,
        duration_ms: Option<f64>,
    },
    /// `playlist-remove INDEX|current` (None: the file playing).
    PlaylistRemove(Option<usize>),
    /// The client API version whose shapes reel speaks.
    GetVersion,
    /// The client's name (`ipc_N`).
    ClientName,
    /// The player's clock, in microseconds.
    GetTimeUs,
    ScreenshotToFile(PathBuf),
    /// mpv's `screenshot`: the next `reel-shot-NNNN.png` (its flags are
    /// accepted; reel writes the video frame in any case).
    Screenshot,
    Quit,
}

pub fn parse(command: &[Value]) -> Result<IpcCommand, IpcError> {
    let bad = IpcError::InvalidParameter;
    let name = command.first().and_then(Value::as_str).ok_or(bad)?;
    let args = &command[1..];
    let text = |i: usize| args.get(i).and_then(Value::as_str).ok_or(bad);
    let arity = |min: usize, max: usize| {
        if (min..=max).contains(&args.len()) {
            Ok(())
        } else {
            Err(bad)
        }
    };
    Ok(match name {
        "loadfile" => {
            arity(1, 3)?;
            let mode = match args.get(1).map(|v| v.as_str().ok_or(bad)).transpose()? {
                None | Some("replace") => LoadMode::Replace,
                Some("append") => LoadMode::Append,
                Some("append-play") => LoadMode::AppendPlay,
                Some(_) => return Err(bad),
            };
            IpcCommand::LoadFile {
                path: PathBuf::from(text(0)?),
                mode,
            }
        }
        "playlist-next" | "playlist-prev" => {
            arity(0, 1)?;
            match args.first().map(|v| v.as_str().ok_or(bad)).transpose()? {
                None | Some("weak") | Some("force") => {}
                Some(_) => return Err(bad),
            }
            if name == "playlist-next" {
                IpcCommand::PlaylistNext
            } else {
                IpcCommand::PlaylistPrev
            }
        }
        "seek" => {
            arity(1, 3)?;
            let amount = number(&args[0]).ok_or(bad)?;
            let flags = args.get(1).map(|v| v.as_str().ok_or(bad)).transpose()?;
            IpcCommand::Seek(seek_target(amount, flags.unwrap_or("relative"))?)
        }
        "frame-step" => {
            arity(0, 0)?;
            IpcCommand::FrameStep
        }
        "frame-back-step" => {
            arity(0, 0)?;
            IpcCommand::FrameBackStep
        }
        "cycle" => {
            arity(1, 2)?;
            IpcCommand::Cycle(text(0)?.to_string())
        }
        "set_property" | "set" => {
            arity(2, 2)?;
            IpcCommand::SetProperty(text(0)?.to_string(), args[1].clone())
        }
        "get_property" => {
            arity(1, 1)?;
            IpcCommand::GetProperty(text(0)?.to_string())
        }
        "observe_property" => {
            arity(2, 2)?;
            IpcCommand::ObserveProperty(observer_id(&args[0])?, text(1)?.to_string())
        }
        "unobserve_property" => {
            arity(1, 1)?;
            IpcCommand::UnobserveProperty(observer_id(&args[0])?)
        }
        "get_property_string" => {
            arity(1, 1)?;
            IpcCommand::GetPropertyString(text(0)?.to_string())
        }
        "add" => {
            arity(1, 2)?;
            let by = args.get(1).map(|v| number(v).ok_or(bad)).transpose()?;
            IpcCommand::Add(text(0)?.to_string(), by.unwrap_or(1.0))
        }
        "multiply" => {
            arity(2, 2)?;
            let factor = number(&args[1]).ok_or(bad)?;
            IpcCommand::Multiply(text(0)?.to_string(), factor)
        }
        "show-text" | "show_text" => {
            arity(1, 3)?;
            let duration_ms = args.get(1).map(|v| number(v).ok_or(bad)).transpose()?;
            let text = match &args[0] {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            IpcCommand::ShowText { text, duration_ms }
        }
        "playlist-remove" => {
            arity(1, 1)?;
            match &args[0] {
                Value::String(s) if s == "current" => IpcCommand::PlaylistRemove(None),
                value => {
                    let index = number(value).ok_or(bad)?;
                    if index.fract() != 0.0 {
                        return Err(bad);
                    }
                    // A negative index names no entry: refused when run.
                    IpcCommand::PlaylistRemove(Some(if index < 0.0 {
                        usize::MAX
                    } else {
                        index as usize
                    }))
                }
            }
        }
        "get_version" => {
            arity(0, 0)?;
            IpcCommand::GetVersion
        }
        "client_name" => {
            arity(0, 0)?;
            IpcCommand::ClientName
        }
        "get_time_us" => {
            arity(0, 0)?;
            IpcCommand::GetTimeUs
        }
        "screenshot" => {
            arity(0, 2)?;
            IpcCommand::Screenshot
        }
        "screenshot-to-file" => {
            arity(1, 2)?;
            IpcCommand::ScreenshotToFile(PathBuf::from(text(0)?))
        }
        "quit" => {
            arity(0, 1)?;
            IpcCommand::Quit
        }
        _ => return Err(bad),
    })
}

/// mpv's observer ids are integers.
fn observer_id(value: &Value) -> Result<Value, IpcError> {
    match value {
        Value::Number(n) if n.is_i64() || n.is_u64() => Ok(value.clone()),
        _ => Err(IpcError::InvalidParameter),
    }
}

pub fn number(value: &Value) -> Option<f64> {
    let n = match value {
        Value::Number(n) => n.as_f64()?,
        Value::String(s) => s.trim().parse().ok()?,
        _ => return None,
    };
    n.is_finite().then_some(n)
}

/// `relative`, `absolute`, `absolute-percent`, each optionally joined with
/// `+exact` or `+keyframes` (in either order).
fn seek_target(amount: f64, flags: &str) -> Result<SeekTo, IpcError> {
    let mut target = SeekTo::Relative(amount);
    for flag in flags.split('+') {
        match flag {
            "relative" => target = SeekTo::Relative(amount),
            "absolute" => target = SeekTo::Absolute(amount),
            "absolute-percent" => target = SeekTo::AbsolutePercent(amount),
            "exact" | "keyframes" => {}
            _ => return Err(IpcError::InvalidParameter),
        }
    }
    Ok(target)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cmd(value: Value) -> Result<IpcCommand, IpcError> {
        parse(value.as_array().expect("array"))
    }

    #[test]
    fn parses_mpv_commands() {
        assert_eq!(
            cmd(json!(["seek", 0.5, "absolute+exact"])),
            Ok(IpcCommand::Seek(SeekTo::Absolute(0.5)))
        );
        assert_eq!(
            cmd(json!(["seek", "-2"])),
            Ok(IpcCommand::Seek(SeekTo::Relative(-2.0)))
        );
        assert_eq!(
            cmd(json!(["seek", 50, "absolute-percent"])),
            Ok(IpcCommand::Seek(SeekTo::AbsolutePercent(50.0)))
        );
        assert_eq!(
            cmd(json!(["loadfile", "/a.mp4", "append-play"])),
            Ok(IpcCommand::LoadFile {
                path: "/a.mp4".into(),
                mode: LoadMode::AppendPlay
            })
        );
        assert_eq!(
            cmd(json!(["observe_property", 1, "pause"])),
            Ok(IpcCommand::ObserveProperty(json!(1), "pause".into()))
        );
        assert_eq!(
            cmd(json!(["add", "volume", "-10"])),
            Ok(IpcCommand::Add("volume".into(), -10.0))
        );
        assert_eq!(
            cmd(json!(["add", "volume"])),
            Ok(IpcCommand::Add("volume".into(), 1.0))
        );
        assert_eq!(
            cmd(json!(["playlist-remove", "current"])),
            Ok(IpcCommand::PlaylistRemove(None))
        );
        assert_eq!(
            cmd(json!(["playlist-remove", "2"])),
            Ok(IpcCommand::PlaylistRemove(Some(2)))
        );
        assert_eq!(
            cmd(json!(["show-text", "hi", 500])),
            Ok(IpcCommand::ShowText {
                text: "hi".into(),
                duration_ms: Some(500.0)
            })
        );
    }

    #[test]
    fn refuses_what_mpv_refuses() {
        for bad in [
            json!(["seek", "abc"]),
            json!(["seek", 1, "sideways"]),
            json!(["get_property"]),
            json!(["no-such-command"]),
            json!(["loadfile", "/a.mp4", "insert-somewhere"]),
            json!(["observe_property", "x", "pause"]),
            json!(["run", "sh", "-c", "true"]),
            json!(["add", "volume", "lots"]),
            json!(["get_version", 1]),
            json!([7]),
        ] {
            assert_eq!(cmd(bad.clone()), Err(IpcError::InvalidParameter), "{bad}");
        }
    }
}
