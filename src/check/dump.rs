//! `--dump-dir`: both pictures of a differing frame as PNG files,
//! `frame-N-v4l2.png` and `frame-N-software.png`, converted to RGB as the
//! screenshot is.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::picture::Picture;
use crate::player::screenshot::write_png;

/// Writes the pair; returns the files written.
pub fn dump_pair(
    dir: &Path,
    index: u64,
    v4l2: Option<&Picture>,
    software: Option<&Picture>,
) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut written = Vec::new();
    for (side, picture) in [("v4l2", v4l2), ("software", software)] {
        let Some(picture) = picture.filter(|p| p.is_complete()) else {
            continue;
        };
        let path = dir.join(format!("frame-{index}-{side}.png"));
        write_png(&picture.to_frame(), &path)?;
        written.push(path);
    }
    Ok(written)
}
