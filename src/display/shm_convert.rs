//! The wl_shm fallback's pixels: any CPU frame to XRGB8888, BT.601 limited
//! range (the frame carries no colour description, and BT.601 limited is
//! what libavcodec assumes for untagged SD content too).

use super::copy::{src_row, CopyError};
use crate::frame::{Frame, PixelFormat};

/// BT.601 limited-range YCbCr -> R'G'B' coefficients in 16.16 fixed point
/// (1.164383, 1.596027, 0.391762, 0.812968, 2.017232).
const K_Y: i32 = 76309;
const K_RV: i32 = 104597;
const K_GU: i32 = 25675;
const K_GV: i32 = 53279;
const K_BU: i32 = 132201;

/// One pixel's 8-bit R, G, B from samples of `depth` bits.
pub fn yuv_to_rgb(y: u16, u: u16, v: u16, depth: u32) -> [u8; 3] {
    let s = depth.saturating_sub(8);
    let yd = (i32::from(y) - (16 << s)) * K_Y;
    let ud = i32::from(u) - (128 << s);
    let vd = i32::from(v) - (128 << s);
    let round = 1 << (15 + s);
    let out = |acc: i32| ((acc + round) >> (16 + s)).clamp(0, 255) as u8;
    [
        out(yd + K_RV * vd),
        out(yd - K_GU * ud - K_GV * vd),
        out(yd + K_BU * ud),
    ]
}

/// How to find a pixel's samples in a frame's rows.
#[derive(Clone, Copy)]
enum Sampling {
    /// Three planes; chroma subsampled by 2^sx horizontally, 2^sy vertically.
    Planar {
        sx: u32,
        sy: u32,
    },
    /// Luma + interleaved CbCr, 4:2:0.
    SemiPlanar,
    Gray,
}

fn sampling(format: PixelFormat) -> Sampling {
    match format {
        PixelFormat::Yuv420 | PixelFormat::Yuv420p10 => Sampling::Planar { sx: 1, sy: 1 },
        PixelFormat::Yuv422 => Sampling::Planar { sx: 1, sy: 0 },
        PixelFormat::Yuv444 => Sampling::Planar { sx: 0, sy: 0 },
        PixelFormat::Nv12 | PixelFormat::P010 => Sampling::SemiPlanar,
        PixelFormat::Gray8 => Sampling::Gray,
    }
}

/// Reads sample `i` of a row: 8-bit, 16-bit low-aligned, or 16-bit
/// high-aligned (P010), always returned right-aligned.
fn sample(row: &[u8], i: usize, format: PixelFormat) -> u16 {
    match format {
        PixelFormat::Yuv420p10 => u16::from_le_bytes([row[2 * i], row[2 * i + 1]]),
        PixelFormat::P010 => u16::from_le_bytes([row[2 * i], row[2 * i + 1]]) >> 6,
        _ => u16::from(row[i]),
    }
}

/// Writes `frame` as XRGB8888 (bytes B, G, R, X in memory) into `dst` with
/// `dst_stride` bytes per row. Chroma is taken from the co-sited sample
/// (nearest), which is exact for flat areas and cheap.
pub fn frame_to_xrgb(frame: &Frame, dst: &mut [u8], dst_stride: usize) -> Result<(), CopyError> {
    let (w, h) = (frame.width as usize, frame.height as usize);
    if dst_stride < w * 4 || dst.len() < dst_stride * h {
        return Err(CopyError::ShortDestination);
    }
    let planes = frame.storage.cpu_planes().ok_or(CopyError::NoCpuMapping)?;
    let _access = planes.read_access();
    let format = frame.format;
    let depth = format.bit_depth();
    let mid = 128u16 << (depth - 8);
    let extent = |p: usize| format.plane_extent(p, frame.width, frame.height).0;
    for y in 0..h {
        let luma = src_row(planes, 0, y, extent(0))?;
        let out = &mut dst[y * dst_stride..][..w * 4];
        match sampling(format) {
            Sampling::Planar { sx, sy } => {
                let cb = src_row(planes, 1, y >> sy, extent(1))?;
                let cr = src_row(planes, 2, y >> sy, extent(2))?;
                for (x, px) in out.chunks_exact_mut(4).enumerate() {
                    let c = x >> sx;
                    let rgb = yuv_to_rgb(
                        sample(luma, x, format),
                        sample(cb, c, format),
                        sample(cr, c, format),
                        depth,
                    );
                    px.copy_from_slice(&[rgb[2], rgb[1], rgb[0], 0xff]);
                }
            }
            Sampling::SemiPlanar => {
                let cbcr = src_row(planes, 1, y >> 1, extent(1))?;
                for (x, px) in out.chunks_exact_mut(4).enumerate() {
                    let c = (x >> 1) * 2;
                    let rgb = yuv_to_rgb(
                        sample(luma, x, format),
                        sample(cbcr, c, format),
                        sample(cbcr, c + 1, format),
                        depth,
                    );
                    px.copy_from_slice(&[rgb[2], rgb[1], rgb[0], 0xff]);
                }
            }
            Sampling::Gray => {
                for (x, px) in out.chunks_exact_mut(4).enumerate() {
                    let rgb = yuv_to_rgb(sample(luma, x, format), mid, mid, depth);
                    px.copy_from_slice(&[rgb[2], rgb[1], rgb[0], 0xff]);
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

    // Reference points are the definition of the limited range: nominal
    // black, white and the primaries (BT.601 Table 3 style values).
    #[test]
    fn nominal_black_white_and_primaries() {
        assert_eq!(yuv_to_rgb(16, 128, 128, 8), [0, 0, 0]);
        assert_eq!(yuv_to_rgb(235, 128, 128, 8), [255, 255, 255]);
        assert_eq!(yuv_to_rgb(64, 512, 512, 10), [0, 0, 0]);
        assert_eq!(yuv_to_rgb(940, 512, 512, 10), [255, 255, 255]);
        let close = |a: [u8; 3], b: [u8; 3]| a.iter().zip(b).all(|(x, y)| x.abs_diff(y) <= 2);
        // Y'CbCr of 100% red, green, blue (8-bit limited range).
        assert!(
            close(yuv_to_rgb(81, 90, 240, 8), [255, 0, 0]),
            "{:?}",
            yuv_to_rgb(81, 90, 240, 8)
        );
        assert!(close(yuv_to_rgb(145, 54, 34, 8), [0, 255, 0]));
        assert!(close(yuv_to_rgb(41, 240, 110, 8), [0, 0, 255]));
    }

    #[test]
    fn out_of_range_values_clamp() {
        assert_eq!(yuv_to_rgb(0, 128, 128, 8), [0, 0, 0]);
        assert_eq!(yuv_to_rgb(255, 128, 128, 8), [255, 255, 255]);
    }

    #[test]
    fn nv12_frame_converts_per_pixel() {
        // 2x2 NV12: left column white, right column black, neutral chroma.
        let f = frame_from_planes(
            PixelFormat::Nv12,
            2,
            2,
            vec![(vec![235, 16, 235, 16], 2), (vec![128, 128], 2)],
        );
        let mut dst = vec![0u8; 2 * 8];
        frame_to_xrgb(&f, &mut dst, 8).unwrap();
        assert_eq!(&dst[0..8], &[255, 255, 255, 255, 0, 0, 0, 255]);
        assert_eq!(&dst[8..16], &[255, 255, 255, 255, 0, 0, 0, 255]);
    }
}
