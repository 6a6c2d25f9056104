//! A decoded picture on its way to the screen: the one type that decoders
//! (`sw/`, later `v4l2/`) hand to the presentation side (`display/`).

use std::fmt;
use std::os::fd::BorrowedFd;
use std::sync::Arc;
use std::time::Duration;

use crate::dmabuf_sync::ReadAccess;

/// Pixel layouts reel knows how to hash, copy and present. Sample sizes
/// follow the names: `*10` formats keep 10-bit samples in 16-bit little-endian
/// words (low bits, as libavcodec's `yuv420p10le`); `P010` keeps them in the
/// high bits (as DRM's P010).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PixelFormat {
    /// Planar 4:2:0, 8-bit (I420, libavcodec `yuv420p`).
    Yuv420,
    /// Planar 4:2:2, 8-bit.
    Yuv422,
    /// Planar 4:4:4, 8-bit.
    Yuv444,
    /// Luma plane + interleaved CbCr plane, 4:2:0, 8-bit.
    Nv12,
    /// Planar 4:2:0, 10-bit in the low bits of 16-bit words.
    Yuv420p10,
    /// Luma + interleaved CbCr, 4:2:0, 10-bit in the high bits of 16-bit words.
    P010,
    /// Luma only, 8-bit.
    Gray8,
}

impl PixelFormat {
    pub fn plane_count(self) -> usize {
        match self {
            Self::Yuv420 | Self::Yuv422 | Self::Yuv444 | Self::Yuv420p10 => 3,
            Self::Nv12 | Self::P010 => 2,
            Self::Gray8 => 1,
        }
    }

    pub fn bytes_per_sample(self) -> usize {
        match self {
            Self::Yuv420p10 | Self::P010 => 2,
            _ => 1,
        }
    }

    pub fn bit_depth(self) -> u32 {
        match self {
            Self::Yuv420p10 | Self::P010 => 10,
            _ => 8,
        }
    }

    /// Bytes of pixel data (no padding) in one row of `plane`, and the number
    /// of rows, for a picture of `width` x `height`.
    pub fn plane_extent(self, plane: usize, width: u32, height: u32) -> (usize, usize) {
        let (w, h) = (width as usize, height as usize);
        let bps = self.bytes_per_sample();
        let half = |v: usize| v.div_ceil(2);
        if plane == 0 {
            return (w * bps, h);
        }
        match self {
            Self::Yuv420 | Self::Yuv420p10 => (half(w) * bps, half(h)),
            Self::Yuv422 => (half(w) * bps, h),
            Self::Yuv444 => (w * bps, h),
            // Interleaved CbCr: two samples for every two luma columns.
            Self::Nv12 | Self::P010 => (half(w) * 2 * bps, half(h)),
            Self::Gray8 => (0, 0),
        }
    }

    /// The DRM fourcc of this layout, where one exists.
    pub fn drm_fourcc(self) -> Option<drm_fourcc::DrmFourcc> {
        use drm_fourcc::DrmFourcc as F;
        match self {
            Self::Yuv420 => Some(F::Yuv420),
            Self::Yuv422 => Some(F::Yuv422),
            Self::Yuv444 => Some(F::Yuv444),
            Self::Nv12 => Some(F::Nv12),
            Self::P010 => Some(F::P010),
            Self::Yuv420p10 | Self::Gray8 => None,
        }
    }

    /// libavcodec's name for the layout (as `ffmpeg -pix_fmt` takes it).
    pub fn av_name(self) -> &'static str {
        match self {
            Self::Yuv420 => "yuv420p",
            Self::Yuv422 => "yuv422p",
            Self::Yuv444 => "yuv444p",
            Self::Nv12 => "nv12",
            Self::Yuv420p10 => "yuv420p10le",
            Self::P010 => "p010le",
            Self::Gray8 => "gray",
        }
    }
}

impl fmt::Display for PixelFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.av_name())
    }
}

/// Read access to the planes of a picture held in CPU memory.
pub trait CpuPlanes: Send {
    /// The bytes of `plane`, `stride(plane)` bytes per row, starting at its
    /// first row. Rows may be padded beyond `PixelFormat::plane_extent`.
    fn plane(&self, plane: usize) -> &[u8];
    fn stride(&self, plane: usize) -> usize;
    /// Brackets reads of the planes: hold the guard while reading. Memory a
    /// device wrote (a decoder's CAPTURE buffer) needs its caches made
    /// coherent first; memory the CPU wrote needs nothing.
    fn read_access(&self) -> ReadAccess<'_> {
        ReadAccess::none()
    }
}

/// The dmabuf fds of a decoder's picture buffer, one per memory plane.
pub trait DmabufSource: Send + Sync {
    fn fd(&self, memory_plane: usize) -> Option<BorrowedFd<'_>>;
}

/// Which decoder buffer a dmabuf frame lives in: the same identity means the
/// same memory, so the display imports it once. `generation` changes when
/// the decoder reallocates its buffers (never reused within a process).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BufferId {
    pub generation: u64,
    pub index: u32,
}

/// One colour plane of a dmabuf frame (as zwp_linux_buffer_params_v1.add
/// takes it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DmabufPlane {
    /// Index into `DmabufSource::fd`.
    pub memory_plane: usize,
    pub offset: u32,
    pub stride: u32,
}

