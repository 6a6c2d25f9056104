//! Playback speed (0.25x-4x): the clock runs at it, the sound is
//! time-stretched to it (`audio::tempo`), both restarting together from
//! where playback stands.

use std::time::Instant;

use tracing::info;

use super::Player;

/// The speeds reel plays at; asks beyond are clamped (mpv takes 0.01-100,
/// where neither the picture nor the stretched sound is of use).
pub const SPEED_MIN: f64 = 0.25;
pub const SPEED_MAX: f64 = 4.0;
/// How long the OSD shows the new speed.
const SHOWN_FOR: std::time::Duration = std::time::Duration::from_secs(1);

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SpeedChange {
    To(f64),
    Times(f64),
}

impl SpeedChange {
    /// The speed after this change to `current`, within reel's range (None
    /// for a number that is not one).
    pub fn apply(self, current: f64) -> Option<f64> {
        let speed = match self {
            Self::To(speed) => speed,
            Self::Times(factor) => current * factor,
        };
        // Rounded as mpv shows it, so that ten `]` and ten `[` come back
        // to 1.
        let speed = (speed * 1e4).round() / 1e4;
        (speed.is_finite() && speed > 0.0).then(|| speed.clamp(SPEED_MIN, SPEED_MAX))
    }
}

/// Parses `--speed`.
pub fn parse_speed(text: &str) -> Result<f64, String> {
    SpeedChange::To(
        text.trim()
            .parse()
            .map_err(|_| format!("not a speed: '{text}'"))?,
    )
    .apply(1.0)
    .ok_or_else(|| format!("a speed is above 0, got '{text}'"))
}

impl Player {
    /// The playback speed.
    pub(super) fn speed(&self) -> f64 {
        self.clock.rate()
    }

    /// Plays at the speed `change` asks for from where playback stands:
    /// the clock's rate changes now and the sound, decoded again from
    /// here, is stretched to it. A schedule (`--sync-epoch`) keeps 1x.
    pub(super) fn change_speed(&mut self, change: SpeedChange) {
        if self.on_schedule() {
            info!("the speed stays 1 while playing on a schedule (--sync-epoch)");
            return;
        }
        let Some(speed) = change.apply(self.speed()) else {
            return;
        };
        let now = Instant::now();
        self.osd
            .show_message(now, &format!("Speed: {speed:.2}"), SHOWN_FOR);
        if speed == self.speed() {
            return;
        }
        info!(speed, "speed");
        self.sync_since = now;
        let playing = !self.transport.paused && !self.transport.preroll;
        // Where the sound restarts: a seek in flight's target, else the
        // media time now.
        let media = if self.transport.preroll {
            self.start_time + self.resume_position()
        } else {
            self.clock.now(now)
        };
        self.clock.set_rate(speed, now);
        // As at a resume: the clock holds until sound queued now is heard.
        let start = if playing {
            let start = self.playback_start(now, now);
            self.clock.set(media, start);
            start
        } else {
            now
        };
        if let Some(audio) = &self.audio {
            audio.set_speed(speed, media, start);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mpv_keys_steps_come_back_to_one_and_stay_in_range() {
        let mut speed = 1.0;
        for _ in 0..10 {
            speed = SpeedChange::Times(1.1).apply(speed).unwrap();
        }
        assert!((speed - 1.1f64.powi(10)).abs() < 1e-3, "{speed}");
        for _ in 0..10 {
            speed = SpeedChange::Times(1.0 / 1.1).apply(speed).unwrap();
        }
        assert!((speed - 1.0).abs() < 1e-3, "{speed}");
        assert_eq!(SpeedChange::Times(2.0).apply(4.0), Some(SPEED_MAX));
        assert_eq!(SpeedChange::Times(0.5).apply(0.25), Some(SPEED_MIN));
        assert_eq!(SpeedChange::To(0.0).apply(1.0), None);
        assert_eq!(SpeedChange::To(f64::NAN).apply(1.0), None);
    }

    #[test]
    fn speed_option() {
        assert_eq!(parse_speed("2"), Ok(2.0));
        assert_eq!(parse_speed("10"), Ok(SPEED_MAX));
        assert!(parse_speed("-1").is_err());
        assert!(parse_speed("fast").is_err());
    }
}
