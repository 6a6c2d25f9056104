//! H.264 on a V4L2 stateless decoder: turns the codec layer's
//! [`crate::codec::h264::DecodeJob`]s into requests (controls and bitstream)
//! in the decode mode and start-code format the driver asks for, and says
//! which pictures are references and when each is due for output.

pub mod controls;

use std::path::PathBuf;

use tracing::info;
use v4l2r::bindings as b;
use v4l2r::controls::codec as typed;

use super::codec::{CodecEntry, CodecOpenError, CodecSetup};
use super::codec::{CodecError, Damage, Request, SequenceChange, Unsupported};
use super::controls::ExtControl;
use super::discovery::{DecoderInfo, ProfileNeed, StreamRequirements};
use super::formats::coded;
use super::level_check::LevelCheck;
use super::slice_decode::{SliceCodec, SliceGlue};
use super::slice_mode::{DecodeMode, ModeMenus, Picture, SliceMode};
use crate::codec::h264::sps::{first_sps, Sps};
use crate::codec::h264::{self, H264Decoder, H264Error};
use crate::media::{Codec, VideoStreamInfo};
use controls::{sps_control, PictureControls, SliceControls};

/// The decode-mode and start-code menus, and the environment variables
/// forcing them (`REEL_V4L2_H264_MODE=frame|slice`,
/// `REEL_V4L2_H264_START_CODE=annexb|none`).
pub const MODE_MENUS: ModeMenus = ModeMenus {
    coded_format: coded::H264_SLICE,
    decode_mode: b::V4L2_CID_STATELESS_H264_DECODE_MODE,
    start_code: b::V4L2_CID_STATELESS_H264_START_CODE,
    mode_env: "REEL_V4L2_H264_MODE",
    start_code_env: "REEL_V4L2_H264_START_CODE",
};

/// H.264's line in the codec registry.
pub static ENTRY: CodecEntry = CodecEntry {
    codec: Codec::H264,
    coded_format: coded::H264_SLICE,
    required_controls: &REQUIRED,
    menus: &[
        (b::V4L2_CID_STATELESS_H264_DECODE_MODE, "h264 decode mode"),
        (b::V4L2_CID_STATELESS_H264_START_CODE, "h264 start code"),
        (b::V4L2_CID_MPEG_VIDEO_H264_PROFILE, "h264 profile"),
        (b::V4L2_CID_MPEG_VIDEO_H264_LEVEL, "h264 level"),
    ],
    requirements,
    open,
};

/// What a stream needs from a decoder: the SPS's coded size and profile
/// when the container carries one, else the container's size.
pub fn requirements(stream: &VideoStreamInfo) -> StreamRequirements {
    let sps = first_sps(&stream.parameter_sets);
    let (width, height) = sps
        .as_ref()
        .map_or((stream.width, stream.height), Sps::coded_size);
    StreamRequirements {
        coded_format: coded::H264_SLICE,
        width,
        height,
        profile: sps.map(|s| profile_need(s.profile_idc)),
    }
}

/// The profile menu values that take a stream of `profile_idc` (a
/// constrained-baseline decoder also takes baseline streams that use no
/// baseline-only tools; let the decoder try).
pub fn profile_need(profile_idc: u8) -> ProfileNeed {
    use b::*;
    let accepted = match profile_idc {
        66 => vec![
            v4l2_mpeg_video_h264_profile_V4L2_MPEG_VIDEO_H264_PROFILE_BASELINE,
            v4l2_mpeg_video_h264_profile_V4L2_MPEG_VIDEO_H264_PROFILE_CONSTRAINED_BASELINE,
        ],
        77 => vec![v4l2_mpeg_video_h264_profile_V4L2_MPEG_VIDEO_H264_PROFILE_MAIN],
        88 => vec![v4l2_mpeg_video_h264_profile_V4L2_MPEG_VIDEO_H264_PROFILE_EXTENDED],
        100 => vec![v4l2_mpeg_video_h264_profile_V4L2_MPEG_VIDEO_H264_PROFILE_HIGH],
        110 => vec![v4l2_mpeg_video_h264_profile_V4L2_MPEG_VIDEO_H264_PROFILE_HIGH_10],
        122 => vec![v4l2_mpeg_video_h264_profile_V4L2_MPEG_VIDEO_H264_PROFILE_HIGH_422],
        244 => vec![v4l2_mpeg_video_h264_profile_V4L2_MPEG_VIDEO_H264_PROFILE_HIGH_444_PREDICTIVE],
        _ => Vec::new(),
    };
    ProfileNeed {
        menu: b::V4L2_CID_MPEG_VIDEO_H264_PROFILE,
        accepted,
        label: format!("H.264 profile_idc {profile_idc}"),
    }
}

