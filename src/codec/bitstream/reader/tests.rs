use super::*;
use crate::codec::bitstream::rbsp::unescape;
use crate::codec::bitstream::test_rng::Rng;

#[test]
fn reads_fixed_and_golomb_codes() {
    // 101 | 1 (ue 0) | 010 (ue 1) | 011 (se -1) | 00100 (se 2)
    // = 1011 0100 1100 100x
    let data = [0b1011_0100, 0b1100_1000];
    let mut r = BitReader::new(&data);
    assert_eq!(r.u(3, "a").unwrap(), 5);
    assert_eq!(r.ue("b").unwrap(), 0);
    assert_eq!(r.ue("c").unwrap(), 1);
    assert_eq!(r.se("d").unwrap(), -1);
    assert_eq!(r.se("e").unwrap(), 2);
    assert_eq!(r.position(), 15);
}

#[test]
fn truncation_and_range_are_errors() {
    let data = [0u8, 0, 0, 0, 0];
    let mut r = BitReader::new(&data);
    assert_eq!(r.ue("x"), Err(ReadError::GolombTooLong("x")));
    let mut r = BitReader::new(&[0b0000_0001]);
    assert_eq!(r.ue("y"), Err(ReadError::Truncated("y")));
    let mut r = BitReader::new(&[0b0010_0000]);
    assert!(matches!(
        r.ue_max("z", 2),
        Err(ReadError::OutOfRange { value: 3, .. })
    ));
}

#[test]
fn writer_round_trips() {
    let mut w = BitWriter::new();
    w.u(5, 17);
    w.ue(300);
    w.se(-77);
    w.trailing();
    let mut r = BitReader::new(&w.bytes);
    assert_eq!(r.u(5, "a").unwrap(), 17);
    assert_eq!(r.ue("b").unwrap(), 300);
    assert_eq!(r.se("c").unwrap(), -77);
    assert!(!r.more_rbsp_data());
}

#[test]
fn more_rbsp_data_stops_at_the_stop_bit() {
    let data = [0b1010_0000, 0];
    let mut r = BitReader::new(&data);
    assert!(r.more_rbsp_data());
    r.u(2, "a").unwrap();
    assert!(!r.more_rbsp_data());
}

#[test]
fn largest_golomb_code_fits() {
    // 32 zeros, 1, 32 ones: 2^33 - 2, beyond u32: out of range, no panic.
    let mut data = vec![0u8; 4];
    data.push(0b1111_1111);
    data.extend([0xff; 4]);
    let mut r = BitReader::new(&data);
    assert!(matches!(r.ue("big"), Err(ReadError::OutOfRange { .. })));
}

#[test]
fn reads_wider_than_the_result_are_errors() {
    let data = [0xff; 16];
    let mut r = BitReader::new(&data);
    let wide = |bits, max| ReadError::TooWide {
        name: "w",
        bits,
        max,
    };
    assert_eq!(r.u(33, "w"), Err(wide(33, 32)));
    assert_eq!(r.su(33, "w"), Err(wide(33, 32)));
    assert_eq!(r.sign_magnitude(33, "w"), Err(wide(33, 32)));
    assert_eq!(r.le(5, "w"), Err(wide(40, 32)));
    assert_eq!(r.position(), 0, "a refused read consumes nothing");
    assert_eq!(r.u(32, "x").unwrap(), u32::MAX);
    assert_eq!(r.u(0, "x").unwrap(), 0);
}

#[test]
fn le_is_little_endian_bytes() {
    // A VP8 frame tag: 3 bytes, least significant first.
    let data = [0x50, 0x42, 0x00, 0x34, 0x12, 0x78, 0x56, 0x34, 0x12];
    let mut r = BitReader::new(&data);
    assert_eq!(r.le(3, "frame_tag").unwrap(), 0x4250);
    assert_eq!(r.le(0, "none").unwrap(), 0);
    assert_eq!(r.le(2, "size").unwrap(), 0x1234);
    assert_eq!(r.le(4, "size").unwrap(), 0x1234_5678);
    assert_eq!(r.le(1, "past"), Err(ReadError::Truncated("past")));
    // Not byte aligned: le(n) is n f(8) reads wherever the reader is.
    let mut r = BitReader::new(&[0b1000_0000, 0b1000_0000]);
    r.u(1, "a").unwrap();
    assert_eq!(r.le(1, "b").unwrap(), 1);
}

