//! Ties HEVC parsing, POC, the RPS and the DPB together: access units in
//! decoding order become decode jobs (parsed headers, reference pictures,
//! slices with their reference lists) and output order. Pure: a V4L2 (or
//! any stateless) backend turns jobs into requests.
//!
//! Decoding starts at an IRAP picture; a CRA that starts decoding (stream
//! start, after a seek or an end of sequence) has NoRaslOutputFlag = 1, so
//! its RASL pictures are skipped: they refer to pictures never decoded.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use tracing::debug;

use super::dpb::{Dpb, DpbLimits, RefPicSet, Reference};
use super::nal::{nal_type, NalHeader};
use super::refs::{LongTermEntry, PocInput, PocState, RpsPocs, ShortTermRps};
use super::{parse, HevcError, Pps, SliceHeader, Sps, StRefPicSet, Vps};
use crate::codec::access_unit::{self, DpbOutput, NalUnitDecoder};
use crate::codec::bitstream::annexb::nal_unit_ranges;

/// What a backend needs to set up (or re-set up) its queues.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamInfo {
    pub profile_idc: u8,
    pub level_idc: u8,
    /// pic_width/height_in_luma_samples.
    pub coded_width: u32,
    pub coded_height: u32,
    /// Visible rectangle (x, y, width, height): the conformance window.
    pub visible: (u32, u32, u32, u32),
    pub bit_depth_luma: u8,
    pub bit_depth_chroma: u8,
    pub chroma_format_idc: u8,
    /// Pictures the DPB holds at most (sps_max_dec_pic_buffering_minus1 + 1
    /// of the highest sub-layer).
    pub dpb_pictures: usize,
    pub sample_aspect_ratio: Option<(u32, u32)>,
}

impl StreamInfo {
    pub fn from_sps(sps: &Sps) -> Self {
        let (sub_width, sub_height) = match (sps.chroma_format_idc, sps.separate_colour_plane_flag)
        {
            (1, _) => (2, 2),
            (2, _) => (2, 1),
            _ => (1, 1),
        };
        let left = sps.conf_win_left_offset.saturating_mul(sub_width);
        let right = sps.conf_win_right_offset.saturating_mul(sub_width);
        let top = sps.conf_win_top_offset.saturating_mul(sub_height);
        let bottom = sps.conf_win_bottom_offset.saturating_mul(sub_height);
        let width = sps
            .pic_width_in_luma_samples
            .saturating_sub(left.saturating_add(right))
            .max(1);
        let height = sps
            .pic_height_in_luma_samples
            .saturating_sub(top.saturating_add(bottom))
            .max(1);
        Self {
            profile_idc: sps.profile_tier_level.general.profile_idc,
            level_idc: sps.profile_tier_level.general_level_idc,
            coded_width: sps.pic_width_in_luma_samples,
            coded_height: sps.pic_height_in_luma_samples,
            visible: (left, top, width, height),
            bit_depth_luma: sps.bit_depth_luma_minus8 + 8,
            bit_depth_chroma: sps.bit_depth_chroma_minus8 + 8,
            chroma_format_idc: sps.chroma_format_idc,
            dpb_pictures: highest_ordering(sps)
                .map_or(16, |o| usize::from(o.max_dec_pic_buffering_minus1) + 1),
            sample_aspect_ratio: sps.vui.sample_aspect_ratio(),
        }
    }
}

fn highest_ordering(sps: &Sps) -> Option<&super::vps::SubLayerOrdering> {
    sps.sub_layer_ordering.last()
}

fn dpb_limits(sps: &Sps) -> DpbLimits {
    highest_ordering(sps).map_or_else(DpbLimits::default, |o| {
        DpbLimits::new(
            u32::from(o.max_dec_pic_buffering_minus1),
            u32::from(o.max_num_reorder_pics),
            o.max_latency_increase_plus1,
        )
    })
}

/// A reference picture as the picture being decoded sees it, in DPB
/// storage order (at most 16).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DpbReference {
    pub timestamp_ns: u64,
    pub poc: i32,
    pub long_term: bool,
}

