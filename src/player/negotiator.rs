//! The format negotiation between the compositor and the V4L2 decoder as
//! it lives through playback: the decode thread asks for a CAPTURE format
//! (through the session's chooser) once the sequence is known; the event
//! loop tells it when the compositor's formats changed, and learns whether
//! the decoder's buffers must be reallocated.
//!
//! Reallocation is needed only when the CAPTURE format itself changes: a
//! V4L2 format has one layout (one DRM modifier), so a change that keeps
//! the format only moves frames between the zero-copy and the copy path,
//! which the display decides frame by frame from the same formats.

use std::sync::{Arc, Mutex, PoisonError};

use tracing::info;

use crate::fourcc::fourcc_text;
use crate::negotiation::{negotiate, CompositorFormats, DecoderFormat, Negotiation};
use crate::v4l2::session::{CaptureChoice, CaptureChooser, OfferedCapture};

/// What a change of the compositor's formats means for the decoder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Renegotiated {
    /// No V4L2 decoder has chosen a CAPTURE format yet (software decoding,
    /// or before the first sequence): the next choice uses the new formats.
    NotStarted,
    /// The negotiation gives the same outcome.
    Unchanged,
    /// Another outcome with the same CAPTURE format: the buffers stay.
    SameFormat(Negotiation),
    /// Another CAPTURE format: the decoder's buffers must be reallocated.
    Reallocate(Negotiation),
}

/// The last choice the decoder made, and from what.
#[derive(Clone, Debug)]
struct Decided {
    offered: Vec<DecoderFormat>,
    bit_depth: u32,
    outcome: Negotiation,
}

#[derive(Debug)]
struct Shared {
    compositor: CompositorFormats,
    decided: Option<Decided>,
}

/// Shared by the event loop (compositor side) and the decode thread
/// (decoder side, through [`Negotiator::chooser`]).
#[derive(Clone, Debug)]
pub struct Negotiator {
    shared: Arc<Mutex<Shared>>,
}

impl Negotiator {
    pub fn new(compositor: CompositorFormats) -> Self {
        Self {
            shared: Arc::new(Mutex::new(Shared {
                compositor,
                decided: None,
            })),
        }
    }

    /// The chooser a V4L2 session calls with the CAPTURE formats offered
    /// after the sequence controls: negotiates against the compositor's
    /// formats of the moment and remembers the outcome.
    pub fn chooser(&self) -> CaptureChooser {
        let negotiator = self.clone();
        CaptureChooser(Arc::new(
            move |offered: &[OfferedCapture], bit_depth: u32| negotiator.choose(offered, bit_depth),
        ))
    }

    fn choose(&self, offered: &[OfferedCapture], bit_depth: u32) -> CaptureChoice {
        let offered_names: Vec<String> = offered.iter().map(|o| fourcc_text(o.fourcc)).collect();
        let offered: Vec<DecoderFormat> = offered
            .iter()
            .filter_map(|o| DecoderFormat::from_v4l2(o.fourcc, o.bytes_per_line))
            .collect();
        let mut shared = self.lock();
        let outcome = negotiate(&offered, &shared.compositor, bit_depth);
        let repeated = shared
            .decided
            .as_ref()
            .is_some_and(|d| d.outcome == outcome);
        if !repeated {
            // Once per change, not at every reopen; what the driver offered
            // for this sequence explains the choice.
            info!(
                "CAPTURE formats offered for a {bit_depth}-bit sequence: {}",
                offered_names.join(", ")
            );
            outcome.log();
        }
        let choice = CaptureChoice {
            order: outcome.v4l2_fourcc().into_iter().collect(),
            cpu_reads: !matches!(outcome, Negotiation::ZeroCopy { .. }),
        };
        shared.decided = Some(Decided {
            offered,
            bit_depth,
            outcome,
        });
        choice
    }

    /// The compositor's formats are now `compositor`.
    pub fn compositor_changed(&self, compositor: CompositorFormats) -> Renegotiated {
        let mut shared = self.lock();
        shared.compositor = compositor;
        let Some(decided) = shared.decided.clone() else {
            return Renegotiated::NotStarted;
        };
        let next = negotiate(&decided.offered, &shared.compositor, decided.bit_depth);
        if next == decided.outcome {
            return Renegotiated::Unchanged;
        }
        let reallocate = next.v4l2_fourcc() != decided.outcome.v4l2_fourcc();
        info!(
            changed = reallocate,
            from = %decided.outcome,
            to = %next,
            capture_format = %next.v4l2_fourcc().map_or("none".into(), fourcc_text),
            "renegotiated"
        );
        shared.decided = Some(Decided {
            outcome: next.clone(),
            ..decided
        });
        if reallocate {
            Renegotiated::Reallocate(next)
        } else {
            Renegotiated::SameFormat(next)
        }
    }

