//! Negotiation over synthetic feedback tables and decoder lists. Expected
//! results come from the rules (kernel buffer-exchange guide, drm-format
//! caps), worked out by hand per case; the property test checks the rules
//! themselves against brute-force searches over generated inputs.

use super::*;
use crate::display::dmabuf_formats::{AdvertisedFormats, FeedbackBuilder, FeedbackError};
use crate::display::testutil::format_table_bytes as table_bytes;
use crate::fourcc::{fourcc, mod_broadcom_sand128, MOD_ALLWINNER_TILED};
use crate::v4l2::formats::CAPTURE_FORMATS;

const NV12: u32 = fourcc(b"NV12");
const YU12: u32 = fourcc(b"YU12");
const P010: u32 = fourcc(b"P010");
const NV15: u32 = fourcc(b"NV15");
const P030: u32 = fourcc(b"P030");
const XR24: u32 = fourcc(b"XR24");
/// An AMD-style tiled modifier: explicit, not LINEAR.
const AMD_TILED: u64 = 0x0200_0000_0000_0001;

fn dec(v4l2: &[u8; 4]) -> DecoderFormat {
    DecoderFormat::from_v4l2(fourcc(v4l2), 96).expect("format in the V4L2 table")
}

/// A decoder whose buffers have a driver-private (implicit) layout.
fn implicit_dec(v4l2: &[u8; 4], drm: u32, bit_depth: u32) -> DecoderFormat {
    DecoderFormat {
        v4l2_fourcc: fourcc(v4l2),
        drm_fourcc: Some(drm),
        modifier: Some(MOD_INVALID),
        shareable: true,
        bit_depth,
        cpu_layout: None,
    }
}

fn tranche(scanout: bool, pairs: &[(u32, u64)]) -> CompositorTranche {
    CompositorTranche {
        target_device: Some(0xe280),
        scanout,
        pairs: pairs.to_vec(),
    }
}

fn comp(tranches: Vec<CompositorTranche>) -> CompositorFormats {
    CompositorFormats::Tranches(tranches)
}

/// A compositor that takes one format, linear.
fn linear_only(drm_fourcc: u32) -> CompositorFormats {
    comp(vec![tranche(false, &[(drm_fourcc, MOD_LINEAR)])])
}

fn zero_copy(
    v4l2: &[u8; 4],
    drm: u32,
    modifier: u64,
    tranche: usize,
    scanout: bool,
) -> Negotiation {
    Negotiation::ZeroCopy {
        v4l2_fourcc: fourcc(v4l2),
        drm_fourcc: drm,
        modifier,
        tranche,
        scanout,
    }
}

/// A copy of `v4l2`'s pictures into `target`, for `reason`.
fn copied(v4l2: &[u8; 4], target: CopyTarget, reason: NoSharedFormat) -> Negotiation {
    Negotiation::Copy {
        decoder_format: Some(dec(v4l2)),
        target,
        reason,
    }
}

fn linear_target(drm_fourcc: u32, tranche: usize, bit_depth: u32) -> CopyTarget {
    CopyTarget::Dmabuf {
        drm_fourcc,
        modifier: MOD_LINEAR,
        tranche,
        bit_depth,
    }
}

#[test]
fn the_scanout_tranche_wins_over_the_decoders_order() {
    let c = comp(vec![
        tranche(true, &[(NV12, MOD_LINEAR)]),
        tranche(false, &[(YU12, MOD_LINEAR), (NV12, MOD_LINEAR)]),
    ]);
    let got = negotiate(&[dec(b"YU12"), dec(b"NV12")], &c, 8);
    assert_eq!(got, zero_copy(b"NV12", NV12, MOD_LINEAR, 0, true));
}

#[test]
fn tranches_are_tried_in_the_order_sent() {
    // No scanout flag anywhere: the first tranche is still the preferred one.
    let c = comp(vec![
        tranche(false, &[(YU12, MOD_LINEAR)]),
        tranche(false, &[(NV12, MOD_LINEAR)]),
    ]);
    let got = negotiate(&[dec(b"NV12"), dec(b"YU12")], &c, 8);
    assert_eq!(got, zero_copy(b"YU12", YU12, MOD_LINEAR, 0, false));
    // A scanout tranche sent second is not promoted: the compositor's order rules.
    let c = comp(vec![
        tranche(false, &[(YU12, MOD_LINEAR)]),
        tranche(true, &[(NV12, MOD_LINEAR)]),
    ]);
    assert_eq!(
        negotiate(&[dec(b"NV12"), dec(b"YU12")], &c, 8),
        zero_copy(b"YU12", YU12, MOD_LINEAR, 0, false)
    );
}

