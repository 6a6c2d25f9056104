//! The table: one row per clip the codec suites decode through visl, with
//! what the clip carries, FFmpeg's count of its shown frames, and which of
//! the generic checks (checks.rs) apply to it.
//!
//! Every clip of `support::oracle::CLIPS` that GStreamer decodes whole has
//! a row whose name is the clip's (`table_covers_every_oracle_clip`); the
//! rest are clips without a GStreamer oracle, checked by framemd5 and by
//! their codec's own module.

use std::path::PathBuf;

use crate::support::media;
use crate::support::oracle::{self, OracleClip};

/// The codecs of the table. What differs between them beyond the rows
/// (the checks of their own, the guest calls they add) is in their module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Codec {
    H264,
    Hevc,
    Vp8,
    Vp9,
    Mpeg2,
    Av1,
}

pub const CODECS: [Codec; 6] = [
    Codec::H264,
    Codec::Hevc,
    Codec::Vp8,
    Codec::Vp9,
    Codec::Mpeg2,
    Codec::Av1,
];

impl Codec {
    /// Its name in run names and `support::damage`'s labels.
    pub fn label(self) -> &'static str {
        match self {
            Self::H264 => "h264",
            Self::Hevc => "hevc",
            Self::Vp8 => "vp8",
            Self::Vp9 => "vp9",
            Self::Mpeg2 => "mpeg2",
            Self::Av1 => "av1",
        }
    }

    /// The environment forcing frame-based decoding with Annex-B start
    /// codes, for the codecs whose drivers offer both modes.
    pub fn frame_mode_env(self) -> Option<[(&'static str, &'static str); 2]> {
        match self {
            Self::H264 => Some([
                ("REEL_V4L2_H264_MODE", "frame"),
                ("REEL_V4L2_H264_START_CODE", "annexb"),
            ]),
            Self::Hevc => Some([
                ("REEL_V4L2_HEVC_MODE", "frame"),
                ("REEL_V4L2_HEVC_START_CODE", "annexb"),
            ]),
            _ => None,
        }
    }

    /// How many OUTPUT buffers a decode of a clip queues.
    pub fn output_buffers(self) -> BufferCount {
        match self {
            // One per slice (segment): at least one per picture.
            Self::H264 | Self::Hevc => BufferCount::AtLeastOnePerPicture,
            // One per picture, or per field of a field pair.
            Self::Mpeg2 => BufferCount::RequestsPerPicture,
            // One per container packet, holding the whole frame.
            Self::Vp8 => BufferCount::WholePackets,
            // One per frame given to the decoder (hidden ones included,
            // frames shown again making none).
            Self::Vp9 | Self::Av1 => BufferCount::OnePerFrameTraced,
        }
    }

    /// Whether the codec has a source of damaged copies in
    /// `support::damage` (H.264 has its own truncated and corrupted
    /// files, h264.rs).
    pub fn has_damaged_copies(self) -> bool {
        self != Self::H264
    }

    /// What `reel probe FILE` must print for this codec's decoder.
    pub fn probe(self) -> Option<Probe> {
        match self {
            Self::H264 => Some(Probe {
                file: "h264_baseline.mp4",
                expected: &[
                    "/dev/video0: driver visl",
                    "coded formats:",
                    "S264",
                    "h264 decode mode: 0=Slice-Based, 1=Frame-Based",
                    "reel decodes h264 here (S264)",
                    "decoder: V4L2 stateless /dev/video0 (visl; SliceBased, Annex-B start codes: false)",
                ],
            }),
            Self::Vp8 => Some(Probe {
                file: "vp8_altref.webm",
                expected: &[
                    "VP8F",
                    "reel decodes vp8 here (VP8F)",
                    "decoder: V4L2 stateless /dev/video0 (visl; VP8, one request per frame)",
                ],
            }),
            Self::Mpeg2 => Some(Probe {
                file: "mpeg2.ts",
                expected: &["MG2S", "reel decodes mpeg2video here (MG2S)"],
            }),
            Self::Av1 => Some(Probe {
                file: "av1_shown_twice.mkv",
                expected: &[
                    "AV1F",
                    "reel decodes av1 here (AV1F)",
                    "(visl; AV1, one request per frame, film grain applied by the decoder)",
                ],
            }),
            Self::Hevc | Self::Vp9 => None,
        }
    }
}

