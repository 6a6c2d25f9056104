//! The MPEG-2 V4L2 glue (`v4l2::mpeg2::Mpeg2Codec`) on input cut into
//! packets before each picture start code: sequences, quantiser matrices,
//! references, field pairing and output order on any bytes. Errors are
//! fine, panics are not; every request's bitstream lies inside its packet,
//! field requests pair up, and the pictures shown were decoded.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reel::v4l2::codec::{BitstreamPart, StatelessCodec, Timestamps};
use reel::v4l2::mpeg2::Mpeg2Codec;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, data)) = data.split_first() else {
        return;
    };
    let mut codec = Mpeg2Codec::new(mode & 1 == 1);
    let mut timestamps = Timestamps::new();
    let mut starts: Vec<usize> = data
        .windows(4)
        .enumerate()
        .filter(|(_, w)| *w == [0, 0, 1, 0])
        .map(|(i, _)| i)
        .collect();
    starts.push(data.len());
    let mut from = 0;
    let mut decoded = std::collections::HashSet::new();
    for (n, &to) in starts.iter().enumerate() {
        let packet = &data[from..to];
        from = to;
        timestamps.start_packet();
        if let Ok(requests) = codec.decode(packet, &mut timestamps) {
            for request in &requests {
                decoded.insert(request.timestamp_ns);
                for part in &request.bitstream {
                    if let BitstreamPart::Packet(range) = part {
                        assert!(range.start < range.end && range.end <= packet.len());
                    }
                }
            }
        }
        if mode & 2 == 2 && n % 7 == 3 {
            codec.reset();
        }
        for picture in codec.take_output(false) {
            assert!(decoded.contains(&picture.timestamp_ns));
        }
        for reference in codec.references() {
            assert!(decoded.contains(&reference));
        }
    }
    for picture in codec.take_output(true) {
        assert!(decoded.contains(&picture.timestamp_ns));
    }
});
