//! `--sync-epoch`: playback on a schedule, as several players agree on a
//! frame without talking to each other. The playlist plays as if it had
//! started at the epoch and looped ever since: entry N starts where the
//! durations before it put it, on the wall clock (CLOCK_REALTIME, which
//! chrony or linuxptp keep in step across the machines). A player started
//! late, restarted or resumed joins where the schedule stands. Pure: the
//! player maps the wall clock onto its own.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The playlist's entries laid end to end from the epoch, forever.
#[derive(Debug, Clone)]
pub struct Schedule {
    /// The epoch, as time since 1970 (UTC).
    epoch: Duration,
    durations: Vec<Duration>,
    cycle: Duration,
}

/// One entry's turn in the schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    /// The playlist entry.
    pub index: usize,
    /// When it starts, as time since 1970.
    pub start: Duration,
}

impl Schedule {
    /// The schedule of entries lasting `durations` from `epoch`; an error
    /// when they last nothing in all.
    pub fn new(epoch: Duration, durations: Vec<Duration>) -> Result<Self, String> {
        let cycle: Duration = durations.iter().sum();
        if cycle.is_zero() {
            return Err("the playlist lasts no time: nothing to schedule".into());
        }
        Ok(Self {
            epoch,
            durations,
            cycle,
        })
    }

    /// The turn going on at `wall` (time since 1970) and how far into it
    /// that is; before the epoch, the first entry's first turn, not yet
    /// begun.
    pub fn at(&self, wall: Duration) -> (Slot, Duration) {
        let Some(since) = wall.checked_sub(self.epoch) else {
            let first = Slot {
                index: 0,
                start: self.epoch,
            };
            return (first, Duration::ZERO);
        };
        let cycles = since.as_nanos() / self.cycle.as_nanos();
        let mut start = self.epoch + nanos(self.cycle.as_nanos() * cycles);
        let mut into = since - nanos(self.cycle.as_nanos() * cycles);
        for (index, &duration) in self.durations.iter().enumerate() {
            if into < duration {
                return (Slot { index, start }, into);
            }
            into -= duration;
            start += duration;
        }
        // Rounding left `into` at the cycle's very end: the next cycle.
        (Slot { index: 0, start }, Duration::ZERO)
    }

    /// The turn after `slot`.
    pub fn next(&self, slot: Slot) -> Slot {
        let duration = self.durations.get(slot.index).copied().unwrap_or_default();
        Slot {
            index: (slot.index + 1) % self.durations.len(),
            start: slot.start + duration,
        }
    }
}

fn nanos(n: u128) -> Duration {
    Duration::from_nanos(u64::try_from(n).unwrap_or(u64::MAX))
}

/// The wall clock now, as time since 1970.
pub fn wall_now() -> Duration {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
}

/// `--sync-epoch`: Unix seconds (`1764374400`, fractions allowed) or an
/// RFC 3339 date and time (`2026-11-29T00:00:00Z`, `...+01:00`).
pub fn parse_epoch(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    if let Ok(seconds) = text.parse::<f64>() {
        return Duration::try_from_secs_f64(seconds)
            .map_err(|_| format!("{text:?}: not a time since 1970"));
    }
    rfc3339(text).ok_or_else(|| {
        format!("{text:?} is neither Unix seconds nor an RFC 3339 time (2026-11-29T08:00:00Z)")
    })
}

