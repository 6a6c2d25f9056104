//! reel's AV1 parser against GStreamer 1.26's v4l2slav1dec on visl (the
//! trixie root, support::oracle): for every frame of the oracle's AV1 clip,
//! in decoding order, the control fields GStreamer sent that follow from
//! the headers and the reference slots (order hints, skip mode frames,
//! references, refresh, primary reference, loop filter levels and deltas,
//! quantizer, CDEF, sizes, tiles and each tile's size) equal what reel's
//! parser derives. The capture is GStreamer's: one guest run when it is
//! missing or stale, none otherwise.

mod support;

use reel::codec::av1::decoder::{Av1Decoder, Event, Frame};
use reel::media::Demuxer;
use support::media;
use support::oracle;
use support::visl_trace::FrameRecord;

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

fn reel_frames(file: &str) -> Vec<Frame<u64>> {
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
    let frames = reel_frames(clip.file);
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