/// Reference pictures a decoder's DPB array holds at most.
pub const MAX_DPB_REFERENCES: usize = 16;

/// One slice segment ready for submission.
#[derive(Debug, Clone)]
pub struct SliceJob {
    /// Where the NAL unit is in the access unit: header included,
    /// emulation prevention bytes in, no start code.
    pub nal: Range<usize>,
    pub nal_header: NalHeader,
    pub header: Arc<SliceHeader>,
    /// RefPicList0/1 (8.3.4) as indices into [`DecodeJob::dpb`]; `None`
    /// where the picture is missing.
    pub ref_list0: Vec<Option<u8>>,
    pub ref_list1: Vec<Option<u8>>,
}

/// One picture to decode into the CAPTURE buffer named by `timestamp_ns`.
#[derive(Debug, Clone)]
pub struct DecodeJob {
    pub timestamp_ns: u64,
    /// Set on the first picture of a new sequence (stream start, resolution
    /// or format change): drain, then reconfigure with `stream` first.
    pub new_sequence: bool,
    pub stream: Arc<StreamInfo>,
    pub sps: Arc<Sps>,
    pub pps: Arc<Pps>,
    /// The first slice segment's NAL header and slice header.
    pub nal_header: NalHeader,
    pub header: Arc<SliceHeader>,
    /// PicOrderCntVal.
    pub poc: i32,
    /// NoOutputOfPriorPicsFlag as coded (IRAP pictures).
    pub no_output_of_prior_pics: bool,
    pub dpb: Vec<DpbReference>,
    /// RefPicSetStCurrBefore, StCurrAfter and LtCurr as indices into `dpb`.
    pub st_curr_before: Vec<Option<u8>>,
    pub st_curr_after: Vec<Option<u8>>,
    pub lt_curr: Vec<Option<u8>>,
    /// NumDeltaPocs of the RPS the slice header's predicted from (0 without
    /// inter-RPS prediction in the header).
    pub num_delta_pocs_of_ref_rps_idx: u8,
    pub slices: Vec<SliceJob>,
    /// Some slice refers to a picture the DPB lacks: the picture will show
    /// errors.
    pub missing_references: bool,
    /// Timestamps that may be shown once this job is decoded, in display
    /// order.
    pub output: Vec<u64>,
    /// Timestamps the DPB no longer holds.
    pub released: Vec<u64>,
}

/// A picture between its first slice segment and its end.
struct PictureInProgress {
    job: DecodeJob,
    output_flag: bool,
    /// The last independent slice segment's header (for dependent ones).
    independent: Arc<SliceHeader>,
}

/// HEVC decoding state for a stateless decoder: feed access units in
/// decoding order, get decode jobs.
pub struct HevcDecoder {
    vps: HashMap<u8, Arc<Vps>>,
    sps: HashMap<u8, Arc<Sps>>,
    pps: HashMap<u8, Arc<Pps>>,
    active_sps: Option<Arc<Sps>>,
    stream: Option<Arc<StreamInfo>>,
    poc: PocState,
    dpb: Dpb,
    current: Option<PictureInProgress>,
    /// What the DPB gave out between pictures (at an end of sequence),
    /// handed on with the next job or at the end.
    pending: DpbOutput,
    /// Until the first IRAP after a start, seek or end of sequence; the
    /// next IRAP then has NoRaslOutputFlag = 1.
    waiting_for_irap: bool,
    /// RASL pictures are skipped: the last IRAP had NoRaslOutputFlag = 1.
    skip_rasl: bool,
    /// No picture decoded yet since the start or a reset.
    first_picture: bool,
}

impl Default for HevcDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl HevcDecoder {
    pub fn new() -> Self {
        Self {
            vps: HashMap::new(),
            sps: HashMap::new(),
            pps: HashMap::new(),
            active_sps: None,
            stream: None,
            poc: PocState::default(),
            dpb: Dpb::default(),
            current: None,
            pending: DpbOutput::default(),
            waiting_for_irap: true,
            skip_rasl: true,
            first_picture: true,
        }
    }

    pub fn dpb(&self) -> &Dpb {
        &self.dpb
    }

    pub fn stream_info(&self) -> Option<Arc<StreamInfo>> {
        self.stream.clone()
    }

