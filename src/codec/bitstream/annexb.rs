//! Annex-B byte streams (H.264 and HEVC Annex B): NAL units each behind a
//! start code `00 00 01`, which may carry extra leading zero bytes. NAL
//! units are handed out as sub-slices of the input (or their byte ranges in
//! it), never copied.

use std::ops::Range;

/// The NAL units of an Annex-B buffer, start codes and trailing zero bytes
/// (`trailing_zero_8bits`, the first zero of a 4-byte start code) removed.
/// Bytes before the first start code and empty units are skipped.
pub fn nal_units(data: &[u8]) -> NalUnits<'_> {
    NalUnits {
        ranges: nal_unit_ranges(data),
    }
}

/// As [`nal_units`], the byte range of each NAL unit within `data`.
pub fn nal_unit_ranges(data: &[u8]) -> NalUnitRanges<'_> {
    NalUnitRanges {
        data,
        next: find_start_code(data, 0).map(|code| code.end),
        keep_trailing_zeros: false,
    }
}

/// The byte range of each unit behind a `00 00 01` start code, up to the
/// next one, zero bytes before it included: MPEG-1/2 units, whose syntax
/// may end in zero bits (stuffing zeros stay with the unit before them).
pub fn start_code_unit_ranges(data: &[u8]) -> NalUnitRanges<'_> {
    NalUnitRanges {
        keep_trailing_zeros: true,
        ..nal_unit_ranges(data)
    }
}

/// Whether `data` begins with a start code (3 or 4 bytes).
pub fn starts_with_start_code(data: &[u8]) -> bool {
    data.starts_with(&[0, 0, 1]) || data.starts_with(&[0, 0, 0, 1])
}

#[derive(Debug, Clone)]
pub struct NalUnits<'a> {
    ranges: NalUnitRanges<'a>,
}

impl<'a> Iterator for NalUnits<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        let data = self.ranges.data;
        self.ranges.next().map(|range| &data[range])
    }
}

#[derive(Debug, Clone)]
pub struct NalUnitRanges<'a> {
    data: &'a [u8],
    /// Where the next NAL unit starts (just after its start code).
    next: Option<usize>,
    keep_trailing_zeros: bool,
}

impl Iterator for NalUnitRanges<'_> {
    type Item = Range<usize>;

    fn next(&mut self) -> Option<Range<usize>> {
        loop {
            let start = self.next?;
            let (end, next) = match find_start_code(self.data, start) {
                Some(code) => (code.start, Some(code.end)),
                None => (self.data.len(), None),
            };
            self.next = next;
            let end = if self.keep_trailing_zeros {
                end
            } else {
                self.data[start..end]
                    .iter()
                    .rposition(|&b| b != 0)
                    .map_or(start, |last| start + last + 1)
            };
            if end > start {
                return Some(start..end);
            }
        }
    }
}

/// Where the NAL units of an Annex-B buffer lie, recorded by whoever wrote
/// its start codes (the demuxer, rewriting AVCC/HVCC length fields in
/// place) so that readers need not search the buffer for them. The ranges
/// are [`nal_unit_ranges`]'s: start codes and trailing zero bytes left
/// out, empty units skipped. Holds up to `CAPACITY` units inline (no
/// allocation per packet); a buffer with more has no index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NalIndex {
    units: [(u32, u32); NalIndex::CAPACITY],
    len: usize,
}

impl Default for NalIndex {
    fn default() -> Self {
        Self::new()
    }
}

impl NalIndex {
    pub const CAPACITY: usize = 16;

    pub fn new() -> Self {
        Self {
            units: [(0, 0); Self::CAPACITY],
            len: 0,
        }
    }

    /// Records the unit `data[start..end]` (its trailing zero bytes are
    /// dropped, an empty one skipped); false when the index is full or the
    /// range is not in `data`.
    pub fn push(&mut self, data: &[u8], start: usize, end: usize) -> bool {
        let Some(bytes) = data.get(start..end) else {
            return false;
        };
        let Some(last) = bytes.iter().rposition(|&b| b != 0) else {
            return true;
        };
        let (Ok(from), Ok(to)) = (u32::try_from(start), u32::try_from(start + last + 1)) else {
            return false;
        };
        let Some(slot) = self.units.get_mut(self.len) else {
            return false;
        };
        *slot = (from, to);
        self.len += 1;
        true
    }

    pub fn ranges(&self) -> impl Iterator<Item = Range<usize>> + '_ {
        self.units[..self.len]
            .iter()
            .map(|&(start, end)| start as usize..end as usize)
    }
}

