//! H.264 on a V4L2 stateless decoder: turns the codec layer's
//! [`crate::codec::h264::DecodeJob`]s into requests (controls and bitstream)
//! in the decode mode and start-code format the driver asks for, and says
//! which pictures are references and when each is due for output.

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::PathBuf;
use std::sync::Arc;

use tracing::{debug, info};
use v4l2r::bindings as b;

use super::controls::ExtControl;
use super::decoder::{DecodeJob, SequenceChange, StatelessCodec, V4l2Decoder};
use super::discovery::{DecoderInfo, DiscoveryError, StreamRequirements};
use super::formats::coded;
use super::session::{CaptureChooser, SessionConfig};
use crate::codec::bitreader::BitReader;
use crate::codec::h264::nal::{nal_type, split_annex_b, Nal};
use crate::codec::h264::sps::Sps;
use crate::codec::h264::{self, H264Decoder, StreamInfo};
use crate::media::VideoStreamInfo;

/// Environment variable forcing the decode mode (`frame` or `slice`).
pub const MODE_ENV: &str = "REEL_V4L2_H264_MODE";
/// Environment variable forcing the start code (`annexb` or `none`).
pub const START_CODE_ENV: &str = "REEL_V4L2_H264_START_CODE";

/// `V4L2_CID_STATELESS_H264_DECODE_MODE`.
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

/// How bitstream and requests are laid out for one driver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct H264Mode {
    pub decode_mode: DecodeMode,
    /// Annex-B start codes before each slice (else none).
    pub start_codes: bool,
}

fn start_code_value(annex_b: bool) -> u32 {
    if annex_b {
        b::v4l2_stateless_h264_start_code_V4L2_STATELESS_H264_START_CODE_ANNEX_B
    } else {
        b::v4l2_stateless_h264_start_code_V4L2_STATELESS_H264_START_CODE_NONE
    }
}