#[test]
fn inside_a_tranche_the_decoders_order_decides() {
    let c = comp(vec![tranche(
        false,
        &[(NV12, MOD_LINEAR), (YU12, MOD_LINEAR)],
    )]);
    assert_eq!(
        negotiate(&[dec(b"YU12"), dec(b"NV12")], &c, 8),
        zero_copy(b"YU12", YU12, MOD_LINEAR, 0, false)
    );
    // NV12 and NV12M are the same DRM pair: the driver's first one is set.
    assert_eq!(
        negotiate(&[dec(b"NM12"), dec(b"NV12")], &c, 8),
        zero_copy(b"NM12", NV12, MOD_LINEAR, 0, false)
    );
}

#[test]
fn a_tiled_decoder_and_a_linear_only_compositor_do_not_match() {
    let c = linear_only(NV12);
    let got = negotiate(&[dec(b"ST12")], &c, 8);
    assert_eq!(
        got,
        copied(
            b"ST12",
            linear_target(NV12, 0, 8),
            NoSharedFormat::ModifierMismatch {
                drm_fourcc: NV12,
                decoder: MOD_ALLWINNER_TILED
            }
        )
    );
    // The same tiled layout listed by the compositor is shared as it is.
    let c = comp(vec![tranche(
        false,
        &[(NV12, MOD_LINEAR), (NV12, MOD_ALLWINNER_TILED)],
    )]);
    assert_eq!(
        negotiate(&[dec(b"ST12")], &c, 8),
        zero_copy(b"ST12", NV12, MOD_ALLWINNER_TILED, 0, false)
    );
}

#[test]
fn sand128_matches_only_its_own_column_height() {
    let nc12 = capture_format(fourcc(b"NC12")).expect("NC12 in the table");
    let d = DecoderFormat::from_capture(nc12, 96);
    let c = comp(vec![tranche(true, &[(NV12, mod_broadcom_sand128(96))])]);
    assert_eq!(
        negotiate(&[d], &c, 8),
        zero_copy(b"NC12", NV12, mod_broadcom_sand128(96), 0, true)
    );
    let c = comp(vec![tranche(true, &[(NV12, mod_broadcom_sand128(64))])]);
    assert!(matches!(
        negotiate(&[d], &c, 8),
        Negotiation::Copy {
            reason: NoSharedFormat::ModifierMismatch { .. },
            ..
        }
    ));
}

#[test]
fn implicit_on_both_sides_is_shared() {
    let d = implicit_dec(b"XN12", NV12, 8);
    let c = comp(vec![tranche(
        false,
        &[(NV12, MOD_LINEAR), (NV12, MOD_INVALID)],
    )]);
    assert_eq!(
        negotiate(&[d], &c, 8),
        zero_copy(b"XN12", NV12, MOD_INVALID, 0, false)
    );
}

