//! The VP8/VP9 boolean decoder on arbitrary bytes and read sequences: no
//! read may panic, the range stays normalised, and the decoder never
//! claims more input than it has.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reel::codec::bitstream::BoolDecoder;

fuzz_target!(|data: &[u8]| {
    // Layout: [ops length][ops...][tree length][tree...][coded data...]
    let [ops_len, rest @ ..] = data else {
        return;
    };
    let (ops, rest) = rest.split_at(usize::from(*ops_len).min(rest.len()));
    let [tree_len, rest @ ..] = rest else {
        return;
    };
    let (tree, coded) = rest.split_at(usize::from(*tree_len % 32).min(rest.len()));
    let tree: Vec<i8> = tree.iter().map(|&b| b as i8).collect();

    let start = if ops.first().is_some_and(|op| op & 1 == 1) {
        BoolDecoder::vp9(coded)
    } else {
        BoolDecoder::new(coded)
    };
    let Ok(mut d) = start else {
        return;
    };
    for &op in ops {
        let result = match op % 5 {
            0 => d.read_bool(op).map(u32::from),
            1 => d.read_literal(u32::from(op >> 3)),
            2 => d.read_signed(u32::from(op >> 3)).map(|v| v as u32),
            3 => d.read_tree(&tree, ops).map(u32::from),
            _ => d.read_flag().map(u32::from),
        };
        if result.is_ok() {
            assert!((128..=255).contains(&d.range()));
        }
        assert!(d.bytes_consumed() <= coded.len());
        assert!(d.bits_past_end() <= 8 + 7);
    }
    let _ = d.exit();
});
