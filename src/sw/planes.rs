//! A libavcodec frame seen as `CpuPlanes`, without copying its pixels.

use ffmpeg_next::frame;

use crate::frame::CpuPlanes;

/// Owns a decoded (or converted) `AVFrame`; its buffers are reference
/// counted by libavcodec and released when this is dropped.
pub struct AvFramePlanes(frame::Video);

impl AvFramePlanes {
    pub fn new(frame: frame::Video) -> Self {
        Self(frame)
    }
}

impl CpuPlanes for AvFramePlanes {
    fn plane(&self, plane: usize) -> &[u8] {
        if plane >= self.0.planes() {
            return &[];
        }
        self.0.data(plane)
    }

    fn stride(&self, plane: usize) -> usize {
        if plane >= self.0.planes() {
            return 0;
        }
        self.0.stride(plane)
    }
}