#[test]
fn implicit_and_explicit_are_never_mixed() {
    // A LINEAR V4L2 layout (V4L2 buffers never had an explicit modifier) of
    // a fourcc the compositor lists only implicitly: imported implicitly.
    let c = comp(vec![tranche(false, &[(NV12, MOD_INVALID)])]);
    let got = negotiate(&[dec(b"NV12")], &c, 8);
    assert_eq!(got, zero_copy(b"NV12", NV12, MOD_INVALID, 0, false));
    // Listed both ways: the explicit LINEAR pair.
    let c = comp(vec![tranche(
        false,
        &[(NV12, MOD_INVALID), (NV12, MOD_LINEAR)],
    )]);
    assert_eq!(
        negotiate(&[dec(b"NV12")], &c, 8),
        zero_copy(b"NV12", NV12, MOD_LINEAR, 0, false)
    );
    // A tiled layout is never left to the importer's guess.
    let c = comp(vec![tranche(false, &[(NV12, MOD_INVALID)])]);
    let tiled = DecoderFormat::from_v4l2(fourcc(b"ST12"), 320).expect("ST12 in the table");
    assert!(matches!(
        negotiate(&[tiled], &c, 8),
        Negotiation::Copy {
            reason: NoSharedFormat::ImplicitExplicitMix { drm_fourcc: NV12 },
            ..
        }
    ));
    // Implicit decoder, compositor lists only explicit modifiers.
    let c = comp(vec![tranche(
        false,
        &[(NV12, MOD_LINEAR), (NV12, AMD_TILED)],
    )]);
    // (Its driver-private layout is no CPU can read: no copy target.)
    let d = implicit_dec(b"XN12", NV12, 8);
    assert_eq!(
        negotiate(&[d], &c, 8),
        Negotiation::Copy {
            decoder_format: Some(d),
            target: CopyTarget::Shm,
            reason: NoSharedFormat::ImplicitExplicitMix { drm_fourcc: NV12 },
        }
    );
}

#[test]
fn a_ten_bit_stream_stays_ten_bit() {
    // The 8-bit pair comes from the scanout tranche, the 10-bit one later:
    // depth is kept even at the cost of the preferred tranche.
    let c = comp(vec![
        tranche(true, &[(NV12, MOD_LINEAR)]),
        tranche(false, &[(NV12, MOD_LINEAR), (P010, MOD_LINEAR)]),
    ]);
    assert_eq!(
        negotiate(&[dec(b"NV12"), dec(b"P010")], &c, 10),
        zero_copy(b"P010", P010, MOD_LINEAR, 1, false)
    );
    // An 8-bit stream takes the 8-bit format even when the driver lists P010 first.
    assert_eq!(
        negotiate(&[dec(b"P010"), dec(b"NV12")], &c, 8),
        zero_copy(b"NV12", NV12, MOD_LINEAR, 0, true)
    );
    // ...but a deeper format is fine when it is all that matches.
    let c10 = linear_only(P010);
    assert_eq!(
        negotiate(&[dec(b"NV12"), dec(b"P010")], &c10, 8),
        zero_copy(b"P010", P010, MOD_LINEAR, 0, false)
    );
}

#[test]
fn an_nv12_only_compositor_sends_ten_bit_through_the_copy_path() {
    let c = linear_only(NV12);
    let got = negotiate(&[dec(b"NV12"), dec(b"P010")], &c, 10);
    assert_eq!(
        got,
        copied(
            b"P010",
            linear_target(NV12, 0, 8),
            NoSharedFormat::CompositorBitDepth {
                stream: 10,
                shared_max: 8
            }
        )
    );
    let text = got.to_string();
    assert!(text.contains("10-bit output shown at 8 bits"), "{text}");
    assert!(text.contains("P010 -> NV12:LINEAR"), "{text}");
}

#[test]
fn packed_ten_bit_without_compositor_support_is_copied_to_p010() {
    let c = comp(vec![tranche(
        false,
        &[(NV12, MOD_LINEAR), (P010, MOD_LINEAR)],
    )]);
    assert_eq!(
        negotiate(&[dec(b"NV15")], &c, 10),
        copied(
            b"NV15",
            linear_target(P010, 0, 10),
            NoSharedFormat::FormatNotAdvertised
        )
    );
    let with_nv15 = linear_only(NV15);
    assert_eq!(
        negotiate(&[dec(b"NV15")], &with_nv15, 10),
        zero_copy(b"NV15", NV15, MOD_LINEAR, 0, false)
    );
}

#[test]
fn an_eight_bit_decoder_for_a_ten_bit_stream_is_copied_with_a_reason() {
    let c = linear_only(NV12);
    let got = negotiate(&[dec(b"NV12")], &c, 10);
    assert_eq!(
        got,
        copied(
            b"NV12",
            linear_target(NV12, 0, 8),
            NoSharedFormat::DecoderBitDepth {
                stream: 10,
                decoder_max: 8
            }
        )
    );
    assert!(got.to_string().contains("decoder offers at most 8-bit"));
}

