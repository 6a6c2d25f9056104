//! Decoding FWHT frames in software, bit-exact with vicodec.
//!
//! Each plane is a grid of 8x8 blocks (the plane's size rounded up to a
//! multiple of 8), coded one after the other as big-endian 16-bit words:
//! a block header (bit 15: predicted from the reference; bits 1-12: how
//! many following blocks repeat this one's residual), then run-length
//! coded coefficients in zigzag order (the top 12 bits a signed
//! coefficient, the low 4 a count of zeros before it; 15 ends the block).
//! Coefficients are scaled by a fixed table, inverse transformed with the
//! Walsh-Hadamard butterflies, and either offset to mid-grey (intra) or
//! added to the reference pixels (inter). A plane that would not shrink is
//! stored raw instead. The arithmetic keeps vicodec's 16-bit wrap-around
//! so that damaged streams decode to the same pixels as the driver's.

use super::{flags, FrameHeader};

/// Why a frame's payload could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("FWHT plane {plane} runs past the end of the frame's {len} bytes")]
    Truncated { plane: usize, len: usize },
    #[error("FWHT P frame without a reference picture")]
    NoReference,
    #[error("FWHT P frame of {width}x{height} predicts from a picture of another size")]
    ReferenceSize { width: u32, height: u32 },
}

/// One decoded plane: `stride` bytes per row (the block grid's width),
/// `rows` rows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plane {
    pub data: Vec<u8>,
    pub stride: usize,
    pub rows: usize,
}

/// A decoded frame: its planes in coded order (Y, Cb, Cr, alpha for
/// Y'CbCr), each padded to whole blocks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Picture {
    /// Visible size.
    pub width: u32,
    pub height: u32,
    /// Chroma subsampling divisors (horizontal, vertical).
    pub chroma_divisors: (u32, u32),
    pub planes: Vec<Plane>,
}

impl Picture {
    /// Bytes per row and rows of plane `index`'s visible part (chroma
    /// rounded up, as libavcodec's planar layouts are).
    pub fn visible_extent(&self, index: usize) -> (usize, usize) {
        let (wdiv, hdiv) = match index {
            1 | 2 => self.chroma_divisors,
            _ => (1, 1),
        };
        (
            self.width.div_ceil(wdiv) as usize,
            self.height.div_ceil(hdiv) as usize,
        )
    }

    /// The visible pixels, plane after plane with no row padding (as
    /// `--output raw` writes a picture).
    pub fn packed(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for (index, plane) in self.planes.iter().enumerate() {
            let (row_bytes, rows) = self.visible_extent(index);
            for row in plane.data.chunks(plane.stride).take(rows) {
                out.extend_from_slice(&row[..row_bytes.min(row.len())]);
            }
        }
        out
    }
}

/// Which flag says a plane is stored raw, by plane index.
const UNCOMPRESSED: [u32; 4] = [
    flags::LUMA_IS_UNCOMPRESSED,
    flags::CB_IS_UNCOMPRESSED,
    flags::CR_IS_UNCOMPRESSED,
    flags::ALPHA_IS_UNCOMPRESSED,
];

/// Bit 15 of a block header: the block is a residual against the reference.
const PREDICTED: u16 = 1 << 15;
/// Bits 1-12 of a block header: repeats of the block.
const REPEATS: u16 = 0x1ffe;
/// A run length saying the rest of the block is zero.
const END_OF_BLOCK: u16 = 15;

/// Raster position of the n-th coefficient in coded order.
const ZIGZAG: [u8; 64] = [
    0, 1, 8, 2, 9, 16, 3, 10, 17, 24, 4, 11, 18, 25, 32, 5, 12, 19, 26, 33, 40, 6, 13, 20, 27, 34,
    41, 48, 7, 14, 21, 28, 35, 42, 49, 56, 15, 22, 29, 36, 43, 50, 57, 23, 30, 37, 44, 51, 58, 31,
    38, 45, 52, 59, 39, 46, 53, 60, 47, 54, 61, 55, 62, 63,
];

/// The left shift restoring a coefficient at (`row`, `column`) of a block:
/// quantisation grows with the coefficient's diagonal, and residuals
/// (predicted blocks) were quantised more coarsely than intra blocks.
fn dequantisation_shift(row: usize, column: usize, predicted: bool) -> u32 {
    match (predicted, row + column) {
        (false, 0..=8) => 2,
        (false, 9) => 3,
        (false, 10..=13) => 6,
        (false, _) => 8,
        (true, 0..=9) => 3,
        (true, 10..=11) => 6,
        (true, 12..=13) => 9,
        (true, _) => 10,
    }
}

