//! Demuxing with FFmpeg: stream selection, AVCC/HVCC to Annex-B, container
//! seek; and raw FWHT streams, which FFmpeg cannot read.

pub mod avcc;
mod demuxer;
mod ffmpeg_log;
mod file_io;
pub mod fwht;
pub mod location;
pub mod network;
mod packet_data;
mod params;
mod reader;
mod source_input;
mod stream_probe;
mod timeline;
pub mod tracks;

use std::fmt;
use std::path::PathBuf;
use std::sync::Once;
use std::time::Duration;

use thiserror::Error;

use crate::codec::bitstream::NalIndex;

pub use avcc::{AnnexBConverter, BitstreamError, NalCodec};
pub use packet_data::PacketData;
pub(crate) use params::CodecParameters;
pub use reader::Demuxer;
pub use source_input::{discard_other_streams, SourceInput};

/// Video codecs reel decodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Codec {
    H264,
    Hevc,
    Vp8,
    Vp9,
    Av1,
    Mpeg2,
    /// vicodec's FWHT: raw streams only (`fwht` reader), no software decoder.
    Fwht,
}

impl Codec {
    pub const ALL: [Codec; 7] = [
        Self::H264,
        Self::Hevc,
        Self::Vp8,
        Self::Vp9,
        Self::Av1,
        Self::Mpeg2,
        Self::Fwht,
    ];

    /// The NAL syntax of codecs whose packets are converted to Annex-B.
    pub fn nal_codec(self) -> Option<NalCodec> {
        match self {
            Self::H264 => Some(NalCodec::H264),
            Self::Hevc => Some(NalCodec::Hevc),
            _ => None,
        }
    }
}

impl fmt::Display for Codec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::H264 => "h264",
            Self::Hevc => "hevc",
            Self::Vp8 => "vp8",
            Self::Vp9 => "vp9",
            Self::Av1 => "av1",
            Self::Mpeg2 => "mpeg2video",
            Self::Fwht => "fwht",
        })
    }
}

/// What the demuxer knows about the selected video stream.
#[derive(Clone, Debug)]
pub struct VideoStreamInfo {
    /// Index of the stream in the container.
    pub index: usize,
    pub codec: Codec,
    /// Coded size from the container / first sequence header; a stream may
    /// change size later (each `Frame` carries its own).
    pub width: u32,
    pub height: u32,
    /// Time base of every timestamp in `Packet` and of `Frame::pts_raw`.
    pub time_base: (i32, i32),
    /// Frame rate as FFmpeg guesses it (`av_guess_frame_rate`), if known.
    pub frame_rate: Option<(i32, i32)>,
    pub duration: Option<Duration>,
    /// Presentation time of the stream's first frame (0 when unknown), on the
    /// same clock as `Frame::pts`.
    pub start_time: Duration,
    /// `start_time` in `time_base` units (0 when unknown).
    pub start_pts: i64,
    /// Start of the whole container (earliest stream) in microseconds, as
    /// `ffmpeg` subtracts it from output timestamps; 0 when unknown.
    pub container_start_us: i64,
    /// Sample aspect ratio (num, den); (1, 1) when unknown.
    pub sample_aspect: (u32, u32),
    /// Bits per luma sample (8 when unknown).
    pub bit_depth: u32,
    /// libavcodec's name of the coded pixel layout (e.g. `yuv420p10le`), if known.
    pub pixel_format: Option<String>,
    /// The profile's name, as libavcodec knows it (`High`, `Main 10`...).
    pub profile: Option<String>,
    /// The level as the codec numbers it (H.264 level_idc, HEVC
    /// general_level_idc...), if the container says.
    pub level: Option<i32>,
    /// H.264/HEVC parameter sets from the container's codec configuration,
    /// Annex-B; empty for other codecs or when the stream carries them in-band.
    pub parameter_sets: Vec<u8>,
    /// libavformat's name of the container format (`mov,mp4,m4a,3gp,3g2,mj2`,
    /// `matroska,webm`...), if it was read by libavformat.
    pub container_format: Option<String>,
    /// Codec parameters for libavcodec, describing the packets as `Demuxer`
    /// yields them (Annex-B extradata for H.264/HEVC).
    pub(crate) parameters: CodecParameters,
}

