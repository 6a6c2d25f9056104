//! Slice segment header (7.3.6.1, 7.4.7.1) with long-term pictures,
//! ref_pic_lists_modification() (7.3.6.2), pred_weight_table() (7.3.6.3),
//! any number of entry points, the header extension, and the header's size
//! up to the slice data: in RBSP bits and in bytes of the NAL unit as sent.

use super::rps::StRefPicSet;

/// slice_type (Table 7-7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SliceType {
    B = 0,
    P = 1,
    I = 2,
}

impl SliceType {
    /// The coded value.
    pub fn value(self) -> u8 {
        self as u8
    }

    pub fn is_intra(self) -> bool {
        self == Self::I
    }
}

/// One entry of the slice's long-term picture list (7.3.6.1): a candidate
/// of the SPS (the first num_long_term_sps) or one coded in the header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LongTermPic {
    /// lt_idx_sps[i] (SPS candidates only).
    pub lt_idx_sps: u8,
    /// PocLsbLt[i]: poc_lsb_lt[i] or the SPS candidate's.
    pub poc_lsb_lt: u16,
    /// UsedByCurrPicLt[i].
    pub used_by_curr_pic_lt_flag: bool,
    pub delta_poc_msb_present_flag: bool,
    pub delta_poc_msb_cycle_lt: u32,
    /// DeltaPocMsbCycleLt[i] (7-52): accumulated over the SPS entries and
    /// over the header entries separately.
    pub delta_poc_msb_cycle: u32,
}

/// Weights of one reference picture of one list (7.3.6.3), as coded;
/// zeros when the flag is off (the derived weights are LumaWeightLX =
/// 2^luma_log2_weight_denom + delta, etc., 7.4.7.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WeightEntry {
    pub luma_weight_flag: bool,
    pub chroma_weight_flag: bool,
    pub delta_luma_weight: i8,
    pub luma_offset: i16,
    pub delta_chroma_weight: [i8; 2],
    pub delta_chroma_offset: [i16; 2],
}

/// pred_weight_table() (7.3.6.3).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PredWeightTable {
    pub luma_log2_weight_denom: u8,
    pub delta_chroma_log2_weight_denom: i8,
    /// num_ref_idx_l0_active_minus1 + 1 entries.
    pub l0: Vec<WeightEntry>,
    /// num_ref_idx_l1_active_minus1 + 1 entries for B slices, else empty.
    pub l1: Vec<WeightEntry>,
}

