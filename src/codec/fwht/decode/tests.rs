use md5::{Digest, Md5};

use super::*;
use crate::codec::bitstream::test_rng::Rng;
use crate::codec::fwht::{split_frame, tests::header_bytes, FrameHeader, HEADER_LEN};

/// Two frames (I, P) of vicodec's encoding of a 648x372 clip, and the md5
/// of each frame of vicodec's own decode of them (tests/data/fwht/README.md).
const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/fwht/i_p_648x372.fwht"
);
const REFERENCE_MD5: [&str; 2] = [
    "648ebf1f31c818142b9fd28d14ab77aa",
    "c418d961529626811d4b4469e5a79721",
];

fn md5_hex(bytes: &[u8]) -> String {
    Md5::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Decodes a stream frame by frame, each P frame from the frame before.
fn decode_stream(stream: &[u8]) -> Vec<Result<Picture, DecodeError>> {
    let mut offset = 0;
    let mut last: Option<Picture> = None;
    let mut out = Vec::new();
    while let Ok((header, payload)) = split_frame(&stream[offset..]) {
        let decoded = decode_frame(
            &header,
            &stream[offset + payload.start..offset + payload.end],
            last.as_ref(),
        );
        last = decoded.as_ref().ok().cloned();
        out.push(decoded);
        offset += payload.end;
    }
    out
}

#[test]
fn decodes_as_vicodec_does() {
    let stream = std::fs::read(FIXTURE).unwrap();
    let pictures = decode_stream(&stream);
    assert_eq!(pictures.len(), REFERENCE_MD5.len());
    for (n, (picture, md5)) in pictures.iter().zip(REFERENCE_MD5).enumerate() {
        let picture = picture.as_ref().unwrap();
        let packed = picture.packed();
        assert_eq!(packed.len(), 648 * 372 + 2 * 324 * 186, "frame {n}");
        assert_eq!(md5_hex(&packed), md5, "frame {n}");
    }
}

#[test]
fn a_p_frame_needs_its_reference() {
    let stream = std::fs::read(FIXTURE).unwrap();
    let (first, payload) = split_frame(&stream).unwrap();
    let second = &stream[payload.end..];
    let (header, p_payload) = split_frame(second).unwrap();
    assert!(first.is_intra() && !header.is_intra());
    assert_eq!(
        decode_frame(&header, &second[p_payload.clone()], None),
        Err(DecodeError::NoReference)
    );
    let other = Picture {
        width: 640,
        height: 360,
        chroma_divisors: (2, 2),
        planes: Vec::new(),
    };
    assert_eq!(
        decode_frame(&header, &second[p_payload], Some(&other)),
        Err(DecodeError::ReferenceSize {
            width: 648,
            height: 372
        })
    );
}

#[test]
fn uncompressed_planes_are_copied() {
    // 16x8 4:2:0: a 16x8 luma plane, 8x4 chroma planes (rounded to 8x8).
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let raw: Vec<u8> = (0..16 * 8 + 2 * 8 * 8).map(|_| rng.next() as u8).collect();
    let mut bytes = header_bytes(16, 8, true, raw.len() as u32);
    let flag_word = u32::from_be_bytes(bytes[20..24].try_into().unwrap())
        | flags::LUMA_IS_UNCOMPRESSED
        | flags::CB_IS_UNCOMPRESSED
        | flags::CR_IS_UNCOMPRESSED;
    bytes[20..24].copy_from_slice(&flag_word.to_be_bytes());
    let header = FrameHeader::parse(&bytes).unwrap();
    let picture = decode_frame(&header, &raw, None).unwrap();
    assert_eq!(picture.planes[0].data, raw[..128]);
    assert_eq!(picture.planes[1].data, raw[128..192]);
    assert_eq!(picture.planes[2].data, raw[192..]);
    // The visible chroma is 8x4 of each 8x8 plane.
    let packed = picture.packed();
    assert_eq!(&packed[128..160], &raw[128..160]);
    assert_eq!(&packed[160..], &raw[192..224]);
    assert_eq!(
        decode_frame(&header, &raw[..raw.len() - 1], None),
        Err(DecodeError::Truncated {
            plane: 2,
            len: raw.len() - 1
        })
    );
}

#[test]
fn damaged_and_truncated_frames_are_errors_not_panics() {
    let stream = std::fs::read(FIXTURE).unwrap();
    let (header, payload) = split_frame(&stream).unwrap();
    let payload = &stream[payload];
    let reference = decode_frame(&header, payload, None).unwrap();
    // Every cut of the I frame's payload falls short of some plane.
    for cut in (0..payload.len()).step_by(997) {
        assert!(matches!(
            decode_frame(&header, &payload[..cut], None),
            Err(DecodeError::Truncated { .. })
        ));
    }
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let p_header = FrameHeader::parse(&header_bytes(648, 372, false, 0)).unwrap();
    for round in 0..200 {
        let len = rng.below(payload.len() as u64 + 1) as usize;
        let mut bytes: Vec<u8> = if round % 2 == 0 {
            (0..len).map(|_| rng.next() as u8).collect()
        } else {
            payload[..len].to_vec()
        };
        // Flip a few bytes of real data too.
        for _ in 0..8 {
            if !bytes.is_empty() {
                let at = rng.below(bytes.len() as u64) as usize;
                bytes[at] ^= rng.next() as u8;
            }
        }
        for (header, reference) in [(&header, None), (&p_header, Some(&reference))] {
            if let Ok(picture) = decode_frame(header, &bytes, reference) {
                assert_eq!(picture.packed().len(), 648 * 372 + 2 * 324 * 186);
            }
        }
    }
    // A whole header of random bytes is refused before decoding.
    let mut junk = stream[..HEADER_LEN].to_vec();
    junk[20..24].copy_from_slice(&0u32.to_be_bytes());
    assert!(FrameHeader::parse(&junk).is_err());
}