#[test]
fn leb128_vectors() {
    let read = |bytes: &[u8]| {
        let mut r = BitReader::new(bytes);
        r.leb128("obu_size").map(|v| (v, r.position() / 8))
    };
    assert_eq!(read(&[0x00]), Ok((0, 1)));
    assert_eq!(read(&[0x7f, 0xff]), Ok((127, 1)));
    assert_eq!(read(&[0x80, 0x01]), Ok((128, 2)));
    // 624485 = 0x26 << 14 | 0x0e << 7 | 0x65.
    assert_eq!(read(&[0xe5, 0x8e, 0x26]), Ok((624_485, 3)));
    assert_eq!(read(&[0xff, 0xff, 0xff, 0xff, 0x0f]), Ok((u32::MAX, 5)));
    // Padded to 8 bytes, as an encoder may write a size it patches later.
    assert_eq!(
        read(&[0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00]),
        Ok((1, 8))
    );
    assert!(matches!(
        read(&[0xff, 0xff, 0xff, 0xff, 0x1f]),
        Err(ReadError::OutOfRange {
            value: 0x1_ffff_ffff,
            ..
        })
    ));
    assert_eq!(read(&[0x80; 9]), Err(ReadError::Leb128TooLong("obu_size")));
    let mut r = BitReader::new(&[0x80, 0x80]);
    assert_eq!(r.leb128("obu_size"), Err(ReadError::Truncated("obu_size")));
    assert_eq!(r.position(), 0, "a failed read consumes nothing");
}

#[test]
fn su_vectors() {
    // 1111 | 1000 | 0111 | 1 | 0 | then 32 bits 0x80000000.
    let data = [0b1111_1000, 0b0111_1010, 0, 0, 0, 0];
    let mut r = BitReader::new(&data);
    assert_eq!(r.su(4, "a").unwrap(), -1);
    assert_eq!(r.su(4, "b").unwrap(), -8);
    assert_eq!(r.su(4, "c").unwrap(), 7);
    assert_eq!(r.su(1, "d").unwrap(), -1);
    assert_eq!(r.su(1, "e").unwrap(), 0);
    assert_eq!(r.su(0, "f").unwrap(), 0);
    assert_eq!(r.su(2, "g").unwrap(), -2);
    assert_eq!(r.su(32, "h").unwrap(), 0);
    let mut r = BitReader::new(&[0x80, 0, 0, 0]);
    assert_eq!(r.su(32, "i").unwrap(), i32::MIN);
}

#[test]
fn ns_vectors() {
    // ns(5): w = 3, m = 3: 0..=2 in 2 bits (00 01 10), 3 and 4 in 3 bits
    // (110 111). 000110110111 = 0x1b 0x7.
    let data = [0x1b, 0x70];
    let mut r = BitReader::new(&data);
    let values: Vec<u32> = (0..5).map(|_| r.ns(5, "v").unwrap()).collect();
    assert_eq!(values, [0, 1, 2, 3, 4]);
    assert_eq!(r.position(), 12);
    // ns(1) has one value and no bits; ns(8) is a plain 3-bit read.
    let mut r = BitReader::new(&[0b1010_0000]);
    assert_eq!(r.ns(1, "one").unwrap(), 0);
    assert_eq!(r.ns(8, "eight").unwrap(), 5);
    assert_eq!(r.position(), 3);
    assert!(matches!(r.ns(0, "zero"), Err(ReadError::OutOfRange { .. })));
    // The widest: ns(2^32 - 1) reads 31 bits, then one more.
    let mut r = BitReader::new(&[0xff; 4]);
    assert_eq!(r.ns(u32::MAX, "max").unwrap(), u32::MAX - 1);
    assert_eq!(r.position(), 32);
    // Cut inside the extra bit: nothing consumed.
    let mut r = BitReader::new(&[0b0000_0011]);
    r.skip(6, "pad").unwrap();
    assert_eq!(r.ns(5, "v"), Err(ReadError::Truncated("v")));
    assert_eq!(r.position(), 6);
}

