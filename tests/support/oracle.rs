//! GStreamer's v4l2codecs decoders run against visl in the test guest: the
//! reference trace of the controls a correct stateless client sends for each
//! test clip, and the size and sha256 of every OUTPUT buffer it queued.
//!
//! The oracles are stored in the checkout, `tests/data/oracles/`, so that no
//! test runs GStreamer: `index.txt` names for each clip of [`CLIPS`] its file
//! in the test media, the sha256 of the file GStreamer decoded and the
//! GStreamer version that decoded it, with the raw visl trace
//! (`NAME.trace.xz`, xz-compressed when the traces together are over
//! 2 MB, else `NAME.trace`) and `NAME.buffers` (one line per OUTPUT buffer:
//! index, size, sha256). `tests/media/generate.sh` makes the same bytes on
//! every run, so a clip's digest only changes when its recipe or an encoder
//! does; then every use of its oracle fails, naming the clip, until
//! `tests/oracles/refresh.sh` captures the store again ([`refresh_store`]:
//! GStreamer 1.22 in a guest on the host's root, 1.26 in one on the trixie
//! root, with [`capture`]). `tests/oracle_store.rs` checks the store
//! against the clips and the clips' frame counts.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use super::media;
use super::visl_bitstream::{self, BufferDigest};
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
    av1("av1_intrabc", "av1_intrabc.mkv"),
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

/// The stored oracles, part of the checkout: `tests/data/oracles/`.
pub fn store_dir() -> PathBuf {
    super::project_dir().join("tests/data/oracles")
}

/// The store's index: one line per clip (see [`StoredOracle`]).
pub const INDEX: &str = "index.txt";

/// What a failure caused by a stale or incomplete store tells people to do.
pub const REFRESH: &str = "run tests/oracles/refresh.sh to capture the oracles again";

/// The GStreamer each root's oracles come from: the version's prefix and
/// the root's Debian codename.
pub fn expected_gstreamer(root: Root) -> (&'static str, &'static str) {
    match root {
        Root::Host => ("1.22.", "bookworm"),
        Root::Trixie => ("1.26.", "trixie"),
    }
}

/// Scratch space in the target directory: the normalised oracles
/// (`NAME.normalised`, rendered by `visl_trace::render` whenever
/// `oracle_frames` reads a trace, for people to read) and refresh.sh's
/// captures (`refresh/`).
pub fn oracle_dir() -> PathBuf {
    super::target_dir().join("visl-oracle")
}

/// One line of the store's index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredOracle {
    /// The clip's name in [`CLIPS`].
    pub name: String,
    /// The clip's file in the test media.
    pub file: String,
    /// sha256 of the clip GStreamer decoded.
    pub sha256: String,
    /// The version of the GStreamer that decoded it.
    pub gstreamer: String,
    /// The visl trace as traced, in the store: `NAME.trace`, or
    /// `NAME.trace.xz` compressed.
    pub trace: String,
    /// `NAME.buffers` in the store: size and sha256 of every OUTPUT buffer.
    pub buffers: String,
}

const INDEX_COLUMNS: &str = "name file sha256 gstreamer trace buffers";

/// The store's index, read once per process.
pub fn index() -> Result<&'static [StoredOracle], String> {
    static INDEX_READ: OnceLock<Result<Vec<StoredOracle>, String>> = OnceLock::new();
    INDEX_READ
        .get_or_init(|| read_index(&store_dir().join(INDEX)))
        .as_deref()
        .map_err(Clone::clone)
}

/// An index file (`#` starts a comment line).
pub fn read_index(path: &Path) -> Result<Vec<StoredOracle>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.starts_with('#') && !line.trim().is_empty())
        .map(|(n, line)| {
            let columns: Vec<&str> = line.split_whitespace().collect();
            let [name, file, sha256, gstreamer, trace, buffers] = columns[..] else {
                return Err(format!(
                    "{}:{}: not the columns {INDEX_COLUMNS}: {line}",
                    path.display(),
                    n + 1
                ));
            };
            Ok(StoredOracle {
                name: name.to_string(),
                file: file.to_string(),
                sha256: sha256.to_string(),
                gstreamer: gstreamer.to_string(),
                trace: trace.to_string(),
                buffers: buffers.to_string(),
            })
        })
        .collect()
}

/// sha256 of a file, in hex.
pub fn file_sha256(path: &Path) -> Result<String, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(visl_bitstream::sha256_hex(&bytes))
}

