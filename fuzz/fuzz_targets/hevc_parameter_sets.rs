//! Each HEVC parameter set parser alone on an arbitrary RBSP (no start
//! codes, no NAL header): VPS, SPS, scaling_list_data(), and a PPS and a
//! slice segment header over an SPS/PPS the same bytes produced when they
//! parse. Errors are fine, panics are not.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reel::codec::bitstream::BitReader;
use reel::codec::hevc::nal::Nal;
use reel::codec::hevc::scaling::ScalingList;
use reel::codec::hevc::{Pps, SliceHeader, Sps, Vps};

fuzz_target!(|data: &[u8]| {
    let _ = Vps::parse(&mut BitReader::new(data));
    let _ = ScalingList::parse(&mut BitReader::new(data));
    let mut r = BitReader::new(data);
    let Ok(sps) = Sps::parse(&mut r) else {
        return;
    };
    // What follows the SPS (past its stop bit) is read as a PPS, then as a slice segment of
    // every VCL type.
    let rest = &data[(r.position() / 8 + 1).min(data.len())..];
    let mut r = BitReader::new(rest);
    let Ok(pps) = Pps::parse(&mut r, |_| Some(&sps)) else {
        return;
    };
    let slice = &rest[(r.position() / 8 + 1).min(rest.len())..];
    for nal_unit_type in [1u8, 8, 19, 21] {
        let mut bytes = vec![nal_unit_type << 1, 1];
        bytes.extend_from_slice(slice);
        let Ok(nal) = Nal::parse(&bytes) else {
            continue;
        };
        let mut r = BitReader::new(&bytes);
        let _ = r.skip(16, "nal_unit_header");
        let _ = SliceHeader::parse(&mut r, &nal, |_| Ok((&pps, &sps)), None);
    }
});
