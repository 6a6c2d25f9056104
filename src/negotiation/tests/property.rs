//! The negotiation rules checked against brute-force searches over
//! generated decoder lists and compositor tranches.

use super::*;

/// xorshift64*: deterministic inputs without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
}

fn generate(rng: &mut Rng) -> (Vec<DecoderFormat>, CompositorFormats, u32) {
    let mut pool: Vec<DecoderFormat> = CAPTURE_FORMATS
        .iter()
        .map(|f| DecoderFormat::from_capture(f, if rng.below(2) == 0 { 64 } else { 96 }))
        .collect();
    pool.push(implicit_dec(b"XN12", NV12, 8));
    pool.push(implicit_dec(b"XP10", P010, 10));
    let mut decoder = Vec::new();
    for _ in 0..rng.below(5) {
        let d = rng.pick(&pool);
        if !decoder
            .iter()
            .any(|x: &DecoderFormat| x.v4l2_fourcc == d.v4l2_fourcc)
        {
            decoder.push(d);
        }
    }
    let fourccs = [NV12, YU12, P010, NV15, P030, XR24];
    let modifiers = [
        MOD_LINEAR,
        MOD_INVALID,
        MOD_ALLWINNER_TILED,
        mod_broadcom_sand128(64),
        mod_broadcom_sand128(96),
        AMD_TILED,
    ];
    let random_pairs = |rng: &mut Rng| -> Vec<(u32, u64)> {
        let mut pairs = Vec::new();
        for _ in 0..rng.below(7) {
            let p = (rng.pick(&fourccs), rng.pick(&modifiers));
            if !pairs.contains(&p) {
                pairs.push(p);
            }
        }
        pairs
    };
    let compositor = if rng.below(4) == 0 {
        let mut a = AdvertisedFormats::new();
        for (f, m) in random_pairs(rng) {
            a.add(f, m);
        }
        CompositorFormats::V3(a)
    } else {
        let tranches = (0..rng.below(4))
            .map(|_| CompositorTranche {
                target_device: None,
                scanout: rng.below(2) == 0,
                pairs: random_pairs(rng),
            })
            .collect();
        CompositorFormats::Tranches(tranches)
    };
    (decoder, compositor, rng.pick(&[8, 10]))
}

