//! The frame header's parameter sets that need no reference other than the
//! primary reference frame's saved values: quantization (5.9.12),
//! segmentation (5.9.14), delta q / delta lf (5.9.17, 5.9.18), loop filter
//! (5.9.11), CDEF (5.9.19) and loop restoration (5.9.20).

use crate::codec::bitstream::BitReader;

use super::sequence::SequenceHeader;
use super::{Av1Error, TOTAL_REFS_PER_FRAME};

pub const MAX_SEGMENTS: usize = 8;
pub const SEG_LVL_MAX: usize = 8;
/// `SEG_LVL_ALT_Q`.
pub const SEG_LVL_ALT_Q: usize = 0;
/// `SEG_LVL_REF_FRAME`: features from here on are read before skip.
pub const SEG_LVL_REF_FRAME: usize = 5;
const FEATURE_BITS: [u32; SEG_LVL_MAX] = [8, 6, 6, 6, 6, 3, 0, 0];
const FEATURE_SIGNED: [bool; SEG_LVL_MAX] = [true, true, true, true, true, false, false, false];
const FEATURE_MAX: [i32; SEG_LVL_MAX] = [255, 63, 63, 63, 63, 7, 0, 0];

/// `loop_filter_ref_deltas` after setup_past_independence().
pub const DEFAULT_LOOP_FILTER_REF_DELTAS: [i8; TOTAL_REFS_PER_FRAME] = [1, 0, 0, 0, -1, 0, -1, -1];

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Quantization {
    pub base_q_idx: u8,
    pub delta_q_y_dc: i8,
    pub diff_uv_delta: bool,
    pub delta_q_u_dc: i8,
    pub delta_q_u_ac: i8,
    pub delta_q_v_dc: i8,
    pub delta_q_v_ac: i8,
    pub using_qmatrix: bool,
    pub qm_y: u8,
    pub qm_u: u8,
    pub qm_v: u8,
}

/// read_delta_q(), traced as FFmpeg does: `<name>.delta_coded`, then
/// `<name>.delta_q`.
fn delta_q(r: &mut BitReader, coded: &'static str, value: &'static str) -> Result<i8, Av1Error> {
    if r.flag(coded)? {
        Ok(r.su(7, value)? as i8)
    } else {
        Ok(0)
    }
}

impl Quantization {
    pub fn parse(r: &mut BitReader, seq: &SequenceHeader) -> Result<Self, Av1Error> {
        let mut q = Self {
            base_q_idx: r.u(8, "base_q_idx")? as u8,
            delta_q_y_dc: delta_q(r, "delta_q_y_dc.delta_coded", "delta_q_y_dc.delta_q")?,
            ..Self::default()
        };
        let color = &seq.color_config;
        if color.num_planes() > 1 {
            q.diff_uv_delta = color.separate_uv_delta_q && r.flag("diff_uv_delta")?;
            q.delta_q_u_dc = delta_q(r, "delta_q_u_dc.delta_coded", "delta_q_u_dc.delta_q")?;
            q.delta_q_u_ac = delta_q(r, "delta_q_u_ac.delta_coded", "delta_q_u_ac.delta_q")?;
            if q.diff_uv_delta {
                q.delta_q_v_dc = delta_q(r, "delta_q_v_dc.delta_coded", "delta_q_v_dc.delta_q")?;
                q.delta_q_v_ac = delta_q(r, "delta_q_v_ac.delta_coded", "delta_q_v_ac.delta_q")?;
            } else {
                (q.delta_q_v_dc, q.delta_q_v_ac) = (q.delta_q_u_dc, q.delta_q_u_ac);
            }
        }
        q.using_qmatrix = r.flag("using_qmatrix")?;
        if q.using_qmatrix {
            q.qm_y = r.u(4, "qm_y")? as u8;
            q.qm_u = r.u(4, "qm_u")? as u8;
            q.qm_v = if color.separate_uv_delta_q {
                r.u(4, "qm_v")? as u8
            } else {
                q.qm_u
            };
        }
        Ok(q)
    }

    /// Whether a segment with quantizer index `qindex` is lossless.
    pub fn lossless_at(&self, qindex: u8) -> bool {
        qindex == 0
            && self.delta_q_y_dc == 0
            && self.delta_q_u_ac == 0
            && self.delta_q_u_dc == 0
            && self.delta_q_v_ac == 0
            && self.delta_q_v_dc == 0
    }
}

