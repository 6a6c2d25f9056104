//! The checks against GStreamer's oracle (`support::oracle`), the same for
//! every row that has one: the normalised visl traces frame by frame, the
//! OUTPUT buffers' bytes, and the frame-based decodes' requests.

use crate::boot::{self, SAVE_DIR};
use crate::failures::check_each;
use crate::row_runs::{bits_run, frame_run, trace_run};
use crate::rows::{BufferCount, Codec, Oracle, Row, ROWS};
use crate::support::media;
use crate::support::oracle::{self, OracleClip};
use crate::support::reel_runs;
use crate::support::visl_bitstream;
use crate::support::visl_trace::{self, FrameRecord};
use crate::{h264, mpeg2, vp8};

/// Every clip GStreamer decodes whole has one row, of its file; every
/// clip it decodes in parts has a row of the whole.
#[test]
fn table_covers_every_oracle_clip() {
    for clip in oracle::CLIPS {
        let name = clip.part_of.unwrap_or(clip.name);
        let rows: Vec<&Row> = ROWS.iter().filter(|r| r.name == name).collect();
        assert_eq!(rows.len(), 1, "{name}: rows of the table");
        let expected = if clip.part_of.is_some() {
            Oracle::Parts
        } else {
            assert_eq!(rows[0].file, clip.file, "{name}: the row's file");
            Oracle::Whole
        };
        assert_eq!(rows[0].oracle, expected, "{name}: the row's oracle");
    }
    for row in ROWS {
        assert_eq!(
            ROWS.iter().filter(|r| r.name == row.name).count(),
            1,
            "{}: one row per name",
            row.name
        );
    }
}

/// The table's frame counts are FFmpeg's: the clips are what it says.
#[test]
fn every_row_has_ffmpegs_frame_count() {
    check_each("frame counts", ROWS, |row| {
        assert_eq!(media::frame_count(&row.path()), row.frames, "shown frames");
    });
}

/// reel's trace of a row, normalised (saved under target/guest-codecs/).
fn reel_frames(name: &str) -> Vec<FrameRecord> {
    reel_runs::reel_frames(boot::result(), name, SAVE_DIR)
}

fn oracle_frames(clip: &OracleClip) -> Vec<FrameRecord> {
    oracle::oracle_frames(clip).unwrap_or_else(|e| panic!("{e}"))
}

/// Panics with the differences between GStreamer's frames and reel's.
#[track_caller]
fn assert_same_frames(clip: &str, oracle: &[FrameRecord], reel: &[FrameRecord]) {
    let diff = visl_trace::diff(oracle, reel);
    if let Some(report) = reel_runs::diff_report(clip, &diff) {
        panic!("{report}");
    }
}

/// Slice-based (visl's defaults, what GStreamer uses), frame by frame and
/// slice by slice. No difference is intended: slot choices, unused list
/// entries and unused weights/matrices are hidden by the normaliser.
#[test]
fn traces_match_gstreamer() {
    boot::boot();
    let rows = ROWS.iter().filter(|r| r.oracle == Oracle::Whole);
    check_each("traces against GStreamer's", rows, |row| {
        let clip = row.oracle_clip().expect("an oracle row");
        let oracle = oracle_frames(clip);
        let mut reel = reel_frames(&trace_run(row));
        assert_eq!(reel.len(), oracle.len(), "{}: frames traced", clip.name);
        // Every frame a stateless decoder is given, hidden ones included
        // and frames shown again left out (they make no request).
        let given = oracle::ffmpeg_frame_count(clip, media::dir()).expect("ffmpeg");
        assert_eq!(reel.len(), given, "{}: requests", clip.name);
        if row.codec == Codec::Mpeg2 {
            mpeg2::as_gstreamer_sends_it(&mut reel);
        }
        assert_same_frames(clip.name, &oracle, &reel);
    });
}

/// The OUTPUT buffers visl kept in a row's traced decode.
fn output_buffers(row: &Row) -> Vec<Vec<u8>> {
    // visl-bitstream.sh saved them after the traced run, whose exit
    // status is reel's.
    reel_runs::successful(boot::result(), &trace_run(row));
    let dir = boot::result()
        .result_dir
        .join(format!("{}.bitstream", bits_run(row)));
    visl_bitstream::read_dump(&dir).unwrap_or_else(|e| panic!("{e}"))
}

/// The count the row's codec gives its OUTPUT buffers.
fn assert_buffer_count(row: &Row, ours: &[Vec<u8>]) {
    let name = bits_run(row);
    let pictures = media::frame_count(&row.path());
    match row.codec.output_buffers() {
        BufferCount::AtLeastOnePerPicture => assert!(
            ours.len() >= pictures,
            "{name}: {} OUTPUT buffers for {pictures} pictures",
            ours.len()
        ),
        BufferCount::RequestsPerPicture => assert_eq!(
            ours.len(),
            pictures * mpeg2::requests_per_frame(row.name),
            "{name}: OUTPUT buffers"
        ),
        BufferCount::WholePackets => {
            let packets = vp8::packets(&row.path());
            assert_eq!(ours.len(), packets.len(), "one OUTPUT buffer per frame");
            for (i, (a, packet)) in ours.iter().zip(&packets).enumerate() {
                assert_eq!(a, packet, "OUTPUT buffer {i}: not the whole frame");
            }
        }
        BufferCount::OnePerFrameTraced => {
            assert!(!ours.is_empty(), "{name}: no OUTPUT buffer dumped");
            let frames = reel_frames(&trace_run(row)).len();
            assert_eq!(ours.len(), frames, "{name}: one OUTPUT buffer a frame");
        }
    }
}