#[test]
fn uvlc_vectors() {
    // 1 | 010 | 011 | 00100
    let mut r = BitReader::new(&[0b1010_0110, 0b0100_0000]);
    assert_eq!(r.uvlc("a").unwrap(), 0);
    assert_eq!(r.uvlc("b").unwrap(), 1);
    assert_eq!(r.uvlc("c").unwrap(), 2);
    assert_eq!(r.uvlc("d").unwrap(), 3);
    // 31 zeros, 1, 31 ones: 2^31 - 1 + 2^31 - 1.
    let mut w = BitWriter::new();
    w.u(31, 0);
    w.u(1, 1);
    w.u(31, u32::MAX >> 1);
    let mut r = BitReader::new(&w.bytes);
    assert_eq!(r.uvlc("e").unwrap(), u32::MAX - 1);
    // 40 zeros then 1: the maximum, no value bits read.
    let mut w = BitWriter::new();
    w.u(20, 0);
    w.u(20, 0);
    w.u(2, 0b11);
    let mut r = BitReader::new(&w.bytes);
    assert_eq!(r.uvlc("f").unwrap(), u32::MAX);
    assert_eq!(r.position(), 41);
    let mut r = BitReader::new(&[0, 0]);
    assert_eq!(r.uvlc("g"), Err(ReadError::Truncated("g")));
    assert_eq!(r.position(), 0);
}

#[test]
fn rbsp_reader_passes_over_emulation_prevention() {
    let nal = [0x00, 0x00, 0x03, 0x01, 0x00, 0x00, 0x03, 0x03];
    let mut r = BitReader::rbsp(&nal);
    assert_eq!(r.u(16, "a").unwrap(), 0);
    // The escape byte is passed over only when a read reaches it.
    assert_eq!(
        (r.emulation_prevention_bytes(), r.escaped_position()),
        (0, 16)
    );
    assert_eq!(r.u(8, "b").unwrap(), 1);
    assert_eq!((r.position(), r.escaped_position()), (24, 32));
    assert_eq!(r.emulation_prevention_bytes(), 1);
    assert_eq!(r.bits_left(), 24);
    assert_eq!(r.u(24, "c").unwrap(), 3);
    assert_eq!(r.emulation_prevention_bytes(), 2);
    assert_eq!(r.u(1, "d"), Err(ReadError::Truncated("d")));
}

#[test]
fn more_rbsp_data_ignores_a_final_escape() {
    // cabac_zero_word at the end: 80 00 00 03.
    let nal = [0x25, 0x80, 0x00, 0x00, 0x03];
    let mut r = BitReader::rbsp(&nal);
    r.u(8, "x").unwrap();
    assert!(!r.more_rbsp_data());
    // The next bit is the stop bit, behind an escape not yet passed.
    let nal = [0x00, 0x00, 0x03, 0x80];
    let mut r = BitReader::rbsp(&nal);
    r.u(16, "x").unwrap();
    assert!(!r.more_rbsp_data());
}

