//! HEVC on a V4L2 stateless decoder: turns the codec layer's
//! [`crate::codec::hevc::decoder::DecodeJob`]s into requests in the decode
//! mode and start-code format the driver asks for (slice-based: one request
//! per slice segment; frame-based: one per picture with every segment's
//! parameters and entry points), and says which pictures are references
//! and when each is due for output.

pub mod controls;

use std::path::PathBuf;

use tracing::info;
use v4l2r::bindings as b;

use super::codec::{CodecEntry, CodecOpenError, CodecSetup};
use super::codec::{CodecError, Damage, Request, SequenceChange, Unsupported};
use super::controls::ExtControl;
use super::discovery::{DecoderInfo, ProfileNeed, StreamRequirements};
use super::formats::coded;
use super::slice_decode::{SliceCodec, SliceGlue};
use super::slice_mode::{ModeMenus, Picture, SliceMode};
use crate::codec::hevc::decoder::{DecodeJob, HevcDecoder, StreamInfo};
use crate::codec::hevc::parse::first_sps;
use crate::codec::hevc::ptl::profile;
use crate::codec::hevc::{HevcError, Sps};
use crate::media::{Codec, VideoStreamInfo};
use controls::{
    decode_params_control, entry_point_offsets, pps_control, scaling_matrix_control,
    slice_params_control, sps_control, HevcDecodeParams, HevcEntryPointOffsets, HevcPps,
    HevcScalingMatrix, HevcSliceParams, HevcSps,
};

/// The decode-mode and start-code menus, and the environment variables
/// forcing them (`REEL_V4L2_HEVC_MODE=frame|slice`,
/// `REEL_V4L2_HEVC_START_CODE=annexb|none`).
pub const MODE_MENUS: ModeMenus = ModeMenus {
    coded_format: coded::HEVC_SLICE,
    decode_mode: b::V4L2_CID_STATELESS_HEVC_DECODE_MODE,
    start_code: b::V4L2_CID_STATELESS_HEVC_START_CODE,
    mode_env: "REEL_V4L2_HEVC_MODE",
    start_code_env: "REEL_V4L2_HEVC_START_CODE",
};

/// HEVC's line in the codec registry.
pub static ENTRY: CodecEntry = CodecEntry {
    codec: Codec::Hevc,
    coded_format: coded::HEVC_SLICE,
    required_controls: &REQUIRED,
    menus: &[
        (b::V4L2_CID_STATELESS_HEVC_DECODE_MODE, "hevc decode mode"),
        (b::V4L2_CID_STATELESS_HEVC_START_CODE, "hevc start code"),
        (b::V4L2_CID_MPEG_VIDEO_HEVC_PROFILE, "hevc profile"),
        (b::V4L2_CID_MPEG_VIDEO_HEVC_LEVEL, "hevc level"),
    ],
    requirements,
    open,
};

/// Per-request controls every request carries.
const REQUIRED: [u32; 3] = [
    b::V4L2_CID_STATELESS_HEVC_SPS,
    b::V4L2_CID_STATELESS_HEVC_PPS,
    b::V4L2_CID_STATELESS_HEVC_DECODE_PARAMS,
];

const OUTPUT_BUFFERS: u32 = 4;

/// What a stream needs from a decoder: the SPS's coded size and profile
/// when the container carries one, else the container's size.
pub fn requirements(stream: &VideoStreamInfo) -> StreamRequirements {
    let sps = first_sps(&stream.parameter_sets);
    let (width, height) = sps.as_ref().map_or((stream.width, stream.height), |s| {
        (s.pic_width_in_luma_samples, s.pic_height_in_luma_samples)
    });
    StreamRequirements {
        coded_format: coded::HEVC_SLICE,
        width,
        height,
        profile: sps.map(|s| profile_need(&s)),
    }
}

/// The profile menu values that take a stream: a Main 10 decoder takes
/// Main streams; a Main decoder takes Main Still Picture ones.
pub fn profile_need(sps: &Sps) -> ProfileNeed {
    let general = &sps.profile_tier_level.general;
    let main = b::v4l2_mpeg_video_hevc_profile_V4L2_MPEG_VIDEO_HEVC_PROFILE_MAIN;
    let main_10 = b::v4l2_mpeg_video_hevc_profile_V4L2_MPEG_VIDEO_HEVC_PROFILE_MAIN_10;
    let still = b::v4l2_mpeg_video_hevc_profile_V4L2_MPEG_VIDEO_HEVC_PROFILE_MAIN_STILL_PICTURE;
    let accepted = if sps.bit_depth_luma_minus8 > 2 || sps.chroma_format_idc != 1 {
        // Beyond Main 10 (4:2:2, 4:4:4, 12-bit): no menu value names it.
        Vec::new()
    } else if general.compatible_with(profile::MAIN_STILL_PICTURE)
        && !general.compatible_with(profile::MAIN)
    {
        vec![still, main, main_10]
    } else if sps.bit_depth_luma_minus8 == 0
        && sps.bit_depth_chroma_minus8 == 0
        && (general.compatible_with(profile::MAIN)
            || general.compatible_with(profile::MAIN_STILL_PICTURE))
    {
        vec![main, main_10]
    } else {
        vec![main_10]
    };
    ProfileNeed {
        menu: b::V4L2_CID_MPEG_VIDEO_HEVC_PROFILE,
        accepted,
        label: format!(
            "HEVC profile_idc {} ({}-bit)",
            general.profile_idc,
            sps.bit_depth_luma_minus8 + 8
        ),
    }
}

