//! GStreamer's v4l2codecs decoders run against visl in the test guest: the
//! reference trace of the controls a correct stateless client sends for each
//! test clip, and the bytes of every OUTPUT buffer it queued. Captures are
//! cached in `target/visl-oracle/` (`NAME.trace` as traced; `NAME.bitstream/`
//! the OUTPUT buffers visl received; `NAME.normalised`, rendered by
//! `visl_trace::render` whenever `oracle_frames` reads it) and redone when
//! the clip or the capture scripts change.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::media;
use super::visl_bitstream;
use super::visl_trace::{self, FrameRecord};
use super::vm::{self, Guest, GuestCommand, GuestError, Root, ScriptCall};

/// One clip of tests/media/generate.sh and how GStreamer decodes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OracleClip {
    /// File name without extension; names the capture files.
    pub name: &'static str,
    pub file: &'static str,
    pub element: &'static str,
    /// The root whose GStreamer can decode it (1.22 on the host, 1.26 in trixie).
    pub root: Root,
    /// Bitstream filter splitting packets into the frames a stateless decoder
    /// is given one by one (VP9 superframes, AV1 temporal units).
    pub frame_split_bsf: Option<&'static str>,
    /// Controls every frame of the capture must carry.
    pub per_frame_controls: &'static [&'static str],
    /// The clip this one is a part of, where GStreamer cannot decode the
    /// whole on visl: the oracle of the whole is its parts' in order.
    pub part_of: Option<&'static str>,
    /// Container packets per decoded picture: 2 where each field of a
    /// pair is its own packet (H.264 PAFF), whose requests share the
    /// picture's timestamp.
    pub packets_per_picture: usize,
}

const H264: &[&str] = &[
    "v4l2_ctrl_h264_sps",
    "v4l2_ctrl_h264_pps",
    "v4l2_ctrl_h264_slice_params",
    "v4l2_ctrl_h264_decode_params",
];
const HEVC: &[&str] = &[
    "v4l2_ctrl_hevc_sps",
    "v4l2_ctrl_hevc_pps",
    "v4l2_ctrl_hevc_slice_params",
    "v4l2_ctrl_hevc_decode_params",
];
const VP8: &[&str] = &["v4l2_ctrl_vp8_frame", "v4l2_ctrl_vp8_entropy"];
const VP9: &[&str] = &[
    "v4l2_ctrl_vp9_frame",
    "v4l2_ctrl_vp9_compressed_hdr",
    "v4l2_ctrl_vp9_compressed_coeff",
    "v4l2_vp9_mv_probs",
];
const MPEG2: &[&str] = &[
    "v4l2_ctrl_mpeg2_sequence",
    "v4l2_ctrl_mpeg2_picture",
    "v4l2_ctrl_mpeg2_quantisation",
];
const AV1: &[&str] = &[
    "v4l2_ctrl_av1_sequence",
    "v4l2_ctrl_av1_frame",
    "v4l2_ctrl_av1_film_grain",
    "v4l2_ctrl_av1_tile_group_entry",
];

const fn h264(name: &'static str, file: &'static str) -> OracleClip {
    OracleClip {
        name,
        file,
        element: "v4l2slh264dec",
        root: Root::Host,
        frame_split_bsf: None,
        per_frame_controls: H264,
        part_of: None,
        packets_per_picture: 1,
    }
}

/// H.264 field pairs, a packet per field.
const fn h264_fields(name: &'static str, file: &'static str) -> OracleClip {
    OracleClip {
        packets_per_picture: 2,
        ..h264(name, file)
    }
}

const fn vp8(name: &'static str, file: &'static str) -> OracleClip {
    OracleClip {
        name,
        file,
        element: "v4l2slvp8dec",
        root: Root::Host,
        frame_split_bsf: None,
        per_frame_controls: VP8,
        part_of: None,
        packets_per_picture: 1,
    }
}

const fn vp9(name: &'static str, file: &'static str) -> OracleClip {
    OracleClip {
        name,
        file,
        element: "v4l2slvp9dec",
        root: Root::Host,
        frame_split_bsf: Some("vp9_superframe_split"),
        per_frame_controls: VP9,
        part_of: None,
        packets_per_picture: 1,
    }
}

