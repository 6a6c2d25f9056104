//! The uncompressed header of a VP9 frame (VP9 bitstream specification
//! 6.2), read with the shared bit reader under the names FFmpeg's
//! `trace_headers` gives each syntax element, and the state it leaves for
//! later frames: the colour config of the last key or intra-only frame, the
//! loop filter deltas and the segmentation parameters, which persist until
//! a frame updates them or resets them (`setup_past_independence`).

use crate::codec::bitstream::BitReader;

use super::Vp9Error;

const SYNC_CODE: [u32; 3] = [0x49, 0x83, 0x42];
pub const NUM_REF_FRAMES: usize = 8;
pub const REFS_PER_FRAME: usize = 3;
pub const MAX_SEGMENTS: usize = 8;
pub const SEG_LVL_MAX: usize = 4;
/// Bits of each segmentation feature's value, and whether it has a sign.
const FEATURE_BITS: [u32; SEG_LVL_MAX] = [8, 6, 2, 0];
const FEATURE_SIGNED: [bool; SEG_LVL_MAX] = [true, true, false, false];
/// `color_space` value of RGB (4:4:4 only).
pub const CS_RGB: u8 = 7;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColorConfig {
    pub bit_depth: u8,
    pub color_space: u8,
    pub full_range: bool,
    pub subsampling_x: bool,
    pub subsampling_y: bool,
}

impl ColorConfig {
    /// What an intra-only frame of profile 0 uses (it codes none).
    const PROFILE_0_INTRA_ONLY: Self = Self {
        bit_depth: 8,
        color_space: 2, // CS_BT_601
        full_range: false,
        subsampling_x: true,
        subsampling_y: true,
    };

    pub fn is_420(&self) -> bool {
        self.subsampling_x && self.subsampling_y
    }
}

/// Interpolation filters, numbered as libvpx and the kernel number them
/// (the bitstream's 2-bit literal is mapped through `literal_to_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InterpolationFilter {
    EightTap = 0,
    EightTapSmooth = 1,
    EightTapSharp = 2,
    Bilinear = 3,
    Switchable = 4,
}

impl InterpolationFilter {
    fn from_literal(literal: u32) -> Self {
        match literal {
            0 => Self::EightTapSmooth,
            1 => Self::EightTap,
            2 => Self::EightTapSharp,
            _ => Self::Bilinear,
        }
    }
}

/// Loop filter parameters; the deltas persist across frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoopFilter {
    pub level: u8,
    pub sharpness: u8,
    pub delta_enabled: bool,
    pub delta_update: bool,
    /// Indexed by reference frame: intra, last, golden, altref.
    pub ref_deltas: [i8; 4],
    pub mode_deltas: [i8; 2],
}

