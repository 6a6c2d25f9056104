//! tile_group_obu() (5.11.1): which tiles a tile group carries and where
//! each tile's data lies in the OBU (tile_size_minus_1 before every tile
//! but the group's last).

use crate::codec::bitstream::BitReader;

use super::tile_info::TileInfo;
use super::Av1Error;

/// One tile's data: a byte range of the OBU, and its place in the frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TileEntry {
    /// Bytes from the start of the OBU (its header included).
    pub offset: usize,
    pub size: usize,
    pub row: u32,
    pub col: u32,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TileGroup {
    pub tile_start_and_end_present_flag: bool,
    pub tg_start: u32,
    pub tg_end: u32,
    pub tiles: Vec<TileEntry>,
}

impl TileGroup {
    /// Reads the tile group header at the reader's position in `obu` (the
    /// whole OBU the reader reads, whose payload ends at `obu.len()`),
    /// then walks the tile sizes.
    pub fn parse(r: &mut BitReader, obu: &[u8], info: &TileInfo) -> Result<Self, Av1Error> {
        let num_tiles = info.tile_cols * info.tile_rows;
        let mut g = Self {
            tg_end: num_tiles.saturating_sub(1),
            ..Self::default()
        };
        if num_tiles > 1 {
            g.tile_start_and_end_present_flag = r.flag("tile_start_and_end_present_flag")?;
        }
        if g.tile_start_and_end_present_flag {
            let bits = u32::from(info.tile_cols_log2 + info.tile_rows_log2);
            g.tg_start = r.u(bits, "tg_start")?;
            g.tg_end = r.u(bits, "tg_end")?;
            if g.tg_end < g.tg_start || g.tg_end >= num_tiles {
                return Err(Av1Error::Invalid(
                    "tile group's tiles out of order or range",
                ));
            }
        }
        byte_alignment(r)?;
        let mut offset = r.position() / 8;
        let size_bytes = usize::from(info.tile_size_bytes);
        for tile in g.tg_start..=g.tg_end {
            let size = if tile == g.tg_end {
                obu.len()
                    .checked_sub(offset)
                    .filter(|&s| s > 0)
                    .ok_or(Av1Error::Invalid("tile group ends before its last tile"))?
            } else {
                let field = obu
                    .get(offset..offset + size_bytes)
                    .ok_or(Av1Error::Invalid("tile size runs past the OBU"))?;
                let minus_1 = field
                    .iter()
                    .rev()
                    .fold(0usize, |acc, &b| (acc << 8) | usize::from(b));
                offset += size_bytes;
                minus_1 + 1
            };
            if offset + size > obu.len() {
                return Err(Av1Error::Invalid("tile runs past the OBU"));
            }
            g.tiles.push(TileEntry {
                offset,
                size,
                row: tile / info.tile_cols,
                col: tile % info.tile_cols,
            });
            offset += size;
        }
        Ok(g)
    }

    /// Whether this group carries the frame's last tile.
    pub fn ends_frame(&self, info: &TileInfo) -> bool {
        self.tg_end + 1 == info.tile_cols * info.tile_rows
    }
}

/// byte_alignment(): zero bits up to the next byte, traced as `zero_bit`.
pub fn byte_alignment(r: &mut BitReader) -> Result<(), Av1Error> {
    while !r.is_byte_aligned() {
        r.u(1, "zero_bit")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_by_two() -> TileInfo {
        TileInfo {
            tile_cols: 2,
            tile_rows: 2,
            tile_cols_log2: 1,
            tile_rows_log2: 1,
            tile_size_bytes: 2,
            ..TileInfo::default()
        }
    }

    #[test]
    fn walks_tile_sizes_to_the_end_of_the_obu() {
        // Flag 0, aligned; tiles of 3, 1 and 2 bytes with 2-byte
        // little-endian sizes, then the last tile's 4 bytes.
        let obu = [0x00, 2, 0, 1, 1, 1, 0, 0, 2, 1, 0, 2, 2, 9, 9, 9, 9];
        let mut r = BitReader::new(&obu);
        let g = TileGroup::parse(&mut r, &obu, &two_by_two()).unwrap();
        let spans: Vec<_> = g
            .tiles
            .iter()
            .map(|t| (t.offset, t.size, t.row, t.col))
            .collect();
        assert_eq!(
            spans,
            vec![(3, 3, 0, 0), (8, 1, 0, 1), (11, 2, 1, 0), (13, 4, 1, 1)]
        );
        assert!(g.ends_frame(&two_by_two()));
    }

    #[test]
    fn sizes_past_the_obu_are_errors() {
        let obu = [0x00, 0xff, 0x00, 1, 2];
        let mut r = BitReader::new(&obu);
        assert!(TileGroup::parse(&mut r, &obu, &two_by_two()).is_err());
        let mut r = BitReader::new(&[0x00]);
        assert!(TileGroup::parse(&mut r, &[0x00], &two_by_two()).is_err());
    }
}
