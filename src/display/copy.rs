//! The one copy of the software path: a CPU frame's planes into a mapped
//! buffer laid out for its DRM format (repacking 10-bit planar into P010).

use drm_fourcc::DrmFourcc;

use super::layout::BufferLayout;
use crate::frame::{CpuPlanes, Frame, PixelFormat};

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CopyError {
    #[error("cannot copy a {from} frame into a {to:?} buffer")]
    Unsupported { from: PixelFormat, to: DrmFourcc },
    #[error("frame is {fw}x{fh}, buffer is {bw}x{bh}")]
    SizeMismatch { fw: u32, fh: u32, bw: u32, bh: u32 },
    #[error("plane {plane} of the frame is shorter than its size and stride say")]
    ShortPlane { plane: usize },
    #[error("destination buffer is smaller than its layout")]
    ShortDestination,
    #[error("the frame's pixels cannot be read by the CPU (tiled dmabuf)")]
    NoCpuMapping,
}

/// Row `row` of `plane` (`len` bytes), or an error if the decoder handed us
/// less data than its stride and size promise.
pub(crate) fn src_row(
    planes: &dyn CpuPlanes,
    plane: usize,
    row: usize,
    len: usize,
) -> Result<&[u8], CopyError> {
    let start = row * planes.stride(plane);
    planes
        .plane(plane)
        .get(start..start + len)
        .ok_or(CopyError::ShortPlane { plane })
}

/// The DRM formats [`copy_frame`] writes a `format` frame into, best first:
/// its own layout (10-bit planar repacked into P010), then the other 4:2:0
/// layouts it converts into (8-bit, planar or semi-planar). The
/// negotiation chooses among them (`negotiation::copy_target`).
pub fn copy_targets(format: PixelFormat) -> &'static [DrmFourcc] {
    use DrmFourcc::{Nv12, Yuv420, Yuv422, Yuv444, P010};
    match format {
        PixelFormat::Yuv420 => &[Yuv420, Nv12],
        PixelFormat::Nv12 => &[Nv12, Yuv420],
        PixelFormat::Yuv420p10 | PixelFormat::P010 => &[P010, Nv12, Yuv420],
        PixelFormat::Yuv422 => &[Yuv422],
        PixelFormat::Yuv444 => &[Yuv444],
        PixelFormat::Gray8 => &[],
    }
}

/// Copies `frame` into `dst`, which is laid out as `layout`.
pub fn copy_frame(frame: &Frame, layout: &BufferLayout, dst: &mut [u8]) -> Result<(), CopyError> {
    if (frame.width, frame.height) != (layout.width, layout.height) {
        return Err(CopyError::SizeMismatch {
            fw: frame.width,
            fh: frame.height,
            bw: layout.width,
            bh: layout.height,
        });
    }
    if dst.len() < layout.size {
        return Err(CopyError::ShortDestination);
    }
    let planes = frame.storage.cpu_planes().ok_or(CopyError::NoCpuMapping)?;
    let _access = planes.read_access();
    match (frame.format, layout.fourcc) {
        (f, to) if f.drm_fourcc() == Some(to) => copy_same(planes, layout, dst),
        (PixelFormat::Yuv420p10, DrmFourcc::P010) => repack_p010(planes, frame, layout, dst),
        (
            PixelFormat::Yuv420 | PixelFormat::Nv12 | PixelFormat::Yuv420p10 | PixelFormat::P010,
            DrmFourcc::Nv12 | DrmFourcc::Yuv420,
        ) => to_eight_bit_420(planes, frame, layout, dst),
        (from, to) => Err(CopyError::Unsupported { from, to }),
    }
}

fn copy_same(
    planes: &dyn CpuPlanes,
    layout: &BufferLayout,
    dst: &mut [u8],
) -> Result<(), CopyError> {
    for (p, pl) in layout.planes.iter().enumerate() {
        for r in 0..pl.rows {
            let src = src_row(planes, p, r, pl.row_bytes)?;
            let at = pl.offset + r * pl.stride;
            dst[at..at + pl.row_bytes].copy_from_slice(src);
        }
    }
    Ok(())
}

