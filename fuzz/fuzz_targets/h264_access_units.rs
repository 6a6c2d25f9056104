//! The whole access-unit path (parsing, POC, DPB, reference lists, control
//! filling) on arbitrary bytes cut into access units at AUDs.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reel::codec::h264::H264Decoder;

fuzz_target!(|data: &[u8]| {
    let mut decoder = H264Decoder::new();
    // Access units end at each `00 00 01 09` (an AUD), as demuxers cut them.
    let mut start = 0;
    let mut ts = 0u64;
    let mut i = 0;
    while i + 4 <= data.len() {
        if data[i..i + 4] == [0, 0, 1, 9] && i > start {
            ts += 1;
            let _ = decoder.decode_access_unit(&data[start..i], ts);
            start = i;
        }
        i += 1;
    }
    let _ = decoder.decode_access_unit(&data[start..], ts + 1);
    let _ = decoder.flush();
});
