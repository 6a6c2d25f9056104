//! Ties parsing, POC, the DPB and reference lists together: access units in
//! decoding order become decode jobs (parsed headers, references, slices) and output
//! order.

use std::collections::HashMap;
use std::sync::Arc;

use std::ops::Range;

use tracing::{debug, warn};

use crate::codec::access_unit::{self, DpbOutput, NalUnitDecoder};
use crate::codec::bitstream::annexb::nal_unit_ranges;
use crate::codec::bitstream::BitReader;

use super::dpb::{CurrentPic, Dpb, PicStructure, Reference};
use super::nal::{nal_type, Nal};
use super::poc::{PicOrderCnt, PocInput, PocState};
use super::pps::Pps;
use super::reflist::{initial_lists, modify_list, RefList};
use super::slice::{SliceHeader, SliceType};
use super::sps::Sps;
use super::H264Error;

/// What the V4L2 side needs to set up (or re-set up) its queues.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamInfo {
    pub profile_idc: u8,
    /// constraint_set0_flag in bit 0 ... constraint_set5_flag in bit 5.
    pub constraint_set_flags: u8,
    pub level_idc: u8,
    /// Coded size: whole macroblocks.
    pub coded_width: u32,
    pub coded_height: u32,
    /// Visible rectangle (x, y, width, height) after cropping.
    pub visible: (u32, u32, u32, u32),
    pub bit_depth_luma: u8,
    pub bit_depth_chroma: u8,
    pub chroma_format_idc: u8,
    /// Frames the DPB may hold (references and pictures waiting for
    /// output). CAPTURE buffers needed: this + 1 (the picture being
    /// decoded) + what the display holds + decode-ahead.
    pub dpb_frames: usize,
    pub max_num_reorder_frames: usize,
    pub interlaced: bool,
    pub sample_aspect_ratio: Option<(u32, u32)>,
}

impl StreamInfo {
    fn from_sps(sps: &Sps) -> Result<Self, H264Error> {
        let (coded_width, coded_height) = sps.coded_size();
        Ok(Self {
            profile_idc: sps.profile_idc,
            constraint_set_flags: sps.constraint_set_flags,
            level_idc: sps.level_idc,
            coded_width,
            coded_height,
            visible: sps.visible_rect()?,
            bit_depth_luma: sps.bit_depth_luma_minus8 + 8,
            bit_depth_chroma: sps.bit_depth_chroma_minus8 + 8,
            chroma_format_idc: sps.chroma_format_idc,
            dpb_frames: sps.max_dpb_frames(),
            max_num_reorder_frames: sps.max_num_reorder_frames(),
            interlaced: !sps.frame_mbs_only_flag,
            sample_aspect_ratio: sps.vui.as_ref().and_then(|v| v.sample_aspect_ratio),
        })
    }
}

/// A reference picture as the DPB lists it for one picture being decoded
/// (at most 16, non-existing frames left out: they have no buffer), in DPB
/// storage order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DpbReference {
    pub timestamp_ns: u64,
    /// PicNum (8-28) or LongTermPicNum (8-29), of the current picture's
    /// parity when it is a field.
    pub pic_num: i32,
    /// frame_num, or LongTermFrameIdx for a long-term picture.
    pub frame_num: u32,
    pub top_field_reference: bool,
    pub bottom_field_reference: bool,
    pub long_term: bool,
    pub field_coded: bool,
    /// Order counts of the decoded fields (0 for a field not decoded).
    pub top_field_order_cnt: i32,
    pub bottom_field_order_cnt: i32,
}

