//! The CPU view of a CAPTURE buffer in a tiled or packed layout: the
//! picture detiled into memory on first access, so a frame the compositor
//! imports as it is (zero-copy) never costs CPU work, and one that is copied
//! (or hashed) is detiled once.

use std::sync::{Arc, OnceLock};

use tracing::{debug, warn};

use super::detile::{detile, detiled_format, DetileError, LinearPicture, TiledPicture};
use super::session::CaptureHold;
use crate::frame::{CpuPlanes, PixelFormat};

/// Memory holding one picture in a layout `detile` converts.
pub trait TiledSource: Send {
    /// The V4L2 pixel format of the memory.
    fn v4l2_format(&self) -> u32;
    /// The top-left `width` x `height` pixels, detiled.
    fn detile(&self, width: u32, height: u32) -> Result<LinearPicture, DetileError>;
}

impl TiledSource for Arc<CaptureHold> {
    fn v4l2_format(&self) -> u32 {
        self.layout().format.v4l2
    }

    fn detile(&self, width: u32, height: u32) -> Result<LinearPicture, DetileError> {
        let layout = self.layout();
        let buffer = self.buffer();
        let _access = self.read_access();
        let planes: Vec<(&[u8], u32)> = (0..buffer.memory_planes())
            .map(|i| (buffer.plane(i), layout.planes.get(i).map_or(0, |p| p.0)))
            .collect();
        let picture = TiledPicture {
            v4l2: layout.format.v4l2,
            coded_width: layout.coded_width,
            coded_height: layout.coded_height,
            planes: &planes,
        };
        detile(
            &picture,
            width.min(layout.coded_width),
            height.min(layout.coded_height),
        )
    }
}

/// `CpuPlanes` over a picture that is detiled when first read.
pub struct DetiledPlanes {
    source: Box<dyn TiledSource>,
    format: PixelFormat,
    width: u32,
    height: u32,
    /// `None` inside once detiling failed (logged once): the planes are
    /// then empty, which readers report as a short plane.
    picture: OnceLock<Option<LinearPicture>>,
}

impl DetiledPlanes {
    /// A view of the top-left `width` x `height` of `source`; `None` when
    /// its format is not one `detile` converts.
    pub fn new(source: Box<dyn TiledSource>, width: u32, height: u32) -> Option<Self> {
        let format = detiled_format(source.v4l2_format())?;
        Some(Self {
            source,
            format,
            width,
            height,
            picture: OnceLock::new(),
        })
    }

    /// The linear layout the planes are in (NV12 or P010).
    pub fn format(&self) -> PixelFormat {
        self.format
    }

    /// Whether the picture has been detiled (tests: zero-copy frames never are).
    pub fn is_detiled(&self) -> bool {
        self.picture.get().is_some()
    }

    fn picture(&self) -> Option<&LinearPicture> {
        self.picture
            .get_or_init(|| match self.source.detile(self.width, self.height) {
                Ok(picture) => {
                    debug!(
                        width = self.width,
                        height = self.height,
                        "CAPTURE picture detiled for the copy path"
                    );
                    Some(picture)
                }
                Err(e) => {
                    warn!("cannot detile the CAPTURE picture: {e}");
                    None
                }
            })
            .as_ref()
    }
}

impl CpuPlanes for DetiledPlanes {
    fn plane(&self, plane: usize) -> &[u8] {
        self.picture().map_or(&[], |p| p.plane(plane))
    }
    fn stride(&self, plane: usize) -> usize {
        self.picture().map_or(0, |p| p.stride(plane))
    }
}

#[cfg(test)]
pub(crate) mod testing {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// A tiled picture in vectors, counting how often it is detiled.
    pub struct VecSource {
        pub v4l2: u32,
        pub coded: (u32, u32),
        pub planes: Vec<(Vec<u8>, u32)>,
        pub detiled: Arc<AtomicUsize>,
    }

    impl TiledSource for VecSource {
        fn v4l2_format(&self) -> u32 {
            self.v4l2
        }
        fn detile(&self, width: u32, height: u32) -> Result<LinearPicture, DetileError> {
            self.detiled.fetch_add(1, Ordering::SeqCst);
            let planes: Vec<(&[u8], u32)> = self
                .planes
                .iter()
                .map(|(b, bpl)| (b.as_slice(), *bpl))
                .collect();
            detile(
                &TiledPicture {
                    v4l2: self.v4l2,
                    coded_width: self.coded.0,
                    coded_height: self.coded.1,
                    planes: &planes,
                },
                width,
                height,
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::testing::VecSource;
    use super::*;
    use crate::fourcc::fourcc;

    /// An 8x8 NV12_4L4 picture whose luma byte at (x, y) is 8y + x and
    /// chroma byte at (i, y) is 100 + 8y + i, tiled per the 4L4 layout.
    fn source(counter: &Arc<AtomicUsize>, bytes: usize) -> VecSource {
        let mut buffer = vec![0u8; 8 * 8 + 8 * 4];
        for y in 0..8 {
            for x in 0..8 {
                buffer[((y / 4) * 2 + x / 4) * 16 + (y % 4) * 4 + x % 4] = (8 * y + x) as u8;
            }
        }
        for y in 0..4 {
            for i in 0..8 {
                buffer[64 + (i / 4) * 16 + y * 4 + i % 4] = (100 + 8 * y + i) as u8;
            }
        }
        buffer.truncate(bytes);
        VecSource {
            v4l2: fourcc(b"VT12"),
            coded: (8, 8),
            planes: vec![(buffer, 8)],
            detiled: counter.clone(),
        }
    }

    #[test]
    fn detiles_once_and_only_when_read() {
        let counter = Arc::new(AtomicUsize::new(0));
        let view = DetiledPlanes::new(Box::new(source(&counter, 96)), 6, 5).unwrap();
        assert_eq!(view.format(), PixelFormat::Nv12);
        assert_eq!(counter.load(Ordering::SeqCst), 0, "no work before a read");
        assert!(!view.is_detiled());
        assert_eq!(view.stride(0), 6);
        assert_eq!(&view.plane(0)[..6], &[0, 1, 2, 3, 4, 5]);
        assert_eq!(&view.plane(0)[6..12], &[8, 9, 10, 11, 12, 13]);
        assert_eq!(&view.plane(1)[..6], &[100, 101, 102, 103, 104, 105]);
        assert_eq!(view.plane(1).len(), 6 * 3);
        assert_eq!(counter.load(Ordering::SeqCst), 1, "detiled exactly once");
        assert!(view.is_detiled());
    }

    #[test]
    fn a_short_buffer_gives_empty_planes_not_a_panic() {
        let counter = Arc::new(AtomicUsize::new(0));
        let view = DetiledPlanes::new(Box::new(source(&counter, 90)), 8, 8).unwrap();
        assert!(view.plane(0).is_empty());
        assert!(view.plane(1).is_empty());
        assert_eq!(view.stride(0), 0);
        assert_eq!(
            counter.load(Ordering::SeqCst),
            1,
            "a failure is not retried"
        );
    }

    #[test]
    fn linear_formats_get_no_detiled_view() {
        let counter = Arc::new(AtomicUsize::new(0));
        let mut linear = source(&counter, 96);
        linear.v4l2 = fourcc(b"NV12");
        assert!(DetiledPlanes::new(Box::new(linear), 8, 8).is_none());
    }
}
