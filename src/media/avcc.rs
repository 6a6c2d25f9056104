//! AVCC/HVCC (length-prefixed NAL units, as MP4 and Matroska store H.264 and
//! HEVC) to Annex-B (start-code delimited, as V4L2 decoders and raw streams
//! want), with the parameter sets of the decoder configuration record
//! delivered in-band before every keyframe. Pure code over bytes.

use thiserror::Error;

use crate::codec::bitstream::annexb::{nal_units, starts_with_start_code, NalIndex};

const START_CODE: [u8; 4] = [0, 0, 0, 1];

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum BitstreamError {
    #[error("decoder configuration record too short ({0} bytes)")]
    ConfigTooShort(usize),
    #[error("decoder configuration record truncated at byte {0}")]
    ConfigTruncated(usize),
    #[error("NAL unit length of {length} bytes at offset {offset} runs past the end of a {size}-byte packet")]
    NalPastEnd {
        offset: usize,
        length: usize,
        size: usize,
    },
    #[error("packet ends inside a {length_size}-byte NAL length field at offset {offset}")]
    LengthFieldTruncated { offset: usize, length_size: usize },
}

/// A packet rewritten in place: where its NAL units are, when the
/// framing said (length fields) and they fit an index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InPlace {
    pub nal_units: Option<NalIndex>,
}

/// Which NAL unit syntax a converter handles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NalCodec {
    H264,
    Hevc,
}

impl NalCodec {
    fn nal_type(self, header: u8) -> u8 {
        match self {
            Self::H264 => header & 0x1f,
            Self::Hevc => (header >> 1) & 0x3f,
        }
    }

    /// Stream headers a keyframe gets in front of it: SPS (+ extension) and
    /// PPS for H.264; VPS/SPS/PPS and the declarative prefix SEI an hvcC
    /// record may carry for HEVC.
    fn is_stream_header(self, nal_type: u8) -> bool {
        match self {
            Self::H264 => matches!(nal_type, 7 | 8 | 13),
            Self::Hevc => matches!(nal_type, 32..=34 | 39),
        }
    }

    /// The NAL type whose presence in a packet means it carries its own
    /// parameter sets (so nothing needs inserting).
    fn is_sequence_header(self, nal_type: u8) -> bool {
        match self {
            Self::H264 => nal_type == 7,
            Self::Hevc => nal_type == 32 || nal_type == 33,
        }
    }
}

/// Converts the packets of one H.264 or HEVC stream to Annex-B.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnnexBConverter {
    codec: NalCodec,
    /// Bytes in each NAL length prefix; `None` when packets already are Annex-B.
    length_size: Option<usize>,
    /// Parameter sets from the configuration record, Annex-B.
    parameter_sets: Vec<u8>,
}

impl AnnexBConverter {
    /// A converter for a stream whose codec extradata is `extradata`: an
    /// avcC/hvcC record (length-prefixed packets), Annex-B parameter sets or
    /// nothing (packets already Annex-B, as in MPEG-TS).
    pub fn new(codec: NalCodec, extradata: &[u8]) -> Result<Self, BitstreamError> {
        if extradata.is_empty() || starts_with_start_code(extradata) {
            let parameter_sets = nal_units(extradata)
                .filter(|nal| {
                    nal.first()
                        .is_some_and(|&h| codec.is_stream_header(codec.nal_type(h)))
                })
                .fold(Vec::new(), |mut out, nal| {
                    push_nal(&mut out, nal);
                    out
                });
            return Ok(Self {
                codec,
                length_size: None,
                parameter_sets,
            });
        }
        let record = match codec {
            NalCodec::H264 => parse_avcc(extradata)?,
            NalCodec::Hevc => parse_hvcc(extradata)?,
        };
        let mut parameter_sets = Vec::new();
        for nal in record.nals {
            if nal
                .first()
                .is_some_and(|&h| codec.is_stream_header(codec.nal_type(h)))
            {
                push_nal(&mut parameter_sets, nal);
            }
        }
        Ok(Self {
            codec,
            length_size: Some(record.length_size),
            parameter_sets,
        })
    }

