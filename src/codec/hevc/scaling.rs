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