/// slice_segment_header(). A dependent slice segment carries the fields
/// of the independent one before it (7.4.7.1) from `slice_reserved_flags`
/// to `slice_loop_filter_across_slices_enabled_flag`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SliceHeader {
    pub first_slice_segment_in_pic_flag: bool,
    /// Coded for IRAP pictures only.
    pub no_output_of_prior_pics_flag: bool,
    /// 0..=63.
    pub slice_pic_parameter_set_id: u8,
    pub dependent_slice_segment_flag: bool,
    /// In CTBs, raster scan; 0 for the first segment.
    pub slice_segment_address: u32,
    /// slice_reserved_flag[i], bit i.
    pub slice_reserved_flags: u8,
    pub slice_type: SliceType,
    /// 1 when not coded.
    pub pic_output_flag: bool,
    pub colour_plane_id: u8,
    /// 0 for IDR pictures.
    pub slice_pic_order_cnt_lsb: u16,
    pub short_term_ref_pic_set_sps_flag: bool,
    pub short_term_ref_pic_set_idx: u8,
    /// The set coded in this header (short_term_ref_pic_set_sps_flag 0).
    pub short_term_ref_pic_set: Option<StRefPicSet>,
    /// Bits of the st_ref_pic_set() coded in the header, 0 when the SPS's
    /// is used (V4L2's short_term_ref_pic_set_size).
    pub st_rps_bits: u32,
    pub num_long_term_sps: u8,
    pub num_long_term_pics: u8,
    /// num_long_term_sps + num_long_term_pics entries.
    pub long_term_pics: Vec<LongTermPic>,
    /// Bits from num_long_term_sps to the last delta_poc_msb_cycle_lt
    /// (V4L2's long_term_ref_pic_set_size), 0 when none are coded.
    pub lt_rps_bits: u32,
    pub slice_temporal_mvp_enabled_flag: bool,
    pub slice_sao_luma_flag: bool,
    pub slice_sao_chroma_flag: bool,
    pub num_ref_idx_active_override_flag: bool,
    /// The PPS defaults unless overridden; meaningful for P and B slices.
    pub num_ref_idx_l0_active_minus1: u8,
    pub num_ref_idx_l1_active_minus1: u8,
    pub ref_pic_list_modification_flag_l0: bool,
    /// list_entry_l0[i], num_ref_idx_l0_active_minus1 + 1 of them when the
    /// flag is set.
    pub list_entry_l0: Vec<u8>,
    pub ref_pic_list_modification_flag_l1: bool,
    pub list_entry_l1: Vec<u8>,
    pub mvd_l1_zero_flag: bool,
    pub cabac_init_flag: bool,
    /// 1 when not coded.
    pub collocated_from_l0_flag: bool,
    pub collocated_ref_idx: u8,
    pub pred_weight_table: Option<PredWeightTable>,
    pub five_minus_max_num_merge_cand: u8,
    pub slice_qp_delta: i8,
    pub slice_cb_qp_offset: i8,
    pub slice_cr_qp_offset: i8,
    pub cu_chroma_qp_offset_enabled_flag: bool,
    pub deblocking_filter_override_flag: bool,
    /// The PPS's value unless overridden, as the next two.
    pub slice_deblocking_filter_disabled_flag: bool,
    pub slice_beta_offset_div2: i8,
    pub slice_tc_offset_div2: i8,
    pub slice_loop_filter_across_slices_enabled_flag: bool,
    /// Any count the picture's tiles and CTB rows allow (a 4K WPP picture
    /// has more than 32).
    pub num_entry_point_offsets: u32,
    /// 0..=31.
    pub offset_len_minus1: u8,
    /// entry_point_offset_minus1[i]: bytes of the slice segment data as
    /// sent (emulation prevention bytes counted), minus 1.
    pub entry_point_offset_minus1: Vec<u32>,
    /// 0..=256.
    pub slice_segment_header_extension_length: u16,
    pub slice_segment_header_extension_data_byte: Vec<u8>,
    /// NumPicTotalCurr (7-55).
    pub num_pic_total_curr: u8,
    /// RBSP bits from the NAL unit's first bit to the slice data: NAL
    /// header, slice segment header and byte_alignment() (a multiple of 8).
    pub header_bits: usize,
    /// The same in bytes of the NAL unit as sent, emulation prevention
    /// bytes counted: where slice_segment_data() starts (V4L2's
    /// data_byte_offset).
    pub slice_data_byte_offset: usize,
}

use crate::codec::bitstream::BitReader;

use super::nal::{escaped_len, Nal};
use super::pps::Pps;
use super::sps::{ceil_log2, Sps};
use super::HevcError;

/// Most entries of one slice's long-term list (MaxDpbSize).
const MAX_LONG_TERM_PICS: u32 = 16;

/// The trace names of one list's pred_weight_table() elements.
struct WeightNames {
    luma_flag: &'static str,
    chroma_flag: &'static str,
    delta_luma_weight: &'static str,
    luma_offset: &'static str,
    delta_chroma_weight: &'static str,
    delta_chroma_offset: &'static str,
}

const L0_WEIGHTS: WeightNames = WeightNames {
    luma_flag: "luma_weight_l0_flag",
    chroma_flag: "chroma_weight_l0_flag",
    delta_luma_weight: "delta_luma_weight_l0",
    luma_offset: "luma_offset_l0",
    delta_chroma_weight: "delta_chroma_weight_l0",
    delta_chroma_offset: "chroma_offset_l0",
};