/// The DPB's reference pictures as a picture sees them.
pub fn dpb_references(dpb: &Dpb, cur: &CurrentPic) -> Vec<DpbReference> {
    dpb.pictures()
        .iter()
        .filter(|p| p.is_reference() && !p.non_existing)
        .take(MAX_DPB_REFERENCES)
        .map(|p| {
            let long_term = p.has_field_marked(Reference::LongTerm);
            let frame_level = if long_term {
                p.long_term_frame_idx as i32
            } else {
                p.frame_num_wrap(cur.frame_num, cur.max_frame_num)
            };
            // 8.2.4.1: a field of the current field's parity numbers
            // 2n + 1, one of the other parity 2n. The entry stands for
            // both fields; it takes the current parity's number unless
            // only the other field is a reference (a second field's own
            // first field).
            let same_parity = match cur.structure {
                PicStructure::TopField => Some(&p.top),
                PicStructure::BottomField => Some(&p.bottom),
                PicStructure::Frame => None,
            };
            DpbReference {
                timestamp_ns: p.timestamp_ns,
                pic_num: match same_parity {
                    None => frame_level,
                    Some(f) if f.decoded && f.reference != Reference::Unused => 2 * frame_level + 1,
                    Some(_) => 2 * frame_level,
                },
                frame_num: if long_term {
                    p.long_term_frame_idx
                } else {
                    p.frame_num
                },
                top_field_reference: p.top.decoded && p.top.reference != Reference::Unused,
                bottom_field_reference: p.bottom.decoded && p.bottom.reference != Reference::Unused,
                long_term,
                field_coded: p.field_coded,
                top_field_order_cnt: if p.top.decoded { p.top.poc } else { 0 },
                bottom_field_order_cnt: if p.bottom.decoded { p.bottom.poc } else { 0 },
            }
        })
        .collect()
}

/// Reference pictures a decoder's DPB array holds at most.
pub const MAX_DPB_REFERENCES: usize = 16;
/// Entries of a reference picture list a decoder takes at most.
pub const MAX_LIST_ENTRIES: usize = 32;

/// One entry of a slice's reference picture list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListEntry {
    /// Index into the picture's [`DecodeJob::dpb`]; `None` when the
    /// referenced picture has no buffer (a non-existing frame).
    pub dpb_index: Option<u8>,
    /// The frame, or which of its fields, is referenced.
    pub structure: PicStructure,
}

/// A final reference list as DPB indices: `None` where the list names no
/// picture the DPB holds. At most [`MAX_LIST_ENTRIES`].
pub fn list_entries(
    list: &RefList,
    dpb: &Dpb,
    references: &[DpbReference],
) -> Vec<Option<ListEntry>> {
    list.iter()
        .take(MAX_LIST_ENTRIES)
        .map(|r| {
            let r = r.as_ref()?;
            let p = dpb.get(r.id)?;
            let dpb_index = references
                .iter()
                .position(|e| e.timestamp_ns == p.timestamp_ns && !p.non_existing)
                .map(|i| i as u8);
            Some(ListEntry {
                dpb_index,
                structure: r.structure,
            })
        })
        .collect()
}

/// One slice ready for submission.
#[derive(Debug, Clone)]
pub struct SliceJob {
    /// Where the NAL unit is in the access unit: header byte included,
    /// emulation prevention bytes in, no start code.
    pub nal: Range<usize>,
    pub header: SliceHeader,
    pub ref_list0: Vec<Option<ListEntry>>,
    pub ref_list1: Vec<Option<ListEntry>>,
}

/// One picture (a frame, or one field) to decode into the CAPTURE buffer
/// named by `timestamp_ns`.
#[derive(Debug, Clone)]
pub struct DecodeJob {
    /// The OUTPUT buffer's timestamp: the caller's for a frame or first
    /// field; the first field's for a second field (same CAPTURE buffer).
    pub timestamp_ns: u64,
    pub structure: PicStructure,
    /// Set on the first job after a new SPS took effect (start, resolution
    /// or format change): drain, then reconfigure with `stream` first.
    pub new_sequence: bool,
    pub stream: Arc<StreamInfo>,
    pub sps: Arc<Sps>,
    pub pps: Arc<Pps>,
    /// The first slice's header (what the picture-level parameters come from).
    pub header: SliceHeader,
    /// The picture's order counts as a decoder takes them: a field's own,
    /// and for a second field its first field's too; 0 for the parity a
    /// first field lacks.
    pub top_field_order_cnt: i32,
    pub bottom_field_order_cnt: i32,
    /// The reference pictures, indexed by the slices' lists.
    pub dpb: Vec<DpbReference>,
    pub slices: Vec<SliceJob>,
    /// Some slice refers to a picture the DPB does not hold (decoding began
    /// at a non-IDR picture, or references were lost): the list entry is
    /// missing and the picture will show errors. A player may skip it.
    pub missing_references: bool,
    /// Timestamps that may be shown once this job is decoded, in display
    /// order (earlier pictures are already decoded).
    pub output: Vec<u64>,
    /// Timestamps the DPB no longer holds (neither reference nor waiting for
    /// output) after this job: their buffers may be reused once shown.
    pub released: Vec<u64>,
}