    /// The outcome in effect, if a decoder chose one.
    pub fn current(&self) -> Option<Negotiation> {
        self.lock().decided.as_ref().map(|d| d.outcome.clone())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Shared> {
        // The state stays consistent even if a holder panicked.
        self.shared.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fourcc::fourcc;
    use crate::fourcc::MOD_LINEAR;
    use crate::negotiation::CompositorTranche;

    const NV12: u32 = fourcc(b"NV12");
    const YU12: u32 = fourcc(b"YU12");
    const P010: u32 = fourcc(b"P010");

    fn offered(list: &[u32]) -> Vec<OfferedCapture> {
        list.iter()
            .map(|&fourcc| OfferedCapture {
                fourcc,
                bytes_per_line: 320,
            })
            .collect()
    }

    fn tranches(list: &[(bool, &[u32])]) -> CompositorFormats {
        CompositorFormats::Tranches(
            list.iter()
                .map(|(scanout, fourccs)| CompositorTranche {
                    target_device: None,
                    scanout: *scanout,
                    pairs: fourccs.iter().map(|&f| (f, MOD_LINEAR)).collect(),
                })
                .collect(),
        )
    }

    fn choice(n: &Negotiator, list: &[u32], depth: u32) -> CaptureChoice {
        (n.chooser().0)(&offered(list), depth)
    }

    fn choose(n: &Negotiator, list: &[u32], depth: u32) -> Vec<u32> {
        choice(n, list, depth).order
    }

    #[test]
    fn nothing_to_renegotiate_before_a_decoder_chose() {
        let n = Negotiator::new(tranches(&[(false, &[NV12])]));
        assert_eq!(
            n.compositor_changed(tranches(&[(false, &[YU12])])),
            Renegotiated::NotStarted
        );
        // The decoder's first choice sees the new formats, and presents
        // its pictures zero-copy: the CPU does not read them.
        assert_eq!(
            choice(&n, &[NV12, YU12], 8),
            CaptureChoice {
                order: vec![YU12],
                cpu_reads: false
            }
        );
    }

    #[test]
    fn a_scanout_tranche_with_another_format_reallocates() {
        let n = Negotiator::new(tranches(&[(false, &[NV12, YU12])]));
        assert_eq!(choose(&n, &[NV12, YU12], 8), vec![NV12]);
        // Fullscreen: the plane takes only YU12.
        let change = n.compositor_changed(tranches(&[(true, &[YU12]), (false, &[NV12, YU12])]));
        let Renegotiated::Reallocate(next) = change else {
            panic!("expected a reallocation, got {change:?}");
        };
        assert_eq!(next.v4l2_fourcc(), Some(YU12));
        assert!(matches!(next, Negotiation::ZeroCopy { scanout: true, .. }));
        // The reopened decoder is told the new format.
        assert_eq!(choose(&n, &[NV12, YU12], 8), vec![YU12]);
        assert_eq!(n.current().and_then(|c| c.v4l2_fourcc()), Some(YU12));
    }

    #[test]
    fn a_scanout_tranche_with_the_same_format_keeps_the_buffers() {
        let n = Negotiator::new(tranches(&[(false, &[NV12])]));
        choose(&n, &[NV12], 8);
        let change = n.compositor_changed(tranches(&[(true, &[NV12]), (false, &[NV12])]));
        assert!(
            matches!(
                &change,
                Renegotiated::SameFormat(Negotiation::ZeroCopy { scanout: true, .. })
            ),
            "{change:?}"
        );
        // Said once: the same feedback again is no change.
        assert_eq!(
            n.compositor_changed(tranches(&[(true, &[NV12]), (false, &[NV12])])),
            Renegotiated::Unchanged
        );
    }

    #[test]
    fn losing_the_only_shared_format_goes_to_the_copy_path_without_reallocating() {
        let n = Negotiator::new(tranches(&[(false, &[NV12])]));
        choose(&n, &[NV12], 8);
        // The compositor now lists a format the decoder does not offer; NV12
        // stays the CAPTURE format and frames are copied.
        let change = n.compositor_changed(tranches(&[(false, &[fourcc(b"XR24")])]));
        assert!(
            matches!(&change, Renegotiated::SameFormat(Negotiation::Copy { .. })),
            "{change:?}"
        );
    }

    #[test]
    fn a_ten_bit_stream_moves_to_a_ten_bit_pair_when_one_appears() {
        let n = Negotiator::new(tranches(&[(false, &[NV12])]));
        // 10-bit stream, compositor without P010: copy (NV12 is too shallow,
        // so the decoder keeps P010 and the CPU converts).
        let first = choice(&n, &[NV12, P010], 10);
        assert_eq!(
            first,
            CaptureChoice {
                order: vec![P010],
                cpu_reads: true
            }
        );
        assert!(matches!(n.current(), Some(Negotiation::Copy { .. })));
        let change = n.compositor_changed(tranches(&[(false, &[NV12, P010])]));
        assert!(
            matches!(
                &change,
                Renegotiated::SameFormat(Negotiation::ZeroCopy { .. })
            ),
            "{change:?}"
        );
    }
}
