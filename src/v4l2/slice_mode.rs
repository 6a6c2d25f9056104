//! The decode-mode and start-code menus H.264 and HEVC stateless decoders
//! share (`V4L2_CID_STATELESS_{H264,HEVC}_{DECODE_MODE,START_CODE}`, same
//! values): slice- or frame-based requests, with or without Annex-B start
//! codes. reel follows the driver's defaults (what GStreamer does, so that
//! traces compare) unless an environment variable forces a value the
//! driver offers.

use v4l2r::bindings as b;

use super::controls::ExtControl;
use super::discovery::DecoderInfo;

/// The menus of one codec, and the environment variables that force them.
#[derive(Clone, Copy, Debug)]
pub struct ModeMenus {
    /// e.g. `V4L2_CID_STATELESS_H264_DECODE_MODE`.
    pub decode_mode: u32,
    pub start_code: u32,
    /// Forces the decode mode: `frame` or `slice`.
    pub mode_env: &'static str,
    /// Forces the start code: `annexb` or `none`.
    pub start_code_env: &'static str,
}

/// `V4L2_STATELESS_{H264,HEVC}_DECODE_MODE_*` (the same values for both).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeMode {
    /// One request per slice (slice parameters in each).
    SliceBased,
    /// One request per picture; the driver parses the slices.
    FrameBased,
}

impl DecodeMode {
    fn menu_value(self) -> u32 {
        match self {
            Self::SliceBased => {
                b::v4l2_stateless_h264_decode_mode_V4L2_STATELESS_H264_DECODE_MODE_SLICE_BASED
            }
            Self::FrameBased => {
                b::v4l2_stateless_h264_decode_mode_V4L2_STATELESS_H264_DECODE_MODE_FRAME_BASED
            }
        }
    }

    fn from_menu(value: u32) -> Option<Self> {
        [Self::SliceBased, Self::FrameBased]
            .into_iter()
            .find(|m| m.menu_value() == value)
    }
}

fn start_code_value(annex_b: bool) -> u32 {
    if annex_b {
        b::v4l2_stateless_h264_start_code_V4L2_STATELESS_H264_START_CODE_ANNEX_B
    } else {
        b::v4l2_stateless_h264_start_code_V4L2_STATELESS_H264_START_CODE_NONE
    }
}

/// How bitstream and requests are laid out for one driver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SliceMode {
    pub decode_mode: DecodeMode,
    /// Annex-B start codes before each slice (else none).
    pub start_codes: bool,
}

impl SliceMode {
    /// The driver's default of each menu, unless `forced` names a value the
    /// driver offers.
    pub fn choose(
        info: &DecoderInfo,
        menus: &ModeMenus,
        forced_mode: Option<DecodeMode>,
        forced_annex_b: Option<bool>,
    ) -> Result<Self, String> {
        let decode_mode = match (info.menu(menus.decode_mode), forced_mode) {
            (Some(menu), Some(mode)) if menu.offers(mode.menu_value()) => mode,
            (Some(_), Some(mode)) => {
                return Err(format!(
                    "{}: decode mode {mode:?} is not offered",
                    info.video_node.display()
                ))
            }
            (Some(menu), None) => DecodeMode::from_menu(menu.default as u32).ok_or_else(|| {
                format!("{}: unknown default decode mode", info.video_node.display())
            })?,
            // Drivers without the menu decode slice by slice (the control's default).
            (None, mode) => mode.unwrap_or(DecodeMode::SliceBased),
        };
        let start_codes = match (info.menu(menus.start_code), forced_annex_b) {
            (Some(menu), Some(annex_b)) if menu.offers(start_code_value(annex_b)) => annex_b,
            (Some(_), Some(annex_b)) => {
                return Err(format!(
                    "{}: start code {} is not offered",
                    info.video_node.display(),
                    if annex_b { "Annex B" } else { "none" }
                ))
            }
            (Some(menu), None) => menu.default as u32 == start_code_value(true),
            (None, annex_b) => annex_b.unwrap_or(false),
        };
        Ok(Self {
            decode_mode,
            start_codes,
        })
    }

