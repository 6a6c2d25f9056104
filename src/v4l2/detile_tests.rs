//! Each layout is built here from a known linear picture, one sample at a
//! time, with the address formula of the kernel's description of the
//! layout; `detile` must give the linear picture back byte for byte.

use super::*;
use crate::fourcc::fourcc;
use crate::v4l2::formats::CAPTURE_FORMATS;

/// A linear 4:2:0 picture with interleaved chroma: `luma[y][x]`,
/// `chroma[y][i]` where i = 2 * x + (0 for Cb, 1 for Cr).
struct Linear {
    luma: Vec<Vec<u16>>,
    chroma: Vec<Vec<u16>>,
}

impl Linear {
    /// Samples that differ from their neighbours, so a misplaced byte shows.
    fn new(width: usize, height: usize, bits: u32) -> Self {
        let mask = (1u32 << bits) - 1;
        let sample = |a: usize, b: usize, salt: usize| {
            (((a * 7919 + b * 104_729 + a * b * 31 + salt) as u32 % 65_521) & mask) as u16
        };
        let luma = (0..height)
            .map(|y| (0..width).map(|x| sample(x, y, 1)).collect())
            .collect();
        let chroma = (0..height.div_ceil(2))
            .map(|y| {
                (0..2 * width.div_ceil(2))
                    .map(|i| sample(i, y, 5))
                    .collect()
            })
            .collect();
        Self { luma, chroma }
    }

    /// The top-left `w` x `h` as NV12 (8-bit) or P010 (10-bit in the high
    /// bits of little-endian words) planes with packed rows.
    fn expected(&self, w: usize, h: usize, ten_bit: bool) -> [Vec<u8>; 2] {
        let bytes = |v: u16| -> Vec<u8> {
            if ten_bit {
                (v << 6).to_le_bytes().to_vec()
            } else {
                vec![v as u8]
            }
        };
        let luma = self.luma[..h]
            .iter()
            .flat_map(|row| row[..w].iter().flat_map(|&v| bytes(v)))
            .collect();
        let chroma = self.chroma[..h.div_ceil(2)]
            .iter()
            .flat_map(|row| row[..2 * w.div_ceil(2)].iter().flat_map(|&v| bytes(v)))
            .collect();
        [luma, chroma]
    }
}

const FILL: u8 = 0xee;

/// pixfmt-yuv-planar.rst, "Tiled NV12": tiles of `tw` x `th` pixels stored
/// linearly, left to right then top to bottom; within a tile, rows of `tw`
/// bytes. Returns the single buffer (chroma after the luma tiles) or, for
/// `two_buffers`, the two.
fn tile(
    pic: &Linear,
    bpl: usize,
    (tw, luma_th, chroma_th): TileGeometry,
    two_buffers: bool,
) -> Vec<Vec<u8>> {
    let tiles_per_row = bpl / tw;
    let plane = |rows: &Vec<Vec<u16>>, th: usize| {
        let tile_rows = rows.len().div_ceil(th);
        let mut out = vec![FILL; tile_rows * tiles_per_row * tw * th];
        for (y, row) in rows.iter().enumerate() {
            for (x, &v) in row.iter().enumerate() {
                let tile_index = (y / th) * tiles_per_row + x / tw;
                out[tile_index * tw * th + (y % th) * tw + x % tw] = v as u8;
            }
        }
        out
    };
    let luma = plane(&pic.luma, luma_th);
    let chroma = plane(&pic.chroma, chroma_th);
    if two_buffers {
        vec![luma, chroma]
    } else {
        vec![[luma, chroma].concat()]
    }
}

/// SAND128 (NV12_COL128): column c holds bytes 128c..128c+127 of every row,
/// `column_height` rows of 128 bytes per column; the luma rows first, the
/// chroma rows from row `coded_height` of the column on. Rows are given as
/// the bytes of their packed samples.
fn sand(
    rows_luma: &[Vec<u8>],
    rows_chroma: &[Vec<u8>],
    coded_height: usize,
    column_height: usize,
) -> Vec<u8> {
    let row_bytes = rows_luma[0].len().max(rows_chroma[0].len());
    let columns = row_bytes.div_ceil(128);
    let mut out = vec![FILL; columns * column_height * 128];
    let mut put = |rows: &[Vec<u8>], first_row: usize| {
        for (y, row) in rows.iter().enumerate() {
            for (b, &v) in row.iter().enumerate() {
                out[(b / 128) * column_height * 128 + (first_row + y) * 128 + b % 128] = v;
            }
        }
    };
    put(rows_luma, 0);
    put(rows_chroma, coded_height);
    out
}

