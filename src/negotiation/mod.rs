//! Choosing the CAPTURE format and the buffer layout the compositor gets:
//! a pure function of the decoder's formats and the compositor's feedback.
//! It sits between the two sides: it reads the V4L2 format table
//! (`v4l2::formats`) and what the display resolved from the compositor
//! (`display::CompositorFormats`), and neither side knows of the other.
//!
//! Inputs:
//! - the decoder's CAPTURE formats as `VIDIOC_ENUM_FMT` lists them *after*
//!   the sequence controls are set, in the driver's order, each mapped
//!   through the V4L2 table ([`DecoderFormat::from_capture`]);
//! - what the compositor accepts ([`CompositorFormats`]): v4+ feedback
//!   tranches in the order the compositor sent them (its preference order,
//!   so a scanout tranche, when there is one, comes first), or the v3
//!   `modifier` events as one tranche;
//! - the stream's bit depth (from the SPS or sequence header).
//!
//! Rules (the kernel's buffer-exchange guide, GStreamer's drm-format caps):
//! - a fourcc and its modifier are one unit: a pair matches only an equal
//!   pair. `NV12:LINEAR` and `NV12:<tiled>` are different formats;
//! - the implicit modifier (`DRM_FORMAT_MOD_INVALID`) matches only itself,
//!   so a buffer is implicit on both sides or explicit on both sides, never
//!   mixed (the guide: "fully implicit or fully explicit"). One exception,
//!   after every explicit pair of a tranche: a decoder's *linear* layout of
//!   a fourcc the tranche lists only implicitly is imported with the
//!   implicit modifier ([`crate::fourcc::import_modifier`]: V4L2 buffers
//!   never had an explicit modifier; tiled ones are never left implicit);
//! - tranches are tried in order; inside a tranche the decoder's order
//!   decides, except that a format at the stream's own bit depth goes
//!   before a deeper one;
//! - zero-copy never reduces bit depth: a decoder format shallower than the
//!   stream is never shown directly (it goes through the copy path, with
//!   the reason logged);
//! - decoder formats no DRM modifier describes (MM21, NV12_4L4, ...) are
//!   never shared;
//! - no usable pair: [`Negotiation::Copy`], the CPU converts into a linear
//!   buffer the compositor accepts (LINEAR, or the implicit modifier: a
//!   buffer we allocate ourselves was never given an explicit modifier, so
//!   importing it as implicit is allowed), or into wl_shm: [`copy_target`],
//!   the same rule the display follows for every copied frame (software
//!   decoded ones too), so what is logged, shown on the OSD and printed by
//!   `reel probe` is what runs.
//!
//! The caller logs the result ([`Negotiation::log`], at info level) once
//! per change; [`renegotiate`] says when a feedback change matters.
//!
//! ```
//! use reel::fourcc::fourcc;
//! use reel::negotiation::{negotiate, CompositorFormats, CompositorTranche, DecoderFormat, Negotiation};
//!
//! // ENUM_FMT gave NV12 and P010 (bytesperline from TRY_FMT).
//! let decoder: Vec<DecoderFormat> = [fourcc(b"NV12"), fourcc(b"P010")]
//!     .into_iter()
//!     .filter_map(|f| DecoderFormat::from_v4l2(f, 1920))
//!     .collect();
//! let compositor = CompositorFormats::Tranches(vec![CompositorTranche {
//!     target_device: None,
//!     scanout: true,
//!     pairs: vec![(fourcc(b"P010"), 0), (fourcc(b"NV12"), 0)],
//! }]);
//! let choice = negotiate(&decoder, &compositor, 10);
//! assert_eq!(choice.v4l2_fourcc(), Some(fourcc(b"P010")));
//! assert!(matches!(choice, Negotiation::ZeroCopy { scanout: true, .. }));
//! ```

use std::fmt;

pub use crate::display::{CompositorFormats, CompositorTranche};
use drm_fourcc::DrmFourcc;

use crate::display::copy_targets;
use crate::fourcc::{fourcc_text, import_modifier, modifier_name, MOD_INVALID, MOD_LINEAR};
use crate::frame::PixelFormat;
use crate::v4l2::detile::detiled_format;
use crate::v4l2::formats::{capture_format, CaptureFormat};

