//! Tiled and packed V4L2 CAPTURE layouts turned into linear NV12 (8-bit) or
//! P010 (10-bit) planes in memory: the copy path's input when the
//! compositor cannot import the decoder's buffers as they are. The layouts
//! are those of the kernel's V4L2 pixel-format documentation
//! (pixfmt-yuv-planar.rst; NV12_COL128 from the Raspberry Pi kernel).

use crate::fourcc::fourcc_text;
use crate::frame::{CpuPlanes, PixelFormat};

/// Largest picture side accepted, in pixels.
pub const MAX_DIMENSION: u32 = 16384;
/// Largest `bytesperline` accepted (SAND128: lines per column).
pub const MAX_BYTES_PER_LINE: u32 = 1 << 17;

/// SAND128 column width in bytes.
const COLUMN_BYTES: usize = 128;
/// 10-bit samples in one SAND128 column row (three in each 32-bit word).
const SAMPLES_PER_TEN_BIT_COLUMN: usize = COLUMN_BYTES / 4 * 3;

/// How a layout arranges the bytes of each plane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Layout {
    /// Tiles of `width` x `luma_rows` bytes (chroma: `width` x
    /// `chroma_rows`) stored one after another, left to right, then top to
    /// bottom; `bytesperline` is the width of a row of tiles.
    Tiles {
        width: usize,
        luma_rows: usize,
        chroma_rows: usize,
    },
    /// Broadcom SAND: 128-byte-wide columns, each `bytesperline` rows of
    /// 128 bytes; a column's chroma rows follow its `coded_height` luma rows.
    Sand128,
    /// SAND128 with three 10-bit samples in each little-endian 32-bit word
    /// (bits 9:0, 19:10, 29:20).
    Sand128TenBit,
    /// Linear rows of 10-bit samples, four in five bytes, least significant
    /// bits first; chroma rows follow `coded_height` luma rows.
    Nv15,
}

const fn tiles(width: usize, luma_rows: usize, chroma_rows: usize) -> Layout {
    Layout::Tiles {
        width,
        luma_rows,
        chroma_rows,
    }
}

/// By fourcc, as the CAPTURE format table names them (the kernel's
/// NV12_4L4, NV12_16L16, NV12_32L32, MM21, NV12_COL128, NV12_10_COL128,
/// NV15).
fn layout_of(v4l2: u32) -> Option<(Layout, PixelFormat)> {
    Some(match &v4l2.to_le_bytes() {
        b"VT12" => (tiles(4, 4, 4), PixelFormat::Nv12),
        b"HM12" => (tiles(16, 16, 16), PixelFormat::Nv12),
        b"ST12" => (tiles(32, 32, 32), PixelFormat::Nv12),
        b"MM21" => (tiles(16, 32, 16), PixelFormat::Nv12),
        b"NC12" => (Layout::Sand128, PixelFormat::Nv12),
        b"NC30" => (Layout::Sand128TenBit, PixelFormat::P010),
        b"NV15" => (Layout::Nv15, PixelFormat::P010),
        _ => return None,
    })
}

/// The linear layout `detile` produces from V4L2 format `v4l2`, or `None`
/// when it is not a layout this module converts.
pub fn detiled_format(v4l2: u32) -> Option<PixelFormat> {
    layout_of(v4l2).map(|(_, format)| format)
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DetileError {
    #[error("{0} is not a tiled or packed layout reel converts")]
    Unsupported(String),
    #[error("{width}x{height} from a {coded_width}x{coded_height} buffer is out of range")]
    OutOfRange {
        width: u32,
        height: u32,
        coded_width: u32,
        coded_height: u32,
    },
    #[error("bytesperline {bytes_per_line} of memory plane {plane} does not fit the layout")]
    BadBytesPerLine { plane: usize, bytes_per_line: u32 },
    #[error("memory plane {plane} is missing")]
    MissingPlane { plane: usize },
    #[error("memory plane {plane} ({len} bytes) is shorter than the layout needs")]
    ShortBuffer { plane: usize, len: usize },
}

/// One CAPTURE buffer as the driver describes it.
#[derive(Clone, Copy, Debug)]
pub struct TiledPicture<'a> {
    /// The V4L2 pixel format.
    pub v4l2: u32,
    /// The allocated size (G_FMT).
    pub coded_width: u32,
    pub coded_height: u32,
    /// (bytes, bytesperline) of each memory plane.
    pub planes: &'a [(&'a [u8], u32)],
}