/// NV12_10_COL128's word packing: samples 3k, 3k+1, 3k+2 of a row in bits
/// 9:0, 19:10, 29:20 of little-endian word k (128-byte columns hold 32 words).
fn pack_three_in_four(row: &[u16]) -> Vec<u8> {
    let mut out = vec![0u8; row.len().div_ceil(3) * 4];
    for (i, &v) in row.iter().enumerate() {
        let word = i / 3;
        let mut w = u32::from_le_bytes(out[word * 4..word * 4 + 4].try_into().unwrap());
        w |= u32::from(v) << (10 * (i % 3));
        out[word * 4..word * 4 + 4].copy_from_slice(&w.to_le_bytes());
    }
    out
}

/// NV15: four 10-bit samples in five bytes, Y'00[7:0] in the first byte,
/// then Y'01[5:0] above Y'00[9:8], and so on: a 40-bit little-endian group.
fn pack_four_in_five(row: &[u16], bpl: usize) -> Vec<u8> {
    let mut out = vec![FILL; bpl];
    for (g, group) in row.chunks(4).enumerate() {
        let mut bits = 0u64;
        for (k, &v) in group.iter().enumerate() {
            bits |= u64::from(v) << (10 * k);
        }
        let len = (group.len() * 10).div_ceil(8);
        out[g * 5..g * 5 + len].copy_from_slice(&bits.to_le_bytes()[..len]);
    }
    out
}

fn run(
    v4l2: &[u8; 4],
    coded: (u32, u32),
    buffers: &[Vec<u8>],
    bpls: &[u32],
    visible: (u32, u32),
) -> Result<LinearPicture, DetileError> {
    let planes: Vec<(&[u8], u32)> = buffers
        .iter()
        .zip(bpls)
        .map(|(b, &bpl)| (b.as_slice(), bpl))
        .collect();
    let picture = TiledPicture {
        v4l2: fourcc(v4l2),
        coded_width: coded.0,
        coded_height: coded.1,
        planes: &planes,
    };
    detile(&picture, visible.0, visible.1)
}

fn assert_matches(out: &LinearPicture, pic: &Linear, visible: (u32, u32), ten_bit: bool) {
    let expected = pic.expected(visible.0 as usize, visible.1 as usize, ten_bit);
    assert_eq!((out.width, out.height), visible);
    for (p, want) in expected.iter().enumerate() {
        let (row_bytes, _) = out.format.plane_extent(p, out.width, out.height);
        assert_eq!(out.stride(p), row_bytes);
        assert!(out.plane(p) == want.as_slice(), "plane {p} differs");
    }
}

/// Detiles `buffer` (one buffer of `v4l2`'s layout, `bpl` bytes per line)
/// holding `pic` at its `coded` size, at each `visible` size: a `format`
/// picture equal to `pic`'s top-left corner.
fn assert_one_buffer_detiles(
    v4l2: &[u8; 4],
    (pic, coded): (&Linear, (usize, usize)),
    (buffer, bpl): (&[u8], usize),
    visibles: &[(u32, u32)],
    format: PixelFormat,
) {
    let buffers = [buffer.to_vec()];
    let coded = (coded.0 as u32, coded.1 as u32);
    for &visible in visibles {
        let out = run(v4l2, coded, &buffers, &[bpl as u32], visible).unwrap();
        assert_eq!(out.format, format);
        assert_matches(&out, pic, visible, format == PixelFormat::P010);
    }
}

/// Tile width, luma tile rows, chroma tile rows.
type TileGeometry = (usize, usize, usize);

/// (fourcc, tile geometry, chroma in a second buffer) of the tiled layouts.
const TILED: [(&[u8; 4], TileGeometry, bool); 4] = [
    (b"VT12", (4, 4, 4), false),
    (b"HM12", (16, 16, 16), false),
    (b"ST12", (32, 32, 32), false),
    (b"MM21", (16, 32, 16), true),
];