/// yuv420p10le (10 bits in the low bits, three planes) to P010 (10 bits in
/// the high bits, CbCr interleaved).
fn repack_p010(
    planes: &dyn CpuPlanes,
    frame: &Frame,
    layout: &BufferLayout,
    dst: &mut [u8],
) -> Result<(), CopyError> {
    let (y_bytes, y_rows) = frame.format.plane_extent(0, frame.width, frame.height);
    let (c_bytes, c_rows) = frame.format.plane_extent(1, frame.width, frame.height);
    let luma = layout.planes[0];
    for r in 0..y_rows {
        let src = src_row(planes, 0, r, y_bytes)?;
        let row = &mut dst[luma.offset + r * luma.stride..][..y_bytes];
        for (d, s) in row.chunks_exact_mut(2).zip(src.chunks_exact(2)) {
            let v = u16::from_le_bytes([s[0], s[1]]) << 6;
            d.copy_from_slice(&v.to_le_bytes());
        }
    }
    let chroma = layout.planes[1];
    for r in 0..c_rows {
        let cb = src_row(planes, 1, r, c_bytes)?;
        let cr = src_row(planes, 2, r, c_bytes)?;
        let row = &mut dst[chroma.offset + r * chroma.stride..][..c_bytes * 2];
        for ((d, u), v) in row
            .chunks_exact_mut(4)
            .zip(cb.chunks_exact(2))
            .zip(cr.chunks_exact(2))
        {
            let u = u16::from_le_bytes([u[0], u[1]]) << 6;
            let v = u16::from_le_bytes([v[0], v[1]]) << 6;
            d[..2].copy_from_slice(&u.to_le_bytes());
            d[2..].copy_from_slice(&v.to_le_bytes());
        }
    }
    Ok(())
}