/// Checks the rules on one input against brute-force searches.
fn check(
    decoder: &[DecoderFormat],
    compositor: &CompositorFormats,
    depth: u32,
    seen: &mut Vec<String>,
) {
    let tranches = compositor.tranches();
    let got = negotiate(decoder, compositor, depth);
    let ctx =
        || format!("decoder {decoder:?}\ncompositor {tranches:?}\ndepth {depth}\ngot {got:?}");
    // A decoder format that may be shown directly: shareable, not shallower.
    let eligible = |d: &DecoderFormat| d.bit_depth >= depth && d.drm_pair().is_some();
    // The pair tranche `t` imports `d` with: its own, or (a LINEAR layout
    // only) the implicit modifier where `t` lists the fourcc only so.
    let imported = |d: &DecoderFormat, t: &CompositorTranche| {
        let (f, m) = d.drm_pair()?;
        if t.pairs.contains(&(f, m)) {
            Some((f, m))
        } else if m == MOD_LINEAR && t.pairs.contains(&(f, MOD_INVALID)) {
            Some((f, MOD_INVALID))
        } else {
            None
        }
    };
    let first_tranche_with_eligible = tranches.iter().position(|t| {
        decoder
            .iter()
            .filter(|d| eligible(d))
            .any(|d| imported(d, t).is_some())
    });
    assert_eq!(
        renegotiate(&got, decoder, compositor, depth),
        None,
        "{}",
        ctx()
    );

    match &got {
        Negotiation::ZeroCopy {
            v4l2_fourcc,
            drm_fourcc,
            modifier,
            tranche,
            scanout,
        } => {
            seen.push("zero-copy".into());
            let d = decoder
                .iter()
                .find(|d| d.v4l2_fourcc == *v4l2_fourcc)
                .unwrap_or_else(|| panic!("chosen format not offered\n{}", ctx()));
            // The tranche lists the pair imported.
            assert!(d.shareable, "{}", ctx());
            let t = &tranches[*tranche];
            assert_eq!(imported(d, t), Some((*drm_fourcc, *modifier)), "{}", ctx());
            assert!(t.pairs.contains(&(*drm_fourcc, *modifier)), "{}", ctx());
            assert_eq!(t.scanout, *scanout, "{}", ctx());
            // Implicit only with implicit, or a linear layout the tranche
            // lists only implicitly; never a tiled layout left implicit.
            if *modifier == MOD_INVALID {
                assert!(
                    d.modifier == Some(MOD_INVALID)
                        || (d.modifier == Some(MOD_LINEAR)
                            && !t.pairs.contains(&(*drm_fourcc, MOD_LINEAR))),
                    "{}",
                    ctx()
                );
            } else {
                assert_eq!(d.modifier, Some(*modifier), "{}", ctx());
            }
            // An implicit import only when no format of the same depth
            // class imports explicitly.
            if *modifier == MOD_INVALID && d.modifier == Some(MOD_LINEAR) {
                let explicit_alternative = decoder.iter().any(|x| {
                    eligible(x)
                        && (x.bit_depth == depth) == (d.bit_depth == depth)
                        && x.drm_pair().is_some_and(|p| t.pairs.contains(&p))
                });
                assert!(!explicit_alternative, "{}", ctx());
            }
            // Never shallower than the stream; the best tranche.
            assert!(d.bit_depth >= depth, "{}", ctx());
            assert_eq!(first_tranche_with_eligible, Some(*tranche), "{}", ctx());
            // Exact depth preferred inside the tranche.
            let exact_available = decoder
                .iter()
                .any(|x| x.bit_depth == depth && imported(x, t).is_some());
            if exact_available {
                assert_eq!(d.bit_depth, depth, "{}", ctx());
            }
        }
        Negotiation::Copy {
            decoder_format,
            target,
            reason,
        } => {
            seen.push(format!("copy {:?}", std::mem::discriminant(reason)));
            assert_eq!(
                first_tranche_with_eligible,
                None,
                "copy although a pair exists\n{}",
                ctx()
            );
            match decoder_format {
                None => assert!(decoder.is_empty(), "{}", ctx()),
                Some(d) => {
                    assert!(decoder.contains(d), "{}", ctx());
                    if decoder.iter().any(|x| x.bit_depth >= depth) {
                        assert!(d.bit_depth >= depth, "depth dropped avoidably\n{}", ctx());
                    }
                }
            }
            let copyable = |f: u32| {
                tranches.iter().any(|t| {
                    t.pairs.contains(&(f, MOD_LINEAR)) || t.pairs.contains(&(f, MOD_INVALID))
                })
            };
            match target {
                CopyTarget::Dmabuf {
                    drm_fourcc,
                    modifier,
                    tranche,
                    bit_depth,
                } => {
                    seen.push(format!("copy to {}", fourcc_text(*drm_fourcc)));
                    // A layout the copy writes from the frame's.
                    let layout = decoder_format.as_ref().and_then(cpu_layout);
                    assert!(
                        layout.is_some_and(|l| copy_targets(l)
                            .iter()
                            .any(|&f| f as u32 == *drm_fourcc)),
                        "{}",
                        ctx()
                    );
                    assert!([MOD_LINEAR, MOD_INVALID].contains(modifier), "{}", ctx());
                    assert!(
                        tranches[*tranche].pairs.contains(&(*drm_fourcc, *modifier)),
                        "{}",
                        ctx()
                    );
                    let src_depth = decoder_format.map_or(8, |d| d.bit_depth);
                    if src_depth >= 10 && copyable(P010) {
                        assert!(
                            *bit_depth >= 10,
                            "copy target shallower than needed\n{}",
                            ctx()
                        );
                    }
                }
                CopyTarget::Shm => {
                    seen.push("copy to shm".into());
                    // With no layout the CPU reads there is nothing to copy;
                    // shm is a placeholder. Else the compositor takes none of
                    // the layouts the copy writes.
                    if let Some(layout) = decoder_format.as_ref().and_then(cpu_layout) {
                        for &f in copy_targets(layout) {
                            assert!(!copyable(f as u32), "{}", ctx());
                        }
                    }
                }
            }
            // The reason is true of the input.
            let pairs: Vec<(u32, u64)> = tranches.iter().flat_map(|t| t.pairs.clone()).collect();
            match reason {
                NoSharedFormat::NoDecoderFormats => assert!(decoder.is_empty()),
                NoSharedFormat::DecoderBitDepth { .. } => {
                    assert!(decoder.iter().all(|d| d.bit_depth < depth), "{}", ctx())
                }
                NoSharedFormat::NotShareable { formats } => {
                    for f in formats {
                        assert!(decoder.iter().any(|d| d.v4l2_fourcc == *f && !d.shareable));
                    }
                }
                NoSharedFormat::CompositorBitDepth { shared_max, .. } => {
                    assert!(*shared_max < depth);
                    assert!(decoder
                        .iter()
                        .any(|d| d.drm_pair().is_some_and(|p| pairs.contains(&p))));
                }
                NoSharedFormat::ImplicitExplicitMix { drm_fourcc } => {
                    let implicit_decoder = decoder.iter().any(|d| {
                        d.drm_pair()
                            .is_some_and(|p| p.0 == *drm_fourcc && p.1 == MOD_INVALID)
                    });
                    let explicit_decoder = decoder.iter().any(|d| {
                        d.drm_pair()
                            .is_some_and(|p| p.0 == *drm_fourcc && p.1 != MOD_INVALID)
                    });
                    let implicit_comp = pairs.contains(&(*drm_fourcc, MOD_INVALID));
                    let explicit_comp = pairs
                        .iter()
                        .any(|p| p.0 == *drm_fourcc && p.1 != MOD_INVALID);
                    assert!(
                        (implicit_decoder && explicit_comp) || (explicit_decoder && implicit_comp),
                        "{}",
                        ctx()
                    );
                }
                NoSharedFormat::ModifierMismatch {
                    drm_fourcc,
                    decoder: m,
                } => {
                    assert!(pairs.iter().any(|p| p.0 == *drm_fourcc), "{}", ctx());
                    assert!(!pairs.contains(&(*drm_fourcc, *m)), "{}", ctx());
                }
                NoSharedFormat::FormatNotAdvertised => {
                    for d in decoder.iter().filter(|d| eligible(d)) {
                        let (f, _) = d.drm_pair().expect("eligible");
                        assert!(!pairs.iter().any(|p| p.0 == f), "{}", ctx());
                    }
                }
            }
        }
    }
}

#[test]
fn generated_inputs_keep_every_rule() {
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    let mut seen = Vec::new();
    for _ in 0..20_000 {
        let (decoder, compositor, depth) = generate(&mut rng);
        check(&decoder, &compositor, depth, &mut seen);
    }
    // The generator reaches every outcome, so the checks above ran on each.
    seen.sort();
    seen.dedup();
    for needed in [
        "zero-copy",
        "copy to shm",
        "copy to NV12",
        "copy to YU12",
        "copy to P010",
    ] {
        assert!(
            seen.iter().any(|s| s == needed),
            "never saw {needed}: {seen:?}"
        );
    }
    // zero-copy, 3 targets + shm, and the seven reasons.
    let reasons = seen
        .iter()
        .filter(|s| s.starts_with("copy Discriminant"))
        .count();
    assert_eq!(reasons, 7, "{seen:?}");
}