    /// Decodes one access unit (Annex-B, decoding order) whose picture gets
    /// `timestamp_ns`. Returns a job per picture (none for parameter sets
    /// alone or a skipped picture).
    pub fn decode_access_unit(
        &mut self,
        au: &[u8],
        timestamp_ns: u64,
    ) -> Result<Vec<DecodeJob>, HevcError> {
        self.decode_nal_units(au, nal_unit_ranges(au), timestamp_ns)
    }

    /// As [`Self::decode_access_unit`], the NAL units of `au` already
    /// located (`NalIndex`: the demuxer wrote their start codes).
    pub fn decode_nal_units(
        &mut self,
        au: &[u8],
        units: impl Iterator<Item = Range<usize>>,
        timestamp_ns: u64,
    ) -> Result<Vec<DecodeJob>, HevcError> {
        access_unit::decode_nal_units(self, au, units, timestamp_ns)
    }

    /// End of stream: the pictures still waiting, in display order.
    pub fn flush(&mut self) -> DpbOutput {
        let mut out = std::mem::take(&mut self.pending);
        out.append(self.dpb.flush());
        out
    }

    /// Forgets every picture (a seek): decoding restarts at the next IRAP.
    /// Returns the timestamps whose buffers are free.
    pub fn reset(&mut self) -> Vec<u64> {
        self.current = None;
        self.pending = DpbOutput::default();
        self.poc.reset();
        self.waiting_for_irap = true;
        self.skip_rasl = true;
        self.first_picture = true;
        self.dpb.clear()
    }

    fn handle_nal_unit(
        &mut self,
        bytes: &[u8],
        range: Range<usize>,
        header: NalHeader,
        timestamp_ns: u64,
        jobs: &mut Vec<DecodeJob>,
    ) -> Result<(), HevcError> {
        // Layers above the base one are not decoded.
        if header.nuh_layer_id > 0 {
            return Ok(());
        }
        match header.nal_unit_type {
            nal_type::VPS => {
                let vps = parse::vps(bytes)?;
                self.vps
                    .insert(vps.vps_video_parameter_set_id, Arc::new(vps));
            }
            nal_type::SPS => {
                let sps = parse::sps(bytes)?;
                self.sps.insert(sps.sps_seq_parameter_set_id, Arc::new(sps));
            }
            nal_type::PPS => {
                let pps = parse::pps(bytes, |id| self.sps.get(&id).map(|s| s.as_ref()))?;
                self.pps.insert(pps.pps_pic_parameter_set_id, Arc::new(pps));
            }
            nal_type::EOS | nal_type::EOB => {
                if let Some(job) = self.finish_picture() {
                    jobs.push(job);
                }
                // The next picture is IRAP and starts anew (NoRaslOutputFlag):
                // what the sequence left waiting is output now.
                self.waiting_for_irap = true;
                let out = self.dpb.flush();
                self.pending.append(out);
            }
            t if header.is_vcl() && t <= nal_type::RSV_IRAP_VCL23 => {
                self.handle_slice(bytes, range, header, timestamp_ns, jobs)?;
            }
            _ => {}
        }
        Ok(())
    }

