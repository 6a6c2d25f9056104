//! Chapters as mpv shows them (`chapter-list`, `chapter`) and moving
//! between them (`set_property chapter N`, `!` and `@`).

use std::time::Duration;

use serde_json::{json, Value};
use tracing::info;

use super::commands::SeekTarget;
use super::ipc::codec::IpcError;
use super::Player;
use crate::media::tracks::Chapter;

/// mpv's `chapter-list`: each chapter's title and start (seconds from the
/// file's start).
pub(super) fn chapter_list(chapters: &[Chapter], start_time: Duration) -> Value {
    Value::Array(
        chapters
            .iter()
            .map(|chapter| {
                let mut entry = json!({
                    "time": chapter.start.saturating_sub(start_time).as_secs_f64(),
                });
                if let Some(title) = &chapter.title {
                    entry["title"] = json!(title);
                }
                entry
            })
            .collect(),
    )
}

/// The chapter playing at `position` (from the file's start): the last
/// one begun, -1 before the first; None without chapters.
pub(super) fn chapter_at(
    chapters: &[Chapter],
    start_time: Duration,
    position: Duration,
) -> Option<i64> {
    if chapters.is_empty() {
        return None;
    }
    let begun = chapters
        .iter()
        .filter(|c| c.start.saturating_sub(start_time) <= position)
        .count();
    Some(begun as i64 - 1)
}

impl Player {
    /// Goes to chapter `index` (from 0) of the file playing.
    pub(super) fn go_to_chapter(&mut self, index: i64) -> Result<(), IpcError> {
        let chapter = usize::try_from(index)
            .ok()
            .and_then(|i| self.tracks.chapters.get(i))
            // mpv's answer to a chapter the file lacks.
            .ok_or(IpcError::UnsupportedFormat)?;
        let at = chapter.start.saturating_sub(self.start_time);
        info!(index, ?at, "chapter");
        self.execute(super::commands::Command::Seek(SeekTarget::Absolute(at)));
        Ok(())
    }

    /// `!` / `@`: the chapter before (or the start of this one, as mpv) or
    /// after the one playing.
    pub(super) fn step_chapter(&mut self, forward: bool) {
        let Some(current) = chapter_at(
            &self.tracks.chapters,
            self.start_time,
            self.transport.position(),
        ) else {
            return;
        };
        let target = if forward {
            current + 1
        } else {
            current.max(1) - 1
        };
        let _ = self.go_to_chapter(target);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chapter(title: &str, secs: u64) -> Chapter {
        Chapter {
            title: Some(title.into()),
            start: Duration::from_secs(secs),
        }
    }

    #[test]
    fn the_chapter_playing_is_the_last_begun() {
        let chapters = [chapter("a", 10), chapter("b", 20)];
        let start = Duration::from_secs(10);
        let at = |s| chapter_at(&chapters, start, Duration::from_secs(s));
        assert_eq!(at(0), Some(0));
        assert_eq!(at(9), Some(0));
        assert_eq!(at(10), Some(1));
        assert_eq!(
            chapter_at(&chapters, Duration::ZERO, Duration::from_secs(5)),
            Some(-1)
        );
        assert_eq!(chapter_at(&[], start, Duration::ZERO), None);
        assert_eq!(
            chapter_list(&chapters, start),
            json!([{"time": 0.0, "title": "a"}, {"time": 10.0, "title": "b"}])
        );
    }
}
