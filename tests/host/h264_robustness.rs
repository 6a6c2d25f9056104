//! Damaged streams give errors, never a panic or a hang: real clips with
//! bytes flipped, cut or dropped (seeded, so failures reproduce), and noise.

use crate::support;

use reel::codec::h264::H264Decoder;
use support::h264::{access_units, annex_b_with_trace, work_dir};
use support::media;

/// xorshift64*: a small deterministic generator for the damage.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn damage(unit: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut out = unit.to_vec();
    match rng.below(4) {
        0 => {
            for _ in 0..1 + rng.below(4) {
                let i = rng.below(out.len());
                out[i] ^= 1 << rng.below(8);
            }
        }
        1 => out.truncate(rng.below(out.len())),
        2 => {
            let i = rng.below(out.len());
            let n = rng.below(16);
            out.drain(i..(i + n).min(out.len()));
        }
        _ => {
            let i = rng.below(out.len());
            out[i] = rng.next() as u8;
        }
    }
    out
}

#[test]
fn damaged_access_units_never_panic() {
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    let mut errors = 0;
    let mut jobs = 0;
    for clip in [
        "h264_main_bframes.mkv",
        "h264_weighted.mp4",
        "h264_mbaff.ts",
        "h264_cqm_444.mp4",
    ] {
        let annexb = annex_b_with_trace(&media::dir().join(clip), &work_dir("robustness"));
        let units = access_units(&annexb.stream);
        for round in 0..40 {
            let mut decoder = H264Decoder::new();
            for (i, unit) in units.iter().enumerate() {
                let unit = if rng.below(3) == 0 {
                    damage(unit, &mut rng)
                } else {
                    unit.clone()
                };
                match decoder.decode_access_unit(&unit, (round * 1000 + i) as u64) {
                    Ok(j) => jobs += j.len(),
                    Err(_) => errors += 1,
                }
            }
            decoder.flush();
        }
    }
    eprintln!("{jobs} jobs, {errors} errors reported");
    assert!(errors > 0, "damage must be reported as errors");
    assert!(jobs > 0);
}

#[test]
fn noise_and_empty_input_are_errors() {
    let mut decoder = H264Decoder::new();
    assert!(decoder.decode_access_unit(&[], 0).is_err());
    assert!(decoder.decode_access_unit(&[1, 2, 3, 4], 0).is_err());
    let mut rng = Rng(7);
    for size in [3usize, 5, 64, 4096] {
        let mut noise: Vec<u8> = (0..size).map(|_| rng.next() as u8).collect();
        noise.splice(0..0, [0, 0, 0, 1]);
        // Noise may parse as something, but a picture needs parameter sets.
        if let Ok(jobs) = decoder.decode_access_unit(&noise, 1) {
            assert!(jobs.is_empty());
        }
    }
    // A slice before any parameter set names a missing PPS.
    let slice = [0, 0, 0, 1, 0x65, 0x88, 0x84, 0x00];
    assert!(decoder.decode_access_unit(&slice, 2).is_err());
}