/// A PPS, the SPS it was parsed with, and its NAL unit as sent.
type StoredPps = (Arc<Pps>, Arc<Sps>, Vec<u8>);

/// A picture between its first slice and its end.
struct PictureInProgress {
    job: DecodeJob,
    first_header: SliceHeader,
    current: CurrentPic,
    poc: PicOrderCnt,
    poc_input: PocInput,
    sps: Arc<Sps>,
}

/// H.264 decoding state for a V4L2 stateless decoder: feed access units in
/// decoding order, get decode jobs.
pub struct H264Decoder {
    sps: HashMap<u8, Arc<Sps>>,
    /// Each PPS with its NAL unit: parsed again if its SPS changes after it.
    pps: HashMap<u8, StoredPps>,
    active_sps: Option<Arc<Sps>>,
    stream: Option<Arc<StreamInfo>>,
    poc: PocState,
    dpb: Dpb,
    /// frame_num of the previous reference picture (PrevRefFrameNum).
    prev_ref_frame_num: u32,
    /// The DPB entry of a first field whose second field may come next.
    pending_first_field: Option<(u64, PicStructure, u32, bool)>,
    current: Option<PictureInProgress>,
    /// True until the first IDR (or recovery) after a start or reset.
    waiting_for_keyframe: bool,
}

impl Default for H264Decoder {
    fn default() -> Self {
        Self::new()
    }
}

impl H264Decoder {
    pub fn new() -> Self {
        Self {
            sps: HashMap::new(),
            pps: HashMap::new(),
            active_sps: None,
            stream: None,
            poc: PocState::default(),
            dpb: Dpb::default(),
            prev_ref_frame_num: 0,
            pending_first_field: None,
            current: None,
            waiting_for_keyframe: true,
        }
    }

    /// The decoded picture buffer as the last picture left it.
    pub fn dpb(&self) -> &Dpb {
        &self.dpb
    }

    /// The stream's parameters from the active SPS, once a picture started.
    pub fn stream_info(&self) -> Option<Arc<StreamInfo>> {
        self.stream.clone()
    }

    /// Decodes one access unit (Annex-B, in decoding order) whose picture
    /// gets `timestamp_ns`. Returns a job per picture (two for a field pair
    /// in one unit, none for parameter sets alone).
    pub fn decode_access_unit(
        &mut self,
        au: &[u8],
        timestamp_ns: u64,
    ) -> Result<Vec<DecodeJob>, H264Error> {
        self.decode_nal_units(au, nal_unit_ranges(au), timestamp_ns)
    }

    /// As [`Self::decode_access_unit`], the NAL units of `au` already
    /// located (`NalIndex`: the demuxer wrote their start codes).
    pub fn decode_nal_units(
        &mut self,
        au: &[u8],
        units: impl Iterator<Item = Range<usize>>,
        timestamp_ns: u64,
    ) -> Result<Vec<DecodeJob>, H264Error> {
        access_unit::decode_nal_units(self, au, units, timestamp_ns)
    }

    /// End of stream: the pictures still waiting, in display order.
    pub fn flush(&mut self) -> DpbOutput {
        self.pending_first_field = None;
        self.dpb.flush()
    }

    /// Forget every picture (a seek): decoding restarts at the next IDR or
    /// I picture. Returns the timestamps whose buffers are free.
    pub fn reset(&mut self) -> Vec<u64> {
        self.current = None;
        self.pending_first_field = None;
        self.poc = PocState::default();
        self.waiting_for_keyframe = true;
        self.dpb.clear()
    }

    /// The SPS a PPS refers to.
    fn sps_of(&self, pps: &Pps) -> Result<Arc<Sps>, H264Error> {
        self.sps
            .get(&pps.seq_parameter_set_id)
            .cloned()
            .ok_or(H264Error::MissingSps(pps.seq_parameter_set_id))
    }

    /// Parses a PPS NAL unit (as sent, header byte included).
    fn parse_pps(&self, nal: &[u8]) -> Result<(Pps, Arc<Sps>), H264Error> {
        let mut r = BitReader::rbsp(nal);
        r.skip(8, "nal_unit_header")?;
        let pps = Pps::parse(&mut r, |id| self.sps.get(&id).map(|s| s.as_ref()))?;
        let sps = self.sps_of(&pps)?;
        Ok((pps, sps))
    }

