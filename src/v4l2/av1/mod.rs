//! AV1 on a V4L2 stateless decoder (`V4L2_PIX_FMT_AV1_FRAME`): each frame
//! of a temporal unit is one request. Its OUTPUT buffer holds the payloads
//! of the frame's tile group OBUs (OBU_FRAME or OBU_TILE_GROUP, headers and
//! size fields left out) one after the other; the tile group entry control
//! says where each tile lies in it. Frames shown again
//! (`show_existing_frame`) make no request: the slot's earlier CAPTURE
//! buffer is shown again. The CAPTURE buffers hold the sequence's largest
//! frame, so that frames of any size within it (superres, reference
//! scaling, key frames of another size) decode into them.

pub mod controls;

use std::collections::HashMap;

use tracing::{debug, info, warn};
use v4l2r::bindings as b;

use super::codec::{
    BitstreamPart, CodecError, OutputPicture, PictureSummary, Request, SequenceChange,
    StatelessCodec, Timestamps,
};
use super::codec::{CodecEntry, CodecOpenError, CodecSetup, Damage, Unsupported};
use super::controls::ExtControl;
use super::discovery::{self, DecoderInfo, ProfileNeed, StreamRequirements};
use super::formats::coded;
use super::level_check::LevelCheck;
use crate::codec::av1::decoder::{Av1Decoder, Event, Frame};
use crate::codec::av1::{Av1Error, NUM_REF_FRAMES};
use crate::media::{Codec, VideoStreamInfo};
use controls::{Av1FilmGrain, Av1Frame, Av1Sequence, Av1TileGroupEntry};

/// AV1's line in the codec registry.
pub static ENTRY: CodecEntry = CodecEntry {
    codec: Codec::Av1,
    coded_format: coded::AV1_FRAME,
    required_controls: &[
        b::V4L2_CID_STATELESS_AV1_SEQUENCE,
        b::V4L2_CID_STATELESS_AV1_FRAME,
        b::V4L2_CID_STATELESS_AV1_TILE_GROUP_ENTRY,
    ],
    menus: &[
        (b::V4L2_CID_MPEG_VIDEO_AV1_PROFILE, "av1 profile"),
        (b::V4L2_CID_MPEG_VIDEO_AV1_LEVEL, "av1 level"),
    ],
    requirements,
    open,
};

/// Reference slots: every picture one holds stays decodable-from and
/// showable again.
const DPB_PICTURES: usize = NUM_REF_FRAMES;
const OUTPUT_BUFFERS: u32 = 4;

/// The container's size, and the profile its pixel layout implies (Main:
/// 4:2:0 of 8 and 10 bits; High: 4:4:4; Professional: 4:2:2 and 12 bits).
fn requirements(stream: &VideoStreamInfo) -> StreamRequirements {
    StreamRequirements::of_container(coded::AV1_FRAME, stream, Some(profile_need(stream)))
}

fn profile_need(stream: &VideoStreamInfo) -> ProfileNeed {
    let layout = stream.pixel_format.as_deref().unwrap_or("yuv420p");
    let profile = if stream.bit_depth > 10 || layout.starts_with("yuv422") {
        b::v4l2_mpeg_video_av1_profile_V4L2_MPEG_VIDEO_AV1_PROFILE_PROFESSIONAL
    } else if layout.starts_with("yuv444") || layout.starts_with("gbr") {
        b::v4l2_mpeg_video_av1_profile_V4L2_MPEG_VIDEO_AV1_PROFILE_HIGH
    } else {
        b::v4l2_mpeg_video_av1_profile_V4L2_MPEG_VIDEO_AV1_PROFILE_MAIN
    };
    // Each profile's decoders take the profiles below it.
    let professional = b::v4l2_mpeg_video_av1_profile_V4L2_MPEG_VIDEO_AV1_PROFILE_PROFESSIONAL;
    ProfileNeed {
        menu: b::V4L2_CID_MPEG_VIDEO_AV1_PROFILE,
        accepted: (profile..=professional).collect(),
        label: format!("AV1 seq_profile {profile} ({layout})"),
    }
}

fn open(info: &DecoderInfo, stream: &VideoStreamInfo) -> Result<CodecSetup, CodecOpenError> {
    let film_grain = discovery::has_control(&info.video_node, b::V4L2_CID_STATELESS_AV1_FILM_GRAIN);
    info!(
        device = %info.video_node.display(),
        film_grain,
        "AV1 through V4L2"
    );
    let levels = LevelCheck::new(info.menu(b::V4L2_CID_MPEG_VIDEO_AV1_LEVEL));
    let codec = Av1Codec::new((stream.width, stream.height), film_grain).with_levels(levels);
    Ok(CodecSetup {
        codec: Box::new(codec),
        initial_controls: Vec::new(),
        dpb_pictures: DPB_PICTURES,
        output_buffers: OUTPUT_BUFFERS,
    })
}