const OUTPUT_BUFFERS: u32 = 4;

/// Per-request controls every request carries.
const REQUIRED: [u32; 3] = [
    b::V4L2_CID_STATELESS_H264_SPS,
    b::V4L2_CID_STATELESS_H264_PPS,
    b::V4L2_CID_STATELESS_H264_DECODE_PARAMS,
];

/// Opens the H.264 glue for a decoder and a stream: the decode mode the
/// driver asks for, and the container's SPS set before the CAPTURE format
/// is chosen.
fn open(info: &DecoderInfo, stream: &VideoStreamInfo) -> Result<CodecSetup, CodecOpenError> {
    let mode = SliceMode::from_env(info, &MODE_MENUS)?;
    let mut initial_controls = mode.controls(&MODE_MENUS);
    let sps = first_sps(&stream.parameter_sets);
    if let Some(sps) = &sps {
        initial_controls.push(ExtControl::typed::<typed::H264Sps>(sps_control(sps)));
    }
    info!(
        device = %info.video_node.display(),
        mode = ?mode.decode_mode,
        annex_b = mode.start_codes,
        "H.264 through V4L2"
    );
    Ok(CodecSetup {
        codec: Box::new(H264Codec::new(mode, info.video_node.clone()).with_levels(
            LevelCheck::new(info.menu(b::V4L2_CID_MPEG_VIDEO_H264_LEVEL)),
        )),
        initial_controls,
        dpb_pictures: sps.as_ref().map_or(16, Sps::max_dpb_frames),
        output_buffers: OUTPUT_BUFFERS,
    })
}

/// `V4L2_CID_MPEG_VIDEO_H264_LEVEL`'s value for a stream's level, and the
/// level's name (A.3.1: level 1b is level_idc 11 with constraint_set3_flag
/// in Baseline, Main and Extended, and level_idc 9 elsewhere).
pub fn level_menu_value(stream: &h264::StreamInfo) -> Option<(u32, String)> {
    use b::*;
    let constrained = stream.constraint_set_flags & 8 != 0;
    let level_1b = match stream.level_idc {
        9 => true,
        11 => constrained && matches!(stream.profile_idc, 66 | 77 | 88),
        _ => false,
    };
    if level_1b {
        return Some((
            v4l2_mpeg_video_h264_level_V4L2_MPEG_VIDEO_H264_LEVEL_1B,
            "1b".into(),
        ));
    }
    let value = match stream.level_idc {
        10 => v4l2_mpeg_video_h264_level_V4L2_MPEG_VIDEO_H264_LEVEL_1_0,
        11 => v4l2_mpeg_video_h264_level_V4L2_MPEG_VIDEO_H264_LEVEL_1_1,
        12 => v4l2_mpeg_video_h264_level_V4L2_MPEG_VIDEO_H264_LEVEL_1_2,
        13 => v4l2_mpeg_video_h264_level_V4L2_MPEG_VIDEO_H264_LEVEL_1_3,
        20 => v4l2_mpeg_video_h264_level_V4L2_MPEG_VIDEO_H264_LEVEL_2_0,
        21 => v4l2_mpeg_video_h264_level_V4L2_MPEG_VIDEO_H264_LEVEL_2_1,
        22 => v4l2_mpeg_video_h264_level_V4L2_MPEG_VIDEO_H264_LEVEL_2_2,
        30 => v4l2_mpeg_video_h264_level_V4L2_MPEG_VIDEO_H264_LEVEL_3_0,
        31 => v4l2_mpeg_video_h264_level_V4L2_MPEG_VIDEO_H264_LEVEL_3_1,
        32 => v4l2_mpeg_video_h264_level_V4L2_MPEG_VIDEO_H264_LEVEL_3_2,
        40 => v4l2_mpeg_video_h264_level_V4L2_MPEG_VIDEO_H264_LEVEL_4_0,
        41 => v4l2_mpeg_video_h264_level_V4L2_MPEG_VIDEO_H264_LEVEL_4_1,
        42 => v4l2_mpeg_video_h264_level_V4L2_MPEG_VIDEO_H264_LEVEL_4_2,
        50 => v4l2_mpeg_video_h264_level_V4L2_MPEG_VIDEO_H264_LEVEL_5_0,
        51 => v4l2_mpeg_video_h264_level_V4L2_MPEG_VIDEO_H264_LEVEL_5_1,
        52 => v4l2_mpeg_video_h264_level_V4L2_MPEG_VIDEO_H264_LEVEL_5_2,
        60 => v4l2_mpeg_video_h264_level_V4L2_MPEG_VIDEO_H264_LEVEL_6_0,
        61 => v4l2_mpeg_video_h264_level_V4L2_MPEG_VIDEO_H264_LEVEL_6_1,
        62 => v4l2_mpeg_video_h264_level_V4L2_MPEG_VIDEO_H264_LEVEL_6_2,
        _ => return None,
    };
    let idc = stream.level_idc;
    Some((value, format!("{}.{}", idc / 10, idc % 10)))
}

