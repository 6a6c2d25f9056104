//! scaling_list_data() (7.3.4, 7.4.5): explicit lists, prediction from
//! another list (scaling_list_pred_matrix_id_delta) or from the defaults
//! (Tables 7-5 and 7-6), and the DC coefficients of the 16x16 and 32x32
//! lists. Lists are kept in coded order (up-right diagonal scan of the
//! 4x4 or 8x8 coefficients).

/// sizeId 0 (4x4) default for every matrixId: flat 16 (Table 7-6).
pub const DEFAULT_4X4: [u8; 16] = [16; 16];

/// Table 7-6: the 8x8 default for matrixId 0..=2 (intra), coded order.
pub const DEFAULT_8X8_INTRA: [u8; 64] = [
    16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 17, 16, 17, 16, 17, 18, 17, 18, 18, 17, 18, 21, 19, 20,
    21, 20, 19, 21, 24, 22, 22, 24, 24, 22, 22, 24, 25, 25, 27, 30, 27, 25, 25, 29, 31, 35, 35, 31,
    29, 36, 41, 44, 41, 36, 47, 54, 54, 47, 65, 70, 65, 88, 88, 115,
];

/// Table 7-6: the 8x8 default for matrixId 3..=5 (inter), coded order.
pub const DEFAULT_8X8_INTER: [u8; 64] = [
    16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 17, 17, 17, 17, 17, 18, 18, 18, 18, 18, 18, 20, 20, 20,
    20, 20, 20, 20, 24, 24, 24, 24, 24, 24, 24, 24, 25, 25, 25, 25, 25, 25, 25, 28, 28, 28, 28, 28,
    28, 33, 33, 33, 33, 33, 41, 41, 41, 41, 54, 54, 54, 71, 71, 91,
];

/// The scaling factors of every size and matrixId (0..=2 intra Y, Cb, Cr;
/// 3..=5 inter Y, Cb, Cr), coded order. For 32x32 the chroma matrices
/// (1, 2, 4, 5), coded only for 4:4:4 range extensions, are taken from
/// the 16x16 ones (7.4.5, ChromaArrayType 3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScalingList {
    pub lists_4x4: [[u8; 16]; 6],
    pub lists_8x8: [[u8; 64]; 6],
    pub lists_16x16: [[u8; 64]; 6],
    pub lists_32x32: [[u8; 64]; 6],
    /// scaling_list_dc_coef_minus8 + 8 of sizeId 2 (16 for a default list).
    pub dc_coef_16x16: [u8; 6],
    /// scaling_list_dc_coef_minus8 + 8 of sizeId 3.
    pub dc_coef_32x32: [u8; 6],
    /// scaling_list_pred_mode_flag[sizeId][matrixId] as coded.
    pub pred_mode_flag: [[bool; 6]; 4],
    /// scaling_list_pred_matrix_id_delta[sizeId][matrixId] as coded (0:
    /// the default list; else the list that many matrices before, in
    /// steps of 3 for sizeId 3).
    pub pred_matrix_id_delta: [[u8; 6]; 4],
}

impl Default for ScalingList {
    /// The default lists (Table 7-6): what applies when
    /// scaling_list_enabled_flag is 1 and no list data is sent.
    fn default() -> Self {
        Self {
            lists_4x4: [DEFAULT_4X4; 6],
            lists_8x8: Self::default_lists(),
            lists_16x16: Self::default_lists(),
            lists_32x32: Self::default_lists(),
            dc_coef_16x16: [16; 6],
            dc_coef_32x32: [16; 6],
            pred_mode_flag: [[false; 6]; 4],
            pred_matrix_id_delta: [[0; 6]; 4],
        }
    }
}

impl ScalingList {
    fn default_lists() -> [[u8; 64]; 6] {
        [
            DEFAULT_8X8_INTRA,
            DEFAULT_8X8_INTRA,
            DEFAULT_8X8_INTRA,
            DEFAULT_8X8_INTER,
            DEFAULT_8X8_INTER,
            DEFAULT_8X8_INTER,
        ]
    }
}

use crate::codec::bitstream::BitReader;

use super::HevcError;

impl ScalingList {
    fn list_mut(&mut self, size_id: usize, matrix_id: usize) -> &mut [u8] {
        match size_id {
            0 => &mut self.lists_4x4[matrix_id],
            1 => &mut self.lists_8x8[matrix_id],
            2 => &mut self.lists_16x16[matrix_id],
            _ => &mut self.lists_32x32[matrix_id],
        }
    }

    fn dc_mut(&mut self, size_id: usize) -> Option<&mut [u8; 6]> {
        match size_id {
            2 => Some(&mut self.dc_coef_16x16),
            3 => Some(&mut self.dc_coef_32x32),
            _ => None,
        }
    }

