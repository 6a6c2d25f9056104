//! An overlay surface (the OSD's, the subtitles'): a wl_subsurface above
//! the video surface with its own ARGB8888 wl_shm buffers, so the video
//! surface keeps getting the decoder's buffers untouched. Desynchronised: its commits show at once,
//! also while the video is paused and commits nothing. It takes no input
//! (an empty input region): clicks and the pointer go to the window.

use std::os::fd::AsFd;

use smithay_client_toolkit::compositor::{CompositorState, Region};
use smithay_client_toolkit::subcompositor::SubcompositorState;
use tracing::{debug, warn};
use wayland_client::protocol::wl_surface::WlSurface;
use wayland_client::protocol::{wl_buffer::WlBuffer, wl_shm, wl_subsurface::WlSubsurface};
use wayland_client::QueueHandle;

use super::aspect::clamp_i32;
use super::memory::SharedMemory;
use super::state::State;
use super::user_data::{BufferData, NoEvents};
use super::DisplayError;
use crate::osd::OverlayImage;

/// Where the overlay sits in the window, in surface pixels from the top
/// left (the OSD is drawn to fit the window less this on both sides).
pub const OVERLAY_MARGIN: u32 = 16;
/// Buffers kept: one the compositor holds, one being drawn, one spare.
const MAX_BUFFERS: usize = 3;

struct OverlayBuffer {
    wl_buffer: WlBuffer,
    memory: SharedMemory,
    width: u32,
    height: u32,
    /// Attached and not yet released by the compositor.
    busy: bool,
}

pub(super) struct Overlay {
    surface: WlSurface,
    subsurface: WlSubsurface,
    buffers: Vec<OverlayBuffer>,
    visible: bool,
    /// Whose buffers these are (told their release).
    kind: BufferData,
}

impl Overlay {
    /// An overlay at `position` (surface pixels from the window's top
    /// left), above the subsurfaces made before it.
    pub(super) fn new(
        subcompositor: &SubcompositorState,
        compositor: &CompositorState,
        parent: &WlSurface,
        (position, kind): ((i32, i32), BufferData),
        qh: &QueueHandle<State>,
    ) -> Self {
        let (subsurface, surface) = subcompositor.create_subsurface(parent.clone(), qh);
        subsurface.set_position(position.0, position.1);
        subsurface.set_desync();
        match Region::new(compositor) {
            // The region is copied by set_input_region; dropping it is fine.
            Ok(empty) => surface.set_input_region(Some(empty.wl_region())),
            Err(e) => warn!(?kind, "an overlay surface takes input: no wl_region ({e})"),
        }
        surface.commit();
        Self {
            surface,
            subsurface,
            buffers: Vec::new(),
            visible: false,
            kind,
        }
    }

    /// Shows `image`, or hides the overlay (None).
    pub(super) fn set(
        &mut self,
        image: Option<&OverlayImage>,
        shm: &wl_shm::WlShm,
        qh: &QueueHandle<State>,
    ) -> Result<(), DisplayError> {
        match image {
            Some(image) => self.show(image, shm, qh),
            None => {
                self.hide();
                Ok(())
            }
        }
    }

    /// Shows `image` (replacing what was shown).
    pub(super) fn show(
        &mut self,
        image: &OverlayImage,
        shm: &wl_shm::WlShm,
        qh: &QueueHandle<State>,
    ) -> Result<(), DisplayError> {
        let index = self.free_buffer(image.width, image.height, shm, qh)?;
        let buffer = &mut self.buffers[index];
        let stride = image.stride();
        buffer.memory.write(|bytes| {
            for (row, src) in bytes
                .chunks_exact_mut(stride)
                .zip(image.pixels.chunks_exact(stride))
            {
                row.copy_from_slice(src);
            }
        });
        buffer.busy = true;
        self.surface.set_buffer_scale(clamp_i32(image.scale));
        self.surface.attach(Some(&buffer.wl_buffer), 0, 0);
        self.surface
            .damage_buffer(0, 0, clamp_i32(image.width), clamp_i32(image.height));
        self.surface.commit();
        self.visible = true;
        debug!(
            width = image.width,
            height = image.height,
            scale = image.scale,
            kind = ?self.kind,
            "overlay drawn"
        );
        Ok(())
    }

    pub(super) fn hide(&mut self) {
        if self.visible {
            self.surface.attach(None, 0, 0);
            self.surface.commit();
            self.visible = false;
            debug!(kind = ?self.kind, "overlay hidden");
        }
    }

    /// A free buffer of this size: reused, or made (buffers of another
    /// size are destroyed once the compositor let them go).
    fn free_buffer(
        &mut self,
        width: u32,
        height: u32,
        shm: &wl_shm::WlShm,
        qh: &QueueHandle<State>,
    ) -> Result<usize, DisplayError> {
        self.buffers.retain(|b| {
            let keep = b.busy || (b.width, b.height) == (width, height);
            if !keep {
                b.wl_buffer.destroy();
            }
            keep
        });
        if let Some(i) = self
            .buffers
            .iter()
            .position(|b| !b.busy && (b.width, b.height) == (width, height))
        {
            return Ok(i);
        }
        if self.buffers.len() >= MAX_BUFFERS {
            // The compositor holds them all: the oldest is replaced.
            let old = self.buffers.remove(0);
            old.wl_buffer.destroy();
        }
        let stride = width as usize * 4;
        let size = stride * height as usize;
        let too_large = || DisplayError::BadFrame {
            width,
            height,
            reason: "overlay too large for wl_shm".into(),
        };
        let pool_size = i32::try_from(size).map_err(|_| too_large())?;
        let name = match self.kind {
            BufferData::Subtitles => c"reel-subtitles",
            _ => c"reel-osd",
        };
        let memory = SharedMemory::named(size, name)
            .map_err(|source| DisplayError::Allocation { size, source })?;
        let pool = shm.create_pool(memory.as_fd(), pool_size, qh, NoEvents);
        let wl_buffer = pool.create_buffer(
            0,
            clamp_i32(width),
            clamp_i32(height),
            clamp_i32(stride as u32),
            wl_shm::Format::Argb8888,
            qh,
            self.kind,
        );
        pool.destroy();
        self.buffers.push(OverlayBuffer {
            wl_buffer,
            memory,
            width,
            height,
            busy: false,
        });
        Ok(self.buffers.len() - 1)
    }

    /// The compositor let `buffer` go.
    pub(super) fn released(&mut self, buffer: &WlBuffer) {
        if let Some(b) = self.buffers.iter_mut().find(|b| b.wl_buffer == *buffer) {
            b.busy = false;
        }
    }
}

impl Drop for Overlay {
    fn drop(&mut self) {
        for b in self.buffers.drain(..) {
            b.wl_buffer.destroy();
        }
        self.subsurface.destroy();
        self.surface.destroy();
    }
}
