//! The negotiated CAPTURE layout and where each colour plane sits in the
//! buffer, for the CPU path and for the compositor's import.

use crate::frame::DmabufPlane;
use crate::v4l2::formats::{CaptureFormat, ModifierRule};

/// The negotiated CAPTURE layout.
#[derive(Clone, Debug)]
pub struct CaptureLayout {
    pub format: &'static CaptureFormat,
    /// Allocated size (G_FMT), which may exceed the visible size.
    pub coded_width: u32,
    pub coded_height: u32,
    /// (bytesperline, sizeimage) per memory plane.
    pub planes: Vec<(u32, u32)>,
}

impl CaptureLayout {
    /// (memory plane, byte offset, stride) of each colour plane, for
    /// layouts the CPU path reads; `None` for tiled or packed ones.
    pub fn cpu_planes(&self) -> Option<Vec<(usize, usize, usize)>> {
        let cpu = self.format.cpu?;
        let (stride0, _) = *self.planes.first()?;
        let stride0 = stride0 as usize;
        let rows = self.coded_height as usize;
        if self.format.memory_planes == self.format.color_planes {
            if self.planes.len() != self.format.color_planes {
                return None;
            }
            return Some(
                self.planes
                    .iter()
                    .enumerate()
                    .map(|(i, (bpl, _))| (i, 0, *bpl as usize))
                    .collect(),
            );
        }
        // One memory plane: chroma follows luma, with strides derived from
        // the luma stride as the V4L2 single-buffer formats define.
        Some(match cpu.plane_count() {
            2 => vec![(0, 0, stride0), (0, stride0 * rows, stride0)],
            3 => {
                let luma = stride0 * rows;
                let chroma = (stride0 / 2) * rows.div_ceil(2);
                vec![
                    (0, 0, stride0),
                    (0, luma, stride0 / 2),
                    (0, luma + chroma, stride0 / 2),
                ]
            }
            _ => vec![(0, 0, stride0)],
        })
    }
}

impl CaptureLayout {
    /// The colour planes as the compositor imports them: the CPU layout for
    /// linear formats; for tiled single-buffer formats the chroma plane
    /// follows `coded_height` rows of luma at the luma pitch.
    pub fn dmabuf_planes(&self) -> Option<Vec<DmabufPlane>> {
        let planes = match self.cpu_planes() {
            Some(p) => p,
            None if self.format.memory_planes == self.format.color_planes => self
                .planes
                .iter()
                .enumerate()
                .map(|(i, (bpl, _))| (i, 0, *bpl as usize))
                .collect(),
            // SAND128: bytesperline is the column height in lines; each
            // 128-byte-wide column holds coded_height rows of luma, then
            // its chroma rows.
            None if self.format.modifier == ModifierRule::Sand128FromBytesPerLine => {
                let (column_height, _) = *self.planes.first()?;
                let column_height = column_height as usize;
                let chroma = 128 * self.coded_height as usize;
                vec![(0, 0, column_height), (0, chroma, column_height)]
            }
            None if self.format.color_planes == 2 => {
                let (bpl, _) = *self.planes.first()?;
                let bpl = bpl as usize;
                vec![(0, 0, bpl), (0, bpl * self.coded_height as usize, bpl)]
            }
            None => return None,
        };
        planes
            .into_iter()
            .map(|(memory_plane, offset, stride)| {
                Some(DmabufPlane {
                    memory_plane,
                    offset: u32::try_from(offset).ok()?,
                    stride: u32::try_from(stride).ok()?,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::v4l2::formats::capture_format;

    fn layout(v4l2: &[u8; 4], planes: Vec<(u32, u32)>) -> CaptureLayout {
        CaptureLayout {
            format: capture_format(crate::fourcc::fourcc(v4l2)).unwrap(),
            coded_width: 320,
            coded_height: 240,
            planes,
        }
    }

    #[test]
    fn cpu_plane_offsets_follow_the_v4l2_layouts() {
        // NV12: CbCr right after 240 rows of luma, same stride.
        let nv12 = layout(b"NV12", vec![(384, 384 * 360)]);
        assert_eq!(
            nv12.cpu_planes(),
            Some(vec![(0, 0, 384), (0, 384 * 240, 384)])
        );
        // NV12M: one buffer per plane.
        let nm12 = layout(b"NM12", vec![(320, 76800), (320, 38400)]);
        assert_eq!(nm12.cpu_planes(), Some(vec![(0, 0, 320), (1, 0, 320)]));
        // YUV420: Cb then Cr, half stride, half height.
        let yu12 = layout(b"YU12", vec![(320, 115200)]);
        assert_eq!(
            yu12.cpu_planes(),
            Some(vec![
                (0, 0, 320),
                (0, 76800, 160),
                (0, 76800 + 160 * 120, 160)
            ])
        );
        // Tiled: not for the CPU path.
        assert_eq!(layout(b"ST12", vec![(320, 115200)]).cpu_planes(), None);
        // A multi-planar format with a plane missing is refused.
        assert_eq!(layout(b"NM12", vec![(320, 76800)]).cpu_planes(), None);
    }

    #[test]
    fn dmabuf_planes_of_tiled_and_column_layouts() {
        let planes = |l: &CaptureLayout| -> Vec<(usize, u32, u32)> {
            l.dmabuf_planes()
                .unwrap()
                .iter()
                .map(|p| (p.memory_plane, p.offset, p.stride))
                .collect()
        };
        // NV12_32L32 (320x240 coded): chroma after 240 rows of 320-byte pitch.
        let st12 = layout(b"ST12", vec![(320, 320 * 240 * 3 / 2)]);
        assert_eq!(planes(&st12), vec![(0, 0, 320), (0, 320 * 240, 320)]);
        // SAND128: bytesperline is the column height (here 240 luma + 120
        // chroma lines); chroma starts after 240 rows of 128 bytes inside
        // each column, not after 240 x bytesperline.
        let sand = layout(b"NC12", vec![(360, 360 * 128 * 3)]);
        assert_eq!(planes(&sand), vec![(0, 0, 360), (0, 128 * 240, 360)]);
    }
}