    fn handle_slice(
        &mut self,
        nal: &Nal,
        nal_range: Range<usize>,
        timestamp_ns: u64,
        jobs: &mut Vec<DecodeJob>,
    ) -> Result<(), H264Error> {
        let pps_id = SliceHeader::peek_pps_id(nal)?;
        let (mut pps, parsed_with, pps_nal) = self
            .pps
            .get(&pps_id)
            .cloned()
            .ok_or(H264Error::MissingPps(pps_id))?;
        let sps = self.sps_of(&pps)?;
        if !Arc::ptr_eq(&sps, &parsed_with) {
            // Scaling list fall-back and value ranges depend on the SPS.
            let (reparsed, sps) = self.parse_pps(&pps_nal)?;
            pps = Arc::new(reparsed);
            self.pps.insert(pps_id, (pps.clone(), sps, pps_nal));
        }
        let mut r = nal.reader();
        r.skip(8, "nal_unit_header")?;
        let header = SliceHeader::parse(&mut r, nal.nal_ref_idc, nal.nal_unit_type, &sps, &pps)?;
        if header.redundant_pic_cnt > 0 {
            // Primary pictures are always sent whole here; redundant ones
            // would only decode the same macroblocks again.
            return Ok(());
        }

        let new_picture = match &self.current {
            Some(cur) => is_new_picture(&cur.first_header, &header, &sps),
            None => true,
        };
        if new_picture {
            if let Some(job) = self.finish_picture() {
                jobs.push(job);
            }
            if self.waiting_for_keyframe {
                if !header.idr && header.slice_type != SliceType::I {
                    debug!("skipping a picture before the first keyframe");
                    return Ok(());
                }
                self.waiting_for_keyframe = false;
                // Starting at a non-IDR I picture: what came before is
                // unknown, not a frame_num gap to fill.
                self.prev_ref_frame_num = header.frame_num;
            }
            self.start_picture(&header, sps, pps, timestamp_ns)?;
        }
        let Some(cur) = self.current.as_mut() else {
            // Slices of a skipped picture.
            return Ok(());
        };
        let (n0, n1) = header.num_ref_idx_active();
        let (l0, l1) = if header.slice_type.is_intra() {
            (Vec::new(), Vec::new())
        } else {
            let cur_poc = match cur.current.structure {
                PicStructure::Frame => cur.poc.top.min(cur.poc.bottom),
                PicStructure::TopField => cur.poc.top,
                PicStructure::BottomField => cur.poc.bottom,
            };
            let (i0, i1) = initial_lists(
                &self.dpb,
                &cur.current,
                header.slice_type == SliceType::B,
                cur_poc,
            );
            (
                modify_list(
                    &self.dpb,
                    &cur.current,
                    i0,
                    &header.ref_pic_list_modification_l0,
                    n0,
                ),
                modify_list(
                    &self.dpb,
                    &cur.current,
                    i1,
                    &header.ref_pic_list_modification_l1,
                    n1,
                ),
            )
        };
        let ref_list0 = list_entries(&l0, &self.dpb, &cur.job.dpb);
        let ref_list1 = list_entries(&l1, &self.dpb, &cur.job.dpb);
        let missing = |list: &[Option<ListEntry>], n: usize| {
            (0..n.min(MAX_LIST_ENTRIES)).any(|i| {
                list.get(i)
                    .copied()
                    .flatten()
                    .and_then(|e| e.dpb_index)
                    .is_none()
            })
        };
        if missing(&ref_list0, n0) || missing(&ref_list1, n1) {
            cur.job.missing_references = true;
        }
        cur.job.slices.push(SliceJob {
            nal: nal_range,
            header,
            ref_list0,
            ref_list1,
        });
        Ok(())
    }

