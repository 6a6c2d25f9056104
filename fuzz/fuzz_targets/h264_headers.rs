//! NAL splitting, reading through emulation prevention and the SPS / PPS /
//! slice header parsers on arbitrary bytes: errors are fine, panics are not.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reel::codec::bitstream::annexb::nal_units;
use reel::codec::h264::trace::HeaderTracer;

fuzz_target!(|data: &[u8]| {
    let mut tracer = HeaderTracer::new();
    for nal in nal_units(data) {
        let _ = tracer.trace_nal(nal);
    }
});
