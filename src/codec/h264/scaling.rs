//! Scaling matrices (7.3.2.1.1.1, 7.4.2.1.1, 7.4.2.2): parsing, the default
//! tables, and the fall-back rules A (SPS) and B (PPS). Lists are kept in
//! the bitstream's zig-zag order; `to_raster_*` gives what V4L2 wants.

use crate::codec::bitstream::BitReader;

use super::H264Error;

/// Default_4x4_Intra / Default_4x4_Inter (Table 7-3), zig-zag order.
pub const DEFAULT_4X4_INTRA: [u8; 16] = [
    6, 13, 13, 20, 20, 20, 28, 28, 28, 28, 32, 32, 32, 37, 37, 42,
];
pub const DEFAULT_4X4_INTER: [u8; 16] = [
    10, 14, 14, 20, 20, 20, 24, 24, 24, 24, 27, 27, 27, 30, 30, 34,
];
/// Default_8x8_Intra / Default_8x8_Inter (Table 7-4), zig-zag order.
pub const DEFAULT_8X8_INTRA: [u8; 64] = [
    6, 10, 10, 13, 11, 13, 16, 16, 16, 16, 18, 18, 18, 18, 18, 23, 23, 23, 23, 23, 23, 25, 25, 25,
    25, 25, 25, 25, 27, 27, 27, 27, 27, 27, 27, 27, 29, 29, 29, 29, 29, 29, 29, 31, 31, 31, 31, 31,
    31, 33, 33, 33, 33, 33, 36, 36, 36, 36, 38, 38, 38, 40, 40, 42,
];
pub const DEFAULT_8X8_INTER: [u8; 64] = [
    9, 13, 13, 15, 13, 15, 17, 17, 17, 17, 19, 19, 19, 19, 19, 21, 21, 21, 21, 21, 21, 22, 22, 22,
    22, 22, 22, 22, 24, 24, 24, 24, 24, 24, 24, 24, 25, 25, 25, 25, 25, 25, 25, 27, 27, 27, 27, 27,
    27, 28, 28, 28, 28, 28, 30, 30, 30, 30, 32, 32, 32, 33, 33, 35,
];

/// Raster position of each zig-zag (frame scan) position, 4x4 (Table 8-12).
const ZIGZAG_4X4: [usize; 16] = [0, 1, 4, 8, 5, 2, 3, 6, 9, 12, 13, 10, 7, 11, 14, 15];
/// Raster position of each zig-zag (frame scan) position, 8x8 (Table 8-13).
const ZIGZAG_8X8: [usize; 64] = [
    0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34, 27, 20,
    13, 6, 7, 14, 21, 28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51, 58, 59,
    52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63,
];

/// The six 4x4 lists (Intra Y, Cb, Cr, Inter Y, Cb, Cr) and six 8x8 lists
/// (Intra Y, Inter Y, Intra Cb, Inter Cb, Intra Cr, Inter Cr).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScalingMatrix {
    pub list_4x4: [[u8; 16]; 6],
    pub list_8x8: [[u8; 64]; 6],
}

impl ScalingMatrix {
    /// Flat_4x4_16 / Flat_8x8_16: what applies when nothing is signalled.
    pub fn flat() -> Self {
        Self {
            list_4x4: [[16; 16]; 6],
            list_8x8: [[16; 64]; 6],
        }
    }

    pub fn to_raster_4x4(&self, i: usize) -> [u8; 16] {
        let mut out = [0; 16];
        for (scan, &raster) in ZIGZAG_4X4.iter().enumerate() {
            out[raster] = self.list_4x4[i][scan];
        }
        out
    }

    pub fn to_raster_8x8(&self, i: usize) -> [u8; 64] {
        let mut out = [0; 64];
        for (scan, &raster) in ZIGZAG_8X8.iter().enumerate() {
            out[raster] = self.list_8x8[i][scan];
        }
        out
    }
}

/// Where a list that is not sent comes from.
pub enum Fallback<'a> {
    /// Rule A (SPS): the defaults for the first list of each kind.
    RuleA,
    /// Rule B (PPS): the sequence-level lists for the first list of each kind.
    RuleB(&'a ScalingMatrix),
}

/// One list (7.3.2.1.1.1); `None` when the stream asks for the default.
fn scaling_list<const N: usize>(r: &mut BitReader) -> Result<Option<[u8; N]>, H264Error> {
    let mut list = [0u8; N];
    let mut last: i32 = 8;
    let mut next: i32 = 8;
    for (j, entry) in list.iter_mut().enumerate() {
        if next != 0 {
            let delta = r.se_range("delta_scale", -128, 127)?;
            next = (last + delta + 256) % 256;
            if j == 0 && next == 0 {
                return Ok(None);
            }
        }
        *entry = if next == 0 { last as u8 } else { next as u8 };
        last = i32::from(*entry);
    }
    Ok(Some(list))
}

