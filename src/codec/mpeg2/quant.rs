//! The quantiser matrices in force (6.3.7, 6.3.11): a sequence header
//! resets them (to the matrices it loads, or the defaults), a quant matrix
//! extension replaces those it loads for the rest of the sequence. Loading
//! a luma matrix loads the chroma one too (6.3.11: the chroma matrices
//! follow unless loaded themselves). Kept in zigzag scan order, as the
//! stream and the V4L2 control carry them.

use super::headers::{Matrix, QuantMatrixExtension, SequenceHeader};

/// Raster index of each coefficient in zigzag scan order (Figure 7-2,
/// alternate_scan 0).
pub const ZIGZAG: [u8; 64] = [
    0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34, 27, 20,
    13, 6, 7, 14, 21, 28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51, 58, 59,
    52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63,
];

/// The default intra matrix in raster order (6.3.11).
const DEFAULT_INTRA_RASTER: Matrix = [
    8, 16, 19, 22, 26, 27, 29, 34, //
    16, 16, 22, 24, 27, 29, 34, 37, //
    19, 22, 26, 27, 29, 34, 34, 38, //
    22, 22, 26, 27, 29, 34, 37, 40, //
    22, 26, 27, 29, 32, 35, 40, 48, //
    26, 27, 29, 32, 35, 40, 48, 58, //
    26, 27, 29, 34, 38, 46, 56, 69, //
    27, 29, 35, 38, 46, 56, 69, 83,
];

/// A raster-order matrix in zigzag order.
pub fn zigzag(raster: &Matrix) -> Matrix {
    std::array::from_fn(|i| raster[usize::from(ZIGZAG[i])])
}

/// The four matrices of a picture, in zigzag order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuantMatrices {
    pub intra: Matrix,
    pub non_intra: Matrix,
    pub chroma_intra: Matrix,
    pub chroma_non_intra: Matrix,
}

impl Default for QuantMatrices {
    fn default() -> Self {
        let intra = zigzag(&DEFAULT_INTRA_RASTER);
        let non_intra = [16; 64];
        Self {
            intra,
            non_intra,
            chroma_intra: intra,
            chroma_non_intra: non_intra,
        }
    }
}

impl QuantMatrices {
    /// The matrices a sequence header leaves in force.
    pub fn from_sequence_header(header: &SequenceHeader) -> Self {
        let mut m = Self::default();
        m.load(
            header.intra_quantiser_matrix.as_ref(),
            header.non_intra_quantiser_matrix.as_ref(),
        );
        m
    }

    fn load(&mut self, intra: Option<&Matrix>, non_intra: Option<&Matrix>) {
        if let Some(intra) = intra {
            self.intra = *intra;
            self.chroma_intra = *intra;
        }
        if let Some(non_intra) = non_intra {
            self.non_intra = *non_intra;
            self.chroma_non_intra = *non_intra;
        }
    }

    /// A quant matrix extension's matrices replace those in force.
    pub fn apply(&mut self, ext: &QuantMatrixExtension) {
        self.load(
            ext.intra_quantiser_matrix.as_ref(),
            ext.non_intra_quantiser_matrix.as_ref(),
        );
        if let Some(m) = ext.chroma_intra_quantiser_matrix {
            self.chroma_intra = m;
        }
        if let Some(m) = ext.chroma_non_intra_quantiser_matrix {
            self.chroma_non_intra = m;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_intra_matrix_in_stream_order() {
        // What FFmpeg's trace_headers reads from a sequence header loading
        // the default intra matrix.
        let expected = [
            8, 16, 16, 19, 16, 19, 22, 22, 22, 22, 22, 22, 26, 24, 26, 27, 27, 27, 26, 26, 26, 26,
            27, 27, 27, 29, 29, 29, 34, 34, 34, 29, 29, 29, 27, 27, 29, 29, 32, 32, 34, 34, 37, 38,
            37, 35, 35, 34, 35, 38, 38, 40, 40, 40, 48, 48, 46, 46, 56, 56, 58, 69, 69, 83,
        ];
        assert_eq!(QuantMatrices::default().intra, expected);
        let mut seen = [false; 64];
        for &i in &ZIGZAG {
            assert!(!std::mem::replace(&mut seen[usize::from(i)], true));
        }
    }

    #[test]
    fn loaded_inherited_and_reset() {
        let custom = [7u8; 64];
        let chroma = [9u8; 64];
        let header = |intra: Option<Matrix>| SequenceHeader {
            horizontal_size_value: 320,
            vertical_size_value: 240,
            aspect_ratio_information: 1,
            frame_rate_code: 3,
            bit_rate_value: 1,
            vbv_buffer_size_value: 1,
            constrained_parameters_flag: false,
            intra_quantiser_matrix: intra,
            non_intra_quantiser_matrix: None,
        };
        let mut m = QuantMatrices::from_sequence_header(&header(Some(custom)));
        assert_eq!((m.intra, m.chroma_intra), (custom, custom));
        assert_eq!(m.non_intra, [16; 64]);
        // An extension loading the non-intra and chroma intra matrices only.
        m.apply(&QuantMatrixExtension {
            non_intra_quantiser_matrix: Some(custom),
            chroma_intra_quantiser_matrix: Some(chroma),
            ..Default::default()
        });
        assert_eq!(
            (m.intra, m.non_intra, m.chroma_intra, m.chroma_non_intra),
            (custom, custom, chroma, custom)
        );
        // The next sequence header without matrices brings the defaults back.
        assert_eq!(
            QuantMatrices::from_sequence_header(&header(None)),
            QuantMatrices::default()
        );
    }
}
