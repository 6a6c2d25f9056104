//! MSB-first bit reader with the reads video codec headers are made of:
//! fixed-length and exp-Golomb codes (H.264/HEVC), little-endian bytes
//! (VP8/VP9/AV1 `le(n)`), and AV1's `leb128()`, `su(n)`, `ns(n)` and
//! `uvlc()`.
//!
//! A reader made with [`BitReader::rbsp`] reads a NAL unit as it is in the
//! stream and passes over its emulation prevention bytes (`00 00 03`) on the
//! fly: positions then count RBSP bits, as if the NAL unit had been
//! unescaped first, and the bytes passed over are counted apart.
//!
//! Every read takes the syntax element's name: errors say which element was
//! cut short or out of range, and an optional trace records `(bit position,
//! name, value)` so tests can compare a parser with FFmpeg's `trace_headers`.

use thiserror::Error;

use super::rbsp::is_emulation_prevention_byte;

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ReadError {
    #[error("bitstream ends inside {0}")]
    Truncated(&'static str),
    #[error("exp-Golomb code of {0} is longer than 32 bits")]
    GolombTooLong(&'static str),
    #[error("{name} = {value} is outside {min}..={max}")]
    OutOfRange {
        name: &'static str,
        value: i64,
        min: i64,
        max: i64,
    },
    /// A read asked for more bits than its result type holds: a caller's
    /// mistake or a width taken from damaged data, never truncated silently.
    #[error("{name}: a {bits}-bit read is wider than the {max} bits it can return")]
    TooWide {
        name: &'static str,
        bits: u32,
        max: u32,
    },
    #[error("leb128 code of {0} is longer than 8 bytes")]
    Leb128TooLong(&'static str),
}

/// A read of `bits` into a result of `max` bits: [`ReadError::TooWide`]
/// when it does not fit.
#[inline]
fn check_width(bits: u32, max: u32, name: &'static str) -> Result<(), ReadError> {
    if bits > max {
        return Err(ReadError::TooWide { name, bits, max });
    }
    Ok(())
}

/// One syntax element as read: bit offset where it starts, name, value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceEntry {
    pub position: usize,
    pub name: &'static str,
    pub value: i64,
}

/// Where the next bit is; restored as a whole when a read fails, so a
/// failed read consumes nothing.
#[derive(Debug, Clone, Copy, Default)]
struct Cursor {
    /// Byte of the input holding the next bit.
    byte: usize,
    /// Bits of that byte already consumed (0..8).
    bit: u32,
    /// Bits read, emulation prevention bytes not counted.
    pos: usize,
    /// Emulation prevention bytes passed over.
    skipped: usize,
}

pub struct BitReader<'a> {
    data: &'a [u8],
    /// Whether `00 00 03` is read as `00 00` (a NAL unit's escaped payload).
    escaped: bool,
    cursor: Cursor,
    trace: Option<Vec<TraceEntry>>,
}

impl<'a> BitReader<'a> {
    /// A reader of `data` as is (an RBSP already unescaped, or a VP8/VP9/AV1
    /// header, which have no emulation prevention).
    pub fn new(data: &'a [u8]) -> Self {
        Self {
            data,
            escaped: false,
            cursor: Cursor::default(),
            trace: None,
        }
    }

    /// A reader of the RBSP inside `nal`, a NAL unit as found in the stream
    /// (H.264/HEVC): every `03` after `00 00` is passed over.
    pub fn rbsp(nal: &'a [u8]) -> Self {
        Self {
            escaped: true,
            ..Self::new(nal)
        }
    }

    /// Starts recording every syntax element read from now on.
    pub fn enable_trace(&mut self) {
        self.trace = Some(Vec::new());
    }

    pub fn take_trace(&mut self) -> Vec<TraceEntry> {
        self.trace.take().unwrap_or_default()
    }

    /// Bits consumed so far; in an RBSP reader, bits of the RBSP (the
    /// emulation prevention bytes passed over are not counted).
    pub fn position(&self) -> usize {
        self.cursor.pos
    }

    /// Emulation prevention bytes passed over so far (0 unless made with
    /// [`BitReader::rbsp`]). Only bytes before the bits already read count.
    pub fn emulation_prevention_bytes(&self) -> usize {
        self.cursor.skipped
    }

    /// Bits of the input consumed so far, emulation prevention bytes
    /// passed over included: `position() + 8 * emulation_prevention_bytes()`.
    pub fn escaped_position(&self) -> usize {
        self.cursor.byte * 8 + self.cursor.bit as usize
    }

    /// Bits that can still be read. In an RBSP reader this scans the rest
    /// of the input for emulation prevention bytes.
    pub fn bits_left(&self) -> usize {
        let raw = self.bits_left_at_most();
        if !self.escaped {
            return raw;
        }
        let Cursor { byte, bit, .. } = self.cursor;
        // The byte being read is past its own check already.
        let first_unchecked = if bit == 0 { byte } else { byte + 1 };
        let ahead = (first_unchecked..self.data.len())
            .filter(|&i| is_emulation_prevention_byte(self.data, i))
            .count();
        raw - 8 * ahead
    }

    /// An upper bound of `bits_left()` that costs nothing: the input's
    /// bits not yet consumed, emulation prevention bytes counted as bits.
    pub fn bits_left_at_most(&self) -> usize {
        let Cursor { byte, bit, .. } = self.cursor;
        (self.data.len() * 8).saturating_sub(byte * 8 + bit as usize)
    }

    pub fn is_byte_aligned(&self) -> bool {
        self.cursor.bit == 0
    }

    fn record(&mut self, position: usize, name: &'static str, value: i64) {
        if let Some(trace) = &mut self.trace {
            trace.push(TraceEntry {
                position,
                name,
                value,
            });
        }
    }

    /// Passes over an emulation prevention byte if the next bit starts one.
    fn step_over_escape(c: &mut Cursor, data: &[u8], escaped: bool) {
        if escaped && c.bit == 0 && is_emulation_prevention_byte(data, c.byte) {
            c.byte += 1;
            c.skipped += 1;
        }
    }

    /// Moves over `n` bits, handing each byte's share to `each(bits, count)`.
    /// On a short input nothing moves.
    fn advance(
        &mut self,
        mut n: usize,
        name: &'static str,
        mut each: impl FnMut(u32, u32),
    ) -> Result<(), ReadError> {
        let mut c = self.cursor;
        while n > 0 {
            Self::step_over_escape(&mut c, self.data, self.escaped);
            let &byte = self.data.get(c.byte).ok_or(ReadError::Truncated(name))?;
            let avail = 8 - c.bit;
            let count = avail.min(n.min(8) as u32);
            let bits = (u32::from(byte) >> (avail - count)) & ((1 << count) - 1);
            each(bits, count);
            c.bit += count;
            if c.bit == 8 {
                c.bit = 0;
                c.byte += 1;
            }
            c.pos += count as usize;
            n -= count as usize;
        }
        self.cursor = c;
        Ok(())
    }

    /// The next 32 bits, left-aligned in a word, when they can be taken
    /// in one load: eight input bytes remain and, in an RBSP reader, none
    /// of the bytes they span may be an emulation prevention byte (any
    /// `03` sends the read the careful way). Most header reads take this.
    fn window(&self) -> Option<u32> {
        let Cursor { byte, bit, .. } = self.cursor;
        let bytes: [u8; 8] = self.data.get(byte..byte + 8)?.try_into().ok()?;
        // Bytes 0..5 hold the 32 bits after `bit`; the byte being read was
        // checked when its first bit was.
        let first_unchecked = usize::from(bit != 0);
        if self.escaped && bytes[first_unchecked..5].contains(&3) {
            return None;
        }
        Some(((u64::from_be_bytes(bytes) << bit) >> 32) as u32)
    }

    /// Moves over `n` bits known to hold no emulation prevention byte.
    fn consume(&mut self, n: u32) {
        let c = &mut self.cursor;
        let total = c.bit + n;
        c.byte += (total / 8) as usize;
        c.bit = total % 8;
        c.pos += n as usize;
    }

    /// `n` bits (n <= 64) as an unsigned value, not traced.
    fn bits(&mut self, n: u32, name: &'static str) -> Result<u64, ReadError> {
        if (1..=32).contains(&n) {
            if let Some(window) = self.window() {
                self.consume(n);
                return Ok(u64::from(window >> (32 - n)));
            }
        }
        check_width(n, 64, name)?;
        let mut value = 0u64;
        self.advance(n as usize, name, |bits, count| {
            value = (value << count) | u64::from(bits);
        })?;
        Ok(value)
    }

    /// `u(n)` (`f(n)` in VP9/AV1): an unsigned value of `n` bits, n <= 32.
    pub fn u(&mut self, n: u32, name: &'static str) -> Result<u32, ReadError> {
        check_width(n, 32, name)?;
        let start = self.cursor.pos;
        let value = self.bits(n, name)? as u32;
        self.record(start, name, i64::from(value));
        Ok(value)
    }

    /// The next `n` bits (n <= 32) without consuming them or tracing them
    /// (MPEG-2's `nextbits()`).
    pub fn peek(&mut self, n: u32, name: &'static str) -> Result<u32, ReadError> {
        check_width(n, 32, name)?;
        let saved = self.cursor;
        let value = self.bits(n, name);
        self.cursor = saved;
        Ok(value? as u32)
    }

    /// `u(1)` as a boolean.
    pub fn flag(&mut self, name: &'static str) -> Result<bool, ReadError> {
        Ok(self.u(1, name)? == 1)
    }

    fn golomb(&mut self, name: &'static str) -> Result<u64, ReadError> {
        // A code of up to 31 bits (values below 65535) in one load.
        if let Some(window) = self.window() {
            let leading_zeros = window.leading_zeros();
            if leading_zeros < 16 {
                let length = 2 * leading_zeros + 1;
                self.consume(length);
                return Ok(u64::from(window >> (32 - length)) - 1);
            }
        }
        let mut leading_zeros = 0u32;
        while self.bits(1, name)? == 0 {
            leading_zeros += 1;
            if leading_zeros > 32 {
                return Err(ReadError::GolombTooLong(name));
            }
        }
        let suffix = self.bits(leading_zeros, name)?;
        Ok((1u64 << leading_zeros) - 1 + suffix)
    }

    /// `ue(v)`, limited to `0..=max`.
    pub fn ue_max(&mut self, name: &'static str, max: u32) -> Result<u32, ReadError> {
        let start = self.cursor.pos;
        let value = self.whole(|r| r.golomb(name))?;
        if value > u64::from(max) {
            return Err(ReadError::OutOfRange {
                name,
                value: value as i64,
                min: 0,
                max: i64::from(max),
            });
        }
        self.record(start, name, value as i64);
        Ok(value as u32)
    }

    /// `ue(v)` of any value that fits the spec's 32-bit range.
    pub fn ue(&mut self, name: &'static str) -> Result<u32, ReadError> {
        self.ue_max(name, u32::MAX - 1)
    }

    /// `se(v)`, limited to `min..=max`.
    pub fn se_range(&mut self, name: &'static str, min: i32, max: i32) -> Result<i32, ReadError> {
        let start = self.cursor.pos;
        let code = self.whole(|r| r.golomb(name))?;
        // 1, 2, 3, 4 ... map to 1, -1, 2, -2 ...
        let magnitude = code.div_ceil(2) as i64;
        let value = if code % 2 == 1 { magnitude } else { -magnitude };
        if value < i64::from(min) || value > i64::from(max) {
            return Err(ReadError::OutOfRange {
                name,
                value,
                min: i64::from(min),
                max: i64::from(max),
            });
        }
        self.record(start, name, value);
        Ok(value as i32)
    }

    /// `se(v)` of any value that fits in an i32.
    pub fn se(&mut self, name: &'static str) -> Result<i32, ReadError> {
        self.se_range(name, i32::MIN + 1, i32::MAX)
    }

    /// Runs a read made of several steps; if one fails, nothing is consumed.
    fn whole<T>(
        &mut self,
        read: impl FnOnce(&mut Self) -> Result<T, ReadError>,
    ) -> Result<T, ReadError> {
        let saved = self.cursor;
        read(self).inspect_err(|_| self.cursor = saved)
    }

    /// `le(n)` (VP8, VP9, AV1 4.10.4): an unsigned little-endian number of
    /// `n` bytes (n <= 4).
    pub fn le(&mut self, n: u32, name: &'static str) -> Result<u32, ReadError> {
        let bits = n.saturating_mul(8);
        check_width(bits, 32, name)?;
        let start = self.cursor.pos;
        let big_endian = self.bits(bits, name)?;
        let value = (0..n).fold(0u32, |acc, i| {
            let byte = (big_endian >> (8 * (n - 1 - i))) as u8;
            acc | u32::from(byte) << (8 * i)
        });
        self.record(start, name, i64::from(value));
        Ok(value)
    }

    /// `leb128()` (AV1 4.10.5): up to 8 bytes of 7 bits each, least
    /// significant first; the value must fit 32 bits.
    pub fn leb128(&mut self, name: &'static str) -> Result<u32, ReadError> {
        let start = self.cursor.pos;
        let value = self.whole(|r| {
            let mut value = 0u64;
            for i in 0..8 {
                let byte = r.bits(8, name)?;
                value |= (byte & 0x7f) << (7 * i);
                if byte & 0x80 == 0 {
                    return u32::try_from(value).map_err(|_| ReadError::OutOfRange {
                        name,
                        value: value as i64,
                        min: 0,
                        max: i64::from(u32::MAX),
                    });
                }
            }
            // The eighth byte announced a ninth.
            Err(ReadError::Leb128TooLong(name))
        })?;
        self.record(start, name, i64::from(value));
        Ok(value)
    }

    /// `su(n)` (AV1 4.10.6): an `n`-bit two's complement value, n <= 32.
    pub fn su(&mut self, n: u32, name: &'static str) -> Result<i32, ReadError> {
        check_width(n, 32, name)?;
        let start = self.cursor.pos;
        let raw = self.bits(n, name)? as i64;
        let value = if n > 0 && raw & (1 << (n - 1)) != 0 {
            raw - (1 << n)
        } else {
            raw
        };
        self.record(start, name, value);
        Ok(value as i32)
    }

    /// VP9's `su(n)`: an `n`-bit magnitude, then a sign bit (1 is
    /// negative); n <= 32. Not AV1's `su(n)`, which is [`BitReader::su`].
    pub fn sign_magnitude(&mut self, n: u32, name: &'static str) -> Result<i64, ReadError> {
        check_width(n, 32, name)?;
        let start = self.cursor.pos;
        let value = self.whole(|r| {
            let magnitude = r.bits(n, name)? as i64;
            Ok(if r.bits(1, name)? == 1 {
                -magnitude
            } else {
                magnitude
            })
        })?;
        self.record(start, name, value);
        Ok(value)
    }

    /// VP9's and AV1's tile-count loops (`increment_tile_cols_log2` ...): a
    /// value from `min` counted up by one per 1 bit, until a 0 bit or `max`.
    /// Traced as one element, as FFmpeg's `increment()` does (no bits when
    /// `min == max`).
    pub fn increment(&mut self, min: u32, max: u32, name: &'static str) -> Result<u32, ReadError> {
        let start = self.cursor.pos;
        let value = self.whole(|r| {
            let mut value = min;
            while value < max && r.bits(1, name)? == 1 {
                value += 1;
            }
            Ok(value)
        })?;
        self.record(start, name, i64::from(value));
        Ok(value)
    }

    /// `ns(n)` (AV1 4.10.7): a value in `0..n`, in FloorLog2(n) bits or one
    /// more; `n` must be at least 1.
    pub fn ns(&mut self, n: u32, name: &'static str) -> Result<u32, ReadError> {
        if n == 0 {
            return Err(ReadError::OutOfRange {
                name,
                value: 0,
                min: 1,
                max: i64::from(u32::MAX),
            });
        }
        let start = self.cursor.pos;
        let value = self.whole(|r| {
            let w = 32 - n.leading_zeros();
            // Values below m take w - 1 bits, the others w.
            let m = (1u64 << w) - u64::from(n);
            let v = r.bits(w - 1, name)?;
            if v < m {
                return Ok(v);
            }
            Ok((v << 1) - m + r.bits(1, name)?)
        })?;
        self.record(start, name, value as i64);
        Ok(value as u32)
    }

    /// `uvlc()` (AV1 4.10.3): an exp-Golomb-like code; 32 or more leading
    /// zeros mean 2^32 - 1 with no value bits.
    pub fn uvlc(&mut self, name: &'static str) -> Result<u32, ReadError> {
        let start = self.cursor.pos;
        let value = self.whole(|r| {
            let mut leading_zeros = 0u32;
            while r.bits(1, name)? == 0 {
                leading_zeros = leading_zeros.saturating_add(1);
            }
            if leading_zeros >= 32 {
                return Ok(u32::MAX);
            }
            let v = r.bits(leading_zeros, name)?;
            Ok((v + (1u64 << leading_zeros) - 1) as u32)
        })?;
        self.record(start, name, i64::from(value));
        Ok(value)
    }

    /// One syntax element made of several reads whose parts are not
    /// elements of their own (AV1's `increment` codes, subexp-coded global
    /// motion, `tx_mode`, `obu_size`): the parts are read untraced and
    /// `read`'s result recorded once, where the element began. A failed
    /// read consumes nothing.
    pub fn compound(
        &mut self,
        name: &'static str,
        read: impl FnOnce(&mut Self) -> Result<i64, ReadError>,
    ) -> Result<i64, ReadError> {
        let start = self.cursor.pos;
        let trace = self.trace.take();
        let value = self.whole(read);
        self.trace = trace;
        let value = value?;
        self.record(start, name, value);
        Ok(value)
    }

    pub fn skip(&mut self, n: usize, name: &'static str) -> Result<(), ReadError> {
        if !self.escaped {
            // Plain input: no need to walk the bytes.
            if n > self.bits_left() {
                return Err(ReadError::Truncated(name));
            }
            let c = &mut self.cursor;
            let to = c.byte * 8 + c.bit as usize + n;
            (c.byte, c.bit, c.pos) = (to / 8, (to % 8) as u32, c.pos + n);
            return Ok(());
        }
        self.advance(n, name, |_, _| {})
    }

    /// Skips to the next byte boundary (`byte_alignment()`), bits unchecked.
    pub fn align_to_byte(&mut self, name: &'static str) -> Result<(), ReadError> {
        let bits = (8 - self.cursor.bit as usize) % 8;
        self.skip(bits, name)
    }

    /// `more_rbsp_data()`: whether anything but the stop bit and its
    /// alignment zeros (and trailing zero bytes) is left.
    pub fn more_rbsp_data(&self) -> bool {
        let escaped = self.escaped;
        let data = self.data;
        let Some(last) = (0..data.len())
            .rev()
            .find(|&i| data[i] != 0 && !(escaped && is_emulation_prevention_byte(data, i)))
        else {
            return false;
        };
        let stop_bit = last * 8 + 7 - data[last].trailing_zeros() as usize;
        let mut next = self.cursor;
        Self::step_over_escape(&mut next, data, escaped);
        next.byte * 8 + (next.bit as usize) < stop_bit
    }
}

/// Writes bits MSB first: builds hand-made bitstreams for unit tests.
#[cfg(test)]
pub(crate) struct BitWriter {
    pub bytes: Vec<u8>,
    bits: usize,
}

#[cfg(test)]
impl BitWriter {
    pub fn new() -> Self {
        Self {
            bytes: Vec::new(),
            bits: 0,
        }
    }

    pub fn bit(&mut self, b: bool) {
        if self.bits % 8 == 0 {
            self.bytes.push(0);
        }
        if b {
            let last = self.bytes.len() - 1;
            self.bytes[last] |= 0x80 >> (self.bits % 8);
        }
        self.bits += 1;
    }

    pub fn u(&mut self, n: u32, v: u32) {
        for i in (0..n).rev() {
            self.bit((v >> i) & 1 == 1);
        }
    }

    pub fn ue(&mut self, v: u32) {
        let code = u64::from(v) + 1;
        let len = 64 - code.leading_zeros();
        for _ in 1..len {
            self.bit(false);
        }
        for i in (0..len).rev() {
            self.bit((code >> i) & 1 == 1);
        }
    }

    pub fn se(&mut self, v: i32) {
        self.ue(if v > 0 {
            (2 * v - 1) as u32
        } else {
            (-2 * v) as u32
        });
    }

    pub fn bits_written(&self) -> usize {
        self.bits
    }

    /// rbsp_trailing_bits: the stop bit, then zeros to the byte boundary.
    pub fn trailing(&mut self) {
        self.bit(true);
        while self.bits % 8 != 0 {
            self.bit(false);
        }
    }
}

#[cfg(test)]
mod tests;
