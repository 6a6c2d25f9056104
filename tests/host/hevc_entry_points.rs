//! The entry point offsets reel puts in `V4L2_CID_STATELESS_HEVC_ENTRY_POINT_OFFSETS`
//! (`entry_point_offset_minus1 + 1` of each slice segment, by
//! `v4l2::hevc::controls::entry_point_offsets`) equal FFmpeg's
//! trace_headers `entry_point_offset_minus1` + 1, slice segment by slice
//! segment, on every generated HEVC clip (WPP with more than 32 entry
//! points per slice included).

use crate::support;

use reel::codec::hevc::decoder::HevcDecoder;
use reel::v4l2::hevc::controls::entry_point_offsets;
use support::h264::{annex_b_with_trace_of, work_dir, Codec, HEVC_CLIPS};
use support::media;

/// FFmpeg's offsets (minus-1 values + 1) of each slice segment, in
/// decoding order.
fn ffmpeg_offsets(clip: &str) -> Vec<Vec<u32>> {
    let traced = annex_b_with_trace_of(
        Codec::Hevc,
        &media::dir().join(clip),
        &work_dir("hevc-entry-points"),
    );
    traced
        .trace
        .iter()
        .filter(|nal| {
            nal.iter()
                .any(|(_, name, _)| name == "first_slice_segment_in_pic_flag")
        })
        .map(|nal| {
            nal.iter()
                .filter(|(_, name, _)| name == "entry_point_offset_minus1")
                .map(|&(_, _, value)| u32::try_from(value + 1).expect("an offset"))
                .collect()
        })
        .collect()
}

/// The offsets the controls of each slice segment carry, in decoding order.
fn reel_offsets(clip: &str) -> Vec<Vec<u32>> {
    let mut demuxer =
        reel::media::Demuxer::open(&media::dir().join(clip)).unwrap_or_else(|e| panic!("{e}"));
    let mut decoder = HevcDecoder::new();
    let mut offsets = Vec::new();
    let mut index = 0;
    while let Some(packet) = demuxer.next_packet().unwrap_or_else(|e| panic!("{e}")) {
        let jobs = decoder
            .decode_access_unit(&packet.data, index)
            .unwrap_or_else(|e| panic!("{clip}: packet {index}: {e}"));
        index += 1;
        for job in &jobs {
            offsets.extend(
                job.slices
                    .iter()
                    .map(|s| entry_point_offsets(std::slice::from_ref(s))),
            );
        }
    }
    offsets
}

#[test]
fn entry_point_offsets_match_trace_headers() {
    let mut most = 0;
    for clip in HEVC_CLIPS {
        let ours = reel_offsets(clip);
        let theirs = ffmpeg_offsets(clip);
        assert_eq!(ours.len(), theirs.len(), "{clip}: slice segments");
        for (i, (a, b)) in ours.iter().zip(&theirs).enumerate() {
            assert_eq!(a, b, "{clip}: slice segment {i}");
        }
        most = most.max(ours.iter().map(Vec::len).max().unwrap_or(0));
    }
    // hevc_tall_wpp: one entry point per CTU row after the first.
    assert!(most > 32, "no clip with more than 32 entry points ({most})");
}
