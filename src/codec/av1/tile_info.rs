//! tile_info() (5.9.15): how the frame's superblocks are split into tile
//! columns and rows, uniformly or with explicit sizes.

use crate::codec::bitstream::BitReader;

use super::params::increment;
use super::Av1Error;

pub const MAX_TILE_COLS: usize = 64;
pub const MAX_TILE_ROWS: usize = 64;
const MAX_TILE_WIDTH: u32 = 4096;
const MAX_TILE_AREA: u32 = 4096 * 2304;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TileInfo {
    pub uniform_tile_spacing_flag: bool,
    pub tile_cols_log2: u8,
    pub tile_rows_log2: u8,
    /// `TileCols`, `TileRows`.
    pub tile_cols: u32,
    pub tile_rows: u32,
    /// `MiColStarts` / `MiRowStarts`: `tile_cols + 1` / `tile_rows + 1`
    /// entries, the last being MiCols / MiRows.
    pub mi_col_starts: Vec<u32>,
    pub mi_row_starts: Vec<u32>,
    /// `width_in_sbs_minus_1` / `height_in_sbs_minus_1` of every tile
    /// (derived when uniform).
    pub width_in_sbs_minus_1: Vec<u32>,
    pub height_in_sbs_minus_1: Vec<u32>,
    pub context_update_tile_id: u32,
    /// `TileSizeBytes`.
    pub tile_size_bytes: u8,
}

/// tile_log2(): the smallest k with `blk_size << k >= target`.
fn tile_log2(blk_size: u32, target: u32) -> u32 {
    let mut k = 0;
    while (u64::from(blk_size) << k) < u64::from(target) {
        k += 1;
    }
    k
}

/// The starts of tiles `size_sb` superblocks wide over `total_sb`, in mode
/// info units, ending with `mi_total`.
fn uniform_starts(total_sb: u32, log2: u32, sb_shift: u32, mi_total: u32) -> Vec<u32> {
    let size_sb = (total_sb + (1 << log2) - 1) >> log2;
    let mut starts: Vec<u32> = (0..total_sb)
        .step_by(size_sb.max(1) as usize)
        .map(|sb| sb << sb_shift)
        .collect();
    starts.push(mi_total);
    starts
}

/// Uniform tile spacing along one axis: the `increment_tile_*_log2` bits
/// read (from the least number of tiles in `log2_range`), and the tiles'
/// starts in mode-info units over `(superblocks, mode-info units)`.
fn uniform_tiles(
    r: &mut BitReader,
    name: &'static str,
    log2_range: std::ops::RangeInclusive<u32>,
    (total_sb, mi_total): (u32, u32),
    sb_shift: u32,
) -> Result<(u32, Vec<u32>), Av1Error> {
    let log2 = increment(
        r,
        name,
        i64::from(*log2_range.start()),
        i64::from(*log2_range.end()),
    )? as u32;
    Ok((log2, uniform_starts(total_sb, log2, sb_shift, mi_total)))
}

fn sizes_minus_1(starts: &[u32], sb_shift: u32) -> Vec<u32> {
    starts
        .windows(2)
        .map(|w| ((w[1] - w[0] + (1 << sb_shift) - 1) >> sb_shift) - 1)
        .collect()
}