/// The plane sizes of a frame: (width, height) of each coded plane before
/// rounding to blocks, as vicodec divides them (chroma sizes rounded down).
fn plane_sizes(header: &FrameHeader) -> Vec<(u32, u32)> {
    let (w, h) = (header.width, header.height);
    let (wdiv, hdiv) = header.chroma_divisors();
    match header.components() {
        1 | 2 => vec![(w, h)],
        3 => vec![(w, h), (w / wdiv, h / hdiv), (w / wdiv, h / hdiv)],
        _ => vec![(w, h), (w / wdiv, h / hdiv), (w / wdiv, h / hdiv), (w, h)],
    }
}

fn round8(v: u32) -> usize {
    (v as usize).div_ceil(8) * 8
}

/// The payload read as big-endian words (a trailing odd byte is not read).
struct Words<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Words<'_> {
    fn next(&mut self) -> Option<u16> {
        let pair = self.bytes.get(self.at * 2..self.at * 2 + 2)?;
        self.at += 1;
        Some(u16::from_be_bytes([pair[0], pair[1]]))
    }

    fn remaining(&self) -> usize {
        self.bytes.len() / 2 - self.at.min(self.bytes.len() / 2)
    }
}

/// Decodes the frame of `header` from its `payload`; a P frame predicts
/// from `reference`, the picture decoded before it.
pub fn decode_frame(
    header: &FrameHeader,
    payload: &[u8],
    reference: Option<&Picture>,
) -> Result<Picture, DecodeError> {
    let intra = header.is_intra();
    let reference = if intra {
        None
    } else {
        let reference = reference.ok_or(DecodeError::NoReference)?;
        if (reference.width, reference.height) != (header.width, header.height) {
            return Err(DecodeError::ReferenceSize {
                width: header.width,
                height: header.height,
            });
        }
        Some(reference)
    };
    let mut words = Words {
        bytes: payload,
        at: 0,
    };
    let mut picture = Picture {
        width: header.width,
        height: header.height,
        chroma_divisors: header.chroma_divisors(),
        planes: Vec::new(),
    };
    for (index, (w, h)) in plane_sizes(header).into_iter().enumerate() {
        // The block grid covers the plane as vicodec divides it (chroma
        // rounded down); the plane holds the visible part rounded up too.
        let grid = (round8(w), round8(h));
        let (visible_w, visible_h) = picture.visible_extent(index);
        let (stride, rows) = (
            grid.0.max(round8(visible_w as u32)),
            grid.1.max(round8(visible_h as u32)),
        );
        let mut plane = Plane {
            data: vec![0; stride * rows],
            stride,
            rows,
        };
        let truncated = DecodeError::Truncated {
            plane: index,
            len: payload.len(),
        };
        if header.flags & UNCOMPRESSED[index] != 0 {
            copy_raw_plane(&mut words, &mut plane, grid).ok_or(truncated)?;
        } else {
            let reference = reference.and_then(|r| r.planes.get(index));
            decode_plane(&mut words, &mut plane, grid, reference).ok_or(truncated)?;
        }
        picture.planes.push(plane);
    }
    Ok(picture)
}

/// A plane stored as it is: `grid.1` rows of `grid.0` bytes.
fn copy_raw_plane(words: &mut Words, plane: &mut Plane, grid: (usize, usize)) -> Option<()> {
    let (width, rows) = grid;
    if words.remaining() * 2 < width * rows {
        return None;
    }
    for row in 0..rows {
        let start = words.at * 2;
        let source = words.bytes.get(start..start + width)?;
        plane
            .data
            .get_mut(row * plane.stride..row * plane.stride + width)?
            .copy_from_slice(source);
        words.at += width / 2;
    }
    Some(())
}

/// A block's coefficients or pixels, in raster order.
type Block = [i16; 64];

