//! Slice header (7.3.3) with ref_pic_list_modification, pred_weight_table
//! and dec_ref_pic_marking, and the bit sizes the V4L2 controls need.

use crate::codec::bitstream::BitReader;

use super::nal::{nal_type, Nal};
use super::pps::Pps;
use super::sps::Sps;
use super::H264Error;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SliceType {
    P,
    B,
    I,
    Sp,
    Si,
}

impl SliceType {
    fn from_raw(raw: u32) -> Self {
        match raw % 5 {
            0 => Self::P,
            1 => Self::B,
            2 => Self::I,
            3 => Self::Sp,
            _ => Self::Si,
        }
    }

    /// `slice_type % 5` (Table 7-6), the value decoders take.
    pub fn value(self) -> u8 {
        match self {
            Self::P => 0,
            Self::B => 1,
            Self::I => 2,
            Self::Sp => 3,
            Self::Si => 4,
        }
    }

    pub fn is_intra(self) -> bool {
        matches!(self, Self::I | Self::Si)
    }
}

/// One ref_pic_list_modification operation (modification_of_pic_nums_idc
/// 0..=2 with its argument).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefPicListModification {
    SubtractShortTerm(u32),
    AddShortTerm(u32),
    LongTerm(u32),
}

/// memory_management_control_operation 1..=6 (Table 7-9).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mmco {
    ForgetShortTerm {
        difference_of_pic_nums_minus1: u32,
    },
    ForgetLongTerm {
        long_term_pic_num: u32,
    },
    ShortToLongTerm {
        difference_of_pic_nums_minus1: u32,
        long_term_frame_idx: u32,
    },
    SetMaxLongTermIdx {
        max_long_term_frame_idx_plus1: u32,
    },
    ForgetAll,
    CurrentToLongTerm {
        long_term_frame_idx: u32,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DecRefPicMarking {
    pub no_output_of_prior_pics_flag: bool,
    pub long_term_reference_flag: bool,
    /// None: sliding window; Some: adaptive marking with these operations.
    pub adaptive: Option<Vec<Mmco>>,
}

impl DecRefPicMarking {
    pub fn has_mmco5(&self) -> bool {
        self.adaptive
            .as_ref()
            .is_some_and(|ops| ops.contains(&Mmco::ForgetAll))
    }
}

/// Weights of one list entry: (weight, offset) for luma, Cb, Cr, with the
/// inferred defaults when the stream sends none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WeightEntry {
    pub luma_weight: i16,
    pub luma_offset: i16,
    pub chroma_weight: [i16; 2],
    pub chroma_offset: [i16; 2],
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PredWeightTable {
    pub luma_log2_weight_denom: u8,
    pub chroma_log2_weight_denom: u8,
    pub l0: Vec<WeightEntry>,
    pub l1: Vec<WeightEntry>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SliceHeader {
    pub nal_ref_idc: u8,
    pub idr: bool,
    pub first_mb_in_slice: u32,
    pub slice_type: SliceType,
    pub pic_parameter_set_id: u8,
    pub colour_plane_id: u8,
    pub frame_num: u32,
    pub field_pic_flag: bool,
    pub bottom_field_flag: bool,
    pub idr_pic_id: u32,
    pub pic_order_cnt_lsb: u32,
    pub delta_pic_order_cnt_bottom: i32,
    pub delta_pic_order_cnt: [i32; 2],
    pub redundant_pic_cnt: u32,
    pub direct_spatial_mv_pred_flag: bool,
    pub num_ref_idx_active_override_flag: bool,
    /// As signalled or inferred from the PPS defaults (also for I slices).
    pub num_ref_idx_l0_active_minus1: u8,
    pub num_ref_idx_l1_active_minus1: u8,
    pub ref_pic_list_modification_l0: Vec<RefPicListModification>,
    pub ref_pic_list_modification_l1: Vec<RefPicListModification>,
    pub pred_weight_table: Option<PredWeightTable>,
    pub dec_ref_pic_marking: Option<DecRefPicMarking>,
    pub cabac_init_idc: u8,
    pub slice_qp_delta: i8,
    pub sp_for_switch_flag: bool,
    pub slice_qs_delta: i8,
    pub disable_deblocking_filter_idc: u8,
    pub slice_alpha_c0_offset_div2: i8,
    pub slice_beta_offset_div2: i8,
    pub slice_group_change_cycle: u32,
    /// Bits from the NAL's first bit (header byte included, emulation
    /// prevention removed) to the start of slice_data().
    pub header_bit_size: u32,
    /// Bits of pic_order_cnt_lsb, delta_pic_order_cnt_bottom and
    /// delta_pic_order_cnt[0..2] together.
    pub pic_order_cnt_bit_size: u32,
    /// Bits of dec_ref_pic_marking() (0 when absent).
    pub dec_ref_pic_marking_bit_size: u32,
}

impl SliceHeader {
    /// Reads the pic_parameter_set_id of a slice NAL unit without parsing
    /// the rest: the first two elements are fixed, so the PPS (and its SPS)
    /// can be looked up.
    pub fn peek_pps_id(nal: &Nal) -> Result<u8, H264Error> {
        let mut r = nal.reader();
        r.skip(8, "nal_unit_header")?;
        r.ue("first_mb_in_slice")?;
        r.ue_max("slice_type", 9)?;
        Ok(r.ue_max("pic_parameter_set_id", 255)? as u8)
    }

    /// Parses a slice header; `r` is just after the NAL header byte of a
    /// slice NAL of type `nal_unit_type` (1 or 5).
    pub fn parse(
        r: &mut BitReader,
        nal_ref_idc: u8,
        nal_unit_type: u8,
        sps: &Sps,
        pps: &Pps,
    ) -> Result<Self, H264Error> {
        let idr = nal_unit_type == nal_type::SLICE_IDR;
        let pic_size_in_mbs = sps.width_in_mbs() * sps.frame_height_in_mbs();
        let first_mb_in_slice = r.ue_max("first_mb_in_slice", pic_size_in_mbs - 1)?;
        let slice_type = SliceType::from_raw(r.ue_max("slice_type", 9)?);
        if idr && !slice_type.is_intra() {
            return Err(H264Error::Invalid("IDR picture with a P or B slice"));
        }
        let pic_parameter_set_id = r.ue_max("pic_parameter_set_id", 255)? as u8;
        let mut h = SliceHeader {
            nal_ref_idc,
            idr,
            first_mb_in_slice,
            slice_type,
            pic_parameter_set_id,
            colour_plane_id: 0,
            frame_num: 0,
            field_pic_flag: false,
            bottom_field_flag: false,
            idr_pic_id: 0,
            pic_order_cnt_lsb: 0,
            delta_pic_order_cnt_bottom: 0,
            delta_pic_order_cnt: [0; 2],
            redundant_pic_cnt: 0,
            direct_spatial_mv_pred_flag: false,
            num_ref_idx_active_override_flag: false,
            num_ref_idx_l0_active_minus1: pps.num_ref_idx_l0_default_active_minus1,
            num_ref_idx_l1_active_minus1: pps.num_ref_idx_l1_default_active_minus1,
            ref_pic_list_modification_l0: Vec::new(),
            ref_pic_list_modification_l1: Vec::new(),
            pred_weight_table: None,
            dec_ref_pic_marking: None,
            cabac_init_idc: 0,
            slice_qp_delta: 0,
            sp_for_switch_flag: false,
            slice_qs_delta: 0,
            disable_deblocking_filter_idc: 0,
            slice_alpha_c0_offset_div2: 0,
            slice_beta_offset_div2: 0,
            slice_group_change_cycle: 0,
            header_bit_size: 0,
            pic_order_cnt_bit_size: 0,
            dec_ref_pic_marking_bit_size: 0,
        };
        if sps.separate_colour_plane_flag {
            h.colour_plane_id = r.u(2, "colour_plane_id")? as u8;
            if h.colour_plane_id > 2 {
                return Err(H264Error::Invalid("colour_plane_id is 3"));
            }
        }
        h.frame_num = r.u(u32::from(sps.log2_max_frame_num_minus4) + 4, "frame_num")?;
        if idr && h.frame_num != 0 {
            return Err(H264Error::Invalid("IDR picture with frame_num != 0"));
        }
        if !sps.frame_mbs_only_flag {
            h.field_pic_flag = r.flag("field_pic_flag")?;
            if h.field_pic_flag {
                h.bottom_field_flag = r.flag("bottom_field_flag")?;
            }
        }
        if h.field_pic_flag && first_mb_in_slice >= pic_size_in_mbs / 2 {
            return Err(H264Error::Invalid("first_mb_in_slice beyond the field"));
        }
        if idr {
            h.idr_pic_id = r.ue_max("idr_pic_id", 65535)?;
        }
        let poc_start = r.position();
        if sps.pic_order_cnt_type == 0 {
            h.pic_order_cnt_lsb = r.u(
                u32::from(sps.log2_max_pic_order_cnt_lsb_minus4) + 4,
                "pic_order_cnt_lsb",
            )?;
            if pps.bottom_field_pic_order_in_frame_present_flag && !h.field_pic_flag {
                h.delta_pic_order_cnt_bottom = r.se("delta_pic_order_cnt_bottom")?;
            }
        }
        if sps.pic_order_cnt_type == 1 && !sps.delta_pic_order_always_zero_flag {
            h.delta_pic_order_cnt[0] = r.se("delta_pic_order_cnt[0]")?;
            if pps.bottom_field_pic_order_in_frame_present_flag && !h.field_pic_flag {
                h.delta_pic_order_cnt[1] = r.se("delta_pic_order_cnt[1]")?;
            }
        }
        h.pic_order_cnt_bit_size = (r.position() - poc_start) as u32;
        if pps.redundant_pic_cnt_present_flag {
            h.redundant_pic_cnt = r.ue_max("redundant_pic_cnt", 127)?;
        }
        if slice_type == SliceType::B {
            h.direct_spatial_mv_pred_flag = r.flag("direct_spatial_mv_pred_flag")?;
        }
        if matches!(slice_type, SliceType::P | SliceType::Sp | SliceType::B) {
            h.num_ref_idx_active_override_flag = r.flag("num_ref_idx_active_override_flag")?;
            if h.num_ref_idx_active_override_flag {
                let max = if h.field_pic_flag { 31 } else { 15 };
                h.num_ref_idx_l0_active_minus1 =
                    r.ue_max("num_ref_idx_l0_active_minus1", max)? as u8;
                if slice_type == SliceType::B {
                    h.num_ref_idx_l1_active_minus1 =
                        r.ue_max("num_ref_idx_l1_active_minus1", max)? as u8;
                }
            }
        }
        if !slice_type.is_intra() {
            h.ref_pic_list_modification_l0 =
                parse_modifications(r, "ref_pic_list_modification_flag_l0")?;
            if slice_type == SliceType::B {
                h.ref_pic_list_modification_l1 =
                    parse_modifications(r, "ref_pic_list_modification_flag_l1")?;
            }
        }
        if (pps.weighted_pred_flag && matches!(slice_type, SliceType::P | SliceType::Sp))
            || (pps.weighted_bipred_idc == 1 && slice_type == SliceType::B)
        {
            h.pred_weight_table = Some(parse_pred_weight_table(r, &h, sps)?);
        }
        if nal_ref_idc != 0 {
            let start = r.position();
            h.dec_ref_pic_marking = Some(parse_dec_ref_pic_marking(r, idr)?);
            h.dec_ref_pic_marking_bit_size = (r.position() - start) as u32;
        }
        if pps.entropy_coding_mode_flag && !slice_type.is_intra() {
            h.cabac_init_idc = r.ue_max("cabac_init_idc", 2)? as u8;
        }
        let qp_min =
            -(26 + i32::from(pps.pic_init_qp_minus26) + 6 * i32::from(sps.bit_depth_luma_minus8));
        let qp_max = 25 - i32::from(pps.pic_init_qp_minus26);
        h.slice_qp_delta = r.se_range("slice_qp_delta", qp_min, qp_max)? as i8;
        if matches!(slice_type, SliceType::Sp | SliceType::Si) {
            if slice_type == SliceType::Sp {
                h.sp_for_switch_flag = r.flag("sp_for_switch_flag")?;
            }
            let qs_min = -(26 + i32::from(pps.pic_init_qs_minus26));
            let qs_max = 25 - i32::from(pps.pic_init_qs_minus26);
            h.slice_qs_delta = r.se_range("slice_qs_delta", qs_min, qs_max)? as i8;
        }
        if pps.deblocking_filter_control_present_flag {
            h.disable_deblocking_filter_idc = r.ue_max("disable_deblocking_filter_idc", 2)? as u8;
            if h.disable_deblocking_filter_idc != 1 {
                h.slice_alpha_c0_offset_div2 =
                    r.se_range("slice_alpha_c0_offset_div2", -6, 6)? as i8;
                h.slice_beta_offset_div2 = r.se_range("slice_beta_offset_div2", -6, 6)? as i8;
            }
        }
        if pps.num_slice_groups_minus1 > 0 && (3..=5).contains(&pps.slice_group_map_type) {
            // Ceil(Log2(PicSizeInMapUnits / SliceGroupChangeRate + 1)) (7-35).
            let map_units =
                sps.width_in_mbs() * (u32::from(sps.pic_height_in_map_units_minus1) + 1);
            let rate = pps.slice_group_change_rate_minus1 + 1;
            let value = map_units.div_ceil(rate) + 1;
            let bits = 32 - (value - 1).leading_zeros();
            h.slice_group_change_cycle = r.u(bits, "slice_group_change_cycle")?;
        }
        h.header_bit_size = r.position() as u32;
        Ok(h)
    }

    /// MaxPicNum-related: whether this slice codes a field.
    pub fn is_field(&self) -> bool {
        self.field_pic_flag
    }

    /// Number of active entries in list 0 / list 1 for this slice type.
    pub fn num_ref_idx_active(&self) -> (usize, usize) {
        match self.slice_type {
            SliceType::P | SliceType::Sp => (usize::from(self.num_ref_idx_l0_active_minus1) + 1, 0),
            SliceType::B => (
                usize::from(self.num_ref_idx_l0_active_minus1) + 1,
                usize::from(self.num_ref_idx_l1_active_minus1) + 1,
            ),
            SliceType::I | SliceType::Si => (0, 0),
        }
    }
}

fn parse_modifications(
    r: &mut BitReader,
    flag_name: &'static str,
) -> Result<Vec<RefPicListModification>, H264Error> {
    let mut ops = Vec::new();
    if !r.flag(flag_name)? {
        return Ok(ops);
    }
    loop {
        let op = match r.ue_max("modification_of_pic_nums_idc", 3)? {
            0 => RefPicListModification::SubtractShortTerm(
                r.ue_max("abs_diff_pic_num_minus1", 131071)?,
            ),
            1 => RefPicListModification::AddShortTerm(r.ue_max("abs_diff_pic_num_minus1", 131071)?),
            2 => RefPicListModification::LongTerm(r.ue_max("long_term_pic_num", 65535)?),
            _ => return Ok(ops),
        };
        // At most one operation per list entry, plus the end marker.
        if ops.len() == 32 {
            return Err(H264Error::Invalid(
                "more than 32 ref_pic_list_modification operations",
            ));
        }
        ops.push(op);
    }
}

fn parse_weights(
    r: &mut BitReader,
    count: usize,
    table: &PredWeightTable,
    chroma: bool,
    names: [&'static str; 6],
) -> Result<Vec<WeightEntry>, H264Error> {
    let luma_default = 1i16 << table.luma_log2_weight_denom;
    let chroma_default = 1i16 << table.chroma_log2_weight_denom;
    let mut entries = Vec::with_capacity(count);
    for _ in 0..count {
        let mut e = WeightEntry {
            luma_weight: luma_default,
            luma_offset: 0,
            // Inferred weights exist only where there is chroma.
            chroma_weight: if chroma { [chroma_default; 2] } else { [0; 2] },
            chroma_offset: [0; 2],
        };
        if r.flag(names[0])? {
            e.luma_weight = r.se_range(names[1], -128, 127)? as i16;
            e.luma_offset = r.se_range(names[2], -128, 127)? as i16;
        }
        if chroma && r.flag(names[3])? {
            for j in 0..2 {
                e.chroma_weight[j] = r.se_range(names[4], -128, 127)? as i16;
                e.chroma_offset[j] = r.se_range(names[5], -128, 127)? as i16;
            }
        }
        entries.push(e);
    }
    Ok(entries)
}

fn parse_pred_weight_table(
    r: &mut BitReader,
    h: &SliceHeader,
    sps: &Sps,
) -> Result<PredWeightTable, H264Error> {
    let mut t = PredWeightTable {
        luma_log2_weight_denom: r.ue_max("luma_log2_weight_denom", 7)? as u8,
        ..PredWeightTable::default()
    };
    let chroma = sps.chroma_array_type() != 0;
    if chroma {
        t.chroma_log2_weight_denom = r.ue_max("chroma_log2_weight_denom", 7)? as u8;
    }
    let (n0, n1) = h.num_ref_idx_active();
    t.l0 = parse_weights(
        r,
        n0,
        &t,
        chroma,
        [
            "luma_weight_l0_flag",
            "luma_weight_l0",
            "luma_offset_l0",
            "chroma_weight_l0_flag",
            "chroma_weight_l0",
            "chroma_offset_l0",
        ],
    )?;
    if h.slice_type == SliceType::B {
        t.l1 = parse_weights(
            r,
            n1,
            &t,
            chroma,
            [
                "luma_weight_l1_flag",
                "luma_weight_l1",
                "luma_offset_l1",
                "chroma_weight_l1_flag",
                "chroma_weight_l1",
                "chroma_offset_l1",
            ],
        )?;
    }
    Ok(t)
}

fn parse_dec_ref_pic_marking(r: &mut BitReader, idr: bool) -> Result<DecRefPicMarking, H264Error> {
    let mut m = DecRefPicMarking::default();
    if idr {
        m.no_output_of_prior_pics_flag = r.flag("no_output_of_prior_pics_flag")?;
        m.long_term_reference_flag = r.flag("long_term_reference_flag")?;
        return Ok(m);
    }
    if !r.flag("adaptive_ref_pic_marking_mode_flag")? {
        return Ok(m);
    }
    let mut ops = Vec::new();
    loop {
        let op = match r.ue_max("memory_management_control_operation", 6)? {
            0 => break,
            1 => Mmco::ForgetShortTerm {
                difference_of_pic_nums_minus1: r.ue_max("difference_of_pic_nums_minus1", 131071)?,
            },
            2 => Mmco::ForgetLongTerm {
                long_term_pic_num: r.ue_max("long_term_pic_num", 65535)?,
            },
            3 => Mmco::ShortToLongTerm {
                difference_of_pic_nums_minus1: r.ue_max("difference_of_pic_nums_minus1", 131071)?,
                long_term_frame_idx: r.ue_max("long_term_frame_idx", 15)?,
            },
            4 => Mmco::SetMaxLongTermIdx {
                max_long_term_frame_idx_plus1: r.ue_max("max_long_term_frame_idx_plus1", 16)?,
            },
            5 => Mmco::ForgetAll,
            _ => Mmco::CurrentToLongTerm {
                long_term_frame_idx: r.ue_max("long_term_frame_idx", 15)?,
            },
        };
        // Each reference can be touched once or twice; more is not a stream.
        if ops.len() == 66 {
            return Err(H264Error::Invalid(
                "more than 66 memory management operations",
            ));
        }
        ops.push(op);
    }
    m.adaptive = Some(ops);
    Ok(m)
}