impl VideoStreamInfo {
    /// The codec's short and long names as libavcodec describes them, e.g.
    /// `h264 (H.264 / AVC / MPEG-4 AVC / MPEG-4 part 10)`, as mpv words its
    /// `video-codec` property.
    pub fn codec_description(&self) -> String {
        let par = self.parameters.get();
        // SAFETY: `par` is a valid AVCodecParameters we own; the descriptor
        // libavcodec returns for its codec id is static (or null), and its
        // names are static NUL-terminated strings (long_name may be null).
        let names = unsafe {
            let descriptor = ffmpeg_next::ffi::avcodec_descriptor_get((*par.as_ptr()).codec_id);
            if descriptor.is_null() {
                None
            } else {
                let text = |p: *const std::os::raw::c_char| {
                    (!p.is_null())
                        .then(|| std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned())
                };
                Some((text((*descriptor).name), text((*descriptor).long_name)))
            }
        };
        match names {
            Some((Some(name), Some(long_name))) => format!("{name} ({long_name})"),
            Some((Some(name), None)) => name,
            _ => self.codec.to_string(),
        }
    }

    /// Codec, profile, level and pixel layout in words, for the OSD.
    pub fn codec_summary(&self) -> String {
        let mut text = self.codec.to_string();
        if let Some(profile) = &self.profile {
            text.push_str(&format!(" {profile}"));
        }
        if let Some(level) = self.level {
            // H.264 counts tenths (40 is 4.0), HEVC thirtieths (120 is 4).
            let level = match self.codec {
                Codec::H264 => format!("{:.1}", f64::from(level) / 10.0),
                Codec::Hevc => format!("{}", f64::from(level) / 30.0),
                _ => level.to_string(),
            };
            text.push_str(&format!(", level {level}"));
        }
        if let Some(format) = &self.pixel_format {
            text.push_str(&format!(", {format}"));
        }
        text
    }

    /// Converts a timestamp in this stream's time base to a duration
    /// (negative timestamps clamp to zero).
    pub fn ts_to_duration(&self, ts: i64) -> Duration {
        ts_to_duration(ts, self.time_base)
    }
}

/// `ts` x `time_base` as a duration; negative results clamp to zero.
pub fn ts_to_duration(ts: i64, (num, den): (i32, i32)) -> Duration {
    if ts <= 0 || num <= 0 || den <= 0 {
        return Duration::ZERO;
    }
    let nanos = ts as i128 * num as i128 * 1_000_000_000 / den as i128;
    Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
}

/// The media time `wall` of playback at `speed` covers (the wall time a
/// media span takes at 1/`speed`); exact at 1x.
pub fn at_speed(wall: Duration, speed: f64) -> Duration {
    if speed == 1.0 {
        wall
    } else {
        wall.mul_f64(speed)
    }
}

/// `d` in units of `time_base`, rounded down.
pub fn duration_to_ts(d: Duration, (num, den): (i32, i32)) -> i64 {
    if num <= 0 || den <= 0 {
        return 0;
    }
    let ts = d.as_nanos() as i128 * den as i128 / (num as i128 * 1_000_000_000);
    i64::try_from(ts).unwrap_or(i64::MAX)
}

/// One compressed frame: an access unit of the video stream, or a packet
/// of another stream the demuxer was asked for (`Demuxer::enable_stream`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Packet {
    /// The container's stream index (`VideoStreamInfo::index` for video).
    pub stream_index: usize,
    /// The bitstream; Annex-B for H.264/HEVC.
    pub data: PacketData,
    /// Where its NAL units are, when the demuxer wrote their start codes
    /// (H.264/HEVC from MP4 or Matroska): readers need not search for them.
    pub nal_units: Option<NalIndex>,
    pub pts: Option<i64>,
    pub dts: Option<i64>,
    /// In `time_base` units; 0 when unknown.
    pub duration: i64,
    pub keyframe: bool,
    /// The container flagged the packet corrupt, or its AVCC/HVCC framing
    /// was damaged (then `data` holds the NAL units before the damage).
    pub corrupt: bool,
    /// The stream's time base (the same for every packet of a stream).
    pub time_base: (i32, i32),
}

/// What a stream of the container carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamKind {
    Video,
    Audio,
    Subtitle,
    /// Data, attachments, cover art, anything else.
    Other,
}

