//! The uncompressed frame header (5.9): frame type and visibility,
//! references, sizes, and every parameter set the decoder needs, with the
//! reference slots' state it reads (order hints, sizes, primary reference
//! frame's saved parameters).

use crate::codec::bitstream::BitReader;

use super::film_grain::FilmGrainParams;
use super::global_motion::{default_gm_params, GlobalMotion, GmParams};
use super::params::{
    increment, Cdef, DeltaParams, LoopFilter, LoopFilterDeltas, LoopRestoration, Quantization,
    Segmentation, SegmentationFeatures, MAX_SEGMENTS,
};
use super::refs::{self, RefFrameState, RefFrames};
use super::sequence::{SequenceHeader, SELECT};
use super::tile_info::TileInfo;
use super::{
    Av1Error, ObuHeader, MAX_OPERATING_POINTS, NUM_REF_FRAMES, PRIMARY_REF_NONE, REFS_PER_FRAME,
};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum FrameType {
    #[default]
    Key,
    Inter,
    IntraOnly,
    Switch,
}

impl FrameType {
    fn from_code(code: u32) -> Self {
        match code {
            0 => Self::Key,
            1 => Self::Inter,
            2 => Self::IntraOnly,
            _ => Self::Switch,
        }
    }

    /// The name logs give it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Key => "key",
            Self::Inter => "inter",
            Self::IntraOnly => "intra-only",
            Self::Switch => "switch",
        }
    }

    /// The value `frame_type` is coded with.
    pub fn code(self) -> u8 {
        self as u8
    }

    pub fn is_intra(self) -> bool {
        matches!(self, Self::Key | Self::IntraOnly)
    }
}

/// The frame's sizes (5.9.5-5.9.8).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FrameSize {
    pub frame_width: u32,
    pub frame_height: u32,
    pub upscaled_width: u32,
    pub render_width: u32,
    pub render_height: u32,
    pub use_superres: bool,
    /// `SuperresDenom` (8 without superres).
    pub superres_denom: u32,
    pub mi_cols: u32,
    pub mi_rows: u32,
}

impl FrameSize {
    /// superres_params() and compute_image_size() over a width before
    /// superres.
    fn superres(&mut self, r: &mut BitReader, seq: &SequenceHeader) -> Result<(), Av1Error> {
        self.use_superres = seq.enable_superres && r.flag("use_superres")?;
        self.superres_denom = if self.use_superres {
            r.u(3, "coded_denom")? + 9
        } else {
            8
        };
        self.upscaled_width = self.frame_width;
        self.frame_width =
            (self.upscaled_width * 8 + self.superres_denom / 2) / self.superres_denom;
        self.mi_cols = 2 * ((self.frame_width + 7) >> 3);
        self.mi_rows = 2 * ((self.frame_height + 7) >> 3);
        Ok(())
    }