/// Segmentation features: `FeatureEnabled` and `FeatureData`, also what a
/// reference slot saves.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SegmentationFeatures {
    pub enabled: [[bool; SEG_LVL_MAX]; MAX_SEGMENTS],
    pub data: [[i16; SEG_LVL_MAX]; MAX_SEGMENTS],
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Segmentation {
    pub segmentation_enabled: bool,
    pub segmentation_update_map: bool,
    pub segmentation_temporal_update: bool,
    pub segmentation_update_data: bool,
    pub features: SegmentationFeatures,
    /// `SegIdPreSkip`.
    pub seg_id_pre_skip: bool,
    /// `LastActiveSegId`.
    pub last_active_seg_id: u8,
}

impl Segmentation {
    /// segmentation_params(); `previous` holds the primary reference
    /// frame's features (all off without one).
    pub fn parse(
        r: &mut BitReader,
        primary_ref_none: bool,
        previous: SegmentationFeatures,
    ) -> Result<Self, Av1Error> {
        let mut s = Self {
            segmentation_enabled: r.flag("segmentation_enabled")?,
            ..Self::default()
        };
        if s.segmentation_enabled {
            s.features = previous;
            if primary_ref_none {
                s.segmentation_update_map = true;
                s.segmentation_update_data = true;
            } else {
                s.segmentation_update_map = r.flag("segmentation_update_map")?;
                if s.segmentation_update_map {
                    s.segmentation_temporal_update = r.flag("segmentation_temporal_update")?;
                }
                s.segmentation_update_data = r.flag("segmentation_update_data")?;
            }
            if s.segmentation_update_data {
                s.features = Self::parse_features(r)?;
            }
        }
        for (i, enabled) in s.features.enabled.iter().enumerate() {
            for (j, &on) in enabled.iter().enumerate() {
                if on {
                    s.last_active_seg_id = i as u8;
                    s.seg_id_pre_skip |= j >= SEG_LVL_REF_FRAME;
                }
            }
        }
        Ok(s)
    }

    fn parse_features(r: &mut BitReader) -> Result<SegmentationFeatures, Av1Error> {
        let mut f = SegmentationFeatures::default();
        for i in 0..MAX_SEGMENTS {
            for j in 0..SEG_LVL_MAX {
                f.enabled[i][j] = r.flag("feature_enabled")?;
                if !f.enabled[i][j] || FEATURE_BITS[j] == 0 {
                    continue;
                }
                let limit = FEATURE_MAX[j];
                let value = if FEATURE_SIGNED[j] {
                    r.su(1 + FEATURE_BITS[j], "feature_value")?
                        .clamp(-limit, limit)
                } else {
                    (r.u(FEATURE_BITS[j], "feature_value")? as i32).clamp(0, limit)
                };
                f.data[i][j] = value as i16;
            }
        }
        Ok(f)
    }

    /// get_qindex(1, segment_id) (7.12.2): the segment's quantizer index.
    pub fn qindex(&self, base_q_idx: u8, segment_id: usize) -> u8 {
        if self.segmentation_enabled && self.features.enabled[segment_id][SEG_LVL_ALT_Q] {
            let q =
                i32::from(base_q_idx) + i32::from(self.features.data[segment_id][SEG_LVL_ALT_Q]);
            q.clamp(0, 255) as u8
        } else {
            base_q_idx
        }
    }
}

/// delta_q_params() and delta_lf_params().
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeltaParams {
    pub delta_q_present: bool,
    pub delta_q_res: u8,
    pub delta_lf_present: bool,
    pub delta_lf_res: u8,
    pub delta_lf_multi: bool,
}

impl DeltaParams {
    pub fn parse(r: &mut BitReader, base_q_idx: u8, allow_intrabc: bool) -> Result<Self, Av1Error> {
        let mut d = Self::default();
        if base_q_idx > 0 {
            d.delta_q_present = r.flag("delta_q_present")?;
        }
        if d.delta_q_present {
            d.delta_q_res = r.u(2, "delta_q_res")? as u8;
            if !allow_intrabc {
                d.delta_lf_present = r.flag("delta_lf_present")?;
            }
            if d.delta_lf_present {
                d.delta_lf_res = r.u(2, "delta_lf_res")? as u8;
                d.delta_lf_multi = r.flag("delta_lf_multi")?;
            }
        }
        Ok(d)
    }
}

