//! VP9 packets of arbitrary bytes, each prefixed by its 16-bit
//! little-endian length: superframe splitting, both headers of every frame
//! (through `HeaderTracer`, which keeps the persistent state and reference
//! sizes across frames) and the V4L2 glue (`v4l2::vp9::Vp9Codec`) turning
//! each packet into requests. Errors are fine, panics are not; every
//! request's bitstream must be one of the packet's frames.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reel::codec::vp9::superframe;
use reel::codec::vp9::trace::HeaderTracer;
use reel::v4l2::codec::{BitstreamPart, StatelessCodec, Timestamps};
use reel::v4l2::vp9::Vp9Codec;

fuzz_target!(|data: &[u8]| {
    let mut tracer = HeaderTracer::new();
    let mut codec = Vp9Codec::new((352, 288));
    let mut timestamps = Timestamps::new();
    let mut rest = data;
    while rest.len() >= 2 {
        let len = usize::from(u16::from_le_bytes([rest[0], rest[1]])).min(rest.len() - 2);
        let packet = &rest[2..2 + len];
        rest = &rest[2 + len..];
        let frames = superframe::frames(packet);
        for frame in frames.iter().flatten() {
            assert!(frame.start <= frame.end && frame.end <= packet.len());
            let _ = tracer.trace_frame(&packet[frame.clone()]);
        }
        timestamps.start_packet();
        if let Ok(requests) = codec.decode(packet, &mut timestamps) {
            let frames = frames.expect("a packet the codec took splits");
            for request in requests {
                assert_eq!(request.bitstream.len(), 1);
                let BitstreamPart::Packet(range) = &request.bitstream[0] else {
                    panic!("a frame's bitstream is not a piece of its packet");
                };
                assert!(frames.contains(range));
            }
        }
        let references = codec.references();
        for picture in codec.take_output(false) {
            assert!(picture.visible.0 > 0 && picture.visible.1 > 0);
            let _ = references.contains(&picture.timestamp_ns);
        }
    }
});