/// The H.264 codec of [`super::decoder::V4l2Decoder`]: the shared slice
/// loop with H.264's glue.
pub type H264Codec = SliceCodec<H264Glue>;

impl H264Codec {
    pub fn new(mode: SliceMode, device: PathBuf) -> Self {
        Self::with_glue(
            H264Decoder::new(),
            H264Glue {
                mode,
                device,
                open_field: None,
                levels: LevelCheck::default(),
            },
        )
    }

    /// `levels`: the driver's level menu (a stream above it is tried, with
    /// a warning).
    pub fn with_levels(mut self, levels: LevelCheck) -> Self {
        self.glue.levels = levels;
        self
    }

    pub fn mode(&self) -> SliceMode {
        self.glue.mode
    }
}

/// What H.264 adds to the slice loop: its controls, field pairs, levels.
pub struct H264Glue {
    mode: SliceMode,
    device: PathBuf,
    /// A first field whose second field should follow into its buffer.
    open_field: Option<u64>,
    /// Each new sequence's level against the driver's level menu.
    levels: LevelCheck,
}

impl H264Glue {
    /// Whether the driver must keep the picture's CAPTURE buffer after its
    /// last request: a first field, whose second field decodes into the
    /// same buffer (same timestamp). An unpaired field is released by the
    /// driver when a request with another timestamp comes, or by FLUSH.
    fn holds_for_second_field(&mut self, job: &h264::DecodeJob) -> bool {
        if !job.structure.is_field() {
            self.open_field = None;
            return false;
        }
        if self.open_field == Some(job.timestamp_ns) {
            self.open_field = None;
            return false;
        }
        self.open_field = Some(job.timestamp_ns);
        true
    }

    /// The requests of one picture.
    fn picture_requests(
        &self,
        job: &h264::DecodeJob,
        hold_after: bool,
    ) -> Result<Vec<Request>, CodecError> {
        let controls = PictureControls::of(job);
        let mut picture = vec![
            ExtControl::typed::<typed::H264Sps>(controls.sps),
            ExtControl::typed::<typed::H264Pps>(controls.pps),
        ];
        if controls.has_scaling_matrix() {
            picture.push(ExtControl::typed::<typed::H264ScalingMatrix>(
                controls.scaling_matrix,
            ));
        }
        picture.push(ExtControl::typed::<typed::H264DecodeParams>(
            controls.decode_params,
        ));
        let sequence = job.new_sequence.then(|| SequenceChange {
            coded_width: job.stream.coded_width,
            coded_height: job.stream.coded_height,
            dpb_pictures: job.stream.dpb_frames,
            bit_depth: u32::from(job.stream.bit_depth_luma),
            controls: vec![ExtControl::typed::<typed::H264Sps>(controls.sps)],
        });
        let slice_based = self.mode.decode_mode == DecodeMode::SliceBased;
        self.mode.requests(
            Picture {
                timestamp_ns: job.timestamp_ns,
                controls: picture,
                slices: &job.slices,
                sequence,
                hold_after,
            },
            |slice| slice.nal.clone(),
            |slices, controls| {
                // Frame-based drivers parse the slice headers themselves.
                if !slice_based {
                    return;
                }
                for slice in slices {
                    let slice_controls = SliceControls::of(slice);
                    controls.push(ExtControl::typed::<typed::H264SliceParams>(
                        slice_controls.params,
                    ));
                    if let Some(weights) = slice_controls.pred_weights {
                        controls.push(ExtControl::typed::<typed::H264PredWeights>(weights));
                    }
                }
            },
        )
    }
}

