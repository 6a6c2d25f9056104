//! Fuzzes the AVCC/HVCC to Annex-B converter with arbitrary configuration
//! records and packets: it must never panic, what it writes must account
//! for every byte of the input, and its in-place rewrite, where it takes a
//! packet, must give the same bytes, and the NAL units it records must be
//! the ones a start-code search finds.
//!
//! Runs on the stable toolchain through its nightly switch:
//!
//!     cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run annexb -- -max_total_time=300
#![no_main]

use libfuzzer_sys::fuzz_target;
use reel::codec::bitstream::annexb::{nal_unit_ranges, nal_units};
use reel::media::avcc::{AnnexBConverter, NalCodec};

fuzz_target!(|data: &[u8]| {
    // Layout: [flags][extradata length][extradata...][packet...]
    let [flags, len, rest @ ..] = data else {
        return;
    };
    let codec = if flags & 1 == 0 {
        NalCodec::H264
    } else {
        NalCodec::Hevc
    };
    let keyframe = flags & 2 != 0;
    let split = (*len as usize).min(rest.len());
    let (extradata, packet) = rest.split_at(split);

    let Ok(conv) = AnnexBConverter::new(codec, extradata) else {
        return;
    };
    // Parameter sets are Annex-B NAL units taken from the record.
    assert!(conv.parameter_sets().is_empty() || conv.parameter_sets().starts_with(&[0, 0, 0, 1]));
    let _ = nal_units(conv.parameter_sets()).count();

    let mut out = Vec::new();
    let result = conv.convert(packet, keyframe, &mut out);
    // Rewritten in place, the same bytes; refused, untouched.
    let mut in_place = packet.to_vec();
    if let Some(done) = conv.convert_in_place(&mut in_place, keyframe) {
        assert!(result.is_ok());
        assert_eq!(in_place, out);
        if let Some(index) = done.nal_units {
            // The units recorded lie in order inside the packet; where none
            // holds a start code of its own (damage only), they are the
            // ones a search finds.
            let units: Vec<_> = index.ranges().collect();
            assert!(units.windows(2).all(|w| w[0].end <= w[1].start));
            assert!(units.iter().all(|r| r.start < r.end && r.end <= in_place.len()));
            let clean = units
                .iter()
                .all(|r| !in_place[r.clone()].windows(3).any(|w| w == [0, 0, 1]));
            if clean {
                assert_eq!(units, nal_unit_ranges(&in_place).collect::<Vec<_>>());
            }
        }
    } else {
        assert_eq!(in_place, packet);
    }
    let Some(length_size) = conv.length_size() else {
        // Annex-B input passes through, possibly after the parameter sets.
        assert!(result.is_ok());
        assert!(out.ends_with(packet));
        let head = out.len() - packet.len();
        assert!(head == 0 || head == conv.parameter_sets().len());
        return;
    };
    assert!((1..=4).contains(&length_size));
    // Walk the packet the slow way: every complete NAL unit before the
    // first damaged one is in the output, with a 4-byte start code.
    let mut offset = 0;
    let mut nals = 0usize;
    let mut payload = 0usize;
    let mut damaged = false;
    while offset < packet.len() {
        let Some(field) = packet.get(offset..offset + length_size) else {
            damaged = true;
            break;
        };
        let len = field.iter().fold(0usize, |a, &b| a << 8 | b as usize);
        if packet.len() - offset - length_size < len {
            damaged = true;
            break;
        }
        nals += 1;
        payload += len;
        offset += length_size + len;
    }
    let annexb_like = packet.starts_with(&[0, 0, 1]) || packet.starts_with(&[0, 0, 0, 1]);
    if damaged && annexb_like {
        // Taken as Annex-B stored under an avcC/hvcC record: passed through.
        assert!(result.is_ok());
        assert!(out.ends_with(packet));
        return;
    }
    assert_eq!(result.is_err(), damaged);
    let inserted = out.len() - (4 * nals + payload);
    assert!(
        inserted == 0 || (keyframe && inserted == conv.parameter_sets().len()),
        "{inserted} unexplained bytes"
    );
    assert_eq!(&out[..inserted], &conv.parameter_sets()[..inserted]);
});