const L1_WEIGHTS: WeightNames = WeightNames {
    luma_flag: "luma_weight_l1_flag",
    chroma_flag: "chroma_weight_l1_flag",
    delta_luma_weight: "delta_luma_weight_l1",
    luma_offset: "luma_offset_l1",
    delta_chroma_weight: "delta_chroma_weight_l1",
    delta_chroma_offset: "chroma_offset_l1",
};

fn parse_weights(
    r: &mut BitReader,
    count: usize,
    chroma: bool,
    sps: &Sps,
    n: &WeightNames,
) -> Result<Vec<WeightEntry>, HevcError> {
    let mut entries = vec![WeightEntry::default(); count];
    for e in entries.iter_mut() {
        e.luma_weight_flag = r.flag(n.luma_flag)?;
    }
    if chroma {
        for e in entries.iter_mut() {
            e.chroma_weight_flag = r.flag(n.chroma_flag)?;
        }
    }
    // WpOffsetHalfRangeY / C (7-46, 7-48).
    let high_precision = sps.range_extension.high_precision_offsets_enabled_flag;
    let half_range = |bit_depth: u8| -> i32 {
        if high_precision {
            1 << (bit_depth - 1)
        } else {
            1 << 7
        }
    };
    let half_y = half_range(sps.bit_depth_luma());
    let half_c = half_range(sps.bit_depth_chroma());
    for e in entries.iter_mut() {
        if e.luma_weight_flag {
            e.delta_luma_weight = r.se_range(n.delta_luma_weight, -128, 127)? as i8;
            e.luma_offset = r.se_range(n.luma_offset, -half_y, half_y - 1)? as i16;
        }
        if e.chroma_weight_flag {
            for j in 0..2 {
                e.delta_chroma_weight[j] = r.se_range(n.delta_chroma_weight, -128, 127)? as i8;
                e.delta_chroma_offset[j] =
                    r.se_range(n.delta_chroma_offset, -4 * half_c, 4 * half_c - 1)? as i16;
            }
        }
    }
    Ok(entries)
}

impl PredWeightTable {
    /// pred_weight_table() (7.3.6.3) for a slice with these list sizes.
    fn parse(r: &mut BitReader, h: &SliceHeader, sps: &Sps) -> Result<Self, HevcError> {
        let mut t = PredWeightTable {
            luma_log2_weight_denom: r.ue_max("luma_log2_weight_denom", 7)? as u8,
            ..PredWeightTable::default()
        };
        let chroma = sps.chroma_array_type() != 0;
        if chroma {
            let luma = i32::from(t.luma_log2_weight_denom);
            t.delta_chroma_log2_weight_denom =
                r.se_range("delta_chroma_log2_weight_denom", -luma, 7 - luma)? as i8;
        }
        t.l0 = parse_weights(
            r,
            usize::from(h.num_ref_idx_l0_active_minus1) + 1,
            chroma,
            sps,
            &L0_WEIGHTS,
        )?;
        if h.slice_type == SliceType::B {
            t.l1 = parse_weights(
                r,
                usize::from(h.num_ref_idx_l1_active_minus1) + 1,
                chroma,
                sps,
                &L1_WEIGHTS,
            )?;
        }
        Ok(t)
    }

    /// ChromaLog2WeightDenom (7-45).
    pub fn chroma_log2_weight_denom(&self) -> u8 {
        (i32::from(self.luma_log2_weight_denom) + i32::from(self.delta_chroma_log2_weight_denom))
            as u8
    }
}

fn parse_list_entries(
    r: &mut BitReader,
    count: usize,
    num_pic_total_curr: u32,
    name: &'static str,
) -> Result<Vec<u8>, HevcError> {
    let bits = ceil_log2(num_pic_total_curr);
    let mut entries = Vec::with_capacity(count);
    for _ in 0..count {
        let entry = r.u(bits, name)?;
        if entry >= num_pic_total_curr {
            return Err(HevcError::Invalid("list_entry beyond NumPicTotalCurr"));
        }
        entries.push(entry as u8);
    }
    Ok(entries)
}