impl Default for LoopFilter {
    fn default() -> Self {
        Self {
            level: 0,
            sharpness: 0,
            delta_enabled: true,
            delta_update: false,
            ref_deltas: [1, 0, -1, -1],
            mode_deltas: [0, 0],
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Quantization {
    pub base_q_idx: u8,
    pub delta_q_y_dc: i8,
    pub delta_q_uv_dc: i8,
    pub delta_q_uv_ac: i8,
}

impl Quantization {
    pub fn lossless(&self) -> bool {
        self.base_q_idx == 0
            && self.delta_q_y_dc == 0
            && self.delta_q_uv_dc == 0
            && self.delta_q_uv_ac == 0
    }
}

/// Segmentation parameters. The per-frame flags are read every frame;
/// the probabilities and features persist until updated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segmentation {
    pub enabled: bool,
    pub update_map: bool,
    pub temporal_update: bool,
    pub update_data: bool,
    pub abs_or_delta_update: bool,
    pub tree_probs: [u8; 7],
    pub pred_probs: [u8; 3],
    pub feature_enabled: [[bool; SEG_LVL_MAX]; MAX_SEGMENTS],
    pub feature_data: [[i16; SEG_LVL_MAX]; MAX_SEGMENTS],
}

impl Default for Segmentation {
    fn default() -> Self {
        Self {
            enabled: false,
            update_map: false,
            temporal_update: false,
            update_data: false,
            abs_or_delta_update: false,
            tree_probs: [0; 7],
            pred_probs: [0; 3],
            feature_enabled: [[false; SEG_LVL_MAX]; MAX_SEGMENTS],
            feature_data: [[0; SEG_LVL_MAX]; MAX_SEGMENTS],
        }
    }
}

/// What the uncompressed header of one frame leaves for the next ones.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PersistentState {
    /// Of the last key frame or intra-only frame (inter frames code none).
    pub color: Option<ColorConfig>,
    pub loop_filter: LoopFilter,
    pub segmentation: Segmentation,
}

impl PersistentState {
    /// VP9 7.2 `setup_past_independence()`, the uncompressed header's part.
    fn setup_past_independence(&mut self) {
        let segmentation = &mut self.segmentation;
        segmentation.feature_enabled = [[false; SEG_LVL_MAX]; MAX_SEGMENTS];
        segmentation.feature_data = [[0; SEG_LVL_MAX]; MAX_SEGMENTS];
        segmentation.abs_or_delta_update = false;
        let lf = &mut self.loop_filter;
        let defaults = LoopFilter::default();
        lf.delta_enabled = defaults.delta_enabled;
        lf.ref_deltas = defaults.ref_deltas;
        lf.mode_deltas = defaults.mode_deltas;
    }
}

/// The uncompressed header of a frame that is decoded (not a
/// `show_existing_frame` one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameHeader {
    pub profile: u8,
    pub key_frame: bool,
    pub show_frame: bool,
    pub error_resilient_mode: bool,
    pub intra_only: bool,
    /// As coded: 0 and 1 reset nothing, 2 the context `frame_context_idx`
    /// names, 3 all of them.
    pub reset_frame_context: u8,
    pub color: ColorConfig,
    pub refresh_frame_flags: u8,
    /// Slots of the last, golden and altref references (inter frames).
    pub ref_frame_idx: [u8; REFS_PER_FRAME],
    /// Sign bias of last, golden, altref (inter frames).
    pub ref_frame_sign_bias: [bool; REFS_PER_FRAME],
    pub width: u32,
    pub height: u32,
    pub render_width: u32,
    pub render_height: u32,
    pub allow_high_precision_mv: bool,
    pub interpolation_filter: InterpolationFilter,
    pub refresh_frame_context: bool,
    pub frame_parallel_decoding_mode: bool,
    pub frame_context_idx: u8,
    pub loop_filter: LoopFilter,
    pub quantization: Quantization,
    pub segmentation: Segmentation,
    pub tile_cols_log2: u8,
    pub tile_rows_log2: u8,
    /// Size of the compressed header that follows.
    pub header_size_in_bytes: u16,
    /// Size of this header, trailing bits included.
    pub uncompressed_header_size: usize,
}

impl FrameHeader {
    /// Whether later frames depend on this one: it is stored in a
    /// reference slot, or the probabilities adapted while decoding it are
    /// kept for later frames (`refresh_frame_context` without error
    /// resilience; the adaptation happens where it is decoded).
    pub fn is_reference(&self) -> bool {
        self.refresh_frame_flags != 0 || (self.refresh_frame_context && !self.error_resilient_mode)
    }

    /// `FrameIsIntra`.
    pub fn is_intra(&self) -> bool {
        self.key_frame || self.intra_only
    }

    /// Whether compound prediction is possible (VP9 6.3.12: a reference
    /// with a sign bias differing from the last frame's).
    pub fn compound_reference_allowed(&self) -> bool {
        !self.is_intra()
            && self.ref_frame_sign_bias[1..]
                .iter()
                .any(|&b| b != self.ref_frame_sign_bias[0])
    }
}

/// One frame's uncompressed header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Frame {
    /// A frame to decode.
    Decode(Box<FrameHeader>),
    /// `show_existing_frame`: the picture in slot `slot` is shown again.
    ShowExisting { profile: u8, slot: u8 },
}

