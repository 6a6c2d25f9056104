//! Shared by the H.264, HEVC and AV1 header tests: finding the generated
//! clips, and asking the ffmpeg CLI (the oracle) for an elementary stream
//! with its header trace.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Every H.264 clip tests/media/generate.sh makes.
pub const H264_CLIPS: &[&str] = &[
    "h264_baseline.mp4",
    "h264_main_bframes.mkv",
    "h264_high.ts",
    "h264_scaling_matrix.mp4",
    "h264_weighted.mp4",
    "h264_slices.mp4",
    "h264_mbaff.ts",
    "h264_paff.ts",
    "h264_odd_size.mp4",
    "h264_resolution_change.ts",
    "h264_cqm_444.mp4",
    "h264_high10_intra.mkv",
];

/// Every HEVC clip tests/media/generate.sh makes.
pub const HEVC_CLIPS: &[&str] = &[
    "hevc_main.mkv",
    "hevc_main10.mp4",
    "hevc_wpp.mkv",
    "hevc_slices.mkv",
    "hevc_bpyramid.mkv",
    "hevc_scaling_default.mkv",
    "hevc_scaling_explicit.mkv",
    "hevc_weighted.mkv",
    "hevc_open_gop.ts",
    "hevc_tall_wpp.mkv",
    "hevc_resolution_change.ts",
];

/// Every AV1 clip tests/media/generate.sh makes.
pub const AV1_CLIPS: &[&str] = &[
    "av1.mkv",
    "av1_10bit.mkv",
    "av1_tiles.mkv",
    "av1_film_grain.mkv",
    "av1_altref.mkv",
    "av1_segmentation.mkv",
    "av1_superres.mkv",
    "av1_resolution_change.mkv",
];

/// The codecs whose elementary streams FFmpeg writes and traces here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Codec {
    H264,
    Hevc,
    /// MPEG-2 video: units behind start codes as Annex-B's, traced as read.
    Mpeg2,
    /// The packets' OBUs as they are (low-overhead format), one frame per
    /// packet as the V4L2 path takes them.
    Av1,
}

impl Codec {
    /// To Annex-B, an AUD before every access unit, then the trace.
    fn bitstream_filters(self) -> &'static str {
        match self {
            Codec::H264 => "h264_mp4toannexb,h264_metadata=aud=insert,trace_headers",
            Codec::Hevc => "hevc_mp4toannexb,hevc_metadata=aud=insert,trace_headers",
            Codec::Mpeg2 => "trace_headers",
            Codec::Av1 => "av1_frame_split,trace_headers",
        }
    }

    /// The raw-stream muxer (also the file extension): for AV1 the packets'
    /// bytes alone (the obu muxer would add temporal delimiters FFmpeg
    /// did not trace).
    fn format(self) -> &'static str {
        match self {
            Codec::H264 => "h264",
            Codec::Hevc => "hevc",
            Codec::Mpeg2 => "mpeg2video",
            Codec::Av1 => "data",
        }
    }

    /// The first element of every unit (NAL unit, OBU) in the trace.
    /// `None`: any element at bit 0 (MPEG-2's start code value).
    fn first_element(self) -> Option<&'static str> {
        match self {
            Codec::H264 | Codec::Hevc => Some("forbidden_zero_bit"),
            Codec::Av1 => Some("obu_forbidden_bit"),
            Codec::Mpeg2 => None,
        }
    }
}

/// One syntax element of FFmpeg's trace: bit position, name without array
/// indices, value.
pub type Element = (usize, String, i64);

pub struct AnnexB {
    /// The elementary stream FFmpeg wrote (an AUD before every access unit;
    /// AV1: the OBUs).
    pub stream: Vec<u8>,
    /// FFmpeg's trace_headers of exactly those bytes, one list per NAL unit
    /// (AV1: per OBU).
    pub trace: Vec<Vec<Element>>,
    /// The size in bits of each element of `trace`.
    pub bit_lengths: Vec<Vec<usize>>,
}

pub fn strip_indices(name: &str) -> String {
    match name.find('[') {
        Some(i) => name[..i].to_string(),
        None => name.to_string(),
    }
}

/// Converts `clip` to an H.264 Annex-B stream with AUDs and traces its
/// headers.
pub fn annex_b_with_trace(clip: &Path, work: &Path) -> AnnexB {
    annex_b_with_trace_of(Codec::H264, clip, work)
}