/// The OUTPUT buffers a decode must have queued, besides their bytes
/// equalling GStreamer's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BufferCount {
    AtLeastOnePerPicture,
    /// The picture's requests (mpeg2.rs: two for field pictures) for each
    /// picture.
    RequestsPerPicture,
    /// One per container packet, each the packet's bytes.
    WholePackets,
    /// As many as the frames the trace holds.
    OnePerFrameTraced,
}

/// A `reel probe FILE` run and the lines its output must hold.
#[derive(Debug, Clone, Copy)]
pub struct Probe {
    pub file: &'static str,
    pub expected: &'static [&'static str],
}

/// What a row's decode is compared with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Oracle {
    /// GStreamer's decode of the clip, the oracle clip named as the row.
    Whole,
    /// GStreamer cannot decode the whole on visl: its parts
    /// (`oracle::parts_of`), each decoded alone, in order.
    Parts,
    /// None: the row is checked by framemd5 (and its codec's module).
    None,
}

/// Where the seek check's expected frames come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeekExpects {
    /// The pts of reel's whole decode (the row's framemd5 run) from the
    /// target on.
    ReelPts,
    /// The frames themselves (pts and MD5): the key frame before the
    /// target is the clip's first, so the pictures are those of the whole
    /// decode.
    ReelFrames,
    /// FFmpeg's framemd5 pts from the target on, in FFmpeg's time base.
    FfmpegPts,
}

/// `--start SECONDS` with `--output framemd5`: the frames from the first
/// at or after the target on.
#[derive(Debug, Clone, Copy)]
pub struct Seek {
    pub seconds: f64,
    pub expects: SeekExpects,
}

/// Two playbacks in weston 14 headless (tests/vm/guest/fwht-play.sh):
/// looping, and paused at `paused_at` seconds.
#[derive(Debug, Clone, Copy)]
pub struct Weston {
    pub paused_at: f64,
    /// The looping playback goes on until reel has logged this.
    pub loop_until: Option<&'static str>,
}

/// What reel logs when an AV1 frame is shown again.
pub const AV1_SHOWN_AGAIN: &str = "AV1 show_existing_frame";

/// One clip and the checks that apply to it.
#[derive(Debug, Clone, Copy)]
pub struct Row {
    /// Names the row's runs (`trace-NAME`, `md5a-NAME`...) and, for an
    /// `Oracle::Whole` row, its oracle clip.
    pub name: &'static str,
    pub file: &'static str,
    pub codec: Codec,
    /// The features it was made to carry.
    pub carries: &'static str,
    /// FFmpeg's count of its shown frames.
    pub frames: usize,
    pub oracle: Oracle,
    /// Decoded a second time frame-based with Annex-B start codes.
    pub frame_mode: bool,
    /// Decoded twice with `--output framemd5`.
    pub framemd5: bool,
    pub seek: Option<Seek>,
    pub weston: Option<Weston>,
}

impl Row {
    pub fn path(&self) -> PathBuf {
        media::dir().join(self.file)
    }

    /// The oracle clip of an `Oracle::Whole` row.
    pub fn oracle_clip(&self) -> Option<&'static OracleClip> {
        match self.oracle {
            Oracle::Whole => Some(
                oracle::clip(self.name)
                    .unwrap_or_else(|| panic!("{}: not an oracle clip", self.name)),
            ),
            Oracle::Parts | Oracle::None => None,
        }
    }

    /// Traced (and its OUTPUT buffers kept) in visl's default mode.
    pub fn traced(&self) -> bool {
        self.oracle != Oracle::None
    }
}

/// A row with an oracle and the frame-based run where its codec has one;
/// the other runs are added with the methods below.
const fn oracle_row(
    codec: Codec,
    name: &'static str,
    file: &'static str,
    frames: usize,
    carries: &'static str,
) -> Row {
    Row {
        name,
        file,
        codec,
        carries,
        frames,
        oracle: Oracle::Whole,
        frame_mode: matches!(codec, Codec::H264 | Codec::Hevc),
        framemd5: false,
        seek: None,
        weston: None,
    }
}

