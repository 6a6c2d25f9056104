//! Resuming where playback stopped, as mpv's watch-later: at quit (with
//! `--save-position-on-quit`, or `Q`) the position in the file playing is
//! written to `$XDG_STATE_HOME/reel/watch_later/` (else
//! `~/.local/state/...`), one small file per media file, named by a hash
//! of its path; opening that file again starts there (`--resume-playback`,
//! yes by default) and the entry is used up.

use std::path::{Path, PathBuf};
use std::time::Duration;

use tracing::{debug, info, warn};

/// Where the entries live.
pub fn dir() -> Option<PathBuf> {
    let state = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".local/state"))
        })?;
    Some(state.join("reel").join("watch_later"))
}

/// The entry's name for `media`: FNV-1a (64 bits) of its absolute path
/// (a URL as it is), in hex.
fn entry_name(media: &Path) -> String {
    let absolute = if media.is_absolute() || media.to_string_lossy().contains("://") {
        media.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|cwd| cwd.join(media))
            .unwrap_or_else(|_| media.to_path_buf())
    };
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in absolute.as_os_str().as_encoded_bytes() {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

/// Writes `position` as where `media` resumes (in `dir`).
pub fn save(dir: &Path, media: &Path, position: Duration) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let entry = dir.join(entry_name(media));
    let partial = entry.with_extension("partial");
    let text = format!(
        "# {}\nstart={:.6}\n",
        media.display(),
        position.as_secs_f64()
    );
    std::fs::write(&partial, text)?;
    std::fs::rename(&partial, &entry)?;
    info!(file = %media.display(), ?position, "position saved to resume from");
    Ok(())
}

/// Where `media` resumes, if an entry says (in `dir`); the entry is used
/// up.
pub fn take(dir: &Path, media: &Path) -> Option<Duration> {
    let entry = dir.join(entry_name(media));
    let text = std::fs::read_to_string(&entry).ok()?;
    if let Err(e) = std::fs::remove_file(&entry) {
        warn!("cannot remove {}: {e}", entry.display());
    }
    let start = parse(&text);
    debug!(file = %media.display(), ?start, "resume entry");
    start
}

/// `start=SECONDS` from an entry (other lines, comments, ignored).
fn parse(text: &str) -> Option<Duration> {
    text.lines()
        .filter_map(|line| line.trim().strip_prefix("start="))
        .filter_map(|value| value.trim().parse::<f64>().ok())
        .find(|s| s.is_finite() && *s >= 0.0)
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
}

impl super::Player {
    /// Saves where the file playing stands, to resume from (nothing at
    /// its end or with nothing loaded).
    pub(super) fn save_position(&self) {
        if self.playlist.loaded.is_none() || self.transport.ended {
            return;
        }
        let Some(dir) = dir() else {
            warn!("no state directory (XDG_STATE_HOME, HOME): the position is not saved");
            return;
        };
        if let Err(e) = save(&dir, self.playlist.current(), self.transport.position()) {
            warn!("cannot save the position in {}: {e}", dir.display());
        }
    }

    /// Where `media` resumes (`--resume-playback`), from a saved position.
    pub(super) fn resume_point(&self, media: &Path) -> Option<Duration> {
        if !self.options.resume_playback {
            return None;
        }
        let start = take(&dir()?, media)?;
        info!(file = %media.display(), ?start, "resuming where playback stopped");
        Some(start)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_is_written_read_once_and_named_by_the_path() {
        let dir = std::env::temp_dir().join(format!("reel-watch-later-{}", std::process::id()));
        let media = Path::new("/media/film.mkv");
        assert_eq!(entry_name(media), entry_name(Path::new("/media/film.mkv")));
        assert_ne!(entry_name(media), entry_name(Path::new("/media/film2.mkv")));
        save(&dir, media, Duration::from_millis(83_250)).expect("save");
        assert_eq!(take(&dir, media), Some(Duration::from_millis(83_250)));
        assert_eq!(take(&dir, media), None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn entries_are_read_leniently() {
        assert_eq!(parse("# x\nstart=1.5\n"), Some(Duration::from_millis(1500)));
        assert_eq!(parse("start=-3\nstart=2\n"), Some(Duration::from_secs(2)));
        assert_eq!(parse("start=nan"), None);
        assert_eq!(parse(""), None);
    }
}
