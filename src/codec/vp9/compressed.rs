//! The compressed header of a VP9 frame (VP9 bitstream specification 6.3),
//! read with the shared boolean decoder into the probability updates a
//! stateless decoder applies itself: for each probability the header
//! updates, `inv_map_table[deltaProb]` (the kernel's `v4l2-vp9` helpers do
//! the rest of `inv_remap_prob`; 0 means "not updated"), and for motion
//! vector probabilities the new probability `(mv_prob << 1) | 1`.

use crate::codec::bitstream::BoolDecoder;

use super::header::{FrameHeader, InterpolationFilter};
use super::Vp9Error;

/// `tx_mode` values.
pub mod tx_mode {
    pub const ONLY_4X4: u8 = 0;
    pub const ALLOW_32X32: u8 = 3;
    pub const TX_MODE_SELECT: u8 = 4;
}

/// `reference_mode` values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReferenceMode {
    #[default]
    Single = 0,
    Compound = 1,
    Select = 2,
}

/// Motion vector probability updates.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MvProbs {
    pub joint: [u8; 3],
    pub sign: [u8; 2],
    pub classes: [[u8; 10]; 2],
    pub class0_bit: [u8; 2],
    pub bits: [[u8; 10]; 2],
    pub class0_fr: [[[u8; 3]; 2]; 2],
    pub fr: [[u8; 3]; 2],
    pub class0_hp: [u8; 2],
    pub hp: [u8; 2],
}

/// Coefficient probability updates: `[tx size][plane type][ref][band][ctx][node]`.
pub type CoefProbs = [[[[[[u8; 3]; 6]; 6]; 2]; 2]; 4];

/// The compressed header: the frame's transform and reference modes and
/// every probability update.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompressedHeader {
    pub tx_mode: u8,
    pub reference_mode: ReferenceMode,
    pub tx8: [[u8; 1]; 2],
    pub tx16: [[u8; 2]; 2],
    pub tx32: [[u8; 3]; 2],
    pub coef: Box<CoefProbs>,
    pub skip: [u8; 3],
    pub inter_mode: [[u8; 3]; 7],
    pub interp_filter: [[u8; 2]; 4],
    pub is_inter: [u8; 4],
    pub comp_mode: [u8; 5],
    pub single_ref: [[u8; 2]; 5],
    pub comp_ref: [u8; 5],
    pub y_mode: [[u8; 9]; 4],
    pub partition: [[u8; 3]; 16],
    pub mv: MvProbs,
}

impl Default for CompressedHeader {
    fn default() -> Self {
        Self {
            tx_mode: 0,
            reference_mode: ReferenceMode::Single,
            tx8: [[0; 1]; 2],
            tx16: [[0; 2]; 2],
            tx32: [[0; 3]; 2],
            coef: Box::new([[[[[[0; 3]; 6]; 6]; 2]; 2]; 4]),
            skip: [0; 3],
            inter_mode: [[0; 3]; 7],
            interp_filter: [[0; 2]; 4],
            is_inter: [0; 4],
            comp_mode: [0; 5],
            single_ref: [[0; 2]; 5],
            comp_ref: [0; 5],
            y_mode: [[0; 9]; 4],
            partition: [[0; 3]; 16],
            mv: MvProbs::default(),
        }
    }
}

/// VP9 6.3.5's `inv_map_table`: the values 7, 20, ..., 254 (every 13th
/// from 7) first, then every other value of 1..=253 in order, and 253
/// again for the largest delta (254).
const fn inv_map_table() -> [u8; 255] {
    let mut table = [253u8; 255];
    let mut i = 0;
    while i < 20 {
        table[i] = (7 + 13 * i) as u8;
        i += 1;
    }
    let mut v = 1;
    while v <= 253 {
        if v % 13 != 7 {
            table[i] = v as u8;
            i += 1;
        }
        v += 1;
    }
    table
}

const INV_MAP_TABLE: [u8; 255] = inv_map_table();

/// Probability of the flag saying a probability is updated.
const UPDATE_PROBABILITY: u8 = 252;

struct Reader<'a>(BoolDecoder<'a>);

impl Reader<'_> {
    fn literal(&mut self, bits: u32) -> Result<u32, Vp9Error> {
        Ok(self.0.read_literal(bits)?)
    }

    /// VP9 6.3.4 `diff_update_prob()`: 0 when not updated, else the
    /// `inv_map_table` entry of the coded delta.
    fn diff_update_prob(&mut self) -> Result<u8, Vp9Error> {
        if !self.0.read_bool(UPDATE_PROBABILITY)? {
            return Ok(0);
        }
        let delta = self.decode_term_subexp()?;
        INV_MAP_TABLE
            .get(delta as usize)
            .copied()
            .ok_or_else(|| Vp9Error::Invalid(format!("probability delta {delta}")))
    }

    /// VP9 6.3.6.
    fn decode_term_subexp(&mut self) -> Result<u32, Vp9Error> {
        if self.literal(1)? == 0 {
            return self.literal(4);
        }
        if self.literal(1)? == 0 {
            return Ok(self.literal(4)? + 16);
        }
        if self.literal(1)? == 0 {
            return Ok(self.literal(5)? + 32);
        }
        let v = self.literal(7)?;
        if v < 65 {
            return Ok(v + 64);
        }
        let bit = self.literal(1)?;
        Ok((v << 1) - 1 + bit)
    }

    fn diff_update_probs(&mut self, probs: &mut [u8]) -> Result<(), Vp9Error> {
        probs
            .iter_mut()
            .try_for_each(|p| self.diff_update_prob().map(|v| *p = v))
    }

    /// VP9 6.3.17 `update_mv_prob()`.
    fn update_mv_prob(&mut self) -> Result<u8, Vp9Error> {
        if !self.0.read_bool(UPDATE_PROBABILITY)? {
            return Ok(0);
        }
        Ok(((self.literal(7)? << 1) | 1) as u8)
    }

    fn update_mv_probs(&mut self, probs: &mut [u8]) -> Result<(), Vp9Error> {
        probs
            .iter_mut()
            .try_for_each(|p| self.update_mv_prob().map(|v| *p = v))
    }
}