/// One CAPTURE format the decoder offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecoderFormat {
    /// The V4L2 pixel format (what S_FMT is given).
    pub v4l2_fourcc: u32,
    /// The DRM fourcc of the same samples, if any.
    pub drm_fourcc: Option<u32>,
    /// The DRM modifier of the layout; `MOD_INVALID` for a layout only the
    /// driver knows (implicit); `None` when no modifier describes it.
    pub modifier: Option<u64>,
    /// Whether the buffers can be handed to the compositor as they are.
    pub shareable: bool,
    pub bit_depth: u32,
    /// The layout as the CPU copy path reads it, if it can.
    pub cpu_layout: Option<PixelFormat>,
}

impl DecoderFormat {
    /// From the V4L2 table. `bytes_per_line` is the first plane's, from
    /// TRY_FMT/G_FMT (SAND128 encodes its column height there).
    pub fn from_capture(format: &CaptureFormat, bytes_per_line: u32) -> Self {
        Self {
            v4l2_fourcc: format.v4l2,
            drm_fourcc: format.drm,
            modifier: format.drm_modifier(bytes_per_line),
            shareable: format.shareable(),
            bit_depth: format.bit_depth,
            cpu_layout: format.cpu,
        }
    }

    /// From a V4L2 fourcc, through the table; `None` for a format reel does
    /// not know (the caller leaves it out).
    pub fn from_v4l2(v4l2_fourcc: u32, bytes_per_line: u32) -> Option<Self> {
        capture_format(v4l2_fourcc).map(|f| Self::from_capture(f, bytes_per_line))
    }

    /// The (fourcc, modifier) pair the compositor would import, if any.
    pub fn drm_pair(&self) -> Option<(u32, u64)> {
        match (self.shareable, self.drm_fourcc, self.modifier) {
            (true, Some(f), Some(m)) => Some((f, m)),
            _ => None,
        }
    }
}

/// Where the copy path writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyTarget {
    /// A CPU-written linear dmabuf, imported with `modifier` (LINEAR or
    /// implicit, as the compositor lists it) from tranche `tranche`.
    Dmabuf {
        drm_fourcc: u32,
        modifier: u64,
        tranche: usize,
        bit_depth: u32,
    },
    /// wl_shm XRGB8888.
    Shm,
}

impl CopyTarget {
    pub fn bit_depth(&self) -> u32 {
        match self {
            Self::Dmabuf { bit_depth, .. } => *bit_depth,
            Self::Shm => 8,
        }
    }
}

/// `NV12:LINEAR (tranche 0)`, or `wl_shm XRGB8888`.
impl fmt::Display for CopyTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Dmabuf {
                drm_fourcc,
                modifier,
                tranche,
                ..
            } => write!(
                f,
                "{}:{} (tranche {tranche})",
                fourcc_text(*drm_fourcc),
                modifier_name(*modifier)
            ),
            Self::Shm => f.write_str("wl_shm XRGB8888"),
        }
    }
}

/// Why the decoder and the compositor share no (fourcc, modifier) pair at
/// the stream's depth, so that the negotiation chose the copy path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NoSharedFormat {
    /// The decoder listed no CAPTURE format reel knows.
    NoDecoderFormats,
    /// The decoder has nothing at the stream's bit depth.
    DecoderBitDepth { stream: u32, decoder_max: u32 },
    /// No format at the stream's depth has a DRM modifier (e.g. MM21).
    NotShareable { formats: Vec<u32> },
    /// The compositor shares pairs with the decoder only below the stream's
    /// bit depth.
    CompositorBitDepth { stream: u32, shared_max: u32 },
    /// Same fourcc on both sides, one with the implicit modifier and the
    /// other explicit: never mixed on one buffer.
    ImplicitExplicitMix { drm_fourcc: u32 },
    /// Same fourcc on both sides with different explicit modifiers (e.g. a
    /// tiled decoder and a LINEAR-only compositor).
    ModifierMismatch { drm_fourcc: u32, decoder: u64 },
    /// The compositor lists none of the decoder's fourccs.
    FormatNotAdvertised,
}

