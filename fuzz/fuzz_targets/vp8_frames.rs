//! VP8 streams of arbitrary bytes: the input is cut into frames by a
//! 2-byte length before each, every frame's header is parsed with the state
//! the frames before it left (probabilities, segmentation, loop filter
//! deltas) and the V4L2 glue turns it into its request. Errors are fine,
//! panics are not; a parsed header's partitions must lie inside its frame
//! and a request carries the whole frame.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reel::codec::vp8::{parse_frame, StreamState};
use reel::v4l2::codec::{BitstreamPart, StatelessCodec, Timestamps};
use reel::v4l2::vp8::Vp8Codec;

fuzz_target!(|data: &[u8]| {
    let mut state = StreamState::default();
    let mut codec = Vp8Codec::new();
    let mut timestamps = Timestamps::new();
    let mut rest = data;
    while rest.len() >= 2 {
        let len = usize::from(u16::from_le_bytes([rest[0], rest[1]])).min(rest.len() - 2);
        let frame = &rest[2..2 + len];
        rest = &rest[2 + len..];
        if let Ok(header) = parse_frame(frame, &mut state) {
            let first_end = header.tag.first_part_offset() + header.tag.first_part_size as usize;
            let table = 3 * (header.dct_partition_sizes.len() - 1);
            let total: usize = header.dct_partition_sizes.iter().map(|&s| s as usize).sum();
            assert_eq!(first_end + table + total, frame.len());
            assert_eq!(header.dct_partition_sizes.len(), usize::from(header.dct_partitions));
            assert!(header.coder_state.range >= 128);
        }
        timestamps.start_packet();
        if let Ok(requests) = codec.decode(frame, &mut timestamps) {
            for request in requests {
                assert_eq!(request.bitstream, vec![BitstreamPart::Packet(0..frame.len())]);
            }
        }
        let _ = codec.take_output(false);
        let _ = codec.references();
    }
    codec.reset();
});
