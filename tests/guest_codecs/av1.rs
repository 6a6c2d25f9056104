//! AV1's own checks (the generic ones are in oracle_checks.rs and
//! playback_checks.rs):
//! - reel's parser: for every frame of the oracle's `av1` clip, in decoding
//!   order, the control fields GStreamer sent that follow from the headers
//!   and the reference slots (order hints, skip mode frames, references,
//!   refresh, primary reference, loop filter levels and deltas, quantizer,
//!   CDEF, sizes, tiles and each tile's size) equal what reel's parser
//!   derives (GStreamer's stored trace: no guest run);
//! - frames shown again (each hidden altref frame shown twice) are the
//!   pictures of their slots' buffers: reel's frames fall into the same
//!   groups of equal pictures as FFmpeg's, visl's pictures of two decodes
//!   never being equal.

use std::process::Command;

use reel::codec::av1::decoder::{Av1Decoder, Event, Frame};
use reel::media::Demuxer;

use crate::boot;
use crate::rows::row;
use crate::support::media;
use crate::support::oracle;
use crate::support::reel_runs;
use crate::support::visl_trace::FrameRecord;

/// av1_altref with every frame shown again shown twice
/// (tests/media/av1_show_again.py).
const SHOWN_TWICE: &str = "av1_shown_twice";

/// `{0x1,0xff}`: how the visl trace prints arrays (signed bytes as u8).
fn hex<T: Into<i64>>(values: impl IntoIterator<Item = T>, bits: u32) -> String {
    let mask = (1i64 << bits) - 1;
    let items: Vec<String> = values
        .into_iter()
        .map(|v| format!("{:#x}", v.into() & mask))
        .collect();
    format!("{{{}}}", items.join(","))
}

/// The fields reel can tell from its parse of one frame, as the trace
/// prints them.
fn expected_fields(frame: &Frame<u64>) -> Vec<(&'static str, String)> {
    let h = &frame.header;
    let s = &h.size;
    let lf = &h.loop_filter;
    let mut fields = vec![
        ("order_hint", h.order_hint.to_string()),
        ("refresh_frame_flags", h.refresh_frame_flags.to_string()),
        ("primary_ref_frame", h.primary_ref_frame.to_string()),
        ("order_hints", hex(h.order_hints, 8)),
        ("upscaled_width", s.upscaled_width.to_string()),
        ("frame_width_minus_1", (s.frame_width - 1).to_string()),
        ("frame_height_minus_1", (s.frame_height - 1).to_string()),
        ("render_width_minus_1", (s.render_width - 1).to_string()),
        ("render_height_minus_1", (s.render_height - 1).to_string()),
        ("superres_denom", s.superres_denom.to_string()),
        (
            "quantization.base_q_idx",
            h.quantization.base_q_idx.to_string(),
        ),
        ("loop_filter.level", hex(lf.loop_filter_level, 8)),
        (
            "loop_filter.sharpness",
            lf.loop_filter_sharpness.to_string(),
        ),
        ("loop_filter.ref_deltas", hex(lf.deltas.ref_deltas, 8)),
        ("loop_filter.mode_deltas", hex(lf.deltas.mode_deltas, 8)),
        (
            "cdef.damping_minus_3",
            h.cdef.cdef_damping_minus_3.to_string(),
        ),
        ("cdef.bits", h.cdef.cdef_bits.to_string()),
        ("tile_info.tile_cols", h.tile_info.tile_cols.to_string()),
        ("tile_info.tile_rows", h.tile_info.tile_rows.to_string()),
    ];
    // Skip mode frames are only meaningful where skip mode is allowed.
    if h.skip_mode_frame != [0, 0] {
        fields.push(("skip_mode_frame", hex(h.skip_mode_frame, 8)));
    }
    if !h.frame_is_intra() {
        fields.push(("ref_frame_idx", hex(h.ref_frame_idx, 8)));
    }
    fields
}

