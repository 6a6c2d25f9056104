//! A hook for tests only: `REEL_TEST_POISON_CAPTURE=N` makes `reel check`
//! spoil the luma plane of the V4L2 side's picture N (from 0) before it is
//! compared, as a driver writing wrong pixels would, so that tests can see
//! the difference found and reported. Nothing else in reel reads it, and
//! the decoder never sees it.

use super::picture::Picture;

pub const POISON_VARIABLE: &str = "REEL_TEST_POISON_CAPTURE";

/// The frame to poison, from the environment.
pub fn poisoned_frame() -> Option<u64> {
    let value = std::env::var(POISON_VARIABLE).ok()?;
    let index = value.trim().parse().ok();
    if index.is_none() {
        tracing::warn!("{POISON_VARIABLE}={value:?} is not a frame number: ignored");
    }
    index
}

/// Flips a bit in every sample of the picture's first plane (the low byte
/// of 16-bit samples, so 10-bit values stay in range).
pub fn poison(picture: &mut Picture) {
    let step = picture.format.bytes_per_sample().max(1);
    for byte in picture.plane_mut(0).iter_mut().step_by(step) {
        *byte ^= 0x10;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::compare::{compare, Verdict};
    use crate::check::picture::test_picture;
    use crate::frame::PixelFormat;

    #[test]
    fn a_poisoned_picture_differs_in_luma_only() {
        let clean = test_picture(PixelFormat::Yuv420, 4, 2, vec![0x80; 12]);
        let mut poisoned = clean.clone();
        poison(&mut poisoned);
        let Verdict::Differ { psnr } = compare(Some(&poisoned), Some(&clean)) else {
            panic!("poisoning changed nothing");
        };
        assert!(psnr[0].is_finite());
        assert!(psnr[1].is_infinite() && psnr[2].is_infinite());
    }
}