impl fmt::Display for NoSharedFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoDecoderFormats => write!(f, "the decoder offers no known CAPTURE format"),
            Self::DecoderBitDepth { stream, decoder_max } => write!(
                f,
                "the stream is {stream}-bit but the decoder offers at most {decoder_max}-bit output"
            ),
            Self::NotShareable { formats } => {
                let names: Vec<_> = formats.iter().map(|&c| fourcc_text(c)).collect();
                write!(
                    f,
                    "no DRM modifier describes the decoder's layouts ({})",
                    names.join(", ")
                )
            }
            Self::CompositorBitDepth { stream, shared_max } => write!(
                f,
                "the compositor shares only {shared_max}-bit formats with the decoder, the stream is {stream}-bit"
            ),
            Self::ImplicitExplicitMix { drm_fourcc } => write!(
                f,
                "{} is implicit on one side and explicit on the other",
                fourcc_text(*drm_fourcc)
            ),
            Self::ModifierMismatch {
                drm_fourcc,
                decoder,
            } => write!(
                f,
                "the compositor takes {} but not with the decoder's modifier {}",
                fourcc_text(*drm_fourcc),
                modifier_name(*decoder)
            ),
            Self::FormatNotAdvertised => {
                write!(f, "the compositor lists none of the decoder's formats")
            }
        }
    }
}

/// The outcome: which CAPTURE format to set and how frames reach the screen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Negotiation {
    /// CAPTURE buffers are imported by the compositor as they are.
    ZeroCopy {
        v4l2_fourcc: u32,
        drm_fourcc: u32,
        modifier: u64,
        /// Index of the tranche the pair came from.
        tranche: usize,
        scanout: bool,
    },
    /// The CPU converts every frame.
    Copy {
        /// The CAPTURE format to set; `None` only when the decoder offered none.
        decoder_format: Option<DecoderFormat>,
        target: CopyTarget,
        reason: NoSharedFormat,
    },
}

impl Negotiation {
    /// Logs the choice at info level (call once per change: the copy path's
    /// reason is logged there).
    pub fn log(&self) {
        tracing::info!("dmabuf negotiation: {self}");
    }

    pub fn is_zero_copy(&self) -> bool {
        matches!(self, Self::ZeroCopy { .. })
    }

    /// The V4L2 CAPTURE format to set with S_FMT.
    pub fn v4l2_fourcc(&self) -> Option<u32> {
        match self {
            Self::ZeroCopy { v4l2_fourcc, .. } => Some(*v4l2_fourcc),
            Self::Copy { decoder_format, .. } => decoder_format.map(|d| d.v4l2_fourcc),
        }
    }

    /// Whether `other` keeps the same buffers (CAPTURE format and the layout
    /// the compositor imports), so nothing needs reallocating.
    pub fn same_buffers(&self, other: &Negotiation) -> bool {
        match (self, other) {
            (
                Self::ZeroCopy {
                    v4l2_fourcc: a,
                    drm_fourcc: b,
                    modifier: c,
                    ..
                },
                Self::ZeroCopy {
                    v4l2_fourcc: x,
                    drm_fourcc: y,
                    modifier: z,
                    ..
                },
            ) => (a, b, c) == (x, y, z),
            (
                Self::Copy {
                    decoder_format: a,
                    target: t,
                    ..
                },
                Self::Copy {
                    decoder_format: b,
                    target: u,
                    ..
                },
            ) => a == b && layout_of(t) == layout_of(u),
            _ => false,
        }
    }
}

fn layout_of(t: &CopyTarget) -> Option<(u32, u64)> {
    match *t {
        CopyTarget::Dmabuf {
            drm_fourcc,
            modifier,
            ..
        } => Some((drm_fourcc, modifier)),
        CopyTarget::Shm => None,
    }
}