impl H264Mode {
    /// The driver's default of each menu (what GStreamer uses too, so that
    /// traces compare), unless `forced` names a value the driver offers.
    pub fn choose(
        info: &DecoderInfo,
        forced_mode: Option<DecodeMode>,
        forced_annex_b: Option<bool>,
    ) -> Result<Self, String> {
        let menus = info.h264.clone().unwrap_or_default();
        let decode_mode = match (&menus.decode_mode, forced_mode) {
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
        let start_codes = match (&menus.start_code, forced_annex_b) {
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

    /// `choose` with the overrides of `REEL_V4L2_H264_MODE` and
    /// `REEL_V4L2_H264_START_CODE`.
    pub fn from_env(info: &DecoderInfo) -> Result<Self, String> {
        let mode = match std::env::var(MODE_ENV).ok().as_deref() {
            None | Some("") => None,
            Some("frame") => Some(DecodeMode::FrameBased),
            Some("slice") => Some(DecodeMode::SliceBased),
            Some(other) => return Err(format!("{MODE_ENV}={other}: expected frame or slice")),
        };
        let start = match std::env::var(START_CODE_ENV).ok().as_deref() {
            None | Some("") => None,
            Some("annexb") => Some(true),
            Some("none") => Some(false),
            Some(other) => {
                return Err(format!("{START_CODE_ENV}={other}: expected annexb or none"))
            }
        };
        Self::choose(info, mode, start)
    }

    fn controls(&self) -> Vec<ExtControl> {
        vec![
            ExtControl::value(
                b::V4L2_CID_STATELESS_H264_DECODE_MODE,
                self.decode_mode.menu_value() as i32,
            ),
            ExtControl::value(
                b::V4L2_CID_STATELESS_H264_START_CODE,
                start_code_value(self.start_codes) as i32,
            ),
        ]
    }
}

/// The first SPS of an Annex-B blob (the container's parameter sets).
pub fn first_sps(parameter_sets: &[u8]) -> Option<Sps> {
    split_annex_b(parameter_sets).find_map(|bytes| {
        let nal = Nal::parse(bytes).ok()?;
        if nal.nal_unit_type != nal_type::SPS {
            return None;
        }
        let rbsp = nal.rbsp();
        let mut r = BitReader::new(&rbsp);
        r.skip(8, "nal_unit_header").ok()?;
        Sps::parse(&mut r).ok()
    })
}

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
        h264_profile_idc: sps.map(|s| s.profile_idc),
    }
}

/// CAPTURE buffers: the DPB, the picture being decoded, and the frames
/// held downstream (`super::FRAMES_HELD_DOWNSTREAM`: with zero-copy
/// presentation each of them keeps its CAPTURE buffer).
fn capture_buffers(dpb_frames: usize) -> u32 {
    (dpb_frames + 1 + super::FRAMES_HELD_DOWNSTREAM).min(32) as u32
}

const OUTPUT_BUFFERS: u32 = 4;

/// Per-request controls every request carries.
const REQUIRED: [u32; 3] = [
    b::V4L2_CID_STATELESS_H264_SPS,
    b::V4L2_CID_STATELESS_H264_PPS,
    b::V4L2_CID_STATELESS_H264_DECODE_PARAMS,
];

/// The session for a decoder and a stream.
pub fn session_config(
    info: &DecoderInfo,
    stream: &VideoStreamInfo,
    mode: H264Mode,
) -> Result<SessionConfig, DiscoveryError> {
    let media = info
        .media_node
        .clone()
        .ok_or_else(|| DiscoveryError::NoMediaNode {
            path: info.video_node.clone(),
        })?;
    let needs = requirements(stream);
    let mut config = SessionConfig::new(
        &info.video_node,
        &media,
        coded::H264_SLICE,
        needs.width,
        needs.height,
    );
    config.initial_controls = mode.controls();
    let sps = first_sps(&stream.parameter_sets);
    if let Some(sps) = &sps {
        config.initial_controls.push(ExtControl::compound(
            b::V4L2_CID_STATELESS_H264_SPS,
            h264::controls::sps_control(sps),
        ));
    }
    config.capture_buffers = capture_buffers(sps.as_ref().map_or(16, Sps::max_dpb_frames));
    config.output_buffers = OUTPUT_BUFFERS;
    config.required_controls = REQUIRED.to_vec();
    config.bit_depth = stream.bit_depth.max(8);
    Ok(config)
}

/// Opens `info` for the stream: the V4L2 decoder with the H.264 layer.
pub fn open_decoder(
    info: &DecoderInfo,
    stream: &VideoStreamInfo,
    capture_chooser: Option<CaptureChooser>,
) -> Result<V4l2Decoder<H264Codec>, String> {
    let mode = H264Mode::from_env(info)?;
    let mut config = session_config(info, stream, mode).map_err(|e| e.to_string())?;
    config.capture_chooser = capture_chooser;
    info!(
        device = %info.video_node.display(),
        mode = ?mode.decode_mode,
        annex_b = mode.start_codes,
        "H.264 through V4L2"
    );
    let codec = H264Codec::new(mode, info.video_node.clone());
    let time_base = (i64::from(stream.time_base.0), i64::from(stream.time_base.1));
    V4l2Decoder::new(config, codec, time_base)
        .map_err(|e| format!("{}: {e}", info.video_node.display()))
}

/// The H.264 layer of [`V4l2Decoder`].
pub struct H264Codec {
    parser: H264Decoder,
    mode: H264Mode,
    device: PathBuf,
    /// Pictures due for output, in display order.
    due: VecDeque<u64>,
    /// Timestamps named as references by the last access unit's jobs.
    batch_references: Vec<u64>,
    /// Visible size of each picture not yet shown (sizes change with the SPS).
    sizes: HashMap<u64, (u32, u32)>,
    visible: (u32, u32),
    /// A first field whose second field should follow into its buffer.
    open_field: Option<u64>,
}

impl H264Codec {
    pub fn new(mode: H264Mode, device: PathBuf) -> Self {
        Self {
            parser: H264Decoder::new(),
            mode,
            device,
            due: VecDeque::new(),
            batch_references: Vec::new(),
            sizes: HashMap::new(),
            visible: (0, 0),
            open_field: None,
        }
    }

