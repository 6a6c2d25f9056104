//! Every syntax element reel's H.264 parsers read equals what FFmpeg's
//! trace_headers reads from the same bytes: name, bit position and value,
//! for every NAL unit of every generated H.264 clip.

use crate::support;

use reel::codec::bitstream::annexb::nal_units;
use reel::codec::h264::trace::HeaderTracer;
use support::h264::{annex_b_with_trace, strip_indices, work_dir, Element, H264_CLIPS};
use support::media;

/// Elements FFmpeg reads that belong to no header (trailing bits, the CABAC
/// alignment at the start of slice_data()).
fn is_padding(name: &str) -> bool {
    matches!(
        name,
        "rbsp_stop_one_bit" | "rbsp_alignment_zero_bit" | "cabac_alignment_one_bit"
    )
}

/// NAL types whose payload both sides parse (others: header only).
fn parsed_payload(nal_type: u8) -> bool {
    matches!(nal_type, 1 | 5 | 7 | 8 | 9)
}

fn check_clip(clip: &str) -> usize {
    let dir = media::dir();
    let work = work_dir("headers");
    let annexb = annex_b_with_trace(&dir.join(clip), &work);
    let nals: Vec<&[u8]> = nal_units(&annexb.stream).collect();
    assert_eq!(
        nals.len(),
        annexb.trace.len(),
        "{clip}: NAL count differs from FFmpeg's trace"
    );
    let mut tracer = HeaderTracer::new();
    let mut elements = 0;
    for (i, (nal, expected)) in nals.iter().zip(&annexb.trace).enumerate() {
        let nal_type = nal[0] & 0x1f;
        let ours = tracer
            .trace_nal(nal)
            .unwrap_or_else(|e| panic!("{clip}: NAL {i} (type {nal_type}): {e}"));
        let ours: Vec<Element> = ours
            .into_iter()
            .map(|t| (t.position, strip_indices(t.name), t.value))
            .collect();
        let expected: Vec<Element> = if parsed_payload(nal_type) {
            expected
                .iter()
                .filter(|(_, n, _)| !is_padding(n))
                .cloned()
                .collect()
        } else {
            expected.iter().take(3).cloned().collect()
        };
        assert_eq!(ours, expected, "{clip}: NAL {i} (type {nal_type})");
        elements += ours.len();
    }
    elements
}

#[test]
fn syntax_elements_match_ffmpeg_trace_headers() {
    let mut total = 0;
    for clip in H264_CLIPS {
        let n = check_clip(clip);
        eprintln!("{clip}: {n} syntax elements equal");
        assert!(n > 100, "{clip}: suspiciously few elements compared");
        total += n;
    }
    eprintln!("total: {total} syntax elements equal FFmpeg's");
}
