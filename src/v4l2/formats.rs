//! The table from V4L2 CAPTURE pixel formats to DRM fourcc + modifier and
//! plane layout. Pure data: `crate::negotiation` matches it against what
//! the compositor accepts, and the CPU path reads the frames it can
//! describe.

use crate::fourcc::{fourcc, mod_broadcom_sand128, MOD_ALLWINNER_TILED, MOD_LINEAR};
use crate::frame::PixelFormat;

/// How a format's DRM modifier is found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModifierRule {
    /// Always this modifier.
    Fixed(u64),
    /// SAND128: the column height is in the format's `bytesperline` (as the
    /// V4L2 `NC12`/`NC30` formats define it), so the modifier depends on it.
    Sand128FromBytesPerLine,
    /// No DRM modifier describes this layout: the buffers cannot be shared
    /// with the compositor as they are; they are detiled on the CPU
    /// (`super::detile`) and copied.
    NotShareable,
}

/// One V4L2 CAPTURE layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CaptureFormat {
    pub v4l2: u32,
    pub name: &'static str,
    /// The DRM fourcc of the same sample layout, if any.
    pub drm: Option<u32>,
    pub modifier: ModifierRule,
    /// Colour planes (Y, CbCr = 2; Y, Cb, Cr = 3).
    pub color_planes: usize,
    /// Memory planes in the V4L2 buffer (the `M` variants keep one per colour
    /// plane; the others keep every plane in one buffer).
    pub memory_planes: usize,
    pub bit_depth: u32,
    /// The layout as `crate::frame` describes it, when the CPU path can read
    /// it directly (linear, unpacked); tiled and packed layouts are read
    /// through `super::detile::detiled_format` instead.
    pub cpu: Option<PixelFormat>,
}

impl CaptureFormat {
    /// The DRM modifier for a buffer of this format with the given first
    /// plane `bytesperline`; `None` when the layout cannot be shared.
    pub fn drm_modifier(&self, bytes_per_line: u32) -> Option<u64> {
        match self.modifier {
            ModifierRule::Fixed(m) => Some(m),
            ModifierRule::Sand128FromBytesPerLine => {
                Some(mod_broadcom_sand128(bytes_per_line as u64))
            }
            ModifierRule::NotShareable => None,
        }
    }

    /// Whether the compositor can import these buffers as they are.
    pub fn shareable(&self) -> bool {
        self.drm.is_some() && self.modifier != ModifierRule::NotShareable
    }
}

const fn entry(
    v4l2: &[u8; 4],
    name: &'static str,
    drm: Option<&[u8; 4]>,
    modifier: ModifierRule,
    planes: (usize, usize),
    bit_depth: u32,
    cpu: Option<PixelFormat>,
) -> CaptureFormat {
    CaptureFormat {
        v4l2: fourcc(v4l2),
        name,
        drm: match drm {
            Some(code) => Some(fourcc(code)),
            None => None,
        },
        modifier,
        color_planes: planes.0,
        memory_planes: planes.1,
        bit_depth,
        cpu,
    }
}

use ModifierRule::{Fixed, NotShareable, Sand128FromBytesPerLine};

/// Every CAPTURE format reel knows, preferred first among equals.
pub const CAPTURE_FORMATS: &[CaptureFormat] = &[
    entry(
        b"NV12",
        "NV12",
        Some(b"NV12"),
        Fixed(MOD_LINEAR),
        (2, 1),
        8,
        Some(PixelFormat::Nv12),
    ),
    entry(
        b"NM12",
        "NV12M",
        Some(b"NV12"),
        Fixed(MOD_LINEAR),
        (2, 2),
        8,
        Some(PixelFormat::Nv12),
    ),
    entry(
        b"YU12",
        "YUV420",
        Some(b"YU12"),
        Fixed(MOD_LINEAR),
        (3, 1),
        8,
        Some(PixelFormat::Yuv420),
    ),
    entry(
        b"YM12",
        "YUV420M",
        Some(b"YU12"),
        Fixed(MOD_LINEAR),
        (3, 3),
        8,
        Some(PixelFormat::Yuv420),
    ),
    entry(
        b"P010",
        "P010",
        Some(b"P010"),
        Fixed(MOD_LINEAR),
        (2, 1),
        10,
        Some(PixelFormat::P010),
    ),
    // 10-bit samples packed 4 in 5 bytes: shareable, not CPU-readable as is.
    entry(
        b"NV15",
        "NV15",
        Some(b"NV15"),
        Fixed(MOD_LINEAR),
        (2, 1),
        10,
        None,
    ),
    entry(
        b"ST12",
        "NV12_32L32",
        Some(b"NV12"),
        Fixed(MOD_ALLWINNER_TILED),
        (2, 1),
        8,
        None,
    ),
    entry(
        b"NC12",
        "NV12_COL128 (SAND128)",
        Some(b"NV12"),
        Sand128FromBytesPerLine,
        (2, 1),
        8,
        None,
    ),
    entry(
        b"NC30",
        "NV12_10_COL128 (SAND128)",
        Some(b"P030"),
        Sand128FromBytesPerLine,
        (2, 1),
        10,
        None,
    ),
    // Tiled layouts with no DRM modifier upstream.
    entry(
        b"VT12",
        "NV12_4L4",
        Some(b"NV12"),
        NotShareable,
        (2, 1),
        8,
        None,
    ),
    entry(
        b"HM12",
        "NV12_16L16",
        Some(b"NV12"),
        NotShareable,
        (2, 1),
        8,
        None,
    ),
    entry(
        b"MM21",
        "MM21",
        Some(b"NV12"),
        NotShareable,
        (2, 2),
        8,
        None,
    ),
];

