//! OBU headers (5.3.1-5.3.3) and the OBUs of a temporal unit in the
//! low-overhead bitstream format (every OBU with its size, as Matroska, MP4
//! and IVF carry AV1); an OBU without a size field runs to the end of the
//! data, as the format allows for the last one.

use crate::codec::bitstream::BitReader;

use super::Av1Error;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObuType {
    SequenceHeader,
    TemporalDelimiter,
    FrameHeader,
    TileGroup,
    Metadata,
    Frame,
    RedundantFrameHeader,
    TileList,
    Padding,
    Reserved(u8),
}

impl ObuType {
    fn from_code(code: u8) -> Self {
        match code {
            1 => Self::SequenceHeader,
            2 => Self::TemporalDelimiter,
            3 => Self::FrameHeader,
            4 => Self::TileGroup,
            5 => Self::Metadata,
            6 => Self::Frame,
            7 => Self::RedundantFrameHeader,
            8 => Self::TileList,
            15 => Self::Padding,
            other => Self::Reserved(other),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ObuHeader {
    pub obu_type: ObuType,
    pub obu_extension_flag: bool,
    pub obu_has_size_field: bool,
    pub temporal_id: u8,
    pub spatial_id: u8,
}

impl ObuHeader {
    /// obu_header() (5.3.2), from the OBU's first bit.
    pub fn parse(r: &mut BitReader) -> Result<Self, Av1Error> {
        if r.u(1, "obu_forbidden_bit")? != 0 {
            return Err(Av1Error::Invalid("obu_forbidden_bit is set"));
        }
        let obu_type = ObuType::from_code(r.u(4, "obu_type")? as u8);
        let obu_extension_flag = r.flag("obu_extension_flag")?;
        let obu_has_size_field = r.flag("obu_has_size_field")?;
        r.u(1, "obu_reserved_1bit")?;
        let (mut temporal_id, mut spatial_id) = (0, 0);
        if obu_extension_flag {
            temporal_id = r.u(3, "temporal_id")? as u8;
            spatial_id = r.u(2, "spatial_id")? as u8;
            r.u(3, "extension_header_reserved_3bits")?;
        }
        Ok(Self {
            obu_type,
            obu_extension_flag,
            obu_has_size_field,
            temporal_id,
            spatial_id,
        })
    }

    /// Whether operating point `idc` (a sequence header's
    /// `operating_point_idc`) decodes this OBU (7.5's drop rule); OBUs
    /// without an extension belong to every operating point.
    pub fn in_operating_point(&self, idc: u16) -> bool {
        if !self.obu_extension_flag
            || idc == 0
            || matches!(
                self.obu_type,
                ObuType::SequenceHeader | ObuType::TemporalDelimiter
            )
        {
            return true;
        }
        let in_temporal = (idc >> self.temporal_id) & 1 == 1;
        let in_spatial = (idc >> (u16::from(self.spatial_id) + 8)) & 1 == 1;
        in_temporal && in_spatial
    }
}

/// One OBU inside a temporal unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Obu<'a> {
    pub header: ObuHeader,
    /// The whole OBU, header included: bit positions inside it are those
    /// FFmpeg's trace_headers gives.
    pub data: &'a [u8],
    /// Bytes of `data` before the payload (header, extension, size field).
    pub payload_offset: usize,
}

impl<'a> Obu<'a> {
    /// Reads the OBU at the start of `data` (its header and size field,
    /// traced when `r` traces) and returns it with the bytes it takes.
    pub fn parse_traced(data: &'a [u8], r: &mut BitReader) -> Result<Self, Av1Error> {
        let header = ObuHeader::parse(r)?;
        let header_bytes = 1 + usize::from(header.obu_extension_flag);
        let size = if header.obu_has_size_field {
            r.compound("obu_size", |r| r.leb128("obu_size").map(i64::from))? as usize
        } else {
            data.len()
                .checked_sub(header_bytes)
                .ok_or(Av1Error::Invalid("OBU shorter than its header"))?
        };
        let payload_offset = r.position() / 8;
        let end = payload_offset
            .checked_add(size)
            .filter(|&end| end <= data.len())
            .ok_or(Av1Error::Invalid("obu_size runs past the data"))?;
        Ok(Self {
            header,
            data: &data[..end],
            payload_offset,
        })
    }

    pub fn parse(data: &'a [u8]) -> Result<Self, Av1Error> {
        Self::parse_traced(data, &mut BitReader::new(data))
    }

    pub fn payload(&self) -> &'a [u8] {
        &self.data[self.payload_offset..]
    }
}

/// The OBUs of `data` in order; stops after the first error.
pub fn obus(data: &[u8]) -> Obus<'_> {
    Obus { rest: data }
}

pub struct Obus<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for Obus<'a> {
    type Item = Result<Obu<'a>, Av1Error>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        match Obu::parse(self.rest) {
            Ok(obu) => {
                self.rest = &self.rest[obu.data.len()..];
                Some(Ok(obu))
            }
            Err(e) => {
                self.rest = &[];
                Some(Err(e))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_sized_obus_and_reads_extensions() {
        // Temporal delimiter (size 0), then a padding OBU with an extension
        // (temporal 5, spatial 2) and two payload bytes, then an unsized
        // metadata OBU running to the end.
        let data = [0x12, 0x00, 0x7e, 0xb0, 0x02, 0xaa, 0xbb, 0x28, 0x01, 0x02];
        let all: Vec<Obu> = obus(&data).collect::<Result<_, _>>().unwrap();
        assert_eq!(all.len(), 3);
        assert_eq!(all[0].header.obu_type, ObuType::TemporalDelimiter);
        assert!(all[0].payload().is_empty());
        assert_eq!(all[1].header.obu_type, ObuType::Padding);
        assert_eq!(
            (all[1].header.temporal_id, all[1].header.spatial_id),
            (5, 2)
        );
        assert_eq!(all[1].payload(), &[0xaa, 0xbb]);
        assert_eq!(all[2].header.obu_type, ObuType::Metadata);
        assert_eq!(all[2].payload(), &[0x01, 0x02]);
        // Operating point 0 of a two-layer stream: temporal layer 0 only.
        assert!(!all[1].header.in_operating_point(0x101));
        assert!(all[1].header.in_operating_point(0x420));
    }

    #[test]
    fn sizes_past_the_data_and_forbidden_bits_are_errors() {
        assert!(Obu::parse(&[0x12, 0x05, 0x00]).is_err());
        assert!(Obu::parse(&[0x92, 0x00]).is_err());
        assert!(Obu::parse(&[0x12]).is_err());
        assert!(Obu::parse(&[0x16]).is_err(), "extension byte missing");
    }
}