    /// `choose` with the overrides of the menus' environment variables.
    pub fn from_env(info: &DecoderInfo, menus: &ModeMenus) -> Result<Self, String> {
        let mode = match std::env::var(menus.mode_env).ok().as_deref() {
            None | Some("") => None,
            Some("frame") => Some(DecodeMode::FrameBased),
            Some("slice") => Some(DecodeMode::SliceBased),
            Some(other) => {
                return Err(format!(
                    "{}={other}: expected frame or slice",
                    menus.mode_env
                ))
            }
        };
        let start = match std::env::var(menus.start_code_env).ok().as_deref() {
            None | Some("") => None,
            Some("annexb") => Some(true),
            Some("none") => Some(false),
            Some(other) => {
                return Err(format!(
                    "{}={other}: expected annexb or none",
                    menus.start_code_env
                ))
            }
        };
        Self::choose(info, menus, mode, start)
    }

    /// The menu controls that select this mode.
    pub fn controls(&self, menus: &ModeMenus) -> Vec<ExtControl> {
        vec![
            ExtControl::value(menus.decode_mode, self.decode_mode.menu_value() as i32),
            ExtControl::value(menus.start_code, start_code_value(self.start_codes) as i32),
        ]
    }
}

impl std::fmt::Display for SliceMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:?}, Annex-B start codes: {}",
            self.decode_mode, self.start_codes
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::v4l2::discovery::MenuControl;

    const H264: ModeMenus = ModeMenus {
        decode_mode: b::V4L2_CID_STATELESS_H264_DECODE_MODE,
        start_code: b::V4L2_CID_STATELESS_H264_START_CODE,
        mode_env: "REEL_TEST_UNUSED_MODE",
        start_code_env: "REEL_TEST_UNUSED_START_CODE",
    };

    fn visl_like(default_mode: i32, default_start: i32) -> DecoderInfo {
        let menu = |id, default, names: [&str; 2]| MenuControl {
            id,
            minimum: 0,
            maximum: 1,
            default,
            items: vec![(0, names[0].into()), (1, names[1].into())],
        };
        let mut info = DecoderInfo::for_tests("/dev/video9");
        for control in [
            menu(
                b::V4L2_CID_STATELESS_H264_DECODE_MODE,
                default_mode,
                ["Slice-Based", "Frame-Based"],
            ),
            menu(
                b::V4L2_CID_STATELESS_H264_START_CODE,
                default_start,
                ["No Start Code", "Annex B Start Code"],
            ),
        ] {
            info.menus.insert(control.id, control);
        }
        info
    }

    #[test]
    fn mode_follows_the_driver_defaults() {
        let slice = SliceMode::choose(&visl_like(0, 0), &H264, None, None).unwrap();
        assert_eq!(slice.decode_mode, DecodeMode::SliceBased);
        assert!(!slice.start_codes);
        let frame = SliceMode::choose(&visl_like(1, 1), &H264, None, None).unwrap();
        assert_eq!(frame.decode_mode, DecodeMode::FrameBased);
        assert!(frame.start_codes);
    }

    #[test]
    fn forced_mode_must_be_offered() {
        let forced = SliceMode::choose(
            &visl_like(0, 0),
            &H264,
            Some(DecodeMode::FrameBased),
            Some(true),
        )
        .unwrap();
        assert_eq!(forced.decode_mode, DecodeMode::FrameBased);
        assert!(forced.start_codes);
        let mut only_slice = visl_like(0, 0);
        if let Some(menu) = only_slice
            .menus
            .get_mut(&b::V4L2_CID_STATELESS_H264_DECODE_MODE)
        {
            menu.items.truncate(1);
        }
        let err =
            SliceMode::choose(&only_slice, &H264, Some(DecodeMode::FrameBased), None).unwrap_err();
        assert!(err.contains("/dev/video9"), "{err}");
    }
}