    /// The parameter sets from the configuration record, Annex-B (empty when
    /// the record has none).
    pub fn parameter_sets(&self) -> &[u8] {
        &self.parameter_sets
    }

    /// Bytes in each NAL length prefix of the input packets; `None` when
    /// they are Annex-B already.
    pub fn length_size(&self) -> Option<usize> {
        self.length_size
    }

    /// Whether packets are length-prefixed (and so get rewritten).
    pub fn is_length_prefixed(&self) -> bool {
        self.length_size.is_some()
    }

    /// Appends `packet` to `out` in Annex-B. A keyframe without its own
    /// sequence header gets the record's parameter sets in front. On error
    /// `out` holds the NAL units before the damaged one.
    pub fn convert(
        &self,
        packet: &[u8],
        keyframe: bool,
        out: &mut Vec<u8>,
    ) -> Result<(), BitstreamError> {
        let Some(length_size) = self.length_size else {
            self.pass_through(packet, keyframe, out);
            return Ok(());
        };
        let start = out.len();
        match self.convert_prefixed(packet, length_size, keyframe, out) {
            // Some muxers store Annex-B packets under an avcC/hvcC record:
            // framing that does not parse but starts with a start code is
            // taken as that.
            Err(_) if starts_with_start_code(packet) => {
                out.truncate(start);
                self.pass_through(packet, keyframe, out);
                Ok(())
            }
            result => result,
        }
    }

    /// Rewrites `packet` to Annex-B where it lies, when that takes no byte
    /// more: 4-byte length fields become 4-byte start codes, and Annex-B
    /// input stays as it is; the result is what `convert` would build.
    /// `None`, `packet` untouched, when `convert` must build it instead: a
    /// keyframe without its own sequence header (the record's parameter
    /// sets go in front), shorter length fields, or framing that does not
    /// parse (`convert` keeps what precedes the damage and reports it).
    pub fn convert_in_place(&self, packet: &mut [u8], keyframe: bool) -> Option<InPlace> {
        let Some(length_size) = self.length_size else {
            let usable = !keyframe || self.has_sequence_header(nal_units(packet));
            return usable.then_some(InPlace { nal_units: None });
        };
        if length_size != START_CODE.len()
            || LengthPrefixedNals::new(packet, length_size).any(|nal| nal.is_err())
            || (keyframe
                && !self.has_sequence_header(
                    LengthPrefixedNals::new(packet, length_size).map_while(Result::ok),
                ))
        {
            return None;
        }
        let mut index = NalIndex::new();
        let mut indexed = true;
        let mut at = 0;
        while let Some(field) = packet.get_mut(at..at + START_CODE.len()) {
            let length = field.iter().fold(0usize, |acc, &b| (acc << 8) | b as usize);
            field.copy_from_slice(&START_CODE);
            let nal = at + START_CODE.len();
            indexed = indexed && index.push(packet, nal, nal + length);
            at = nal + length;
        }
        Some(InPlace {
            nal_units: indexed.then_some(index),
        })
    }

    fn pass_through(&self, packet: &[u8], keyframe: bool, out: &mut Vec<u8>) {
        if keyframe && !self.has_sequence_header(nal_units(packet)) {
            out.extend_from_slice(&self.parameter_sets);
        }
        out.extend_from_slice(packet);
    }

    fn convert_prefixed(
        &self,
        packet: &[u8],
        length_size: usize,
        keyframe: bool,
        out: &mut Vec<u8>,
    ) -> Result<(), BitstreamError> {
        if keyframe {
            // Look ahead for in-band parameter sets; a damaged packet is
            // reported by the conversion loop below.
            let nals = LengthPrefixedNals::new(packet, length_size).map_while(Result::ok);
            if !self.has_sequence_header(nals) {
                out.extend_from_slice(&self.parameter_sets);
            }
        }
        out.reserve(packet.len() + 4 * 8);
        for nal in LengthPrefixedNals::new(packet, length_size) {
            push_nal(out, nal?);
        }
        Ok(())
    }

