//! Every syntax element reel's MPEG-2 parsers read equals what FFmpeg's
//! trace_headers reads from the same bytes: name, bit position and value,
//! for every unit of every generated MPEG-2 clip (sequence header and
//! extensions, group of pictures, picture header and coding extension,
//! slice headers). Each clip is also checked to have the feature it was
//! made for, to gather into FFmpeg's number of pictures, and an MPEG-1
//! stream to be refused as unsupported.

use crate::support;

use std::path::Path;
use std::process::Command;

use reel::codec::bitstream::annexb::start_code_unit_ranges;
use reel::codec::mpeg2::picture::PictureParser;
use reel::codec::mpeg2::trace::HeaderTracer;
use reel::codec::mpeg2::Mpeg2Error;
use support::h264::{annex_b_with_trace_of, strip_indices, work_dir, AnnexB, Codec, Element};
use support::media;

/// Every MPEG-2 clip tests/media/generate.sh makes.
const CLIPS: [&str; 4] = [
    "mpeg2.ts",
    "mpeg2_matrices.ts",
    "mpeg2_interlaced.ts",
    "mpeg2_fields.ts",
];

fn trace(clip: &str) -> AnnexB {
    annex_b_with_trace_of(
        Codec::Mpeg2,
        &media::dir().join(clip),
        &work_dir("mpeg2-headers"),
    )
}

/// Compares every unit; returns the elements compared and reel's trace.
fn check_clip(clip: &str, stream: &AnnexB) -> (usize, Vec<Vec<Element>>) {
    let mut tracer = HeaderTracer::new();
    let ours: Vec<Vec<Element>> = start_code_unit_ranges(&stream.stream)
        .map(|range| &stream.stream[range])
        .enumerate()
        .map(|(i, unit)| {
            tracer
                .trace_unit(unit)
                .unwrap_or_else(|e| panic!("{clip}: unit {i} ({:#04x}): {e}", unit[0]))
                .into_iter()
                .map(|t| (t.position, strip_indices(t.name), t.value))
                .collect::<Vec<Element>>()
        })
        .filter(|elements| !elements.is_empty())
        .collect();
    assert_eq!(
        ours.len(),
        stream.trace.len(),
        "{clip}: units traced differ from FFmpeg's"
    );
    let mut elements = 0;
    for (i, (ours, expected)) in ours.iter().zip(&stream.trace).enumerate() {
        assert_eq!(ours, expected, "{clip}: unit {i}");
        elements += ours.len();
    }
    (elements, ours)
}

fn values<'a>(trace: &'a [Vec<Element>], name: &'a str) -> impl Iterator<Item = i64> + 'a {
    trace
        .iter()
        .flatten()
        .filter(move |(_, n, _)| n == name)
        .map(|(_, _, v)| *v)
}

#[test]
fn headers_match_ffmpeg_trace_headers() {
    for clip in CLIPS {
        let stream = trace(clip);
        let (elements, ours) = check_clip(clip, &stream);
        assert!(elements > 500, "{clip}: only {elements} elements traced");
        let b_pictures = values(&ours, "picture_coding_type")
            .filter(|&t| t == 3)
            .count();
        assert!(b_pictures > 0, "{clip}: no B pictures");
        match clip {
            "mpeg2_matrices.ts" => {
                assert!(values(&ours, "load_intra_quantiser_matrix").all(|v| v == 1));
                assert!(values(&ours, "load_non_intra_quantiser_matrix").all(|v| v == 1));
            }
            "mpeg2_interlaced.ts" => {
                assert!(values(&ours, "progressive_sequence").all(|v| v == 0));
                assert!(values(&ours, "progressive_frame").all(|v| v == 0));
                assert!(values(&ours, "top_field_first").all(|v| v == 1));
                assert!(values(&ours, "frame_pred_frame_dct").all(|v| v == 0));
            }
            "mpeg2_fields.ts" => {
                let structures: Vec<i64> = values(&ours, "picture_structure").collect();
                assert!(
                    structures.chunks(2).all(|pair| pair == [1, 2]),
                    "{structures:?}"
                );
            }
            _ => {}
        }
        eprintln!("{clip}: {elements} elements equal FFmpeg's");
    }
}

#[test]
fn pictures_gathered_as_ffmpeg_counts_them() {
    for clip in CLIPS {
        let path = media::dir().join(clip);
        let stream = trace(clip).stream;
        let mut parser = PictureParser::new();
        let pictures = parser
            .parse_packet(&stream)
            .unwrap_or_else(|e| panic!("{clip}: {e}"));
        // A field picture is half a frame.
        let fields = pictures.iter().filter(|p| p.coding.is_field()).count();
        assert_eq!(fields % 2, 0, "{clip}");
        assert_eq!(
            pictures.len() - fields / 2,
            media::frame_count(&path),
            "{clip}"
        );
        assert!(pictures[0].new_sequence, "{clip}: first picture");
        assert!(
            pictures[1..].iter().all(|p| !p.new_sequence),
            "{clip}: one sequence"
        );
        let sequence = parser.sequence().expect("a sequence");
        let height = if clip == "mpeg2_fields.ts" { 256 } else { 240 };
        assert_eq!(
            (sequence.horizontal_size(), sequence.vertical_size()),
            (320, height)
        );
        // Every slice range starts at its start code value.
        for picture in &pictures {
            for slice in &picture.slices {
                assert!((0x01..=0xaf).contains(&stream[slice.start]));
                assert_eq!(&stream[slice.start - 3..slice.start], &[0, 0, 1]);
            }
        }
        if clip == "mpeg2_matrices.ts" {
            let intra = pictures[0].quant.intra;
            assert_ne!(
                intra,
                reel::codec::mpeg2::quant::QuantMatrices::default().intra
            );
            let expected: Vec<i64> =
                values(&check_clip(clip, &trace(clip)).1, "intra_quantiser_matrix")
                    .take(64)
                    .collect();
            assert_eq!(intra.map(i64::from).to_vec(), expected);
        }
    }
}

/// MPEG-1 has no sequence extension: refused, not misdecoded.
#[test]
fn mpeg1_is_refused_as_unsupported() {
    let clip = media::dir().join("mpeg1.mpg");
    let out = work_dir("mpeg2-headers").join("mpeg1.m1v");
    let status = Command::new("ffmpeg")
        .args(["-nostdin", "-v", "error", "-y", "-i"])
        .arg(&clip)
        .args(["-map", "0:v:0", "-c", "copy", "-f", "mpeg1video"])
        .arg(&out)
        .status()
        .expect("ffmpeg must be installed");
    assert!(status.success());
    let stream = std::fs::read(Path::new(&out)).expect("ffmpeg wrote the stream");
    match PictureParser::new().parse_packet(&stream) {
        Err(Mpeg2Error::Unsupported(message)) => assert!(message.contains("MPEG-1"), "{message}"),
        other => panic!("MPEG-1 parsed as {other:?}"),
    }
}