impl SliceGlue for H264Glue {
    type Parser = H264Decoder;

    fn requests(&mut self, job: &h264::DecodeJob) -> Result<Vec<Request>, CodecError> {
        if job.new_sequence {
            if let Some((level, name)) = level_menu_value(&job.stream) {
                self.levels.check("H.264", Some(level), || name);
            }
        }
        let hold_after = self.holds_for_second_field(job);
        self.picture_requests(job, hold_after)
    }

    fn codec_error(&self, error: H264Error) -> CodecError {
        let device = self.device.clone();
        match error {
            H264Error::Unsupported(_) => Unsupported::H264 { device, error }.into(),
            _ => Damage::H264 { device, error }.into(),
        }
    }

    fn reset(&mut self) {
        self.open_field = None;
    }

    fn describe(&self) -> String {
        self.mode.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_map_to_the_menu_values_that_take_them() {
        use b::*;
        let high = profile_need(100);
        assert_eq!(high.menu, V4L2_CID_MPEG_VIDEO_H264_PROFILE);
        assert_eq!(
            high.accepted,
            [v4l2_mpeg_video_h264_profile_V4L2_MPEG_VIDEO_H264_PROFILE_HIGH]
        );
        assert_eq!(high.label, "H.264 profile_idc 100");
        // A constrained-baseline decoder is let try a baseline stream.
        assert!(profile_need(66).accepted.contains(
            &v4l2_mpeg_video_h264_profile_V4L2_MPEG_VIDEO_H264_PROFILE_CONSTRAINED_BASELINE
        ));
        // An unknown profile matches no menu value: refused where a menu exists.
        assert!(profile_need(1).accepted.is_empty());
    }

    fn stream(profile_idc: u8, constraint_set_flags: u8, level_idc: u8) -> h264::StreamInfo {
        h264::StreamInfo {
            profile_idc,
            constraint_set_flags,
            level_idc,
            coded_width: 320,
            coded_height: 240,
            visible: (0, 0, 320, 240),
            bit_depth_luma: 8,
            bit_depth_chroma: 8,
            chroma_format_idc: 1,
            dpb_frames: 4,
            max_num_reorder_frames: 0,
            interlaced: false,
            sample_aspect_ratio: None,
        }
    }

    #[test]
    fn levels_map_to_the_level_menu() {
        use b::*;
        let value = |p, c, l| level_menu_value(&stream(p, c, l));
        assert_eq!(
            value(100, 0, 30),
            Some((
                v4l2_mpeg_video_h264_level_V4L2_MPEG_VIDEO_H264_LEVEL_3_0,
                "3.0".into()
            ))
        );
        assert_eq!(
            value(77, 0, 51),
            Some((
                v4l2_mpeg_video_h264_level_V4L2_MPEG_VIDEO_H264_LEVEL_5_1,
                "5.1".into()
            ))
        );
        // Level 1b: level_idc 11 with constraint_set3_flag in Baseline/Main,
        // level_idc 9 in High; 11 in High is level 1.1.
        let one_b = Some((
            v4l2_mpeg_video_h264_level_V4L2_MPEG_VIDEO_H264_LEVEL_1B,
            "1b".into(),
        ));
        assert_eq!(value(66, 8, 11), one_b);
        assert_eq!(value(100, 0, 9), one_b);
        assert_eq!(
            value(100, 8, 11),
            Some((
                v4l2_mpeg_video_h264_level_V4L2_MPEG_VIDEO_H264_LEVEL_1_1,
                "1.1".into()
            ))
        );
        assert_eq!(value(100, 0, 63), None);
    }
}