/// weston 14's v3 formats as it lists the YUV ones reel can use: each with
/// LINEAR and the implicit modifier.
fn weston_v3() -> CompositorFormats {
    let mut formats = AdvertisedFormats::new();
    for f in [NV12, YU12, P010] {
        formats.add(f, MOD_LINEAR);
        formats.add(f, MOD_INVALID);
    }
    CompositorFormats::V3(formats)
}

#[test]
fn hevc_main10_on_an_eight_bit_only_decoder_is_copied_with_the_reason() {
    // visl's CAPTURE formats after a Main 10 SPS: NV12 and YU12 only. The
    // compositor has P010, but the decoder has nothing to put in it.
    let got = negotiate(&[dec(b"NV12"), dec(b"YU12")], &weston_v3(), 10);
    assert_eq!(
        got,
        copied(
            b"NV12",
            linear_target(NV12, 0, 8),
            NoSharedFormat::DecoderBitDepth {
                stream: 10,
                decoder_max: 8
            }
        )
    );
    assert_eq!(
        got.to_string(),
        "copy: V4L2 NV12 -> NV12:LINEAR (tranche 0): \
         the stream is 10-bit but the decoder offers at most 8-bit output"
    );
    // The same decoder for Main (8-bit) is zero-copy.
    assert_eq!(
        negotiate(&[dec(b"NV12"), dec(b"YU12")], &weston_v3(), 8),
        zero_copy(b"NV12", NV12, MOD_LINEAR, 0, false)
    );
}

#[test]
fn hevc_main10_decoders_share_their_ten_bit_pair() {
    // P010 listed after NV12 (as drivers that also post-process to 8 bits
    // do): the stream's depth wins over the driver's order.
    assert_eq!(
        negotiate(&[dec(b"NV12"), dec(b"P010")], &weston_v3(), 10),
        zero_copy(b"P010", P010, MOD_LINEAR, 0, false)
    );
    // Packed NV15 and P010 both offered: the compositor's only 10-bit
    // pair decides, the decoder's order among those it shares.
    assert_eq!(
        negotiate(&[dec(b"NV15"), dec(b"P010")], &weston_v3(), 10),
        zero_copy(b"P010", P010, MOD_LINEAR, 0, false)
    );
    let both = comp(vec![tranche(
        false,
        &[(P010, MOD_LINEAR), (NV15, MOD_LINEAR), (NV12, MOD_LINEAR)],
    )]);
    assert_eq!(
        negotiate(&[dec(b"NV15"), dec(b"P010"), dec(b"NV12")], &both, 10),
        zero_copy(b"NV15", NV15, MOD_LINEAR, 0, false)
    );
    // SAND128 10-bit (P030 columns) shared only with its own modifier; an
    // 8-bit SAND128 pair on the compositor's side is never used for it.
    let nc30 = DecoderFormat::from_capture(
        capture_format(fourcc(b"NC30")).expect("NC30 in the table"),
        96,
    );
    let nc12 = DecoderFormat::from_capture(
        capture_format(fourcc(b"NC12")).expect("NC12 in the table"),
        96,
    );
    let sand10 = comp(vec![tranche(
        true,
        &[
            (P030, mod_broadcom_sand128(96)),
            (NV12, mod_broadcom_sand128(96)),
        ],
    )]);
    assert_eq!(
        negotiate(&[nc12, nc30], &sand10, 10),
        zero_copy(b"NC30", P030, mod_broadcom_sand128(96), 0, true)
    );
    let sand8 = comp(vec![tranche(true, &[(NV12, mod_broadcom_sand128(96))])]);
    assert!(matches!(
        negotiate(&[nc12, nc30], &sand8, 10),
        Negotiation::Copy {
            reason: NoSharedFormat::CompositorBitDepth {
                stream: 10,
                shared_max: 8
            },
            ..
        }
    ));
}