    /// scaling_list_data() (7.3.4) with the semantics of 7.4.5.
    pub fn parse(r: &mut BitReader) -> Result<Self, HevcError> {
        let mut s = ScalingList::default();
        for size_id in 0..4 {
            let step = if size_id == 3 { 3 } else { 1 };
            for matrix_id in (0..6).step_by(step) {
                let coded = r.flag("scaling_list_pred_mode_flag")?;
                s.pred_mode_flag[size_id][matrix_id] = coded;
                if !coded {
                    let delta = r.ue_max(
                        "scaling_list_pred_matrix_id_delta",
                        (matrix_id / step) as u32,
                    )? as usize;
                    s.pred_matrix_id_delta[size_id][matrix_id] = delta as u8;
                    // Delta 0: the default list (already in place).
                    if delta > 0 {
                        let from = matrix_id - delta * step;
                        let list = s.list_mut(size_id, from).to_vec();
                        s.list_mut(size_id, matrix_id).copy_from_slice(&list);
                        if let Some(dc) = s.dc_mut(size_id) {
                            dc[matrix_id] = dc[from];
                        }
                    }
                    continue;
                }
                let mut next: i32 = 8;
                if size_id > 1 {
                    let dc = r.se_range("scaling_list_dc_coef_minus8", -7, 247)? + 8;
                    next = dc;
                    if let Some(dcs) = s.dc_mut(size_id) {
                        dcs[matrix_id] = dc as u8;
                    }
                }
                for coefficient in s.list_mut(size_id, matrix_id).iter_mut() {
                    let delta = r.se_range("scaling_list_delta_coeff", -128, 127)?;
                    next = (next + delta + 256) % 256;
                    if next == 0 {
                        return Err(HevcError::Invalid("a scaling list coefficient is 0"));
                    }
                    *coefficient = next as u8;
                }
            }
        }
        // 4:4:4: the chroma 32x32 factors come from the 16x16 lists (7.4.5).
        for m in [1, 2, 4, 5] {
            s.lists_32x32[m] = s.lists_16x16[m];
            s.dc_coef_32x32[m] = s.dc_coef_16x16[m];
        }
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::codec::bitstream::reader::BitWriter;

    #[test]
    fn prediction_defaults_and_dc() {
        let mut w = BitWriter::new();
        // 4x4: matrix 0 coded (all 20: first delta 12, then 0), 1 predicted
        // from 0, 2..5 default.
        w.bit(true);
        w.se(12);
        for _ in 1..16 {
            w.se(0);
        }
        w.bit(false);
        w.ue(1);
        for _ in 2..6 {
            w.bit(false);
            w.ue(0);
        }
        // 8x8: all default.
        for _ in 0..6 {
            w.bit(false);
            w.ue(0);
        }
        // 16x16: matrix 0 coded with DC 30, the coefficients starting from
        // it (30 + 1 = 31, then unchanged); matrix 3
        // from matrix 0 (delta 3); others default.
        w.bit(true);
        w.se(22);
        w.se(1);
        for _ in 1..64 {
            w.se(0);
        }
        for m in 1..6 {
            w.bit(false);
            w.ue(if m == 3 { 3 } else { 0 });
        }
        // 32x32: matrix 0 default, matrix 3 from 0 (delta 1).
        w.bit(false);
        w.ue(0);
        w.bit(false);
        w.ue(1);
        w.trailing();
        let s = ScalingList::parse(&mut BitReader::new(&w.bytes)).unwrap();
        assert_eq!(s.lists_4x4[0], [20; 16]);
        assert_eq!(s.lists_4x4[1], [20; 16]);
        assert_eq!(s.lists_4x4[2], [16; 16]);
        assert_eq!(s.lists_8x8[4], DEFAULT_8X8_INTER);
        assert_eq!(s.lists_16x16[0], [31; 64]);
        assert_eq!(s.dc_coef_16x16[0], 30);
        assert_eq!((s.lists_16x16[3], s.dc_coef_16x16[3]), ([31; 64], 30));
        assert_eq!(s.lists_16x16[1], DEFAULT_8X8_INTRA);
        assert_eq!(s.dc_coef_16x16[1], 16);
        assert_eq!(s.lists_32x32[0], DEFAULT_8X8_INTRA);
        assert_eq!(s.lists_32x32[3], DEFAULT_8X8_INTRA);
        assert_eq!(s.pred_matrix_id_delta[3][3], 1);
    }

    #[test]
    fn out_of_range_prediction_is_an_error() {
        let mut w = BitWriter::new();
        w.bit(false);
        w.ue(1); // matrix 0 cannot refer to an earlier one
        w.trailing();
        assert!(ScalingList::parse(&mut BitReader::new(&w.bytes)).is_err());
    }
}
