//! The HEVC NAL unit header (7.3.1.2), the unit types (Table 7-1), and
//! where a bit of the RBSP lies in the NAL unit as sent (emulation
//! prevention bytes counted), which the slice data offsets need.
//!
//! Splitting a byte stream at start codes and removing emulation prevention
//! work as for H.264 (Annex B of both standards): `codec::bitstream` does both.

use super::HevcError;

pub use crate::codec::bitstream::rbsp::unescape;

/// nal_unit_type values (Table 7-1).
pub mod nal_type {
    pub const TRAIL_N: u8 = 0;
    pub const TRAIL_R: u8 = 1;
    pub const TSA_N: u8 = 2;
    pub const TSA_R: u8 = 3;
    pub const STSA_N: u8 = 4;
    pub const STSA_R: u8 = 5;
    pub const RADL_N: u8 = 6;
    pub const RADL_R: u8 = 7;
    pub const RASL_N: u8 = 8;
    pub const RASL_R: u8 = 9;
    /// RSV_VCL_N10..RSV_VCL_N14 / R11..R15: reserved VCL types.
    pub const RSV_VCL_N14: u8 = 14;
    pub const BLA_W_LP: u8 = 16;
    pub const BLA_W_RADL: u8 = 17;
    pub const BLA_N_LP: u8 = 18;
    pub const IDR_W_RADL: u8 = 19;
    pub const IDR_N_LP: u8 = 20;
    pub const CRA_NUT: u8 = 21;
    pub const RSV_IRAP_VCL22: u8 = 22;
    pub const RSV_IRAP_VCL23: u8 = 23;
    /// Last VCL type (RSV_VCL31).
    pub const RSV_VCL31: u8 = 31;
    pub const VPS: u8 = 32;
    pub const SPS: u8 = 33;
    pub const PPS: u8 = 34;
    pub const AUD: u8 = 35;
    pub const EOS: u8 = 36;
    pub const EOB: u8 = 37;
    pub const FD: u8 = 38;
    pub const PREFIX_SEI: u8 = 39;
    pub const SUFFIX_SEI: u8 = 40;
}

/// nal_unit_header() (7.3.1.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NalHeader {
    pub nal_unit_type: u8,
    pub nuh_layer_id: u8,
    /// 1..=7 (0 is refused).
    pub nuh_temporal_id_plus1: u8,
}

impl NalHeader {
    /// Reads the two header bytes (forbidden_zero_bit must be 0,
    /// nuh_temporal_id_plus1 must not be 0).
    pub fn parse(bytes: &[u8]) -> Result<Self, HevcError> {
        let [first, second, ..] = *bytes else {
            return Err(HevcError::Invalid("NAL unit shorter than its header"));
        };
        if first & 0x80 != 0 {
            return Err(HevcError::Invalid("forbidden_zero_bit is set"));
        }
        let nuh_temporal_id_plus1 = second & 7;
        if nuh_temporal_id_plus1 == 0 {
            return Err(HevcError::Invalid("nuh_temporal_id_plus1 is 0"));
        }
        Ok(Self {
            nal_unit_type: (first >> 1) & 0x3f,
            nuh_layer_id: ((first & 1) << 5) | (second >> 3),
            nuh_temporal_id_plus1,
        })
    }

    /// TemporalId (7-1).
    pub fn temporal_id(&self) -> u8 {
        self.nuh_temporal_id_plus1 - 1
    }

    /// A coded slice segment (types 0..=31).
    pub fn is_vcl(&self) -> bool {
        self.nal_unit_type <= nal_type::RSV_VCL31
    }

    /// Intra random access point: BLA, IDR, CRA or reserved IRAP (16..=23).
    pub fn is_irap(&self) -> bool {
        (nal_type::BLA_W_LP..=nal_type::RSV_IRAP_VCL23).contains(&self.nal_unit_type)
    }