/// Reads the uncompressed header at the start of `r`'s data.
/// `ref_size(slot)` is the frame size held by a reference slot (for
/// `frame_size_with_refs`); the persistent state is updated as the
/// specification says, before any error late in the header.
pub fn parse(
    r: &mut BitReader,
    state: &mut PersistentState,
    ref_size: impl Fn(usize) -> Option<(u32, u32)>,
) -> Result<Frame, Vp9Error> {
    let frame_marker = r.u(2, "frame_marker")?;
    if frame_marker != 2 {
        return Err(Vp9Error::Invalid(format!("frame_marker {frame_marker}")));
    }
    let low = r.u(1, "profile_low_bit")?;
    let high = r.u(1, "profile_high_bit")?;
    let profile = ((high << 1) | low) as u8;
    if profile == 3 {
        r.u(1, "reserved_zero")?;
    }
    if r.flag("show_existing_frame")? {
        let slot = r.u(3, "frame_to_show_map_idx")? as u8;
        trailing_bits(r)?;
        return Ok(Frame::ShowExisting { profile, slot });
    }
    let key_frame = !r.flag("frame_type")?;
    let show_frame = r.flag("show_frame")?;
    let error_resilient_mode = r.flag("error_resilient_mode")?;
    let mut intra_only = false;
    let mut reset_frame_context = 0;
    let mut ref_frame_idx = [0u8; REFS_PER_FRAME];
    let mut ref_frame_sign_bias = [false; REFS_PER_FRAME];
    let mut allow_high_precision_mv = false;
    let mut interpolation_filter = InterpolationFilter::EightTap;
    let color;
    let refresh_frame_flags;
    let (width, height, render_width, render_height);
    if key_frame {
        frame_sync_code(r)?;
        color = color_config(r, profile)?;
        (width, height) = frame_size(r)?;
        (render_width, render_height) = render_size(r, (width, height))?;
        refresh_frame_flags = 0xff;
    } else {
        if !show_frame {
            intra_only = r.flag("intra_only")?;
        }
        if !error_resilient_mode {
            reset_frame_context = r.u(2, "reset_frame_context")? as u8;
        }
        if intra_only {
            frame_sync_code(r)?;
            color = if profile > 0 {
                color_config(r, profile)?
            } else {
                ColorConfig::PROFILE_0_INTRA_ONLY
            };
            refresh_frame_flags = r.u(8, "refresh_frame_flags")? as u8;
            (width, height) = frame_size(r)?;
            (render_width, render_height) = render_size(r, (width, height))?;
        } else {
            // Before any key frame (damage, a seek) the frame cannot be
            // decoded anyway: its references are missing.
            color = state.color.unwrap_or(ColorConfig::PROFILE_0_INTRA_ONLY);
            refresh_frame_flags = r.u(8, "refresh_frame_flags")? as u8;
            for i in 0..REFS_PER_FRAME {
                ref_frame_idx[i] = r.u(3, "ref_frame_idx")? as u8;
                ref_frame_sign_bias[i] = r.flag("ref_frame_sign_bias")?;
            }
            (width, height) = frame_size_with_refs(r, &ref_frame_idx, &ref_size)?;
            (render_width, render_height) = render_size(r, (width, height))?;
            allow_high_precision_mv = r.flag("allow_high_precision_mv")?;
            interpolation_filter = if r.flag("is_filter_switchable")? {
                InterpolationFilter::Switchable
            } else {
                InterpolationFilter::from_literal(r.u(2, "raw_interpolation_filter_type")?)
            };
        }
    }
    let (refresh_frame_context, frame_parallel_decoding_mode) = if error_resilient_mode {
        (false, true)
    } else {
        (
            r.flag("refresh_frame_context")?,
            r.flag("frame_parallel_decoding_mode")?,
        )
    };
    let frame_context_idx = r.u(2, "frame_context_idx")? as u8;
    if key_frame || intra_only {
        state.color = Some(color);
    }
    if key_frame || intra_only || error_resilient_mode {
        state.setup_past_independence();
    }
    loop_filter_params(r, &mut state.loop_filter)?;
    let quantization = quantization_params(r)?;
    segmentation_params(r, &mut state.segmentation)?;
    let (tile_cols_log2, tile_rows_log2) = tile_info(r, width)?;
    let header_size_in_bytes = r.u(16, "header_size_in_bytes")? as u16;
    trailing_bits(r)?;
    if header_size_in_bytes == 0 {
        return Err(Vp9Error::Invalid("a compressed header of 0 bytes".into()));
    }
    Ok(Frame::Decode(Box::new(FrameHeader {
        profile,
        key_frame,
        show_frame,
        error_resilient_mode,
        intra_only,
        reset_frame_context,
        color,
        refresh_frame_flags,
        ref_frame_idx,
        ref_frame_sign_bias,
        width,
        height,
        render_width,
        render_height,
        allow_high_precision_mv,
        interpolation_filter,
        refresh_frame_context,
        frame_parallel_decoding_mode,
        frame_context_idx,
        loop_filter: state.loop_filter,
        quantization,
        segmentation: state.segmentation,
        tile_cols_log2,
        tile_rows_log2,
        header_size_in_bytes,
        uncompressed_header_size: r.position() / 8,
    })))
}