/// The next `00 00 01` at or after `from`. Every access unit is scanned
/// whole on its way to the device: memchr's vectorised search costs a
/// fraction of a byte-by-byte loop.
fn find_start_code(data: &[u8], from: usize) -> Option<Range<usize>> {
    let at = from + START_CODE_FINDER.find(data.get(from..)?)?;
    Some(at..at + 3)
}

static START_CODE_FINDER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| memchr::memmem::Finder::new(&[0, 0, 1]));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_three_and_four_byte_start_codes() {
        let data = [
            0xff, 0, 0, 0, 1, 0x67, 1, 2, 0, 0, 1, 0x68, 3, 0, 0, 0, 0, 1, 0x65, 0, 0,
        ];
        let nals: Vec<&[u8]> = nal_units(&data).collect();
        assert_eq!(nals, vec![&[0x67, 1, 2][..], &[0x68, 3][..], &[0x65][..]]);
        let ranges: Vec<Range<usize>> = nal_unit_ranges(&data).collect();
        assert_eq!(ranges, vec![5..8, 11..13, 18..19]);
    }

    #[test]
    fn start_code_units_keep_their_zeros() {
        let data = [0xff, 0, 0, 1, 0xb5, 0, 0, 0, 0, 1, 0x01, 7, 0, 0, 1];
        let ranges: Vec<Range<usize>> = start_code_unit_ranges(&data).collect();
        assert_eq!(ranges, vec![4..7, 10..12]);
    }

    #[test]
    fn no_start_code_means_no_nal() {
        assert_eq!(nal_units(&[0x65, 1, 2, 3]).count(), 0);
        assert_eq!(nal_units(&[]).count(), 0);
        assert_eq!(nal_units(&[0, 0, 1]).count(), 0);
        assert_eq!(nal_units(&[0, 0, 1, 0, 0, 0, 1]).count(), 0);
    }

    #[test]
    fn units_are_slices_of_the_input() {
        let data = [0, 0, 1, 0x09, 0xf0, 0, 0, 0, 1, 0x41, 0x9a, 0, 0, 3, 1];
        for (range, nal) in nal_unit_ranges(&data).zip(nal_units(&data)) {
            assert!(std::ptr::eq(&data[range], nal));
        }
        // An emulation prevention sequence is no start code.
        assert_eq!(nal_units(&data).last(), Some(&[0x41, 0x9a, 0, 0, 3, 1][..]));
    }

    #[test]
    fn splits_what_containers_and_ffmpeg_write() {
        const SPS: &[u8] = &[0x67, 0x42, 0xc0, 0x1e, 0xaa];
        const PPS: &[u8] = &[0x68, 0xce, 0x3c, 0x80];
        const IDR: &[u8] = &[0x65, 0x88, 0x84, 0x00, 0x10];
        let data = [
            &[0u8, 0, 0, 1][..],
            SPS,
            &[0, 0, 1],
            PPS,
            &[0, 0, 0, 0, 1],
            IDR,
        ]
        .concat();
        let nals: Vec<&[u8]> = nal_units(&data).collect();
        assert_eq!(nals, vec![SPS, PPS, IDR]);
        assert_eq!(nal_units(&[5, 6, 7]).count(), 0);
        assert!(starts_with_start_code(&data));
        assert!(starts_with_start_code(&[0, 0, 1, 0x65]));
        assert!(!starts_with_start_code(&[0, 1, 0x65]));
        assert!(!starts_with_start_code(&[0, 0, 0, 0, 1]));
    }

    /// The obvious definition, for comparison: every `00 00 01` ends a unit.
    fn reference_split(data: &[u8]) -> Vec<&[u8]> {
        let starts: Vec<usize> = (0..data.len().saturating_sub(2))
            .filter(|&i| data[i..i + 3] == [0, 0, 1])
            .collect();
        let mut units = Vec::new();
        for (n, &at) in starts.iter().enumerate() {
            let end = starts.get(n + 1).copied().unwrap_or(data.len());
            let mut unit = &data[at + 3..end];
            while let [rest @ .., 0] = unit {
                unit = rest;
            }
            if !unit.is_empty() {
                units.push(unit);
            }
        }
        units
    }

    #[test]
    fn agrees_with_the_obvious_split_on_random_input() {
        let mut rng = crate::codec::bitstream::test_rng::Rng(0x2545_f491_4f6c_dd1d);
        for _ in 0..3000 {
            let len = rng.below(40) as usize;
            let data: Vec<u8> = (0..len)
                .map(|_| [0, 0, 1, 3, 0x65][rng.below(5) as usize])
                .collect();
            assert_eq!(
                nal_units(&data).collect::<Vec<_>>(),
                reference_split(&data),
                "{data:?}"
            );
        }
    }
}
