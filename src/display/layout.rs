//! Where each plane of a buffer lives in its one memory object: offsets and
//! strides for the DRM formats we write with the CPU.

use drm_fourcc::DrmFourcc;

/// Row pitch and plane start alignment. 256 bytes satisfies every GPU import
/// path we know of for linear buffers, and costs little.
const ALIGN: usize = 256;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlaneLayout {
    pub offset: usize,
    pub stride: usize,
    /// Bytes of real pixel data per row (≤ stride).
    pub row_bytes: usize,
    pub rows: usize,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BufferLayout {
    pub fourcc: DrmFourcc,
    pub width: u32,
    pub height: u32,
    pub planes: Vec<PlaneLayout>,
    /// Total bytes of the memory object.
    pub size: usize,
}

fn align(v: usize) -> usize {
    v.div_ceil(ALIGN) * ALIGN
}

/// (bytes per row, rows) of each plane of `fourcc` at `width` x `height`, or
/// `None` for a format we do not write.
fn plane_extents(fourcc: DrmFourcc, width: u32, height: u32) -> Option<Vec<(usize, usize)>> {
    let (w, h) = (width as usize, height as usize);
    let (cw, ch) = (w.div_ceil(2), h.div_ceil(2));
    Some(match fourcc {
        DrmFourcc::Yuv420 => vec![(w, h), (cw, ch), (cw, ch)],
        DrmFourcc::Yuv422 => vec![(w, h), (cw, h), (cw, h)],
        DrmFourcc::Yuv444 => vec![(w, h), (w, h), (w, h)],
        DrmFourcc::Nv12 => vec![(w, h), (cw * 2, ch)],
        DrmFourcc::P010 => vec![(w * 2, h), (cw * 4, ch)],
        DrmFourcc::Xrgb8888 | DrmFourcc::Argb8888 => vec![(w * 4, h)],
        _ => return None,
    })
}

impl BufferLayout {
    /// Lays planes out one after the other in a single memory object.
    pub fn new(fourcc: DrmFourcc, width: u32, height: u32) -> Option<Self> {
        if width == 0 || height == 0 {
            return None;
        }
        let mut offset = 0;
        let planes = plane_extents(fourcc, width, height)?
            .into_iter()
            .map(|(row_bytes, rows)| {
                let stride = align(row_bytes);
                let plane = PlaneLayout {
                    offset,
                    stride,
                    row_bytes,
                    rows,
                };
                offset = align(offset + stride * rows);
                plane
            })
            .collect();
        Some(Self {
            fourcc,
            width,
            height,
            planes,
            size: offset,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nv12_odd_size_rounds_chroma_up_and_aligns() {
        let l = BufferLayout::new(DrmFourcc::Nv12, 251, 131).unwrap();
        assert_eq!(l.planes.len(), 2);
        assert_eq!(
            l.planes[0],
            PlaneLayout {
                offset: 0,
                stride: 256,
                row_bytes: 251,
                rows: 131
            }
        );
        assert_eq!(l.planes[1].offset, 256 * 131);
        assert_eq!(l.planes[1].row_bytes, 252);
        assert_eq!(l.planes[1].rows, 66);
        assert_eq!(l.size, 256 * 131 + 256 * 66);
    }

    #[test]
    fn planes_never_overlap() {
        for f in [
            DrmFourcc::Yuv420,
            DrmFourcc::Yuv422,
            DrmFourcc::Yuv444,
            DrmFourcc::P010,
        ] {
            let l = BufferLayout::new(f, 99, 17).unwrap();
            for pair in l.planes.windows(2) {
                assert!(pair[0].offset + pair[0].stride * pair[0].rows <= pair[1].offset);
            }
            let last = l.planes[l.planes.len() - 1];
            assert!(last.offset + last.stride * last.rows <= l.size);
            assert!(l
                .planes
                .iter()
                .all(|p| p.offset % ALIGN == 0 && p.row_bytes <= p.stride));
        }
    }

    #[test]
    fn zero_size_and_unknown_formats_are_refused() {
        assert!(BufferLayout::new(DrmFourcc::Nv12, 0, 10).is_none());
        assert!(BufferLayout::new(DrmFourcc::Yuyv, 16, 16).is_none());
    }
}
