//! MSB-first bit reader over an RBSP (emulation prevention already removed),
//! with the fixed-length and exp-Golomb reads every video codec header uses.
//!
//! Every read takes the syntax element's name: errors say which element was
//! cut short or out of range, and an optional trace records `(bit position,
//! name, value)` so tests can compare a parser with FFmpeg's `trace_headers`.

use thiserror::Error;

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
}

/// One syntax element as read: bit offset where it starts, name, value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceEntry {
    pub position: usize,
    pub name: &'static str,
    pub value: i64,
}

pub struct BitReader<'a> {
    data: &'a [u8],
    /// Next bit to read, counted from the first bit of `data`.
    pos: usize,
    trace: Option<Vec<TraceEntry>>,
}

impl<'a> BitReader<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Self {
            data,
            pos: 0,
            trace: None,
        }
    }

    /// Starts recording every syntax element read from now on.
    pub fn enable_trace(&mut self) {
        self.trace = Some(Vec::new());
    }

    pub fn take_trace(&mut self) -> Vec<TraceEntry> {
        self.trace.take().unwrap_or_default()
    }

    /// Bits consumed so far.
    pub fn position(&self) -> usize {
        self.pos
    }

    pub fn bits_left(&self) -> usize {
        (self.data.len() * 8).saturating_sub(self.pos)
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

    fn raw_bits(&mut self, n: u32, name: &'static str) -> Result<u64, ReadError> {
        debug_assert!(n <= 64);
        if (n as usize) > self.bits_left() {
            return Err(ReadError::Truncated(name));
        }
        let mut value = 0u64;
        for _ in 0..n {
            let byte = self.data[self.pos / 8];
            let bit = (byte >> (7 - (self.pos % 8))) & 1;
            value = (value << 1) | u64::from(bit);
            self.pos += 1;
        }
        Ok(value)
    }

    /// `u(n)`: an unsigned value of `n` bits (n <= 32).
    pub fn u(&mut self, n: u32, name: &'static str) -> Result<u32, ReadError> {
        let start = self.pos;
        let value = self.raw_bits(n.min(32), name)? as u32;
        self.record(start, name, i64::from(value));
        Ok(value)
    }

    /// `u(1)` as a boolean.
    pub fn flag(&mut self, name: &'static str) -> Result<bool, ReadError> {
        Ok(self.u(1, name)? == 1)
    }

    fn golomb(&mut self, name: &'static str) -> Result<u64, ReadError> {
        let mut leading_zeros = 0u32;
        while self.raw_bits(1, name)? == 0 {
            leading_zeros += 1;
            if leading_zeros > 32 {
                return Err(ReadError::GolombTooLong(name));
            }
        }
        let suffix = self.raw_bits(leading_zeros, name)?;
        Ok((1u64 << leading_zeros) - 1 + suffix)
    }

    /// `ue(v)`, limited to `0..=max`.
    pub fn ue_max(&mut self, name: &'static str, max: u32) -> Result<u32, ReadError> {
        let start = self.pos;
        let value = self.golomb(name)?;
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
        let start = self.pos;
        let code = self.golomb(name)?;
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

    pub fn skip(&mut self, n: usize, name: &'static str) -> Result<(), ReadError> {
        if n > self.bits_left() {
            return Err(ReadError::Truncated(name));
        }
        self.pos += n;
        Ok(())
    }

    pub fn is_byte_aligned(&self) -> bool {
        self.pos % 8 == 0
    }

    /// `more_rbsp_data()`: whether anything but the stop bit and its
    /// alignment zeros (and trailing zero bytes) is left.
    pub fn more_rbsp_data(&self) -> bool {
        let Some(last) = self.data.iter().rposition(|&b| b != 0) else {
            return false;
        };
        let stop_bit = last * 8 + 7 - self.data[last].trailing_zeros() as usize;
        self.pos < stop_bit
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

    /// rbsp_trailing_bits: the stop bit, then zeros to the byte boundary.
    pub fn trailing(&mut self) {
        self.bit(true);
        while self.bits % 8 != 0 {
            self.bit(false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_fixed_and_golomb_codes() {
        // 101 | 1 (ue 0) | 010 (ue 1) | 011 (se -1) | 00100 (se 2)
        // = 1011 0100 1100 100x
        let data = [0b1011_0100, 0b1100_1000];
        let mut r = BitReader::new(&data);
        assert_eq!(r.u(3, "a").unwrap(), 5);
        assert_eq!(r.ue("b").unwrap(), 0);
        assert_eq!(r.ue("c").unwrap(), 1);
        assert_eq!(r.se("d").unwrap(), -1);
        assert_eq!(r.se("e").unwrap(), 2);
        assert_eq!(r.position(), 15);
    }

    #[test]
    fn truncation_and_range_are_errors() {
        let data = [0u8, 0, 0, 0, 0];
        let mut r = BitReader::new(&data);
        assert_eq!(r.ue("x"), Err(ReadError::GolombTooLong("x")));
        let mut r = BitReader::new(&[0b0000_0001]);
        assert_eq!(r.ue("y"), Err(ReadError::Truncated("y")));
        let mut r = BitReader::new(&[0b0010_0000]);
        assert!(matches!(
            r.ue_max("z", 2),
            Err(ReadError::OutOfRange { value: 3, .. })
        ));
    }

    #[test]
    fn writer_round_trips() {
        let mut w = BitWriter::new();
        w.u(5, 17);
        w.ue(300);
        w.se(-77);
        w.trailing();
        let mut r = BitReader::new(&w.bytes);
        assert_eq!(r.u(5, "a").unwrap(), 17);
        assert_eq!(r.ue("b").unwrap(), 300);
        assert_eq!(r.se("c").unwrap(), -77);
        assert!(!r.more_rbsp_data());
    }

    #[test]
    fn more_rbsp_data_stops_at_the_stop_bit() {
        let data = [0b1010_0000, 0];
        let mut r = BitReader::new(&data);
        assert!(r.more_rbsp_data());
        r.u(2, "a").unwrap();
        assert!(!r.more_rbsp_data());
    }

    #[test]
    fn largest_golomb_code_fits() {
        // 32 zeros, 1, 32 ones: 2^33 - 2, beyond u32: out of range, no panic.
        let mut data = vec![0u8; 4];
        data.push(0b1111_1111);
        data.extend([0xff; 4]);
        let mut r = BitReader::new(&data);
        assert!(matches!(r.ue("big"), Err(ReadError::OutOfRange { .. })));
    }
}
