//! VP9 superframes (VP9 bitstream specification, Annex B): several frames in
//! one container packet (typically a hidden altref frame and the frame
//! shown after it), found by the index at the packet's end. A packet
//! without an index is one frame; a container that split superframes
//! already gives packets without one.

use std::ops::Range;

use super::Vp9Error;

/// The frames of `packet`, as byte ranges of it, in decode order. Index
/// entries of size 0 are left out (nothing to decode).
pub fn frames(packet: &[u8]) -> Result<Vec<Range<usize>>, Vp9Error> {
    let Some(index) = index(packet) else {
        let whole = 0..packet.len();
        return Ok(Vec::from([whole]));
    };
    let mut frames = Vec::with_capacity(index.sizes.len());
    let mut start = 0usize;
    for size in index.sizes {
        let end = start
            .checked_add(size)
            .filter(|&end| end <= index.start)
            .ok_or_else(|| {
                Vp9Error::Invalid(format!(
                    "superframe index: frames of {} bytes and more before an index at byte {}",
                    start.saturating_add(size),
                    index.start
                ))
            })?;
        if size > 0 {
            frames.push(start..end);
        }
        start = end;
    }
    Ok(frames)
}

struct Index {
    /// Where the index starts (the frames lie before it).
    start: usize,
    sizes: Vec<usize>,
}

/// The superframe index at the end of `packet`: a marker byte `110sssff`
/// (`ss + 1` bytes per size, `fff + 1` frames) at both ends of the index.
fn index(packet: &[u8]) -> Option<Index> {
    let &marker = packet.last()?;
    if marker & 0xe0 != 0xc0 {
        return None;
    }
    let frames = usize::from(marker & 0x7) + 1;
    let bytes = usize::from((marker >> 3) & 0x3) + 1;
    let len = 2 + bytes * frames;
    let start = packet.len().checked_sub(len)?;
    if packet[start] != marker {
        return None;
    }
    let sizes = packet[start + 1..packet.len() - 1]
        .chunks_exact(bytes)
        .map(|le| {
            le.iter()
                .rev()
                .fold(0usize, |size, &b| (size << 8) | usize::from(b))
        })
        .collect();
    Some(Index { start, sizes })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(frame: Range<usize>) -> Vec<Range<usize>> {
        vec![frame]
    }

    #[test]
    fn a_packet_without_index_is_one_frame() {
        assert_eq!(frames(&[0x82, 0x49, 0x83]).unwrap(), one(0..3));
        assert_eq!(frames(&[]).unwrap(), one(0..0));
        // A marker-like last byte without its twin at the index start.
        assert_eq!(frames(&[1, 2, 3, 0xc1]).unwrap(), one(0..4));
    }

    #[test]
    fn index_sizes_are_little_endian_and_frames_follow_each_other() {
        // Two frames of 3 and 258 bytes, 2 bytes per size.
        let mut packet = vec![0xaa; 3];
        packet.extend(vec![0xbb; 258]);
        packet.extend([0xc9, 3, 0, 2, 1, 0xc9]);
        assert_eq!(frames(&packet).unwrap(), [0..3, 3..261]);
    }

    #[test]
    fn sizes_past_the_index_are_an_error_and_empty_frames_skipped() {
        let mut packet = vec![0; 4];
        packet.extend([0xc1, 4, 9, 0xc1]);
        assert!(frames(&packet).is_err());
        let mut packet = vec![0; 4];
        packet.extend([0xc1, 0, 4, 0xc1]);
        assert_eq!(frames(&packet).unwrap(), one(0..4));
    }
}
