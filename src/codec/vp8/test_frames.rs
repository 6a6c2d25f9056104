//! VP8 frames made to order for tests: the header coded with the test
//! boolean encoder, every syntax element a test does not set coded as "no
//! update", dummy bytes for the macroblock data.

use super::tables::{COEFF_UPDATE_PROBS, MV_UPDATE_PROBS};
use crate::codec::bitstream::bool_encoder::BoolEncoder;

/// A segmentation update in delta mode: quantiser and loop filter values,
/// map probabilities (`None`: not sent).
pub type SegmentationUpdate = ([i32; 4], [i32; 4], [Option<u8>; 3]);

/// What the test frames carry; everything else is coded as "no update".
#[derive(Clone, Default)]
pub struct Spec {
    pub key: Option<(u16, u16)>,
    pub show: bool,
    /// (quant, lf, map probs) of a segmentation update in delta mode.
    pub segmentation: Option<SegmentationUpdate>,
    pub loop_filter_level: u32,
    /// (ref frame, mode) deltas, `None` where not updated.
    pub lf_deltas: Option<[Option<i32>; 8]>,
    pub log2_partitions: u32,
    pub y_ac_qi: u32,
    pub y2_dc_delta: Option<i32>,
    /// Inter frames: refresh golden, refresh altref, copy to golden, copy
    /// to altref, sign bias golden, sign bias altref, refresh last.
    pub refresh: (bool, bool, u32, u32, bool, bool, bool),
    pub refresh_entropy_probs: bool,
    /// One coefficient probability update: (i, j, k, l, value).
    pub coeff_update: Option<(usize, usize, usize, usize, u32)>,
    pub skip_prob: Option<u32>,
    /// Inter frames: one MV probability update (i, j, 7-bit value).
    pub mv_update: Option<(usize, usize, u32)>,
    /// Sizes of all DCT partitions but the last; the last gets `last_len` bytes.
    pub partition_sizes: Vec<u32>,
    pub last_len: usize,
}

pub fn build(spec: &Spec) -> Vec<u8> {
    let mut e = BoolEncoder::new();
    let key = spec.key.is_some();
    if key {
        e.flag(false); // color_space
        e.flag(false); // clamping_type
    }
    match spec.segmentation {
        None => e.flag(false),
        Some((quant, lf, probs)) => {
            e.flag(true);
            e.flag(true); // update map
            e.flag(true); // update data
            e.flag(false); // delta mode
            for q in quant {
                e.flag(true);
                e.signed(7, q);
            }
            for l in lf {
                e.flag(l != 0);
                if l != 0 {
                    e.signed(6, l);
                }
            }
            for p in probs {
                e.flag(p.is_some());
                if let Some(p) = p {
                    e.literal(8, p.into());
                }
            }
        }
    }
    e.flag(false); // filter type
    e.literal(6, spec.loop_filter_level);
    e.literal(3, 0); // sharpness
    match spec.lf_deltas {
        None => e.flag(false),
        Some(deltas) => {
            e.flag(true);
            e.flag(true);
            for d in deltas {
                e.flag(d.is_some());
                if let Some(d) = d {
                    e.signed(6, d);
                }
            }
        }
    }
    e.literal(2, spec.log2_partitions);
    e.literal(7, spec.y_ac_qi);
    // y_dc, y2_dc, y2_ac, uv_dc, uv_ac.
    for delta in [None, spec.y2_dc_delta, None, None, None] {
        e.flag(delta.is_some());
        if let Some(d) = delta {
            e.signed(4, d);
        }
    }
    if key {
        e.flag(spec.refresh_entropy_probs);
    } else {
        let (golden, altref, to_golden, to_altref, bias_golden, bias_altref, last) = spec.refresh;
        e.flag(golden);
        e.flag(altref);
        if !golden {
            e.literal(2, to_golden);
        }
        if !altref {
            e.literal(2, to_altref);
        }
        e.flag(bias_golden);
        e.flag(bias_altref);
        e.flag(spec.refresh_entropy_probs);
        e.flag(last);
    }
    for (i, bands) in COEFF_UPDATE_PROBS.iter().enumerate() {
        for (j, contexts) in bands.iter().enumerate() {
            for (k, nodes) in contexts.iter().enumerate() {
                for (l, &probability) in nodes.iter().enumerate() {
                    let update = spec
                        .coeff_update
                        .filter(|u| (u.0, u.1, u.2, u.3) == (i, j, k, l));
                    e.put(update.is_some(), probability);
                    if let Some(u) = update {
                        e.literal(8, u.4);
                    }
                }
            }
        }
    }
    e.flag(spec.skip_prob.is_some());
    if let Some(p) = spec.skip_prob {
        e.literal(8, p);
    }
    if !key {
        e.literal(8, 30); // prob_intra
        e.literal(8, 200); // prob_last
        e.literal(8, 128); // prob_gf
        e.flag(false); // no y mode update
        e.flag(false); // no uv mode update
        for (i, probs) in MV_UPDATE_PROBS.iter().enumerate() {
            for (j, &probability) in probs.iter().enumerate() {
                let update = spec.mv_update.filter(|u| (u.0, u.1) == (i, j));
                e.put(update.is_some(), probability);
                if let Some(u) = update {
                    e.literal(7, u.2);
                }
            }
        }
    }
    // Room for the macroblock data after the header.
    for _ in 0..64 {
        e.flag(false);
    }
    let first = e.finish();

    let tag = u32::from(spec.key.is_none()) | u32::from(spec.show) << 4 | (first.len() as u32) << 5;
    let mut frame = tag.to_le_bytes()[..3].to_vec();
    if let Some((w, h)) = spec.key {
        frame.extend_from_slice(&[0x9d, 0x01, 0x2a]);
        frame.extend_from_slice(&w.to_le_bytes());
        frame.extend_from_slice(&h.to_le_bytes());
    }
    frame.extend_from_slice(&first);
    for size in &spec.partition_sizes {
        frame.extend_from_slice(&size.to_le_bytes()[..3]);
    }
    let data: usize = spec
        .partition_sizes
        .iter()
        .map(|&s| s as usize)
        .sum::<usize>()
        + spec.last_len;
    frame.extend(std::iter::repeat_n(0x55, data));
    frame
}

pub fn key_frame() -> Spec {
    Spec {
        key: Some((320, 240)),
        show: true,
        y_ac_qi: 40,
        refresh_entropy_probs: true,
        last_len: 10,
        ..Spec::default()
    }
}

pub fn inter_frame() -> Spec {
    Spec {
        key: None,
        show: true,
        y_ac_qi: 60,
        refresh: (false, false, 0, 0, false, false, true),
        refresh_entropy_probs: true,
        last_len: 5,
        ..Spec::default()
    }
}