#[test]
fn tiled_layouts_detile_to_the_linear_picture() {
    for (code, geometry, two) in TILED {
        let (tw, th, _) = geometry;
        // Coded sizes aligned as the layouts require; the visible size is
        // odd and not a multiple of any tile; bytesperline has one spare
        // tile column.
        let coded = (5 * 32, 3 * 32);
        let pic = Linear::new(coded.0, coded.1, 8);
        let bpl = coded.0 + tw;
        assert_eq!(coded.1 % th, 0);
        let buffers = tile(&pic, bpl, geometry, two);
        let bpls = vec![bpl as u32; buffers.len()];
        let coded = (coded.0 as u32, coded.1 as u32);
        for visible in [coded, (157, 93), (1, 1), (33, 17)] {
            let out = run(code, coded, &buffers, &bpls, visible)
                .unwrap_or_else(|e| panic!("{code:?} {visible:?}: {e}"));
            assert_eq!(out.format, PixelFormat::Nv12);
            assert_matches(&out, &pic, visible, false);
        }
    }
}

#[test]
fn tiled_chroma_starts_after_whole_tile_rows() {
    // 4L4 with a coded height of 18 rows: the luma ends after 5 tile rows.
    let pic = Linear::new(8, 20, 8);
    let buffers = tile(&pic, 8, (4, 4, 4), false);
    let out = run(b"VT12", (8, 18), &buffers, &[8], (8, 18)).unwrap();
    assert_matches(&out, &pic, (8, 18), false);
}

#[test]
fn sand128_detiles_to_nv12() {
    // Three columns, the last partial; columns taller than the picture.
    let coded = (300usize, 70usize);
    let pic = Linear::new(coded.0, coded.1, 8);
    let to_bytes = |rows: &Vec<Vec<u16>>| -> Vec<Vec<u8>> {
        rows.iter()
            .map(|r| r.iter().map(|&v| v as u8).collect())
            .collect()
    };
    let column_height = coded.1 + coded.1 / 2 + 6;
    let buffer = sand(
        &to_bytes(&pic.luma),
        &to_bytes(&pic.chroma),
        coded.1,
        column_height,
    );
    assert_one_buffer_detiles(
        b"NC12",
        (&pic, coded),
        (&buffer, column_height),
        &[(300, 70), (257, 33), (129, 1)],
        PixelFormat::Nv12,
    );
}

#[test]
fn sand128_ten_bit_detiles_to_p010() {
    // 200 pixels: 96 per column, so three columns, the last partial.
    let coded = (200usize, 34usize);
    let pic = Linear::new(coded.0, coded.1, 10);
    let pack = |rows: &Vec<Vec<u16>>| -> Vec<Vec<u8>> {
        rows.iter().map(|r| pack_three_in_four(r)).collect()
    };
    let column_height = coded.1 + coded.1 / 2;
    let buffer = sand(&pack(&pic.luma), &pack(&pic.chroma), coded.1, column_height);
    assert_one_buffer_detiles(
        b"NC30",
        (&pic, coded),
        (&buffer, column_height),
        &[(200, 34), (97, 33), (3, 2)],
        PixelFormat::P010,
    );
}

#[test]
fn nv15_unpacks_to_p010_sample_for_sample() {
    // 22 pixels: 5 full groups and a partial one; padded rows.
    let coded = (22usize, 6usize);
    let pic = Linear::new(coded.0, coded.1, 10);
    let bpl = 32;
    let buffer: Vec<u8> = pic
        .luma
        .iter()
        .chain(&pic.chroma)
        .flat_map(|r| pack_four_in_five(r, bpl))
        .collect();
    assert_one_buffer_detiles(
        b"NV15",
        (&pic, coded),
        (&buffer, bpl),
        &[(22, 6), (21, 5), (1, 1)],
        PixelFormat::P010,
    );
    // The packing itself, byte by byte from the documentation's table:
    // Y0[7:0]; Y1[5:0]|Y0[9:8]; Y2[3:0]|Y1[9:6]; Y3[1:0]|Y2[9:4]; Y3[9:2].
    let (y0, y1, y2, y3) = (0x3ffu16, 0x0u16, 0x155u16, 0x2aau16);
    let by_table = [
        y0 as u8,
        ((y1 & 0x3f) << 2 | y0 >> 8) as u8,
        ((y2 & 0xf) << 4 | y1 >> 6) as u8,
        ((y3 & 0x3) << 6 | y2 >> 4) as u8,
        (y3 >> 2) as u8,
    ];
    assert_eq!(pack_four_in_five(&[y0, y1, y2, y3], 5), by_table);
    assert_eq!(by_table, [0xff, 0x03, 0x50, 0x95, 0xaa]);
}

