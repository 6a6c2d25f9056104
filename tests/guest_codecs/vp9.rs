//! VP9's own checks (the generic ones are in oracle_checks.rs and
//! playback_checks.rs): reference scaling, a stream that goes from 320x240
//! to 240x180 on an inter frame (no GStreamer oracle: GStreamer drops such
//! frames until the next key frame), decodes whole into the first CAPTURE
//! buffers; a copy with a damaged frame header resumes at the next key
//! frame.

use std::path::{Path, PathBuf};

use crate::boot::{self, GuestCall, SAVE_DIR};
use crate::row_runs::{V4L2_FRAMEMD5, V4L2_NULL};
use crate::support::reel_runs::{self, traced_decode};
use crate::support::visl_trace;
use crate::support::{self, media};

/// Key frames at 0 and 8 of 15: damage in frame 3 must not stop frames 8
/// on from decoding.
const CORRUPTED_SOURCE: &str = "vp9_profile2.webm";
const DAMAGED_FRAME: usize = 3;
const NEXT_KEY_FRAME: usize = 8;
const CORRUPTED: &str = "vp9-corrupted";

/// Reference scaling: ten frames of 320x240, then ten of 240x180 from an
/// inter frame on (its row has the framemd5 runs).
const RESIZE_CLIP: &str = "vp9_resize.webm";
const RESIZE_TRACE: &str = "trace-vp9_resize";

/// VP9's own runs: the reference scaling clip traced, the damaged copy.
pub fn guest_calls() -> Vec<GuestCall> {
    let media = media::dir();
    let resize = traced_decode(RESIZE_TRACE, &V4L2_NULL, &media.join(RESIZE_CLIP));
    let corrupted = traced_decode(CORRUPTED, &V4L2_FRAMEMD5, &corrupted_clip(media));
    vec![
        GuestCall::new(RESIZE_TRACE, resize),
        GuestCall::new(CORRUPTED, corrupted),
    ]
}

/// The damaged copy of CORRUPTED_SOURCE: frame DAMAGED_FRAME's first byte
/// (frame marker and profile) zeroed, so that its header is refused; the
/// container is untouched. Made next to the other test files (the guest
/// sees the same path).
fn corrupted_clip(media: &Path) -> PathBuf {
    let source = media.join(CORRUPTED_SOURCE);
    let positions: Vec<usize> = media::ffprobe(&source, "packet=pos");
    let mut data = std::fs::read(&source).unwrap_or_else(|e| panic!("{}: {e}", source.display()));
    // A Matroska packet's position is its block's track number (a vint),
    // followed by a 2-byte timecode and a flags byte, then the frame.
    let block = positions[DAMAGED_FRAME];
    let track_number_len = data[block].leading_zeros() as usize + 1;
    let frame = block + track_number_len + 3;
    assert_eq!(data[frame] >> 6, 2, "no VP9 frame marker at byte {frame}");
    data[frame] = 0;
    let path = support::target_dir()
        .join(SAVE_DIR)
        .join("vp9_corrupted.webm");
    std::fs::create_dir_all(path.parent().expect("a directory")).expect("create directory");
    std::fs::write(&path, data).expect("write the damaged copy");
    path
}

#[test]
fn reference_scaling_keeps_the_capture_buffers() {
    let name = RESIZE_TRACE;
    let (log, _) = reel_runs::successful(boot::result(), name);
    assert!(
        !log.contains("new sequence"),
        "the smaller inter frames set the queues up again:\n{log}"
    );
    let frames = reel_runs::reel_frames(boot::result(), name, SAVE_DIR);
    let widths: Vec<String> = frames
        .iter()
        .map(|f| f.controls["v4l2_ctrl_vp9_frame"]["frame_width_minus_1"].clone())
        .collect();
    let mut expected = vec!["319".to_string(); 10];
    expected.extend(vec!["239".to_string(); 10]);
    assert_eq!(widths, expected, "{name}");
    // The first smaller frame predicts from the larger ones.
    let first_small = &frames[10].controls["v4l2_ctrl_vp9_frame"];
    assert!(
        !first_small["flags"].contains("KEY_FRAME"),
        "{first_small:?}"
    );
    assert_eq!(first_small["last_frame_ts"], "frame 9", "{first_small:?}");

    let row = crate::rows::row("vp9_resize");
    let (_, first) = reel_runs::successful(boot::result(), &crate::row_runs::md5a_run(row));
    let (_, second) = reel_runs::successful(boot::result(), &crate::row_runs::md5b_run(row));
    assert_eq!(first, second, "two runs differ");
    let sizes: Vec<u32> = first
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            l.split(',')
                .nth(4)
                .and_then(|v| v.trim().parse().ok())
                .expect("size")
        })
        .collect();
    let mut expected = vec![320 * 240 * 3 / 2; 10];
    expected.extend(vec![240 * 180 * 3 / 2; 10]);
    assert_eq!(sizes, expected, "frame sizes (4:2:0 bytes)");
    assert_eq!(
        sizes.len(),
        media::frame_count(&media::dir().join(RESIZE_CLIP))
    );
}

#[test]
fn a_damaged_frame_header_resumes_at_the_next_key_frame() {
    let (rc, log, out) = reel_runs::outcome(boot::result(), CORRUPTED);
    assert_ne!(rc, 124, "timed out:\n{log}");
    assert!(!log.contains("panicked"), "{log}");
    assert!(
        log.contains("frame_marker 0"),
        "the damaged header was not reported:\n{log}"
    );
    // Frames before the damage, then from the next key frame on; the
    // frames between need references the damage took.
    let total = media::frame_count(&media::dir().join(CORRUPTED_SOURCE));
    let trace = boot::result()
        .read_result(&format!("{CORRUPTED}.trace"))
        .unwrap_or_else(|e| panic!("{CORRUPTED}: {e}"));
    let frames = visl_trace::normalise(&trace).unwrap_or_else(|e| panic!("{CORRUPTED}: {e}"));
    assert_eq!(
        frames.len(),
        DAMAGED_FRAME + total - NEXT_KEY_FRAME,
        "{log}"
    );
    let key_frames: Vec<usize> = frames
        .iter()
        .enumerate()
        .filter(|(_, f)| {
            f.controls
                .get("v4l2_ctrl_vp9_frame")
                .and_then(|c| c.get("flags"))
                .is_some_and(|flags| flags.split('|').any(|f| f == "KEY_FRAME"))
        })
        .map(|(i, _)| i)
        .collect();
    assert_eq!(key_frames, vec![0, DAMAGED_FRAME], "{log}");
    assert_eq!(
        reel_runs::framemd5_lines(&out).len(),
        DAMAGED_FRAME + total - NEXT_KEY_FRAME,
        "{log}"
    );
}