    pub fn mode(&self) -> H264Mode {
        self.mode
    }

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
    fn requests(&self, job: &h264::DecodeJob, hold_after: bool) -> Vec<DecodeJob> {
        let mut picture = vec![
            ExtControl::compound(b::V4L2_CID_STATELESS_H264_SPS, job.sps),
            ExtControl::compound(b::V4L2_CID_STATELESS_H264_PPS, job.pps),
        ];
        if u32::from(job.pps.flags) & b::V4L2_H264_PPS_FLAG_SCALING_MATRIX_PRESENT != 0 {
            picture.push(ExtControl::compound(
                b::V4L2_CID_STATELESS_H264_SCALING_MATRIX,
                job.scaling_matrix,
            ));
        }
        picture.push(ExtControl::compound(
            b::V4L2_CID_STATELESS_H264_DECODE_PARAMS,
            job.decode_params,
        ));
        let sequence = job.new_sequence.then(|| sequence_change(&job.stream, job));
        match self.mode.decode_mode {
            DecodeMode::FrameBased => vec![DecodeJob {
                timestamp_ns: job.timestamp_ns,
                controls: picture,
                bitstream: job.bitstream(self.mode.start_codes),
                hold_capture: hold_after,
                sequence,
            }],
            DecodeMode::SliceBased => {
                let last = job.slices.len().saturating_sub(1);
                job.slices
                    .iter()
                    .enumerate()
                    .map(|(i, slice)| {
                        let mut controls = picture.clone();
                        controls.push(ExtControl::compound(
                            b::V4L2_CID_STATELESS_H264_SLICE_PARAMS,
                            slice.params,
                        ));
                        if let Some(weights) = slice.pred_weights {
                            controls.push(ExtControl::compound(
                                b::V4L2_CID_STATELESS_H264_PRED_WEIGHTS,
                                weights,
                            ));
                        }
                        let mut bitstream = Vec::with_capacity(slice.nal.len() + 3);
                        slice.append_bitstream(&mut bitstream, self.mode.start_codes);
                        DecodeJob {
                            timestamp_ns: job.timestamp_ns,
                            controls,
                            bitstream,
                            hold_capture: i != last || hold_after,
                            sequence: if i == 0 { sequence.clone() } else { None },
                        }
                    })
                    .collect()
            }
        }
    }
}

fn sequence_change(stream: &Arc<StreamInfo>, job: &h264::DecodeJob) -> SequenceChange {
    SequenceChange {
        coded_width: stream.coded_width,
        coded_height: stream.coded_height,
        capture_buffers: capture_buffers(stream.dpb_frames),
        controls: vec![ExtControl::compound(
            b::V4L2_CID_STATELESS_H264_SPS,
            job.sps,
        )],
    }
}

impl StatelessCodec for H264Codec {
    fn decode_jobs(
        &mut self,
        access_unit: &[u8],
        timestamp_ns: u64,
    ) -> Result<Vec<DecodeJob>, String> {
        let jobs = self
            .parser
            .decode_access_unit(access_unit, timestamp_ns)
            .map_err(|e| format!("{}: {e}", self.device.display()))?;
        let mut requests = Vec::new();
        let mut references = HashSet::new();
        for job in &jobs {
            if job.slices.is_empty() {
                continue;
            }
            if job.missing_references {
                debug!(
                    timestamp_ns = job.timestamp_ns,
                    "picture refers to pictures the DPB lacks"
                );
            }
            let (_, _, w, h) = job.stream.visible;
            self.visible = (w, h);
            self.sizes.insert(job.timestamp_ns, (w, h));
            references.extend(
                job.decode_params
                    .dpb
                    .iter()
                    .filter(|e| e.flags & b::V4L2_H264_DPB_ENTRY_FLAG_VALID != 0)
                    .map(|e| e.reference_ts),
            );
            let hold_after = self.holds_for_second_field(job);
            requests.extend(self.requests(job, hold_after));
            self.due.extend(job.output.iter().copied());
        }
        // The DPB after this unit, plus what its pictures referred to.
        references.extend(
            self.parser
                .dpb()
                .pictures()
                .iter()
                .filter(|p| p.is_reference() && !p.non_existing)
                .map(|p| p.timestamp_ns),
        );
        self.batch_references = references.into_iter().collect();
        Ok(requests)
    }