/// The frames reel's parser decodes from `file`, in decoding order.
fn parsed_frames(file: &str) -> Vec<Frame<u64>> {
    let mut demuxer = Demuxer::open(&media::dir().join(file)).expect("open clip");
    let mut decoder: Av1Decoder<u64> = Av1Decoder::new();
    let mut next = 0;
    let mut frames = Vec::new();
    while let Some(packet) = demuxer.next_packet().expect("read packet") {
        let events = decoder
            .decode_temporal_unit(&packet.data, || {
                next += 1000;
                next
            })
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        frames.extend(events.into_iter().filter_map(|e| match e {
            Event::Decode(frame) => Some(frame),
            Event::Show(_) => None,
        }));
    }
    frames
}

fn field<'a>(record: &'a FrameRecord, control: &str, key: &str) -> Option<&'a str> {
    record.controls.get(control)?.get(key).map(String::as_str)
}

#[test]
fn parsed_headers_equal_gstreamers_controls() {
    let clip = oracle::clip("av1").expect("the AV1 oracle clip");
    let records = oracle::oracle_frames(clip).unwrap_or_else(|e| panic!("{e}"));
    let frames = parsed_frames(clip.file);
    assert_eq!(frames.len(), records.len(), "frames decoded vs GStreamer's");
    let mut compared = 0;
    for (frame, record) in frames.iter().zip(&records) {
        let i = record.index;
        for (key, ours) in expected_fields(frame) {
            let theirs = field(record, "v4l2_ctrl_av1_frame", key)
                .unwrap_or_else(|| panic!("frame {i}: GStreamer's trace has no {key}"));
            assert_eq!(theirs.trim(), ours, "frame {i}: {key}");
            compared += 1;
        }
        // The single tile's size (the clip has one tile per frame).
        let tiles = &frame.tile_groups[0].group.tiles;
        let size = record
            .controls
            .iter()
            .filter(|(name, _)| name.starts_with("v4l2_ctrl_av1_tile_group_entry"))
            .find_map(|(_, fields)| fields.get("tile_size"))
            .unwrap_or_else(|| panic!("frame {i}: no tile group entry"));
        assert_eq!(
            size.trim(),
            tiles[0].size.to_string(),
            "frame {i}: tile_size"
        );
        let sequence = &frame.sequence;
        if let Some(bits) = field(record, "v4l2_ctrl_av1_sequence", "order_hint_bits") {
            assert_eq!(bits.trim(), sequence.order_hint_bits().to_string());
        }
    }
    eprintln!(
        "{compared} control fields over {} frames equal GStreamer's",
        frames.len()
    );
}

/// The frames of a framemd5 output grouped by picture: for each frame, the
/// index of the first frame with the same MD5.
fn same_picture_as(lines: &[(i64, String)]) -> Vec<usize> {
    lines
        .iter()
        .map(|(_, md5)| {
            lines
                .iter()
                .position(|(_, other)| other == md5)
                .unwrap_or_default()
        })
        .collect()
}

/// Frames shown again come from the buffer their slot names. visl writes
/// each decode's sequence number and timestamp into its picture, so every
/// decode's picture differs from every other's: two frames reel outputs
/// have the same MD5 exactly when they are one buffer. FFmpeg's decode says
/// which frames are one picture (the hidden ones each shown twice); reel's
/// frames must be grouped the same way. Showing any other buffer (the last
/// decoded, another slot's) would join a frame to the wrong group.
#[test]
fn frames_shown_again_come_from_their_slots_buffer() {
    let clip = row(SHOWN_TWICE).path();
    let output = Command::new("ffmpeg")
        .args(["-nostdin", "-v", "error", "-i"])
        .arg(&clip)
        .args(["-f", "framemd5", "-"])
        .output()
        .unwrap_or_else(|e| panic!("ffmpeg: {e}"));
    assert!(output.status.success(), "ffmpeg on {}", clip.display());
    let theirs = same_picture_as(&reel_runs::framemd5_lines(&String::from_utf8_lossy(
        &output.stdout,
    )));
    let shown_again = theirs.iter().enumerate().filter(|(i, f)| i != *f).count();
    assert!(shown_again >= 2, "FFmpeg shows no frame twice: {theirs:?}");
    let (log, out) = reel_runs::successful(boot::result(), &format!("md5a-{SHOWN_TWICE}"));
    let ours = same_picture_as(&reel_runs::framemd5_lines(&out));
    assert_eq!(
        ours, theirs,
        "frames grouped by picture, reel vs FFmpeg\n{log}"
    );
    eprintln!("{shown_again} frames shown again, each from its slot's buffer");
}
