//! global_motion_params() (5.9.24, 5.9.25): each reference's warp model,
//! coded against the primary reference frame's (7.10 decode_signed_
//! subexp_with_ref).

use crate::codec::bitstream::{BitReader, ReadError};

use super::Av1Error;

pub const IDENTITY: u8 = 0;
pub const TRANSLATION: u8 = 1;
pub const ROTZOOM: u8 = 2;
pub const AFFINE: u8 = 3;
const WARPEDMODEL_PREC_BITS: u32 = 16;
const GM_ABS_TRANS_BITS: u32 = 12;
const GM_ABS_TRANS_ONLY_BITS: u32 = 9;
const GM_ABS_ALPHA_BITS: u32 = 12;
const GM_ALPHA_PREC_BITS: u32 = 15;
const GM_TRANS_PREC_BITS: u32 = 6;
const GM_TRANS_ONLY_PREC_BITS: u32 = 3;

/// `gm_params` of every reference frame (index 0, INTRA_FRAME, unused):
/// also what a reference slot saves.
pub type GmParams = [[i32; 6]; 8];

/// The identity model for every reference.
pub fn default_gm_params() -> GmParams {
    let identity = [
        0,
        0,
        1 << WARPEDMODEL_PREC_BITS,
        0,
        0,
        1 << WARPEDMODEL_PREC_BITS,
    ];
    [identity; 8]
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GlobalMotion {
    /// `GmType` per reference frame (index 0 unused).
    pub gm_type: [u8; 8],
    pub gm_params: GmParams,
}

impl Default for GlobalMotion {
    fn default() -> Self {
        Self {
            gm_type: [IDENTITY; 8],
            gm_params: default_gm_params(),
        }
    }
}

/// decode_subexp(numSyms) (untraced parts).
fn decode_subexp(r: &mut BitReader, num_syms: u32) -> Result<u32, ReadError> {
    let (mut i, mut mk, k) = (0u32, 0u32, 3u32);
    loop {
        let b2 = if i > 0 { k + i - 1 } else { k };
        let a = 1u32 << b2;
        if num_syms <= mk + 3 * a {
            return Ok(r.ns(num_syms - mk, "subexp_final_bits")? + mk);
        }
        if !r.flag("subexp_more_bits")? {
            return Ok(r.u(b2, "subexp_bits")? + mk);
        }
        i += 1;
        mk += a;
    }
}

fn inverse_recenter(r: i32, v: i32) -> i32 {
    if v > 2 * r {
        v
    } else if v & 1 == 1 {
        r - ((v + 1) >> 1)
    } else {
        r + (v >> 1)
    }
}

/// decode_signed_subexp_with_ref(low, high, r).
fn decode_signed_subexp_with_ref(
    reader: &mut BitReader,
    low: i32,
    high: i32,
    r: i32,
) -> Result<(i32, u32), ReadError> {
    let mx = high - low;
    let r = r - low;
    let v = decode_subexp(reader, mx as u32)?;
    let x = if (r << 1) <= mx {
        inverse_recenter(r, v as i32)
    } else {
        mx - 1 - inverse_recenter(mx - 1 - r, v as i32)
    };
    Ok((x + low, v))
}

impl GlobalMotion {
    /// global_motion_params(); `previous` is `PrevGmParams`.
    pub fn parse(
        r: &mut BitReader,
        frame_is_intra: bool,
        allow_high_precision_mv: bool,
        previous: &GmParams,
    ) -> Result<Self, Av1Error> {
        let mut gm = Self::default();
        if frame_is_intra {
            return Ok(gm);
        }
        for (reference, prev) in previous.iter().enumerate().skip(1) {
            let kind = if !r.flag("is_global")? {
                IDENTITY
            } else if r.flag("is_rot_zoom")? {
                ROTZOOM
            } else if r.flag("is_translation")? {
                TRANSLATION
            } else {
                AFFINE
            };
            gm.gm_type[reference] = kind;
            let mut read =
                |idx: usize| Self::read_param(r, kind, idx, allow_high_precision_mv, prev[idx]);
            let params = &mut gm.gm_params[reference];
            if kind >= ROTZOOM {
                params[2] = read(2)?;
                params[3] = read(3)?;
                if kind == AFFINE {
                    params[4] = read(4)?;
                    params[5] = read(5)?;
                } else {
                    params[4] = -params[3];
                    params[5] = params[2];
                }
            }
            if kind >= TRANSLATION {
                params[0] = read(0)?;
                params[1] = read(1)?;
            }
        }
        Ok(gm)
    }

    /// read_global_param(); traced as one `gm_params` element whose value
    /// is the subexp code, as FFmpeg traces it.
    fn read_param(
        r: &mut BitReader,
        kind: u8,
        idx: usize,
        allow_high_precision_mv: bool,
        previous: i32,
    ) -> Result<i32, Av1Error> {
        let (abs_bits, prec_bits) = match idx {
            0 | 1 if kind == TRANSLATION => {
                let hp = u32::from(!allow_high_precision_mv);
                (GM_ABS_TRANS_ONLY_BITS - hp, GM_TRANS_ONLY_PREC_BITS - hp)
            }
            0 | 1 => (GM_ABS_TRANS_BITS, GM_TRANS_PREC_BITS),
            _ => (GM_ABS_ALPHA_BITS, GM_ALPHA_PREC_BITS),
        };
        let prec_diff = WARPEDMODEL_PREC_BITS - prec_bits;
        let diagonal = idx % 3 == 2;
        let round = if diagonal {
            1 << WARPEDMODEL_PREC_BITS
        } else {
            0
        };
        let sub = if diagonal { 1 << prec_bits } else { 0 };
        let mx = 1i32 << abs_bits;
        let reference = (previous >> prec_diff) - sub;
        let mut decoded = 0;
        r.compound("gm_params", |r| {
            let (value, code) = decode_signed_subexp_with_ref(r, -mx, mx + 1, reference)?;
            decoded = value;
            Ok(i64::from(code))
        })?;
        Ok((decoded << prec_diff) + round)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::bitstream::reader::BitWriter;

    #[test]
    fn a_zero_code_against_the_identity_keeps_it_near() {
        // Translation-only for LAST with high precision off; every other
        // reference identity.
        let mut w = BitWriter::new();
        w.u(3, 0b101); // is_global, !is_rot_zoom, is_translation
                       // Two params: numSyms = 2 * 256 + 1 = 513: more bits 0, then 3 bits.
        for _ in 0..2 {
            w.u(1, 0);
            w.u(3, 0);
        }
        w.u(6, 0);
        let mut r = BitReader::new(&w.bytes);
        let gm = GlobalMotion::parse(&mut r, false, false, &default_gm_params()).unwrap();
        assert_eq!(gm.gm_type[1], TRANSLATION);
        // Reference 0, code 0 decodes to 0 for both translations.
        assert_eq!(gm.gm_params[1], [0, 0, 1 << 16, 0, 0, 1 << 16]);
        assert_eq!(gm.gm_type[2..], [IDENTITY; 6]);
    }
}