fn decode_plane(
    words: &mut Words,
    plane: &mut Plane,
    grid: (usize, usize),
    reference: Option<&Plane>,
) -> Option<()> {
    let mut repeats = 0;
    let mut residual: Block = [0; 64];
    let mut predicted = false;
    for by in 0..grid.1 / 8 {
        for bx in 0..grid.0 / 8 {
            if repeats > 0 {
                repeats -= 1;
            } else {
                let (stat, coefficients) = read_block(words)?;
                predicted = stat & PREDICTED != 0 && reference.is_some();
                repeats = (stat & REPEATS) >> 1;
                residual = inverse_transform(&scale(coefficients, predicted), predicted);
            }
            let mut pixels = residual;
            let origin = by * 8 * plane.stride + bx * 8;
            if predicted {
                if let Some(reference) = reference {
                    add_reference(&mut pixels, reference, origin);
                }
            }
            store(&pixels, plane, origin);
        }
    }
    Some(())
}

/// One block's header word and its coefficients in raster order; `None`
/// when the payload ends first.
fn read_block(words: &mut Words) -> Option<(u16, Block)> {
    let stat = words.next()?;
    let mut coded = [0i16; 64];
    let mut count = 0;
    while count < 64 {
        let word = words.next()? as i16;
        let zeros = (word & 0xf) as usize;
        if zeros == END_OF_BLOCK as usize {
            break;
        }
        // Zeros already in place; a run past the block's end is dropped.
        count += zeros;
        if let Some(slot) = coded.get_mut(count) {
            *slot = word >> 4;
        }
        count += 1;
    }
    let mut raster = [0i16; 64];
    for (value, &position) in coded.iter().zip(&ZIGZAG) {
        raster[position as usize] = *value;
    }
    Some((stat, raster))
}

fn scale(mut block: Block, predicted: bool) -> Block {
    for (i, value) in block.iter_mut().enumerate() {
        let shift = dequantisation_shift(i / 8, i % 8, predicted);
        *value = (i32::from(*value) << shift) as i16;
    }
    block
}

/// The three butterfly stages of an 8-point Walsh-Hadamard transform in
/// sequency order.
fn butterflies(x: [i32; 8]) -> [i32; 8] {
    stage(stage(stage(x, 1), 2), 4)
}

/// One butterfly stage: in each group of `2 * half` values, value `k` of
/// the first half paired with value `k` of the second, their sum and
/// difference written side by side (the difference first for odd `k`,
/// which keeps the outputs in sequency order).
fn stage(x: [i32; 8], half: usize) -> [i32; 8] {
    let mut out = [0; 8];
    for base in (0..8).step_by(2 * half) {
        for k in 0..half {
            let (p, q) = (x[base + k], x[base + k + half]);
            let (first, second) = if k % 2 == 0 {
                (p + q, p - q)
            } else {
                (p - q, p + q)
            };
            out[base + 2 * k] = first;
            out[base + 2 * k + 1] = second;
        }
    }
    out
}

/// Rows then columns, each pass stored in 16 bits as vicodec stores it;
/// the result scaled down by 64 and, for intra blocks, centred on 128.
fn inverse_transform(block: &Block, predicted: bool) -> Block {
    let mut rows = [0i16; 64];
    for r in 0..8 {
        let input = std::array::from_fn(|c| i32::from(block[r * 8 + c]));
        for (c, value) in butterflies(input).into_iter().enumerate() {
            rows[r * 8 + c] = value as i16;
        }
    }
    let mut out = [0i16; 64];
    for c in 0..8 {
        let input = std::array::from_fn(|r| i32::from(rows[r * 8 + c]));
        for (r, value) in butterflies(input).into_iter().enumerate() {
            let value = (value as i16) >> 6;
            out[r * 8 + c] = if predicted {
                value
            } else {
                value.wrapping_add(128)
            };
        }
    }
    out
}

fn add_reference(pixels: &mut Block, reference: &Plane, origin: usize) {
    for r in 0..8 {
        for c in 0..8 {
            let at = origin + r * reference.stride + c;
            let base = reference.data.get(at).copied().unwrap_or(0);
            let value = &mut pixels[r * 8 + c];
            *value = value.wrapping_add(i16::from(base)).clamp(0, 255);
        }
    }
}

fn store(pixels: &Block, plane: &mut Plane, origin: usize) {
    for r in 0..8 {
        let at = origin + r * plane.stride;
        let Some(row) = plane.data.get_mut(at..at + 8) else {
            return;
        };
        for (out, value) in row.iter_mut().zip(&pixels[r * 8..r * 8 + 8]) {
            *out = (*value).clamp(0, 255) as u8;
        }
    }
}

#[cfg(test)]
mod tests;