/// The table entry for V4L2 pixel format `v4l2`.
pub fn capture_format(v4l2: u32) -> Option<&'static CaptureFormat> {
    CAPTURE_FORMATS.iter().find(|f| f.v4l2 == v4l2)
}

/// Coded (OUTPUT) formats of stateless decoders, by fourcc.
pub mod coded {
    use crate::fourcc::fourcc;
    pub const H264_SLICE: u32 = fourcc(b"S264");
    pub const HEVC_SLICE: u32 = fourcc(b"S265");
    pub const VP8_FRAME: u32 = fourcc(b"VP8F");
    pub const VP9_FRAME: u32 = fourcc(b"VP9F");
    pub const AV1_FRAME: u32 = fourcc(b"AV1F");
    pub const MPEG2_SLICE: u32 = fourcc(b"MG2S");
    pub const FWHT_STATELESS: u32 = fourcc(b"SFWH");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fourcc::fourcc_text;

    #[test]
    fn fourccs_match_the_kernel_values() {
        // V4L2_PIX_FMT_H264_SLICE = 0x34363253 (NV12 and the text: crate::fourcc).
        assert_eq!(coded::H264_SLICE, 0x3436_3253);
    }

    #[test]
    fn drm_fourccs_agree_with_drm_fourcc_crate() {
        use drm_fourcc::DrmFourcc;
        for f in CAPTURE_FORMATS {
            let Some(drm) = f.drm else { continue };
            // NV15 and P030 postdate drm-fourcc 2.2; the others must round-trip.
            if let Ok(known) = DrmFourcc::try_from(drm) {
                assert_eq!(known as u32, drm, "{}", f.name);
            } else {
                assert!(
                    ["NV15", "P030"].contains(&fourcc_text(drm).as_str()),
                    "{}",
                    f.name
                );
            }
        }
        assert_eq!(fourcc(b"NV12"), DrmFourcc::Nv12 as u32);
        assert_eq!(fourcc(b"P010"), DrmFourcc::P010 as u32);
        assert_eq!(fourcc(b"YU12"), DrmFourcc::Yuv420 as u32);
    }

    #[test]
    fn modifiers_match_drm_definitions() {
        // The modifier constants are checked in crate::fourcc; here the
        // column height read from bytesperline.
        let sand = capture_format(fourcc(b"NC12")).unwrap();
        assert_eq!(sand.drm_modifier(96), Some(0x0700_0000_0000_6004));
    }

    #[test]
    fn tiled_layouts_without_modifier_are_not_shareable() {
        for name in ["VT12", "HM12", "MM21"] {
            let f = capture_format(fourcc(name.as_bytes().try_into().unwrap())).unwrap();
            assert!(!f.shareable(), "{name}");
            assert_eq!(f.drm_modifier(640), None);
            assert_eq!(f.cpu, None, "{name} cannot be read as linear");
        }
        for name in ["NV12", "NM12", "YU12", "P010", "NV15", "ST12", "NC12"] {
            let f = capture_format(fourcc(name.as_bytes().try_into().unwrap())).unwrap();
            assert!(f.shareable(), "{name}");
        }
    }

    #[test]
    fn plane_counts_agree_with_cpu_layouts() {
        for f in CAPTURE_FORMATS {
            assert!(
                f.memory_planes == 1 || f.memory_planes == f.color_planes,
                "{}",
                f.name
            );
            if let Some(cpu) = f.cpu {
                assert_eq!(cpu.plane_count(), f.color_planes, "{}", f.name);
                assert_eq!(cpu.bit_depth(), f.bit_depth, "{}", f.name);
            }
        }
        let unique: std::collections::HashSet<_> = CAPTURE_FORMATS.iter().map(|f| f.v4l2).collect();
        assert_eq!(unique.len(), CAPTURE_FORMATS.len());
        assert!(capture_format(fourcc(b"XXXX")).is_none());
    }
}
