//! Format codes and DRM modifiers: how they are built and how they read in
//! logs, errors and reports. V4L2 and DRM build a fourcc the same way (four
//! ASCII bytes, little-endian), so one set of functions serves both sides.

use drm_fourcc::DrmModifier;

/// A fourcc as V4L2 and DRM both build it (little-endian ASCII).
pub const fn fourcc(code: &[u8; 4]) -> u32 {
    (code[0] as u32) | (code[1] as u32) << 8 | (code[2] as u32) << 16 | (code[3] as u32) << 24
}

/// Whether a fourcc byte prints as itself (a space does: `R8  `).
fn printable(byte: u8) -> bool {
    byte.is_ascii_graphic() || byte == b' '
}

/// The fourcc as text, e.g. `NV12`: always four characters, `?` for a byte
/// that does not print. For logs and error messages.
pub fn fourcc_text(code: u32) -> String {
    code.to_le_bytes()
        .iter()
        .map(|&b| if printable(b) { b as char } else { '?' })
        .collect()
}

/// The fourcc as text where two codes must never read the same (a listing
/// keyed by it): the four characters with trailing spaces trimmed, or the
/// code in hex when a byte does not print (`fourcc_text` would turn
/// different unprintable codes into the same `????`).
pub fn fourcc_text_distinct(code: u32) -> String {
    if code.to_le_bytes().iter().all(|&b| printable(b)) {
        fourcc_text(code).trim_end().to_owned()
    } else {
        format!("{code:#010x}")
    }
}

/// `DRM_FORMAT_MOD_LINEAR`.
pub const MOD_LINEAR: u64 = 0;
/// `DRM_FORMAT_MOD_INVALID`: the implicit modifier (layout agreed out of band).
pub const MOD_INVALID: u64 = 0x00ff_ffff_ffff_ffff;

/// The modifier to import a buffer of `fourcc:modifier` with, given what
/// the compositor lists (`listed(fourcc, modifier)`): the buffer's own when
/// listed; the implicit modifier for a LINEAR buffer of a fourcc listed only
/// implicitly. A V4L2 buffer was never allocated with an explicit modifier
/// (V4L2 has none), so importing a linear one as implicit keeps the chain
/// "fully implicit" as the buffer-exchange guide requires; LINEAR, the
/// baseline every importer reads as such, is what it is. Tiled layouts are
/// never imported implicitly: their layout would be left to the importer's
/// guess.
pub fn import_modifier(
    listed: impl Fn(u32, u64) -> bool,
    fourcc: u32,
    modifier: u64,
) -> Option<u64> {
    if listed(fourcc, modifier) {
        Some(modifier)
    } else if modifier == MOD_LINEAR && listed(fourcc, MOD_INVALID) {
        Some(MOD_INVALID)
    } else {
        None
    }
}

const VENDOR_BROADCOM: u64 = 0x07;
const VENDOR_ALLWINNER: u64 = 0x09;
/// `DRM_FORMAT_MOD_ALLWINNER_TILED` (32x32 tiles, the layout of V4L2 `ST12`).
pub const MOD_ALLWINNER_TILED: u64 = (VENDOR_ALLWINNER << 56) | 1;

/// `DRM_FORMAT_MOD_BROADCOM_SAND128_COL_HEIGHT(column_height)`: 128-byte
/// wide columns, each `column_height` rows tall.
pub const fn mod_broadcom_sand128(column_height: u64) -> u64 {
    (VENDOR_BROADCOM << 56) | ((column_height & 0xffff_ffff_ffff) << 8) | 4
}

/// A modifier's name for logs and reports.
pub fn modifier_name(modifier: u64) -> String {
    match modifier {
        MOD_LINEAR => "LINEAR".to_owned(),
        MOD_INVALID => "INVALID (implicit)".to_owned(),
        other => format!("{:?}", DrmModifier::from(other)),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn linear_buffers_import_implicitly_only_where_linear_is_not_listed() {
        let nv12 = fourcc(b"NV12");
        let listed = |pairs: &'static [(u32, u64)]| move |f, m| pairs.contains(&(f, m));
        const IMPLICIT_ONLY: &[(u32, u64)] = &[(fourcc(b"NV12"), MOD_INVALID)];
        const BOTH: &[(u32, u64)] = &[
            (fourcc(b"NV12"), MOD_INVALID),
            (fourcc(b"NV12"), MOD_LINEAR),
        ];
        const TILED: &[(u32, u64)] = &[(fourcc(b"NV12"), MOD_ALLWINNER_TILED)];
        assert_eq!(
            import_modifier(listed(IMPLICIT_ONLY), nv12, MOD_LINEAR),
            Some(MOD_INVALID)
        );
        assert_eq!(
            import_modifier(listed(BOTH), nv12, MOD_LINEAR),
            Some(MOD_LINEAR)
        );
        assert_eq!(
            import_modifier(listed(IMPLICIT_ONLY), nv12, MOD_ALLWINNER_TILED),
            None,
            "a tiled layout is never left to the importer's guess"
        );
        assert_eq!(
            import_modifier(listed(TILED), nv12, MOD_ALLWINNER_TILED),
            Some(MOD_ALLWINNER_TILED)
        );
        assert_eq!(import_modifier(listed(TILED), nv12, MOD_LINEAR), None);
    }

    use super::*;

    #[test]
    fn fourccs_match_the_kernel_values() {
        // V4L2_PIX_FMT_NV12 = 0x3231564e.
        assert_eq!(fourcc(b"NV12"), 0x3231_564e);
        assert_eq!(fourcc_text(0x3231_564e), "NV12");
        assert_eq!(fourcc_text(0x0000_0001), "????");
    }

    #[test]
    fn distinct_text_never_merges_two_codes() {
        assert_eq!(fourcc_text_distinct(fourcc(b"NV15")), "NV15");
        assert_eq!(fourcc_text(fourcc(b"R8  ")), "R8  ");
        assert_eq!(fourcc_text_distinct(fourcc(b"R8  ")), "R8");
        assert_eq!(fourcc_text_distinct(1), "0x00000001");
        assert_ne!(fourcc_text_distinct(1), fourcc_text_distinct(2));
    }

    #[test]
    fn modifiers_match_drm_definitions() {
        // drm_fourcc.h: DRM_FORMAT_MOD_ALLWINNER_TILED = fourcc_mod_code(ALLWINNER, 1).
        assert_eq!(MOD_ALLWINNER_TILED, 0x0900_0000_0000_0001);
        assert_eq!(u64::from(DrmModifier::Allwinner_tiled), MOD_ALLWINNER_TILED);
        // DRM_FORMAT_MOD_BROADCOM_SAND128 has column height 0.
        assert_eq!(
            u64::from(DrmModifier::Broadcom_sand128),
            mod_broadcom_sand128(0)
        );
        assert_eq!(u64::from(DrmModifier::Linear), MOD_LINEAR);
        assert_eq!(u64::from(DrmModifier::Invalid), MOD_INVALID);
    }

    #[test]
    fn modifier_names() {
        assert_eq!(modifier_name(MOD_LINEAR), "LINEAR");
        assert_eq!(modifier_name(MOD_INVALID), "INVALID (implicit)");
        assert_eq!(modifier_name(MOD_ALLWINNER_TILED), "Allwinner_tiled");
    }
}