/// Converts `clip` (of `codec`) to an Annex-B stream with AUDs and traces
/// its headers.
pub fn annex_b_with_trace_of(codec: Codec, clip: &Path, work: &Path) -> AnnexB {
    let out = work.join(format!(
        "{}.{}",
        clip.file_name().unwrap().to_string_lossy(),
        codec.format()
    ));
    // Tests running at once may trace the same clip: each writes its own
    // file, renamed into place once read (never read while another writes).
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let written = out.with_extension(format!(
        "{}.{}-{call}.partial",
        codec.format(),
        std::process::id()
    ));
    let result = Command::new("ffmpeg")
        .args(["-nostdin", "-nostats", "-hide_banner", "-y", "-i"])
        .arg(clip)
        .args([
            "-map",
            "0:v:0",
            "-c:v",
            "copy",
            "-bsf:v",
            codec.bitstream_filters(),
            "-f",
            codec.format(),
        ])
        .arg(&written)
        .output()
        .expect("ffmpeg must be installed (packaging/install-deps.sh)");
    assert!(
        result.status.success(),
        "ffmpeg failed on {}: {}",
        clip.display(),
        String::from_utf8_lossy(&result.stderr)
    );
    let stderr = String::from_utf8_lossy(&result.stderr);
    let mut trace: Vec<Vec<Element>> = Vec::new();
    let mut bit_lengths: Vec<Vec<usize>> = Vec::new();
    let mut in_extradata = false;
    for line in stderr.lines() {
        let Some(at) = line.find("[trace_headers @ ") else {
            continue;
        };
        let Some(close) = line[at..].find("] ") else {
            continue;
        };
        let text = line[at + close + 2..].trim();
        if text == "Extradata" {
            in_extradata = true;
            continue;
        }
        if text.starts_with("Packet:") {
            in_extradata = false;
            continue;
        }
        if in_extradata {
            continue;
        }
        let fields: Vec<&str> = text.split_whitespace().collect();
        // "<pos> <name> <bits> = <value>"
        let (Some(pos), Some(eq)) = (
            fields.first().and_then(|p| p.parse::<usize>().ok()),
            fields.iter().position(|f| *f == "="),
        ) else {
            continue;
        };
        if eq < 2 || eq + 1 >= fields.len() {
            continue;
        }
        let name = strip_indices(fields[1]);
        let value: i64 = fields[eq + 1].parse().expect("trace value");
        // A NAL unit starts with its header, an OBU with its own; an MPEG-2
        // unit with its start code value, the only element at bit 0.
        if pos == 0 && codec.first_element().is_none_or(|first| name == first) {
            trace.push(Vec::new());
            bit_lengths.push(Vec::new());
        }
        if let (Some(nal), Some(lengths)) = (trace.last_mut(), bit_lengths.last_mut()) {
            nal.push((pos, name, value));
            lengths.push(fields[2..eq].iter().map(|f| f.len()).sum());
        }
    }
    let stream = std::fs::read(&written).expect("ffmpeg wrote no stream");
    std::fs::rename(&written, &out)
        .unwrap_or_else(|e| panic!("{} -> {}: {e}", written.display(), out.display()));
    AnnexB {
        stream,
        trace,
        bit_lengths,
    }
}

/// Splits an Annex-B stream into access units at its AUDs.
pub fn access_units(stream: &[u8]) -> Vec<Vec<u8>> {
    let mut units: Vec<Vec<u8>> = Vec::new();
    for nal in reel::codec::bitstream::annexb::nal_units(stream) {
        if nal[0] & 0x1f == 9 || units.is_empty() {
            units.push(Vec::new());
        }
        let unit = units.last_mut().unwrap();
        unit.extend_from_slice(&[0, 0, 0, 1]);
        unit.extend_from_slice(nal);
    }
    units
}

/// Runs a command and returns its stdout, failing the test loudly.
pub fn run(cmd: &mut Command) -> String {
    let out = cmd.output().expect("cannot run oracle command");
    assert!(
        out.status.success(),
        "{:?} failed: {}",
        cmd,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn work_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/h264-tests")
        .join(name);
    std::fs::create_dir_all(&dir).expect("cannot create work directory");
    dir
}