/// A picture in linear NV12 or P010, rows packed with no padding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinearPicture {
    pub format: PixelFormat,
    pub width: u32,
    pub height: u32,
    planes: [Vec<u8>; 2],
    strides: [usize; 2],
}

impl CpuPlanes for LinearPicture {
    fn plane(&self, plane: usize) -> &[u8] {
        self.planes.get(plane).map_or(&[], Vec::as_slice)
    }
    fn stride(&self, plane: usize) -> usize {
        self.strides.get(plane).copied().unwrap_or(0)
    }
}

/// Where one colour plane's bytes are.
struct Source<'a> {
    bytes: &'a [u8],
    memory_plane: usize,
    /// Byte offset of the plane's first row (SAND: within each column).
    base: usize,
    bytes_per_line: usize,
}

impl Source<'_> {
    fn get(&self, at: usize, len: usize) -> Result<&[u8], DetileError> {
        at.checked_add(len)
            .and_then(|end| self.bytes.get(at..end))
            .ok_or(DetileError::ShortBuffer {
                plane: self.memory_plane,
                len: self.bytes.len(),
            })
    }
}

/// Converts the top-left `width` x `height` pixels of `picture` into linear
/// planes (`detiled_format(picture.v4l2)`).
pub fn detile(
    picture: &TiledPicture<'_>,
    width: u32,
    height: u32,
) -> Result<LinearPicture, DetileError> {
    let (layout, format) = layout_of(picture.v4l2)
        .ok_or_else(|| DetileError::Unsupported(fourcc_text(picture.v4l2)))?;
    let out_of_range = width == 0
        || height == 0
        || width > picture.coded_width
        || height > picture.coded_height
        || picture.coded_width > MAX_DIMENSION
        || picture.coded_height > MAX_DIMENSION;
    if out_of_range {
        return Err(DetileError::OutOfRange {
            width,
            height,
            coded_width: picture.coded_width,
            coded_height: picture.coded_height,
        });
    }
    let (luma, chroma) = sources(picture, layout)?;
    let mut planes = [Vec::new(), Vec::new()];
    let mut strides = [0; 2];
    for (p, source) in [luma, chroma].iter().enumerate() {
        let (row_bytes, rows) = format.plane_extent(p, width, height);
        let mut out = vec![0u8; row_bytes * rows];
        if row_bytes > 0 {
            for (y, row) in out.chunks_exact_mut(row_bytes).enumerate() {
                convert_row(layout, p, source, y, row)?;
            }
        }
        planes[p] = out;
        strides[p] = row_bytes;
    }
    Ok(LinearPicture {
        format,
        width,
        height,
        planes,
        strides,
    })
}

/// The luma and chroma sources of `picture`, with its bytesperline checked
/// against the layout.
fn sources<'a>(
    picture: &TiledPicture<'a>,
    layout: Layout,
) -> Result<(Source<'a>, Source<'a>), DetileError> {
    let plane = |i: usize| -> Result<(&'a [u8], usize), DetileError> {
        let &(bytes, bpl) = picture
            .planes
            .get(i)
            .ok_or(DetileError::MissingPlane { plane: i })?;
        if bpl == 0 || bpl > MAX_BYTES_PER_LINE {
            return Err(DetileError::BadBytesPerLine {
                plane: i,
                bytes_per_line: bpl,
            });
        }
        Ok((bytes, bpl as usize))
    };
    let bad = |i: usize, bpl: usize| DetileError::BadBytesPerLine {
        plane: i,
        bytes_per_line: bpl as u32,
    };
    let coded_width = picture.coded_width as usize;
    let coded_height = picture.coded_height as usize;
    let (luma_bytes, luma_bpl) = plane(0)?;
    // MM21 keeps chroma in a second memory plane; the others in the first.
    let multi_planar =
        super::formats::capture_format(picture.v4l2).is_some_and(|f| f.memory_planes > 1);
    let (chroma_bytes, chroma_bpl, chroma_plane) = if multi_planar {
        let (bytes, bpl) = plane(1)?;
        (bytes, bpl, 1)
    } else {
        (luma_bytes, luma_bpl, 0)
    };
    // Bytes (rows, for SAND) one coded luma row needs.
    let check = |i: usize, bpl: usize| -> Result<(), DetileError> {
        let fits = match layout {
            Layout::Tiles { width, .. } => bpl % width == 0 && bpl >= coded_width,
            Layout::Nv15 => bpl >= (coded_width * 10).div_ceil(8),
            // Column height in rows: the luma rows, then (single buffer)
            // the chroma rows.
            Layout::Sand128 | Layout::Sand128TenBit => {
                bpl >= coded_height
                    + if multi_planar {
                        0
                    } else {
                        coded_height.div_ceil(2)
                    }
            }
        };
        if fits {
            Ok(())
        } else {
            Err(bad(i, bpl))
        }
    };
    check(0, luma_bpl)?;
    check(chroma_plane, chroma_bpl)?;
    let chroma_base = if multi_planar {
        0
    } else {
        match layout {
            // The luma plane ends after whole rows of tiles.
            Layout::Tiles { luma_rows, .. } => luma_bpl * coded_height.next_multiple_of(luma_rows),
            Layout::Nv15 => luma_bpl * coded_height,
            Layout::Sand128 | Layout::Sand128TenBit => COLUMN_BYTES * coded_height,
        }
    };
    Ok((
        Source {
            bytes: luma_bytes,
            memory_plane: 0,
            base: 0,
            bytes_per_line: luma_bpl,
        },
        Source {
            bytes: chroma_bytes,
            memory_plane: chroma_plane,
            base: chroma_base,
            bytes_per_line: chroma_bpl,
        },
    ))
}