impl TileInfo {
    pub fn parse(
        r: &mut BitReader,
        mi_cols: u32,
        mi_rows: u32,
        use_128x128_superblock: bool,
    ) -> Result<Self, Av1Error> {
        let sb_shift = if use_128x128_superblock { 5 } else { 4 };
        let sb_cols = (mi_cols + (1 << sb_shift) - 1) >> sb_shift;
        let sb_rows = (mi_rows + (1 << sb_shift) - 1) >> sb_shift;
        let sb_size = sb_shift + 2;
        let max_tile_width_sb = MAX_TILE_WIDTH >> sb_size;
        let mut max_tile_area_sb = MAX_TILE_AREA >> (2 * sb_size);
        let min_log2_tile_cols = tile_log2(max_tile_width_sb, sb_cols);
        let max_log2_tile_cols = tile_log2(1, sb_cols.min(MAX_TILE_COLS as u32));
        let max_log2_tile_rows = tile_log2(1, sb_rows.min(MAX_TILE_ROWS as u32));
        let min_log2_tiles = min_log2_tile_cols.max(tile_log2(max_tile_area_sb, sb_rows * sb_cols));

        let mut t = Self {
            uniform_tile_spacing_flag: r.flag("uniform_tile_spacing_flag")?,
            ..Self::default()
        };
        if t.uniform_tile_spacing_flag {
            let cols_log2;
            (cols_log2, t.mi_col_starts) = uniform_tiles(
                r,
                "tile_cols_log2",
                min_log2_tile_cols..=max_log2_tile_cols,
                (sb_cols, mi_cols),
                sb_shift,
            )?;
            let rows_log2;
            (rows_log2, t.mi_row_starts) = uniform_tiles(
                r,
                "tile_rows_log2",
                min_log2_tiles.saturating_sub(cols_log2)..=max_log2_tile_rows,
                (sb_rows, mi_rows),
                sb_shift,
            )?;
            (t.tile_cols_log2, t.tile_rows_log2) = (cols_log2 as u8, rows_log2 as u8);
        } else {
            let mut widest_tile_sb = 0;
            let mut start_sb = 0;
            while start_sb < sb_cols {
                if t.mi_col_starts.len() == MAX_TILE_COLS {
                    return Err(Av1Error::Invalid("more than 64 tile columns"));
                }
                t.mi_col_starts.push(start_sb << sb_shift);
                let max_width = (sb_cols - start_sb).min(max_tile_width_sb);
                let size_sb = r.ns(max_width, "width_in_sbs_minus_1")? + 1;
                widest_tile_sb = widest_tile_sb.max(size_sb);
                start_sb += size_sb;
            }
            t.mi_col_starts.push(mi_cols);
            if min_log2_tiles > 0 {
                max_tile_area_sb = (sb_rows * sb_cols) >> (min_log2_tiles + 1);
            } else {
                max_tile_area_sb = sb_rows * sb_cols;
            }
            let max_tile_height_sb = (max_tile_area_sb / widest_tile_sb.max(1)).max(1);
            start_sb = 0;
            while start_sb < sb_rows {
                if t.mi_row_starts.len() == MAX_TILE_ROWS {
                    return Err(Av1Error::Invalid("more than 64 tile rows"));
                }
                t.mi_row_starts.push(start_sb << sb_shift);
                let max_height = (sb_rows - start_sb).min(max_tile_height_sb);
                start_sb += r.ns(max_height, "height_in_sbs_minus_1")? + 1;
            }
            t.mi_row_starts.push(mi_rows);
            t.tile_cols_log2 = tile_log2(1, t.mi_col_starts.len() as u32 - 1) as u8;
            t.tile_rows_log2 = tile_log2(1, t.mi_row_starts.len() as u32 - 1) as u8;
        }
        t.tile_cols = t.mi_col_starts.len() as u32 - 1;
        t.tile_rows = t.mi_row_starts.len() as u32 - 1;
        t.width_in_sbs_minus_1 = sizes_minus_1(&t.mi_col_starts, sb_shift);
        t.height_in_sbs_minus_1 = sizes_minus_1(&t.mi_row_starts, sb_shift);
        t.tile_size_bytes = 4;
        if t.tile_cols_log2 > 0 || t.tile_rows_log2 > 0 {
            let bits = u32::from(t.tile_cols_log2 + t.tile_rows_log2);
            t.context_update_tile_id = r.u(bits, "context_update_tile_id")?;
            if t.context_update_tile_id >= t.tile_cols * t.tile_rows {
                return Err(Av1Error::Invalid("context_update_tile_id beyond the tiles"));
            }
            t.tile_size_bytes = r.u(2, "tile_size_bytes_minus1")? as u8 + 1;
        }
        Ok(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_two_by_two_at_qvga() {
        // 320x240: 80x60 mode info units, 5x4 superblocks of 64. Bits:
        // uniform 1, cols +1 then stop (10), rows +1 then stop (10),
        // context_update_tile_id 3 (11), tile_size_bytes_minus1 1 (01).
        let data = [0b1101_0110, 0b1000_0000];
        let mut r = BitReader::new(&data);
        let t = TileInfo::parse(&mut r, 80, 60, false).unwrap();
        assert_eq!((t.tile_cols, t.tile_rows), (2, 2));
        assert_eq!(t.mi_col_starts, vec![0, 48, 80]);
        assert_eq!(t.mi_row_starts, vec![0, 32, 60]);
        assert_eq!(t.width_in_sbs_minus_1, vec![2, 1]);
        assert_eq!(t.context_update_tile_id, 3);
        assert_eq!(t.tile_size_bytes, 2);
        assert_eq!(r.position(), 9);
    }
}
