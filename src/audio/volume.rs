//! The volume control: a percentage, mute, and the gain they make.

/// The highest volume (`--volume`, the keys, the sockets), in percent.
pub const MAX: f64 = 100.0;
/// What `9` and `0` change the volume by, as in mpv.
pub const KEY_STEP: f64 = 2.0;

/// The volume as the user sets it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Volume {
    /// 0..=100 percent.
    pub percent: f64,
    pub muted: bool,
}

impl Volume {
    pub fn new(percent: f64) -> Self {
        Self {
            percent: clamp(percent),
            muted: false,
        }
    }

    pub fn set(&mut self, percent: f64) {
        self.percent = clamp(percent);
    }

    pub fn add(&mut self, delta: f64) {
        self.set(self.percent + delta);
    }

    /// The factor samples are multiplied by: mpv's cubic curve, so equal
    /// steps sound roughly equally loud (50 % is -18 dB, 79.4 % -6 dB).
    pub fn gain(&self) -> f32 {
        if self.muted {
            0.0
        } else {
            (self.percent / 100.0).powi(3) as f32
        }
    }
}

fn clamp(percent: f64) -> f64 {
    if percent.is_nan() {
        return MAX;
    }
    percent.clamp(0.0, MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db(gain: f32) -> f64 {
        20.0 * f64::from(gain).log10()
    }

    #[test]
    fn cubic_curve_as_mpv() {
        assert_eq!(Volume::new(100.0).gain(), 1.0);
        assert_eq!(Volume::new(0.0).gain(), 0.0);
        assert!((db(Volume::new(50.0).gain()) + 18.06).abs() < 0.01);
        assert!((db(Volume::new(79.37).gain()) + 6.02).abs() < 0.01);
    }

    #[test]
    fn clamps_and_mutes() {
        let mut volume = Volume::new(150.0);
        assert_eq!(volume.percent, 100.0);
        volume.add(-KEY_STEP);
        assert_eq!(volume.percent, 98.0);
        volume.add(-500.0);
        assert_eq!(volume.percent, 0.0);
        volume.set(f64::NAN);
        assert_eq!(volume.percent, 100.0);
        volume.muted = true;
        assert_eq!(volume.gain(), 0.0);
    }
}