    fn start_picture(
        &mut self,
        h: &SliceHeader,
        sps: Arc<Sps>,
        pps: Arc<Pps>,
        timestamp_ns: u64,
    ) -> Result<(), H264Error> {
        let mut out = DpbOutput::default();
        let mut new_sequence = false;
        if self.active_sps.as_deref() != Some(&*sps) {
            let info = StreamInfo::from_sps(&sps)?;
            if self.stream.as_deref() != Some(&info) {
                new_sequence = true;
                // Everything decoded so far belongs to the old sequence.
                out.append(self.dpb.flush());
                self.pending_first_field = None;
            }
            self.dpb.set_limits(
                sps.max_dpb_frames(),
                sps.max_num_reorder_frames(),
                usize::from(sps.max_num_ref_frames),
            );
            self.stream = Some(Arc::new(info));
            self.active_sps = Some(sps.clone());
        }
        let structure = match (h.field_pic_flag, h.bottom_field_flag) {
            (false, _) => PicStructure::Frame,
            (true, false) => PicStructure::TopField,
            (true, true) => PicStructure::BottomField,
        };
        let max_frame_num = sps.max_frame_num();
        // A new SPS may shrink MaxFrameNum (only at an IDR in a valid stream).
        self.prev_ref_frame_num %= max_frame_num;

        // A second field pairs with the first field decoded just before it.
        let first_field =
            self.pending_first_field
                .take()
                .and_then(|(id, s, frame_num, first_idr)| {
                    (structure == s.opposite()
                        && structure.is_field()
                        && frame_num == h.frame_num
                        && (first_idr || !h.idr))
                        .then_some(id)
                });
        if h.idr && first_field.is_none() {
            let no_output = h
                .dec_ref_pic_marking
                .as_ref()
                .is_some_and(|m| m.no_output_of_prior_pics_flag);
            out.append(self.dpb.start_idr(no_output && !new_sequence));
            self.prev_ref_frame_num = 0;
        } else if first_field.is_none()
            && h.frame_num != self.prev_ref_frame_num
            && h.frame_num != (self.prev_ref_frame_num + 1) % max_frame_num
        {
            if !sps.gaps_in_frame_num_value_allowed_flag {
                warn!(
                    frame_num = h.frame_num,
                    prev = self.prev_ref_frame_num,
                    "frame_num gap in a stream that allows none (lost pictures?)"
                );
            }
            out.append(self.dpb.fill_frame_num_gap(
                self.prev_ref_frame_num,
                h.frame_num,
                max_frame_num,
            ));
            let gap = (h.frame_num + max_frame_num - self.prev_ref_frame_num - 1) % max_frame_num;
            for k in 0..gap {
                self.poc
                    .update_gap_frame(&sps, (self.prev_ref_frame_num + 1 + k) % max_frame_num);
            }
            self.prev_ref_frame_num = (h.frame_num + max_frame_num - 1) % max_frame_num;
        }

        let poc_input = PocInput::from_header(h);
        let poc = self.poc.compute(&sps, &poc_input);
        let current = CurrentPic {
            structure,
            frame_num: h.frame_num,
            max_frame_num,
            first_field_id: first_field,
        };
        let timestamp_ns = first_field
            .and_then(|id| self.dpb.get(id))
            .map_or(timestamp_ns, |p| p.timestamp_ns);
        let dpb = dpb_references(&self.dpb, &current);
        let mut top_field_order_cnt = if structure == PicStructure::BottomField {
            0
        } else {
            poc.top
        };
        let mut bottom_field_order_cnt = if structure == PicStructure::TopField {
            0
        } else {
            poc.bottom
        };
        // A second field also carries its first field's count.
        if let Some(first) = first_field.and_then(|id| self.dpb.get(id)) {
            match structure {
                PicStructure::TopField => bottom_field_order_cnt = first.bottom.poc,
                PicStructure::BottomField => top_field_order_cnt = first.top.poc,
                PicStructure::Frame => {}
            }
        }
        let stream = self
            .stream
            .clone()
            .ok_or(H264Error::Invalid("no active SPS"))?;
        self.current = Some(PictureInProgress {
            job: DecodeJob {
                timestamp_ns,
                structure,
                new_sequence,
                stream,
                sps: sps.clone(),
                pps,
                header: h.clone(),
                top_field_order_cnt,
                bottom_field_order_cnt,
                dpb,
                slices: Vec::new(),
                missing_references: false,
                output: out.output,
                released: out.released,
            },
            first_header: h.clone(),
            current,
            poc,
            poc_input,
            sps,
        });
        Ok(())
    }

