//! NAL units of an Annex-B byte stream: splitting at start codes, the NAL
//! header, and emulation prevention removal (7.3.1, 7.4.1, B.1).

use super::H264Error;

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

    /// The RBSP including the header byte, so that bit positions count from
    /// the NAL's first bit as the V4L2 controls and FFmpeg's traces do.
    pub fn rbsp(&self) -> Vec<u8> {
        unescape(self.bytes)
    }
}

/// Splits an Annex-B buffer at its start codes (`00 00 01`, with any number
/// of leading zero bytes). Bytes before the first start code are skipped.
pub fn split_annex_b(data: &[u8]) -> AnnexBSplitter<'_> {
    AnnexBSplitter {
        data,
        pos: find_start_code(data, 0).map(|(_, end)| end),
    }
}

pub struct AnnexBSplitter<'a> {
    data: &'a [u8],
    /// Where the next NAL starts (just after its start code).
    pos: Option<usize>,
}

impl<'a> Iterator for AnnexBSplitter<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        loop {
            let start = self.pos?;
            let (end, next) = match find_start_code(self.data, start) {
                Some((code_start, code_end)) => (code_start, Some(code_end)),
                None => (self.data.len(), None),
            };
            self.pos = next;
            let mut nal = &self.data[start..end];
            // trailing_zero_8bits and the zeros of a 4-byte start code.
            while let [rest @ .., 0] = nal {
                nal = rest;
            }
            if !nal.is_empty() {
                return Some(nal);
            }
        }
    }
}

/// Finds the next `00 00 01` at or after `from`: (its first byte, the byte
/// after it).
fn find_start_code(data: &[u8], from: usize) -> Option<(usize, usize)> {
    let mut i = from;
    while i + 3 <= data.len() {
        if data[i + 2] > 1 {
            i += 3;
        } else if data[i] == 0 && data[i + 1] == 0 && data[i + 2] == 1 {
            return Some((i, i + 3));
        } else {
            i += 1;
        }
    }
    None
}

/// Removes emulation prevention bytes: every `03` following `00 00`.
pub fn unescape(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len());
    let mut zeros = 0;
    for &b in data {
        if zeros >= 2 && b == 3 {
            zeros = 0;
            continue;
        }
        zeros = if b == 0 { zeros + 1 } else { 0 };
        out.push(b);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_three_and_four_byte_start_codes() {
        let data = [
            0xff, 0, 0, 0, 1, 0x67, 1, 2, 0, 0, 1, 0x68, 3, 0, 0, 0, 0, 1, 0x65, 0, 0,
        ];
        let nals: Vec<&[u8]> = split_annex_b(&data).collect();
        assert_eq!(nals, vec![&[0x67, 1, 2][..], &[0x68, 3][..], &[0x65][..]]);
    }

    #[test]
    fn no_start_code_means_no_nal() {
        assert_eq!(split_annex_b(&[0x65, 1, 2, 3]).count(), 0);
        assert_eq!(split_annex_b(&[]).count(), 0);
        assert_eq!(split_annex_b(&[0, 0, 1]).count(), 0);
    }

    #[test]
    fn removes_emulation_prevention() {
        assert_eq!(
            unescape(&[0, 0, 3, 1, 0, 0, 3, 0, 3]),
            vec![0, 0, 1, 0, 0, 0, 3]
        );
        assert_eq!(unescape(&[0, 0, 3]), vec![0, 0]);
    }

    #[test]
    fn header_fields() {
        let nal = Nal::parse(&[0x65, 0x88]).unwrap();
        assert_eq!((nal.nal_ref_idc, nal.nal_unit_type), (3, 5));
        assert!(Nal::parse(&[0x80]).is_err());
        assert!(Nal::parse(&[]).is_err());
    }
}