const fn hevc(name: &'static str, file: &'static str) -> OracleClip {
    OracleClip {
        name,
        file,
        element: "v4l2slh265dec",
        root: Root::Trixie,
        frame_split_bsf: None,
        per_frame_controls: HEVC,
        part_of: None,
        packets_per_picture: 1,
    }
}

const fn mpeg2(name: &'static str, file: &'static str) -> OracleClip {
    OracleClip {
        name,
        file,
        element: "v4l2slmpeg2dec",
        root: Root::Host,
        frame_split_bsf: None,
        per_frame_controls: MPEG2,
        part_of: None,
        packets_per_picture: 1,
    }
}

const fn av1(name: &'static str, file: &'static str) -> OracleClip {
    OracleClip {
        name,
        file,
        element: "v4l2slav1dec",
        root: Root::Trixie,
        frame_split_bsf: Some("av1_frame_split"),
        per_frame_controls: AV1,
        part_of: None,
        packets_per_picture: 1,
    }
}

const fn av1_part(name: &'static str, file: &'static str, whole: &'static str) -> OracleClip {
    OracleClip {
        part_of: Some(whole),
        ..av1(name, file)
    }
}

/// Every codec clip of tests/media/generate.sh.
pub const CLIPS: &[OracleClip] = &[
    h264("h264_baseline", "h264_baseline.mp4"),
    h264("h264_main_bframes", "h264_main_bframes.mkv"),
    h264("h264_high", "h264_high.ts"),
    h264("h264_scaling_matrix", "h264_scaling_matrix.mp4"),
    h264("h264_weighted", "h264_weighted.mp4"),
    h264("h264_slices", "h264_slices.mp4"),
    h264("h264_mbaff", "h264_mbaff.ts"),
    h264_fields("h264_paff", "h264_paff.ts"),
    h264("h264_odd_size", "h264_odd_size.mp4"),
    h264("h264_resolution_change", "h264_resolution_change.ts"),
    vp8("vp8", "vp8.webm"),
    vp8("vp8_altref", "vp8_altref.webm"),
    vp8("vp8_segmentation", "vp8_segmentation.webm"),
    vp8("vp8_odd_size", "vp8_odd_size.webm"),
    // No vp9_resize: GStreamer drops inter frames of another size than
    // their references until the next key frame (its V4L2 VP9 decoder
    // refuses non-key-frame size changes).
    vp9("vp9", "vp9.webm"),
    vp9("vp9_tiles", "vp9_tiles.webm"),
    vp9("vp9_profile2", "vp9_profile2.webm"),
    vp9("vp9_altref", "vp9_altref.webm"),
    vp9("vp9_show_existing", "vp9_show_existing.webm"),
    mpeg2("mpeg2", "mpeg2.ts"),
    mpeg2("mpeg2_matrices", "mpeg2_matrices.ts"),
    mpeg2("mpeg2_interlaced", "mpeg2_interlaced.ts"),
    mpeg2("mpeg2_fields", "mpeg2_fields.ts"),
    hevc("hevc_main", "hevc_main.mkv"),
    hevc("hevc_wpp", "hevc_wpp.mkv"),
    hevc("hevc_slices", "hevc_slices.mkv"),
    hevc("hevc_bpyramid", "hevc_bpyramid.mkv"),
    hevc("hevc_scaling_default", "hevc_scaling_default.mkv"),
    hevc("hevc_scaling_explicit", "hevc_scaling_explicit.mkv"),
    hevc("hevc_weighted", "hevc_weighted.mkv"),
    hevc("hevc_open_gop", "hevc_open_gop.ts"),
    // No hevc_resolution_change: GStreamer 1.26's v4l2slh265dec fails the
    // mid-stream S_FMT on visl (EBUSY: its buffers are still allocated).
    hevc("hevc_tall_wpp", "hevc_tall_wpp.mkv"),
    av1("av1", "av1.mkv"),
    av1("av1_10bit", "av1_10bit.mkv"),
    av1("av1_tiles", "av1_tiles.mkv"),
    av1("av1_film_grain", "av1_film_grain.mkv"),
    av1("av1_altref", "av1_altref.mkv"),
    av1("av1_segmentation", "av1_segmentation.mkv"),
    av1("av1_superres", "av1_superres.mkv"),
    // GStreamer 1.26's v4l2slav1dec fails the mid-stream S_FMT of
    // av1_resolution_change on visl (EBUSY), as v4l2slh265dec does: its
    // two parts, each from its key frame and sequence header, are decoded
    // alone.
    av1_part(
        "av1_resolution_change_a",
        "av1_resolution_change_a.mkv",
        "av1_resolution_change",
    ),
    av1_part(
        "av1_resolution_change_b",
        "av1_resolution_change_b.mkv",
        "av1_resolution_change",
    ),
];

