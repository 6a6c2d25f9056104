//! The VP8 frame header (RFC 6386 9 and 19.2): the uncompressed frame tag
//! and key frame start, then the first partition's header through the
//! boolean decoder, up to the first macroblock. Segmentation, loop filter
//! deltas and probabilities persist from frame to frame: [`StreamState`]
//! carries them.

use thiserror::Error;

use super::tables::{
    CoeffProbs, MvProbs, COEFF_UPDATE_PROBS, DEFAULT_COEFF_PROBS, DEFAULT_MV_PROBS,
    DEFAULT_UV_MODE_PROBS, DEFAULT_Y_MODE_PROBS, MV_UPDATE_PROBS,
};
use crate::codec::bitstream::{BoolDecoder, BoolError};

/// The start code after a key frame's tag (RFC 6386 9.1).
pub const KEY_FRAME_START_CODE: [u8; 3] = [0x9d, 0x01, 0x2a];
/// The DCT partitions a frame may have at most.
pub const MAX_DCT_PARTITIONS: usize = 8;

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Vp8Error {
    #[error("VP8 frame of {0} bytes: shorter than its tag")]
    Short(usize),
    #[error("VP8 key frame without its start code")]
    StartCode,
    #[error("VP8 key frame of size {0}x{1}")]
    EmptySize(u32, u32),
    #[error("VP8 inter frame before any key frame")]
    NoKeyFrame,
    #[error("VP8 first partition of {size} bytes past the frame's {available}")]
    FirstPartition { size: usize, available: usize },
    #[error("VP8 DCT partitions: {0}")]
    Partitions(String),
    #[error("VP8 frame header: {0}")]
    Bool(#[from] BoolError),
}

/// RFC 6386 9.1: the 3-byte frame tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameTag {
    pub key_frame: bool,
    pub version: u8,
    pub show_frame: bool,
    pub first_part_size: u32,
}

impl FrameTag {
    pub fn parse(frame: &[u8]) -> Result<Self, Vp8Error> {
        let &[a, b, c, ..] = frame else {
            return Err(Vp8Error::Short(frame.len()));
        };
        let raw = u32::from(a) | u32::from(b) << 8 | u32::from(c) << 16;
        Ok(Self {
            key_frame: raw & 1 == 0,
            version: ((raw >> 1) & 7) as u8,
            show_frame: (raw >> 4) & 1 == 1,
            first_part_size: raw >> 5,
        })
    }

    /// Where the first partition starts: after the tag, and a key frame's
    /// start code and size.
    pub fn first_part_offset(&self) -> usize {
        if self.key_frame {
            10
        } else {
            3
        }
    }
}

/// Segment-based adjustments (RFC 6386 9.3), as they stand after a frame.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Segmentation {
    pub enabled: bool,
    pub update_map: bool,
    pub update_data: bool,
    /// `segment_feature_mode`: values replace the frame's (true) or add to it.
    pub absolute: bool,
    pub quant: [i8; 4],
    pub lf: [i8; 4],
    /// `mb_segment_tree_probs`: 255 where a map update sends none; kept
    /// from the last map update otherwise.
    pub tree_probs: [u8; 3],
}

/// Loop filter deltas per reference frame and per mode (RFC 6386 9.6).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LoopFilterDeltas {
    pub ref_frame: [i8; 4],
    pub mode: [i8; 4],
}

/// The probabilities a frame decodes with (RFC 6386 13, 16.2, 17.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntropyProbs {
    pub coeff: CoeffProbs,
    pub y_mode: [u8; 4],
    pub uv_mode: [u8; 3],
    pub mv: MvProbs,
}

impl Default for EntropyProbs {
    fn default() -> Self {
        Self {
            coeff: DEFAULT_COEFF_PROBS,
            y_mode: DEFAULT_Y_MODE_PROBS,
            uv_mode: DEFAULT_UV_MODE_PROBS,
            mv: DEFAULT_MV_PROBS,
        }
    }
}

/// What persists from one frame's header to the next.
#[derive(Debug, Clone, Default)]
pub struct StreamState {
    pub segmentation: Segmentation,
    pub lf_deltas: LoopFilterDeltas,
    /// The probabilities the next frame starts from.
    pub probs: EntropyProbs,
    /// Whether a key frame has been parsed since the start (or a reset).
    pub seen_key_frame: bool,
    /// The last key frame's size and upscaling codes, which inter frames keep.
    pub frame_size: (u16, u16),
    pub frame_scale: (u8, u8),
}