/// One stream of the container, as `Demuxer::streams` lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamSummary {
    pub index: usize,
    pub kind: StreamKind,
    /// FFmpeg's codec name ("aac", "opus", "h264", ...).
    pub codec: String,
    pub time_base: (i32, i32),
    /// Its packets are handed out (the video stream played, or a stream
    /// enabled with `Demuxer::enable_stream`).
    pub enabled: bool,
}

impl Packet {
    /// Presentation time as a duration, if the packet has a pts.
    pub fn pts_time(&self) -> Option<Duration> {
        self.pts.map(|ts| ts_to_duration(ts, self.time_base))
    }
}

#[derive(Debug, Error)]
pub enum MediaError {
    #[error("{0}: no such file")]
    NotFound(PathBuf),
    #[error("{0}: no video stream")]
    NoVideoStream(PathBuf),
    #[error("{path}: no stream {index} to enable ({reason})")]
    NoSuchStream {
        path: PathBuf,
        index: usize,
        reason: &'static str,
    },
    #[error("unsupported video codec: {0}")]
    UnsupportedCodec(String),
    /// FFmpeg could not open or probe the file (message includes the path).
    #[error("{0}")]
    Open(String),
    #[error("reading the file failed: {0}")]
    Read(String),
    /// The data ends well before the end the file's header declares. The
    /// packets before it were delivered; a player may treat this as the end
    /// of the stream plus a warning.
    #[error("{}: data ends at {:.3} s but the header says {:.3} s (truncated file?)", path.display(), reached.as_secs_f64(), declared.as_secs_f64())]
    Truncated {
        path: PathBuf,
        reached: Duration,
        declared: Duration,
    },
    #[error("seek to {target:?} failed: {message}")]
    Seek { target: Duration, message: String },
    #[error("codec configuration: {0}")]
    Bitstream(#[from] BitstreamError),
    /// A network source could not be reached or read (refused, timed out,
    /// a TLS or HTTP failure).
    #[error("{url}: {message}")]
    Network { url: String, message: String },
    /// A network source named what its protocol whitelist forbids (a
    /// playlist naming a local file, a redirect to another protocol).
    #[error("{url}: refused: {message}")]
    Refused { url: String, message: String },
    /// `scheme://...` of a scheme reel does not play, and no such file.
    #[error("{url}: reel does not play {scheme}:// sources (it plays {known}), and there is no such file")]
    UnsupportedProtocol {
        url: String,
        scheme: String,
        known: String,
    },
}

/// Sets up FFmpeg once per process: its log messages go to `tracing`
/// (target `ffmpeg`, see `ffmpeg_log`), up to FFmpeg's `info` level unless
/// `REEL_FFMPEG_LOG=quiet|error|warning|info|verbose|debug` says otherwise.
pub fn init_ffmpeg() {
    static INIT: Once = Once::new();
    INIT.call_once(|| {
        use ffmpeg_next::util::log::{set_level, Level};
        let level = match std::env::var("REEL_FFMPEG_LOG").as_deref() {
            Ok("quiet") => Level::Quiet,
            Ok("error") => Level::Error,
            Ok("warning") => Level::Warning,
            Ok("verbose") => Level::Verbose,
            Ok("debug") => Level::Debug,
            _ => Level::Info,
        };
        set_level(level);
        ffmpeg_log::install();
        if let Err(e) = ffmpeg_next::init() {
            tracing::warn!("FFmpeg initialisation: {e}");
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_safety() {
        fn send<T: Send>() {}
        fn sync<T: Sync>() {}
        send::<Demuxer>();
        send::<VideoStreamInfo>();
        sync::<VideoStreamInfo>();
        send::<Packet>();
    }

    #[test]
    fn timestamp_conversions() {
        assert_eq!(ts_to_duration(90_000, (1, 90_000)), Duration::from_secs(1));
        assert_eq!(ts_to_duration(-5, (1, 90_000)), Duration::ZERO);
        assert_eq!(
            ts_to_duration(1001, (1, 30_000)),
            Duration::from_nanos(33_366_666)
        );
        assert_eq!(duration_to_ts(Duration::from_millis(1500), (1, 1000)), 1500);
        assert_eq!(duration_to_ts(Duration::from_secs(1), (1001, 30_000)), 29);
        assert_eq!(duration_to_ts(Duration::from_secs(1), (0, 1)), 0);
    }
}
