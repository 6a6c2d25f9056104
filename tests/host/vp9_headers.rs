//! Every syntax element of every VP9 frame's uncompressed header, as reel
//! reads it, equals FFmpeg's trace_headers (cbs_vp9) on the same frames:
//! name, bit position and value, for every generated VP9 clip. The frames
//! are FFmpeg's vp9_superframe_split output; reel's own superframe
//! splitting of the unsplit packets must give exactly those frames. Every
//! frame's compressed header is read up to its padding, which must be zero
//! (FFmpeg does not trace it; GStreamer's requests on visl are its oracle,
//! tests/guest_codecs/, the VP9 rows). Each clip is also checked to have the feature it
//! was made for.

use crate::support;

use std::path::Path;
use std::process::Command;

use reel::codec::vp9::superframe;
use reel::codec::vp9::trace::HeaderTracer;
use support::h264::work_dir;
use support::media;

const CLIPS: &[&str] = &[
    "vp9.webm",
    "vp9_tiles.webm",
    "vp9_profile2.webm",
    "vp9_altref.webm",
    "vp9_show_existing.webm",
    "vp9_resize.webm",
];

/// (bit position, name without array indices, value)
type Element = (usize, String, i64);

/// `name` without its `[i]` parts (`segmentation_tree_probs[3].prob`
/// becomes `segmentation_tree_probs.prob`).
fn strip_indices(name: &str) -> String {
    let mut out = String::new();
    let mut depth = 0;
    for c in name.chars() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

/// The packets of `clip` after `bsf` (then trace_headers, which gives
/// each packet's size), and FFmpeg's stderr. Written with the `data` muxer,
/// which (unlike IVF or WebM) adds no bitstream filter of its own.
fn packets(clip: &Path, bsf: &str, out: &Path) -> (Vec<Vec<u8>>, String) {
    let result = Command::new("ffmpeg")
        .args(["-nostdin", "-nostats", "-hide_banner", "-y", "-i"])
        .arg(clip)
        .args(["-map", "0:v:0", "-c:v", "copy", "-bsf:v"])
        .arg(format!("{bsf}trace_headers"))
        .args(["-f", "data"])
        .arg(out)
        .output()
        .expect("ffmpeg must be installed (packaging/install-deps.sh)");
    let stderr = String::from_utf8_lossy(&result.stderr).into_owned();
    assert!(
        result.status.success(),
        "ffmpeg failed on {}: {stderr}",
        clip.display()
    );
    let data = std::fs::read(out).expect("ffmpeg wrote no data");
    let mut packets = Vec::new();
    let mut pos = 0;
    for line in stderr.lines() {
        let Some(at) = line.find("] Packet: ") else {
            continue;
        };
        let size: usize = line[at + 10..]
            .split_whitespace()
            .next()
            .and_then(|s| s.parse().ok())
            .expect("packet size in trace_headers' output");
        packets.push(data[pos..pos + size].to_vec());
        pos += size;
    }
    assert_eq!(pos, data.len(), "{}: packet sizes", clip.display());
    (packets, stderr)
}

/// FFmpeg's trace: one list of elements per frame.
fn parse_trace(stderr: &str) -> Vec<Vec<Element>> {
    let mut frames: Vec<Vec<Element>> = Vec::new();
    for line in stderr.lines() {
        let Some(at) = line.find("[trace_headers @ ") else {
            continue;
        };
        let Some(close) = line[at..].find("] ") else {
            continue;
        };
        let text = line[at + close + 2..].trim();
        if text == "Frame" {
            frames.push(Vec::new());
            continue;
        }
        let fields: Vec<&str> = text.split_whitespace().collect();
        // "<pos> <name> [<bits>] = <value>"
        let (Some(pos), Some(eq)) = (
            fields.first().and_then(|p| p.parse::<usize>().ok()),
            fields.iter().position(|f| *f == "="),
        ) else {
            continue;
        };
        let value: i64 = fields[eq + 1].parse().expect("trace value");
        if let Some(frame) = frames.last_mut() {
            frame.push((pos, strip_indices(fields[1]), value));
        }
    }
    frames
}

struct Traced {
    frames: Vec<Vec<u8>>,
    trace: Vec<Vec<Element>>,
}

fn trace(clip: &str) -> Traced {
    let work = work_dir("vp9-headers");
    let path = media::dir().join(clip);
    let (unsplit, _) = packets(&path, "", &work.join(format!("{clip}.packets")));
    let (frames, stderr) = packets(
        &path,
        "vp9_superframe_split,",
        &work.join(format!("{clip}.frames")),
    );
    // reel's superframe splitting gives FFmpeg's frames.
    let ours: Vec<Vec<u8>> = unsplit
        .iter()
        .flat_map(|p| {
            superframe::frames(p)
                .unwrap_or_else(|e| panic!("{clip}: {e}"))
                .into_iter()
                .map(|r| p[r].to_vec())
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(
        ours.len(),
        frames.len(),
        "{clip}: frame count after splitting"
    );
    assert!(ours == frames, "{clip}: split frames differ from FFmpeg's");
    Traced {
        frames,
        trace: parse_trace(&stderr),
    }
}

fn check_clip(clip: &str, traced: &Traced) -> usize {
    assert_eq!(
        traced.frames.len(),
        traced.trace.len(),
        "{clip}: traced frames"
    );
    let mut tracer = HeaderTracer::new();
    let mut elements = 0;
    for (i, (frame, expected)) in traced.frames.iter().zip(&traced.trace).enumerate() {
        let ours: Vec<Element> = tracer
            .trace_frame(frame)
            .unwrap_or_else(|e| panic!("{clip}: frame {i}: {e}"))
            .into_iter()
            .map(|t| (t.position, strip_indices(t.name), t.value))
            .collect();
        assert_eq!(&ours, expected, "{clip}: frame {i}");
        elements += ours.len();
    }
    elements
}

fn values(traced: &Traced, name: &str) -> Vec<i64> {
    traced
        .trace
        .iter()
        .flatten()
        .filter(|(_, n, _)| n == name)
        .map(|(_, _, v)| *v)
        .collect()
}

/// What each clip was made to contain, read from FFmpeg's trace.
fn assert_feature(clip: &str, t: &Traced) {
    let has = |name, value| values(t, name).contains(&value);
    match clip {
        "vp9.webm" => assert!(has("frame_type", 0) && has("frame_type", 1)),
        "vp9_tiles.webm" => {
            assert!(has("tile_cols_log2", 2));
            assert!(has("segmentation_enabled", 1) && has("feature_enabled", 1));
            assert!(has("segmentation_temporal_update", 1));
        }
        "vp9_profile2.webm" => {
            assert!(has("profile_high_bit", 1) && has("ten_or_twelve_bit", 0))
        }
        "vp9_altref.webm" => {
            assert!(has("show_frame", 0), "no hidden frame");
            assert!(values(t, "refresh_frame_flags").iter().any(|&f| f > 1));
        }
        "vp9_show_existing.webm" => {
            assert_eq!(values(t, "show_existing_frame").iter().sum::<i64>(), 3)
        }
        "vp9_resize.webm" => {
            // The second size comes with an inter frame (frame_type 1).
            assert_eq!(values(t, "frame_width_minus_1"), vec![319, 239]);
            assert_eq!(
                values(t, "frame_type").iter().filter(|&&v| v == 0).count(),
                1
            );
        }
        _ => panic!("{clip}: no feature check"),
    }
}

#[test]
fn syntax_elements_match_ffmpeg_trace_headers() {
    let mut total = 0;
    for clip in CLIPS {
        let traced = trace(clip);
        assert_feature(clip, &traced);
        let n = check_clip(clip, &traced);
        eprintln!("{clip}: {n} syntax elements equal");
        assert!(n > 100, "{clip}: suspiciously few elements compared");
        total += n;
    }
    eprintln!("total: {total} syntax elements equal FFmpeg's");
}