    fn has_sequence_header<'a>(&self, mut nals: impl Iterator<Item = &'a [u8]>) -> bool {
        nals.any(|nal| {
            nal.first()
                .is_some_and(|&h| self.codec.is_sequence_header(self.codec.nal_type(h)))
        })
    }
}

fn push_nal(out: &mut Vec<u8>, nal: &[u8]) {
    out.extend_from_slice(&START_CODE);
    out.extend_from_slice(nal);
}

/// Iterator over the NAL units of a length-prefixed packet.
struct LengthPrefixedNals<'a> {
    data: &'a [u8],
    offset: usize,
    length_size: usize,
    failed: bool,
}

impl<'a> LengthPrefixedNals<'a> {
    fn new(data: &'a [u8], length_size: usize) -> Self {
        Self {
            data,
            offset: 0,
            length_size,
            failed: false,
        }
    }
}

impl<'a> Iterator for LengthPrefixedNals<'a> {
    type Item = Result<&'a [u8], BitstreamError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.offset >= self.data.len() {
            return None;
        }
        let size = self.data.len();
        let at = self.offset;
        let Some(field) = self.data.get(at..at + self.length_size) else {
            self.failed = true;
            return Some(Err(BitstreamError::LengthFieldTruncated {
                offset: at,
                length_size: self.length_size,
            }));
        };
        let length = field.iter().fold(0usize, |acc, &b| (acc << 8) | b as usize);
        let start = at + self.length_size;
        let Some(nal) = start
            .checked_add(length)
            .and_then(|end| self.data.get(start..end))
        else {
            self.failed = true;
            return Some(Err(BitstreamError::NalPastEnd {
                offset: at,
                length,
                size,
            }));
        };
        self.offset = start + length;
        Some(Ok(nal))
    }
}

/// What reel needs from an avcC / hvcC record.
struct ConfigRecord<'a> {
    length_size: usize,
    nals: Vec<&'a [u8]>,
}

/// A cursor over a configuration record that reports where it ran out.
struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn u8(&mut self) -> Result<u8, BitstreamError> {
        let v = *self
            .data
            .get(self.pos)
            .ok_or(BitstreamError::ConfigTruncated(self.pos))?;
        self.pos += 1;
        Ok(v)
    }

    fn u16(&mut self) -> Result<usize, BitstreamError> {
        Ok(((self.u8()? as usize) << 8) | self.u8()? as usize)
    }

    fn bytes(&mut self, n: usize) -> Result<&'a [u8], BitstreamError> {
        let v = self
            .data
            .get(self.pos..self.pos + n)
            .ok_or(BitstreamError::ConfigTruncated(self.pos))?;
        self.pos += n;
        Ok(v)
    }
}

/// ISO/IEC 14496-15 AVCDecoderConfigurationRecord.
fn parse_avcc(data: &[u8]) -> Result<ConfigRecord<'_>, BitstreamError> {
    if data.len() < 7 {
        return Err(BitstreamError::ConfigTooShort(data.len()));
    }
    let mut r = Reader { data, pos: 4 };
    let length_size = (r.u8()? & 0x03) as usize + 1;
    let mut nals = Vec::new();
    let sps_count = r.u8()? & 0x1f;
    for _ in 0..sps_count {
        let len = r.u16()?;
        nals.push(r.bytes(len)?);
    }
    let pps_count = r.u8()?;
    for _ in 0..pps_count {
        let len = r.u16()?;
        nals.push(r.bytes(len)?);
    }
    // The optional High-profile tail (chroma format, SPS extensions) is left
    // unread: decoders take those values from the SPS itself.
    Ok(ConfigRecord { length_size, nals })
}

