use super::*;
use crate::codec::bitstream::bool_encoder::BoolEncoder;
use crate::codec::bitstream::test_rng::Rng;

#[test]
fn hand_computed_decisions() {
    // value 0x40 = 64, range 255.
    // p 200: split = 1 + (254 * 200 >> 8) = 199; 64 < 199: 0, range 199.
    // p 10: split = 1 + (198 * 10 >> 8) = 8; 64 >= 8: 1, range 191, value 56.
    // p 250: split = 1 + (190 * 250 >> 8) = 186; 56 < 186: 0, range 186.
    let mut d = BoolDecoder::new(&[0x40]).unwrap();
    assert!(!d.read_bool(200).unwrap());
    assert!(d.read_bool(10).unwrap());
    assert_eq!((d.value(), d.range()), (56, 191));
    assert!(!d.read_bool(250).unwrap());
    assert_eq!((d.value(), d.range(), d.position()), (56, 186, 8));
}

#[test]
fn hand_computed_literal_and_shifts() {
    // value 0xa0 = 160. p 128: split 128, 160 >= 128: 1, range 127,
    // value 32; one shift: range 254, value 64. Next: split = 1 +
    // (253 * 128 >> 8) = 127; 64 < 127: 0, range 127; shift: range 254,
    // value 128. L(2) = 0b10.
    let mut d = BoolDecoder::new(&[0xa0, 0x00]).unwrap();
    assert_eq!(d.read_literal(2).unwrap(), 2);
    assert_eq!((d.value(), d.range(), d.position()), (128, 254, 10));
    assert_eq!(d.bytes_consumed(), 2);
}

#[test]
fn vp9_marker_and_padding() {
    assert_eq!(BoolDecoder::vp9(&[0x80]).unwrap_err(), BoolError::Marker);
    assert_eq!(BoolDecoder::new(&[]).unwrap_err(), BoolError::Empty);
    // Marker 0 leaves range 128 and no shift: the second byte is all
    // padding.
    let d = BoolDecoder::vp9(&[0x00, 0x00]).unwrap();
    assert_eq!(d.position(), 8);
    assert_eq!(d.exit(), Ok(()));
    let d = BoolDecoder::vp9(&[0x00, 0x01]).unwrap();
    assert_eq!(d.exit(), Err(BoolError::Padding));
    // A partly read byte: only its unread bits are padding.
    let mut e = BoolEncoder::new();
    e.put(false, 128);
    e.put(true, 128);
    let mut data = e.finish();
    let mut d = BoolDecoder::vp9(&data).unwrap();
    assert!(d.read_flag().unwrap());
    let read = d.position();
    assert!(read % 8 != 0);
    assert_eq!(d.clone().exit(), Ok(()));
    let last = data.len() - 1;
    data[last] |= 1;
    let mut d = BoolDecoder::vp9(&data).unwrap();
    assert!(d.read_flag().unwrap());
    assert_eq!(d.exit(), Err(BoolError::Padding));
}

#[test]
fn short_input_is_an_error_not_a_panic() {
    let mut d = BoolDecoder::new(&[0x00]).unwrap();
    let err = (0..10_000)
        .map(|_| d.read_bool(128))
        .find_map(Result::err)
        .expect("reading far past the end fails");
    assert!(matches!(err, BoolError::PastEnd { bits: 8 }));
    assert_eq!(d.read_literal(33), Err(BoolError::TooWide { bits: 33 }));
    // Nonsense input (a window above the range) decodes without panicking.
    let mut d = BoolDecoder::new(&[0xff; 64]).unwrap();
    for p in 0..=255u8 {
        let _ = d.read_bool(p);
    }
}

#[test]
fn round_trips_random_bools_and_probabilities() {
    let mut rng = Rng(0x0123_4567_89ab_cdef);
    for round in 0..200 {
        let count = rng.below(3000) as usize;
        let symbols: Vec<(bool, u8)> = (0..count)
            .map(|_| {
                let p = rng.next() as u8;
                // Draw the bool with roughly the probability it is coded with.
                let bit = (rng.next() as u8) >= p;
                (bit, p)
            })
            .collect();
        let mut e = BoolEncoder::new();
        e.put(false, 128); // VP9's marker.
        for &(bit, p) in &symbols {
            e.put(bit, p);
        }
        let data = e.finish();
        let mut d = BoolDecoder::vp9(&data).unwrap();
        for (i, &(bit, p)) in symbols.iter().enumerate() {
            assert_eq!(d.read_bool(p), Ok(bit), "round {round}, bool {i}");
        }
        assert_eq!(d.bits_past_end(), 0, "round {round}");
        assert_eq!(d.exit(), Ok(()), "round {round}");
    }
}

#[test]
fn literals_signed_values_and_trees_round_trip() {
    // A VP8-style tree: 0, else (1, else (2 or 3)).
    const TREE: [i8; 6] = [0, 2, -1, 4, -2, -3];
    let probs = [30u8, 200, 90];
    let mut e = BoolEncoder::new();
    e.literal(7, 0x5a);
    e.literal(32, 0xdead_beef);
    e.literal(4, 9);
    e.put(true, 128); // negative
    e.literal(6, 33);
    e.put(false, 128);
    for leaf in [3u8, 0, 2, 1] {
        let path: &[bool] = match leaf {
            0 => &[false],
            1 => &[true, false],
            2 => &[true, true, false],
            _ => &[true, true, true],
        };
        for (node, &bit) in path.iter().enumerate() {
            e.put(bit, probs[node]);
        }
    }
    let data = e.finish();
    let mut d = BoolDecoder::new(&data).unwrap();
    assert_eq!(d.read_literal(7).unwrap(), 0x5a);
    assert_eq!(d.read_literal(32).unwrap(), 0xdead_beef);
    assert_eq!(d.read_signed(4).unwrap(), -9);
    assert_eq!(d.read_signed(6).unwrap(), 33);
    for leaf in [3u8, 0, 2, 1] {
        assert_eq!(d.read_tree(&TREE, &probs), Ok(leaf));
    }
}

#[test]
fn malformed_trees_are_errors() {
    let data = [0xff; 8];
    let mut d = BoolDecoder::new(&data).unwrap();
    // Node 2 points back to itself.
    assert_eq!(
        d.read_tree(&[2, 2, 2, 2], &[1, 1]),
        Err(BoolError::BadTree { index: 2, len: 4 })
    );
    let mut d = BoolDecoder::new(&data).unwrap();
    assert!(matches!(
        d.read_tree(&[8, 8], &[128]),
        Err(BoolError::BadTree { index: 8, len: 2 })
    ));
    // No probability for node 2.
    let mut d = BoolDecoder::new(&data).unwrap();
    assert_eq!(
        d.read_tree(&[2, 2, 0, 0], &[128]),
        Err(BoolError::BadTree { index: 2, len: 4 })
    );
}