/// The AV1 glue of [`super::decoder::V4l2Decoder`].
pub struct Av1Codec {
    decoder: Av1Decoder<u64>,
    /// The size the session's CAPTURE buffers hold (the container's at
    /// first).
    capture_size: (u32, u32),
    /// The bit depth of the sequence the buffers were chosen for.
    bit_depth: u8,
    /// Whether a frame was decoded (the first one starts a sequence).
    started: bool,
    /// The driver takes `V4L2_CID_STATELESS_AV1_FILM_GRAIN`.
    film_grain: bool,
    /// Whether "grain not applied" was logged.
    grain_warned: bool,
    /// The stream's level against the driver's level menu.
    levels: LevelCheck,
    /// The shown size of every decoded picture still referenced or due.
    sizes: HashMap<u64, (u32, u32)>,
    /// Pictures due for output, in order: AV1 shows frames in decoding
    /// order, hidden ones when a later `show_existing_frame` names them.
    due: Vec<OutputPicture>,
}

impl Av1Codec {
    /// `capture_size`: the size the session was opened with;
    /// `film_grain`: whether the driver has the film grain control.
    pub fn new(capture_size: (u32, u32), film_grain: bool) -> Self {
        Self {
            decoder: Av1Decoder::new(),
            capture_size,
            bit_depth: 8,
            started: false,
            film_grain,
            grain_warned: false,
            levels: LevelCheck::default(),
            sizes: HashMap::new(),
            due: Vec::new(),
        }
    }

    /// `levels`: the driver's level menu (a stream above it is tried, with
    /// a warning).
    pub fn with_levels(mut self, levels: LevelCheck) -> Self {
        self.levels = levels;
        self
    }

    /// Checks the sequence's level (operating point 0): the menu's values
    /// are seq_level_idx (2.0 = 0 ... 7.3 = 23; 31 means no constraints).
    fn check_level(&mut self, frame: &Frame<u64>) {
        let Some(level) = frame
            .sequence
            .operating_points
            .first()
            .map(|op| u32::from(op.seq_level_idx))
        else {
            return;
        };
        self.levels
            .check("AV1", (level <= 23).then_some(level), || {
                format!("{}.{}", 2 + level / 4, level % 4)
            });
    }

    fn check(frame: &Frame<u64>) -> Result<(), CodecError> {
        let c = &frame.sequence.color_config;
        let is_420 = c.subsampling_x && c.subsampling_y && !c.mono_chrome;
        if !is_420 || c.bit_depth > 10 {
            return Err(Unsupported::Av1Format {
                seq_profile: frame.sequence.seq_profile,
                bit_depth: c.bit_depth,
                is_420,
            }
            .into());
        }
        Ok(())
    }

    /// A new sequence when the frame needs other CAPTURE buffers: the
    /// first frame, a new sequence header (or a restart after a seek) of
    /// another largest size or depth, or a frame larger than the buffers.
    /// Buffers hold the sequence's largest frame.
    fn sequence_change(
        &mut self,
        frame: &Frame<u64>,
    ) -> Result<Option<SequenceChange>, CodecError> {
        let seq = &frame.sequence;
        let size = &frame.header.size;
        // SVT-AV1 codes superres frames a little beyond the sequence's
        // maximum: the buffers take the larger of the two.
        let wanted = (
            (seq.max_frame_width_minus_1 + 1).max(size.upscaled_width),
            (seq.max_frame_height_minus_1 + 1).max(size.frame_height),
        );
        let fits = wanted.0 <= self.capture_size.0 && wanted.1 <= self.capture_size.1;
        let depth = seq.color_config.bit_depth;
        let key = frame.header.frame_type == crate::codec::av1::FrameType::Key;
        if self.started && !fits && !key {
            self.decoder.reset();
            return Err(Damage::Av1FrameOutgrowsBuffers {
                buffers: self.capture_size,
                frame: wanted,
            }
            .into());
        }
        let needed = !self.started
            || !fits
            || (frame.new_sequence && (wanted != self.capture_size || depth != self.bit_depth));
        self.started = true;
        if !needed {
            return Ok(None);
        }
        self.capture_size = wanted;
        self.bit_depth = depth;
        Ok(Some(SequenceChange {
            coded_width: wanted.0,
            coded_height: wanted.1,
            dpb_pictures: DPB_PICTURES,
            bit_depth: u32::from(depth),
            controls: vec![ExtControl::typed::<Av1Sequence>(controls::sequence(seq))],
        }))
    }

