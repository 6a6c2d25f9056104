//! The compositor's dmabuf feedback over time (zwp_linux_dmabuf_v1 v4+):
//! the default batch and the per-surface one, which is in effect, and
//! whether a new batch changed what the surface should use.
//!
//! The per-surface feedback is the one that matters once it came: the
//! compositor re-sends it when the surface's best buffers change (it went
//! fullscreen and could be scanned out, it moved to another output or
//! device). A batch equal to the one in effect (the compositor may re-send
//! the same parameters) is not a change.

use super::compositor_formats::CompositorFormats;
use super::dmabuf_formats::{Feedback, FeedbackBuilder, FeedbackError};

/// Which feedback object a batch came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FeedbackKind {
    /// `get_default_feedback`: for buffers not tied to a surface.
    Default,
    /// `get_surface_feedback` on the video surface.
    Surface,
}

/// What a complete batch meant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FeedbackUpdate {
    /// The first feedback of the connection.
    First,
    /// The feedback in effect says the same as before.
    Unchanged,
    /// The feedback in effect now offers other formats, tranches or devices.
    Changed,
}

#[derive(Debug, Default)]
pub struct FeedbackTracker {
    default_builder: FeedbackBuilder,
    surface_builder: FeedbackBuilder,
    default: Option<Feedback>,
    surface: Option<Feedback>,
}

impl FeedbackTracker {
    /// The batch being received from `kind`'s object.
    pub fn builder(&mut self, kind: FeedbackKind) -> &mut FeedbackBuilder {
        match kind {
            FeedbackKind::Default => &mut self.default_builder,
            FeedbackKind::Surface => &mut self.surface_builder,
        }
    }

    /// The feedback in effect: the surface's once it sent one, else the
    /// default.
    pub fn effective(&self) -> Option<&Feedback> {
        self.surface.as_ref().or(self.default.as_ref())
    }

    /// Ends `kind`'s batch. A malformed batch is an error and leaves the
    /// feedback in effect as it was.
    pub fn done(&mut self, kind: FeedbackKind) -> Result<FeedbackUpdate, FeedbackError> {
        let batch = self.builder(kind).done()?;
        let before = self.effective().map(meaning).transpose()?;
        match kind {
            FeedbackKind::Default => self.default = Some(batch),
            FeedbackKind::Surface => self.surface = Some(batch),
        }
        let after = self.effective().map(meaning).transpose()?;
        Ok(match before {
            None => FeedbackUpdate::First,
            Some(before) if Some(&before) == after.as_ref() => FeedbackUpdate::Unchanged,
            Some(_) => FeedbackUpdate::Changed,
        })
    }
}

