//! reel's VP8 frame headers against libavcodec's VP8 decoder (through
//! ffprobe; FFmpeg 5.1 has no VP8 `trace_headers`): per packet the key
//! frame flag the container and the frame tag agree on; per frame ffprobe
//! outputs, the key frame flag and size of the next shown frame reel
//! parses (hidden frames give no output). The full field-by-field check is
//! tests/guest_codecs/ (the VP8 rows), against GStreamer's parser through
//! visl. Each clip
//! is also checked for the feature it was made to carry.

use crate::support;

use std::path::Path;
use std::process::Command;

use reel::codec::vp8::{parse_frame, FrameHeader, StreamState};
use reel::media::{Demuxer, StreamKind};
use support::media;

const CLIPS: [&str; 4] = [
    "vp8.webm",
    "vp8_altref.webm",
    "vp8_segmentation.webm",
    "vp8_odd_size.webm",
];

/// (container key flag, parsed header) of every packet.
fn parse_clip(path: &Path) -> Vec<(bool, FrameHeader)> {
    let mut demuxer = Demuxer::open(path).expect("open");
    let video = demuxer
        .streams()
        .iter()
        .find(|s| s.kind == StreamKind::Video)
        .map(|s| s.index)
        .expect("a video stream");
    let mut state = StreamState::default();
    let mut out = Vec::new();
    while let Some(packet) = demuxer.next_packet().expect("read packet") {
        if packet.stream_index != video {
            continue;
        }
        let header = parse_frame(&packet.data, &mut state)
            .unwrap_or_else(|e| panic!("{}: packet {}: {e}", path.display(), out.len()));
        out.push((packet.keyframe, header));
    }
    out
}

/// (key_frame, width, height) of every frame libavcodec outputs.
fn ffprobe_frames(path: &Path) -> Vec<(bool, u16, u16)> {
    let output = Command::new("ffprobe")
        .args(["-v", "error", "-select_streams", "v:0", "-show_entries"])
        .args(["frame=key_frame,width,height", "-of", "csv=p=0"])
        .arg(path)
        .output()
        .expect("ffprobe");
    assert!(
        output.status.success(),
        "ffprobe failed on {}",
        path.display()
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split(',').map(str::trim).collect();
            let n = |i: usize| f[i].parse::<u16>().unwrap_or_else(|e| panic!("{l}: {e}"));
            (f[0] == "1", n(1), n(2))
        })
        .collect()
}

#[test]
fn headers_agree_with_libavcodec() {
    for name in CLIPS {
        let path = media::clip(name);
        let parsed = parse_clip(&path);
        for (i, (container_key, header)) in parsed.iter().enumerate() {
            assert_eq!(
                *container_key,
                header.is_key_frame(),
                "{name}: packet {i}: key frame"
            );
        }
        let shown: Vec<(bool, u16, u16)> = parsed
            .iter()
            .filter(|(_, h)| h.tag.show_frame)
            .map(|(_, h)| (h.is_key_frame(), h.width, h.height))
            .collect();
        assert_eq!(shown, ffprobe_frames(&path), "{name}: shown frames");
    }
}

#[test]
fn clips_carry_what_they_were_made_for() {
    let altref = parse_clip(&media::clip("vp8_altref.webm"));
    let hidden: Vec<&FrameHeader> = altref
        .iter()
        .map(|(_, h)| h)
        .filter(|h| !h.tag.show_frame)
        .collect();
    assert!(!hidden.is_empty(), "no hidden frame");
    assert!(hidden.iter().all(|h| h.refresh.altref && !h.refresh.last));
    assert!(altref
        .iter()
        .any(|(_, h)| !h.is_key_frame() && h.sign_bias_altref));

    let segmented = parse_clip(&media::clip("vp8_segmentation.webm"));
    for (_, h) in &segmented {
        assert!(h.segmentation.enabled);
        assert_eq!(h.dct_partitions, 4);
        assert_eq!(h.dct_partition_sizes.len(), 4);
        assert!(
            !h.refresh_entropy_probs,
            "error resilient: no entropy refresh"
        );
    }
    assert!(segmented
        .iter()
        .any(|(_, h)| h.segmentation.update_map && h.segmentation.update_data));
    assert!(segmented
        .iter()
        .any(|(_, h)| h.segmentation.quant.iter().any(|&q| q != 0)));

    let odd = parse_clip(&media::clip("vp8_odd_size.webm"));
    let keys: Vec<usize> = odd
        .iter()
        .enumerate()
        .filter(|(_, (_, h))| h.is_key_frame())
        .map(|(i, _)| i)
        .collect();
    assert_eq!(keys, vec![0, 15]);
    assert!(odd.iter().all(|(_, h)| (h.width, h.height) == (174, 142)));
}
