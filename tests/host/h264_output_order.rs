//! The DPB's output order equals the presentation order libavcodec gives
//! (ffprobe's decoded frames, by pts) for every generated H.264 clip, with
//! the same frame count; and every decode job is consistent with the
//! stream (controls, references present in the DPB array).

use crate::support;

use std::collections::HashSet;

use reel::codec::h264::H264Decoder;
use reel::v4l2::h264::controls::{PictureControls, SliceControls};
use support::h264::{access_units, annex_b_with_trace, work_dir, H264_CLIPS};
use support::media;
use v4l2r::bindings as b;

fn check_clip(clip: &str) -> usize {
    let path = media::dir().join(clip);
    let annexb = annex_b_with_trace(&path, &work_dir("order"));
    let units = access_units(&annexb.stream);
    let packet_pts = media::ffprobe::<i64>(&path, "packet=pts");
    let frame_pts = media::ffprobe::<i64>(&path, "frame=pts");
    assert_eq!(
        units.len(),
        packet_pts.len(),
        "{clip}: access units vs packets"
    );

    let mut decoder = H264Decoder::new();
    let mut shown: Vec<u64> = Vec::new();
    let mut jobs = 0;
    for (i, unit) in units.iter().enumerate() {
        let decoded = decoder
            .decode_access_unit(unit, i as u64)
            .unwrap_or_else(|e| panic!("{clip}: access unit {i}: {e}"));
        assert_eq!(
            decoded.len(),
            1,
            "{clip}: access unit {i} holds one picture"
        );
        for job in decoded {
            jobs += 1;
            // A second field (PAFF: its own access unit) decodes under its
            // first field's timestamp, into the same picture.
            let second_field = job.structure.is_field() && job.timestamp_ns + 1 == i as u64;
            assert!(
                job.timestamp_ns == i as u64 || second_field,
                "{clip}: access unit {i} decodes under timestamp {}",
                job.timestamp_ns
            );
            assert!(!job.slices.is_empty());
            check_job_references(clip, &job);
            shown.extend(&job.output);
        }
    }
    shown.extend(decoder.flush().output);
    let unique: HashSet<u64> = shown.iter().copied().collect();
    assert_eq!(
        unique.len(),
        shown.len(),
        "{clip}: a picture was output twice"
    );
    let ours: Vec<i64> = shown.iter().map(|&i| packet_pts[i as usize]).collect();
    assert_eq!(
        ours.len(),
        frame_pts.len(),
        "{clip}: frame count differs from libavcodec's"
    );
    assert_eq!(
        ours, frame_pts,
        "{clip}: output order differs from libavcodec's"
    );
    jobs
}

/// Every list entry a slice uses points at a valid DPB entry of its job.
fn check_job_references(clip: &str, job: &reel::codec::h264::DecodeJob) {
    let dpb = &PictureControls::of(job).decode_params.dpb;
    for slice in &job.slices {
        let s = SliceControls::of(slice);
        let (n0, n1) = slice.header.num_ref_idx_active();
        for (list, n) in [(&s.params.ref_pic_list0, n0), (&s.params.ref_pic_list1, n1)] {
            for r in &list[..n] {
                assert!(
                    (r.index as usize) < 16,
                    "{clip}: ts {} slice references nothing ({r:?})",
                    job.timestamp_ns
                );
                let e = &dpb[r.index as usize];
                assert!(e.flags & b::V4L2_H264_DPB_ENTRY_FLAG_ACTIVE != 0);
                // A second field may reference its own first field.
                assert!(
                    e.reference_ts < job.timestamp_ns
                        || (job.structure.is_field() && e.reference_ts == job.timestamp_ns),
                    "{clip}: reference from the future"
                );
            }
            for r in &list[n..] {
                assert_eq!((r.index, r.fields), (0xff, 0xff));
            }
        }
    }
}

#[test]
fn output_order_matches_libavcodec() {
    for clip in H264_CLIPS {
        let n = check_clip(clip);
        eprintln!("{clip}: {n} pictures in libavcodec's order");
    }
}

/// After a reset (a seek), pictures before the next keyframe are skipped and
/// everything from the IDR on is output exactly as from a fresh start.
#[test]
fn reset_restarts_at_the_next_idr() {
    let clip = "h264_main_bframes.mkv";
    let path = media::dir().join(clip);
    let annexb = annex_b_with_trace(&path, &work_dir("reset"));
    let units = access_units(&annexb.stream);
    let packet_pts = media::ffprobe::<i64>(&path, "packet=pts");
    let frame_pts = media::ffprobe::<i64>(&path, "frame=pts");
    let is_idr =
        |u: &Vec<u8>| reel::codec::bitstream::annexb::nal_units(u).any(|n| n[0] & 0x1f == 5);
    let second_idr = (1..units.len())
        .find(|&i| is_idr(&units[i]))
        .expect("a second IDR");

    let mut decoder = H264Decoder::new();
    for (i, unit) in units.iter().enumerate().take(10) {
        decoder.decode_access_unit(unit, i as u64).expect("decodes");
    }
    let freed = decoder.reset();
    assert!(!freed.is_empty(), "the DPB held pictures");
    let mut shown = Vec::new();
    for (i, unit) in units.iter().enumerate().skip(3) {
        let jobs = decoder.decode_access_unit(unit, i as u64).expect("decodes");
        if i < second_idr {
            assert!(
                jobs.is_empty(),
                "picture {i} before the keyframe must be skipped"
            );
        }
        for job in jobs {
            assert!(!job.missing_references, "picture {i}");
            shown.extend(job.output);
        }
    }
    shown.extend(decoder.flush().output);
    let ours: Vec<i64> = shown.iter().map(|&i| packet_pts[i as usize]).collect();
    let idr_pts = packet_pts[second_idr];
    let expected: Vec<i64> = frame_pts
        .iter()
        .copied()
        .filter(|&p| p >= idr_pts)
        .collect();
    assert_eq!(ours, expected);
}
