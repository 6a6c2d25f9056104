//! The boolean entropy decoder of VP8 (RFC 6386 section 7) and VP9 (VP9
//! bitstream specification 9.2): each call decodes one bool whose chance
//! of being 0 is `probability / 256`.
//!
//! Written as VP9 9.2 puts it: an 8-bit window `value` of the input and a
//! `range` in 128..=255 after each decision, renormalised by shifting input
//! bits in. RFC 6386 keeps 8 more bits of look-ahead in its `value`; the
//! decisions are the same. Past the end of the input the decoder reads
//! zero bits, as both specifications do; a decision taken when the whole
//! window lies past the end reads nothing but that filling and is an error.

use thiserror::Error;

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum BoolError {
    #[error("boolean-coded data is empty")]
    Empty,
    #[error("boolean-coded data ends {bits} bits before a decision that needs it")]
    PastEnd { bits: usize },
    #[error("the marker bit at the start of boolean-coded data is 1")]
    Marker,
    #[error("the padding after boolean-coded data is not zero")]
    Padding,
    #[error("a {bits}-bit literal is wider than the 32 bits it can return")]
    TooWide { bits: u32 },
    #[error("tree index {index} is outside a decoding tree of {len} entries")]
    BadTree { index: usize, len: usize },
}

#[derive(Debug, Clone)]
pub struct BoolDecoder<'a> {
    data: &'a [u8],
    /// Next input bit, counted from the first bit of `data`; beyond
    /// `8 * data.len()` the bits read were zero filling.
    bit_pos: usize,
    /// The 8-bit window (`BoolValue`), always below `range`.
    value: u32,
    /// `BoolRange`: 128..=255 between decisions.
    range: u32,
}

impl<'a> BoolDecoder<'a> {
    /// Starts decoding `data` (RFC 6386 7.3 `init_bool_decoder`; VP9 9.2.1
    /// without its marker bit, see [`BoolDecoder::vp9`]).
    pub fn new(data: &'a [u8]) -> Result<Self, BoolError> {
        let &first = data.first().ok_or(BoolError::Empty)?;
        Ok(Self {
            data,
            bit_pos: 8,
            value: u32::from(first),
            range: 255,
        })
    }

    /// VP9 9.2.1 `init_bool(sz)`: [`BoolDecoder::new`], then the marker
    /// bit, which must be 0.
    pub fn vp9(data: &'a [u8]) -> Result<Self, BoolError> {
        let mut d = Self::new(data)?;
        if d.read_bool(128)? {
            return Err(BoolError::Marker);
        }
        Ok(d)
    }

    /// One bool that is 0 with probability `probability / 256`.
    pub fn read_bool(&mut self, probability: u8) -> Result<bool, BoolError> {
        let past = self.bits_past_end();
        if past >= 8 {
            return Err(BoolError::PastEnd { bits: past });
        }
        let split = 1 + (((self.range - 1) * u32::from(probability)) >> 8);
        let bit = if self.value < split {
            self.range = split;
            false
        } else {
            self.range -= split;
            self.value -= split;
            true
        };
        // Shift until range is back in 128..=255 (range >= 1 always).
        let shift = self.range.leading_zeros() - 24;
        if shift > 0 {
            self.range <<= shift;
            self.value = (self.value << shift) | self.next_bits(shift);
        }
        Ok(bit)
    }

    /// A bool of probability one half (`L(1)`, VP9's `read_bool(128)`).
    pub fn read_flag(&mut self) -> Result<bool, BoolError> {
        self.read_bool(128)
    }

    /// `L(n)` (VP8) / `read_literal(n)` (VP9): `bits` bools of probability
    /// one half, most significant first; bits <= 32.
    pub fn read_literal(&mut self, bits: u32) -> Result<u32, BoolError> {
        if bits > 32 {
            return Err(BoolError::TooWide { bits });
        }
        let mut value = 0u64;
        for _ in 0..bits {
            value = (value << 1) | u64::from(self.read_flag()?);
        }
        Ok(value as u32)
    }

    /// VP8's signed fields (quantiser and loop filter deltas, RFC 6386
    /// 9.3, 9.6): a `bits`-bit magnitude `L(bits)`, then a sign flag (1 is
    /// negative).
    pub fn read_signed(&mut self, bits: u32) -> Result<i32, BoolError> {
        let magnitude = self.read_literal(bits)? as i64;
        let value = if self.read_flag()? {
            -magnitude
        } else {
            magnitude
        };
        // A 32-bit magnitude does not fit an i32 signed; saturate rather
        // than wrap (no VP8 field is wider than 7 bits).
        Ok(value.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32)
    }

    /// A value coded as a binary tree (RFC 6386 8.1 `treed_read`; VP9 trees
    /// read the same way):
    /// `tree[i]` and `tree[i + 1]` are the two branches of node `i`, a
    /// positive entry the index of the next node, zero or negative a leaf
    /// holding its value negated; `probabilities[i / 2]` is node `i`'s.
    /// A tree that points outside itself, or not forwards (both
    /// specifications lay trees out forwards) is an error.
    pub fn read_tree(&mut self, tree: &[i8], probabilities: &[u8]) -> Result<u8, BoolError> {
        let mut i = 0usize;
        loop {
            let &p = probabilities.get(i / 2).ok_or(BoolError::BadTree {
                index: i,
                len: tree.len(),
            })?;
            let branch = i + usize::from(self.read_bool(p)?);
            let &next = tree.get(branch).ok_or(BoolError::BadTree {
                index: branch,
                len: tree.len(),
            })?;
            if next <= 0 {
                return Ok(next.unsigned_abs());
            }
            if next as usize <= i {
                return Err(BoolError::BadTree {
                    index: next as usize,
                    len: tree.len(),
                });
            }
            i = next as usize;
        }
    }

    /// Input bits taken in so far: the 8 of the first window and one per
    /// renormalising shift, zero filling past the end included.
    pub fn position(&self) -> usize {
        self.bit_pos
    }

    /// Bytes of the input the decoder has read from (at most all of them).
    pub fn bytes_consumed(&self) -> usize {
        self.bit_pos.div_ceil(8).min(self.data.len())
    }

    /// Zero bits read past the end of the input so far.
    pub fn bits_past_end(&self) -> usize {
        self.bit_pos.saturating_sub(8 * self.data.len())
    }

    /// `BoolRange` (128..=255 between decisions).
    pub fn range(&self) -> u32 {
        self.range
    }

    /// `BoolValue`: the 8-bit window, below `range`.
    pub fn value(&self) -> u32 {
        self.value
    }

    /// VP9 9.2.3 `exit_bool`: the input bits not yet read are padding and
    /// must all be zero.
    pub fn exit(self) -> Result<(), BoolError> {
        let start = self.bit_pos.min(8 * self.data.len());
        let (first_byte, bit) = (start / 8, start % 8);
        let Some(rest) = self.data.get(first_byte..) else {
            return Ok(());
        };
        let partial = rest.first().is_some_and(|&b| b & (0xff >> bit) != 0);
        if partial || rest.iter().skip(1).any(|&b| b != 0) {
            return Err(BoolError::Padding);
        }
        Ok(())
    }

    /// The next `n` (<= 8) input bits, zeros past the end.
    fn next_bits(&mut self, n: u32) -> u32 {
        let mut out = 0;
        for _ in 0..n {
            let bit = self
                .data
                .get(self.bit_pos / 8)
                .map_or(0, |&b| (b >> (7 - self.bit_pos % 8)) & 1);
            out = (out << 1) | u32::from(bit);
            self.bit_pos += 1;
        }
        out
    }
}

#[cfg(test)]
mod tests;