/// A picture in a decoder's dmabuf, presentable without a copy.
pub struct DmabufFrame {
    /// DRM fourcc and modifier of the buffer.
    pub fourcc: u32,
    pub modifier: u64,
    /// Allocated size of the buffer; the frame's `width` x `height` is the
    /// visible rectangle at its top-left corner.
    pub coded_width: u32,
    pub coded_height: u32,
    pub planes: Vec<DmabufPlane>,
    /// Bits per sample of the buffer's format, and of the stream the
    /// picture was decoded from: a buffer shallower than its stream is not
    /// presented as it is (the negotiation's rule; the copy path shows it).
    pub bit_depth: u32,
    pub stream_bit_depth: u32,
    pub id: BufferId,
    /// The fds; holding this `Arc` keeps the buffer away from the decoder
    /// (it is the decoder's hold token). The display keeps a clone until the
    /// compositor releases the buffer.
    pub source: Arc<dyn DmabufSource>,
    /// CPU access to the same picture, when the layout is linear (hashing,
    /// and the copy path when the compositor cannot import the dmabuf).
    pub cpu: Option<Box<dyn CpuPlanes>>,
}

/// Where a picture's pixels are.
pub enum FrameStorage {
    /// In CPU memory (software decode): the display copies it once into a
    /// buffer the compositor can read.
    Cpu(Box<dyn CpuPlanes>),
    /// In a decoder's dmabuf (V4L2): presented as is when the compositor
    /// takes its (fourcc, modifier), else copied through `cpu`.
    Dmabuf(DmabufFrame),
}

impl FrameStorage {
    /// CPU access to the pixels, if any.
    pub fn cpu_planes(&self) -> Option<&dyn CpuPlanes> {
        match self {
            Self::Cpu(planes) => Some(planes.as_ref()),
            Self::Dmabuf(d) => d.cpu.as_deref(),
        }
    }
}

/// Which decoder produced a frame, for logs and statistics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecoderKind {
    Software,
    V4l2Stateless,
}

impl fmt::Display for DecoderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Software => "software",
            Self::V4l2Stateless => "v4l2-stateless",
        })
    }
}

/// A decoded picture with its presentation time.
pub struct Frame {
    /// Presentation time relative to the start of the stream (the first
    /// frame's pts is not subtracted: a clip starting at 1 s shows at 1 s).
    pub pts: Duration,
    /// The pts in the stream's own time base, as `ffmpeg -f framemd5` prints it.
    pub pts_raw: i64,
    pub duration: Duration,
    /// The frame's duration in the stream's time base (0 when unknown).
    pub duration_raw: i64,
    /// Visible size in pixels.
    pub width: u32,
    pub height: u32,
    pub format: PixelFormat,
    /// Sample aspect ratio (num, den); (1, 1) when unknown.
    pub sample_aspect: (u32, u32),
    pub decoder: DecoderKind,
    /// Bumped by the decode side at each seek; frames of an older epoch are
    /// stale and dropped unseen.
    pub epoch: u64,
    pub storage: FrameStorage,
}

impl Frame {
    /// The frame's pixels packed with no row padding, plane after plane, as
    /// libavcodec's rawvideo encoder lays them out (what framemd5 hashes).
    /// Frames with no CPU mapping give no rows; a plane shorter than its
    /// size and stride say (a picture that could not be detiled) ends the
    /// rows there rather than panicking.
    pub fn for_each_packed_row(&self, mut f: impl FnMut(&[u8])) {
        let Some(planes) = self.storage.cpu_planes() else {
            return;
        };
        let _access = planes.read_access();
        for p in 0..self.format.plane_count() {
            let (row_bytes, rows) = self.format.plane_extent(p, self.width, self.height);
            let data = planes.plane(p);
            let stride = planes.stride(p);
            for r in 0..rows {
                let start = r * stride;
                let Some(row) = data.get(start..start + row_bytes) else {
                    return;
                };
                f(row);
            }
        }
    }

    pub fn packed_size(&self) -> usize {
        (0..self.format.plane_count())
            .map(|p| {
                let (row_bytes, rows) = self.format.plane_extent(p, self.width, self.height);
                row_bytes * rows
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Empty;
    impl CpuPlanes for Empty {
        fn plane(&self, _: usize) -> &[u8] {
            &[]
        }
        fn stride(&self, _: usize) -> usize {
            0
        }
    }

    #[test]
    fn empty_planes_give_no_rows_and_no_panic() {
        let frame = Frame {
            pts: Duration::ZERO,
            pts_raw: 0,
            duration: Duration::ZERO,
            duration_raw: 0,
            width: 4,
            height: 2,
            format: PixelFormat::Nv12,
            sample_aspect: (1, 1),
            decoder: DecoderKind::V4l2Stateless,
            epoch: 0,
            storage: FrameStorage::Cpu(Box::new(Empty)),
        };
        let mut rows = 0;
        frame.for_each_packed_row(|_| rows += 1);
        assert_eq!(rows, 0);
    }

    #[test]
    fn packed_sizes_match_libavcodec_for_odd_sizes() {
        // av_image_get_buffer_size(yuv420p, 250, 131, 1) = 250*131 + 2*125*66
        let size = |f: PixelFormat, w, h| -> usize {
            (0..f.plane_count())
                .map(|p| {
                    let (a, b) = f.plane_extent(p, w, h);
                    a * b
                })
                .sum()
        };
        assert_eq!(
            size(PixelFormat::Yuv420, 250, 131),
            250 * 131 + 2 * 125 * 66
        );
        assert_eq!(size(PixelFormat::Nv12, 251, 131), 251 * 131 + 252 * 66);
        assert_eq!(size(PixelFormat::Yuv420p10, 320, 240), 320 * 240 * 3);
        assert_eq!(size(PixelFormat::P010, 320, 240), 320 * 240 * 3);
        assert_eq!(size(PixelFormat::Yuv422, 320, 240), 320 * 240 * 2);
        assert_eq!(size(PixelFormat::Gray8, 320, 240), 320 * 240);
    }
}
