//! H.264 NAL units (7.3.1, 7.4.1): the header byte and a reader of the
//! RBSP behind it. Splitting a stream into NAL units and emulation
//! prevention are shared with HEVC in [`crate::codec::bitstream`].

use super::H264Error;
use crate::codec::bitstream::rbsp::unescape;
use crate::codec::bitstream::BitReader;

/// nal_unit_type values reel acts on (Table 7-1).
pub mod nal_type {
    pub const SLICE_NON_IDR: u8 = 1;
    pub const SLICE_PARTITION_A: u8 = 2;
    pub const SLICE_PARTITION_C: u8 = 4;
    pub const SLICE_IDR: u8 = 5;
    pub const SEI: u8 = 6;
    pub const SPS: u8 = 7;
    pub const PPS: u8 = 8;
    pub const AUD: u8 = 9;
    pub const END_OF_SEQUENCE: u8 = 10;
    pub const END_OF_STREAM: u8 = 11;
}

/// One NAL unit as found in the stream: header byte included, emulation
/// prevention bytes still in, start code and trailing zero bytes removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Nal<'a> {
    pub bytes: &'a [u8],
    pub nal_ref_idc: u8,
    pub nal_unit_type: u8,
}

impl<'a> Nal<'a> {
    /// Reads the one-byte NAL header (forbidden_zero_bit must be 0).
    pub fn parse(bytes: &'a [u8]) -> Result<Self, H264Error> {
        let &first = bytes.first().ok_or(H264Error::Invalid("empty NAL unit"))?;
        if first & 0x80 != 0 {
            return Err(H264Error::Invalid("forbidden_zero_bit is set"));
        }
        Ok(Self {
            bytes,
            nal_ref_idc: (first >> 5) & 3,
            nal_unit_type: first & 0x1f,
        })
    }

    /// A reader of the RBSP from the header byte on (emulation prevention
    /// passed over as it reads), so that bit positions count from the
    /// NAL's first bit as the V4L2 controls and FFmpeg's traces do.
    pub fn reader(&self) -> BitReader<'a> {
        BitReader::rbsp(self.bytes)
    }

    /// The RBSP including the header byte, copied out unescaped.
    pub fn rbsp(&self) -> Vec<u8> {
        unescape(self.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reader_passes_over_emulation_prevention() {
        let nal = Nal::parse(&[0x65, 0x00, 0x00, 0x03, 0x01, 0x80]).unwrap();
        let mut r = nal.reader();
        r.skip(8, "nal_unit_header").unwrap();
        assert_eq!(r.u(24, "x").unwrap(), 1);
        assert_eq!(nal.rbsp(), [0x65, 0, 0, 1, 0x80]);
        assert!(!r.more_rbsp_data());
    }

    /// A P slice whose 16-bit frame_num and POC lsb are both 0: 34 zero
    /// bits, so the NAL unit as sent holds an emulation prevention byte
    /// inside the slice header.
    #[test]
    fn slice_header_sizes_count_rbsp_bits_through_escapes() {
        use crate::codec::bitstream::reader::BitWriter;
        use crate::codec::h264::{pps::Pps, slice::SliceHeader, sps::Sps};

        let mut w = BitWriter::new();
        w.u(8, 77); // profile_idc
        w.u(8, 0);
        w.u(8, 30); // level_idc
        w.ue(0); // seq_parameter_set_id
        w.ue(12); // log2_max_frame_num_minus4: 16 bits
        w.ue(0); // pic_order_cnt_type
        w.ue(12); // log2_max_pic_order_cnt_lsb_minus4: 16 bits
        w.ue(1); // max_num_ref_frames
        w.bit(false);
        w.ue(19);
        w.ue(14);
        w.bit(true); // frame_mbs_only_flag
        w.bit(true);
        w.bit(false);
        w.bit(false);
        w.trailing();
        let sps = Sps::parse(&mut BitReader::new(&w.bytes)).unwrap();
        let w = crate::codec::h264::tests::simple_pps(0);
        let pps = Pps::parse(&mut BitReader::new(&w.bytes), |_| Some(&sps)).unwrap();

        let mut w = BitWriter::new();
        w.u(8, 0x41); // nal_ref_idc 2, non-IDR slice
        w.ue(0); // first_mb_in_slice
        w.ue(5); // P
        w.ue(0); // pic_parameter_set_id
        w.u(16, 0); // frame_num
        w.u(16, 0); // pic_order_cnt_lsb
        w.bit(false); // num_ref_idx_active_override_flag
        w.bit(false); // ref_pic_list_modification_flag_l0
        w.bit(false); // adaptive_ref_pic_marking_mode_flag
        w.se(0); // slice_qp_delta
        w.u(8, 0xa5); // slice data
        w.trailing();
        let rbsp = w.bytes;
        let mut sent = Vec::new();
        for &b in &rbsp {
            if sent.ends_with(&[0, 0]) && b <= 3 {
                sent.push(3);
            }
            sent.push(b);
        }
        assert_eq!(sent[..8], [0x41, 0x9a, 0, 0, 3, 0, 0, 0x34]);

        let nal = Nal::parse(&sent).unwrap();
        let mut escaped = nal.reader();
        escaped.skip(8, "nal_unit_header").unwrap();
        let through = SliceHeader::parse(&mut escaped, 2, 1, &sps, &pps).unwrap();
        assert_eq!(escaped.emulation_prevention_bytes(), 1);
        assert_eq!(escaped.escaped_position(), 51 + 8);
        let mut plain = BitReader::new(&rbsp);
        plain.skip(8, "nal_unit_header").unwrap();
        let unescaped = SliceHeader::parse(&mut plain, 2, 1, &sps, &pps).unwrap();
        assert_eq!(through, unescaped);
        // 8 + 1 + 5 + 1 + 16 + 16 + 1 + 1 + 1 + 1 bits, escapes not counted.
        assert_eq!(through.header_bit_size, 51);
        assert_eq!(through.pic_order_cnt_bit_size, 16);
        assert_eq!(through.dec_ref_pic_marking_bit_size, 1);
        assert_eq!(SliceHeader::peek_pps_id(&nal), Ok(0));
    }

    #[test]
    fn header_fields() {
        let nal = Nal::parse(&[0x65, 0x88]).unwrap();
        assert_eq!((nal.nal_ref_idc, nal.nal_unit_type), (3, 5));
        assert!(Nal::parse(&[0x80]).is_err());
        assert!(Nal::parse(&[]).is_err());
    }
}