/// Fills `out`, row `y` of colour plane `plane` in the linear layout.
fn convert_row(
    layout: Layout,
    plane: usize,
    source: &Source<'_>,
    y: usize,
    out: &mut [u8],
) -> Result<(), DetileError> {
    match layout {
        Layout::Tiles {
            width,
            luma_rows,
            chroma_rows,
        } => {
            let tile_rows = if plane == 0 { luma_rows } else { chroma_rows };
            let tile_bytes = width * tile_rows;
            let tiles_per_row = source.bytes_per_line / width;
            let first = source.base
                + (y / tile_rows) * tiles_per_row * tile_bytes
                + (y % tile_rows) * width;
            for (tile, piece) in out.chunks_mut(width).enumerate() {
                piece.copy_from_slice(source.get(first + tile * tile_bytes, piece.len())?);
            }
        }
        Layout::Sand128 => {
            let column_stride = source.bytes_per_line * COLUMN_BYTES;
            let first = source.base + y * COLUMN_BYTES;
            for (column, piece) in out.chunks_mut(COLUMN_BYTES).enumerate() {
                piece.copy_from_slice(source.get(first + column * column_stride, piece.len())?);
            }
        }
        Layout::Sand128TenBit => {
            let column_stride = source.bytes_per_line * COLUMN_BYTES;
            let first = source.base + y * COLUMN_BYTES;
            // Three output samples (6 bytes of P010) per 32-bit word.
            for (word, samples) in out.chunks_mut(6).enumerate() {
                let column = word / (SAMPLES_PER_TEN_BIT_COLUMN / 3);
                let in_column = word % (SAMPLES_PER_TEN_BIT_COLUMN / 3);
                let at = first + column * column_stride + in_column * 4;
                let bytes = source.get(at, 4)?;
                let packed = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
                for (k, sample) in samples.chunks_exact_mut(2).enumerate() {
                    let value = ((packed >> (10 * k)) & 0x3ff) as u16;
                    sample.copy_from_slice(&(value << 6).to_le_bytes());
                }
            }
        }
        Layout::Nv15 => {
            let first = source.base + y * source.bytes_per_line;
            // Four output samples (8 bytes of P010) per 5-byte group; a
            // last, partial group holds only the bytes its samples need.
            for (group, samples) in out.chunks_mut(8).enumerate() {
                let count = samples.len() / 2;
                let bytes = source.get(first + group * 5, (count * 10).div_ceil(8))?;
                let mut packed = [0u8; 8];
                packed[..bytes.len()].copy_from_slice(bytes);
                let packed = u64::from_le_bytes(packed);
                for (k, sample) in samples.chunks_exact_mut(2).enumerate() {
                    let value = ((packed >> (10 * k)) & 0x3ff) as u16;
                    sample.copy_from_slice(&(value << 6).to_le_bytes());
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "detile_tests.rs"]
mod tests;
