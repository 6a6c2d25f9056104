//! AV1 OBU splitting, OBU headers, sequence headers, frame headers (with
//! the reference slots' state carried from frame to frame: order hints,
//! sizes, loop filter deltas, segmentation, global motion, film grain) and
//! tile groups through `StreamParser` (traced, as the header test drives
//! it) on arbitrary bytes, then the same bytes as temporal units through
//! `Av1Decoder` (decode jobs, slots, display order): errors are fine,
//! panics are not. After an error the parser goes on one byte later, so
//! damaged streams keep their state.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reel::codec::av1::decoder::{Av1Decoder, Event};
use reel::codec::av1::{ParsedObu, StreamParser};

fuzz_target!(|data: &[u8]| {
    let mut parser = StreamParser::new();
    let mut rest = data;
    while !rest.is_empty() {
        match parser.parse_obu_traced(rest) {
            Ok((obu, parsed, trace)) => {
                assert!(!obu.data.is_empty() && obu.data.len() <= rest.len());
                assert!(trace.windows(2).all(|w| w[0].position <= w[1].position));
                let group = match parsed {
                    ParsedObu::Frame {
                        tile_group: Some(g),
                        ..
                    }
                    | ParsedObu::TileGroup(g) => Some(g),
                    _ => None,
                };
                for tile in group.iter().flat_map(|g| &g.tiles) {
                    assert!(tile.offset + tile.size <= obu.data.len());
                }
                rest = &rest[obu.data.len()..];
            }
            Err(_) => rest = &rest[1..],
        }
    }

    // The input as two temporal units, cut where its first byte says.
    let cut = data.first().map_or(0, |&b| usize::from(b) * data.len() / 256);
    let mut decoder: Av1Decoder<u32> = Av1Decoder::new();
    let mut next = 0;
    let mut decoded = Vec::new();
    for unit in [&data[..cut], &data[cut..]] {
        let Ok(events) = decoder.decode_temporal_unit(unit, || {
            next += 1;
            next
        }) else {
            continue;
        };
        for event in events {
            match event {
                Event::Decode(frame) => {
                    for g in &frame.tile_groups {
                        assert!(g.obu.end <= unit.len());
                    }
                    decoded.push(frame.picture);
                }
                Event::Show(picture) => assert!(decoded.contains(&picture)),
            }
        }
        for picture in decoder.references() {
            assert!(decoded.contains(&picture));
        }
    }
});