    /// Marks and stores the picture in progress, completing its job.
    fn finish_picture(&mut self) -> Option<DecodeJob> {
        let PictureInProgress {
            mut job,
            first_header: h,
            current,
            poc,
            poc_input,
            sps,
            ..
        } = self.current.take()?;
        let marking = self
            .dpb
            .mark(&current, h.idr, h.dec_ref_pic_marking.as_ref());
        let (mut top, mut bottom) = (poc.top, poc.bottom);
        if marking.mmco5 {
            // 8.2.1: after MMCO 5 the picture's counts restart from 0.
            let temp = match current.structure {
                PicStructure::Frame => top.min(bottom),
                PicStructure::TopField => top,
                PicStructure::BottomField => bottom,
            };
            top = top.wrapping_sub(temp);
            bottom = bottom.wrapping_sub(temp);
        }
        self.poc.update(&sps, &poc_input, &poc, marking.mmco5, top);
        if marking.reference != Reference::Unused {
            self.prev_ref_frame_num = if marking.mmco5 { 0 } else { h.frame_num };
        }
        let (id, out) = self
            .dpb
            .store(&current, marking, job.timestamp_ns, top, bottom);
        self.pending_first_field = (current.structure.is_field()
            && current.first_field_id.is_none())
        .then_some((id, current.structure, h.frame_num, h.idr));
        job.output.extend(out.output);
        job.released.extend(out.released);
        Some(job)
    }
}

impl NalUnitDecoder for H264Decoder {
    type Nal<'a> = Nal<'a>;
    type Job = DecodeJob;
    type Error = H264Error;

    fn parse_nal(bytes: &[u8]) -> Result<Nal<'_>, H264Error> {
        Nal::parse(bytes)
    }

    fn no_nal_unit() -> H264Error {
        H264Error::Invalid("access unit holds no Annex-B NAL unit")
    }

    fn in_picture(&self) -> bool {
        self.current.is_some()
    }

    fn handle_nal(
        &mut self,
        nal: Nal<'_>,
        range: Range<usize>,
        timestamp_ns: u64,
        jobs: &mut Vec<DecodeJob>,
    ) -> Result<(), H264Error> {
        match nal.nal_unit_type {
            nal_type::SPS => {
                let mut r = nal.reader();
                r.skip(8, "nal_unit_header")?;
                let sps = Sps::parse(&mut r)?;
                self.sps.insert(sps.seq_parameter_set_id, Arc::new(sps));
            }
            nal_type::PPS => {
                let (pps, sps) = self.parse_pps(nal.bytes)?;
                self.pps.insert(
                    pps.pic_parameter_set_id,
                    (Arc::new(pps), sps, nal.bytes.to_vec()),
                );
            }
            nal_type::SLICE_NON_IDR | nal_type::SLICE_IDR => {
                self.handle_slice(&nal, range, timestamp_ns, jobs)?
            }
            nal_type::SLICE_PARTITION_A..=nal_type::SLICE_PARTITION_C => {
                return Err(H264Error::Unsupported(
                    "data partitioning (Extended profile)",
                ));
            }
            nal_type::AUD | nal_type::END_OF_SEQUENCE | nal_type::END_OF_STREAM => {
                if let Some(job) = self.finish_picture() {
                    jobs.push(job);
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn drop_picture(&mut self) {
        self.current = None;
    }

    fn finish_picture(&mut self) -> Option<DecodeJob> {
        H264Decoder::finish_picture(self)
    }
}

/// 7.4.1.2.4: the first slice of a new primary picture differs from the
/// previous picture's in one of these.
fn is_new_picture(prev: &SliceHeader, h: &SliceHeader, sps: &Sps) -> bool {
    prev.frame_num != h.frame_num
        || prev.pic_parameter_set_id != h.pic_parameter_set_id
        || prev.field_pic_flag != h.field_pic_flag
        || prev.bottom_field_flag != h.bottom_field_flag
        || (prev.nal_ref_idc == 0) != (h.nal_ref_idc == 0)
        || (sps.pic_order_cnt_type == 0
            && (prev.pic_order_cnt_lsb != h.pic_order_cnt_lsb
                || prev.delta_pic_order_cnt_bottom != h.delta_pic_order_cnt_bottom))
        || (sps.pic_order_cnt_type == 1 && prev.delta_pic_order_cnt != h.delta_pic_order_cnt)
        || prev.idr != h.idr
        || (prev.idr && h.idr && prev.idr_pic_id != h.idr_pic_id)
        || h.first_mb_in_slice == 0 && prev.colour_plane_id == h.colour_plane_id
}