#[test]
fn an_empty_intersection_falls_back_to_shm_or_a_linear_copy() {
    // Compositor takes only RGB: nothing to share, nothing YUV to copy into.
    let rgb = linear_only(XR24);
    assert_eq!(
        negotiate(&[dec(b"NV12")], &rgb, 8),
        copied(
            b"NV12",
            CopyTarget::Shm,
            NoSharedFormat::FormatNotAdvertised
        )
    );
    // No dmabuf feedback at all.
    assert_eq!(
        negotiate(&[dec(b"YU12")], &comp(vec![]), 8),
        copied(
            b"YU12",
            CopyTarget::Shm,
            NoSharedFormat::FormatNotAdvertised
        )
    );
    // A decoder that listed nothing reel knows.
    assert_eq!(
        negotiate(&[], &rgb, 8),
        Negotiation::Copy {
            decoder_format: None,
            target: CopyTarget::Shm,
            reason: NoSharedFormat::NoDecoderFormats,
        }
    );
    // YU12 decoder, NV12-only compositor: copy (convert) into NV12.
    let nv12 = comp(vec![
        tranche(false, &[(NV12, AMD_TILED)]),
        tranche(false, &[(NV12, MOD_LINEAR)]),
    ]);
    assert_eq!(
        negotiate(&[dec(b"YU12")], &nv12, 8),
        copied(
            b"YU12",
            linear_target(NV12, 1, 8),
            NoSharedFormat::FormatNotAdvertised
        )
    );
}

#[test]
fn formats_without_a_modifier_are_never_shared() {
    let c = comp(vec![tranche(
        true,
        &[(NV12, MOD_LINEAR), (NV12, MOD_INVALID)],
    )]);
    let got = negotiate(&[dec(b"MM21"), dec(b"HM12")], &c, 8);
    assert_eq!(
        got,
        copied(
            b"MM21",
            linear_target(NV12, 0, 8),
            NoSharedFormat::NotShareable {
                formats: vec![fourcc(b"MM21"), fourcc(b"HM12")]
            }
        )
    );
    assert!(got.to_string().contains("MM21, HM12"));
    // A linear alternative is shared even when listed after MM21, and the
    // copy path prefers a layout the CPU can read.
    assert_eq!(
        negotiate(&[dec(b"MM21"), dec(b"NV12")], &c, 8),
        zero_copy(b"NV12", NV12, MOD_LINEAR, 0, true)
    );
    let rgb = linear_only(XR24);
    assert!(matches!(
        negotiate(&[dec(b"MM21"), dec(b"NV12")], &rgb, 8),
        Negotiation::Copy { decoder_format: Some(d), .. } if d.v4l2_fourcc == fourcc(b"NV12")
    ));
}

#[test]
fn feedback_changes_renegotiate_only_when_the_choice_changes() {
    let decoder = [dec(b"NV12"), dec(b"ST12")];
    let windowed = comp(vec![tranche(
        false,
        &[(NV12, MOD_LINEAR), (YU12, MOD_LINEAR)],
    )]);
    let first = negotiate(&decoder, &windowed, 8);
    assert_eq!(first, zero_copy(b"NV12", NV12, MOD_LINEAR, 0, false));
    assert_eq!(renegotiate(&first, &decoder, &windowed, 8), None);

    // Same pairs resent in another order and tranche split: still the choice.
    let resent = comp(vec![tranche(
        false,
        &[(YU12, MOD_LINEAR), (NV12, MOD_LINEAR)],
    )]);
    assert_eq!(renegotiate(&first, &decoder, &resent, 8), None);

    // Fullscreen: a scanout tranche with the tiled layout comes first.
    let fullscreen = comp(vec![
        tranche(true, &[(NV12, MOD_ALLWINNER_TILED)]),
        tranche(false, &[(NV12, MOD_LINEAR), (YU12, MOD_LINEAR)]),
    ]);
    let second = renegotiate(&first, &decoder, &fullscreen, 8).expect("scanout tranche is better");
    assert_eq!(
        second,
        zero_copy(b"ST12", NV12, MOD_ALLWINNER_TILED, 0, true)
    );
    assert!(!first.same_buffers(&second));

    // Scanout of the same LINEAR pair: new tranche facts, same buffers.
    let fullscreen_linear = comp(vec![
        tranche(true, &[(NV12, MOD_LINEAR)]),
        tranche(false, &[(NV12, MOD_LINEAR)]),
    ]);
    let third = renegotiate(&first, &decoder, &fullscreen_linear, 8).expect("now scanout");
    assert_eq!(third, zero_copy(b"NV12", NV12, MOD_LINEAR, 0, true));
    assert!(first.same_buffers(&third));

    // Back to a window on an output that takes no NV12: copy path.
    let other_output = linear_only(YU12);
    let fourth = renegotiate(&third, &[dec(b"ST12")], &other_output, 8).expect("lost the pair");
    assert!(!fourth.is_zero_copy());
    assert_eq!(fourth.v4l2_fourcc(), Some(fourcc(b"ST12")));
}

