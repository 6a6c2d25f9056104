//! Every syntax element reel's HEVC parsers read equals what FFmpeg's
//! trace_headers reads from the same bytes: name, bit position and value,
//! for every NAL unit of every generated HEVC clip (VPS, SPS, PPS, AUD and
//! slice segment headers; the header alone for other NAL types). Each clip
//! is also checked to have the feature it was made for.

use crate::support;

use reel::codec::bitstream::annexb::nal_units;
use reel::codec::hevc::nal::unescape;
use reel::codec::hevc::trace::HeaderTracer;
use support::h264::{
    annex_b_with_trace_of, strip_indices, work_dir, AnnexB, Codec, Element, HEVC_CLIPS,
};
use support::media;

/// Elements FFmpeg reads that belong to no header (trailing bits).
fn is_padding(name: &str) -> bool {
    matches!(name, "rbsp_stop_one_bit" | "rbsp_alignment_zero_bit")
}

/// NAL types whose payload both sides parse: slice segments, VPS, SPS,
/// PPS, AUD. Others: the two header bytes only.
fn parsed_payload(nal_type: u8) -> bool {
    matches!(nal_type, 0..=9 | 16..=21 | 32..=35)
}

fn trace(clip: &str) -> AnnexB {
    let work = work_dir("hevc-headers");
    annex_b_with_trace_of(Codec::Hevc, &media::dir().join(clip), &work)
}

fn check_clip(clip: &str, annexb: &AnnexB) -> usize {
    let nals: Vec<&[u8]> = nal_units(&annexb.stream).collect();
    assert_eq!(
        nals.len(),
        annexb.trace.len(),
        "{clip}: NAL count differs from FFmpeg's trace"
    );
    let mut tracer = HeaderTracer::new();
    let mut elements = 0;
    for (i, (nal, expected)) in nals.iter().zip(&annexb.trace).enumerate() {
        let nal_type = (nal[0] >> 1) & 0x3f;
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
            expected.iter().take(4).cloned().collect()
        };
        assert_eq!(ours, expected, "{clip}: NAL {i} (type {nal_type})");
        elements += ours.len();
        if parsed_payload(nal_type) && nal_type <= 21 {
            check_slice_data_offsets(clip, i, nal, &expected, &tracer);
        }
    }
    elements
}

/// The header's size and the entry points against the NAL unit: the slice
/// data starts right after FFmpeg's last byte_alignment() bit, and the
/// substreams the entry points delimit fit in what follows.
fn check_slice_data_offsets(
    clip: &str,
    i: usize,
    nal: &[u8],
    expected: &[Element],
    tracer: &HeaderTracer,
) {
    let header = tracer.last_slice().expect("a slice was parsed");
    let (last_bit, _, _) = expected.last().expect("elements");
    assert_eq!(header.header_bits, last_bit + 1, "{clip}: NAL {i}");
    let offset = header.slice_data_byte_offset;
    assert_eq!(
        unescape(&nal[..offset]).len() * 8,
        header.header_bits,
        "{clip}: NAL {i}: data_byte_offset"
    );
    assert_eq!(
        header.entry_point_offset_minus1.len(),
        header.num_entry_point_offsets as usize
    );
    let substreams: usize = header
        .entry_point_offset_minus1
        .iter()
        .map(|&o| o as usize + 1)
        .sum();
    assert!(
        substreams < nal.len() - offset,
        "{clip}: NAL {i}: entry points beyond the slice data"
    );
}

/// Every value FFmpeg traced for `name` in the clip.
fn values(annexb: &AnnexB, name: &str) -> Vec<i64> {
    annexb
        .trace
        .iter()
        .flatten()
        .filter(|(_, n, _)| n == name)
        .map(|(_, _, v)| *v)
        .collect()
}

/// What each clip was made to contain, read from FFmpeg's trace.
fn assert_feature(clip: &str, a: &AnnexB) {
    let max = |name| values(a, name).into_iter().max().unwrap_or(-1);
    let has = |name, value| values(a, name).contains(&value);
    match clip {
        "hevc_main.mkv" => assert!(has("general_profile_idc", 1)),
        "hevc_main10.mp4" => {
            assert!(has("general_profile_idc", 2) && has("bit_depth_luma_minus8", 2))
        }
        "hevc_wpp.mkv" => {
            assert!(has("entropy_coding_sync_enabled_flag", 1));
            assert!(max("num_entry_point_offsets") >= 14);
        }
        "hevc_slices.mkv" => {
            assert!(max("slice_segment_address") > 0);
            assert!(values(a, "first_slice_segment_in_pic_flag").contains(&0));
        }
        "hevc_bpyramid.mkv" => {
            assert!(has("slice_type", 0) && max("sps_max_num_reorder_pics") >= 2);
        }
        "hevc_scaling_default.mkv" => {
            assert!(has("scaling_list_enabled_flag", 1));
            assert!(has("sps_scaling_list_data_present_flag", 0));
        }
        "hevc_scaling_explicit.mkv" => {
            assert!(has("sps_scaling_list_data_present_flag", 1));
            assert!(max("scaling_list_pred_matrix_id_delta") > 0);
            assert!(has("scaling_list_pred_matrix_id_delta", 0));
            assert!(has("scaling_list_dc_coef_minus8", 12));
        }
        "hevc_weighted.mkv" => {
            assert!(has("weighted_pred_flag", 1) && has("weighted_bipred_flag", 1));
            assert!(!values(a, "luma_log2_weight_denom").is_empty());
            assert!(has("luma_weight_l0_flag", 1));
        }
        "hevc_open_gop.ts" => {
            assert!(has("nal_unit_type", 21), "no CRA");
            assert!(
                has("nal_unit_type", 8) || has("nal_unit_type", 9),
                "no RASL"
            );
        }
        "hevc_tall_wpp.mkv" => assert!(max("num_entry_point_offsets") > 32),
        "hevc_resolution_change.ts" => {
            let mut widths = values(a, "pic_width_in_luma_samples");
            widths.sort();
            widths.dedup();
            assert_eq!(widths, vec![320, 480]);
            assert!(has("conformance_window_flag", 1));
        }
        _ => panic!("{clip}: no feature check"),
    }
}

#[test]
fn syntax_elements_match_ffmpeg_trace_headers() {
    let mut total = 0;
    for clip in HEVC_CLIPS {
        let annexb = trace(clip);
        assert_feature(clip, &annexb);
        let n = check_clip(clip, &annexb);
        eprintln!("{clip}: {n} syntax elements equal");
        assert!(n > 100, "{clip}: suspiciously few elements compared");
        total += n;
    }
    eprintln!("total: {total} syntax elements equal FFmpeg's");
}
