//! Presentation: the Wayland window, its buffers, and the framemd5 and raw
//! video writers of headless runs (`player::headless`, which also has the
//! `null` sink).
//!
//! [`Display`] is a Wayland client (smithay-client-toolkit). A decoder's
//! dmabuf frame is attached as it is (zero-copy, `imported.rs`: one
//! wl_buffer per decoder buffer) when the compositor advertises its fourcc
//! and modifier; other frames are copied through `zwp_linux_dmabuf_v1` when
//! the compositor accepts the frame's format as a linear (or
//! implicit-modifier) buffer, else through `wl_shm` as XRGB8888. Which
//! CAPTURE format the decoder uses is chosen outside, by
//! `crate::negotiation`, from [`CompositorFormats`]. It does not own an
//! event loop: the player polls [`Display::as_fd`] and calls
//! [`Display::dispatch`].

mod aspect;
mod compositor_formats;
mod copy;
mod copy_path;
pub mod crop;
mod cursor;
mod decorations;
pub mod dmabuf_formats;
pub mod feedback;
pub mod framemd5;
mod idle_inhibit;
mod imported;
mod keys;
mod layout;
mod memory;
mod overlay;
pub mod pool;
mod protocol;
pub mod rawvideo;
mod shm_convert;
mod state;
mod user_data;
pub mod vblank;
mod wayland;

#[cfg(test)]
pub(crate) mod testutil;

pub use aspect::{display_size, fit, surface_size};
pub use compositor_formats::{CompositorFormats, CompositorTranche};
pub use copy::{copy_targets, CopyError};
pub use cursor::CURSOR_IDLE;
pub use keys::Key;
pub use layout::{BufferLayout, PlaneLayout};
pub use overlay::OVERLAY_MARGIN;
pub use shm_convert::{frame_to_xrgb, yuv_to_rgb};
pub use wayland::Display;

/// Buffers per pool: one on screen, one queued, one being written, one spare.
pub const MAX_POOL_BUFFERS: usize = 4;

/// How the window is opened.
#[derive(Clone, Debug, Default)]
pub struct WindowOptions {
    /// Window title (the player passes the file name).
    pub title: String,
    pub app_id: String,
    /// Ask for fullscreen before the first frame.
    pub fullscreen: bool,
    /// Never use dmabuf: convert every frame to XRGB8888 into wl_shm.
    pub force_shm: bool,
    /// Never present a decoder's dmabuf as it is: copy every frame.
    pub force_copy: bool,
    /// Show only this rectangle of each picture (`--video-crop`).
    pub crop: Option<crop::Rect>,
}

/// Something the user or the compositor did, for the player to act on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DisplayEvent {
    Key(Key),
    CloseRequested,
    /// The compositor set the window to this size (the picture is fitted
    /// inside it with its aspect ratio kept).
    Resized {
        width: u32,
        height: u32,
    },
    /// What the compositor takes for the surface changed: new dmabuf
    /// feedback (it went fullscreen, moved to another output or device) or
    /// an import it refused. The formats worth decoding into may differ.
    DmabufFormatsChanged,
}

/// Counters of what `present` did, for tests, logs and `--stats`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PresentStats {
    /// Frames presented in the decoder's own dmabuf, with no copy.
    pub frames_zero_copy: u64,
    /// Frames copied into a memfd and attached as zwp_linux_dmabuf_v1 buffers.
    pub frames_dmabuf: u64,
    /// Frames converted to XRGB8888 and attached as wl_shm buffers.
    pub frames_shm: u64,
    /// wl_buffers imported from decoder dmabufs (one per decoder buffer).
    pub buffers_zero_copy: u64,
    /// wl_buffers created for the copy paths (memfd dmabuf and wl_shm, all
    /// pool generations).
    pub buffers_allocated: u64,
    /// wl_buffer.release events received for our buffers.
    pub buffers_released: u64,
    /// All frames `present` dropped (the two counters below, summed).
    pub frames_dropped: u64,
    /// Frames dropped because every buffer was still held by the compositor.
    pub dropped_no_buffer: u64,
    /// Frames dropped because `present` was called before `ready_for_frame`.
    pub dropped_not_ready: u64,
    /// The most buffers the current-format pool ever had at once.
    pub pool_peak: usize,
    /// Buffers the compositor holds right now (attached and not released).
    pub held_now: usize,
    /// wl_buffers alive right now (copy pool and imported decoder buffers):
    /// flat over a long run, or buffers leak.
    pub live_now: usize,
    /// Commits the compositor reports as shown on screen (wp_presentation).
    pub frames_shown: u64,
    /// Commits the compositor reports as never shown (replaced first).
    pub frames_discarded: u64,
    /// dmabuf imports the compositor refused although it advertised the
    /// format; each refused (fourcc, modifier) pair is never tried again.
    pub dmabuf_failures: u64,
}

/// When the compositor showed a frame (wp_presentation feedback).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Presented {
    /// The frame's pts.
    pub pts: std::time::Duration,
    /// The frame's epoch (which file or seek it belongs to).
    pub epoch: u64,
    /// When it was shown, on the compositor's presentation clock
    /// ([`Display::presentation_clock`], usually CLOCK_MONOTONIC).
    pub shown_at: std::time::Duration,
    /// The same moment as an `Instant`, when the clock could be read.
    pub shown: Option<std::time::Instant>,
    /// When it was committed.
    pub committed: std::time::Instant,
    /// The output's refresh period (zero if unknown).
    pub refresh: std::time::Duration,
}

/// Why the display failed.
#[derive(Debug, thiserror::Error)]
pub enum DisplayError {
    #[error("cannot connect to a Wayland compositor: {}", connect_reason(display.as_deref(), error))]
    Connect {
        display: Option<String>,
        /// Not a `source`: the message says it, in words that say where.
        error: wayland_client::ConnectError,
    },
    #[error("cannot connect to the Wayland socket {path}: {source}")]
    ConnectSocket {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the compositor does not offer {0}, which reel needs")]
    MissingGlobal(&'static str),
    #[error("Wayland connection failed: {0}")]
    Wayland(#[from] wayland_client::backend::WaylandError),
    #[error("Wayland dispatch failed: {0}")]
    Dispatch(#[from] wayland_client::DispatchError),
    #[error("cannot allocate a {size}-byte frame buffer: {source}")]
    Allocation {
        size: usize,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot present a {width}x{height} frame: {reason}")]
    BadFrame {
        width: u32,
        height: u32,
        reason: String,
    },
    #[error(transparent)]
    Copy(#[from] CopyError),
    #[error("the compositor did not answer within {0:?}")]
    Timeout(std::time::Duration),
    #[error("polling the Wayland socket failed: {0}")]
    Poll(#[source] std::io::Error),
}

/// Why connecting failed, in words that say where reel looked.
fn connect_reason(display: Option<&str>, error: &wayland_client::ConnectError) -> String {
    match (error, display) {
        (wayland_client::ConnectError::NoCompositor, Some(display)) => {
            format!("none listens on WAYLAND_DISPLAY={display}")
        }
        (wayland_client::ConnectError::NoCompositor, None) => "WAYLAND_DISPLAY is not set".into(),
        (other, _) => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_compositor_is_said_once_with_where_reel_looked() {
        let error = DisplayError::Connect {
            display: Some("wayland-9".into()),
            error: wayland_client::ConnectError::NoCompositor,
        };
        let said = crate::message::causes(&anyhow::Error::new(error));
        assert_eq!(
            said,
            "cannot connect to a Wayland compositor: none listens on WAYLAND_DISPLAY=wayland-9"
        );
    }
}
