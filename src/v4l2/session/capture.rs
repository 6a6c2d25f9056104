//! Decoded pictures as the session hands them out: the hold on a dequeued
//! CAPTURE buffer, the picture's metadata, and CPU access to its planes.

use std::os::fd::{AsFd, BorrowedFd};
use std::sync::Arc;

use tracing::warn;

use super::buffers::CaptureBuffer;
use super::layout::CaptureLayout;
use crate::dmabuf_sync::ReadAccess;
use crate::frame::{BufferId, CpuPlanes, DmabufSource};

/// A dequeued CAPTURE buffer; it goes back to the driver only when the
/// last `Arc` to it other than the session's is gone.
pub struct CaptureHold {
    pub(super) buffer: Arc<CaptureBuffer>,
    pub(super) layout: Arc<CaptureLayout>,
    pub timestamp_ns: u64,
}

impl CaptureHold {
    pub fn buffer(&self) -> &CaptureBuffer {
        &self.buffer
    }
    pub fn id(&self) -> BufferId {
        BufferId {
            generation: self.buffer.generation,
            index: self.buffer.index,
        }
    }
    pub fn layout(&self) -> &CaptureLayout {
        &self.layout
    }
    /// The CPU reading the buffer (DMA_BUF_IOCTL_SYNC on its dmabufs)
    /// while the guard lives.
    pub fn read_access(&self) -> ReadAccess<'_> {
        ReadAccess::start(self.buffer.dmabufs().iter().map(|fd| fd.as_fd()))
    }
}

impl DmabufSource for CaptureHold {
    fn fd(&self, memory_plane: usize) -> Option<BorrowedFd<'_>> {
        self.buffer.dmabufs().get(memory_plane).map(|fd| fd.as_fd())
    }
}

/// A decoded picture as the driver returned it.
#[derive(Clone)]
pub struct DecodedFrame {
    pub timestamp_ns: u64,
    pub buffer_index: u32,
    pub sequence: u32,
    /// V4L2_BUF_FLAG_ERROR: the picture (or one it references) is corrupt.
    pub error: bool,
    pub hold: Arc<CaptureHold>,
}

impl DecodedFrame {
    /// CPU access to the picture, when the layout is linear.
    pub fn cpu_planes(&self) -> Option<V4l2CpuPlanes> {
        V4l2CpuPlanes::new(self.hold.clone())
    }
}

/// The planes of a CAPTURE buffer read through its mapping. Holding it
/// keeps the buffer away from the driver.
pub struct V4l2CpuPlanes {
    hold: Arc<CaptureHold>,
    /// (memory plane, offset, stride) per colour plane.
    planes: Vec<(usize, usize, usize)>,
}

impl V4l2CpuPlanes {
    fn new(hold: Arc<CaptureHold>) -> Option<Self> {
        let layout = hold.layout.clone();
        let cpu = layout.format.cpu?;
        let planes = layout.cpu_planes()?;
        // Every row the frame will read must lie inside the mapping.
        for (p, &(memory, offset, stride)) in planes.iter().enumerate() {
            let (row_bytes, rows) = cpu.plane_extent(p, layout.coded_width, layout.coded_height);
            let needed = offset + stride * rows.saturating_sub(1) + row_bytes;
            if stride < row_bytes || needed > hold.buffer.plane_len(memory) {
                warn!("CAPTURE plane {p} does not fit its buffer ({needed} bytes needed)");
                return None;
            }
        }
        Some(Self { hold, planes })
    }

    pub fn hold(&self) -> &Arc<CaptureHold> {
        &self.hold
    }
}

impl CpuPlanes for V4l2CpuPlanes {
    fn plane(&self, plane: usize) -> &[u8] {
        let Some(&(memory, offset, _)) = self.planes.get(plane) else {
            return &[];
        };
        self.hold.buffer.plane(memory).get(offset..).unwrap_or(&[])
    }
    fn stride(&self, plane: usize) -> usize {
        self.planes.get(plane).map_or(0, |p| p.2)
    }
    fn read_access(&self) -> ReadAccess<'_> {
        self.hold.read_access()
    }
}
