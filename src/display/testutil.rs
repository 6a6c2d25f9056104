//! Frames built from byte vectors, and protocol payloads, for unit tests.

use std::os::fd::BorrowedFd;
use std::sync::Arc;
use std::time::Duration;

use crate::frame::{
    BufferId, CpuPlanes, DecoderKind, DmabufFrame, DmabufSource, Frame, FrameStorage, PixelFormat,
};

struct VecPlanes(Vec<(Vec<u8>, usize)>);

impl CpuPlanes for VecPlanes {
    fn plane(&self, plane: usize) -> &[u8] {
        &self.0[plane].0
    }
    fn stride(&self, plane: usize) -> usize {
        self.0[plane].1
    }
}

/// A frame whose planes are `(bytes, stride)` pairs.
pub fn frame_from_planes(
    format: PixelFormat,
    width: u32,
    height: u32,
    planes: Vec<(Vec<u8>, usize)>,
) -> Frame {
    Frame {
        pts: Duration::ZERO,
        pts_raw: 0,
        duration: Duration::ZERO,
        duration_raw: 0,
        width,
        height,
        format,
        sample_aspect: (1, 1),
        decoder: DecoderKind::Software,
        epoch: 0,
        storage: FrameStorage::Cpu(Box::new(VecPlanes(planes))),
    }
}

struct NoFds;

impl DmabufSource for NoFds {
    fn fd(&self, _: usize) -> Option<BorrowedFd<'_>> {
        None
    }
}

/// A decoder's dmabuf picture with no memory behind it, for decisions made
/// from its description alone.
pub fn described_dmabuf(
    fourcc: u32,
    modifier: u64,
    bit_depth: u32,
    stream_bit_depth: u32,
) -> DmabufFrame {
    DmabufFrame {
        fourcc,
        modifier,
        coded_width: 320,
        coded_height: 240,
        planes: Vec::new(),
        bit_depth,
        stream_bit_depth,
        id: BufferId {
            generation: 0,
            index: 0,
        },
        source: Arc::new(NoFds),
        cpu: None,
    }
}

/// A dmabuf feedback format table as compositors send it: per entry a u32
/// fourcc, 4 bytes of padding, a u64 modifier, native-endian.
pub fn format_table_bytes(entries: &[(u32, u64)]) -> Vec<u8> {
    let mut out = Vec::new();
    for &(f, m) in entries {
        out.extend_from_slice(&f.to_ne_bytes());
        out.extend_from_slice(&[0; 4]);
        out.extend_from_slice(&m.to_ne_bytes());
    }
    out
}