    fn handle_slice(
        &mut self,
        bytes: &[u8],
        range: Range<usize>,
        nal: NalHeader,
        timestamp_ns: u64,
        jobs: &mut Vec<DecodeJob>,
    ) -> Result<(), HevcError> {
        if matches!(
            nal.nal_unit_type,
            nal_type::RSV_IRAP_VCL22 | nal_type::RSV_IRAP_VCL23
        ) || (nal.nal_unit_type > nal_type::RASL_R && nal.nal_unit_type < nal_type::BLA_W_LP)
        {
            // Reserved types: ignored, as decoders must.
            return Ok(());
        }
        let previous = self.current.as_ref().map(|c| c.independent.clone());
        let (pps_sets, sps_sets) = (&self.pps, &self.sps);
        let header = parse::slice_header(
            bytes,
            |id| {
                let pps = pps_sets.get(&id).ok_or(HevcError::MissingPps(id))?;
                let sps_id = pps.pps_seq_parameter_set_id;
                let sps = sps_sets.get(&sps_id).ok_or(HevcError::MissingSps(sps_id))?;
                Ok((pps.as_ref(), sps.as_ref()))
            },
            previous.as_deref(),
        )?;
        let header = Arc::new(header);
        if header.first_slice_segment_in_pic_flag {
            if let Some(job) = self.finish_picture() {
                jobs.push(job);
            }
            if !self.start_picture(&nal, &header, timestamp_ns)? {
                return Ok(());
            }
        }
        let Some(cur) = self.current.as_mut() else {
            // Segments of a skipped picture, or a picture whose first
            // segment was lost.
            return Ok(());
        };
        if !header.dependent_slice_segment_flag {
            cur.independent = header.clone();
        }
        let (ref_list0, ref_list1) = ref_lists(&header, &cur.job);
        let n0 = usize::from(header.num_ref_idx_l0_active_minus1) + 1;
        let n1 = usize::from(header.num_ref_idx_l1_active_minus1) + 1;
        let missing = |list: &[Option<u8>], n: usize| list.iter().take(n).any(Option::is_none);
        if !header.slice_type.is_intra()
            && (missing(&ref_list0, n0)
                || (header.slice_type == super::SliceType::B && missing(&ref_list1, n1)))
        {
            cur.job.missing_references = true;
        }
        cur.job.slices.push(SliceJob {
            nal: range,
            nal_header: nal,
            header,
            ref_list0,
            ref_list1,
        });
        Ok(())
    }