/// The stored oracle of a clip, once the clip in the test media is known
/// to be the one GStreamer decoded (the same sha256); an error naming the
/// clip otherwise.
pub fn stored(clip: &OracleClip) -> Result<&'static StoredOracle, String> {
    let entry = index()
        .map_err(|e| format!("{}: the oracle store's index: {e}; {REFRESH}", clip.name))?
        .iter()
        .find(|e| e.name == clip.name)
        .ok_or_else(|| {
            format!(
                "{}: no stored oracle in tests/data/oracles/{INDEX}; {REFRESH}",
                clip.name
            )
        })?;
    if entry.file != clip.file {
        return Err(format!(
            "{}: the stored oracle is of {}, the clip is {}; {REFRESH}",
            clip.name, entry.file, clip.file
        ));
    }
    let path = media::dir().join(clip.file);
    let sha256 = file_sha256(&path).map_err(|e| format!("{}: {e}", clip.name))?;
    if sha256 != entry.sha256 {
        return Err(format!(
            "{}: {} is not the clip its stored oracle was made from (sha256 {sha256}, \
             the oracle's {}): tests/media/generate.sh or an encoder changed it; {REFRESH}",
            clip.name,
            path.display(),
            entry.sha256
        ));
    }
    Ok(entry)
}

/// The stored oracle trace (raw text) of a clip.
pub fn oracle_trace(clip: &OracleClip) -> Result<String, String> {
    let entry = stored(clip)?;
    read_trace(&store_dir().join(&entry.trace)).map_err(|e| format!("{}: {e}", clip.name))
}

/// A stored trace; one ending in `.xz` is decompressed (xz(1)).
pub fn read_trace(path: &Path) -> Result<String, String> {
    if path.extension().is_some_and(|e| e == "xz") {
        let output = Command::new("xz")
            .arg("-dc")
            .arg(path)
            .output()
            .map_err(|e| format!("xz -dc {}: {e}", path.display()))?;
        if !output.status.success() {
            return Err(format!(
                "xz -dc {}: {}",
                path.display(),
                String::from_utf8_lossy(&output.stderr)
            ));
        }
        String::from_utf8(output.stdout).map_err(|e| format!("{}: {e}", path.display()))
    } else {
        std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
    }
}

/// The oracle of a clip, normalised.
/// Also (re)writes `NAME.normalised` in [`oracle_dir`], the rendered form,
/// for people to read.
pub fn oracle_frames(clip: &OracleClip) -> Result<Vec<FrameRecord>, String> {
    let trace = oracle_trace(clip)?;
    let frames = visl_trace::normalise(&trace).map_err(|e| format!("{}: {e}", clip.name))?;
    let dir = oracle_dir();
    let path = dir.join(format!("{}.normalised", clip.name));
    std::fs::create_dir_all(&dir)
        .and_then(|()| std::fs::write(&path, visl_trace::render(&frames)))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(frames)
}

/// Size and sha256 of every OUTPUT buffer GStreamer queued for the clip, in
/// the order visl decoded them (captured with its trace, in visl's default
/// mode); `visl_bitstream::differences` compares a run's buffers with them.
pub fn oracle_output_digests(clip: &OracleClip) -> Result<Vec<BufferDigest>, String> {
    let entry = stored(clip)?;
    let path = store_dir().join(&entry.buffers);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("{}: {}: {e}", clip.name, path.display()))?;
    visl_bitstream::parse_digests(&text)
        .map_err(|e| format!("{}: {}: {e}", clip.name, path.display()))
}

/// The GStreamer of a capture's root, as `gst-version.sh` reported it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GstRelease {
    /// e.g. `1.22.0`.
    pub version: String,
    /// The root's Debian codename.
    pub codename: String,
}

impl GstRelease {
    /// Parses `gst-launch-1.0 --version` followed by the codename line.
    pub fn parse(text: &str) -> Option<Self> {
        let version = text
            .lines()
            .find_map(|l| l.strip_prefix("GStreamer "))?
            .trim()
            .to_string();
        let codename = text.lines().rev().find(|l| !l.trim().is_empty())?;
        Some(Self {
            version,
            codename: codename.trim().to_string(),
        })
    }
}