/// Quantiser indices (RFC 6386 9.6).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QuantIndices {
    pub y_ac_qi: u8,
    pub y_dc_delta: i8,
    pub y2_dc_delta: i8,
    pub y2_ac_delta: i8,
    pub uv_dc_delta: i8,
    pub uv_ac_delta: i8,
}

/// Where the reference slots' pictures go after an inter frame (RFC 6386 9.7).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RefreshFlags {
    pub golden: bool,
    pub altref: bool,
    /// `copy_buffer_to_golden`: 0 none, 1 last frame, 2 altref.
    pub copy_to_golden: u8,
    /// `copy_buffer_to_alternate`: 0 none, 1 last frame, 2 golden.
    pub copy_to_altref: u8,
    pub last: bool,
}

/// The boolean decoder's state after the header (the kernel's
/// `v4l2_vp8_entropy_coder_state`): hardware resumes decoding there.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CoderState {
    pub range: u8,
    pub value: u8,
    /// Bits of the current input byte still to be shifted in.
    pub bit_count: u8,
}

/// One parsed frame header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameHeader {
    pub tag: FrameTag,
    /// Key frames only (inter frames keep the key frame's): 14-bit sizes
    /// and 2-bit upscaling codes.
    pub width: u16,
    pub height: u16,
    pub horizontal_scale: u8,
    pub vertical_scale: u8,
    pub color_space: bool,
    pub clamping_type: bool,
    pub segmentation: Segmentation,
    pub filter_simple: bool,
    pub loop_filter_level: u8,
    pub sharpness_level: u8,
    pub lf_adj_enable: bool,
    pub lf_delta_update: bool,
    pub lf_deltas: LoopFilterDeltas,
    pub dct_partitions: u8,
    pub quant: QuantIndices,
    pub refresh: RefreshFlags,
    pub sign_bias_golden: bool,
    pub sign_bias_altref: bool,
    pub refresh_entropy_probs: bool,
    /// The probabilities this frame decodes with (updates applied).
    pub probs: EntropyProbs,
    pub mb_no_coeff_skip: bool,
    pub prob_skip_false: u8,
    pub prob_intra: u8,
    pub prob_last: u8,
    pub prob_gf: u8,
    /// Bits of the first partition the header took, the boolean decoder's
    /// first 8-bit window not counted (`first_part_header_bits`).
    pub header_bits: u32,
    pub coder_state: CoderState,
    /// Sizes of the DCT partitions, the last one running to the frame's end.
    pub dct_partition_sizes: Vec<u32>,
}

impl FrameHeader {
    /// Whether a later frame may predict from this one: a key frame, or
    /// one stored in a reference slot (copies between slots store none).
    pub fn is_reference(&self) -> bool {
        self.is_key_frame() || self.refresh.last || self.refresh.golden || self.refresh.altref
    }

    pub fn is_key_frame(&self) -> bool {
        self.tag.key_frame
    }
}