    /// The decoding process's picture-level steps (8.1.3, 8.3.1, 8.3.2,
    /// C.5.2.2) for the first slice segment of a picture. Returns false
    /// when the picture is skipped.
    fn start_picture(
        &mut self,
        nal: &NalHeader,
        header: &Arc<SliceHeader>,
        timestamp_ns: u64,
    ) -> Result<bool, HevcError> {
        let irap = nal.is_irap();
        if self.waiting_for_irap && !irap {
            debug!("skipping a picture before the first IRAP picture");
            return Ok(false);
        }
        // NoRaslOutputFlag: IDR and BLA always; CRA when it starts decoding.
        let no_rasl_output = irap && (nal.is_idr() || nal.is_bla() || self.waiting_for_irap);
        if irap {
            self.skip_rasl = no_rasl_output;
            self.waiting_for_irap = false;
        } else if nal.is_rasl() && self.skip_rasl {
            debug!("skipping a RASL picture of a CRA that started decoding");
            return Ok(false);
        }
        let pps = self
            .pps
            .get(&header.slice_pic_parameter_set_id)
            .cloned()
            .ok_or(HevcError::MissingPps(header.slice_pic_parameter_set_id))?;
        let sps = self
            .sps
            .get(&pps.pps_seq_parameter_set_id)
            .cloned()
            .ok_or(HevcError::MissingSps(pps.pps_seq_parameter_set_id))?;

        let mut out = std::mem::take(&mut self.pending);
        let mut new_sequence = false;
        if self.active_sps.as_deref() != Some(&*sps) {
            if !irap {
                return Err(HevcError::Invalid(
                    "a new sequence parameter set takes effect outside an IRAP picture",
                ));
            }
            let info = StreamInfo::from_sps(&sps);
            if self.stream.as_deref() != Some(&info) {
                new_sequence = true;
                // Everything decoded so far belongs to the old sequence.
                out.append(self.dpb.flush());
                out.released.extend(self.dpb.clear());
            }
            self.dpb.set_limits(dpb_limits(&sps));
            self.stream = Some(Arc::new(info));
            self.active_sps = Some(sps.clone());
        }
        let log2_max_poc_lsb = u32::from(sps.log2_max_pic_order_cnt_lsb_minus4) + 4;
        let poc = self.poc.decode(&PocInput {
            pic_order_cnt_lsb: u32::from(header.slice_pic_order_cnt_lsb),
            log2_max_poc_lsb,
            irap_with_no_rasl_output: irap && no_rasl_output,
            anchors_later_pictures: nal.temporal_id() == 0
                && !nal.is_rasl()
                && !nal.is_radl()
                && !nal.is_sub_layer_non_reference(),
        });

        // 8.3.2: the RPS, then the DPB's removal and bumping (C.5.2.2).
        let set = if nal.is_idr() {
            self.dpb.unmark_all();
            RefPicSet::default()
        } else {
            let st = short_term_rps(&sps, header)?;
            let lt: Vec<LongTermEntry> = header
                .long_term_pics
                .iter()
                .map(|p| LongTermEntry {
                    poc_lsb_lt: u32::from(p.poc_lsb_lt),
                    used_by_curr_pic: p.used_by_curr_pic_lt_flag,
                    delta_poc_msb_present: p.delta_poc_msb_present_flag,
                    delta_poc_msb_cycle_lt: p.delta_poc_msb_cycle,
                })
                .collect();
            let rps = RpsPocs::derive(poc, log2_max_poc_lsb, &st, &lt);
            self.dpb.apply_rps(&rps, log2_max_poc_lsb)
        };
        if irap && no_rasl_output && !self.first_picture && !new_sequence {
            // C.5.2.2: a CRA starting anew drops what waits; an IDR or BLA
            // as its flag says.
            let no_output = nal.is_cra() || header.no_output_of_prior_pics_flag;
            out.append(self.dpb.start_irap(no_output));
        } else {
            out.append(self.dpb.make_room());
        }
        self.first_picture = false;

        let stream = self
            .stream
            .clone()
            .ok_or(HevcError::Invalid("no active SPS"))?;
        let (dpb, index_of) = dpb_references(&self.dpb);
        let indices = |list: &[Option<u64>]| -> Vec<Option<u8>> {
            list.iter()
                .map(|ts| ts.and_then(|ts| index_of.get(&ts).copied()))
                .collect()
        };
        let num_delta_pocs_of_ref_rps_idx = header
            .short_term_ref_pic_set
            .as_ref()
            .filter(|s| s.inter_ref_pic_set_prediction_flag)
            .and_then(|s| {
                let delta = usize::from(s.delta_idx_minus1) + 1;
                sps.st_ref_pic_sets
                    .len()
                    .checked_sub(delta)
                    .and_then(|i| sps.st_ref_pic_sets.get(i))
            })
            .map_or(0, |r| r.num_delta_pocs() as u8);
        self.current = Some(PictureInProgress {
            job: DecodeJob {
                timestamp_ns,
                new_sequence,
                stream,
                sps,
                pps,
                nal_header: *nal,
                header: header.clone(),
                poc,
                no_output_of_prior_pics: header.no_output_of_prior_pics_flag,
                st_curr_before: indices(&set.st_curr_before),
                st_curr_after: indices(&set.st_curr_after),
                lt_curr: indices(&set.lt_curr),
                dpb,
                num_delta_pocs_of_ref_rps_idx,
                slices: Vec::new(),
                missing_references: set.is_missing_any(),
                output: out.output,
                released: out.released,
            },
            output_flag: header.pic_output_flag,
            independent: header.clone(),
        });
        Ok(true)
    }

    /// Stores the picture in progress (C.5.2.3), completing its job.
    fn finish_picture(&mut self) -> Option<DecodeJob> {
        let PictureInProgress {
            mut job,
            output_flag,
            ..
        } = self.current.take()?;
        let out = self.dpb.store(job.timestamp_ns, job.poc, output_flag);
        job.output.extend(out.output);
        job.released.extend(out.released);
        Some(job)
    }
}

impl NalUnitDecoder for HevcDecoder {
    type Nal<'a> = (&'a [u8], NalHeader);
    type Job = DecodeJob;
    type Error = HevcError;

    fn parse_nal(bytes: &[u8]) -> Result<(&[u8], NalHeader), HevcError> {
        Ok((bytes, NalHeader::parse(bytes)?))
    }

    fn no_nal_unit() -> HevcError {
        HevcError::Invalid("access unit holds no Annex-B NAL unit")
    }

    fn in_picture(&self) -> bool {
        self.current.is_some()
    }

    fn handle_nal(
        &mut self,
        (bytes, header): (&[u8], NalHeader),
        range: Range<usize>,
        timestamp_ns: u64,
        jobs: &mut Vec<DecodeJob>,
    ) -> Result<(), HevcError> {
        self.handle_nal_unit(bytes, range, header, timestamp_ns, jobs)
    }

    fn drop_picture(&mut self) {
        self.current = None;
    }

    fn finish_picture(&mut self) -> Option<DecodeJob> {
        HevcDecoder::finish_picture(self)
    }
}