    /// frame_size() then render_size().
    fn parse(
        r: &mut BitReader,
        seq: &SequenceHeader,
        frame_size_override_flag: bool,
    ) -> Result<Self, Av1Error> {
        let mut s = Self::default();
        if frame_size_override_flag {
            let wbits = u32::from(seq.frame_width_bits_minus_1) + 1;
            let hbits = u32::from(seq.frame_height_bits_minus_1) + 1;
            s.frame_width = r.u(wbits, "frame_width_minus_1")? + 1;
            // Not checked against the sequence's maximum: SVT-AV1 1.4 codes
            // superres frames padded to 8 beyond it, and dav1d plays them.
            s.frame_height = r.u(hbits, "frame_height_minus_1")? + 1;
        } else {
            s.frame_width = seq.max_frame_width_minus_1 + 1;
            s.frame_height = seq.max_frame_height_minus_1 + 1;
        }
        s.superres(r, seq)?;
        if r.flag("render_and_frame_size_different")? {
            s.render_width = r.u(16, "render_width_minus_1")? + 1;
            s.render_height = r.u(16, "render_height_minus_1")? + 1;
        } else {
            s.render_width = s.upscaled_width;
            s.render_height = s.frame_height;
        }
        Ok(s)
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FrameHeader {
    pub show_existing_frame: bool,
    pub frame_to_show_map_idx: u8,
    pub frame_presentation_time: u32,
    pub display_frame_id: u32,
    pub frame_type: FrameType,
    pub show_frame: bool,
    pub showable_frame: bool,
    pub error_resilient_mode: bool,
    pub disable_cdf_update: bool,
    pub allow_screen_content_tools: bool,
    pub force_integer_mv: bool,
    pub current_frame_id: u32,
    pub frame_size_override_flag: bool,
    pub order_hint: u32,
    pub primary_ref_frame: u8,
    pub buffer_removal_time_present_flag: bool,
    /// `buffer_removal_time` per operating point (0 where not coded).
    pub buffer_removal_time: [u32; MAX_OPERATING_POINTS],
    pub refresh_frame_flags: u8,
    pub ref_order_hint: [u32; NUM_REF_FRAMES],
    pub allow_intrabc: bool,
    pub frame_refs_short_signaling: bool,
    pub last_frame_idx: u8,
    pub gold_frame_idx: u8,
    /// The slot of each reference (LAST_FRAME..=ALTREF_FRAME).
    pub ref_frame_idx: [u8; REFS_PER_FRAME],
    pub size: FrameSize,
    pub allow_high_precision_mv: bool,
    pub is_filter_switchable: bool,
    /// 0..=3, or 4 (SWITCHABLE) when switchable.
    pub interpolation_filter: u8,
    pub is_motion_mode_switchable: bool,
    pub use_ref_frame_mvs: bool,
    /// `OrderHints` per reference frame (index 0, INTRA_FRAME, unused).
    pub order_hints: [u32; 8],
    pub ref_frame_sign_bias: [bool; 8],
    pub disable_frame_end_update_cdf: bool,
    pub tile_info: TileInfo,
    pub quantization: Quantization,
    pub segmentation: Segmentation,
    pub delta: DeltaParams,
    pub coded_lossless: bool,
    pub all_lossless: bool,
    pub loop_filter: LoopFilter,
    pub cdef: Cdef,
    pub loop_restoration: LoopRestoration,
    /// `TxMode`: 0 ONLY_4X4, 1 TX_MODE_LARGEST, 2 TX_MODE_SELECT.
    pub tx_mode: u8,
    pub reference_select: bool,
    pub skip_mode_present: bool,
    /// `SkipModeFrame[0..2]` (reference frames 1..=7), when allowed.
    pub skip_mode_frame: [u8; 2],
    pub allow_warped_motion: bool,
    pub reduced_tx_set: bool,
    pub global_motion: GlobalMotion,
    pub film_grain: FilmGrainParams,
    /// Bits of the header, from its first bit (before byte_alignment()).
    pub header_bits: usize,
}

/// The primary reference frame's saved parameters (setup_past_
/// independence() defaults without one).
struct Previous {
    loop_filter: LoopFilterDeltas,
    segmentation: SegmentationFeatures,
    gm_params: GmParams,
}

impl FrameHeader {
    /// Whether the frame is KEY_FRAME or INTRA_ONLY_FRAME.
    pub fn frame_is_intra(&self) -> bool {
        self.frame_type.is_intra()
    }

    /// uncompressed_header() from the reader's position (the frame header
    /// OBU's payload); `refs` is the slots' state before this frame.
    pub fn parse(
        r: &mut BitReader,
        seq: &SequenceHeader,
        obu: &ObuHeader,
        refs: &RefFrames,
    ) -> Result<Self, Av1Error> {
        let start = r.position();
        let mut h = Self::default();
        let id_len = seq.frame_id_length();
        let presentation_time_bits = u32::from(
            seq.decoder_model_info
                .frame_presentation_time_length_minus_1,
        ) + 1;
        let timed = seq.decoder_model_info_present_flag && !seq.timing_info.equal_picture_interval;
        if seq.reduced_still_picture_header {
            h.show_frame = true;
        } else {
            h.show_existing_frame = r.flag("show_existing_frame")?;
            if h.show_existing_frame {
                h.frame_to_show_map_idx = r.u(3, "frame_to_show_map_idx")? as u8;
                if timed {
                    h.frame_presentation_time =
                        r.u(presentation_time_bits, "frame_presentation_time")?;
                }
                if seq.frame_id_numbers_present_flag {
                    h.display_frame_id = r.u(id_len, "display_frame_id")?;
                }
                let shown = refs
                    .get(usize::from(h.frame_to_show_map_idx))
                    .ok_or(Av1Error::MissingReference(h.frame_to_show_map_idx))?;
                h.frame_type = shown.frame_type;
                h.show_frame = true;
                if h.frame_type == FrameType::Key {
                    h.refresh_frame_flags = 0xff;
                }
                h.film_grain = shown.film_grain.clone();
                h.header_bits = r.position() - start;
                return Ok(h);
            }
            h.frame_type = FrameType::from_code(r.u(2, "frame_type")?);
            h.show_frame = r.flag("show_frame")?;
            if h.show_frame && timed {
                h.frame_presentation_time =
                    r.u(presentation_time_bits, "frame_presentation_time")?;
            }
            h.showable_frame = if h.show_frame {
                h.frame_type != FrameType::Key
            } else {
                r.flag("showable_frame")?
            };
            h.error_resilient_mode = h.frame_type == FrameType::Switch
                || (h.frame_type == FrameType::Key && h.show_frame)
                || r.flag("error_resilient_mode")?;
        }
        // A shown key frame resets the slots: their order hints count as 0.
        let reset = h.frame_type == FrameType::Key && h.show_frame;
        let slot_hint = |i: usize| {
            if reset {
                0
            } else {
                refs.get(i).map_or(0, |s| s.order_hint)
            }
        };
        h.disable_cdf_update = r.flag("disable_cdf_update")?;
        h.allow_screen_content_tools = if seq.seq_force_screen_content_tools == SELECT {
            r.flag("allow_screen_content_tools")?
        } else {
            seq.seq_force_screen_content_tools == 1
        };
        if h.allow_screen_content_tools {
            h.force_integer_mv = if seq.seq_force_integer_mv == SELECT {
                r.flag("force_integer_mv")?
            } else {
                seq.seq_force_integer_mv == 1
            };
        }
        if h.frame_is_intra() {
            h.force_integer_mv = true;
        }
        if seq.frame_id_numbers_present_flag {
            h.current_frame_id = r.u(id_len, "current_frame_id")?;
        }
        h.frame_size_override_flag = h.frame_type == FrameType::Switch
            || (!seq.reduced_still_picture_header && r.flag("frame_size_override_flag")?);
        if seq.enable_order_hint {
            h.order_hint = r.u(seq.order_hint_bits(), "order_hint")?;
        }
        h.primary_ref_frame = if h.frame_is_intra() || h.error_resilient_mode {
            PRIMARY_REF_NONE
        } else {
            r.u(3, "primary_ref_frame")? as u8
        };
        if seq.decoder_model_info_present_flag {
            h.buffer_removal_time_present_flag = r.flag("buffer_removal_time_present_flag")?;
            if h.buffer_removal_time_present_flag {
                let bits = u32::from(seq.decoder_model_info.buffer_removal_time_length_minus_1) + 1;
                for (i, op) in seq.operating_points.iter().enumerate() {
                    if !op.decoder_model_present_for_this_op {
                        continue;
                    }
                    let idc = op.operating_point_idc;
                    let in_temporal = (idc >> obu.temporal_id) & 1 == 1;
                    let in_spatial = (idc >> (u16::from(obu.spatial_id) + 8)) & 1 == 1;
                    if idc == 0 || (in_temporal && in_spatial) {
                        let time = r.u(bits, "buffer_removal_time")?;
                        if let Some(slot) = h.buffer_removal_time.get_mut(i) {
                            *slot = time;
                        }
                    }
                }
            }
        }
        h.refresh_frame_flags = if h.frame_type == FrameType::Switch || reset {
            0xff
        } else {
            r.u(8, "refresh_frame_flags")? as u8
        };
        if h.frame_type == FrameType::IntraOnly && h.refresh_frame_flags == 0xff {
            return Err(Av1Error::Invalid("intra-only frame refreshing every slot"));
        }
        for (i, hint) in h.ref_order_hint.iter_mut().enumerate() {
            *hint = slot_hint(i);
        }
        if (!h.frame_is_intra() || h.refresh_frame_flags != 0xff)
            && h.error_resilient_mode
            && seq.enable_order_hint
        {
            for hint in h.ref_order_hint.iter_mut() {
                *hint = r.u(seq.order_hint_bits(), "ref_order_hint")?;
            }
        }
        if h.frame_is_intra() {
            h.size = FrameSize::parse(r, seq, h.frame_size_override_flag)?;
            if h.allow_screen_content_tools && h.size.upscaled_width == h.size.frame_width {
                h.allow_intrabc = r.flag("allow_intrabc")?;
            }
        } else {
            h.parse_inter_refs(r, seq, refs)?;
        }
        h.disable_frame_end_update_cdf = seq.reduced_still_picture_header
            || h.disable_cdf_update
            || r.flag("disable_frame_end_update_cdf")?;
        let previous = h.previous(refs)?;
        h.tile_info = TileInfo::parse(
            r,
            h.size.mi_cols,
            h.size.mi_rows,
            seq.use_128x128_superblock,
        )?;
        h.quantization = Quantization::parse(r, seq)?;
        h.segmentation = Segmentation::parse(
            r,
            h.primary_ref_frame == PRIMARY_REF_NONE,
            previous.segmentation,
        )?;
        h.delta = DeltaParams::parse(r, h.quantization.base_q_idx, h.allow_intrabc)?;
        h.coded_lossless = (0..MAX_SEGMENTS).all(|id| {
            let q = h.segmentation.qindex(h.quantization.base_q_idx, id);
            h.quantization.lossless_at(q)
        });
        h.all_lossless = h.coded_lossless && h.size.frame_width == h.size.upscaled_width;
        let num_planes = seq.color_config.num_planes();
        let no_filters = h.coded_lossless || h.allow_intrabc;
        h.loop_filter = LoopFilter::parse(
            r,
            num_planes,
            no_filters,
            previous.loop_filter,
            h.primary_ref_frame == PRIMARY_REF_NONE,
        )?;
        h.cdef = Cdef::parse(r, num_planes, no_filters || !seq.enable_cdef)?;
        h.loop_restoration = LoopRestoration::parse(
            r,
            seq,
            h.all_lossless || h.allow_intrabc || !seq.enable_restoration,
        )?;
        h.tx_mode = if h.coded_lossless {
            0
        } else {
            increment(r, "tx_mode", 1, 2)? as u8
        };
        h.reference_select = !h.frame_is_intra() && r.flag("reference_select")?;
        let skip_frames = if h.frame_is_intra() || !h.reference_select || !seq.enable_order_hint {
            None
        } else {
            let hints = h.ref_frame_idx.map(|i| h.ref_order_hint[usize::from(i)]);
            refs::skip_mode_frames(seq, &hints, h.order_hint)
        };
        if let Some(frames) = skip_frames {
            h.skip_mode_present = r.flag("skip_mode_present")?;
            h.skip_mode_frame = frames;
        }
        h.allow_warped_motion = !h.frame_is_intra()
            && !h.error_resilient_mode
            && seq.enable_warped_motion
            && r.flag("allow_warped_motion")?;
        h.reduced_tx_set = r.flag("reduced_tx_set")?;
        h.global_motion = GlobalMotion::parse(
            r,
            h.frame_is_intra(),
            h.allow_high_precision_mv,
            &previous.gm_params,
        )?;
        let ref_frame_idx = h.ref_frame_idx;
        h.film_grain = FilmGrainParams::parse(
            r,
            seq,
            h.show_frame || h.showable_frame,
            h.frame_type == FrameType::Inter,
            |idx| {
                // The slot must be one of the frame's references.
                ref_frame_idx
                    .contains(&idx)
                    .then(|| refs.get(usize::from(idx)).map(|s| s.film_grain.clone()))
                    .flatten()
            },
        )?;
        h.header_bits = r.position() - start;
        Ok(h)
    }

    /// The reference part of an inter or switch frame's header: which slots
    /// it uses, its size, motion vector precision and filters.
    fn parse_inter_refs(
        &mut self,
        r: &mut BitReader,
        seq: &SequenceHeader,
        refs: &RefFrames,
    ) -> Result<(), Av1Error> {
        let h = self;
        if seq.enable_order_hint {
            h.frame_refs_short_signaling = r.flag("frame_refs_short_signaling")?;
        }
        if h.frame_refs_short_signaling {
            h.last_frame_idx = r.u(3, "last_frame_idx")? as u8;
            h.gold_frame_idx = r.u(3, "golden_frame_idx")? as u8;
            h.ref_frame_idx =
                refs::set_frame_refs(seq, refs, h.order_hint, h.last_frame_idx, h.gold_frame_idx)
                    .ok_or(Av1Error::Invalid(
                    "short reference signalling over an empty slot",
                ))?;
        }
        let delta_bits = u32::from(seq.delta_frame_id_length_minus_2) + 2;
        for i in 0..REFS_PER_FRAME {
            if !h.frame_refs_short_signaling {
                h.ref_frame_idx[i] = r.u(3, "ref_frame_idx")? as u8;
            }
            if seq.frame_id_numbers_present_flag {
                r.u(delta_bits, "delta_frame_id_minus1")?;
            }
        }
        let slot = |i: u8| {
            refs.get(usize::from(i))
                .ok_or(Av1Error::MissingReference(i))
        };
        for &i in &h.ref_frame_idx {
            slot(i)?;
        }
        if h.frame_size_override_flag && !h.error_resilient_mode {
            // frame_size_with_refs(): the size of a reference, or coded.
            let mut found = None;
            for &i in &h.ref_frame_idx {
                if r.flag("found_ref")? {
                    found = Some(slot(i)?);
                    break;
                }
            }
            h.size = match found {
                None => FrameSize::parse(r, seq, true)?,
                Some(s) => {
                    let mut size = FrameSize {
                        frame_width: s.upscaled_width,
                        frame_height: s.frame_height,
                        render_width: s.render_width,
                        render_height: s.render_height,
                        ..FrameSize::default()
                    };
                    size.superres(r, seq)?;
                    size
                }
            };
        } else {
            h.size = FrameSize::parse(r, seq, h.frame_size_override_flag)?;
        }
        h.allow_high_precision_mv = !h.force_integer_mv && r.flag("allow_high_precision_mv")?;
        h.is_filter_switchable = r.flag("is_filter_switchable")?;
        h.interpolation_filter = if h.is_filter_switchable {
            4
        } else {
            r.u(2, "interpolation_filter")? as u8
        };
        h.is_motion_mode_switchable = r.flag("is_motion_mode_switchable")?;
        h.use_ref_frame_mvs =
            !h.error_resilient_mode && seq.enable_ref_frame_mvs && r.flag("use_ref_frame_mvs")?;
        for i in 0..REFS_PER_FRAME {
            let hint = h.ref_order_hint[usize::from(h.ref_frame_idx[i])];
            h.order_hints[i + 1] = hint;
            h.ref_frame_sign_bias[i + 1] =
                seq.enable_order_hint && seq.relative_dist(hint, h.order_hint) > 0;
        }
        Ok(())
    }

    /// load_previous() or setup_past_independence().
    fn previous(&self, refs: &RefFrames) -> Result<Previous, Av1Error> {
        if self.primary_ref_frame == PRIMARY_REF_NONE {
            return Ok(Previous {
                loop_filter: LoopFilterDeltas::default(),
                segmentation: SegmentationFeatures::default(),
                gm_params: default_gm_params(),
            });
        }
        let idx = self.ref_frame_idx[usize::from(self.primary_ref_frame)];
        let slot = refs
            .get(usize::from(idx))
            .ok_or(Av1Error::MissingReference(idx))?;
        Ok(Previous {
            loop_filter: slot.loop_filter_deltas,
            segmentation: slot.segmentation,
            gm_params: slot.gm_params,
        })
    }

    /// What the slots in `refresh_frame_flags` keep of this frame (7.20).
    pub fn ref_state(&self, seq: &SequenceHeader) -> RefFrameState {
        let c = &seq.color_config;
        RefFrameState {
            frame_id: self.current_frame_id,
            frame_type: self.frame_type,
            upscaled_width: self.size.upscaled_width,
            frame_width: self.size.frame_width,
            frame_height: self.size.frame_height,
            render_width: self.size.render_width,
            render_height: self.size.render_height,
            mi_cols: self.size.mi_cols,
            mi_rows: self.size.mi_rows,
            order_hint: self.order_hint,
            saved_order_hints: self.order_hints,
            loop_filter_deltas: self.loop_filter.deltas,
            segmentation: self.segmentation.features,
            gm_params: self.global_motion.gm_params,
            film_grain: self.film_grain.clone(),
            bit_depth: c.bit_depth,
            subsampling_x: c.subsampling_x,
            subsampling_y: c.subsampling_y,
            showable_frame: self.showable_frame,
        }
    }
}