fn rfc3339(text: &str) -> Option<Duration> {
    let (date, time) = text.split_once(['T', 't', ' '])?;
    let mut date_fields = date.splitn(3, '-');
    let year: i64 = date_fields.next()?.parse().ok()?;
    let month: u32 = date_fields.next()?.parse().ok()?;
    let day: u32 = date_fields.next()?.parse().ok()?;
    // The offset: Z, or +HH:MM / -HH:MM after the time.
    let (clock, offset_seconds) = if let Some(clock) = time.strip_suffix(['Z', 'z']) {
        (clock, 0i64)
    } else {
        let split = time.rfind(['+', '-'])?;
        let (clock, offset) = time.split_at(split);
        let sign = if offset.starts_with('-') { -1 } else { 1 };
        let (hours, minutes) = offset[1..].split_once(':')?;
        let hours: i64 = hours.parse().ok()?;
        let minutes: i64 = minutes.parse().ok()?;
        (clock, sign * (hours * 3600 + minutes * 60))
    };
    let mut clock_fields = clock.splitn(3, ':');
    let hour: u32 = clock_fields.next()?.parse().ok()?;
    let minute: u32 = clock_fields.next()?.parse().ok()?;
    let second: f64 = clock_fields.next()?.parse().ok()?;
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || !(0.0..61.0).contains(&second)
    {
        return None;
    }
    let days = days_from_civil(year, month, day);
    let whole = days * 86_400 + i64::from(hour) * 3600 + i64::from(minute) * 60 - offset_seconds;
    let seconds = whole as f64 + second;
    Duration::try_from_secs_f64(seconds).ok()
}

/// Days from 1970-01-01 to a date of the proleptic Gregorian calendar
/// (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month = i64::from(month);
    let day_of_year =
        (153 * (if month > 2 { month - 3 } else { month + 9 }) + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    #[test]
    fn the_schedule_says_which_entry_plays_and_how_far_into_it() {
        let schedule =
            Schedule::new(secs(1000.0), vec![secs(2.0), secs(3.0), secs(0.5)]).expect("a schedule");
        // Before the epoch: the first entry, waiting for it.
        assert_eq!(
            schedule.at(secs(900.0)),
            (
                Slot {
                    index: 0,
                    start: secs(1000.0)
                },
                Duration::ZERO
            )
        );
        assert_eq!(schedule.at(secs(1001.0)).0.index, 0);
        assert_eq!(
            schedule.at(secs(1003.5)),
            (
                Slot {
                    index: 1,
                    start: secs(1002.0)
                },
                secs(1.5)
            )
        );
        assert_eq!(schedule.at(secs(1005.2)).0.index, 2);
        // Cycles of 5.5 s: the 100th begins at 1550.
        let (slot, into) = schedule.at(secs(1550.25));
        assert_eq!((slot.index, slot.start), (0, secs(1550.0)));
        assert_eq!(into, secs(0.25));
        // Turn after turn, the same as reading the schedule.
        let mut slot = schedule.at(secs(1000.0)).0;
        for _ in 0..7 {
            slot = schedule.next(slot);
        }
        assert_eq!(schedule.at(slot.start).0, slot);
        assert!(Schedule::new(secs(0.0), vec![Duration::ZERO]).is_err());
    }

    #[test]
    fn epochs_in_unix_seconds_or_rfc_3339() {
        assert_eq!(parse_epoch("1764374400"), Ok(secs(1_764_374_400.0)));
        assert_eq!(parse_epoch("1764374400.5"), Ok(secs(1_764_374_400.5)));
        // date -d 2026-11-29T00:00:00Z +%s: 1795910400
        assert_eq!(
            parse_epoch("2026-11-29T00:00:00Z"),
            Ok(secs(1_795_910_400.0))
        );
        assert_eq!(
            parse_epoch("2026-11-29T01:00:00+01:00"),
            Ok(secs(1_795_910_400.0))
        );
        assert_eq!(
            parse_epoch("2026-11-28T19:30:00-04:30"),
            Ok(secs(1_795_910_400.0))
        );
        assert_eq!(parse_epoch("1970-01-01T00:00:00.25Z"), Ok(secs(0.25)));
        assert_eq!(parse_epoch("2000-02-29T12:00:00Z"), Ok(secs(951_825_600.0)));
        for bad in [
            "",
            "tomorrow",
            "2026-13-01T00:00:00Z",
            "2026-11-29",
            "-5",
            "2026-11-29T25:00:00Z",
        ] {
            assert!(parse_epoch(bad).is_err(), "{bad:?} parsed");
        }
    }
}
