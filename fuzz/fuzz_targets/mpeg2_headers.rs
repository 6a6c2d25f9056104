//! MPEG-2 start code splitting and every header parser (sequence header
//! and extensions, group of pictures, picture header and coding extension,
//! slice headers, through `HeaderTracer`, which keeps the sequence and
//! picture state across units), then the same bytes gathered into pictures
//! by `PictureParser`: errors are fine, panics are not; every slice range
//! lies inside the input.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reel::codec::bitstream::annexb::start_code_unit_ranges;
use reel::codec::mpeg2::picture::PictureParser;
use reel::codec::mpeg2::trace::HeaderTracer;

fuzz_target!(|data: &[u8]| {
    let mut tracer = HeaderTracer::new();
    for range in start_code_unit_ranges(data) {
        let _ = tracer.trace_unit(&data[range]);
    }
    if let Ok(pictures) = PictureParser::new().parse_packet(data) {
        for picture in pictures {
            assert!(!picture.slices.is_empty());
            for slice in picture.slices {
                assert!(slice.start < slice.end && slice.end <= data.len());
            }
        }
    }
});