/// The loop filter deltas a reference slot saves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoopFilterDeltas {
    pub ref_deltas: [i8; TOTAL_REFS_PER_FRAME],
    pub mode_deltas: [i8; 2],
}

impl Default for LoopFilterDeltas {
    fn default() -> Self {
        Self {
            ref_deltas: DEFAULT_LOOP_FILTER_REF_DELTAS,
            mode_deltas: [0; 2],
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoopFilter {
    pub loop_filter_level: [u8; 4],
    pub loop_filter_sharpness: u8,
    pub loop_filter_delta_enabled: bool,
    pub loop_filter_delta_update: bool,
    /// Which deltas this header updated (bit i: ref delta i; bits 8, 9:
    /// the mode deltas).
    pub update_mask: u16,
    pub deltas: LoopFilterDeltas,
}

impl LoopFilter {
    /// loop_filter_params(); `previous` holds the primary reference frame's
    /// deltas (the defaults without one: `past_independence`).
    pub fn parse(
        r: &mut BitReader,
        num_planes: usize,
        skipped: bool,
        previous: LoopFilterDeltas,
        past_independence: bool,
    ) -> Result<Self, Av1Error> {
        let mut lf = Self {
            deltas: previous,
            ..Self::default()
        };
        if skipped {
            // Coded lossless or intra block copy: no filter, nothing coded.
            // setup_past_independence() set loop_filter_delta_enabled to 1
            // (libaom and dav1d do too); with a primary reference frame the
            // specification leaves the last header's value, which nothing
            // reads for an unfiltered frame: 0 here.
            lf.deltas = LoopFilterDeltas::default();
            lf.loop_filter_delta_enabled = past_independence;
            return Ok(lf);
        }
        lf.loop_filter_level[0] = r.u(6, "loop_filter_level")? as u8;
        lf.loop_filter_level[1] = r.u(6, "loop_filter_level")? as u8;
        if num_planes > 1 && (lf.loop_filter_level[0] != 0 || lf.loop_filter_level[1] != 0) {
            lf.loop_filter_level[2] = r.u(6, "loop_filter_level")? as u8;
            lf.loop_filter_level[3] = r.u(6, "loop_filter_level")? as u8;
        }
        lf.loop_filter_sharpness = r.u(3, "loop_filter_sharpness")? as u8;
        lf.loop_filter_delta_enabled = r.flag("loop_filter_delta_enabled")?;
        if lf.loop_filter_delta_enabled {
            lf.loop_filter_delta_update = r.flag("loop_filter_delta_update")?;
        }
        if lf.loop_filter_delta_update {
            for i in 0..TOTAL_REFS_PER_FRAME {
                if r.flag("update_ref_delta")? {
                    lf.update_mask |= 1 << i;
                    lf.deltas.ref_deltas[i] = r.su(7, "loop_filter_ref_deltas")? as i8;
                }
            }
            for i in 0..2 {
                if r.flag("update_mode_delta")? {
                    lf.update_mask |= 1 << (8 + i);
                    lf.deltas.mode_deltas[i] = r.su(7, "loop_filter_mode_deltas")? as i8;
                }
            }
        }
        Ok(lf)
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cdef {
    pub cdef_damping_minus_3: u8,
    pub cdef_bits: u8,
    /// Secondary strengths as coded (3 stands for 4).
    pub cdef_y_pri_strength: [u8; 8],
    pub cdef_y_sec_strength: [u8; 8],
    pub cdef_uv_pri_strength: [u8; 8],
    pub cdef_uv_sec_strength: [u8; 8],
}

impl Cdef {
    /// cdef_params(); `skipped` when coded lossless, intra block copy or
    /// CDEF off in the sequence.
    pub fn parse(r: &mut BitReader, num_planes: usize, skipped: bool) -> Result<Self, Av1Error> {
        let mut c = Self::default();
        if skipped {
            return Ok(c);
        }
        c.cdef_damping_minus_3 = r.u(2, "cdef_damping_minus_3")? as u8;
        c.cdef_bits = r.u(2, "cdef_bits")? as u8;
        for i in 0..1usize << c.cdef_bits {
            c.cdef_y_pri_strength[i] = r.u(4, "cdef_y_pri_strength")? as u8;
            c.cdef_y_sec_strength[i] = r.u(2, "cdef_y_sec_strength")? as u8;
            if num_planes > 1 {
                c.cdef_uv_pri_strength[i] = r.u(4, "cdef_uv_pri_strength")? as u8;
                c.cdef_uv_sec_strength[i] = r.u(2, "cdef_uv_sec_strength")? as u8;
            }
        }
        Ok(c)
    }
}

/// `FrameRestorationType` values (after Remap_Lr_Type), as the V4L2 uAPI
/// numbers them too.
pub const RESTORE_NONE: u8 = 0;
pub const RESTORE_SWITCHABLE: u8 = 3;
const REMAP_LR_TYPE: [u8; 4] = [RESTORE_NONE, RESTORE_SWITCHABLE, 1, 2];

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoopRestoration {
    pub frame_restoration_type: [u8; 3],
    pub uses_lr: bool,
    pub lr_unit_shift: u8,
    pub lr_uv_shift: u8,
    /// `LoopRestorationSize` per plane.
    pub loop_restoration_size: [u32; 3],
}

impl LoopRestoration {
    /// lr_params(); `skipped` when all lossless, intra block copy or
    /// restoration off in the sequence.
    pub fn parse(r: &mut BitReader, seq: &SequenceHeader, skipped: bool) -> Result<Self, Av1Error> {
        let mut lr = Self::default();
        if skipped {
            return Ok(lr);
        }
        let mut uses_chroma_lr = false;
        for i in 0..seq.color_config.num_planes() {
            let t = REMAP_LR_TYPE[r.u(2, "lr_type")? as usize];
            lr.frame_restoration_type[i] = t;
            if t != RESTORE_NONE {
                lr.uses_lr = true;
                uses_chroma_lr |= i > 0;
            }
        }
        if !lr.uses_lr {
            return Ok(lr);
        }
        let min_shift = i64::from(seq.use_128x128_superblock);
        lr.lr_unit_shift = increment(r, "lr_unit_shift", min_shift, 2)? as u8;
        let c = &seq.color_config;
        if c.subsampling_x && c.subsampling_y && uses_chroma_lr {
            lr.lr_uv_shift = r.u(1, "lr_uv_shift")? as u8;
        }
        // RESTORATION_TILESIZE_MAX is 256.
        let luma = 256 >> (2 - lr.lr_unit_shift);
        lr.loop_restoration_size = [luma, luma >> lr.lr_uv_shift, luma >> lr.lr_uv_shift];
        Ok(lr)
    }
}

/// A value from `min` counting up by one for each 1 bit, at most `max`:
/// how the specification codes tile log2s, lr_unit_shift and tx_mode one
/// bit at a time; traced as one element, as FFmpeg does.
pub fn increment(
    r: &mut BitReader,
    name: &'static str,
    min: i64,
    max: i64,
) -> Result<i64, Av1Error> {
    Ok(r.compound(name, |r| {
        let mut value = min;
        while value < max && r.flag(name)? {
            value += 1;
        }
        Ok(value)
    })?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unfiltered_frame_without_a_primary_reference_has_deltas_enabled() {
        // Nothing is read for a frame whose filters are off.
        let mut r = BitReader::new(&[]);
        let independent = LoopFilter::parse(&mut r, 3, true, LoopFilterDeltas::default(), true)
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(independent.loop_filter_delta_enabled);
        assert!(!independent.loop_filter_delta_update);
        assert_eq!(independent.loop_filter_level, [0; 4]);
        assert_eq!(independent.deltas, LoopFilterDeltas::default());
        let mut r = BitReader::new(&[]);
        let previous = LoopFilterDeltas {
            mode_deltas: [1, -1],
            ..LoopFilterDeltas::default()
        };
        let referenced =
            LoopFilter::parse(&mut r, 3, true, previous, false).unwrap_or_else(|e| panic!("{e}"));
        assert!(!referenced.loop_filter_delta_enabled);
        assert_eq!(referenced.deltas, LoopFilterDeltas::default());
    }
}
