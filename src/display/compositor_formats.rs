//! What the compositor accepts for the video surface, as the negotiation
//! reads it: the feedback in effect resolved into ordered tranches of
//! (fourcc, modifier) pairs, or the v3 `modifier` events. A batch's meaning
//! is compared through it too (`feedback.rs`), independent of how its
//! format table was indexed.

use super::dmabuf_formats::{AdvertisedFormats, Feedback, FeedbackError};

/// One tranche with its format-table indices resolved.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CompositorTranche {
    pub target_device: Option<u64>,
    pub scanout: bool,
    pub pairs: Vec<(u32, u64)>,
}

/// What the compositor accepts for the surface.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CompositorFormats {
    /// v4+ feedback: tranches in the order the compositor sent them.
    Tranches(Vec<CompositorTranche>),
    /// v3 `modifier` events: one tranche, no preference, no scanout hint.
    V3(AdvertisedFormats),
}

impl CompositorFormats {
    /// Resolves a complete v4+ feedback batch (indices into its table).
    pub fn from_feedback(feedback: &Feedback) -> Result<Self, FeedbackError> {
        let tranches = feedback
            .tranches
            .iter()
            .map(|t| {
                let pairs = t
                    .indices
                    .iter()
                    .map(|&index| {
                        feedback
                            .table
                            .get(index)
                            .ok_or(FeedbackError::IndexOutOfRange {
                                index,
                                table_len: feedback.table.len(),
                            })
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(CompositorTranche {
                    target_device: t.target_device,
                    scanout: t.scanout,
                    pairs,
                })
            })
            .collect::<Result<Vec<_>, FeedbackError>>()?;
        Ok(Self::Tranches(tranches))
    }

    /// What a display knows: its v4+ feedback when the compositor sent
    /// some, else its v3 `modifier` events.
    pub fn from_feedback_or_v3(
        feedback: Option<&Feedback>,
        v3: &AdvertisedFormats,
    ) -> Result<Self, FeedbackError> {
        match feedback {
            Some(f) => Self::from_feedback(f),
            None => Ok(Self::V3(v3.clone())),
        }
    }

    /// The same, less `refused` pairs (imports the compositor failed).
    pub fn without(mut self, refused: &[(u32, u64)]) -> Self {
        match &mut self {
            Self::Tranches(tranches) => {
                for tranche in tranches.iter_mut() {
                    tranche.pairs.retain(|p| !refused.contains(p));
                }
            }
            Self::V3(formats) => formats.remove_all(refused),
        }
        self
    }

    /// The tranches in preference order (v3: one, not scanout).
    pub fn tranches(&self) -> Vec<CompositorTranche> {
        match self {
            Self::Tranches(t) => t.clone(),
            Self::V3(a) => vec![CompositorTranche {
                target_device: None,
                scanout: false,
                pairs: a.pairs().collect(),
            }],
        }
    }
}

/// What the compositor takes now, as a copied frame's target is chosen
/// from it: resolved again only when what it is made of changes (a
/// feedback batch, a v3 `modifier` event, an import the compositor
/// refused), not for every frame.
#[derive(Debug)]
pub struct CopyFormats(CompositorFormats);

impl Default for CopyFormats {
    fn default() -> Self {
        Self(CompositorFormats::V3(AdvertisedFormats::new()))
    }
}

impl CopyFormats {
    /// Resolves the feedback in effect (else the v3 `modifier` events) less
    /// the `refused` pairs; feedback that cannot be resolved leaves the v3
    /// pairs.
    pub fn refresh(
        &mut self,
        feedback: Option<&Feedback>,
        v3: &AdvertisedFormats,
        refused: &[(u32, u64)],
    ) {
        let formats = CompositorFormats::from_feedback_or_v3(feedback, v3)
            .unwrap_or_else(|_| CompositorFormats::V3(v3.clone()));
        self.0 = formats.without(refused);
    }

    pub fn get(&self) -> &CompositorFormats {
        &self.0
    }
}
