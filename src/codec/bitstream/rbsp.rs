//! Emulation prevention (H.264 7.4.1, HEVC 7.4.2): inside a NAL unit, an
//! `03` byte follows every `00 00` that the payload (the RBSP) would have
//! followed by `00`..`03`, so that no start code appears in it.

/// Whether `data[i]` is an emulation prevention byte: an `03` right after
/// two zero bytes. Zero bytes are never themselves emulation prevention, so
/// the two bytes before decide alone.
pub fn is_emulation_prevention_byte(data: &[u8], i: usize) -> bool {
    i >= 2 && data.get(i) == Some(&3) && data[i - 1] == 0 && data[i - 2] == 0
}

/// The RBSP of a NAL unit as a new buffer: every emulation prevention byte
/// removed. Parsers read through them with [`super::BitReader::rbsp`]
/// instead; this is for callers that need the bytes themselves.
pub fn unescape(nal: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(nal.len());
    out.extend(
        nal.iter()
            .enumerate()
            .filter(|&(i, _)| !is_emulation_prevention_byte(nal, i))
            .map(|(_, &b)| b),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removes_emulation_prevention() {
        assert_eq!(
            unescape(&[0, 0, 3, 1, 0, 0, 3, 0, 3]),
            vec![0, 0, 1, 0, 0, 0, 3]
        );
        assert_eq!(unescape(&[0, 0, 3]), vec![0, 0]);
        // An 03 after an emulation prevention byte is data.
        assert_eq!(unescape(&[0, 0, 3, 3]), vec![0, 0, 3]);
        assert_eq!(unescape(&[0, 0, 0, 3, 0, 0, 3]), vec![0, 0, 0, 0, 0]);
    }
}
