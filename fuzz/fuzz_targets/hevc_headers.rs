//! HEVC NAL splitting, emulation prevention removal, NAL headers and the
//! VPS / SPS / PPS / AUD / slice segment header parsers (through
//! `HeaderTracer`, which keeps parameter sets and the previous slice
//! segment across NAL units) on arbitrary bytes: errors are fine, panics
//! are not.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reel::codec::bitstream::annexb::nal_units;
use reel::codec::hevc::trace::HeaderTracer;

fuzz_target!(|data: &[u8]| {
    let mut tracer = HeaderTracer::new();
    for nal in nal_units(data) {
        let _ = tracer.trace_nal(nal);
    }
});