    fn request(&mut self, frame: &Frame<u64>) -> Result<Request, CodecError> {
        Self::check(frame)?;
        self.check_level(frame);
        let sequence = self.sequence_change(frame)?;
        let h = &frame.header;
        let grain = &h.film_grain;
        if grain.apply_grain && !self.film_grain && !self.grain_warned {
            warn!("AV1 film grain is not applied: the driver has no film grain control");
            self.grain_warned = true;
        }
        debug!(
            timestamp_ns = frame.picture,
            frame_type = ?h.frame_type,
            order_hint = h.order_hint,
            show = h.show_frame,
            width = h.size.upscaled_width,
            height = h.size.frame_height,
            refresh = h.refresh_frame_flags,
            tiles = frame.tile_groups.iter().map(|g| g.group.tiles.len()).sum::<usize>(),
            grain = grain.apply_grain,
            "AV1 frame"
        );
        let slots = frame.slots.map(|s| s.unwrap_or(0));
        let mut controls = vec![
            ExtControl::typed::<Av1Sequence>(controls::sequence(&frame.sequence)),
            ExtControl::typed::<Av1Frame>(controls::frame(h, slots)),
            ExtControl::array::<Av1TileGroupEntry>(controls::tile_group_entries(
                &frame.tile_groups,
            )),
        ];
        // Every request carries it when the driver has it: a request
        // without it would keep an earlier frame's grain.
        if self.film_grain {
            controls.push(ExtControl::typed::<Av1FilmGrain>(controls::film_grain(
                grain,
            )));
        }
        let bitstream = frame
            .tile_groups
            .iter()
            .map(|g| BitstreamPart::Packet(g.obu.start + g.payload_offset..g.obu.end))
            .collect();
        Ok(Request {
            timestamp_ns: frame.picture,
            controls,
            bitstream,
            hold_capture: false,
            sequence,
            summary: PictureSummary {
                kind: h.frame_type.name(),
                order: i32::try_from(h.order_hint).ok(),
                references: if h.frame_type.is_intra() {
                    Vec::new()
                } else {
                    h.ref_frame_idx
                        .iter()
                        .filter_map(|&i| slots.get(usize::from(i)).copied())
                        .collect()
                },
                slices: frame.tile_groups.iter().map(|g| g.group.tiles.len()).sum(),
            },
        })
    }

    fn decode_packet(
        &mut self,
        packet: &[u8],
        timestamps: &mut Timestamps,
    ) -> Result<Vec<Request>, CodecError> {
        let events = self
            .decoder
            .decode_temporal_unit(packet, || timestamps.next_picture())
            .map_err(|e| match e {
                Av1Error::Unsupported(_) => CodecError::Unsupported(Unsupported::Av1(e)),
                e => CodecError::Bitstream(Damage::Av1(e)),
            })?;
        let mut requests = Vec::new();
        // Frames left undecoded; one that is shown is shown in its own
        // temporal unit (no slot keeps it for later).
        let mut left_out = Vec::new();
        for event in events {
            match event {
                Event::Decode(frame) => {
                    // No slot keeps it: nothing later refers to it, nor
                    // shows it again.
                    let is_reference = frame.header.refresh_frame_flags != 0;
                    if timestamps.leaves_out(frame.picture, is_reference) {
                        left_out.push(frame.picture);
                        continue;
                    }
                    let size = &frame.header.size;
                    self.sizes
                        .insert(frame.picture, (size.upscaled_width, size.frame_height));
                    requests.push(self.request(&frame)?);
                }
                Event::Show(picture) => {
                    if let Some(at) = left_out.iter().position(|&p| p == picture) {
                        left_out.swap_remove(at);
                        continue;
                    }
                    let Some(&visible) = self.sizes.get(&picture) else {
                        debug!(picture, "AV1 picture to show is unknown: skipped");
                        continue;
                    };
                    debug!(timestamp_ns = picture, "AV1 picture shown");
                    self.due.push(OutputPicture {
                        timestamp_ns: picture,
                        packet: timestamps.packet(),
                        visible,
                        sample_aspect: (1, 1),
                    });
                }
            }
        }
        self.forget_sizes();
        Ok(requests)
    }

    /// Keeps the sizes of referenced and due pictures only.
    fn forget_sizes(&mut self) {
        let kept = self.decoder.references();
        let due = &self.due;
        self.sizes
            .retain(|p, _| kept.contains(p) || due.iter().any(|d| d.timestamp_ns == *p));
    }
}

impl StatelessCodec for Av1Codec {
    fn decode(
        &mut self,
        packet: &[u8],
        timestamps: &mut Timestamps,
    ) -> Result<Vec<Request>, CodecError> {
        let result = self.decode_packet(packet, timestamps);
        if result.is_err() {
            // None of the packet's requests is sent: nothing of it is
            // shown, and its frames may be in the slots: start again at
            // the next key frame.
            let current = timestamps.packet();
            self.due.retain(|p| p.packet != current);
            self.decoder.reset();
        }
        result
    }

    fn references(&self) -> Vec<u64> {
        self.decoder.references()
    }

    fn take_output(&mut self, _end_of_stream: bool) -> Vec<OutputPicture> {
        std::mem::take(&mut self.due)
    }

    fn reset(&mut self) {
        self.decoder.reset();
        self.due.clear();
        self.sizes.clear();
    }

    fn describe(&self) -> String {
        format!(
            "AV1, one request per frame, film grain {}",
            if self.film_grain {
                "applied by the decoder"
            } else {
                "not applied"
            }
        )
    }
}

#[cfg(test)]
mod tests;
