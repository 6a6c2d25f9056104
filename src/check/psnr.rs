//! Peak signal-to-noise ratio between two planes of samples.

/// How the samples of a plane are stored: one byte each (8-bit), or
/// 16-bit little-endian words holding `bits` low bits (10-bit layouts).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Samples {
    pub bytes: usize,
    pub bits: u32,
}

impl Samples {
    pub const EIGHT_BIT: Self = Self { bytes: 1, bits: 8 };

    fn peak(self) -> f64 {
        f64::from((1u32 << self.bits) - 1)
    }
}

/// The PSNR of `b` against `a` in dB; `f64::INFINITY` when they are equal
/// (and when both are empty). Planes of different lengths are compared
/// over the shorter one.
pub fn psnr(a: &[u8], b: &[u8], samples: Samples) -> f64 {
    let (sum, count) = if samples.bytes == 2 {
        let words = |p: &[u8]| {
            p.chunks_exact(2)
                .map(|w| u16::from_le_bytes([w[0], w[1]]))
                .collect::<Vec<_>>()
        };
        squared_error(words(a).into_iter(), words(b).into_iter())
    } else {
        squared_error(
            a.iter().map(|&v| u16::from(v)),
            b.iter().map(|&v| u16::from(v)),
        )
    };
    if sum == 0 || count == 0 {
        return f64::INFINITY;
    }
    let mse = sum as f64 / count as f64;
    10.0 * (samples.peak() * samples.peak() / mse).log10()
}

/// The sum of squared differences, and the number of samples compared.
fn squared_error(a: impl Iterator<Item = u16>, b: impl Iterator<Item = u16>) -> (u64, u64) {
    a.zip(b).fold((0, 0), |(sum, count), (x, y)| {
        let d = u64::from(x.abs_diff(y));
        (sum + d * d, count + 1)
    })
}

/// `inf` or the dB value with two decimals.
pub fn format_db(db: f64) -> String {
    if db.is_infinite() {
        "inf".into()
    } else {
        format!("{db:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_planes_are_infinite() {
        assert_eq!(
            psnr(&[1, 2, 3], &[1, 2, 3], Samples::EIGHT_BIT),
            f64::INFINITY
        );
        assert_eq!(psnr(&[], &[], Samples::EIGHT_BIT), f64::INFINITY);
        assert_eq!(format_db(f64::INFINITY), "inf");
    }

    #[test]
    fn eight_bit_psnr_follows_the_definition() {
        // One sample off by 255 in four: MSE = 255² / 4, PSNR = 10 log10(4).
        let db = psnr(&[0, 0, 0, 0], &[255, 0, 0, 0], Samples::EIGHT_BIT);
        assert!((db - 10.0 * 4f64.log10()).abs() < 1e-9, "{db}");
        // Every sample off by one: MSE 1, PSNR = 20 log10(255) = 48.13 dB.
        let db = psnr(&[10; 16], &[11; 16], Samples::EIGHT_BIT);
        assert_eq!(format_db(db), "48.13");
    }

    #[test]
    fn ten_bit_samples_are_words_with_a_higher_peak() {
        let word = |v: u16| v.to_le_bytes();
        let a: Vec<u8> = [100u16, 1023].iter().flat_map(|&v| word(v)).collect();
        let b: Vec<u8> = [101u16, 1022].iter().flat_map(|&v| word(v)).collect();
        let db = psnr(&a, &b, Samples { bytes: 2, bits: 10 });
        // MSE 1: 20 log10(1023) = 60.20 dB.
        assert_eq!(format_db(db), "60.20");
        // A difference in the high byte counts as the whole word's.
        let c: Vec<u8> = [100u16 + 256, 1023].iter().flat_map(|&v| word(v)).collect();
        let db = psnr(&a, &c, Samples { bytes: 2, bits: 10 });
        let want = 10.0 * (1023f64 * 1023.0 / (256.0 * 256.0 / 2.0)).log10();
        assert!((db - want).abs() < 1e-9, "{db} {want}");
    }
}