impl fmt::Display for Negotiation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ZeroCopy {
                v4l2_fourcc,
                drm_fourcc,
                modifier,
                tranche,
                scanout,
            } => write!(
                f,
                "zero-copy: V4L2 {} as {}:{} (tranche {tranche}{})",
                fourcc_text(*v4l2_fourcc),
                fourcc_text(*drm_fourcc),
                modifier_name(*modifier),
                if *scanout { ", scanout" } else { "" }
            ),
            Self::Copy {
                decoder_format,
                target,
                reason,
            } => {
                let from = decoder_format.map_or("none".to_owned(), |d| fourcc_text(d.v4l2_fourcc));
                let depth = match decoder_format {
                    Some(d) if target.bit_depth() < d.bit_depth => format!(
                        "; {}-bit output shown at {} bits",
                        d.bit_depth,
                        target.bit_depth()
                    ),
                    _ => String::new(),
                };
                write!(f, "copy: V4L2 {from} -> {target}: {reason}{depth}")
            }
        }
    }
}

/// Chooses the CAPTURE format and the presentation path. See the module
/// documentation for the rules.
pub fn negotiate(
    decoder: &[DecoderFormat],
    compositor: &CompositorFormats,
    stream_bit_depth: u32,
) -> Negotiation {
    let tranches = compositor.tranches();
    // Decoder formats that keep the stream's depth, exact depth first, then
    // the driver's order (a stable sort keeps it).
    let mut deep_enough: Vec<&DecoderFormat> = decoder
        .iter()
        .filter(|d| d.bit_depth >= stream_bit_depth)
        .collect();
    deep_enough.sort_by_key(|d| d.bit_depth != stream_bit_depth);

    for (index, tranche) in tranches.iter().enumerate() {
        let listed = |f, m| tranche.pairs.contains(&(f, m));
        // Exact depth first, then the decoder's own pair before a linear
        // layout imported implicitly, then the driver's order (`min_by_key`
        // keeps the first of equals).
        let found = deep_enough
            .iter()
            .filter_map(|d| {
                let (f, m) = d.drm_pair()?;
                import_modifier(listed, f, m).map(|imported| (d, (f, imported), imported != m))
            })
            .min_by_key(|(d, _, implicit)| (d.bit_depth != stream_bit_depth, *implicit))
            .map(|(d, pair, _)| (d, pair));
        if let Some((d, (drm_fourcc, modifier))) = found {
            return Negotiation::ZeroCopy {
                v4l2_fourcc: d.v4l2_fourcc,
                drm_fourcc,
                modifier,
                tranche: index,
                scanout: tranche.scanout,
            };
        }
    }

    let decoder_format = copy_source(decoder, stream_bit_depth);
    let target = decoder_format
        .as_ref()
        .and_then(cpu_layout)
        .map_or(CopyTarget::Shm, |layout| copy_target(layout, compositor));
    Negotiation::Copy {
        decoder_format,
        target,
        reason: copy_reason(decoder, &deep_enough, &tranches, stream_bit_depth),
    }
}

/// Re-runs the negotiation after a feedback change (or anything else):
/// `None` when `previous` is still the choice, else the new choice (check
/// [`Negotiation::same_buffers`] to know whether buffers must be
/// reallocated or only the tranche/scanout information changed).
pub fn renegotiate(
    previous: &Negotiation,
    decoder: &[DecoderFormat],
    compositor: &CompositorFormats,
    stream_bit_depth: u32,
) -> Option<Negotiation> {
    let next = negotiate(decoder, compositor, stream_bit_depth);
    (next != *previous).then_some(next)
}

/// The decoder format for the copy path: the stream's depth kept when the
/// decoder allows it, then one the CPU can read, then exact depth, then the
/// driver's order.
fn copy_source(decoder: &[DecoderFormat], stream_bit_depth: u32) -> Option<DecoderFormat> {
    decoder
        .iter()
        .enumerate()
        .min_by_key(|(i, d)| {
            (
                d.bit_depth < stream_bit_depth,
                d.cpu_layout.is_none(),
                d.bit_depth != stream_bit_depth,
                *i,
            )
        })
        .map(|(_, d)| *d)
}