/// The short-term RPS of the picture: the header's own, or the SPS's.
fn short_term_rps(sps: &Sps, header: &SliceHeader) -> Result<ShortTermRps, HevcError> {
    let set: &StRefPicSet = match &header.short_term_ref_pic_set {
        Some(set) if !header.short_term_ref_pic_set_sps_flag => set,
        _ => sps
            .st_ref_pic_sets
            .get(usize::from(header.short_term_ref_pic_set_idx))
            .ok_or(HevcError::Invalid(
                "short_term_ref_pic_set_idx out of range",
            ))?,
    };
    let negative = (0..usize::from(set.num_negative_pics).min(set.delta_poc_s0.len()))
        .map(|i| (set.delta_poc_s0[i], set.used_by_curr_pic_s0[i]))
        .collect();
    let positive = (0..usize::from(set.num_positive_pics).min(set.delta_poc_s1.len()))
        .map(|i| (set.delta_poc_s1[i], set.used_by_curr_pic_s1[i]))
        .collect();
    Ok(ShortTermRps { negative, positive })
}

/// The DPB's reference pictures in storage order, with each one's index.
fn dpb_references(dpb: &Dpb) -> (Vec<DpbReference>, HashMap<u64, u8>) {
    let references: Vec<DpbReference> = dpb
        .pictures()
        .iter()
        .filter(|p| p.reference != Reference::Unused)
        .take(MAX_DPB_REFERENCES)
        .map(|p| DpbReference {
            timestamp_ns: p.timestamp_ns,
            poc: p.poc,
            long_term: p.reference == Reference::LongTerm,
        })
        .collect();
    let index_of = references
        .iter()
        .enumerate()
        .map(|(i, r)| (r.timestamp_ns, i as u8))
        .collect();
    (references, index_of)
}

/// RefPicList0 and RefPicList1 (8.3.4) as DPB indices: the RPS lists
/// repeated up to the active count, reordered by list_entry_lX.
fn ref_lists(header: &SliceHeader, job: &DecodeJob) -> (Vec<Option<u8>>, Vec<Option<u8>>) {
    if header.slice_type.is_intra() {
        return (Vec::new(), Vec::new());
    }
    let build = |first: &[Option<u8>],
                 second: &[Option<u8>],
                 count: usize,
                 modified: bool,
                 entries: &[u8]| {
        let total = job.st_curr_before.len() + job.st_curr_after.len() + job.lt_curr.len();
        if total == 0 {
            return vec![None; count];
        }
        let rps_order: Vec<Option<u8>> = first
            .iter()
            .chain(second)
            .chain(&job.lt_curr)
            .copied()
            .collect();
        let temp: Vec<Option<u8>> = rps_order
            .iter()
            .cycle()
            .take(count.max(total))
            .copied()
            .collect();
        (0..count)
            .map(|i| {
                let at = if modified {
                    entries.get(i).map_or(i, |&e| usize::from(e))
                } else {
                    i
                };
                temp.get(at).copied().flatten()
            })
            .collect()
    };
    let n0 = usize::from(header.num_ref_idx_l0_active_minus1) + 1;
    let list0 = build(
        &job.st_curr_before,
        &job.st_curr_after,
        n0,
        header.ref_pic_list_modification_flag_l0,
        &header.list_entry_l0,
    );
    let list1 = if header.slice_type == super::SliceType::B {
        let n1 = usize::from(header.num_ref_idx_l1_active_minus1) + 1;
        build(
            &job.st_curr_after,
            &job.st_curr_before,
            n1,
            header.ref_pic_list_modification_flag_l1,
            &header.list_entry_l1,
        )
    } else {
        Vec::new()
    };
    (list0, list1)
}