    fn references(&self) -> Vec<u64> {
        self.batch_references.clone()
    }

    fn take_output(&mut self, end_of_stream: bool) -> Vec<u64> {
        if end_of_stream {
            let rest = self.parser.flush();
            self.due.extend(rest.output);
        }
        self.due.drain(..).collect()
    }

    fn visible_size(&self) -> (u32, u32) {
        self.visible
    }

    fn visible_size_of(&mut self, timestamp_ns: u64) -> (u32, u32) {
        self.sizes.remove(&timestamp_ns).unwrap_or(self.visible)
    }

    fn reset(&mut self) {
        self.parser.reset();
        self.due.clear();
        self.batch_references.clear();
        self.sizes.clear();
        self.open_field = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::v4l2::discovery::{H264Menus, MenuControl};

    fn visl_like(default_mode: i32, default_start: i32) -> DecoderInfo {
        let menu = |id, default, names: [&str; 2]| MenuControl {
            id,
            minimum: 0,
            maximum: 1,
            default,
            items: vec![(0, names[0].into()), (1, names[1].into())],
        };
        DecoderInfo {
            video_node: "/dev/video9".into(),
            media_node: Some("/dev/media9".into()),
            entity: None,
            driver: "test".into(),
            card: "test".into(),
            bus_info: String::new(),
            multiplanar: true,
            coded_formats: Vec::new(),
            supports_requests: true,
            supports_hold_capture: true,
            h264: Some(H264Menus {
                decode_mode: Some(menu(
                    b::V4L2_CID_STATELESS_H264_DECODE_MODE,
                    default_mode,
                    ["Slice-Based", "Frame-Based"],
                )),
                start_code: Some(menu(
                    b::V4L2_CID_STATELESS_H264_START_CODE,
                    default_start,
                    ["No Start Code", "Annex B Start Code"],
                )),
                profile: None,
                level: None,
            }),
        }
    }

    #[test]
    fn mode_follows_the_driver_defaults() {
        let slice = H264Mode::choose(&visl_like(0, 0), None, None).unwrap();
        assert_eq!(slice.decode_mode, DecodeMode::SliceBased);
        assert!(!slice.start_codes);
        let frame = H264Mode::choose(&visl_like(1, 1), None, None).unwrap();
        assert_eq!(frame.decode_mode, DecodeMode::FrameBased);
        assert!(frame.start_codes);
    }

    #[test]
    fn forced_mode_must_be_offered() {
        let forced =
            H264Mode::choose(&visl_like(0, 0), Some(DecodeMode::FrameBased), Some(true)).unwrap();
        assert_eq!(forced.decode_mode, DecodeMode::FrameBased);
        assert!(forced.start_codes);
        let mut only_slice = visl_like(0, 0);
        if let Some(menu) = only_slice
            .h264
            .as_mut()
            .and_then(|h| h.decode_mode.as_mut())
        {
            menu.items.truncate(1);
        }
        let err = H264Mode::choose(&only_slice, Some(DecodeMode::FrameBased), None).unwrap_err();
        assert!(err.contains("/dev/video9"), "{err}");
    }
}