/// Parses the header of `frame` and updates `state` as the frame leaves it
/// (`refresh_entropy_probs` = 0 keeps this frame's probability updates out
/// of the next frame's). On error `state` is unchanged.
pub fn parse_frame(frame: &[u8], state: &mut StreamState) -> Result<FrameHeader, Vp8Error> {
    let tag = FrameTag::parse(frame)?;
    let (mut width, mut height, mut horizontal_scale, mut vertical_scale) = (0, 0, 0, 0);
    if tag.key_frame {
        let start = frame.get(3..10).ok_or(Vp8Error::Short(frame.len()))?;
        if start[..3] != KEY_FRAME_START_CODE {
            return Err(Vp8Error::StartCode);
        }
        let w = u16::from_le_bytes([start[3], start[4]]);
        let h = u16::from_le_bytes([start[5], start[6]]);
        (width, height) = (w & 0x3fff, h & 0x3fff);
        (horizontal_scale, vertical_scale) = ((w >> 14) as u8, (h >> 14) as u8);
        if width == 0 || height == 0 {
            return Err(Vp8Error::EmptySize(width.into(), height.into()));
        }
    } else if !state.seen_key_frame {
        return Err(Vp8Error::NoKeyFrame);
    }
    let offset = tag.first_part_offset();
    let size = tag.first_part_size as usize;
    let available = frame.len().saturating_sub(offset);
    if size > available || size == 0 {
        return Err(Vp8Error::FirstPartition { size, available });
    }
    let first = &frame[offset..offset + size];

    let mut next = state.clone();
    if tag.key_frame {
        // RFC 6386 9.3, 9.6, 9.11: a key frame starts from the defaults;
        // the segment tree probabilities stay until a map update sends new
        // ones (as libvpx keeps them).
        next.segmentation = Segmentation {
            tree_probs: next.segmentation.tree_probs,
            ..Segmentation::default()
        };
        next.lf_deltas = LoopFilterDeltas::default();
        next.probs = EntropyProbs::default();
        next.seen_key_frame = true;
    }
    let mut d = BoolDecoder::new(first)?;
    let (color_space, clamping_type) = if tag.key_frame {
        (d.read_flag()?, d.read_flag()?)
    } else {
        (false, false)
    };
    read_segmentation(&mut d, &mut next.segmentation)?;
    let filter_simple = d.read_flag()?;
    let loop_filter_level = d.read_literal(6)? as u8;
    let sharpness_level = d.read_literal(3)? as u8;
    let lf_adj_enable = d.read_flag()?;
    let lf_delta_update = lf_adj_enable && d.read_flag()?;
    if lf_delta_update {
        for delta in next
            .lf_deltas
            .ref_frame
            .iter_mut()
            .chain(next.lf_deltas.mode.iter_mut())
        {
            if let Some(value) = optional_signed(&mut d, 6)? {
                *delta = value;
            }
        }
    }
    let dct_partitions = 1u8 << d.read_literal(2)?;
    let quant = read_quant(&mut d)?;
    let mut refresh = RefreshFlags::default();
    let (mut sign_bias_golden, mut sign_bias_altref) = (false, false);
    let refresh_entropy_probs;
    if tag.key_frame {
        refresh = RefreshFlags {
            golden: true,
            altref: true,
            last: true,
            ..RefreshFlags::default()
        };
        refresh_entropy_probs = d.read_flag()?;
    } else {
        refresh.golden = d.read_flag()?;
        refresh.altref = d.read_flag()?;
        if !refresh.golden {
            refresh.copy_to_golden = d.read_literal(2)? as u8;
        }
        if !refresh.altref {
            refresh.copy_to_altref = d.read_literal(2)? as u8;
        }
        sign_bias_golden = d.read_flag()?;
        sign_bias_altref = d.read_flag()?;
        refresh_entropy_probs = d.read_flag()?;
        refresh.last = d.read_flag()?;
    }
    // The probabilities from before this frame's updates come back after it
    // when it does not refresh them (RFC 6386 9.8).
    let saved = (!refresh_entropy_probs).then(|| next.probs.clone());
    read_coeff_updates(&mut d, &mut next.probs.coeff)?;
    let mb_no_coeff_skip = d.read_flag()?;
    let prob_skip_false = if mb_no_coeff_skip {
        d.read_literal(8)? as u8
    } else {
        0
    };
    let (mut prob_intra, mut prob_last, mut prob_gf) = (0, 0, 0);
    if !tag.key_frame {
        prob_intra = d.read_literal(8)? as u8;
        prob_last = d.read_literal(8)? as u8;
        prob_gf = d.read_literal(8)? as u8;
        if d.read_flag()? {
            for p in &mut next.probs.y_mode {
                *p = d.read_literal(8)? as u8;
            }
        }
        if d.read_flag()? {
            for p in &mut next.probs.uv_mode {
                *p = d.read_literal(8)? as u8;
            }
        }
        read_mv_updates(&mut d, &mut next.probs.mv)?;
    }
    let header_bits = d.position().saturating_sub(8) as u32;
    let coder_state = CoderState {
        range: d.range() as u8,
        value: d.value() as u8,
        bit_count: ((8 - header_bits % 8) % 8) as u8,
    };
    let dct_partition_sizes = partition_sizes(frame, offset + size, dct_partitions.into())?;

    let probs = next.probs.clone();
    if let Some(saved) = saved {
        next.probs = saved;
    }
    if !tag.key_frame {
        // Inter frames keep the size of the key frame before them.
        width = state.frame_size.0;
        height = state.frame_size.1;
        horizontal_scale = state.frame_scale.0;
        vertical_scale = state.frame_scale.1;
    } else {
        next.frame_size = (width, height);
        next.frame_scale = (horizontal_scale, vertical_scale);
    }
    let header = FrameHeader {
        tag,
        width,
        height,
        horizontal_scale,
        vertical_scale,
        color_space,
        clamping_type,
        segmentation: next.segmentation,
        filter_simple,
        loop_filter_level,
        sharpness_level,
        lf_adj_enable,
        lf_delta_update,
        lf_deltas: next.lf_deltas,
        dct_partitions,
        quant,
        refresh,
        sign_bias_golden,
        sign_bias_altref,
        refresh_entropy_probs,
        probs,
        mb_no_coeff_skip,
        prob_skip_false,
        prob_intra,
        prob_last,
        prob_gf,
        header_bits,
        coder_state,
        dct_partition_sizes,
    };
    *state = next;
    Ok(header)
}

