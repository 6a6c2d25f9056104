//! Every syntax element reel's AV1 parser reads equals what FFmpeg's
//! trace_headers (cbs_av1) reads from the same bytes: name, bit position
//! and value, for every OBU of every generated AV1 clip, one frame per
//! packet (av1_frame_split) as the V4L2 path takes them: OBU headers,
//! sequence headers, frame headers and tile group headers with their
//! trailing and alignment bits; the OBU header alone for other types. Each
//! clip is also checked to have the feature it was made for, and every
//! tile group's tiles to tile its OBU.

use crate::support;

use reel::codec::av1::obu::{Obu, ObuType};
use reel::codec::av1::trace::HeaderTracer;
use reel::codec::av1::{ParsedObu, StreamParser};
use support::h264::{
    annex_b_with_trace_of, strip_indices, work_dir, AnnexB, Codec, Element, AV1_CLIPS,
};
use support::media;

/// The bytes of obu_size's leb128 code: FFmpeg traces each, then obu_size
/// with its value; reel traces obu_size alone.
fn is_size_byte(name: &str) -> bool {
    name == "leb128_byte"
}

/// OBU types whose payload both sides parse (the others differ: FFmpeg
/// parses metadata and padding, reel passes over them).
fn parsed_payload(obu_type: ObuType) -> bool {
    matches!(
        obu_type,
        ObuType::SequenceHeader
            | ObuType::TemporalDelimiter
            | ObuType::FrameHeader
            | ObuType::TileGroup
            | ObuType::Frame
    )
}

fn trace(clip: &str) -> AnnexB {
    let work = work_dir("av1-headers");
    annex_b_with_trace_of(Codec::Av1, &media::dir().join(clip), &work)
}

fn check_clip(clip: &str, stream: &AnnexB) -> usize {
    let mut tracer = HeaderTracer::new();
    let ours = tracer
        .trace_temporal_unit(&stream.stream)
        .unwrap_or_else(|e| panic!("{clip}: {e}"));
    assert_eq!(
        ours.len(),
        stream.trace.len(),
        "{clip}: OBU count differs from FFmpeg's trace"
    );
    let mut rest: &[u8] = &stream.stream;
    let mut elements = 0;
    for (i, (ours, expected)) in ours.iter().zip(&stream.trace).enumerate() {
        let obu = Obu::parse(rest).expect("parsed once already");
        rest = &rest[obu.data.len()..];
        let ours: Vec<Element> = ours
            .iter()
            .map(|t| (t.position, strip_indices(t.name), t.value))
            .collect();
        let mut expected: Vec<Element> = expected
            .iter()
            .filter(|(_, n, _)| !is_size_byte(n))
            .cloned()
            .collect();
        if !parsed_payload(obu.header.obu_type) {
            let header_len = ours.len();
            expected.truncate(header_len);
        }
        assert_eq!(
            ours, expected,
            "{clip}: OBU {i} ({:?})",
            obu.header.obu_type
        );
        elements += ours.len();
    }
    elements
}

/// Every tile group's tiles follow each other to the end of its OBU, and
/// every frame gets all its tiles.
fn check_tiles(clip: &str, stream: &[u8]) -> usize {
    let mut parser = StreamParser::new();
    let mut rest = stream;
    let mut tiles = 0;
    let mut max_tiles_per_group = 0;
    while !rest.is_empty() {
        let (obu, parsed) = parser
            .parse_obu(rest)
            .unwrap_or_else(|e| panic!("{clip}: {e}"));
        rest = &rest[obu.data.len()..];
        let group = match parsed {
            ParsedObu::Frame {
                tile_group: Some(g),
                ..
            }
            | ParsedObu::TileGroup(g) => g,
            _ => continue,
        };
        let mut end = None;
        for t in &group.tiles {
            assert!(t.size > 0, "{clip}: empty tile");
            if let Some(end) = end {
                assert!(t.offset >= end, "{clip}: tiles overlap");
            }
            end = Some(t.offset + t.size);
        }
        assert_eq!(end, Some(obu.data.len()), "{clip}: last tile ends the OBU");
        tiles += group.tiles.len();
        max_tiles_per_group = max_tiles_per_group.max(group.tiles.len());
    }
    if clip == "av1_tiles.mkv" {
        assert_eq!(max_tiles_per_group, 4, "{clip}: four tiles per frame");
    }
    tiles
}

/// Every value FFmpeg traced for `name` in the clip.
fn values(a: &AnnexB, name: &str) -> Vec<i64> {
    a.trace
        .iter()
        .flatten()
        .filter(|(_, n, _)| n == name)
        .map(|(_, _, v)| *v)
        .collect()
}

/// What each clip was made to contain, read from FFmpeg's trace.
fn assert_feature(clip: &str, a: &AnnexB) {
    let has = |name, value| values(a, name).contains(&value);
    match clip {
        "av1.mkv" => assert!(has("frame_type", 0) && has("frame_type", 1)),
        "av1_10bit.mkv" => assert!(has("high_bitdepth", 1)),
        "av1_tiles.mkv" => {
            assert!(has("tile_cols_log2", 1) && has("tile_rows_log2", 1));
            assert!(has("context_update_tile_id", 3));
        }
        "av1_film_grain.mkv" => {
            assert!(has("film_grain_params_present", 1) && has("apply_grain", 1));
            assert!(values(a, "num_y_points").iter().any(|&n| n > 0));
        }
        "av1_altref.mkv" => {
            assert!(has("show_frame", 0) && has("showable_frame", 1));
            assert!(has("show_existing_frame", 1));
            assert!(has("skip_mode_present", 1));
        }
        "av1_segmentation.mkv" => {
            assert!(has("segmentation_enabled", 1) && has("feature_enabled", 1));
            assert!(
                has("segmentation_update_data", 0),
                "features from a reference"
            );
        }
        "av1_superres.mkv" => {
            assert!(has("use_superres", 1) && has("frame_size_override_flag", 1));
            assert!(has("max_frame_width_minus_1", 317));
        }
        "av1_resolution_change.mkv" => {
            let mut widths = values(a, "max_frame_width_minus_1");
            widths.sort();
            widths.dedup();
            assert_eq!(widths, vec![239, 319]);
        }
        _ => panic!("{clip}: no feature check"),
    }
}

#[test]
fn syntax_elements_match_ffmpeg_trace_headers() {
    let mut total = 0;
    for clip in AV1_CLIPS {
        let stream = trace(clip);
        assert_feature(clip, &stream);
        let n = check_clip(clip, &stream);
        let tiles = check_tiles(clip, &stream.stream);
        eprintln!("{clip}: {n} syntax elements equal, {tiles} tiles");
        assert!(n > 500, "{clip}: suspiciously few elements compared");
        total += n;
    }
    eprintln!("total: {total} syntax elements equal FFmpeg's");
}
