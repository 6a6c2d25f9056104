//! FWHT streams of arbitrary bytes: frame headers are read (resynchronising
//! on the magic after damage), the reference state follows them, and the
//! V4L2 glue turns each frame into its request, and the software decoder
//! decodes it. Errors are fine, panics are not; every request's bitstream
//! must lie inside its frame.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reel::codec::fwht::decode::{decode_frame, Picture};
use reel::codec::fwht::{find_magic, split_frame, Decision, References};
use reel::v4l2::codec::{BitstreamPart, StatelessCodec, Timestamps};
use reel::v4l2::fwht::FwhtCodec;

fuzz_target!(|data: &[u8]| {
    let mut refs = References::new();
    let mut codec = FwhtCodec::new();
    let mut timestamps = Timestamps::new();
    let mut offset = 0;
    let mut picture = 0u64;
    let mut last: Option<Picture> = None;
    while offset < data.len() {
        let frame = &data[offset..];
        timestamps.start_packet();
        let requests = codec.decode(frame, &mut timestamps);
        match split_frame(frame) {
            Ok((header, payload)) => {
                assert!(payload.end <= frame.len());
                last = decode_frame(&header, &frame[payload.clone()], last.as_ref()).ok();
                match refs.decide(&header) {
                    Decision::Skip => {}
                    Decision::Intra | Decision::Inter { .. } => {
                        picture += 1;
                        refs.decoded(&header, picture);
                    }
                }
                for request in requests.into_iter().flatten() {
                    for part in &request.bitstream {
                        if let BitstreamPart::Packet(range) = part {
                            assert!(range.start <= range.end && range.end <= payload.end);
                        }
                    }
                }
                let _ = codec.take_output(false);
                offset += payload.end.max(1);
            }
            Err(_) => {
                assert!(requests.is_err());
                refs.reset();
                last = None;
                match find_magic(data, offset + 1) {
                    Some(next) => offset = next,
                    None => break,
                }
            }
        }
    }
    let _ = codec.references();
    codec.reset();
});