/// A clip without a GStreamer oracle: framemd5 only.
const fn framemd5_row(
    codec: Codec,
    name: &'static str,
    file: &'static str,
    frames: usize,
    carries: &'static str,
) -> Row {
    Row {
        oracle: Oracle::None,
        frame_mode: false,
        framemd5: true,
        ..oracle_row(codec, name, file, frames, carries)
    }
}

impl Row {
    const fn framemd5(self) -> Self {
        Self {
            framemd5: true,
            ..self
        }
    }

    /// A seek to 0.5 s (every clip has a frame there).
    const fn seek(self, expects: SeekExpects) -> Self {
        self.seek_to(0.5, expects)
    }

    const fn seek_to(self, seconds: f64, expects: SeekExpects) -> Self {
        Self {
            seek: Some(Seek { seconds, expects }),
            ..self
        }
    }

    const fn weston(self, paused_at: f64, loop_until: Option<&'static str>) -> Self {
        Self {
            weston: Some(Weston {
                paused_at,
                loop_until,
            }),
            ..self
        }
    }

    /// Its oracle is GStreamer's decode of its parts.
    const fn in_parts(self) -> Self {
        Self {
            oracle: Oracle::Parts,
            ..self
        }
    }
}

use Codec::{Av1, Hevc, Mpeg2, Vp8, Vp9, H264};
use SeekExpects::{FfmpegPts, ReelFrames, ReelPts};

