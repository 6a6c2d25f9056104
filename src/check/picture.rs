//! A decoded picture as `reel check` compares it: its planes tightly
//! packed in the stream's planar layout (what `--output raw` writes), held
//! in memory so that the decoder's buffer goes back at once.

use std::time::Duration;

use crate::display::rawvideo::{planar_layout, RawVideoWriter};
use crate::frame::{CpuPlanes, DecoderKind, Frame, FrameStorage, PixelFormat};

use super::psnr::Samples;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Picture {
    pub pts_raw: i64,
    pub width: u32,
    pub height: u32,
    /// Planar (`planar_layout` of the decoder's format).
    pub format: PixelFormat,
    /// The planes one after the other, no row padding.
    pub data: Vec<u8>,
}

/// Packs frames into [`Picture`]s, reusing one writer.
pub struct Packer {
    writer: RawVideoWriter<Vec<u8>>,
}

impl Default for Packer {
    fn default() -> Self {
        Self {
            writer: RawVideoWriter::new(Vec::new(), None).without_layout_log(),
        }
    }
}

impl Packer {
    /// The frame's pixels, packed and planar (semi-planar pictures
    /// de-interleaved, P010 shifted to the low bits).
    pub fn pack(&mut self, frame: &Frame) -> std::io::Result<Picture> {
        self.writer.get_mut().clear();
        self.writer.write_frame(frame)?;
        Ok(Picture {
            pts_raw: frame.pts_raw,
            width: frame.width,
            height: frame.height,
            format: planar_layout(frame.format),
            data: std::mem::take(self.writer.get_mut()),
        })
    }
}

impl Picture {
    /// The byte range of each plane in `data`.
    pub fn plane_ranges(&self) -> Vec<std::ops::Range<usize>> {
        let mut start = 0;
        (0..self.format.plane_count())
            .map(|p| {
                let (row, rows) = self.format.plane_extent(p, self.width, self.height);
                let range = start..start + row * rows;
                start = range.end;
                range
            })
            .collect()
    }

    /// Whether `data` holds every plane in full (a picture that could not
    /// be read ends early).
    pub fn is_complete(&self) -> bool {
        self.plane_ranges().last().map_or(0, |r| r.end) == self.data.len()
    }

    /// Plane `p`'s bytes (empty where the picture ends early).
    pub fn plane(&self, p: usize) -> &[u8] {
        self.plane_ranges()
            .get(p)
            .and_then(|r| self.data.get(r.clone()))
            .unwrap_or_default()
    }

    pub fn plane_mut(&mut self, p: usize) -> &mut [u8] {
        match self.plane_ranges().get(p) {
            Some(r) => self.data.get_mut(r.clone()).unwrap_or_default(),
            None => &mut [],
        }
    }

    pub fn samples(&self) -> Samples {
        Samples {
            bytes: self.format.bytes_per_sample(),
            bits: self.format.bit_depth(),
        }
    }

    /// The same layout and size as `other`.
    pub fn same_shape(&self, other: &Picture) -> bool {
        (self.width, self.height, self.format) == (other.width, other.height, other.format)
    }

    /// A CPU frame of this picture (for the RGB conversion of a PNG).
    pub fn to_frame(&self) -> Frame {
        let ranges = self.plane_ranges();
        let planes = ranges
            .iter()
            .enumerate()
            .map(|(p, r)| {
                let stride = self.format.plane_extent(p, self.width, self.height).0;
                (
                    self.data.get(r.clone()).unwrap_or_default().to_vec(),
                    stride,
                )
            })
            .collect();
        Frame {
            pts: Duration::ZERO,
            pts_raw: self.pts_raw,
            duration: Duration::ZERO,
            duration_raw: 0,
            width: self.width,
            height: self.height,
            format: self.format,
            sample_aspect: (1, 1),
            decoder: DecoderKind::Software,
            epoch: 0,
            storage: FrameStorage::Cpu(Box::new(OwnedPlanes(planes))),
        }
    }
}

/// Planes and their strides.
struct OwnedPlanes(Vec<(Vec<u8>, usize)>);

impl CpuPlanes for OwnedPlanes {
    fn plane(&self, plane: usize) -> &[u8] {
        self.0.get(plane).map_or(&[], |(data, _)| data)
    }
    fn stride(&self, plane: usize) -> usize {
        self.0.get(plane).map_or(0, |&(_, stride)| stride)
    }
}

#[cfg(test)]
pub(crate) fn test_picture(format: PixelFormat, width: u32, height: u32, data: Vec<u8>) -> Picture {
    Picture {
        pts_raw: 0,
        width,
        height,
        format,
        data,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn planes_are_cut_by_the_layout() {
        // 4x2 yuv420p: 8 luma bytes, 2 + 2 chroma.
        let p = test_picture(PixelFormat::Yuv420, 4, 2, (0..12).collect());
        assert_eq!(p.plane(0), &[0, 1, 2, 3, 4, 5, 6, 7]);
        assert_eq!((p.plane(1), p.plane(2)), (&[8, 9][..], &[10, 11][..]));
        assert!(p.is_complete());
        let short = test_picture(PixelFormat::Yuv420, 4, 2, (0..9).collect());
        assert!(!short.is_complete());
        assert!(short.plane(1).is_empty());
        let mut round = Vec::new();
        p.to_frame()
            .for_each_packed_row(|r| round.extend_from_slice(r));
        assert_eq!(round, p.data);
    }
}