#[test]
fn rbsp_reader_matches_reading_the_unescaped_bytes() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut reads, mut escapes) = (0, 0);
    for round in 0..2000 {
        // Mostly 00 and 03 so that escapes are frequent.
        let len = rng.below(24) as usize;
        let nal: Vec<u8> = (0..len)
            .map(|_| match rng.below(4) {
                0 | 1 => 0,
                2 => 3,
                _ => rng.next() as u8,
            })
            .collect();
        let rbsp = unescape(&nal);
        let mut escaped = BitReader::rbsp(&nal);
        let mut plain = BitReader::new(&rbsp);
        loop {
            assert_eq!(escaped.bits_left(), plain.bits_left(), "round {round}");
            assert_eq!(
                escaped.more_rbsp_data(),
                plain.more_rbsp_data(),
                "round {round}"
            );
            assert_eq!(
                escaped.escaped_position(),
                escaped.position() + 8 * escaped.emulation_prevention_bytes()
            );
            let (a, b) = match rng.below(4) {
                0 => {
                    let n = rng.below(34) as u32;
                    (
                        escaped.u(n, "u").map(i64::from),
                        plain.u(n, "u").map(i64::from),
                    )
                }
                1 => (
                    escaped.ue("ue").map(i64::from),
                    plain.ue("ue").map(i64::from),
                ),
                2 => {
                    let n = rng.below(20) as usize;
                    (
                        escaped.skip(n, "s").map(|()| 0),
                        plain.skip(n, "s").map(|()| 0),
                    )
                }
                _ => (
                    escaped.leb128("l").map(i64::from),
                    plain.leb128("l").map(i64::from),
                ),
            };
            assert_eq!(a, b, "round {round}");
            assert_eq!(escaped.position(), plain.position(), "round {round}");
            if a.is_err() && plain.bits_left() == 0 {
                break;
            }
            if a.is_err() {
                // Finish with single bits so every round reaches the end.
                while plain.u(1, "bit").is_ok() {
                    assert_eq!(escaped.u(1, "bit"), Ok(plain_last(&rbsp, plain.position())));
                }
                assert!(escaped.u(1, "bit").is_err());
                break;
            }
            reads += 1;
        }
        escapes += escaped.emulation_prevention_bytes();
    }
    // The rounds did read, and through escapes.
    assert!(
        reads > 2000 && escapes > 1000,
        "{reads} reads, {escapes} escapes"
    );
}

/// The bit just before `position` in `data`.
fn plain_last(data: &[u8], position: usize) -> u32 {
    let at = position - 1;
    u32::from(data[at / 8] >> (7 - at % 8)) & 1
}

#[test]
fn compound_records_one_element_and_fails_whole() {
    let mut r = BitReader::new(&[0b1101_0000]);
    r.enable_trace();
    r.u(1, "first").unwrap();
    let unary = |r: &mut BitReader| -> Result<i64, ReadError> {
        let mut n = 0;
        while r.flag("part")? {
            n += 1;
        }
        Ok(n)
    };
    assert_eq!(r.compound("ones", unary), Ok(1));
    assert_eq!(r.position(), 3);
    let trace = r.take_trace();
    let names: Vec<_> = trace
        .iter()
        .map(|t| (t.position, t.name, t.value))
        .collect();
    assert_eq!(names, vec![(0, "first", 1), (1, "ones", 1)]);
    // A read that runs off the end consumes nothing.
    let mut r = BitReader::new(&[0xff]);
    assert!(r.compound("ones", unary).is_err());
    assert_eq!(r.position(), 0);
}

/// Reads taken in one load (eight bytes ahead) against the same reads bit
/// by bit from the bytes.
#[test]
fn whole_word_reads_match_bit_by_bit_reads() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut checked = 0;
    for round in 0..2000 {
        let len = 8 + rng.below(40) as usize;
        // Runs of zeros give long exp-Golomb codes.
        let data: Vec<u8> = (0..len)
            .map(|_| match rng.below(3) {
                0 => 0,
                1 => rng.next() as u8 & 0x0f,
                _ => rng.next() as u8,
            })
            .collect();
        let bit = |at: usize| u64::from(data[at / 8] >> (7 - at % 8)) & 1;
        let naive_bits = |at: usize, n: usize| (at..at + n).fold(0u64, |v, i| v << 1 | bit(i));
        let mut r = BitReader::new(&data);
        while r.bits_left() >= 64 + 32 {
            let at = r.position();
            let zeros = (at..).take_while(|&i| bit(i) == 0).count();
            // Codes of 32 zeros and more are errors (tested above).
            if rng.below(2) == 0 || zeros > 31 {
                let n = 1 + rng.below(32) as u32;
                assert_eq!(
                    u64::from(r.u(n, "u").unwrap()),
                    naive_bits(at, n as usize),
                    "round {round}"
                );
                assert_eq!(r.position(), at + n as usize);
            } else {
                let want = (1u64 << zeros) - 1 + naive_bits(at + zeros + 1, zeros);
                assert_eq!(u64::from(r.ue("ue").unwrap()), want, "round {round}");
                assert_eq!(r.position(), at + 2 * zeros + 1);
            }
            checked += 1;
        }
    }
    assert!(checked > 5000, "{checked} reads");
}
