//! The on-screen display: what it says (`text.rs`, pure) and how it is
//! drawn (`raster.rs`: an ARGB8888 image of text on a backdrop, with a
//! font found by `font.rs`). The display shows the image on its own
//! subsurface above the video, so the video surface keeps the decoder's
//! buffers; the player decides when (`player::osd_feed`).

pub mod font;
pub mod raster;
pub mod text;

/// How much the OSD shows, as mpv's `--osd-level`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum OsdLevel {
    /// Nothing, unless the stats page is asked for.
    Off,
    /// Position and state for about a second after a seek, pause, step or
    /// file change.
    #[default]
    Events,
    /// Position, frame, pts and playlist entry, all the time.
    Status,
}

impl OsdLevel {
    /// mpv's numbers: 0, 1 and 3 (2, a progress bar, is not drawn).
    pub fn from_number(level: i64) -> Option<Self> {
        match level {
            0 => Some(Self::Off),
            1 => Some(Self::Events),
            3 => Some(Self::Status),
            _ => None,
        }
    }

    pub fn number(self) -> i64 {
        match self {
            Self::Off => 0,
            Self::Events => 1,
            Self::Status => 3,
        }
    }
}

/// A picture for the overlay surface: premultiplied ARGB8888 in the
/// compositor's byte order (B, G, R, A), rows packed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OverlayImage {
    pub width: u32,
    pub height: u32,
    pub pixels: Vec<u8>,
    /// The buffer scale it was drawn for (`wl_surface.set_buffer_scale`).
    pub scale: u32,
}

impl OverlayImage {
    pub fn stride(&self) -> usize {
        self.width as usize * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_mpvs_numbers() {
        for n in [0, 1, 3] {
            assert_eq!(OsdLevel::from_number(n).map(OsdLevel::number), Some(n));
        }
        assert_eq!(OsdLevel::from_number(2), None);
        assert_eq!(OsdLevel::from_number(-1), None);
        assert!(OsdLevel::Status > OsdLevel::Events);
    }
}