/// RFC 6386 9.3 `update_segmentation()`.
fn read_segmentation(d: &mut BoolDecoder, seg: &mut Segmentation) -> Result<(), Vp8Error> {
    seg.enabled = d.read_flag()?;
    seg.update_map = false;
    seg.update_data = false;
    if !seg.enabled {
        return Ok(());
    }
    seg.update_map = d.read_flag()?;
    seg.update_data = d.read_flag()?;
    if seg.update_data {
        seg.absolute = d.read_flag()?;
        for q in &mut seg.quant {
            *q = optional_signed(d, 7)?.unwrap_or(0);
        }
        for lf in &mut seg.lf {
            *lf = optional_signed(d, 6)?.unwrap_or(0);
        }
    }
    if seg.update_map {
        for p in &mut seg.tree_probs {
            *p = if d.read_flag()? {
                d.read_literal(8)? as u8
            } else {
                255
            };
        }
    }
    Ok(())
}

/// RFC 6386 9.6 `quant_indices()`.
fn read_quant(d: &mut BoolDecoder) -> Result<QuantIndices, Vp8Error> {
    let y_ac_qi = d.read_literal(7)? as u8;
    let mut delta = || -> Result<i8, Vp8Error> { Ok(optional_signed(d, 4)?.unwrap_or(0)) };
    Ok(QuantIndices {
        y_ac_qi,
        y_dc_delta: delta()?,
        y2_dc_delta: delta()?,
        y2_ac_delta: delta()?,
        uv_dc_delta: delta()?,
        uv_ac_delta: delta()?,
    })
}

/// A flag, then when set a signed `bits`-bit value (bits <= 7).
fn optional_signed(d: &mut BoolDecoder, bits: u32) -> Result<Option<i8>, Vp8Error> {
    if !d.read_flag()? {
        return Ok(None);
    }
    Ok(Some(d.read_signed(bits)? as i8))
}

/// RFC 6386 13.4 `token_prob_update()`.
fn read_coeff_updates(d: &mut BoolDecoder, coeff: &mut CoeffProbs) -> Result<(), Vp8Error> {
    for (i, bands) in coeff.iter_mut().enumerate() {
        for (j, contexts) in bands.iter_mut().enumerate() {
            for (k, nodes) in contexts.iter_mut().enumerate() {
                for (l, p) in nodes.iter_mut().enumerate() {
                    if d.read_bool(COEFF_UPDATE_PROBS[i][j][k][l])? {
                        *p = d.read_literal(8)? as u8;
                    }
                }
            }
        }
    }
    Ok(())
}

/// RFC 6386 17.2 `mv_prob_update()`: 7-bit values, 0 meaning 1.
fn read_mv_updates(d: &mut BoolDecoder, mv: &mut MvProbs) -> Result<(), Vp8Error> {
    for (i, probs) in mv.iter_mut().enumerate() {
        for (j, p) in probs.iter_mut().enumerate() {
            if d.read_bool(MV_UPDATE_PROBS[i][j])? {
                let x = d.read_literal(7)? as u8;
                *p = if x == 0 { 1 } else { x << 1 };
            }
        }
    }
    Ok(())
}

/// RFC 6386 9.5: after the first partition, 3-byte sizes of all DCT
/// partitions but the last, which takes the rest of the frame.
fn partition_sizes(frame: &[u8], start: usize, count: usize) -> Result<Vec<u32>, Vp8Error> {
    let table_len = 3 * (count - 1);
    let table = frame
        .get(start..start + table_len)
        .ok_or_else(|| Vp8Error::Partitions(format!("{count} partitions' size table cut")))?;
    let mut sizes: Vec<u32> = table
        .chunks_exact(3)
        .map(|s| u32::from(s[0]) | u32::from(s[1]) << 8 | u32::from(s[2]) << 16)
        .collect();
    let listed: usize = sizes.iter().map(|&s| s as usize).sum();
    let data = frame.len() - start - table_len;
    let last = data.checked_sub(listed).ok_or_else(|| {
        Vp8Error::Partitions(format!(
            "sizes add up to {listed} bytes, the frame has {data}"
        ))
    })?;
    sizes.push(last as u32);
    Ok(sizes)
}
