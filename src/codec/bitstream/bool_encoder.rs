//! A boolean encoder for tests: builds VP8/VP9 boolean-coded data whose
//! decoding the tests know.

/// The boolean encoder matching [`super::BoolDecoder`], for tests only. It keeps the low end of the
/// current interval exactly, one entry per bit, at the precision the
/// decoder has reached: the decoder's window starts as the first 8 bits and
/// gains one per shift, and the encoder appends a zero bit to `low` for each
/// of the same shifts. Output is `low` itself: every decoder window then
/// reads `low`'s prefix, which lies inside each interval chosen so far.
pub struct BoolEncoder {
    low: Vec<u8>,
    range: u32,
}

impl BoolEncoder {
    pub fn new() -> Self {
        Self {
            low: vec![0; 8],
            range: 255,
        }
    }

    pub fn put(&mut self, bit: bool, probability: u8) {
        let split = 1 + (((self.range - 1) * u32::from(probability)) >> 8);
        if bit {
            self.add_to_low(split);
            self.range -= split;
        } else {
            self.range = split;
        }
        while self.range < 128 {
            self.range <<= 1;
            self.low.push(0);
        }
    }

    /// Adds `n` (< 256) to `low`'s last 8 bits, carrying upwards. The
    /// interval never reaches past 255 << shifts, so no carry leaves `low`.
    fn add_to_low(&mut self, mut n: u32) {
        for bit in self.low.iter_mut().rev() {
            let sum = u32::from(*bit) + (n & 1);
            *bit = (sum & 1) as u8;
            n = (n >> 1) + (sum >> 1);
            if n == 0 {
                return;
            }
        }
        panic!("carry out of the interval");
    }

    pub fn literal(&mut self, bits: u32, value: u32) {
        for i in (0..bits).rev() {
            self.put((value >> i) & 1 == 1, 128);
        }
    }

    pub fn finish(self) -> Vec<u8> {
        self.low
            .chunks(8)
            .map(|c| {
                c.iter()
                    .enumerate()
                    .fold(0u8, |acc, (i, &b)| acc | b << (7 - i))
            })
            .collect()
    }
}

impl BoolEncoder {
    /// A flag (`L(1)`).
    pub fn flag(&mut self, bit: bool) {
        self.put(bit, 128);
    }

    /// VP8's signed value: magnitude `L(bits)`, then a sign flag.
    pub fn signed(&mut self, bits: u32, value: i32) {
        self.literal(bits, value.unsigned_abs());
        self.flag(value < 0);
    }
}