/// What a batch says, independent of how the table was indexed.
fn meaning(feedback: &Feedback) -> Result<(Option<u64>, CompositorFormats), FeedbackError> {
    Ok((
        feedback.main_device,
        CompositorFormats::from_feedback(feedback)?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fourcc::{fourcc, MOD_LINEAR};

    use crate::display::testutil::format_table_bytes as table;

    fn indices(list: &[u16]) -> Vec<u8> {
        list.iter().flat_map(|i| i.to_ne_bytes()).collect()
    }

    /// Sends one batch: a table, then one tranche per entry of `tranches`
    /// (scanout flag, indices), then done.
    fn send(
        tracker: &mut FeedbackTracker,
        kind: FeedbackKind,
        pairs: &[(u32, u64)],
        tranches: &[(bool, &[u16])],
    ) -> Result<FeedbackUpdate, FeedbackError> {
        let b = tracker.builder(kind);
        b.format_table(&table(pairs))?;
        b.main_device(&0xe200u64.to_ne_bytes());
        for (scanout, list) in tranches {
            b.tranche_target_device(&0xe200u64.to_ne_bytes());
            b.tranche_flags(*scanout);
            b.tranche_formats(&indices(list))?;
            b.tranche_done();
        }
        tracker.done(kind)
    }

    const NV12: u32 = fourcc(b"NV12");
    const XR24: u32 = fourcc(b"XR24");
    const TILED: u64 = 0x0100_0000_0000_0001;

    #[test]
    fn surface_feedback_takes_over_from_the_default() {
        let mut t = FeedbackTracker::default();
        let pairs = [(NV12, MOD_LINEAR), (XR24, MOD_LINEAR)];
        let first = send(&mut t, FeedbackKind::Default, &pairs, &[(false, &[0, 1])]);
        assert_eq!(first, Ok(FeedbackUpdate::First));
        // The surface's first batch says the same: no change.
        let same = send(&mut t, FeedbackKind::Surface, &pairs, &[(false, &[0, 1])]);
        assert_eq!(same, Ok(FeedbackUpdate::Unchanged));
        // Fullscreen: a scanout tranche comes first.
        let scanout = send(
            &mut t,
            FeedbackKind::Surface,
            &pairs,
            &[(true, &[1]), (false, &[0, 1])],
        );
        assert_eq!(scanout, Ok(FeedbackUpdate::Changed));
        assert_eq!(t.effective().map(|f| f.tranches.len()), Some(2));
        // A new default no longer matters once the surface has its own.
        let default = send(&mut t, FeedbackKind::Default, &pairs, &[(false, &[0])]);
        assert_eq!(default, Ok(FeedbackUpdate::Unchanged));
        assert_eq!(t.effective().map(|f| f.tranches.len()), Some(2));
    }

    #[test]
    fn a_reindexed_table_with_the_same_pairs_is_no_change() {
        let mut t = FeedbackTracker::default();
        send(
            &mut t,
            FeedbackKind::Surface,
            &[(NV12, MOD_LINEAR), (XR24, MOD_LINEAR)],
            &[(false, &[0, 1])],
        )
        .unwrap();
        let again = send(
            &mut t,
            FeedbackKind::Surface,
            &[(XR24, MOD_LINEAR), (NV12, MOD_LINEAR)],
            &[(false, &[1, 0])],
        );
        assert_eq!(again, Ok(FeedbackUpdate::Unchanged));
    }

    #[test]
    fn a_new_modifier_is_a_change() {
        let mut t = FeedbackTracker::default();
        let pairs = [(NV12, MOD_LINEAR), (NV12, TILED)];
        send(&mut t, FeedbackKind::Surface, &pairs, &[(false, &[0])]).unwrap();
        let tiled = send(&mut t, FeedbackKind::Surface, &pairs, &[(false, &[1])]);
        assert_eq!(tiled, Ok(FeedbackUpdate::Changed));
    }

    #[test]
    fn a_malformed_batch_keeps_the_feedback_in_effect() {
        let mut t = FeedbackTracker::default();
        let pairs = [(NV12, MOD_LINEAR)];
        send(&mut t, FeedbackKind::Surface, &pairs, &[(false, &[0])]).unwrap();
        // Index 7 is outside the one-entry table.
        let bad = send(&mut t, FeedbackKind::Surface, &pairs, &[(false, &[7])]);
        assert!(bad.is_err());
        let kept = t.effective().and_then(|f| f.advertised().ok());
        assert!(kept.is_some_and(|a| a.contains(NV12, MOD_LINEAR)));
    }

    #[test]
    fn copy_formats_are_refreshed_on_a_feedback_change() {
        use crate::display::compositor_formats::CopyFormats;
        use crate::display::dmabuf_formats::AdvertisedFormats;
        let mut t = FeedbackTracker::default();
        let mut copy = CopyFormats::default();
        let no_v3 = AdvertisedFormats::new();
        let pairs = [(NV12, MOD_LINEAR), (NV12, TILED), (XR24, MOD_LINEAR)];
        send(&mut t, FeedbackKind::Surface, &pairs, &[(false, &[0, 2])]).unwrap();
        copy.refresh(t.effective(), &no_v3, &[]);
        let first = copy.get().tranches();
        assert_eq!(first.len(), 1);
        assert_eq!(first[0].pairs, vec![(NV12, MOD_LINEAR), (XR24, MOD_LINEAR)]);
        // Fullscreen: the tiled NV12 in a scanout tranche first.
        let changed = send(
            &mut t,
            FeedbackKind::Surface,
            &pairs,
            &[(true, &[1]), (false, &[0, 2])],
        );
        assert_eq!(changed, Ok(FeedbackUpdate::Changed));
        assert_eq!(copy.get().tranches(), first, "kept until refreshed");
        copy.refresh(t.effective(), &no_v3, &[(XR24, MOD_LINEAR)]);
        let refreshed = copy.get().tranches();
        assert_eq!(refreshed.len(), 2);
        assert!(refreshed[0].scanout);
        assert_eq!(refreshed[0].pairs, vec![(NV12, TILED)]);
        assert_eq!(
            refreshed[1].pairs,
            vec![(NV12, MOD_LINEAR)],
            "less the refused"
        );
    }
}