#[test]
fn v3_modifier_events_are_one_tranche() {
    let mut a = AdvertisedFormats::new();
    a.add_v3_modifier(NV12, 0, 0);
    a.add_v3_modifier(P010, 0x00ff_ffff, 0xffff_ffff);
    let c = CompositorFormats::V3(a);
    assert_eq!(
        negotiate(&[dec(b"NV12")], &c, 8),
        zero_copy(b"NV12", NV12, MOD_LINEAR, 0, false)
    );
    // P010 only as implicit: the decoder's LINEAR P010 is imported so.
    assert_eq!(
        negotiate(&[dec(b"P010")], &c, 10),
        zero_copy(b"P010", P010, MOD_INVALID, 0, false)
    );
}

#[test]
fn v4_feedback_events_resolve_to_ordered_tranches() {
    let dev = 0xe280u64.to_ne_bytes();
    let mut b = FeedbackBuilder::default();
    b.format_table(&table_bytes(&[
        (NV12, MOD_LINEAR),
        (NV12, MOD_ALLWINNER_TILED),
        (P010, MOD_LINEAR),
    ]))
    .expect("whole entries");
    b.main_device(&dev);
    b.tranche_target_device(&dev);
    b.tranche_flags(true);
    b.tranche_formats(&1u16.to_ne_bytes())
        .expect("whole indices");
    b.tranche_done();
    b.tranche_target_device(&dev);
    b.tranche_formats(&[0u16.to_ne_bytes(), 2u16.to_ne_bytes()].concat())
        .expect("whole indices");
    b.tranche_done();
    let fb = b.done().expect("valid feedback");
    let c = CompositorFormats::from_feedback(&fb).expect("indices in range");
    assert_eq!(
        c.tranches(),
        vec![
            tranche(true, &[(NV12, MOD_ALLWINNER_TILED)]),
            tranche(false, &[(NV12, MOD_LINEAR), (P010, MOD_LINEAR)]),
        ]
    );
    assert_eq!(
        negotiate(&[dec(b"NV12"), dec(b"ST12")], &c, 8),
        zero_copy(b"ST12", NV12, MOD_ALLWINNER_TILED, 0, true)
    );

    let mut bad = fb.clone();
    bad.tranches[0].indices.push(7);
    assert_eq!(
        CompositorFormats::from_feedback(&bad),
        Err(FeedbackError::IndexOutOfRange {
            index: 7,
            table_len: 3
        })
    );
}

#[test]
fn v4_feedback_is_used_over_v3_events_when_present() {
    let mut v3 = AdvertisedFormats::new();
    v3.add(YU12, MOD_LINEAR);
    let mut b = FeedbackBuilder::default();
    b.format_table(&table_bytes(&[(NV12, MOD_LINEAR)]))
        .expect("whole entries");
    b.tranche_flags(true);
    b.tranche_formats(&0u16.to_ne_bytes())
        .expect("whole indices");
    b.tranche_done();
    let fb = b.done().expect("valid feedback");
    let both = CompositorFormats::from_feedback_or_v3(Some(&fb), &v3).expect("valid");
    assert_eq!(
        both.tranches(),
        vec![CompositorTranche {
            target_device: None,
            scanout: true,
            pairs: vec![(NV12, MOD_LINEAR)],
        }]
    );
    let only_v3 = CompositorFormats::from_feedback_or_v3(None, &v3).expect("valid");
    assert_eq!(
        only_v3.tranches(),
        vec![CompositorTranche {
            target_device: None,
            scanout: false,
            pairs: vec![(YU12, MOD_LINEAR)],
        }]
    );
}