/// Every OUTPUT buffer visl received from reel has the size and sha256
/// of the one it received from GStreamer (stored with the oracle).
#[test]
fn output_buffer_bytes_equal_gstreamers() {
    boot::boot();
    let rows = ROWS.iter().filter(|r| r.oracle == Oracle::Whole);
    check_each("OUTPUT buffers against GStreamer's", rows, |row| {
        let clip = row.oracle_clip().expect("an oracle row");
        let ours = output_buffers(row);
        assert_buffer_count(row, &ours);
        let theirs = oracle::oracle_output_digests(clip).unwrap_or_else(|e| panic!("{e}"));
        let differences = visl_bitstream::differences(clip.name, &ours, &theirs);
        assert!(differences.is_empty(), "{}", differences.join("\n"));
        eprintln!(
            "{}: {} OUTPUT buffers equal GStreamer's",
            clip.name,
            ours.len()
        );
    });
}

/// GStreamer cannot follow these clips on visl; each of their parts (key
/// frame and sequence header first) decoded alone is their oracle. reel's
/// trace of the whole, cut where each part starts, equals them (the new
/// sequence starts afresh, and nothing before it is referenced), and so do
/// its OUTPUT buffers.
#[test]
fn clips_in_parts_decode_as_gstreamer_decodes_their_parts() {
    boot::boot();
    let rows = ROWS.iter().filter(|r| r.oracle == Oracle::Parts);
    check_each("clips against GStreamer's parts", rows, |row| {
        let whole = row.name;
        let parts = oracle::parts_of(whole);
        assert!(parts.len() > 1, "{whole}: oracle parts");
        let reel = reel_frames(&trace_run(row));
        let buffers = output_buffers(row);
        assert_buffer_count(row, &buffers);
        let mut failures = Vec::new();
        let mut first = 0;
        for part in parts {
            let oracle = oracle_frames(part);
            let ours: Vec<FrameRecord> = visl_trace::from_frame(&reel, first)
                .into_iter()
                .take(oracle.len())
                .collect();
            let diff = visl_trace::diff(&oracle, &ours);
            failures.extend(reel_runs::diff_report(part.name, &diff));
            let theirs = oracle::oracle_output_digests(part).unwrap_or_else(|e| panic!("{e}"));
            let end = (first + theirs.len()).min(buffers.len());
            failures.extend(visl_bitstream::differences(
                part.name,
                &buffers[first.min(end)..end],
                &theirs,
            ));
            eprintln!(
                "{whole}: frames {first}..{} against {}",
                first + oracle.len(),
                part.name
            );
            first += oracle.len();
        }
        assert_eq!(first, reel.len(), "{whole}: frames traced vs the parts'");
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    });
}

/// The decode parameters control of a codec with a frame-based mode.
fn decode_params(codec: Codec) -> &'static str {
    match codec {
        Codec::H264 => "v4l2_ctrl_h264_decode_params",
        Codec::Hevc => "v4l2_ctrl_hevc_decode_params",
        _ => panic!("{codec:?} has no frame-based mode"),
    }
}

/// Frame-based with Annex-B start codes (forced through the codec's
/// `REEL_V4L2_*_MODE`/`_START_CODE`): one request per picture (two for a
/// field pair) carrying every slice, the pictures' decode parameters those
/// of the slice-based decode, and (H.264) the oracle's controls regrouped
/// per frame.
#[test]
fn frame_based_annex_b_requests_match_the_slice_based_ones() {
    boot::boot();
    let rows = ROWS.iter().filter(|r| r.frame_mode);
    check_each("frame-based decodes", rows, |row| {
        let name = frame_run(row);
        let (log, _) = reel_runs::successful(boot::result(), &name);
        assert!(
            log.contains("mode=FrameBased annex_b=true"),
            "{name}: not frame-based with start codes:\n{log}"
        );
        let clip = row.oracle_clip().expect("an oracle row");
        let oracle = oracle_frames(clip);
        let frames = reel_frames(&name);
        let slice_based = reel_frames(&trace_run(row));
        assert_eq!(frames.len(), slice_based.len(), "{name}: pictures");
        let params = decode_params(row.codec);
        for (o, r) in oracle.iter().zip(&frames) {
            let fields = o
                .controls
                .get(params)
                .and_then(|c| c.get("flags"))
                .is_some_and(|flags| flags.contains("FIELD_PIC"));
            let expected = if fields { 2 } else { 1 };
            assert!(
                r.runs == expected,
                "{name}: frame {} took {} requests",
                r.index,
                r.runs
            );
        }
        for (frame, sliced) in frames.iter().zip(&slice_based) {
            assert_eq!(
                frame.controls.get(params),
                sliced.controls.get(params),
                "{name}: picture {}",
                frame.index
            );
        }
        if row.codec == Codec::H264 {
            let diff = visl_trace::diff(&h264::per_frame(&oracle), &h264::per_frame(&frames));
            if let Some(report) = reel_runs::diff_report(clip.name, &diff) {
                panic!("{report}");
            }
        }
    });
}