pub fn clip(name: &str) -> Option<&'static OracleClip> {
    CLIPS.iter().find(|c| c.name == name)
}

/// The oracle clips that are parts of `whole`, in order.
pub fn parts_of(whole: &str) -> Vec<&'static OracleClip> {
    CLIPS.iter().filter(|c| c.part_of == Some(whole)).collect()
}

pub fn clips_for(root: Root) -> Vec<&'static OracleClip> {
    CLIPS.iter().filter(|c| c.root == root).collect()
}

pub fn oracle_dir() -> PathBuf {
    super::target_dir().join("visl-oracle")
}

/// The oracle trace (raw text) of a clip, captured if missing or stale.
/// Captures every stale clip of the same root in one guest run.
pub fn oracle_trace(clip: &OracleClip) -> Result<String, GuestError> {
    let dir = oracle_dir();
    std::fs::create_dir_all(&dir).map_err(|e| GuestError::Io(format!("{}: {e}", dir.display())))?;
    // One capture at a time across test binaries and threads.
    let lock = File::create(dir.join(".lock")).map_err(|e| GuestError::Io(e.to_string()))?;
    let _lock = nix::fcntl::Flock::lock(lock, nix::fcntl::FlockArg::LockExclusive)
        .map_err(|(_, e)| GuestError::Io(format!("locking {}: {e}", dir.display())))?;
    let media = media::dir();
    let path = dir.join(format!("{}.trace", clip.name));
    if !is_fresh(&path, &media.join(clip.file)) {
        let stale: Vec<&OracleClip> = clips_for(clip.root)
            .into_iter()
            .filter(|c| !is_fresh(&dir.join(format!("{}.trace", c.name)), &media.join(c.file)))
            .collect();
        capture(&stale, clip.root, media, &dir)?;
    }
    std::fs::read_to_string(&path).map_err(|e| GuestError::Io(format!("{}: {e}", path.display())))
}

/// The oracle of a clip, normalised.
/// Also (re)writes `NAME.normalised`, the rendered form, for people to read.
pub fn oracle_frames(clip: &OracleClip) -> Result<Vec<FrameRecord>, String> {
    let trace = oracle_trace(clip).map_err(|e| e.to_string())?;
    let frames = visl_trace::normalise(&trace).map_err(|e| format!("{}: {e}", clip.name))?;
    let path = oracle_dir().join(format!("{}.normalised", clip.name));
    std::fs::write(&path, visl_trace::render(&frames))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(frames)
}

/// The OUTPUT buffers GStreamer queued for the clip, in order, captured
/// with its trace (in visl's default mode).
pub fn oracle_output_buffers(clip: &OracleClip) -> Result<Vec<Vec<u8>>, String> {
    oracle_trace(clip).map_err(|e| e.to_string())?;
    visl_bitstream::read_dump(&oracle_dir().join(format!("{}.bitstream", clip.name)))
}

/// A capture is stale when older than its clip or than the scripts making it.
fn is_fresh(capture: &Path, clip: &Path) -> bool {
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let Some(captured) = modified(capture) else {
        return false;
    };
    let inputs = [
        clip.to_path_buf(),
        vm::guest_script("gst-oracle.sh"),
        vm::guest_script("visl-trace.sh"),
        vm::guest_script("visl-bitstream.sh"),
    ];
    inputs
        .iter()
        .all(|input| modified(input).is_some_and(|m| m <= captured))
}