#[test]
fn short_buffers_are_an_error() {
    // Every layout at a size where its last byte is read: one byte less
    // must fail, never panic or read past the buffer.
    for (code, geometry, two) in TILED {
        let pic = Linear::new(64, 64, 8);
        let mut buffers = tile(&pic, 64, geometry, two);
        let ok = run(code, (64, 64), &buffers, &[64, 64], (64, 64));
        assert!(ok.is_ok(), "{code:?}");
        let last = buffers.len() - 1;
        buffers[last].pop();
        assert_eq!(
            run(code, (64, 64), &buffers, &[64, 64], (64, 64)),
            Err(DetileError::ShortBuffer {
                plane: last,
                len: buffers[last].len()
            }),
            "{code:?}"
        );
    }
    let luma = vec![vec![0u8; 128]; 4];
    let chroma = vec![vec![0u8; 128]; 2];
    let mut buffer = sand(&luma, &chroma, 4, 6);
    assert!(run(
        b"NC12",
        (128, 4),
        std::slice::from_ref(&buffer),
        &[6],
        (128, 4)
    )
    .is_ok());
    buffer.pop();
    assert!(matches!(
        run(b"NC12", (128, 4), &[buffer], &[6], (128, 4)),
        Err(DetileError::ShortBuffer { plane: 0, .. })
    ));
    let nv15 = vec![0u8; 5 * 6 - 1];
    assert!(matches!(
        run(b"NV15", (4, 4), &[nv15], &[5], (4, 4)),
        Err(DetileError::ShortBuffer { plane: 0, .. })
    ));
    assert!(matches!(
        run(b"NC30", (96, 2), &[vec![0u8; 128 * 3 - 1]], &[3], (96, 2)),
        Err(DetileError::ShortBuffer { plane: 0, .. })
    ));
}

#[test]
fn bad_geometry_is_rejected() {
    let buffer = vec![0u8; 1 << 16];
    let one = std::slice::from_ref(&buffer);
    // bytesperline not a whole number of tiles, or narrower than the picture.
    assert_eq!(
        run(b"HM12", (64, 64), one, &[72], (64, 64)),
        Err(DetileError::BadBytesPerLine {
            plane: 0,
            bytes_per_line: 72
        })
    );
    assert!(run(b"ST12", (64, 64), one, &[32], (64, 64)).is_err());
    assert!(run(b"NV15", (64, 4), one, &[79], (64, 4)).is_err());
    // SAND column shorter than luma + chroma rows.
    assert!(run(b"NC12", (128, 64), one, &[95], (128, 64)).is_err());
    // Absurd sizes, zero sizes, a visible size beyond the buffer.
    for (coded, visible) in [
        ((100_000, 64), (64, 64)),
        ((64, 64), (0, 64)),
        ((64, 64), (65, 64)),
    ] {
        assert!(
            matches!(
                run(b"VT12", coded, one, &[64], visible),
                Err(DetileError::OutOfRange { .. })
            ),
            "{coded:?} {visible:?}"
        );
    }
    assert!(matches!(
        run(b"VT12", (64, 64), one, &[u32::MAX], (64, 64)),
        Err(DetileError::BadBytesPerLine { .. })
    ));
    assert_eq!(
        run(b"MM21", (64, 64), one, &[64], (64, 64)),
        Err(DetileError::MissingPlane { plane: 1 })
    );
    assert!(matches!(
        run(b"NV12", (64, 64), one, &[64], (64, 64)),
        Err(DetileError::Unsupported(_))
    ));
}

#[test]
fn every_table_format_without_a_cpu_view_has_a_detiled_one() {
    for f in CAPTURE_FORMATS {
        match f.cpu {
            Some(_) => assert_eq!(detiled_format(f.v4l2), None, "{}", f.name),
            None => {
                let want = if f.bit_depth > 8 {
                    PixelFormat::P010
                } else {
                    PixelFormat::Nv12
                };
                assert_eq!(detiled_format(f.v4l2), Some(want), "{}", f.name);
            }
        }
    }
}