/// Decodes the clips with GStreamer in one guest run and stores the traces
/// (`NAME.trace`) and the OUTPUT buffers (`NAME.bitstream/`) in `dest`;
/// returns the GStreamer release that decoded them.
pub fn capture(
    clips: &[&OracleClip],
    root: Root,
    media: &Path,
    dest: &Path,
) -> Result<GstRelease, GuestError> {
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
    let version = result.read_result("gst-version.txt")?;
    let release = GstRelease::parse(&version).ok_or_else(|| {
        GuestError::Io(format!(
            "no GStreamer version in gst-version.sh's output:\n{version}\n{}",
            result.report()
        ))
    })?;
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
    Ok(release)
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

/// Traces that together take more bytes than this are stored compressed
/// with xz.
const COMPRESS_ABOVE: usize = 2_000_000;

/// Captures the oracle of every clip of [`CLIPS`] again, GStreamer 1.22 in
/// a host-root guest and 1.26 in a trixie-root guest (a boot each), and
/// replaces the store with them; fails, leaving the store alone, if a
/// capture fails or a root's GStreamer is not the expected one
/// ([`expected_gstreamer`]). tests/oracles/refresh.sh runs it. Returns a
/// line per root saying what it captured.
pub fn refresh_store() -> Result<Vec<String>, String> {
    let media = media::dir();
    let scratch = oracle_dir().join("refresh");
    let io = |path: &Path, e: std::io::Error| format!("{}: {e}", path.display());
    if scratch.exists() {
        std::fs::remove_dir_all(&scratch).map_err(|e| io(&scratch, e))?;
    }
    // The clips' digests before GStreamer decodes them.
    let digests: Vec<String> = CLIPS
        .iter()
        .map(|c| file_sha256(&media.join(c.file)))
        .collect::<Result<_, _>>()?;
    let mut summary = Vec::new();
    let mut versions = Vec::new();
    for root in [Root::Host, Root::Trixie] {
        let dest = scratch.join(format!("{root:?}"));
        std::fs::create_dir_all(&dest).map_err(|e| io(&dest, e))?;
        let clips = clips_for(root);
        let release = capture(&clips, root, media, &dest).map_err(|e| e.to_string())?;
        let (version, codename) = expected_gstreamer(root);
        if !release.version.starts_with(version) || release.codename != codename {
            return Err(format!(
                "the {root:?} root runs GStreamer {} on {}: its oracles must come from \
                 GStreamer {version}x on {codename} (tests/support/oracle.rs, expected_gstreamer)",
                release.version, release.codename
            ));
        }
        summary.push(format!(
            "{root:?} root: GStreamer {} on {}, {} clips",
            release.version,
            release.codename,
            clips.len()
        ));
        versions.push((root, dest, release.version));
    }
    let place = |clip: &OracleClip| {
        versions
            .iter()
            .find(|(root, _, _)| *root == clip.root)
            .map(|(_, dest, version)| (dest, version))
            .expect("every root was captured")
    };
    let traces: Vec<String> = CLIPS
        .iter()
        .map(|c| {
            let path = place(c).0.join(format!("{}.trace", c.name));
            std::fs::read_to_string(&path).map_err(|e| io(&path, e))
        })
        .collect::<Result<_, _>>()?;
    let compress = traces.iter().map(String::len).sum::<usize>() > COMPRESS_ABOVE;

    // The new store next to the old one, swapped in whole when complete.
    let store = store_dir();
    let new = store.with_file_name("oracles.new");
    if new.exists() {
        std::fs::remove_dir_all(&new).map_err(|e| io(&new, e))?;
    }
    std::fs::create_dir_all(&new).map_err(|e| io(&new, e))?;
    let kernel = std::fs::read_to_string(vm::bed_dir().join("kver")).unwrap_or_default();
    let mut index = format!(
        "# GStreamer's decodes of the clips of tests/media/generate.sh through visl\n\
         # (support::oracle::CLIPS), written by tests/oracles/refresh.sh: for each\n\
         # clip, its file in the test media, the sha256 of the file decoded, the\n\
         # GStreamer version that decoded it, the visl trace and the size and\n\
         # sha256 of each OUTPUT buffer. Guest kernel {}.\n\
         # {INDEX_COLUMNS}\n",
        kernel.trim()
    );
    for ((clip, trace), sha256) in CLIPS.iter().zip(&traces).zip(&digests) {
        let (dest, version) = place(clip);
        let mut trace_name = format!("{}.trace", clip.name);
        let trace_path = new.join(&trace_name);
        std::fs::write(&trace_path, trace).map_err(|e| io(&trace_path, e))?;
        if compress {
            let status = Command::new("xz")
                .args(["-9", "-T1"])
                .arg(&trace_path)
                .status()
                .map_err(|e| format!("xz {}: {e}", trace_path.display()))?;
            if !status.success() {
                return Err(format!("xz {} failed", trace_path.display()));
            }
            trace_name.push_str(".xz");
        }
        let buffers = visl_bitstream::read_dump(&dest.join(format!("{}.bitstream", clip.name)))?;
        let digests: Vec<BufferDigest> = buffers.iter().map(|b| BufferDigest::of(b)).collect();
        let buffers_name = format!("{}.buffers", clip.name);
        let buffers_path = new.join(&buffers_name);
        let header = format!(
            "{} (sha256 {sha256}): the OUTPUT buffers GStreamer {version} queued, \
             in the order visl decoded them",
            clip.file
        );
        std::fs::write(
            &buffers_path,
            visl_bitstream::render_digests(&header, &digests),
        )
        .map_err(|e| io(&buffers_path, e))?;
        index.push_str(&format!(
            "{} {} {sha256} {version} {trace_name} {buffers_name}\n",
            clip.name, clip.file
        ));
    }
    let index_path = new.join(INDEX);
    std::fs::write(&index_path, index).map_err(|e| io(&index_path, e))?;
    let old = store.with_file_name("oracles.old");
    if old.exists() {
        std::fs::remove_dir_all(&old).map_err(|e| io(&old, e))?;
    }
    if store.exists() {
        std::fs::rename(&store, &old).map_err(|e| io(&store, e))?;
    }
    std::fs::rename(&new, &store).map_err(|e| io(&new, e))?;
    if old.exists() {
        std::fs::remove_dir_all(&old).map_err(|e| io(&old, e))?;
    }
    Ok(summary)
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