/// Where the CPU copy writes a frame of `layout` (the frame's own, as it
/// reaches the display: a software decoder's, or a V4L2 CAPTURE format's
/// as the CPU reads it): of the layouts the copy writes
/// (`display::copy_targets`), the deepest the compositor takes as a
/// linear (or implicit) buffer; tranche order among equals, then LINEAR
/// before implicit, then the copy's order; wl_shm when none.
///
/// The one rule for the copy path: the display presents every copied frame
/// where this says, the negotiation reports it for the V4L2 decoder, and
/// `reel probe` for a file.
pub fn copy_target(layout: PixelFormat, compositor: &CompositorFormats) -> CopyTarget {
    let tranches = compositor.tranches();
    let targets = copy_targets(layout);
    let depth = |f: &DrmFourcc| if *f == DrmFourcc::P010 { 10 } else { 8 };
    let mut depths: Vec<u32> = targets.iter().map(depth).collect();
    depths.sort_unstable_by(|a, b| b.cmp(a));
    depths.dedup();
    for bit_depth in depths {
        let tier: Vec<u32> = targets
            .iter()
            .filter(|f| depth(f) == bit_depth)
            .map(|&f| f as u32)
            .collect();
        for (index, tranche) in tranches.iter().enumerate() {
            for modifier in [MOD_LINEAR, MOD_INVALID] {
                if let Some(&drm_fourcc) = tier
                    .iter()
                    .find(|&&f| tranche.pairs.contains(&(f, modifier)))
                {
                    return CopyTarget::Dmabuf {
                        drm_fourcc,
                        modifier,
                        tranche: index,
                        bit_depth,
                    };
                }
            }
        }
    }
    CopyTarget::Shm
}

/// The layout the CPU reads a CAPTURE format in: its own when linear, else
/// the one detiling makes of it.
fn cpu_layout(format: &DecoderFormat) -> Option<PixelFormat> {
    format
        .cpu_layout
        .or_else(|| detiled_format(format.v4l2_fourcc))
}

/// The first reason that explains why no pair was found.
fn copy_reason(
    decoder: &[DecoderFormat],
    deep_enough: &[&DecoderFormat],
    tranches: &[CompositorTranche],
    stream_bit_depth: u32,
) -> NoSharedFormat {
    if decoder.is_empty() {
        return NoSharedFormat::NoDecoderFormats;
    }
    if deep_enough.is_empty() {
        return NoSharedFormat::DecoderBitDepth {
            stream: stream_bit_depth,
            decoder_max: decoder.iter().map(|d| d.bit_depth).max().unwrap_or(0),
        };
    }
    let shared: Vec<(u32, u64)> = deep_enough.iter().filter_map(|d| d.drm_pair()).collect();
    if shared.is_empty() {
        return NoSharedFormat::NotShareable {
            formats: deep_enough.iter().map(|d| d.v4l2_fourcc).collect(),
        };
    }
    let advertised = |pair: &(u32, u64)| tranches.iter().any(|t| t.pairs.contains(pair));
    let shallow_shared = decoder
        .iter()
        .filter(|d| d.bit_depth < stream_bit_depth)
        .filter(|d| d.drm_pair().is_some_and(|p| advertised(&p)))
        .map(|d| d.bit_depth)
        .max();
    if let Some(shared_max) = shallow_shared {
        return NoSharedFormat::CompositorBitDepth {
            stream: stream_bit_depth,
            shared_max,
        };
    }
    let listed = |fourcc: u32| {
        tranches
            .iter()
            .flat_map(|t| &t.pairs)
            .filter(move |p| p.0 == fourcc)
    };
    for &(drm_fourcc, modifier) in &shared {
        let implicit = modifier == MOD_INVALID;
        if listed(drm_fourcc).any(|p| (p.1 == MOD_INVALID) != implicit) {
            return NoSharedFormat::ImplicitExplicitMix { drm_fourcc };
        }
    }
    for &(drm_fourcc, modifier) in &shared {
        if listed(drm_fourcc).next().is_some() {
            return NoSharedFormat::ModifierMismatch {
                drm_fourcc,
                decoder: modifier,
            };
        }
    }
    NoSharedFormat::FormatNotAdvertised
}

#[cfg(test)]
mod tests;
