//! VP8's own checks (the generic ones are in oracle_checks.rs and
//! playback_checks.rs): the clips exercise hidden frames, golden/altref
//! references and segmentation; a corrupted copy resumes at the next key
//! frame.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::boot::{self, GuestCall, SAVE_DIR};
use crate::row_runs::V4L2_FRAMEMD5;
use crate::rows::row;
use crate::support::reel_runs::{self, traced_decode};
use crate::support::visl_trace::{self, FrameRecord};
use crate::support::{self, media};

const FRAME_CONTROL: &str = "v4l2_ctrl_vp8_frame";

/// The clip with a hidden frame.
const ALTREF_CLIP: &str = "vp8_altref";
/// Key frames at 0 and 15 of 30 frames: damage in the first half.
const CORRUPTED_SOURCE: &str = "vp8_odd_size";
const CORRUPTED: &str = "vp8-corrupted";

/// VP8's own run: the corrupted copy.
pub fn guest_calls() -> Vec<GuestCall> {
    let source = media::dir().join(row(CORRUPTED_SOURCE).file);
    let call = traced_decode(CORRUPTED, &V4L2_FRAMEMD5, &corrupted_clip(&source));
    vec![GuestCall::new(CORRUPTED, call)]
}

fn reel_frames(name: &str) -> Vec<FrameRecord> {
    reel_runs::reel_frames(boot::result(), name, SAVE_DIR)
}

fn frame_flags(frame: &FrameRecord) -> &str {
    frame
        .controls
        .get(FRAME_CONTROL)
        .and_then(|c| c.get("flags"))
        .map_or("", String::as_str)
}

/// The frames of a VP8 file as the container holds them (one per packet),
/// through FFmpeg's IVF muxer.
pub fn packets(file: &Path) -> Vec<Vec<u8>> {
    let output = Command::new("ffmpeg")
        .args(["-nostdin", "-v", "error", "-i"])
        .arg(file)
        .args(["-map", "0:v:0", "-c", "copy", "-f", "ivf", "-"])
        .output()
        .unwrap_or_else(|e| panic!("ffmpeg: {e}"));
    assert!(
        output.status.success(),
        "ffmpeg failed on {}",
        file.display()
    );
    let ivf = output.stdout;
    let mut at = usize::from(u16::from_le_bytes([ivf[6], ivf[7]]));
    let mut frames = Vec::new();
    while at + 12 <= ivf.len() {
        let size = u32::from_le_bytes(ivf[at..at + 4].try_into().expect("4 bytes")) as usize;
        frames.push(ivf[at + 12..at + 12 + size].to_vec());
        at += 12 + size;
    }
    frames
}

/// A copy of `source` with frame 5's first partition overwritten with
/// noise and frame 6's tag claiming a first partition larger than the
/// frame: both inter frames of the first key frame's group. Found by their
/// bytes in the file, so that the container stays intact.
fn corrupted_clip(source: &Path) -> PathBuf {
    let mut data = std::fs::read(source).unwrap_or_else(|e| panic!("{}: {e}", source.display()));
    let frames = packets(source);
    let find = |data: &[u8], frame: &[u8]| {
        data.windows(32)
            .position(|w| w == &frame[..32])
            .unwrap_or_else(|| panic!("frame not found in {}", source.display()))
    };
    let noisy = find(&data, &frames[5]);
    let mut noise = 0x2545_f491_u32;
    for byte in &mut data[noisy + 3..noisy + 3 + 24] {
        noise ^= noise << 13;
        noise ^= noise >> 17;
        noise ^= noise << 5;
        *byte = noise as u8;
    }
    let cut = find(&data, &frames[6]);
    data[cut..cut + 3].copy_from_slice(&[0xf1, 0xff, 0xff]);
    let path = support::target_dir()
        .join(SAVE_DIR)
        .join("vp8_corrupted.webm");
    std::fs::create_dir_all(path.parent().expect("has a parent")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(&path, data).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    path
}

/// The clips do what they were made for: a hidden altref frame, golden
/// and altref references that differ from the last frame, segmentation
/// with map updates, several DCT partitions.
#[test]
fn clips_exercise_hidden_frames_references_and_segmentation() {
    let altref = reel_frames(&format!("trace-{ALTREF_CLIP}"));
    assert!(
        altref
            .iter()
            .any(|f| !frame_flags(f).contains("SHOW_FRAME")),
        "no hidden frame in {ALTREF_CLIP}"
    );
    let field = |f: &FrameRecord, key: &str| {
        f.controls
            .get(FRAME_CONTROL)
            .and_then(|c| c.get(key))
            .cloned()
            .unwrap_or_default()
    };
    assert!(
        altref
            .iter()
            .any(|f| field(f, "alt_frame_ts") != field(f, "last_frame_ts")),
        "the altref slot never differs from the last frame"
    );
    let segmented = reel_frames("trace-vp8_segmentation");
    assert!(segmented.iter().all(|f| {
        let flags = field(f, "segment.flags");
        flags.contains("SEGMENT_ENABLED") || flags.contains("ENABLED")
    }));
    assert!(segmented
        .iter()
        .any(|f| field(f, "segment.flags").contains("UPDATE_MAP")));
    assert!(segmented.iter().all(|f| field(f, "num_dct_parts") == "4"));
}

#[test]
fn corrupted_file_resumes_at_the_next_key_frame() {
    let (rc, log, out) = reel_runs::outcome(boot::result(), CORRUPTED);
    assert_ne!(rc, 124, "timed out:\n{log}");
    assert!(!log.contains("panicked"), "{log}");
    assert!(
        log.contains("WARN") || log.contains("ERROR"),
        "the damage was not logged:\n{log}"
    );
    let trace = boot::result()
        .read_result(&format!("{CORRUPTED}.trace"))
        .unwrap_or_else(|e| panic!("{e}"));
    let frames = visl_trace::normalise(&trace).unwrap_or_else(|e| panic!("{e}"));
    let keys: Vec<usize> = frames
        .iter()
        .filter(|f| frame_flags(f).contains("KEY_FRAME"))
        .map(|f| f.index)
        .collect();
    let total = media::frame_count(&media::dir().join(row(CORRUPTED_SOURCE).file));
    // The second key frame (frame 15) and every frame after it decoded.
    let last_key = keys.last().copied().unwrap_or(0);
    assert!(
        keys.len() == 2 && frames.len() - last_key == total / 2,
        "key frames {keys:?}, {} traced, {total} in the clip:\n{log}",
        frames.len()
    );
    // The damaged group ends at the cut tag: at most frames 0 to 5 of it.
    assert!(last_key <= 6, "key frames {keys:?}:\n{log}");
    assert!(reel_runs::framemd5_lines(&out).len() > total / 2, "{out}");
}