/// Reads `count` scaling lists (6 4x4 then `count - 6` 8x8) after their
/// present flags, resolving absent ones with `fallback`.
pub fn parse_scaling_matrix(
    r: &mut BitReader,
    count: usize,
    flag_name: &'static str,
    fallback: Fallback,
) -> Result<ScalingMatrix, H264Error> {
    let mut m = ScalingMatrix::flat();
    for i in 0..12 {
        if i < count && r.flag(flag_name)? {
            let present = if i < 6 {
                scaling_list::<16>(r)?.map(|l| m.list_4x4[i] = l)
            } else {
                scaling_list::<64>(r)?.map(|l| m.list_8x8[i - 6] = l)
            };
            if present.is_none() {
                set_default(&mut m, i);
            }
        } else {
            set_fallback(&mut m, i, &fallback);
        }
    }
    Ok(m)
}

fn set_default(m: &mut ScalingMatrix, i: usize) {
    match i {
        0..=2 => m.list_4x4[i] = DEFAULT_4X4_INTRA,
        3..=5 => m.list_4x4[i] = DEFAULT_4X4_INTER,
        _ if i % 2 == 0 => m.list_8x8[i - 6] = DEFAULT_8X8_INTRA,
        _ => m.list_8x8[i - 6] = DEFAULT_8X8_INTER,
    }
}

/// Table 7-2: the first list of each kind falls back to a default (rule A)
/// or to the SPS list (rule B); the others copy the previous list of their
/// kind (for 8x8: the one two places before, same intra/inter).
fn set_fallback(m: &mut ScalingMatrix, i: usize, fallback: &Fallback) {
    match (i, fallback) {
        (0 | 3 | 6 | 7, Fallback::RuleA) => set_default(m, i),
        (0 | 3, Fallback::RuleB(sps)) => m.list_4x4[i] = sps.list_4x4[i],
        (6 | 7, Fallback::RuleB(sps)) => m.list_8x8[i - 6] = sps.list_8x8[i - 6],
        (1 | 2 | 4 | 5, _) => m.list_4x4[i] = m.list_4x4[i - 1],
        _ => m.list_8x8[i - 6] = m.list_8x8[i - 8],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::codec::bitstream::reader::BitWriter;

    #[test]
    fn rule_a_defaults_and_copies() {
        let mut w = BitWriter::new();
        // list 0 absent, list 1 present with delta -8 at j=0 (use default),
        // list 2 absent (copies 1), list 3 present: all 20, lists 4, 5 absent,
        // 8x8 list 0 absent, list 1 absent.
        w.bit(false);
        w.bit(true);
        w.se(-8);
        w.bit(false);
        w.bit(true);
        w.se(12);
        w.se(0);
        for _ in 0..14 {
            w.se(0);
        }
        w.bit(false);
        w.bit(false);
        w.bit(false);
        w.bit(false);
        let mut r = BitReader::new(&w.bytes);
        let m = parse_scaling_matrix(&mut r, 8, "seq_scaling_list_present_flag", Fallback::RuleA)
            .unwrap();
        assert_eq!(m.list_4x4[0], DEFAULT_4X4_INTRA);
        assert_eq!(m.list_4x4[1], DEFAULT_4X4_INTRA);
        assert_eq!(m.list_4x4[2], DEFAULT_4X4_INTRA);
        assert_eq!(m.list_4x4[3], [20; 16]);
        assert_eq!(m.list_4x4[5], [20; 16]);
        assert_eq!(m.list_8x8[0], DEFAULT_8X8_INTRA);
        assert_eq!(m.list_8x8[1], DEFAULT_8X8_INTER);
        assert_eq!(m.list_8x8[2], DEFAULT_8X8_INTRA);
        assert_eq!(m.list_8x8[5], DEFAULT_8X8_INTER);
    }

    #[test]
    fn rule_b_takes_the_sequence_lists() {
        let mut sps = ScalingMatrix::flat();
        sps.list_4x4[0] = [7; 16];
        sps.list_4x4[3] = [9; 16];
        sps.list_8x8[1] = [11; 64];
        let w = [0u8; 2]; // all 8 flags 0
        let mut r = BitReader::new(&w);
        let m = parse_scaling_matrix(
            &mut r,
            8,
            "pic_scaling_list_present_flag",
            Fallback::RuleB(&sps),
        )
        .unwrap();
        assert_eq!(m.list_4x4[2], [7; 16]);
        assert_eq!(m.list_4x4[5], [9; 16]);
        assert_eq!(m.list_8x8[0], [16; 64]);
        assert_eq!(m.list_8x8[1], [11; 64]);
        assert_eq!(m.list_8x8[3], [11; 64]);
    }

    #[test]
    fn a_zero_next_scale_repeats_the_last_value() {
        let mut w = BitWriter::new();
        w.bit(true);
        w.se(2); // 10
        w.se(-10); // next = 0: the rest repeat 10
        let mut r = BitReader::new(&w.bytes);
        let m = parse_scaling_matrix(&mut r, 1, "f", Fallback::RuleA).unwrap();
        assert_eq!(m.list_4x4[0], [10; 16]);
    }

    #[test]
    fn raster_order() {
        let mut m = ScalingMatrix::flat();
        m.list_4x4[0] = core::array::from_fn(|i| i as u8);
        let raster = m.to_raster_4x4(0);
        assert_eq!(raster[..5], [0, 1, 5, 6, 2]);
        m.list_8x8[0] = core::array::from_fn(|i| i as u8);
        let raster = m.to_raster_8x8(0);
        assert_eq!(raster[..4], [0, 1, 5, 6]);
        assert_eq!(raster[8..10], [2, 4]);
    }
}