/// Decodes the clips with GStreamer in one guest run and stores the traces.
pub fn capture(
    clips: &[&OracleClip],
    root: Root,
    media: &Path,
    dest: &Path,
) -> Result<(), GuestError> {
    let specs = clips
        .iter()
        .map(|c| format!("{}:{}:{}", c.element, media.join(c.file).display(), c.name));
    let result = Guest::run(
        &GuestCommand::script(ScriptCall::new("gst-oracle.sh").args(specs))
            .root(root)
            .timeout(Duration::from_secs(120 + 60 * clips.len() as u64))
            .label(format!("gst-oracle-{root:?}")),
    )?;
    if result.exit_code != 0 {
        let mut logs = String::new();
        for c in clips {
            if let Ok(log) = result.read_result(&format!("{}.gst.log", c.name)) {
                if !log.trim().is_empty() {
                    logs.push_str(&format!("--- {} (GStreamer)\n{log}\n", c.name));
                }
            }
        }
        return Err(GuestError::Io(format!(
            "GStreamer oracle capture failed:\n{}{logs}",
            result.report()
        )));
    }
    for c in clips {
        // The buffers first: a trace in place means its capture is whole.
        store_dump(
            &result.result_dir.join(format!("{}.bitstream", c.name)),
            &dest.join(format!("{}.bitstream", c.name)),
        )?;
        let trace = result.read_result(&format!("{}.trace", c.name))?;
        // Through a rename, so that a capture is only ever complete or absent.
        let path = dest.join(format!("{}.trace", c.name));
        let partial = dest.join(format!("{}.trace.partial", c.name));
        std::fs::write(&partial, &trace)
            .and_then(|()| std::fs::rename(&partial, &path))
            .map_err(|e| GuestError::Io(format!("{}: {e}", path.display())))?;
    }
    // The timings of each decode, for the record.
    std::fs::write(dest.join(format!("timings-{root:?}.txt")), &result.stdout)
        .map_err(|e| GuestError::Io(e.to_string()))?;
    Ok(())
}

/// Replaces `dest` with a copy of the dump directory `from`.
fn store_dump(from: &Path, dest: &Path) -> Result<(), GuestError> {
    let io = |e: std::io::Error| {
        GuestError::Io(format!("{} -> {}: {e}", from.display(), dest.display()))
    };
    let partial = dest.with_extension("bitstream.partial");
    if partial.exists() {
        std::fs::remove_dir_all(&partial).map_err(io)?;
    }
    std::fs::create_dir_all(&partial).map_err(io)?;
    for entry in std::fs::read_dir(from).map_err(io)? {
        let entry = entry.map_err(io)?;
        std::fs::copy(entry.path(), partial.join(entry.file_name())).map_err(io)?;
    }
    if dest.exists() {
        std::fs::remove_dir_all(dest).map_err(io)?;
    }
    std::fs::rename(&partial, dest).map_err(io)
}

/// How many frames a stateless decoder is given for this clip, by FFmpeg:
/// packets after the clip's frame-splitting bitstream filter, VP9's and
/// AV1's show_existing_frame headers aside; a field pair in two packets is
/// one picture.
pub fn ffmpeg_frame_count(clip: &OracleClip, media: &Path) -> Result<usize, String> {
    let mut ffmpeg = Command::new("ffmpeg");
    ffmpeg
        .args(["-nostdin", "-v", "error", "-i"])
        .arg(media.join(clip.file))
        .args(["-map", "0:v:0", "-c", "copy"]);
    if let Some(bsf) = clip.frame_split_bsf {
        ffmpeg.args(["-bsf:v", bsf]);
    }
    let output = ffmpeg
        .args(["-f", "framecrc", "-"])
        .output()
        .map_err(|e| format!("ffmpeg: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "ffmpeg failed on {}: {}",
            clip.file,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    // A VP9 frame of one or two bytes is a show_existing_frame header
    // (frame marker, profile, the flag and a slot): shown again, never
    // decoded, so no request.
    // An AV1 frame of three bytes is one too (an OBU header, its size, and
    // the flag, the slot and trailing bits): a frame to decode carries
    // tile data besides its header.
    let show_existing = |size: usize| match clip.frame_split_bsf {
        Some("vp9_superframe_split") => size <= 2,
        Some("av1_frame_split") => size <= 3,
        _ => false,
    };
    Ok(String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter(|l| {
            let size = l.split(',').nth(4).and_then(|s| s.trim().parse().ok());
            !size.is_some_and(show_existing)
        })
        .count()
        / clip.packets_per_picture)
}