    pub fn is_idr(&self) -> bool {
        matches!(
            self.nal_unit_type,
            nal_type::IDR_W_RADL | nal_type::IDR_N_LP
        )
    }

    pub fn is_bla(&self) -> bool {
        (nal_type::BLA_W_LP..=nal_type::BLA_N_LP).contains(&self.nal_unit_type)
    }

    pub fn is_cra(&self) -> bool {
        self.nal_unit_type == nal_type::CRA_NUT
    }

    pub fn is_rasl(&self) -> bool {
        matches!(self.nal_unit_type, nal_type::RASL_N | nal_type::RASL_R)
    }

    pub fn is_radl(&self) -> bool {
        matches!(self.nal_unit_type, nal_type::RADL_N | nal_type::RADL_R)
    }

    /// A sub-layer non-reference picture (the even types up to
    /// RSV_VCL_N14): not used for reference by pictures of its sub-layer.
    pub fn is_sub_layer_non_reference(&self) -> bool {
        self.nal_unit_type <= nal_type::RSV_VCL_N14 && self.nal_unit_type % 2 == 0
    }
}

/// One NAL unit as found in the stream: header included, emulation
/// prevention bytes still in, start code and trailing zero bytes removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Nal<'a> {
    pub bytes: &'a [u8],
    pub header: NalHeader,
}

impl<'a> Nal<'a> {
    pub fn parse(bytes: &'a [u8]) -> Result<Self, HevcError> {
        Ok(Self {
            bytes,
            header: NalHeader::parse(bytes)?,
        })
    }
}

/// How many bytes of the escaped NAL unit `nal` hold the first
/// `rbsp_bytes` bytes of its RBSP: `rbsp_bytes` plus the emulation
/// prevention bytes among them (an `03` right at the boundary belongs to
/// what follows it). Saturates at the NAL unit's length.
pub fn escaped_len(nal: &[u8], rbsp_bytes: usize) -> usize {
    let mut kept = 0;
    let mut zeros = 0;
    for (i, &b) in nal.iter().enumerate() {
        if kept == rbsp_bytes {
            return i;
        }
        if zeros >= 2 && b == 3 {
            zeros = 0;
            continue;
        }
        zeros = if b == 0 { zeros + 1 } else { 0 };
        kept += 1;
    }
    nal.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_fields() {
        // 0x40 0x01: VPS, layer 0, tid+1 1. 0x26 0x01: IDR_W_RADL.
        let h = NalHeader::parse(&[0x40, 0x01]).unwrap();
        assert_eq!(
            (h.nal_unit_type, h.nuh_layer_id, h.nuh_temporal_id_plus1),
            (32, 0, 1)
        );
        let h = NalHeader::parse(&[0x26, 0x01, 0xaf]).unwrap();
        assert!(h.is_idr() && h.is_irap() && h.is_vcl());
        let h = NalHeader::parse(&[0x01, 0x0b]).unwrap();
        assert_eq!(
            (h.nal_unit_type, h.nuh_layer_id, h.temporal_id()),
            (0, 33, 2)
        );
        assert!(h.is_sub_layer_non_reference());
        assert!(NalHeader::parse(&[0x80, 0x01]).is_err());
        assert!(NalHeader::parse(&[0x40, 0x00]).is_err());
        assert!(NalHeader::parse(&[0x40]).is_err());
    }

    #[test]
    fn escaped_len_counts_emulation_prevention() {
        let nal = [0x26, 0x01, 0, 0, 3, 1, 0, 0, 3, 0, 7];
        assert_eq!(escaped_len(&nal, 2), 2);
        assert_eq!(escaped_len(&nal, 4), 4);
        assert_eq!(escaped_len(&nal, 5), 6);
        assert_eq!(escaped_len(&nal, 7), 8);
        assert_eq!(escaped_len(&nal, 8), 10);
        assert_eq!(escaped_len(&nal, 100), nal.len());
    }
}