fn frame_sync_code(r: &mut BitReader) -> Result<(), Vp9Error> {
    let names = [
        "frame_sync_byte_0",
        "frame_sync_byte_1",
        "frame_sync_byte_2",
    ];
    for (name, expected) in names.into_iter().zip(SYNC_CODE) {
        let byte = r.u(8, name)?;
        if byte != expected {
            return Err(Vp9Error::Invalid(format!(
                "{name} is {byte:#x}, not {expected:#x}"
            )));
        }
    }
    Ok(())
}

/// VP9 6.2.2.
fn color_config(r: &mut BitReader, profile: u8) -> Result<ColorConfig, Vp9Error> {
    let bit_depth = if profile >= 2 {
        if r.flag("ten_or_twelve_bit")? {
            12
        } else {
            10
        }
    } else {
        8
    };
    let color_space = r.u(3, "color_space")? as u8;
    let odd_profile = profile == 1 || profile == 3;
    let (full_range, subsampling_x, subsampling_y) = if color_space != CS_RGB {
        let full_range = r.flag("color_range")?;
        if odd_profile {
            let x = r.flag("subsampling_x")?;
            let y = r.flag("subsampling_y")?;
            r.u(1, "reserved_zero")?;
            (full_range, x, y)
        } else {
            (full_range, true, true)
        }
    } else {
        if odd_profile {
            r.u(1, "reserved_zero")?;
        }
        (true, false, false)
    };
    Ok(ColorConfig {
        bit_depth,
        color_space,
        full_range,
        subsampling_x,
        subsampling_y,
    })
}

fn frame_size(r: &mut BitReader) -> Result<(u32, u32), Vp9Error> {
    let width = r.u(16, "frame_width_minus_1")? + 1;
    let height = r.u(16, "frame_height_minus_1")? + 1;
    Ok((width, height))
}

fn render_size(r: &mut BitReader, frame: (u32, u32)) -> Result<(u32, u32), Vp9Error> {
    if !r.flag("render_and_frame_size_different")? {
        return Ok(frame);
    }
    let width = r.u(16, "render_width_minus_1")? + 1;
    let height = r.u(16, "render_height_minus_1")? + 1;
    Ok((width, height))
}

/// VP9 6.2.5: the size of the first reference marked `found_ref`, else
/// coded.
fn frame_size_with_refs(
    r: &mut BitReader,
    ref_frame_idx: &[u8; REFS_PER_FRAME],
    ref_size: &impl Fn(usize) -> Option<(u32, u32)>,
) -> Result<(u32, u32), Vp9Error> {
    for &slot in ref_frame_idx {
        if r.flag("found_ref")? {
            return ref_size(usize::from(slot)).ok_or_else(|| {
                Vp9Error::MissingReference(format!("the size of empty reference slot {slot}"))
            });
        }
    }
    frame_size(r)
}

/// VP9 6.2.8; the deltas update `lf`'s persistent ones.
fn loop_filter_params(r: &mut BitReader, lf: &mut LoopFilter) -> Result<(), Vp9Error> {
    lf.level = r.u(6, "loop_filter_level")? as u8;
    lf.sharpness = r.u(3, "loop_filter_sharpness")? as u8;
    lf.delta_enabled = r.flag("loop_filter_delta_enabled")?;
    lf.delta_update = false;
    if !lf.delta_enabled {
        return Ok(());
    }
    lf.delta_update = r.flag("loop_filter_delta_update")?;
    if !lf.delta_update {
        return Ok(());
    }
    for delta in &mut lf.ref_deltas {
        if r.flag("update_ref_delta")? {
            *delta = r.sign_magnitude(6, "loop_filter_ref_deltas")? as i8;
        }
    }
    for delta in &mut lf.mode_deltas {
        if r.flag("update_mode_delta")? {
            *delta = r.sign_magnitude(6, "loop_filter_mode_deltas")? as i8;
        }
    }
    Ok(())
}