/// ISO/IEC 14496-15 HEVCDecoderConfigurationRecord.
fn parse_hvcc(data: &[u8]) -> Result<ConfigRecord<'_>, BitstreamError> {
    if data.len() < 23 {
        return Err(BitstreamError::ConfigTooShort(data.len()));
    }
    let mut r = Reader { data, pos: 21 };
    let length_size = (r.u8()? & 0x03) as usize + 1;
    let mut nals = Vec::new();
    let arrays = r.u8()?;
    for _ in 0..arrays {
        let _type = r.u8()?;
        let count = r.u16()?;
        for _ in 0..count {
            let len = r.u16()?;
            nals.push(r.bytes(len)?);
        }
    }
    Ok(ConfigRecord { length_size, nals })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::bitstream::annexb::nal_unit_ranges;

    const SPS: &[u8] = &[0x67, 0x42, 0xc0, 0x1e, 0xaa];
    const PPS: &[u8] = &[0x68, 0xce, 0x3c, 0x80];
    const IDR: &[u8] = &[0x65, 0x88, 0x84, 0x00, 0x10];
    const NON_IDR: &[u8] = &[0x41, 0x9a, 0x02];

    fn avcc(length_size: u8, sps: &[&[u8]], pps: &[&[u8]]) -> Vec<u8> {
        let mut v = vec![1, 0x42, 0xc0, 0x1e, 0xfc | (length_size - 1)];
        v.push(0xe0 | sps.len() as u8);
        for s in sps {
            v.extend_from_slice(&(s.len() as u16).to_be_bytes());
            v.extend_from_slice(s);
        }
        v.push(pps.len() as u8);
        for p in pps {
            v.extend_from_slice(&(p.len() as u16).to_be_bytes());
            v.extend_from_slice(p);
        }
        v
    }

    fn prefixed(length_size: usize, nals: &[&[u8]]) -> Vec<u8> {
        let mut v = Vec::new();
        for n in nals {
            let len = (n.len() as u32).to_be_bytes();
            v.extend_from_slice(&len[4 - length_size..]);
            v.extend_from_slice(n);
        }
        v
    }

    fn annexb(nals: &[&[u8]]) -> Vec<u8> {
        let mut v = Vec::new();
        for n in nals {
            v.extend_from_slice(&START_CODE);
            v.extend_from_slice(n);
        }
        v
    }

    #[test]
    fn avcc_keyframe_gets_parameter_sets_in_front() {
        for length_size in [1usize, 2, 4] {
            let conv =
                AnnexBConverter::new(NalCodec::H264, &avcc(length_size as u8, &[SPS], &[PPS]))
                    .unwrap();
            assert!(conv.is_length_prefixed());
            assert_eq!(conv.parameter_sets(), annexb(&[SPS, PPS]));
            let mut out = Vec::new();
            conv.convert(&prefixed(length_size, &[IDR]), true, &mut out)
                .unwrap();
            assert_eq!(out, annexb(&[SPS, PPS, IDR]), "length size {length_size}");
            out.clear();
            conv.convert(&prefixed(length_size, &[NON_IDR, NON_IDR]), false, &mut out)
                .unwrap();
            assert_eq!(out, annexb(&[NON_IDR, NON_IDR]));
        }
    }

    #[test]
    fn keyframe_with_in_band_sps_is_left_alone() {
        let conv = AnnexBConverter::new(NalCodec::H264, &avcc(4, &[SPS], &[PPS])).unwrap();
        let mut out = Vec::new();
        conv.convert(&prefixed(4, &[SPS, PPS, IDR]), true, &mut out)
            .unwrap();
        assert_eq!(out, annexb(&[SPS, PPS, IDR]));
    }

    #[test]
    fn damaged_packets_are_errors_with_the_good_prefix_kept() {
        let conv = AnnexBConverter::new(NalCodec::H264, &avcc(4, &[SPS], &[PPS])).unwrap();
        let mut packet = prefixed(4, &[NON_IDR]);
        packet.extend_from_slice(&[0, 0, 0, 50, 0x41]);
        let mut out = Vec::new();
        let err = conv.convert(&packet, false, &mut out).unwrap_err();
        assert_eq!(
            err,
            BitstreamError::NalPastEnd {
                offset: 7,
                length: 50,
                size: 12
            }
        );
        assert_eq!(out, annexb(&[NON_IDR]));

        out.clear();
        let err = conv.convert(&[0, 0, 0], false, &mut out).unwrap_err();
        assert!(matches!(err, BitstreamError::LengthFieldTruncated { .. }));
        // A huge length must not overflow.
        out.clear();
        let err = conv
            .convert(&[0xff, 0xff, 0xff, 0xff, 1], true, &mut out)
            .unwrap_err();
        assert!(matches!(err, BitstreamError::NalPastEnd { .. }));
    }

    #[test]
    fn annexb_packets_under_an_avcc_record_pass_through() {
        let conv = AnnexBConverter::new(NalCodec::H264, &avcc(4, &[SPS], &[PPS])).unwrap();
        let packet = annexb(&[IDR, NON_IDR]);
        let mut out = vec![9];
        conv.convert(&packet, true, &mut out).unwrap();
        assert_eq!(out, [vec![9], annexb(&[SPS, PPS]), packet.clone()].concat());
    }

    /// In place or built, the same bytes: for every packet `convert_in_place`
    /// takes (framing whole, 4-byte fields, keyframes with their own SPS,
    /// Annex-B input), and it leaves the others untouched for `convert`.
    #[test]
    fn in_place_conversion_is_convert_where_it_applies() {
        use crate::codec::bitstream::test_rng::Rng;
        let mut rng = Rng(0x5eed);
        let nal_kinds: [&[u8]; 4] = [SPS, PPS, IDR, NON_IDR];
        let mut taken = [0usize; 3];
        for round in 0..4000 {
            let length_size = [1usize, 2, 4, 4, 4][rng.below(5) as usize];
            let annexb_input = rng.below(6) == 0;
            let conv = if annexb_input {
                AnnexBConverter::new(NalCodec::H264, &annexb(&[SPS, PPS])).unwrap()
            } else {
                AnnexBConverter::new(NalCodec::H264, &avcc(length_size as u8, &[SPS], &[PPS]))
                    .unwrap()
            };
            let nals: Vec<&[u8]> = (0..1 + rng.below(4))
                .map(|_| nal_kinds[rng.below(4) as usize])
                .collect();
            let mut packet = if annexb_input {
                annexb(&nals)
            } else {
                prefixed(length_size, &nals)
            };
            // Now and then damage the framing: cut it or flip a byte.
            match rng.below(8) {
                0 => packet.truncate(rng.below(packet.len() as u64) as usize),
                1 => {
                    let at = rng.below(packet.len() as u64) as usize;
                    packet[at] ^= 1 << rng.below(8);
                }
                _ => {}
            }
            let keyframe = rng.below(2) == 0;
            let mut built = Vec::new();
            let built_ok = conv.convert(&packet, keyframe, &mut built).is_ok();
            let mut in_place = packet.clone();
            if let Some(done) = conv.convert_in_place(&mut in_place, keyframe) {
                assert!(built_ok, "round {round}: in place where convert fails");
                assert_eq!(in_place, built, "round {round}");
                taken[1] += 1;
                // The units it recorded are the ones a search finds.
                if let Some(index) = done.nal_units {
                    let searched: Vec<_> = nal_unit_ranges(&in_place).collect();
                    assert_eq!(
                        index.ranges().collect::<Vec<_>>(),
                        searched,
                        "round {round}"
                    );
                    taken[2] += 1;
                }
            } else {
                assert_eq!(in_place, packet, "round {round}: refused but changed");
                taken[0] += 1;
            }
        }
        assert!(
            taken[0] > 500 && taken[1] > 500 && taken[2] > 300,
            "{taken:?}"
        );
    }

    #[test]
    fn in_place_conversion_needs_no_more_bytes() {
        let conv = AnnexBConverter::new(NalCodec::H264, &avcc(4, &[SPS], &[PPS])).unwrap();
        let mut frame = prefixed(4, &[NON_IDR, NON_IDR]);
        let done = conv.convert_in_place(&mut frame, false).expect("in place");
        assert_eq!(frame, annexb(&[NON_IDR, NON_IDR]));
        let units: Vec<_> = done.nal_units.expect("indexed").ranges().collect();
        assert_eq!(units, [4..7, 11..14]);
        // The record's parameter sets must go in front of this keyframe.
        let mut key = prefixed(4, &[IDR]);
        assert!(conv.convert_in_place(&mut key, true).is_none());
        let mut key = prefixed(4, &[SPS, PPS, IDR]);
        assert!(conv.convert_in_place(&mut key, true).is_some());
        assert_eq!(key, annexb(&[SPS, PPS, IDR]));
        let short = AnnexBConverter::new(NalCodec::H264, &avcc(2, &[SPS], &[PPS])).unwrap();
        assert!(short
            .convert_in_place(&mut prefixed(2, &[NON_IDR]), false)
            .is_none());
        // More units than an index holds: converted, not indexed.
        let many = vec![NON_IDR; NalIndex::CAPACITY + 1];
        let done = conv.convert_in_place(&mut prefixed(4, &many), false);
        assert_eq!(done, Some(InPlace { nal_units: None }));
    }

    #[test]
    fn truncated_records_are_errors() {
        let full = avcc(4, &[SPS], &[PPS]);
        // Empty extradata means "no record" (packets already Annex-B).
        for cut in 1..full.len() {
            let r = AnnexBConverter::new(NalCodec::H264, &full[..cut]);
            // Cutting exactly after a complete SPS list still lacks the PPS count.
            assert!(r.is_err(), "cut at {cut} accepted");
        }
        assert!(AnnexBConverter::new(NalCodec::Hevc, &[1; 10]).is_err());
    }

    #[test]
    fn hvcc_headers_are_parameter_sets_and_prefix_sei() {
        let vps: &[u8] = &[0x40, 0x01, 0x0c];
        let sps: &[u8] = &[0x42, 0x01, 0x01];
        let pps: &[u8] = &[0x44, 0x01, 0xc1];
        let sei: &[u8] = &[0x4e, 0x01, 0x05];
        let suffix_sei: &[u8] = &[0x50, 0x01, 0x05];
        let mut rec = vec![1u8; 21];
        rec.push(0xf0 | 3); // lengthSizeMinusOne = 3
        rec.push(5);
        for (t, nal) in [
            (32u8, vps),
            (33, sps),
            (34, pps),
            (39, sei),
            (40, suffix_sei),
        ] {
            rec.push(0x80 | t);
            rec.extend_from_slice(&1u16.to_be_bytes());
            rec.extend_from_slice(&(nal.len() as u16).to_be_bytes());
            rec.extend_from_slice(nal);
        }
        let conv = AnnexBConverter::new(NalCodec::Hevc, &rec).unwrap();
        assert_eq!(conv.parameter_sets(), annexb(&[vps, sps, pps, sei]));
        let idr: &[u8] = &[0x26, 0x01, 0xaf];
        let mut out = Vec::new();
        conv.convert(&prefixed(4, &[idr]), true, &mut out).unwrap();
        assert_eq!(out, annexb(&[vps, sps, pps, sei, idr]));
    }

    #[test]
    fn annexb_input_passes_through_and_gets_extradata_sets_on_keyframes() {
        let extradata = [&[0u8, 0, 1][..], SPS, &[0, 0, 0, 1], PPS].concat();
        let conv = AnnexBConverter::new(NalCodec::H264, &extradata).unwrap();
        assert!(!conv.is_length_prefixed());
        assert_eq!(conv.parameter_sets(), annexb(&[SPS, PPS]));
        let packet = [&[0u8, 0, 1][..], IDR].concat();
        let mut out = Vec::new();
        conv.convert(&packet, true, &mut out).unwrap();
        assert_eq!(out, [annexb(&[SPS, PPS]), packet.clone()].concat());
        let with_sps = annexb(&[SPS, PPS, IDR]);
        out.clear();
        conv.convert(&with_sps, true, &mut out).unwrap();
        assert_eq!(out, with_sps);
    }
}
