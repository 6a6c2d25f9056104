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