/// VP9 6.2.9 and 6.2.10.
fn quantization_params(r: &mut BitReader) -> Result<Quantization, Vp9Error> {
    let base_q_idx = r.u(8, "base_q_idx")? as u8;
    let mut delta = |coded: &'static str, value: &'static str| -> Result<i8, Vp9Error> {
        Ok(if r.flag(coded)? {
            r.sign_magnitude(4, value)? as i8
        } else {
            0
        })
    };
    Ok(Quantization {
        base_q_idx,
        delta_q_y_dc: delta("delta_q_y_dc.delta_coded", "delta_q_y_dc.delta_q")?,
        delta_q_uv_dc: delta("delta_q_uv_dc.delta_coded", "delta_q_uv_dc.delta_q")?,
        delta_q_uv_ac: delta("delta_q_uv_ac.delta_coded", "delta_q_uv_ac.delta_q")?,
    })
}

/// VP9 6.2.12 `read_prob()`.
fn read_prob(r: &mut BitReader, coded: &'static str, prob: &'static str) -> Result<u8, Vp9Error> {
    Ok(if r.flag(coded)? {
        r.u(8, prob)? as u8
    } else {
        255
    })
}

/// VP9 6.2.11; updates the persistent segmentation parameters.
fn segmentation_params(r: &mut BitReader, s: &mut Segmentation) -> Result<(), Vp9Error> {
    s.update_map = false;
    s.temporal_update = false;
    s.update_data = false;
    s.enabled = r.flag("segmentation_enabled")?;
    if !s.enabled {
        return Ok(());
    }
    s.update_map = r.flag("segmentation_update_map")?;
    if s.update_map {
        for prob in &mut s.tree_probs {
            *prob = read_prob(
                r,
                "segmentation_tree_probs.prob_coded",
                "segmentation_tree_probs.prob",
            )?;
        }
        s.temporal_update = r.flag("segmentation_temporal_update")?;
        for prob in &mut s.pred_probs {
            *prob = if s.temporal_update {
                read_prob(
                    r,
                    "segmentation_pred_prob.prob_coded",
                    "segmentation_pred_prob.prob",
                )?
            } else {
                255
            };
        }
    }
    s.update_data = r.flag("segmentation_update_data")?;
    if !s.update_data {
        return Ok(());
    }
    s.abs_or_delta_update = r.flag("segmentation_abs_or_delta_update")?;
    for segment in 0..MAX_SEGMENTS {
        for feature in 0..SEG_LVL_MAX {
            let enabled = r.flag("feature_enabled")?;
            let mut value = 0i16;
            if enabled && FEATURE_BITS[feature] > 0 {
                value = r.u(FEATURE_BITS[feature], "feature_value")? as i16;
                if FEATURE_SIGNED[feature] && r.flag("feature_sign")? {
                    value = -value;
                }
            }
            s.feature_enabled[segment][feature] = enabled;
            s.feature_data[segment][feature] = value;
        }
    }
    Ok(())
}

/// VP9 6.2.13, with the limits of 6.2.14 from the frame width.
fn tile_info(r: &mut BitReader, width: u32) -> Result<(u8, u8), Vp9Error> {
    let mi_cols = (width + 7) >> 3;
    let sb64_cols = (mi_cols + 7) >> 3;
    let mut min_log2 = 0;
    while (64 << min_log2) < sb64_cols {
        min_log2 += 1;
    }
    let mut max_log2 = 1;
    while (sb64_cols >> max_log2) >= 4 {
        max_log2 += 1;
    }
    let max_log2 = (max_log2 - 1).max(min_log2);
    let cols = r.increment(min_log2, max_log2, "tile_cols_log2")?;
    let rows = r.increment(0, 2, "tile_rows_log2")?;
    Ok((cols as u8, rows as u8))
}

/// Zero bits up to the next byte boundary.
fn trailing_bits(r: &mut BitReader) -> Result<(), Vp9Error> {
    while !r.is_byte_aligned() {
        r.u(1, "zero_bit")?;
    }
    Ok(())
}
