//! film_grain_params() (5.9.30): the grain synthesis parameters, new or
//! taken from a reference slot (`update_grain` 0).

use crate::codec::bitstream::BitReader;

use super::sequence::SequenceHeader;
use super::Av1Error;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FilmGrainParams {
    pub apply_grain: bool,
    pub grain_seed: u16,
    pub update_grain: bool,
    pub film_grain_params_ref_idx: u8,
    pub num_y_points: u8,
    pub point_y_value: [u8; 14],
    pub point_y_scaling: [u8; 14],
    pub chroma_scaling_from_luma: bool,
    pub num_cb_points: u8,
    pub point_cb_value: [u8; 10],
    pub point_cb_scaling: [u8; 10],
    pub num_cr_points: u8,
    pub point_cr_value: [u8; 10],
    pub point_cr_scaling: [u8; 10],
    pub grain_scaling_minus_8: u8,
    pub ar_coeff_lag: u8,
    pub ar_coeffs_y_plus_128: [u8; 24],
    pub ar_coeffs_cb_plus_128: [u8; 25],
    pub ar_coeffs_cr_plus_128: [u8; 25],
    pub ar_coeff_shift_minus_6: u8,
    pub grain_scale_shift: u8,
    pub cb_mult: u8,
    pub cb_luma_mult: u8,
    pub cb_offset: u16,
    pub cr_mult: u8,
    pub cr_luma_mult: u8,
    pub cr_offset: u16,
    pub overlap_flag: bool,
    pub clip_to_restricted_range: bool,
}

fn points(
    r: &mut BitReader,
    count: u8,
    values: &mut [u8],
    scalings: &mut [u8],
    names: (&'static str, &'static str),
) -> Result<(), Av1Error> {
    for i in 0..usize::from(count) {
        values[i] = r.u(8, names.0)? as u8;
        if i > 0 && values[i] <= values[i - 1] {
            return Err(Av1Error::Invalid("film grain points not increasing"));
        }
        scalings[i] = r.u(8, names.1)? as u8;
    }
    Ok(())
}

impl FilmGrainParams {
    /// film_grain_params(). `load` gives the parameters a reference slot
    /// saved (`update_grain` 0), `None` for an empty slot.
    pub fn parse(
        r: &mut BitReader,
        seq: &SequenceHeader,
        shown: bool,
        inter_frame: bool,
        load: impl FnOnce(u8) -> Option<FilmGrainParams>,
    ) -> Result<Self, Av1Error> {
        if !seq.film_grain_params_present || !shown || !r.flag("apply_grain")? {
            return Ok(Self::default());
        }
        let grain_seed = r.u(16, "grain_seed")? as u16;
        let update_grain = !inter_frame || r.flag("update_grain")?;
        if !update_grain {
            let idx = r.u(3, "film_grain_params_ref_idx")? as u8;
            let mut loaded = load(idx).ok_or(Av1Error::MissingReference(idx))?;
            loaded.grain_seed = grain_seed;
            loaded.update_grain = false;
            loaded.film_grain_params_ref_idx = idx;
            return Ok(loaded);
        }
        let mut g = Self {
            apply_grain: true,
            grain_seed,
            update_grain,
            num_y_points: r.u(4, "num_y_points")? as u8,
            ..Self::default()
        };
        if g.num_y_points > 14 {
            return Err(Av1Error::Invalid("num_y_points above 14"));
        }
        points(
            r,
            g.num_y_points,
            &mut g.point_y_value,
            &mut g.point_y_scaling,
            ("point_y_value", "point_y_scaling"),
        )?;
        let c = &seq.color_config;
        g.chroma_scaling_from_luma = !c.mono_chrome && r.flag("chroma_scaling_from_luma")?;
        let no_chroma_points = c.mono_chrome
            || g.chroma_scaling_from_luma
            || (c.subsampling_x && c.subsampling_y && g.num_y_points == 0);
        if !no_chroma_points {
            g.num_cb_points = r.u(4, "num_cb_points")? as u8;
            if g.num_cb_points > 10 {
                return Err(Av1Error::Invalid("num_cb_points above 10"));
            }
            points(
                r,
                g.num_cb_points,
                &mut g.point_cb_value,
                &mut g.point_cb_scaling,
                ("point_cb_value", "point_cb_scaling"),
            )?;
            g.num_cr_points = r.u(4, "num_cr_points")? as u8;
            if g.num_cr_points > 10 {
                return Err(Av1Error::Invalid("num_cr_points above 10"));
            }
            points(
                r,
                g.num_cr_points,
                &mut g.point_cr_value,
                &mut g.point_cr_scaling,
                ("point_cr_value", "point_cr_scaling"),
            )?;
        }
        g.grain_scaling_minus_8 = r.u(2, "grain_scaling_minus_8")? as u8;
        g.ar_coeff_lag = r.u(2, "ar_coeff_lag")? as u8;
        let lag = usize::from(g.ar_coeff_lag);
        let num_pos_luma = 2 * lag * (lag + 1);
        let num_pos_chroma = num_pos_luma + usize::from(g.num_y_points > 0);
        if g.num_y_points > 0 {
            for i in 0..num_pos_luma {
                g.ar_coeffs_y_plus_128[i] = r.u(8, "ar_coeffs_y_plus_128")? as u8;
            }
        }
        if g.chroma_scaling_from_luma || g.num_cb_points > 0 {
            for i in 0..num_pos_chroma {
                g.ar_coeffs_cb_plus_128[i] = r.u(8, "ar_coeffs_cb_plus_128")? as u8;
            }
        }
        if g.chroma_scaling_from_luma || g.num_cr_points > 0 {
            for i in 0..num_pos_chroma {
                g.ar_coeffs_cr_plus_128[i] = r.u(8, "ar_coeffs_cr_plus_128")? as u8;
            }
        }
        g.ar_coeff_shift_minus_6 = r.u(2, "ar_coeff_shift_minus_6")? as u8;
        g.grain_scale_shift = r.u(2, "grain_scale_shift")? as u8;
        if g.num_cb_points > 0 {
            g.cb_mult = r.u(8, "cb_mult")? as u8;
            g.cb_luma_mult = r.u(8, "cb_luma_mult")? as u8;
            g.cb_offset = r.u(9, "cb_offset")? as u16;
        }
        if g.num_cr_points > 0 {
            g.cr_mult = r.u(8, "cr_mult")? as u8;
            g.cr_luma_mult = r.u(8, "cr_luma_mult")? as u8;
            g.cr_offset = r.u(9, "cr_offset")? as u16;
        }
        g.overlap_flag = r.flag("overlap_flag")?;
        g.clip_to_restricted_range = r.flag("clip_to_restricted_range")?;
        Ok(g)
    }
}
