//! Screenshots: the frame on screen written as a PNG at its visible size,
//! from the decoder's own pixels (a V4L2 CAPTURE buffer is read through
//! its dmabuf, inside `DMA_BUF_IOCTL_SYNC`, and detiled on the CPU; the
//! picture the compositor shows is never read back).

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};

use tracing::info;

use super::Player;
use crate::display::frame_to_xrgb;
use crate::frame::Frame;

/// The highest `reel-shot-NNNN.png` number tried.
const MAX_SHOTS: u32 = 9999;

/// Writes `frame` to `out` (a `.png`).
pub fn write_png(frame: &Frame, out: &Path) -> Result<()> {
    let is_png = out
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("png"));
    if !is_png {
        bail!("{}: reel writes PNG screenshots only", out.display());
    }
    let (width, height) = (frame.width, frame.height);
    let stride = width as usize * 4;
    let mut xrgb = vec![0u8; stride * height as usize];
    frame_to_xrgb(frame, &mut xrgb, stride)?;
    // XRGB8888 is B, G, R, X in memory.
    let rgb: Vec<u8> = xrgb
        .chunks_exact(4)
        .flat_map(|px| [px[2], px[1], px[0]])
        .collect();
    let file = File::create(out).with_context(|| format!("cannot create {}", out.display()))?;
    let mut encoder = png::Encoder::new(BufWriter::new(file), width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(&rgb)?;
    writer.finish()?;
    Ok(())
}

/// Where `s` puts screenshots: `$XDG_PICTURES_DIR` (the environment, else
/// `user-dirs.dirs`) when it is a directory, else the working directory.
pub fn directory() -> PathBuf {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".config")));
    let from_file = || {
        let text = std::fs::read_to_string(config.as_ref()?.join("user-dirs.dirs")).ok()?;
        pictures_dir(&text, home.as_deref())
    };
    std::env::var_os("XDG_PICTURES_DIR")
        .map(PathBuf::from)
        .or_else(from_file)
        .filter(|d| d.is_dir())
        .unwrap_or_else(|| PathBuf::from("."))
}

/// `XDG_PICTURES_DIR` of a `user-dirs.dirs` (`"$HOME/Pictures"`).
fn pictures_dir(text: &str, home: Option<&Path>) -> Option<PathBuf> {
    let value = text.lines().find_map(|line| {
        let (key, value) = line.trim().split_once('=')?;
        (key.trim() == "XDG_PICTURES_DIR").then(|| value.trim().trim_matches('"').to_owned())
    })?;
    match value.strip_prefix("$HOME") {
        Some(rest) => Some(home?.join(rest.trim_start_matches('/'))),
        None if value.starts_with('/') => Some(PathBuf::from(value)),
        None => None,
    }
}

/// The first `reel-shot-NNNN.png` in `dir` not taken yet.
pub fn next_path(dir: &Path) -> Result<PathBuf> {
    (1..=MAX_SHOTS)
        .map(|n| dir.join(format!("reel-shot-{n:04}.png")))
        .find(|p| !p.exists())
        .with_context(|| {
            format!(
                "{}: reel-shot-0001 to -{MAX_SHOTS} all taken",
                dir.display()
            )
        })
}

impl Player {
    /// Writes the frame on screen as a PNG to `out`, or to the next free
    /// `reel-shot-NNNN.png` in the pictures directory.
    pub(super) fn screenshot(&self, out: Option<PathBuf>) -> Result<PathBuf> {
        let frame = self
            .on_screen
            .as_ref()
            .ok_or_else(|| anyhow!("no frame on screen"))?;
        let out = match out {
            Some(out) => out,
            None => next_path(&directory())?,
        };
        write_png(frame, &out)?;
        info!(
            path = %out.display(),
            pts = frame.pts.as_secs_f64(),
            decoder = %frame.decoder,
            // The decoder's bytes, as `--output framemd5` hashes them.
            md5 = %crate::display::framemd5::frame_md5(frame),
            "screenshot written"
        );
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pictures_directory_comes_from_user_dirs() {
        let home = Path::new("/home/u");
        let text = "# written by xdg-user-dirs-update\nXDG_DESKTOP_DIR=\"$HOME/Desktop\"\nXDG_PICTURES_DIR=\"$HOME/Pictures\"\n";
        assert_eq!(
            pictures_dir(text, Some(home)),
            Some(PathBuf::from("/home/u/Pictures"))
        );
        assert_eq!(
            pictures_dir("XDG_PICTURES_DIR=\"/srv/shots\"", None),
            Some(PathBuf::from("/srv/shots"))
        );
        assert_eq!(pictures_dir("XDG_PICTURES_DIR=\"$HOME/P\"", None), None);
        assert_eq!(pictures_dir("XDG_MUSIC_DIR=\"$HOME/M\"", Some(home)), None);
    }

    #[test]
    fn shots_are_numbered_from_the_first_free_name() {
        let dir = std::env::temp_dir().join(format!("reel-shots-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert_eq!(next_path(&dir).unwrap(), dir.join("reel-shot-0001.png"));
        std::fs::write(dir.join("reel-shot-0001.png"), b"").unwrap();
        assert_eq!(next_path(&dir).unwrap(), dir.join("reel-shot-0002.png"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
