//! The decode-mode and start-code menus H.264 and HEVC stateless decoders
//! share (`V4L2_CID_STATELESS_{H264,HEVC}_{DECODE_MODE,START_CODE}`, same
//! values): slice- or frame-based requests, with or without Annex-B start
//! codes. reel follows the driver's defaults (what GStreamer does, so that
//! traces compare) unless an environment variable forces a value the
//! driver offers.

use std::ops::Range;
use std::path::PathBuf;

use v4l2r::bindings as b;

use tracing::info;

use super::codec::{
    BitstreamPart, CodecError, DeviceTimestamp, PictureSummary, Request, SequenceChange,
    SeveralRequests, Unsupported,
};
use super::controls::ExtControl;
use super::discovery::DecoderInfo;

/// The menus of one codec, and the environment variables that force them.
#[derive(Clone, Copy, Debug)]
pub struct ModeMenus {
    /// The codec's OUTPUT format (whether the driver holds CAPTURE buffers
    /// depends on it).
    pub coded_format: u32,
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

/// Why no decode mode could be chosen for a driver.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModeError {
    /// The decode-mode variable (`REEL_V4L2_H264_MODE`, say) names no mode.
    #[error("{variable}={value}: expected frame or slice")]
    ModeVariable {
        variable: &'static str,
        value: String,
    },
    /// The start-code variable names no start code.
    #[error("{variable}={value}: expected annexb or none")]
    StartCodeVariable {
        variable: &'static str,
        value: String,
    },
    /// The mode forced is not in the driver's menu.
    #[error("{}: decode mode {mode:?} is not offered", device.display())]
    ModeNotOffered { device: PathBuf, mode: DecodeMode },
    /// The driver's menu defaults to a mode reel does not know.
    #[error("{}: unknown default decode mode", device.display())]
    UnknownDefaultMode { device: PathBuf },
    /// The start code forced is not in the driver's menu.
    #[error(
        "{}: start code {} is not offered",
        device.display(),
        if *annex_b { "Annex B" } else { "none" }
    )]
    StartCodeNotOffered { device: PathBuf, annex_b: bool },
}

/// How bitstream and requests are laid out for one driver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SliceMode {
    pub decode_mode: DecodeMode,
    /// Annex-B start codes before each slice (else none).
    pub start_codes: bool,
    /// The driver keeps a CAPTURE buffer across requests with
    /// `V4L2_BUF_FLAG_M2M_HOLD_CAPTURE_BUF`: needed for a picture of
    /// several slice-based requests and for a field pair.
    pub holds_capture: bool,
}

impl SliceMode {
    /// The driver's default of each menu, unless `forced` names a value the
    /// driver offers. A driver that cannot hold CAPTURE buffers for the
    /// codec decodes frame-based when it offers that: slice-based decoding
    /// would lose every slice but the last of a picture.
    pub fn choose(
        info: &DecoderInfo,
        menus: &ModeMenus,
        forced_mode: Option<DecodeMode>,
        forced_annex_b: Option<bool>,
    ) -> Result<Self, ModeError> {
        let decode_mode = match (info.menu(menus.decode_mode), forced_mode) {
            (Some(menu), Some(mode)) if menu.offers(mode.menu_value()) => mode,
            (Some(_), Some(mode)) => {
                return Err(ModeError::ModeNotOffered {
                    device: info.video_node.clone(),
                    mode,
                })
            }
            (Some(menu), None) => DecodeMode::from_menu(menu.default as u32).ok_or_else(|| {
                ModeError::UnknownDefaultMode {
                    device: info.video_node.clone(),
                }
            })?,
            // Drivers without the menu decode slice by slice (the control's default).
            (None, mode) => mode.unwrap_or(DecodeMode::SliceBased),
        };
        let holds_capture = info.holds_capture(menus.coded_format);
        let frame_based_offered = info
            .menu(menus.decode_mode)
            .is_some_and(|m| m.offers(DecodeMode::FrameBased.menu_value()));
        let decode_mode = if decode_mode == DecodeMode::SliceBased
            && !holds_capture
            && forced_mode.is_none()
            && frame_based_offered
        {
            info!(
                device = %info.video_node.display(),
                "the driver cannot hold CAPTURE buffers between requests: frame-based decoding"
            );
            DecodeMode::FrameBased
        } else {
            decode_mode
        };
        let start_codes = match (info.menu(menus.start_code), forced_annex_b) {
            (Some(menu), Some(annex_b)) if menu.offers(start_code_value(annex_b)) => annex_b,
            (Some(_), Some(annex_b)) => {
                return Err(ModeError::StartCodeNotOffered {
                    device: info.video_node.clone(),
                    annex_b,
                })
            }
            (Some(menu), None) => menu.default as u32 == start_code_value(true),
            (None, annex_b) => annex_b.unwrap_or(false),
        };
        Ok(Self {
            decode_mode,
            start_codes,
            holds_capture,
        })
    }