#[rustfmt::skip]
pub const ROWS: &[Row] = &[
    oracle_row(H264, "h264_baseline", "h264_baseline.mp4", 30, "baseline profile"),
    oracle_row(H264, "h264_main_bframes", "h264_main_bframes.mkv", 30, "main profile, B-frames reordered")
        .framemd5().seek(ReelPts),
    oracle_row(H264, "h264_high", "h264_high.ts", 30, "high profile, 8x8 transform, MPEG-TS"),
    oracle_row(H264, "h264_scaling_matrix", "h264_scaling_matrix.mp4", 30, "custom scaling matrices"),
    oracle_row(H264, "h264_weighted", "h264_weighted.mp4", 30, "weighted prediction"),
    oracle_row(H264, "h264_slices", "h264_slices.mp4", 30, "4 slices per picture"),
    oracle_row(H264, "h264_mbaff", "h264_mbaff.ts", 30, "interlaced coding (ildct+ilme), top field first")
        .framemd5(),
    oracle_row(H264, "h264_paff", "h264_paff.ts", 12, "interlaced field pairs, a packet per field")
        .framemd5(),
    oracle_row(H264, "h264_odd_size", "h264_odd_size.mp4", 30, "250x130, cropped"),
    oracle_row(H264, "h264_resolution_change", "h264_resolution_change.ts", 60, "two segments of different sizes, each from an IDR")
        .framemd5(),

    oracle_row(Hevc, "hevc_main", "hevc_main.mkv", 30, "Main profile").framemd5(),
    oracle_row(Hevc, "hevc_wpp", "hevc_wpp.mkv", 15, "wavefront parallel processing").framemd5(),
    oracle_row(Hevc, "hevc_slices", "hevc_slices.mkv", 15, "4 slices per picture").framemd5(),
    oracle_row(Hevc, "hevc_bpyramid", "hevc_bpyramid.mkv", 30, "B-pyramid").framemd5(),
    oracle_row(Hevc, "hevc_scaling_default", "hevc_scaling_default.mkv", 15, "default scaling lists").framemd5(),
    oracle_row(Hevc, "hevc_scaling_explicit", "hevc_scaling_explicit.mkv", 15, "scaling lists in the stream").framemd5(),
    oracle_row(Hevc, "hevc_weighted", "hevc_weighted.mkv", 30, "weighted prediction").framemd5(),
    oracle_row(Hevc, "hevc_open_gop", "hevc_open_gop.ts", 30, "open GOP: CRA every 16, B-frames").framemd5(),
    oracle_row(Hevc, "hevc_tall_wpp", "hevc_tall_wpp.mkv", 3, "128x2304, WPP: many entry points").framemd5(),
    // GStreamer 1.26 fails the mid-stream S_FMT on visl (oracle.rs).
    framemd5_row(Hevc, "hevc_resolution_change", "hevc_resolution_change.ts", 60, "two segments of different sizes"),

    oracle_row(Vp8, "vp8", "vp8.webm", 30, "a key frame every 30").framemd5(),
    oracle_row(Vp8, "vp8_altref", "vp8_altref.webm", 30, "a hidden altref frame, golden/altref references")
        .framemd5().seek(ReelFrames).weston(0.5, None),
    oracle_row(Vp8, "vp8_segmentation", "vp8_segmentation.webm", 30, "segmentation with map updates, 4 DCT partitions")
        .framemd5(),
    oracle_row(Vp8, "vp8_odd_size", "vp8_odd_size.webm", 30, "174x142, key frames at 0 and 15").framemd5(),

    oracle_row(Vp9, "vp9", "vp9.webm", 30, "profile 0, one key frame").framemd5().seek(ReelPts),
    oracle_row(Vp9, "vp9_tiles", "vp9_tiles.webm", 9, "1024x576, tiles").framemd5(),
    oracle_row(Vp9, "vp9_profile2", "vp9_profile2.webm", 15, "profile 2 (10 bits), key frames at 0 and 8").framemd5(),
    oracle_row(Vp9, "vp9_altref", "vp9_altref.webm", 30, "hidden altref frames in superframes").framemd5(),
    oracle_row(Vp9, "vp9_show_existing", "vp9_show_existing.webm", 18, "show_existing_frame")
        .framemd5().weston(0.2, None),
    // GStreamer drops inter frames of another size than their references
    // (oracle.rs); vp9.rs checks the reference scaling.
    framemd5_row(Vp9, "vp9_resize", "vp9_resize.webm", 20, "320x240, then 240x180 from an inter frame on"),

    oracle_row(Mpeg2, "mpeg2", "mpeg2.ts", 30, "B-frames, a key frame every 15").framemd5(),
    oracle_row(Mpeg2, "mpeg2_matrices", "mpeg2_matrices.ts", 30, "custom quantiser matrices, a key frame every 12")
        .framemd5().seek(ReelPts).weston(0.5, None),
    oracle_row(Mpeg2, "mpeg2_interlaced", "mpeg2_interlaced.ts", 30, "interlaced frame pictures").framemd5(),
    oracle_row(Mpeg2, "mpeg2_fields", "mpeg2_fields.ts", 7, "field pictures, two requests a frame").framemd5(),

    oracle_row(Av1, "av1", "av1.mkv", 30, "8 bits, one key frame").framemd5().seek(FfmpegPts),
    oracle_row(Av1, "av1_10bit", "av1_10bit.mkv", 30, "10 bits").framemd5(),
    oracle_row(Av1, "av1_tiles", "av1_tiles.mkv", 30, "2x2 tiles").framemd5(),
    oracle_row(Av1, "av1_film_grain", "av1_film_grain.mkv", 30, "film grain").framemd5(),
    oracle_row(Av1, "av1_altref", "av1_altref.mkv", 30, "hidden altref frames shown again").framemd5(),
    oracle_row(Av1, "av1_segmentation", "av1_segmentation.mkv", 15, "segmentation").framemd5(),
    // Shown frames no slot keeps (refresh_frame_flags 0) before 0.4 s.
    oracle_row(Av1, "av1_superres", "av1_superres.mkv", 15, "superres, 318x238")
        .framemd5().seek_to(0.4, FfmpegPts),
    oracle_row(Av1, "av1_intrabc", "av1_intrabc.mkv", 15, "screen content, intra block copy").framemd5(),
    // GStreamer 1.26 fails the mid-stream S_FMT on visl (oracle.rs).
    framemd5_row(Av1, "av1_resolution_change", "av1_resolution_change.mkv", 30, "two sequences of different sizes, each from a key frame")
        .in_parts(),
    // av1_altref with every frame shown again shown twice
    // (tests/media/av1_show_again.py).
    framemd5_row(Av1, "av1_shown_twice", "av1_shown_twice.mkv", 34, "hidden frames each shown twice in a row")
        .weston(0.2, Some(AV1_SHOWN_AGAIN)),
];

/// The row named `name`; panics when there is none.
pub fn row(name: &str) -> &'static Row {
    ROWS.iter()
        .find(|r| r.name == name)
        .unwrap_or_else(|| panic!("{name}: no row of the table"))
}

/// The rows of one codec.
pub fn rows_of(codec: Codec) -> impl Iterator<Item = &'static Row> {
    ROWS.iter().filter(move |r| r.codec == codec)
}
