//! The player's events in mpv's words (`start-file`, `end-file`, ...).

use serde_json::{json, Value};

/// Why a file stopped playing (mpv's `end-file` reasons; mpv's `redirect`
/// is for playlist files, which reel does not expand).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndReason {
    Eof,
    /// Another file was asked for (playlist move, `loadfile replace`).
    Stop,
    Quit,
    Error,
}

impl EndReason {
    fn as_str(self) -> &'static str {
        match self {
            Self::Eof => "eof",
            Self::Stop => "stop",
            Self::Quit => "quit",
            Self::Error => "error",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlayerEvent {
    StartFile {
        entry: u64,
    },
    FileLoaded,
    Seek,
    /// The first frame after a load or a seek is on screen.
    PlaybackRestart,
    EndFile {
        entry: u64,
        reason: EndReason,
    },
    /// Nothing to play: waiting for `loadfile` (`--idle`).
    Idle,
}

impl PlayerEvent {
    pub fn to_json(&self) -> String {
        let value: Value = match self {
            Self::StartFile { entry } => json!({"event": "start-file", "playlist_entry_id": entry}),
            Self::FileLoaded => json!({"event": "file-loaded"}),
            Self::Seek => json!({"event": "seek"}),
            Self::PlaybackRestart => json!({"event": "playback-restart"}),
            Self::Idle => json!({"event": "idle"}),
            Self::EndFile { entry, reason } => {
                let mut event = json!({
                    "event": "end-file",
                    "reason": reason.as_str(),
                    "playlist_entry_id": entry,
                });
                if *reason == EndReason::Error {
                    event["file_error"] = json!("loading failed");
                }
                event
            }
        };
        value.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn end_file_carries_the_reason() {
        let event: Value = serde_json::from_str(
            &PlayerEvent::EndFile {
                entry: 3,
                reason: EndReason::Error,
            }
            .to_json(),
        )
        .expect("json");
        assert_eq!(
            event,
            json!({"event": "end-file", "reason": "error", "playlist_entry_id": 3,
                   "file_error": "loading failed"})
        );
    }
}
