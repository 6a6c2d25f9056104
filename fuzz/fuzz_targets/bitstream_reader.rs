//! The shared bit reader and Annex-B splitter on arbitrary bytes and read
//! sequences: no read may panic, a reader passing over emulation prevention
//! bytes must read exactly what a plain reader reads from the unescaped
//! bytes, and the splitter's units must be clean slices of the input.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reel::codec::bitstream::annexb::{nal_unit_ranges, nal_units};
use reel::codec::bitstream::rbsp::unescape;
use reel::codec::bitstream::{BitReader, ReadError};

/// One read chosen by `op`; every result as an i64 so both readers compare.
fn read(r: &mut BitReader, op: u8) -> Result<i64, ReadError> {
    let n = u32::from(op >> 4) * 3; // 0..=45: past every limit
    match op & 0x0f {
        0 => r.u(n, "u").map(i64::from),
        1 => r.flag("flag").map(i64::from),
        2 => r.ue("ue").map(i64::from),
        3 => r.ue_max("ue_max", n).map(i64::from),
        4 => r.se("se").map(i64::from),
        5 => r.se_range("se_range", -(n as i32), n as i32).map(i64::from),
        6 => r.le(n / 8, "le").map(i64::from),
        7 => r.leb128("leb128").map(i64::from),
        8 => r.su(n, "su").map(i64::from),
        9 => r.ns(n * 1000 + u32::from(op), "ns").map(i64::from),
        10 => r.uvlc("uvlc").map(i64::from),
        11 => r.sign_magnitude(n, "sign_magnitude"),
        12 => r.skip(n as usize * 5, "skip").map(|()| 0),
        13 => r.align_to_byte("align").map(|()| 0),
        14 => Ok(i64::from(r.more_rbsp_data())),
        _ => Ok(r.bits_left() as i64),
    }
}

fuzz_target!(|data: &[u8]| {
    let [split, rest @ ..] = data else {
        return;
    };
    let (ops, payload) = rest.split_at(usize::from(*split).min(rest.len()));

    let rbsp = unescape(payload);
    let mut escaped = BitReader::rbsp(payload);
    let mut plain = BitReader::new(&rbsp);
    escaped.enable_trace();
    for &op in ops {
        let (a, b) = (read(&mut escaped, op), read(&mut plain, op));
        assert_eq!(a, b, "op {op:#04x}");
        assert_eq!(escaped.position(), plain.position());
        assert_eq!(escaped.is_byte_aligned(), plain.is_byte_aligned());
        assert_eq!(
            escaped.escaped_position(),
            escaped.position() + 8 * escaped.emulation_prevention_bytes()
        );
        assert!(escaped.escaped_position() <= 8 * payload.len());
    }
    let _ = escaped.take_trace();

    let units: Vec<&[u8]> = nal_units(payload).collect();
    let ranges: Vec<_> = nal_unit_ranges(payload).collect();
    assert_eq!(units.len(), ranges.len());
    for (unit, range) in units.iter().zip(ranges) {
        assert_eq!(*unit, &payload[range]);
        assert!(unit.last().is_some_and(|&b| b != 0));
        assert!(!unit.windows(3).any(|w| w == [0, 0, 1]));
    }
});
