//! AV1 OBU splitting, OBU headers, sequence headers, frame headers (with
//! the reference slots' state carried from frame to frame: order hints,
//! sizes, loop filter deltas, segmentation, global motion, film grain) and
//! tile groups through `StreamParser` (traced, as the header test drives
//! it) on arbitrary bytes, then the same bytes as temporal units through
//! `Av1Decoder` (decode jobs, slots, display order) and through the V4L2
//! glue `Av1Codec` (requests with their controls: tile group entries,
//! global motion validity, film grain): errors are fine, panics are not. After an error the parser goes on one byte later, so
//! damaged streams keep their state.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reel::codec::av1::decoder::{Av1Decoder, Event};
use reel::codec::av1::{ParsedObu, StreamParser};
use reel::v4l2::av1::Av1Codec;
use reel::v4l2::codec::{Bitstream, BitstreamPart, StatelessCodec, Timestamps};

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
    let cut = data
        .first()
        .map_or(0, |&b| usize::from(b) * data.len() / 256);
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

    // The same units through the V4L2 glue: every request's bitstream lies
    // in its unit, every picture shown or kept was decoded by a request.
    let mut codec = Av1Codec::new((64, 64), true);
    let mut timestamps = Timestamps::new();
    let mut requested = Vec::new();
    for unit in [&data[..cut], &data[cut..]] {
        timestamps.start_packet();
        if let Ok(requests) = codec.decode(unit, &mut timestamps) {
            for request in requests {
                for part in &request.bitstream {
                    if let BitstreamPart::Packet(range) = part {
                        assert!(range.start <= range.end && range.end <= unit.len());
                    }
                }
                // Tiles are never empty: neither is the OUTPUT buffer.
                assert!(!Bitstream::new(unit, &request.bitstream).is_empty());
                requested.push(request.timestamp_ns);
            }
        }
        for picture in codec.take_output(false) {
            assert!(requested.contains(&picture.timestamp_ns));
        }
        for picture in codec.references() {
            assert!(requested.contains(&picture));
        }
    }
});