fn open(info: &DecoderInfo, stream: &VideoStreamInfo) -> Result<CodecSetup, CodecOpenError> {
    let mode = SliceMode::from_env(info, &MODE_MENUS)?;
    let mut initial_controls = mode.controls(&MODE_MENUS);
    let sps = first_sps(&stream.parameter_sets);
    if let Some(sps) = &sps {
        initial_controls.push(ExtControl::typed::<HevcSps>(sps_control(sps)));
    }
    info!(
        device = %info.video_node.display(),
        mode = ?mode.decode_mode,
        annex_b = mode.start_codes,
        "HEVC through V4L2"
    );
    Ok(CodecSetup {
        codec: Box::new(HevcCodec::new(mode, info.video_node.clone())),
        initial_controls,
        dpb_pictures: sps
            .as_ref()
            .map_or(16, |s| StreamInfo::from_sps(s).dpb_pictures),
        output_buffers: OUTPUT_BUFFERS,
    })
}

/// The HEVC codec of [`super::decoder::V4l2Decoder`]: the shared slice
/// loop with HEVC's glue.
pub type HevcCodec = SliceCodec<HevcGlue>;

impl HevcCodec {
    pub fn new(mode: SliceMode, device: PathBuf) -> Self {
        Self::with_glue(HevcDecoder::new(), HevcGlue { mode, device })
    }
}

/// What HEVC adds to the slice loop: its controls.
pub struct HevcGlue {
    mode: SliceMode,
    device: PathBuf,
}

impl HevcGlue {
    /// The requests of one picture: every request carries the slice
    /// parameters and entry points of its slice segments.
    fn picture_requests(&self, job: &DecodeJob) -> Result<Vec<Request>, CodecError> {
        let mut picture = vec![
            ExtControl::typed::<HevcSps>(sps_control(&job.sps)),
            ExtControl::typed::<HevcPps>(pps_control(&job.pps)),
        ];
        if job.sps.scaling_list_enabled_flag {
            picture.push(ExtControl::typed::<HevcScalingMatrix>(
                scaling_matrix_control(&job.sps, &job.pps),
            ));
        }
        picture.push(ExtControl::typed::<HevcDecodeParams>(
            decode_params_control(job),
        ));
        let sequence = job.new_sequence.then(|| SequenceChange {
            coded_width: job.stream.coded_width,
            coded_height: job.stream.coded_height,
            dpb_pictures: job.stream.dpb_pictures,
            bit_depth: u32::from(job.stream.bit_depth_luma),
            controls: vec![ExtControl::typed::<HevcSps>(sps_control(&job.sps))],
        });
        let start_code = if self.mode.start_codes { 3 } else { 0 };
        self.mode.requests(
            Picture {
                timestamp_ns: job.timestamp_ns,
                controls: picture,
                slices: &job.slices,
                sequence,
                hold_after: false,
            },
            |slice| slice.nal.clone(),
            |slices, controls| {
                let params = slices
                    .iter()
                    .map(|s| slice_params_control(job, s, start_code))
                    .collect();
                controls.push(ExtControl::array::<HevcSliceParams>(params));
                let offsets = entry_point_offsets(slices);
                if !offsets.is_empty() {
                    controls.push(ExtControl::array::<HevcEntryPointOffsets>(offsets));
                }
            },
        )
    }
}

impl SliceGlue for HevcGlue {
    type Parser = HevcDecoder;

    fn requests(&mut self, job: &DecodeJob) -> Result<Vec<Request>, CodecError> {
        self.picture_requests(job)
    }

    fn codec_error(&self, error: HevcError) -> CodecError {
        let device = self.device.clone();
        match error {
            HevcError::Unsupported(_) => Unsupported::Hevc { device, error }.into(),
            _ => Damage::Hevc { device, error }.into(),
        }
    }

    fn describe(&self) -> String {
        self.mode.to_string()
    }
}