#[test]
fn decoder_formats_come_from_the_v4l2_table() {
    assert_eq!(dec(b"NV12").drm_pair(), Some((NV12, MOD_LINEAR)));
    assert_eq!(dec(b"ST12").drm_pair(), Some((NV12, MOD_ALLWINNER_TILED)));
    assert_eq!(
        dec(b"NC30").drm_pair(),
        Some((P030, mod_broadcom_sand128(96)))
    );
    assert_eq!(dec(b"MM21").drm_pair(), None);
    assert_eq!(dec(b"P010").bit_depth, 10);
    assert_eq!(DecoderFormat::from_v4l2(fourcc(b"ZZZZ"), 64), None);
}

/// The property test: the rules checked against brute-force searches.
mod property;

/// v3 formats of `pairs`, as a compositor without feedback lists them.
fn v3(pairs: &[(u32, u64)]) -> CompositorFormats {
    let mut formats = AdvertisedFormats::new();
    for &(f, m) in pairs {
        formats.add(f, m);
    }
    CompositorFormats::V3(formats)
}

fn copied_to(layout: PixelFormat, compositor: &CompositorFormats) -> Option<(u32, u64)> {
    match copy_target(layout, compositor) {
        CopyTarget::Dmabuf {
            drm_fourcc,
            modifier,
            ..
        } => Some((drm_fourcc, modifier)),
        CopyTarget::Shm => None,
    }
}

#[test]
fn a_copy_goes_to_linear_before_implicit() {
    let both = v3(&[(NV12, MOD_INVALID), (NV12, MOD_LINEAR)]);
    assert_eq!(
        copied_to(PixelFormat::Nv12, &both),
        Some((NV12, MOD_LINEAR))
    );
    // Implicit when it is the only one.
    let implicit = v3(&[(YU12, MOD_INVALID)]);
    assert_eq!(
        copied_to(PixelFormat::Yuv420, &implicit),
        Some((YU12, MOD_INVALID))
    );
}

#[test]
fn a_copy_keeps_the_frames_layout_then_converts_or_goes_to_shm() {
    let c = v3(&[(NV12, AMD_TILED), (YU12, MOD_LINEAR)]);
    // A tiled NV12 is no layout the CPU writes: the planar 4:2:0 one.
    assert_eq!(copied_to(PixelFormat::Nv12, &c), Some((YU12, MOD_LINEAR)));
    assert_eq!(copied_to(PixelFormat::P010, &c), Some((YU12, MOD_LINEAR)));
    // No conversion for 4:2:2, none for grey, nothing listed: wl_shm.
    assert_eq!(copied_to(PixelFormat::Yuv422, &c), None);
    assert_eq!(copied_to(PixelFormat::Gray8, &c), None);
    assert_eq!(copied_to(PixelFormat::Yuv420, &v3(&[])), None);
}

#[test]
fn a_refused_pair_leaves_the_next_copy_target() {
    let c = v3(&[(NV12, MOD_LINEAR), (NV12, MOD_INVALID)]);
    let c = c.without(&[(NV12, MOD_LINEAR)]);
    assert_eq!(copied_to(PixelFormat::Nv12, &c), Some((NV12, MOD_INVALID)));
    let c = c.without(&[(NV12, MOD_INVALID)]);
    assert_eq!(copied_to(PixelFormat::Nv12, &c), None);
}

#[test]
fn a_ten_bit_copy_stays_ten_bit_where_it_can() {
    let c = v3(&[(NV12, MOD_LINEAR), (P010, MOD_LINEAR)]);
    assert_eq!(
        copy_target(PixelFormat::Yuv420p10, &c),
        CopyTarget::Dmabuf {
            drm_fourcc: P010,
            modifier: MOD_LINEAR,
            tranche: 0,
            bit_depth: 10
        }
    );
    // A deeper target in a later tranche wins over a shallower one first.
    let c = comp(vec![
        tranche(true, &[(NV12, MOD_LINEAR)]),
        tranche(false, &[(P010, MOD_LINEAR)]),
    ]);
    assert_eq!(
        copy_target(PixelFormat::P010, &c),
        linear_target(P010, 1, 10)
    );
    assert_eq!(
        copy_target(PixelFormat::P010, &c).to_string(),
        "P010:LINEAR (tranche 1)"
    );
}
