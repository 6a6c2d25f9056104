//! What H.264 and HEVC VUI share: the sample aspect ratios of
//! `aspect_ratio_idc` (H.264 Table E-1, H.265 Table E.1: the same table).

/// `aspect_ratio_idc` of an explicit `sar_width`:`sar_height`.
pub const EXTENDED_SAR: u32 = 255;

const SAR: [(u32, u32); 17] = [
    (0, 0),
    (1, 1),
    (12, 11),
    (10, 11),
    (16, 11),
    (40, 33),
    (24, 11),
    (20, 11),
    (32, 11),
    (80, 33),
    (18, 11),
    (15, 11),
    (64, 33),
    (160, 99),
    (4, 3),
    (3, 2),
    (2, 1),
];

/// The sample aspect ratio (width, height) that `aspect_ratio_idc` names
/// (the explicit one for [`EXTENDED_SAR`]); None when unspecified.
pub fn sample_aspect_ratio(
    aspect_ratio_idc: u32,
    sar_width: u32,
    sar_height: u32,
) -> Option<(u32, u32)> {
    let (w, h) = if aspect_ratio_idc == EXTENDED_SAR {
        (sar_width, sar_height)
    } else {
        SAR.get(aspect_ratio_idc as usize)
            .copied()
            .unwrap_or((0, 0))
    };
    (w != 0 && h != 0).then_some((w, h))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_and_extended_ratios() {
        assert_eq!(sample_aspect_ratio(1, 0, 0), Some((1, 1)));
        assert_eq!(sample_aspect_ratio(13, 0, 0), Some((160, 99)));
        assert_eq!(sample_aspect_ratio(0, 0, 0), None);
        assert_eq!(sample_aspect_ratio(17, 0, 0), None, "reserved");
        assert_eq!(sample_aspect_ratio(255, 4, 3), Some((4, 3)));
        assert_eq!(sample_aspect_ratio(255, 0, 3), None);
    }
}