impl SliceHeader {
    /// Reads slice_pic_parameter_set_id without parsing the rest: which
    /// parameter sets the slice needs. `rbsp` starts with the NAL header.
    pub fn peek_pps_id(rbsp: &[u8], nal_unit_type: u8) -> Result<u8, HevcError> {
        let mut r = BitReader::new(rbsp);
        r.skip(16, "nal_unit_header")?;
        r.flag("first_slice_segment_in_pic_flag")?;
        if (16..=23).contains(&nal_unit_type) {
            r.flag("no_output_of_prior_pics_flag")?;
        }
        Ok(r.ue_max("slice_pic_parameter_set_id", 63)? as u8)
    }

    /// slice_segment_header() and byte_alignment() of `nal`, the reader
    /// (an RBSP reader of `nal.bytes`) just past the NAL header. `params` gives the PPS
    /// of an id and its SPS; `previous` is the slice segment before this
    /// one in the picture, whose fields a dependent slice segment takes.
    pub fn parse<'p>(
        r: &mut BitReader,
        nal: &Nal,
        params: impl Fn(u8) -> Result<(&'p Pps, &'p Sps), HevcError>,
        previous: Option<&SliceHeader>,
    ) -> Result<Self, HevcError> {
        let nal_unit_type = nal.header.nal_unit_type;
        if nal.header.nal_unit_type > 21 {
            return Err(HevcError::Invalid("not a coded slice segment"));
        }
        let first_slice_segment_in_pic_flag = r.flag("first_slice_segment_in_pic_flag")?;
        let no_output_of_prior_pics_flag =
            nal.header.is_irap() && r.flag("no_output_of_prior_pics_flag")?;
        let slice_pic_parameter_set_id = r.ue_max("slice_pic_parameter_set_id", 63)? as u8;
        let (pps, sps) = params(slice_pic_parameter_set_id)?;
        let mut dependent_slice_segment_flag = false;
        let mut slice_segment_address = 0;
        if !first_slice_segment_in_pic_flag {
            if pps.dependent_slice_segments_enabled_flag {
                dependent_slice_segment_flag = r.flag("dependent_slice_segment_flag")?;
            }
            let size = sps.pic_size_in_ctbs();
            slice_segment_address = r.u(ceil_log2(size), "slice_segment_address")?;
            if slice_segment_address >= size {
                return Err(HevcError::Invalid(
                    "slice_segment_address beyond the picture",
                ));
            }
        }
        let mut h = if dependent_slice_segment_flag {
            let independent = previous.ok_or(HevcError::Invalid(
                "a dependent slice segment starts the picture",
            ))?;
            if independent.slice_pic_parameter_set_id != slice_pic_parameter_set_id {
                return Err(HevcError::Invalid(
                    "a dependent slice segment names another PPS than its slice",
                ));
            }
            independent.clone()
        } else {
            Self::parse_independent(r, nal_unit_type, pps, sps)?
        };
        h.first_slice_segment_in_pic_flag = first_slice_segment_in_pic_flag;
        h.no_output_of_prior_pics_flag = no_output_of_prior_pics_flag;
        h.slice_pic_parameter_set_id = slice_pic_parameter_set_id;
        h.dependent_slice_segment_flag = dependent_slice_segment_flag;
        h.slice_segment_address = slice_segment_address;
        h.parse_entry_points(r, pps, sps)?;

        if r.u(1, "alignment_bit_equal_to_one")? != 1 {
            return Err(HevcError::Invalid("alignment_bit_equal_to_one is 0"));
        }
        while !r.is_byte_aligned() {
            if r.u(1, "alignment_bit_equal_to_zero")? != 0 {
                return Err(HevcError::Invalid("alignment_bit_equal_to_zero is 1"));
            }
        }
        h.header_bits = r.position();
        h.slice_data_byte_offset = escaped_len(nal.bytes, h.header_bits / 8);
        Ok(h)
    }

    /// From slice_reserved_flag to slice_loop_filter_across_slices_enabled_flag.
    fn parse_independent(
        r: &mut BitReader,
        nal_unit_type: u8,
        pps: &Pps,
        sps: &Sps,
    ) -> Result<Self, HevcError> {
        let mut slice_reserved_flags = 0u8;
        for i in 0..pps.num_extra_slice_header_bits {
            slice_reserved_flags |= (r.u(1, "slice_reserved_flag")? as u8) << i;
        }
        let slice_type = match r.ue_max("slice_type", 2)? {
            0 => SliceType::B,
            1 => SliceType::P,
            _ => SliceType::I,
        };
        let mut h = SliceHeader {
            first_slice_segment_in_pic_flag: false,
            no_output_of_prior_pics_flag: false,
            slice_pic_parameter_set_id: 0,
            dependent_slice_segment_flag: false,
            slice_segment_address: 0,
            slice_reserved_flags,
            slice_type,
            pic_output_flag: true,
            colour_plane_id: 0,
            slice_pic_order_cnt_lsb: 0,
            short_term_ref_pic_set_sps_flag: false,
            short_term_ref_pic_set_idx: 0,
            short_term_ref_pic_set: None,
            st_rps_bits: 0,
            num_long_term_sps: 0,
            num_long_term_pics: 0,
            long_term_pics: Vec::new(),
            lt_rps_bits: 0,
            slice_temporal_mvp_enabled_flag: false,
            slice_sao_luma_flag: false,
            slice_sao_chroma_flag: false,
            num_ref_idx_active_override_flag: false,
            num_ref_idx_l0_active_minus1: pps.num_ref_idx_l0_default_active_minus1,
            num_ref_idx_l1_active_minus1: pps.num_ref_idx_l1_default_active_minus1,
            ref_pic_list_modification_flag_l0: false,
            list_entry_l0: Vec::new(),
            ref_pic_list_modification_flag_l1: false,
            list_entry_l1: Vec::new(),
            mvd_l1_zero_flag: false,
            cabac_init_flag: false,
            collocated_from_l0_flag: true,
            collocated_ref_idx: 0,
            pred_weight_table: None,
            five_minus_max_num_merge_cand: 0,
            slice_qp_delta: 0,
            slice_cb_qp_offset: 0,
            slice_cr_qp_offset: 0,
            cu_chroma_qp_offset_enabled_flag: false,
            deblocking_filter_override_flag: false,
            slice_deblocking_filter_disabled_flag: pps.pps_deblocking_filter_disabled_flag,
            slice_beta_offset_div2: pps.pps_beta_offset_div2,
            slice_tc_offset_div2: pps.pps_tc_offset_div2,
            slice_loop_filter_across_slices_enabled_flag: pps
                .pps_loop_filter_across_slices_enabled_flag,
            num_entry_point_offsets: 0,
            offset_len_minus1: 0,
            entry_point_offset_minus1: Vec::new(),
            slice_segment_header_extension_length: 0,
            slice_segment_header_extension_data_byte: Vec::new(),
            num_pic_total_curr: 0,
            header_bits: 0,
            slice_data_byte_offset: 0,
        };
        if pps.output_flag_present_flag {
            h.pic_output_flag = r.flag("pic_output_flag")?;
        }
        if sps.separate_colour_plane_flag {
            h.colour_plane_id = r.u(2, "colour_plane_id")? as u8;
            if h.colour_plane_id > 2 {
                return Err(HevcError::Invalid("colour_plane_id is 3"));
            }
        }
        let idr = matches!(nal_unit_type, 19 | 20);
        if !idr {
            h.parse_reference_sets(r, sps)?;
            if sps.sps_temporal_mvp_enabled_flag {
                h.slice_temporal_mvp_enabled_flag = r.flag("slice_temporal_mvp_enabled_flag")?;
            }
        }
        if sps.sample_adaptive_offset_enabled_flag {
            h.slice_sao_luma_flag = r.flag("slice_sao_luma_flag")?;
            if sps.chroma_array_type() != 0 {
                h.slice_sao_chroma_flag = r.flag("slice_sao_chroma_flag")?;
            }
        }
        if slice_type != SliceType::I {
            h.parse_inter(r, pps, sps)?;
        }
        // SliceQpY = 26 + init_qp_minus26 + slice_qp_delta in -QpBdOffsetY..=51.
        let init_qp = 26 + i32::from(pps.init_qp_minus26);
        let qp_bd_offset = 6 * i32::from(sps.bit_depth_luma_minus8);
        h.slice_qp_delta =
            r.se_range("slice_qp_delta", -qp_bd_offset - init_qp, 51 - init_qp)? as i8;
        if pps.pps_slice_chroma_qp_offsets_present_flag {
            h.slice_cb_qp_offset = r.se_range("slice_cb_qp_offset", -12, 12)? as i8;
            h.slice_cr_qp_offset = r.se_range("slice_cr_qp_offset", -12, 12)? as i8;
        }
        if pps.range_extension.chroma_qp_offset_list_enabled_flag {
            h.cu_chroma_qp_offset_enabled_flag = r.flag("cu_chroma_qp_offset_enabled_flag")?;
        }
        if pps.deblocking_filter_override_enabled_flag {
            h.deblocking_filter_override_flag = r.flag("deblocking_filter_override_flag")?;
        }
        if h.deblocking_filter_override_flag {
            h.slice_deblocking_filter_disabled_flag =
                r.flag("slice_deblocking_filter_disabled_flag")?;
            if !h.slice_deblocking_filter_disabled_flag {
                h.slice_beta_offset_div2 = r.se_range("slice_beta_offset_div2", -6, 6)? as i8;
                h.slice_tc_offset_div2 = r.se_range("slice_tc_offset_div2", -6, 6)? as i8;
            }
        }
        if pps.pps_loop_filter_across_slices_enabled_flag
            && (h.slice_sao_luma_flag
                || h.slice_sao_chroma_flag
                || !h.slice_deblocking_filter_disabled_flag)
        {
            h.slice_loop_filter_across_slices_enabled_flag =
                r.flag("slice_loop_filter_across_slices_enabled_flag")?;
        }
        Ok(h)
    }

    /// POC LSB, the short-term set and the long-term pictures of a non-IDR
    /// picture; sets NumPicTotalCurr.
    fn parse_reference_sets(&mut self, r: &mut BitReader, sps: &Sps) -> Result<(), HevcError> {
        let poc_bits = sps.log2_max_pic_order_cnt_lsb();
        self.slice_pic_order_cnt_lsb = r.u(poc_bits, "slice_pic_order_cnt_lsb")? as u16;
        self.short_term_ref_pic_set_sps_flag = r.flag("short_term_ref_pic_set_sps_flag")?;
        let num_sets = sps.st_ref_pic_sets.len();
        let st_used = if !self.short_term_ref_pic_set_sps_flag {
            let start = r.position();
            let set = StRefPicSet::parse(r, num_sets, num_sets, &sps.st_ref_pic_sets)?;
            self.st_rps_bits = (r.position() - start) as u32;
            let used = set.num_used_by_curr();
            self.short_term_ref_pic_set = Some(set);
            used
        } else {
            if num_sets == 0 {
                return Err(HevcError::Invalid(
                    "the slice takes a short-term set from an SPS that has none",
                ));
            }
            if num_sets > 1 {
                let idx = r.u(ceil_log2(num_sets as u32), "short_term_ref_pic_set_idx")?;
                if idx as usize >= num_sets {
                    return Err(HevcError::Invalid(
                        "short_term_ref_pic_set_idx beyond the SPS's sets",
                    ));
                }
                self.short_term_ref_pic_set_idx = idx as u8;
            }
            sps.st_ref_pic_sets[usize::from(self.short_term_ref_pic_set_idx)].num_used_by_curr()
        };
        let mut total = st_used;
        if sps.long_term_ref_pics_present_flag {
            let start = r.position();
            let candidates = sps.lt_ref_pics.len() as u32;
            if candidates > 0 {
                self.num_long_term_sps = r.ue_max("num_long_term_sps", candidates)? as u8;
            }
            self.num_long_term_pics = r.ue_max(
                "num_long_term_pics",
                MAX_LONG_TERM_PICS - u32::from(self.num_long_term_sps),
            )? as u8;
            let count = usize::from(self.num_long_term_sps) + usize::from(self.num_long_term_pics);
            for i in 0..count {
                let mut lt = LongTermPic::default();
                if i < usize::from(self.num_long_term_sps) {
                    if candidates > 1 {
                        lt.lt_idx_sps = r.u(ceil_log2(candidates), "lt_idx_sps")? as u8;
                    }
                    let candidate = sps
                        .lt_ref_pics
                        .get(usize::from(lt.lt_idx_sps))
                        .ok_or(HevcError::Invalid("lt_idx_sps beyond the SPS's candidates"))?;
                    lt.poc_lsb_lt = candidate.lt_ref_pic_poc_lsb_sps;
                    lt.used_by_curr_pic_lt_flag = candidate.used_by_curr_pic_lt_sps_flag;
                } else {
                    lt.poc_lsb_lt = r.u(poc_bits, "poc_lsb_lt")? as u16;
                    lt.used_by_curr_pic_lt_flag = r.flag("used_by_curr_pic_lt_flag")?;
                }
                lt.delta_poc_msb_present_flag = r.flag("delta_poc_msb_present_flag")?;
                if lt.delta_poc_msb_present_flag {
                    lt.delta_poc_msb_cycle_lt = r.ue("delta_poc_msb_cycle_lt")?;
                }
                // (7-52): accumulated within each of the two groups.
                lt.delta_poc_msb_cycle = match self.long_term_pics.last() {
                    Some(prev) if i != usize::from(self.num_long_term_sps) => prev
                        .delta_poc_msb_cycle
                        .saturating_add(lt.delta_poc_msb_cycle_lt),
                    _ => lt.delta_poc_msb_cycle_lt,
                };
                total += usize::from(lt.used_by_curr_pic_lt_flag);
                self.long_term_pics.push(lt);
            }
            self.lt_rps_bits = (r.position() - start) as u32;
        }
        self.num_pic_total_curr = total as u8;
        Ok(())
    }

    /// From num_ref_idx_active_override_flag to five_minus_max_num_merge_cand.
    fn parse_inter(&mut self, r: &mut BitReader, pps: &Pps, sps: &Sps) -> Result<(), HevcError> {
        let b = self.slice_type == SliceType::B;
        self.num_ref_idx_active_override_flag = r.flag("num_ref_idx_active_override_flag")?;
        if self.num_ref_idx_active_override_flag {
            self.num_ref_idx_l0_active_minus1 = r.ue_max("num_ref_idx_l0_active_minus1", 14)? as u8;
            if b {
                self.num_ref_idx_l1_active_minus1 =
                    r.ue_max("num_ref_idx_l1_active_minus1", 14)? as u8;
            }
        }
        if self.num_pic_total_curr == 0 {
            return Err(HevcError::Invalid(
                "an inter slice without reference pictures",
            ));
        }
        let total = u32::from(self.num_pic_total_curr);
        if pps.lists_modification_present_flag && total > 1 {
            self.ref_pic_list_modification_flag_l0 = r.flag("ref_pic_list_modification_flag_l0")?;
            if self.ref_pic_list_modification_flag_l0 {
                self.list_entry_l0 = parse_list_entries(
                    r,
                    usize::from(self.num_ref_idx_l0_active_minus1) + 1,
                    total,
                    "list_entry_l0",
                )?;
            }
            if b {
                self.ref_pic_list_modification_flag_l1 =
                    r.flag("ref_pic_list_modification_flag_l1")?;
                if self.ref_pic_list_modification_flag_l1 {
                    self.list_entry_l1 = parse_list_entries(
                        r,
                        usize::from(self.num_ref_idx_l1_active_minus1) + 1,
                        total,
                        "list_entry_l1",
                    )?;
                }
            }
        }
        if b {
            self.mvd_l1_zero_flag = r.flag("mvd_l1_zero_flag")?;
        }
        if pps.cabac_init_present_flag {
            self.cabac_init_flag = r.flag("cabac_init_flag")?;
        }
        if self.slice_temporal_mvp_enabled_flag {
            if b {
                self.collocated_from_l0_flag = r.flag("collocated_from_l0_flag")?;
            }
            let max = if self.collocated_from_l0_flag {
                self.num_ref_idx_l0_active_minus1
            } else {
                self.num_ref_idx_l1_active_minus1
            };
            if max > 0 {
                self.collocated_ref_idx = r.ue_max("collocated_ref_idx", u32::from(max))? as u8;
            }
        }
        if (pps.weighted_pred_flag && self.slice_type == SliceType::P)
            || (pps.weighted_bipred_flag && b)
        {
            self.pred_weight_table = Some(PredWeightTable::parse(r, self, sps)?);
        }
        self.five_minus_max_num_merge_cand = r.ue_max("five_minus_max_num_merge_cand", 4)? as u8;
        Ok(())
    }

    /// Entry points and the header extension (both slice segment kinds).
    fn parse_entry_points(
        &mut self,
        r: &mut BitReader,
        pps: &Pps,
        sps: &Sps,
    ) -> Result<(), HevcError> {
        self.num_entry_point_offsets = 0;
        self.offset_len_minus1 = 0;
        self.entry_point_offset_minus1 = Vec::new();
        self.slice_segment_header_extension_length = 0;
        self.slice_segment_header_extension_data_byte = Vec::new();
        if pps.tiles_enabled_flag || pps.entropy_coding_sync_enabled_flag {
            let columns = u32::from(pps.num_tile_columns_minus1) + 1;
            let rows = u32::from(pps.num_tile_rows_minus1) + 1;
            let ctb_rows = sps.pic_height_in_ctbs();
            let limit = match (pps.tiles_enabled_flag, pps.entropy_coding_sync_enabled_flag) {
                (false, _) => ctb_rows - 1,
                (true, false) => columns * rows - 1,
                (true, true) => columns * ctb_rows - 1,
            };
            self.num_entry_point_offsets = r.ue_max("num_entry_point_offsets", limit)?;
            if self.num_entry_point_offsets > 0 {
                self.offset_len_minus1 = r.ue_max("offset_len_minus1", 31)? as u8;
                let bits = u32::from(self.offset_len_minus1) + 1;
                let count = self.num_entry_point_offsets as usize;
                if count * bits as usize > r.bits_left_at_most() {
                    return Err(HevcError::Bitstream(
                        crate::codec::bitstream::ReadError::Truncated("entry_point_offset_minus1"),
                    ));
                }
                self.entry_point_offset_minus1.reserve_exact(count);
                for _ in 0..count {
                    self.entry_point_offset_minus1
                        .push(r.u(bits, "entry_point_offset_minus1")?);
                }
            }
        }
        if pps.slice_segment_header_extension_present_flag {
            self.slice_segment_header_extension_length =
                r.ue_max("slice_segment_header_extension_length", 256)? as u16;
            for _ in 0..self.slice_segment_header_extension_length {
                self.slice_segment_header_extension_data_byte
                    .push(r.u(8, "slice_segment_header_extension_data_byte")? as u8);
            }
        }
        Ok(())
    }

    /// The short-term set in use: the header's, or the SPS's it names.
    pub fn st_ref_pic_set<'a>(&'a self, sps: &'a Sps) -> Option<&'a StRefPicSet> {
        match &self.short_term_ref_pic_set {
            Some(set) => Some(set),
            None if self.short_term_ref_pic_set_sps_flag => sps
                .st_ref_pic_sets
                .get(usize::from(self.short_term_ref_pic_set_idx)),
            None => None,
        }
    }
}