/// An 8- or 10-bit 4:2:0 frame (planar or semi-planar) into an 8-bit 4:2:0
/// buffer, planar (YUV420) or semi-planar (NV12): the chroma planes
/// interleaved or split, 10-bit samples rounded to the nearest 8-bit value
/// (for compositors that take no 10-bit format).
fn to_eight_bit_420(
    planes: &dyn CpuPlanes,
    frame: &Frame,
    layout: &BufferLayout,
    dst: &mut [u8],
) -> Result<(), CopyError> {
    // Bytes per sample, the shift that right-aligns a sample, and whether
    // Cb and Cr are interleaved in one plane.
    let (sample, shift, semi_planar) = match frame.format {
        PixelFormat::Yuv420 => (1, 0, false),
        PixelFormat::Nv12 => (1, 0, true),
        PixelFormat::Yuv420p10 => (2, 0, false),
        PixelFormat::P010 => (2, 6, true),
        from => {
            return Err(CopyError::Unsupported {
                from,
                to: layout.fourcc,
            })
        }
    };
    let to8 = |s: &[u8]| -> u8 {
        if sample == 1 {
            return s[0];
        }
        let v = u16::from_le_bytes([s[0], s[1]]) >> shift;
        ((v.min(1023) + 2) >> 2).min(255) as u8
    };
    let (y_bytes, y_rows) = frame.format.plane_extent(0, frame.width, frame.height);
    let luma = layout.planes[0];
    for r in 0..y_rows {
        let src = src_row(planes, 0, r, y_bytes)?;
        let row = &mut dst[luma.offset + r * luma.stride..][..y_bytes / sample];
        for (d, s) in row.iter_mut().zip(src.chunks_exact(sample)) {
            *d = to8(s);
        }
    }
    let (c_bytes, c_rows) = frame.format.plane_extent(1, frame.width, frame.height);
    // Cb (and as many Cr) samples in a row.
    let count = if semi_planar { c_bytes / 2 } else { c_bytes } / sample;
    for r in 0..c_rows {
        let (cb_row, cr_row) = if semi_planar {
            let both = src_row(planes, 1, r, c_bytes)?;
            (both, both)
        } else {
            (
                src_row(planes, 1, r, c_bytes)?,
                src_row(planes, 2, r, c_bytes)?,
            )
        };
        let (step, cr_at) = if semi_planar { (2, 1) } else { (1, 0) };
        let cb = |i: usize| to8(&cb_row[i * step * sample..]);
        let cr = |i: usize| to8(&cr_row[(i * step + cr_at) * sample..]);
        if layout.fourcc == DrmFourcc::Nv12 {
            let plane = layout.planes[1];
            let row = &mut dst[plane.offset + r * plane.stride..][..count * 2];
            for (i, d) in row.chunks_exact_mut(2).enumerate() {
                d[0] = cb(i);
                d[1] = cr(i);
            }
        } else {
            for (plane, sample_of) in [
                (layout.planes[1], &cb as &dyn Fn(usize) -> u8),
                (layout.planes[2], &cr),
            ] {
                let row = &mut dst[plane.offset + r * plane.stride..][..count];
                for (i, d) in row.iter_mut().enumerate() {
                    *d = sample_of(i);
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::display::testutil::frame_from_planes;

    #[test]
    fn nv12_rows_land_at_layout_offsets() {
        // 4x2 NV12 with 8-byte source strides (padding must not be copied).
        let y = vec![1, 2, 3, 4, 99, 99, 99, 99, 5, 6, 7, 8, 99, 99, 99, 99];
        let uv = vec![10, 20, 30, 40, 99, 99, 99, 99];
        let f = frame_from_planes(PixelFormat::Nv12, 4, 2, vec![(y, 8), (uv, 8)]);
        let l = BufferLayout::new(DrmFourcc::Nv12, 4, 2).unwrap();
        let mut dst = vec![0u8; l.size];
        copy_frame(&f, &l, &mut dst).unwrap();
        assert_eq!(&dst[0..4], &[1, 2, 3, 4]);
        assert_eq!(&dst[4..8], &[0, 0, 0, 0]);
        assert_eq!(&dst[l.planes[0].stride..][..4], &[5, 6, 7, 8]);
        assert_eq!(&dst[l.planes[1].offset..][..4], &[10, 20, 30, 40]);
    }

    #[test]
    fn ten_bit_planar_repacks_to_p010() {
        let y: Vec<u8> = [1023u16, 64, 512, 940]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let u = 960u16.to_le_bytes().to_vec();
        let v = 64u16.to_le_bytes().to_vec();
        let f = frame_from_planes(PixelFormat::Yuv420p10, 2, 2, vec![(y, 4), (u, 2), (v, 2)]);
        let l = BufferLayout::new(DrmFourcc::P010, 2, 2).unwrap();
        let mut dst = vec![0u8; l.size];
        copy_frame(&f, &l, &mut dst).unwrap();
        let word = |at: usize| u16::from_le_bytes([dst[at], dst[at + 1]]);
        assert_eq!(word(0), 1023 << 6);
        assert_eq!(word(2), 64 << 6);
        assert_eq!(word(l.planes[0].stride), 512 << 6);
        assert_eq!(word(l.planes[1].offset), 960 << 6);
        assert_eq!(word(l.planes[1].offset + 2), 64 << 6);
    }

    /// A V4L2 NV12_32L32 (ST12) CAPTURE picture, as the decoder hands it
    /// when the compositor cannot import its modifier: the display copies
    /// the detiled view into a linear NV12 buffer.
    #[test]
    fn detiled_capture_view_copies_into_linear_nv12() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::sync::Arc;

        use crate::fourcc::{fourcc, MOD_ALLWINNER_TILED};
        use crate::frame::{BufferId, DmabufFrame, DmabufSource, FrameStorage};
        use crate::v4l2::detiled_view::{testing::VecSource, DetiledPlanes};

        struct NoFds;
        impl DmabufSource for NoFds {
            fn fd(&self, _: usize) -> Option<std::os::fd::BorrowedFd<'_>> {
                None
            }
        }
        let (coded_w, coded_h, bpl) = (64usize, 64usize, 64usize);
        let (w, h) = (50u32, 37u32);
        let luma = |x: usize, y: usize| (x * 3 + y * 5) as u8;
        let chroma = |i: usize, y: usize| (200 + i + y * 7) as u8;
        // 32x32 tiles stored linearly, chroma tiles after the luma tiles.
        let at =
            |x: usize, y: usize| ((y / 32) * (bpl / 32) + x / 32) * 1024 + (y % 32) * 32 + x % 32;
        let mut buffer = vec![0u8; bpl * coded_h * 3 / 2];
        for y in 0..coded_h {
            for x in 0..coded_w {
                buffer[at(x, y)] = luma(x, y);
            }
        }
        for y in 0..coded_h / 2 {
            for i in 0..coded_w {
                buffer[bpl * coded_h + at(i, y)] = chroma(i, y);
            }
        }
        let detiled = Arc::new(AtomicUsize::new(0));
        let source = VecSource {
            v4l2: fourcc(b"ST12"),
            coded: (coded_w as u32, coded_h as u32),
            planes: vec![(buffer, bpl as u32)],
            detiled: detiled.clone(),
        };
        let view = DetiledPlanes::new(Box::new(source), w, h).unwrap();
        let mut frame = frame_from_planes(view.format(), w, h, vec![]);
        frame.storage = FrameStorage::Dmabuf(DmabufFrame {
            fourcc: fourcc(b"NV12"),
            modifier: MOD_ALLWINNER_TILED,
            coded_width: coded_w as u32,
            coded_height: coded_h as u32,
            planes: vec![],
            bit_depth: 8,
            stream_bit_depth: 8,
            id: BufferId {
                generation: 0,
                index: 0,
            },
            source: Arc::new(NoFds),
            cpu: Some(Box::new(view)),
        });
        let l = BufferLayout::new(DrmFourcc::Nv12, w, h).unwrap();
        let mut dst = vec![0u8; l.size];
        assert_eq!(detiled.load(Ordering::SeqCst), 0);
        copy_frame(&frame, &l, &mut dst).unwrap();
        assert_eq!(detiled.load(Ordering::SeqCst), 1);
        for y in 0..h as usize {
            let row = &dst[l.planes[0].offset + y * l.planes[0].stride..][..w as usize];
            let want: Vec<u8> = (0..w as usize).map(|x| luma(x, y)).collect();
            assert_eq!(row, want.as_slice(), "luma row {y}");
        }
        let chroma_bytes = 2 * (w as usize).div_ceil(2);
        for y in 0..(h as usize).div_ceil(2) {
            let row = &dst[l.planes[1].offset + y * l.planes[1].stride..][..chroma_bytes];
            let want: Vec<u8> = (0..chroma_bytes).map(|i| chroma(i, y)).collect();
            assert_eq!(row, want.as_slice(), "chroma row {y}");
        }
    }

    #[test]
    fn ten_bit_frames_reduce_to_nv12_with_rounding() {
        // Samples chosen around the rounding points: 10-bit v -> (v + 2) / 4.
        let samples = [1023u16, 64, 513, 514];
        let expect = [255u8, 16, 128, 129];
        let y: Vec<u8> = samples.iter().flat_map(|v| v.to_le_bytes()).collect();
        let planar = frame_from_planes(
            PixelFormat::Yuv420p10,
            2,
            2,
            vec![
                (y.clone(), 4),
                (961u16.to_le_bytes().to_vec(), 2),
                (66u16.to_le_bytes().to_vec(), 2),
            ],
        );
        let p010_y: Vec<u8> = samples
            .iter()
            .flat_map(|v| (v << 6).to_le_bytes())
            .collect();
        let p010_uv: Vec<u8> = [961u16 << 6, 66 << 6]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let semi = frame_from_planes(PixelFormat::P010, 2, 2, vec![(p010_y, 4), (p010_uv, 4)]);
        let l = BufferLayout::new(DrmFourcc::Nv12, 2, 2).unwrap();
        for f in [planar, semi] {
            let mut dst = vec![0u8; l.size];
            copy_frame(&f, &l, &mut dst).unwrap();
            assert_eq!(&dst[0..2], &expect[0..2], "{}", f.format);
            assert_eq!(
                &dst[l.planes[0].stride..][..2],
                &expect[2..4],
                "{}",
                f.format
            );
            assert_eq!(&dst[l.planes[1].offset..][..2], &[240, 17], "{}", f.format);
        }
    }

    #[test]
    fn every_copy_target_is_written() {
        for format in [
            PixelFormat::Yuv420,
            PixelFormat::Nv12,
            PixelFormat::Yuv420p10,
            PixelFormat::P010,
            PixelFormat::Yuv422,
            PixelFormat::Yuv444,
        ] {
            let (w, h) = (6, 4);
            let planes = (0..if matches!(format, PixelFormat::Nv12 | PixelFormat::P010) {
                2
            } else {
                3
            })
                .map(|p| {
                    let (bytes, rows) = format.plane_extent(p, w, h);
                    (vec![0x40; bytes * rows], bytes)
                })
                .collect();
            let frame = frame_from_planes(format, w, h, planes);
            for &to in copy_targets(format) {
                let l = BufferLayout::new(to, w, h).unwrap();
                let mut dst = vec![0u8; l.size];
                assert_eq!(
                    copy_frame(&frame, &l, &mut dst),
                    Ok(()),
                    "{format} -> {to:?}"
                );
            }
        }
    }

    #[test]
    fn eight_bit_planar_and_semi_planar_convert_both_ways() {
        // 2x2: one chroma sample pair.
        let planar = frame_from_planes(
            PixelFormat::Yuv420,
            2,
            2,
            vec![(vec![1, 2, 3, 4], 2), (vec![100], 1), (vec![200], 1)],
        );
        let semi = frame_from_planes(
            PixelFormat::Nv12,
            2,
            2,
            vec![(vec![1, 2, 3, 4], 2), (vec![100, 200], 2)],
        );
        let nv12 = BufferLayout::new(DrmFourcc::Nv12, 2, 2).unwrap();
        let mut dst = vec![0u8; nv12.size];
        copy_frame(&planar, &nv12, &mut dst).unwrap();
        assert_eq!(&dst[nv12.planes[1].offset..][..2], &[100, 200]);
        assert_eq!(&dst[nv12.planes[0].stride..][..2], &[3, 4]);
        let yu12 = BufferLayout::new(DrmFourcc::Yuv420, 2, 2).unwrap();
        let mut dst = vec![0u8; yu12.size];
        copy_frame(&semi, &yu12, &mut dst).unwrap();
        assert_eq!(dst[yu12.planes[1].offset], 100);
        assert_eq!(dst[yu12.planes[2].offset], 200);
        assert_eq!(&dst[..2], &[1, 2]);
    }

    #[test]
    fn short_planes_are_an_error() {
        let f = frame_from_planes(
            PixelFormat::Nv12,
            4,
            2,
            vec![(vec![0; 5], 4), (vec![0; 4], 4)],
        );
        let l = BufferLayout::new(DrmFourcc::Nv12, 4, 2).unwrap();
        let mut dst = vec![0u8; l.size];
        assert_eq!(
            copy_frame(&f, &l, &mut dst),
            Err(CopyError::ShortPlane { plane: 0 })
        );
    }

    #[test]
    fn size_mismatch_is_an_error() {
        let f = frame_from_planes(
            PixelFormat::Nv12,
            4,
            2,
            vec![(vec![0; 8], 4), (vec![0; 4], 4)],
        );
        let l = BufferLayout::new(DrmFourcc::Nv12, 8, 2).unwrap();
        let mut dst = vec![0u8; l.size];
        assert!(matches!(
            copy_frame(&f, &l, &mut dst),
            Err(CopyError::SizeMismatch { .. })
        ));
    }
}