    /// `choose` with the overrides of the menus' environment variables.
    pub fn from_env(info: &DecoderInfo, menus: &ModeMenus) -> Result<Self, ModeError> {
        let mode = match std::env::var(menus.mode_env).ok().as_deref() {
            None | Some("") => None,
            Some("frame") => Some(DecodeMode::FrameBased),
            Some("slice") => Some(DecodeMode::SliceBased),
            Some(other) => {
                return Err(ModeError::ModeVariable {
                    variable: menus.mode_env,
                    value: other.to_string(),
                })
            }
        };
        let start = match std::env::var(menus.start_code_env).ok().as_deref() {
            None | Some("") => None,
            Some("annexb") => Some(true),
            Some("none") => Some(false),
            Some(other) => {
                return Err(ModeError::StartCodeVariable {
                    variable: menus.start_code_env,
                    value: other.to_string(),
                })
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

/// One picture of a slice-based codec, to be laid out as requests.
pub struct Picture<'a, S> {
    pub timestamp_ns: DeviceTimestamp,
    /// Controls every request of the picture carries (parameter sets,
    /// decode parameters).
    pub controls: Vec<ExtControl>,
    pub slices: &'a [S],
    /// Set on the picture's first request.
    pub sequence: Option<SequenceChange>,
    /// Keep the CAPTURE buffer after the last request too (an H.264 first
    /// field, whose second field decodes into the same buffer).
    pub hold_after: bool,
}

impl SliceMode {
    /// The requests of one picture. Frame-based: one request carrying every
    /// slice. Slice-based: one per slice, holding the CAPTURE buffer on all
    /// but the last. `slice_controls` adds the controls for the slices a
    /// request carries (all of them, or one); `nal` is a slice's NAL unit
    /// within the packet.
    /// Without a driver that holds CAPTURE buffers, a picture needing more
    /// than one request (slices, or a first field) cannot be decoded.
    pub fn requests<S>(
        &self,
        picture: Picture<'_, S>,
        nal: impl Fn(&S) -> Range<usize>,
        mut slice_controls: impl FnMut(&[S], &mut Vec<ExtControl>),
    ) -> Result<Vec<Request>, CodecError> {
        let Picture {
            timestamp_ns,
            controls,
            slices,
            mut sequence,
            hold_after,
        } = picture;
        let groups: Vec<&[S]> = match self.decode_mode {
            DecodeMode::FrameBased => vec![slices],
            DecodeMode::SliceBased => slices.chunks(1).collect(),
        };
        if !self.holds_capture && (groups.len() > 1 || hold_after) {
            let what = if hold_after {
                SeveralRequests::FieldPair
            } else {
                SeveralRequests::Slices(groups.len())
            };
            return Err(Unsupported::HoldCapture(what).into());
        }
        let last = groups.len().saturating_sub(1);
        Ok(groups
            .into_iter()
            .enumerate()
            .map(|(i, group)| {
                let mut request_controls = controls.clone();
                slice_controls(group, &mut request_controls);
                Request {
                    timestamp_ns,
                    controls: request_controls,
                    bitstream: self.bitstream(group.iter().map(&nal)),
                    hold_capture: i != last || hold_after,
                    sequence: sequence.take(),
                    summary: PictureSummary {
                        slices: group.len(),
                        ..Default::default()
                    },
                }
            })
            .collect())
    }

    /// The NAL units in order, each after a start code when the driver
    /// wants them.
    fn bitstream(&self, nals: impl Iterator<Item = Range<usize>>) -> Vec<BitstreamPart> {
        let mut parts = Vec::with_capacity(2);
        for nal in nals {
            if self.start_codes {
                parts.push(BitstreamPart::StartCode);
            }
            parts.push(BitstreamPart::Packet(nal));
        }
        parts
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
    use crate::v4l2::discovery::{CodedFormat, MenuControl};
    use crate::v4l2::formats::coded;

    const H264: ModeMenus = ModeMenus {
        coded_format: coded::H264_SLICE,
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
        info.coded_formats.push(CodedFormat {
            fourcc: coded::H264_SLICE,
            description: "H.264".into(),
            sizes: None,
            holds_capture: true,
        });
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

    fn picture(slices: &[Range<usize>], hold_after: bool) -> Picture<'_, Range<usize>> {
        Picture {
            timestamp_ns: 7000,
            controls: vec![ExtControl::value(1, 1)],
            slices,
            sequence: Some(SequenceChange {
                coded_width: 16,
                coded_height: 16,
                dpb_pictures: 1,
                bit_depth: 8,
                controls: Vec::new(),
            }),
            hold_after,
        }
    }

    /// The slice control stands for each slice's first byte.
    fn mark_slices(slices: &[Range<usize>], controls: &mut Vec<ExtControl>) {
        controls.extend(slices.iter().map(|s| ExtControl::value(2, s.start as i32)));
    }

    #[test]
    fn slice_based_requests_hold_all_but_the_last() {
        let mode = SliceMode {
            decode_mode: DecodeMode::SliceBased,
            start_codes: false,
            holds_capture: true,
        };
        let slices = [0..4, 4..9, 9..12];
        let requests = mode
            .requests(picture(&slices, false), Range::clone, mark_slices)
            .unwrap();
        assert_eq!(requests.len(), 3);
        for (i, r) in requests.iter().enumerate() {
            assert_eq!(r.timestamp_ns, 7000);
            assert_eq!(r.controls.len(), 2, "picture + one slice control");
            assert_eq!(r.bitstream, vec![BitstreamPart::Packet(slices[i].clone())]);
            assert_eq!(r.hold_capture, i != 2);
            assert_eq!(r.sequence.is_some(), i == 0);
        }
        let held = mode
            .requests(picture(&slices, true), Range::clone, mark_slices)
            .unwrap();
        assert!(held.iter().all(|r| r.hold_capture), "a first field holds");
    }

    #[test]
    fn frame_based_request_carries_every_slice() {
        let mode = SliceMode {
            decode_mode: DecodeMode::FrameBased,
            start_codes: true,
            holds_capture: true,
        };
        let slices = [0..4, 4..9];
        let requests = mode
            .requests(picture(&slices, false), Range::clone, mark_slices)
            .unwrap();
        assert_eq!(requests.len(), 1);
        let r = &requests[0];
        assert_eq!(r.controls.len(), 3, "picture + both slices' controls");
        assert_eq!(
            r.bitstream,
            vec![
                BitstreamPart::StartCode,
                BitstreamPart::Packet(0..4),
                BitstreamPart::StartCode,
                BitstreamPart::Packet(4..9)
            ]
        );
        assert!(!r.hold_capture);
        assert!(r.sequence.is_some());
    }

    fn without_hold(mut info: DecoderInfo) -> DecoderInfo {
        info.coded_formats
            .iter_mut()
            .for_each(|f| f.holds_capture = false);
        info
    }

    #[test]
    fn without_hold_the_driver_decodes_frame_based_when_it_can() {
        let mode = SliceMode::choose(&without_hold(visl_like(0, 0)), &H264, None, None).unwrap();
        assert_eq!(mode.decode_mode, DecodeMode::FrameBased);
        assert!(!mode.holds_capture);
        // Forced slice-based stays so (the requests then refuse multi-slice pictures).
        let forced = SliceMode::choose(
            &without_hold(visl_like(0, 0)),
            &H264,
            Some(DecodeMode::SliceBased),
            None,
        )
        .unwrap();
        assert_eq!(forced.decode_mode, DecodeMode::SliceBased);
        // A driver offering slice-based only keeps it.
        let mut only_slice = without_hold(visl_like(0, 0));
        if let Some(menu) = only_slice
            .menus
            .get_mut(&b::V4L2_CID_STATELESS_H264_DECODE_MODE)
        {
            menu.items.truncate(1);
        }
        let mode = SliceMode::choose(&only_slice, &H264, None, None).unwrap();
        assert_eq!(mode.decode_mode, DecodeMode::SliceBased);
    }

    #[test]
    fn without_hold_pictures_of_several_requests_are_refused() {
        let mode = SliceMode {
            decode_mode: DecodeMode::SliceBased,
            start_codes: false,
            holds_capture: false,
        };
        let one = [Range { start: 0, end: 4 }];
        assert_eq!(
            mode.requests(picture(&one, false), Range::clone, mark_slices)
                .unwrap()
                .len(),
            1
        );
        let three = [0..4, 4..9, 9..12];
        let err = mode
            .requests(picture(&three, false), Range::clone, mark_slices)
            .err()
            .expect("refused");
        assert!(!err.is_recoverable());
        assert!(err.to_string().contains("3 slices"), "{err}");
        let field = mode
            .requests(picture(&one, true), Range::clone, mark_slices)
            .err()
            .expect("a first field is refused");
        assert!(field.to_string().contains("field pair"), "{field}");
        // Frame-based, every slice goes in one request: no hold needed.
        let frame = SliceMode {
            decode_mode: DecodeMode::FrameBased,
            ..mode
        };
        assert_eq!(
            frame
                .requests(picture(&three, false), Range::clone, mark_slices)
                .unwrap()
                .len(),
            1
        );
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
        assert_eq!(
            err.to_string(),
            "/dev/video9: decode mode FrameBased is not offered"
        );
    }
}