impl CompressedHeader {
    /// Reads the compressed header (`data` is exactly its
    /// `header_size_in_bytes` bytes) of the frame `frame` heads.
    pub fn parse(data: &[u8], frame: &FrameHeader) -> Result<Self, Vp9Error> {
        let mut r = Reader(BoolDecoder::vp9(data)?);
        Self::read(&mut r, frame)
    }

    /// [`CompressedHeader::parse`], then VP9 9.2.3 `exit_bool()`: the bits
    /// after the last decision must all be zero. Decoders need not check
    /// it; tests do, as a sign that exactly the coded syntax was read.
    pub fn parse_whole(data: &[u8], frame: &FrameHeader) -> Result<Self, Vp9Error> {
        let mut r = Reader(BoolDecoder::vp9(data)?);
        let h = Self::read(&mut r, frame)?;
        r.0.exit()?;
        Ok(h)
    }

    fn read(r: &mut Reader, frame: &FrameHeader) -> Result<Self, Vp9Error> {
        let mut h = Self::default();
        // 6.3.1 read_tx_mode
        if !frame.quantization.lossless() {
            h.tx_mode = r.literal(2)? as u8;
            if h.tx_mode == tx_mode::ALLOW_32X32 {
                h.tx_mode += r.literal(1)? as u8;
            }
        }
        if h.tx_mode == tx_mode::TX_MODE_SELECT {
            // 6.3.2 tx_mode_probs
            for probs in &mut h.tx8 {
                r.diff_update_probs(probs)?;
            }
            for probs in &mut h.tx16 {
                r.diff_update_probs(probs)?;
            }
            for probs in &mut h.tx32 {
                r.diff_update_probs(probs)?;
            }
        }
        // 6.3.7 read_coef_probs: transform sizes up to the largest allowed.
        let max_tx_size = usize::from(h.tx_mode.min(tx_mode::ALLOW_32X32));
        for tx_size in h.coef.iter_mut().take(max_tx_size + 1) {
            if r.literal(1)? == 0 {
                continue;
            }
            for band_probs in tx_size.iter_mut().flatten() {
                for (band, contexts) in band_probs.iter_mut().enumerate() {
                    let contexts_in_band = if band == 0 { 3 } else { 6 };
                    for probs in contexts.iter_mut().take(contexts_in_band) {
                        r.diff_update_probs(probs)?;
                    }
                }
            }
        }
        r.diff_update_probs(&mut h.skip)?;
        if frame.is_intra() {
            return Ok(h);
        }
        for probs in &mut h.inter_mode {
            r.diff_update_probs(probs)?;
        }
        if frame.interpolation_filter == InterpolationFilter::Switchable {
            for probs in &mut h.interp_filter {
                r.diff_update_probs(probs)?;
            }
        }
        r.diff_update_probs(&mut h.is_inter)?;
        // 6.3.12 frame_reference_mode
        if frame.compound_reference_allowed() && r.literal(1)? == 1 {
            h.reference_mode = if r.literal(1)? == 1 {
                ReferenceMode::Select
            } else {
                ReferenceMode::Compound
            };
        }
        // 6.3.13 frame_reference_mode_probs
        if h.reference_mode == ReferenceMode::Select {
            r.diff_update_probs(&mut h.comp_mode)?;
        }
        if h.reference_mode != ReferenceMode::Compound {
            for probs in &mut h.single_ref {
                r.diff_update_probs(probs)?;
            }
        }
        if h.reference_mode != ReferenceMode::Single {
            r.diff_update_probs(&mut h.comp_ref)?;
        }
        for probs in &mut h.y_mode {
            r.diff_update_probs(probs)?;
        }
        for probs in &mut h.partition {
            r.diff_update_probs(probs)?;
        }
        // 6.3.16 mv_probs
        let mv = &mut h.mv;
        r.update_mv_probs(&mut mv.joint)?;
        for i in 0..2 {
            mv.sign[i] = r.update_mv_prob()?;
            r.update_mv_probs(&mut mv.classes[i])?;
            mv.class0_bit[i] = r.update_mv_prob()?;
            r.update_mv_probs(&mut mv.bits[i])?;
        }
        for i in 0..2 {
            for probs in &mut mv.class0_fr[i] {
                r.update_mv_probs(probs)?;
            }
            r.update_mv_probs(&mut mv.fr[i])?;
        }
        if frame.allow_high_precision_mv {
            for i in 0..2 {
                mv.class0_hp[i] = r.update_mv_prob()?;
                mv.hp[i] = r.update_mv_prob()?;
            }
        }
        Ok(h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inv_map_table_is_the_specifications() {
        assert_eq!(
            &INV_MAP_TABLE[..22],
            &[
                7, 20, 33, 46, 59, 72, 85, 98, 111, 124, 137, 150, 163, 176, 189, 202, 215, 228,
                241, 254, 1, 2
            ]
        );
        assert_eq!(&INV_MAP_TABLE[24..28], &[5, 6, 8, 9]);
        assert_eq!(&INV_MAP_TABLE[252..], &[252, 253, 253]);
        let mut sorted = INV_MAP_TABLE[..254].to_vec();
        sorted.sort_unstable();
        assert_eq!(sorted, (1..=254).collect::<Vec<u8>>());
    }
}
