//! Parsing whole NAL units (escaped, header included) into parameter sets
//! and slice segment headers: the reader passes over emulation prevention
//! bytes as it goes (a slice is never unescaped whole to read its header)
//! and starts past the two-byte NAL header.

use crate::codec::bitstream::BitReader;

use super::nal::Nal;
use super::{HevcError, Pps, SliceHeader, Sps, Vps};

fn with_rbsp<T>(
    nal: &[u8],
    parse: impl FnOnce(&mut BitReader) -> Result<T, HevcError>,
) -> Result<T, HevcError> {
    let nal = Nal::parse(nal)?;
    let mut r = BitReader::rbsp(nal.bytes);
    r.skip(16, "nal_unit_header")?;
    parse(&mut r)
}

pub fn vps(nal: &[u8]) -> Result<Vps, HevcError> {
    with_rbsp(nal, Vps::parse)
}

pub fn sps(nal: &[u8]) -> Result<Sps, HevcError> {
    with_rbsp(nal, Sps::parse)
}

pub fn pps<'s>(nal: &[u8], sps_for: impl Fn(u8) -> Option<&'s Sps>) -> Result<Pps, HevcError> {
    with_rbsp(nal, |r| Pps::parse(r, sps_for))
}

/// A slice segment header; `params` gives the PPS of an id and its SPS,
/// `previous` the picture's segment before this one (whose fields a
/// dependent segment takes).
pub fn slice_header<'p>(
    nal: &[u8],
    params: impl Fn(u8) -> Result<(&'p Pps, &'p Sps), HevcError>,
    previous: Option<&SliceHeader>,
) -> Result<SliceHeader, HevcError> {
    let nal = Nal::parse(nal)?;
    let mut r = BitReader::rbsp(nal.bytes);
    r.skip(16, "nal_unit_header")?;
    SliceHeader::parse(&mut r, &nal, params, previous)
}

/// The first SPS of an Annex-B blob (a container's parameter sets) that
/// parses.
pub fn first_sps(parameter_sets: &[u8]) -> Option<Sps> {
    crate::codec::bitstream::annexb::nal_units(parameter_sets)
        .filter(|nal| nal.len() > 2 && (nal[0] >> 1) & 0x3f == super::nal::nal_type::SPS)
        .find_map(|nal| sps(nal).ok())
}
