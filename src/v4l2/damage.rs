//! Which decoded pictures are known to be damaged, so that none is shown.
//!
//! A picture is damaged when the driver returned its CAPTURE buffer with
//! `V4L2_BUF_FLAG_ERROR`, when its request failed (it was never decoded),
//! or when it was decoded while a damaged picture could be referenced: the
//! codec's references at the time it was submitted are taken as what it
//! may predict from (a superset of what it does: safe, never a corrupt
//! picture shown). Damage ends at the first picture decoded when no damaged
//! picture is referenced any more: a key frame, IDR or IRAP, which empties
//! the references. Requests complete in decode order, so each picture's
//! references are judged before it is.

use std::collections::{HashMap, HashSet};

use tracing::{info, warn};

use super::codec::DeviceTimestamp;

#[derive(Debug, Default)]
pub struct Damage {
    /// Per submitted picture not yet completed: the pictures it may
    /// reference.
    may_reference: HashMap<DeviceTimestamp, Vec<DeviceTimestamp>>,
    damaged: HashSet<DeviceTimestamp>,
    /// Pictures skipped since the last clean one shown.
    burst: u64,
    /// Pictures the driver returned with V4L2_BUF_FLAG_ERROR, or whose
    /// request failed.
    pub decode_errors: u64,
    /// Pictures not shown because they were damaged.
    pub frames_skipped: u64,
}

impl Damage {
    pub fn new() -> Self {
        Self::default()
    }

    /// A picture's first request was submitted while `references` were
    /// the codec's references.
    pub fn submitted(&mut self, picture: DeviceTimestamp, references: &[DeviceTimestamp]) {
        self.may_reference.entry(picture).or_insert_with(|| {
            references
                .iter()
                .copied()
                .filter(|&r| r != picture)
                .collect()
        });
    }

    /// A picture's request could not be queued: it will never be decoded.
    pub fn failed(&mut self, picture: DeviceTimestamp) {
        self.may_reference.remove(&picture);
        if self.damaged.insert(picture) {
            self.decode_errors += 1;
        }
    }

    /// A picture came back from the driver, `error` when flagged.
    pub fn completed(&mut self, picture: DeviceTimestamp, error: bool) {
        let references = self.may_reference.remove(&picture).unwrap_or_default();
        if error {
            self.decode_errors += 1;
            self.damaged.insert(picture);
        } else if references.iter().any(|r| self.damaged.contains(r)) {
            self.damaged.insert(picture);
        }
    }

    /// Whether `picture`, due for display, may be shown; counts and logs
    /// (once per burst) the skipped ones.
    pub fn may_show(&mut self, picture: DeviceTimestamp) -> bool {
        if self.damaged.contains(&picture) {
            if self.burst == 0 {
                warn!(
                    timestamp_ns = picture,
                    "decode error: not showing this picture nor those that may reference it, \
                     until a picture decoded from clean references (the next key frame)"
                );
            }
            self.burst += 1;
            self.frames_skipped += 1;
            return false;
        }
        if self.burst > 0 {
            info!(
                skipped = self.burst,
                timestamp_ns = picture,
                "decoding is clean again"
            );
            self.burst = 0;
        }
        true
    }

    /// Forgets damaged pictures no longer referenced nor pending (keeps
    /// the set small over a long run).
    pub fn retain(&mut self, live: impl Fn(DeviceTimestamp) -> bool) {
        let pending: HashSet<DeviceTimestamp> =
            self.may_reference.values().flatten().copied().collect();
        self.damaged.retain(|&p| live(p) || pending.contains(&p));
    }

    /// A seek or reset: nothing submitted before counts any more.
    pub fn clear(&mut self) {
        self.may_reference.clear();
        self.damaged.clear();
        self.burst = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn damage_spreads_to_pictures_that_may_reference_it_until_a_clean_one() {
        let mut d = Damage::new();
        // I(1) P(2) P(3, flagged) P(4) B(5, refs 2 only) IDR(6) P(7).
        d.submitted(1, &[]);
        d.submitted(2, &[1]);
        d.submitted(3, &[1, 2]);
        d.submitted(4, &[2, 3]);
        d.submitted(5, &[1, 2]);
        d.submitted(6, &[]);
        d.submitted(7, &[6]);
        for (p, error) in [
            (1, false),
            (2, false),
            (3, true),
            (4, false),
            (5, false),
            (6, false),
            (7, false),
        ] {
            d.completed(p, error);
        }
        let shown: Vec<u64> = (1..=7).filter(|&p| d.may_show(p)).collect();
        assert_eq!(shown, vec![1, 2, 5, 6, 7]);
        assert_eq!(d.decode_errors, 1);
        assert_eq!(d.frames_skipped, 2);
    }

    #[test]
    fn a_failed_request_damages_its_dependents() {
        let mut d = Damage::new();
        d.submitted(1, &[]);
        d.completed(1, false);
        d.failed(2);
        d.submitted(3, &[1, 2]);
        d.completed(3, false);
        assert!(d.may_show(1));
        assert!(!d.may_show(2));
        assert!(!d.may_show(3));
        assert_eq!(d.decode_errors, 1);
        // Once nothing references 2 or 3, they are forgotten.
        d.retain(|p| p == 1);
        assert!(d.damaged.is_empty());
        d.submitted(4, &[1]);
        d.completed(4, false);
        assert!(d.may_show(4));
    }

    #[test]
    fn the_first_request_of_a_picture_names_its_references() {
        let mut d = Damage::new();
        d.submitted(1, &[]);
        d.completed(1, true);
        // Slices after the first are submitted with the picture itself
        // among the references: they change nothing.
        d.submitted(2, &[1]);
        d.submitted(2, &[2]);
        d.completed(2, false);
        assert!(!d.may_show(2));
        d.clear();
        d.submitted(3, &[1]);
        d.completed(3, false);
        assert!(d.may_show(3), "a seek forgets earlier damage");
    }
}
