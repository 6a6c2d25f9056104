//! Opening a container, picking its video stream, reading its packets and
//! seeking (`seek.rs`), with FFmpeg's libavformat.

mod reconnect;
mod seek;

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::time::Duration;

use ff::ffi;
use ff::format::context::Input;
use ff::packet::Mut;
use ffmpeg_next as ff;

use super::avcc::{AnnexBConverter, InPlace};
use super::file_io::FileIo;
use super::location::{self, Location, LOCAL_PROTOCOL_WHITELIST};
use super::network::{self, Dictionary, NetworkSession, SourceLink};
use super::packet_data::PacketData;
use super::source_input::discard_other_streams;
use super::stream_probe;
use super::timeline::ContinuousTimeline;
use super::{
    duration_to_ts, init_ffmpeg, ts_to_duration, Codec, CodecParameters, MediaError, Packet,
    StreamKind, StreamSummary, VideoStreamInfo,
};

/// Consecutive unreadable packets after which a file is declared broken
/// rather than resynchronised (each one consumes input, so this only bounds
/// the noise on a garbage file).
const MAX_CONSECUTIVE_INVALID: u32 = 1000;

/// How far short of the end its header declares a stream may stop before
/// the file counts as truncated. With the video track's own duration: the
/// larger of a few frames and `TRACK_SLACK`. With only the container's
/// (which an audio track may set a little longer): the larger of
/// `CONTAINER_SLACK` and `CONTAINER_SLACK_FRACTION` of it.
const TRACK_SLACK: Duration = Duration::from_millis(100);
const TRACK_SLACK_FRAMES: i64 = 3;
const CONTAINER_SLACK: Duration = Duration::from_millis(500);
const CONTAINER_SLACK_FRACTION: f64 = 0.2;

/// The end of the stream as its header declares it (stream time base).
#[derive(Clone, Copy, Debug)]
struct DeclaredEnd {
    end: i64,
    /// How far short of `end` the data may stop without being truncated.
    slack: i64,
}

/// FFmpeg's demuxer of one file, yielding the packets of its best video
/// stream and of any other stream enabled (audio, for one).
pub(super) struct FfmpegDemuxer {
    input: Input,
    path: PathBuf,
    info: VideoStreamInfo,
    /// Streams besides the video one whose packets are handed out.
    enabled: Vec<usize>,
    converter: Option<AnnexBConverter>,
    /// Where the header says the stream ends (stream time base), when it
    /// says so precisely (not estimated from timestamps or bitrate).
    declared_end: Option<DeclaredEnd>,
    /// The furthest pts + duration read so far.
    reached_end: Option<i64>,
    truncation_reported: bool,
    /// Packets read ahead by `seek`, handed out before reading on.
    pending: VecDeque<Packet>,
    /// Timestamps kept continuous across the file's restarts.
    timeline: ContinuousTimeline,
    /// Whether `restarts_ahead` sampled the file already.
    restarts_sampled: bool,
    /// Abandons a network source's connects, reads and reconnections.
    cancel: SourceLink,
    /// What `input` reads through; dropped after it (fields drop in order).
    _io: InputIo,
}

/// What a demuxer's input reads through: reel's file I/O, or the hooks of
/// a network source.
enum InputIo {
    File { _io: FileIo },
    Network { _session: Box<NetworkSession> },
}

impl std::fmt::Debug for FfmpegDemuxer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FfmpegDemuxer")
            .field("path", &self.path)
            .field("stream", &self.info)
            .finish()
    }
}

impl FfmpegDemuxer {
    pub fn open(path: &Path) -> Result<FfmpegDemuxer, MediaError> {
        init_ffmpeg();
        let cancel = SourceLink::default();
        let (mut input, io) = match Location::of(path) {
            Location::Url { url, scheme } => {
                let (input, session) = network::open(url, scheme, &cancel)?.into_parts();
                (input, InputIo::Network { _session: session })
            }
            Location::Local(path) => {
                let (input, io) = open_local(path)?;
                (input, InputIo::File { _io: io })
            }
        };
        let (index, codec) = pick_video_stream(&input, path)?;
        let Some(stream) = input.stream(index) else {
            return Err(MediaError::NoVideoStream(path.to_owned()));
        };
        let mut parameters = CodecParameters::new(stream.parameters());
        let converter = match codec.nal_codec() {
            Some(nal) => {
                let conv = AnnexBConverter::new(nal, parameters.extradata())?;
                // The decoder sees what we hand out: Annex-B packets, so
                // Annex-B parameter sets as extradata.
                parameters.set_extradata(conv.parameter_sets());
                Some(conv)
            }
            None => None,
        };
        let info = stream_info(&input, index, codec, parameters, converter.as_ref());
        let declared_end = declared_end(&input, &info);
        tracing::info!(
            "{}: stream {index}: {codec} {}x{} tb {}/{} fps {:?} start {:?}",
            path.display(),
            info.width,
            info.height,
            info.time_base.0,
            info.time_base.1,
            info.frame_rate,
            info.start_time
        );
        discard_other_streams(&mut input, index);
        let timeline = ContinuousTimeline::new(may_restart_timestamps(&input), info.time_base);
        Ok(FfmpegDemuxer {
            input,
            path: path.to_owned(),
            info,
            enabled: Vec::new(),
            converter,
            declared_end,
            reached_end: None,
            truncation_reported: false,
            pending: VecDeque::new(),
            timeline,
            restarts_sampled: false,
            cancel,
            _io: io,
        })
    }

    pub fn stream(&self) -> &VideoStreamInfo {
        &self.info
    }

    /// What abandons the source's network connects, reads and waits from
    /// another thread.
    pub fn canceller(&self) -> SourceLink {
        self.cancel.clone()
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The container's tracks and chapters, read from this input (a
    /// network source is not opened a second time).
    pub fn contents(&self) -> super::tracks::Contents {
        super::tracks::contents_of(&self.input)
    }

    /// Every stream of the container.
    pub fn streams(&self) -> Vec<StreamSummary> {
        self.input
            .streams()
            .map(|st| {
                let parameters = st.parameters();
                let kind = match parameters.medium() {
                    ff::media::Type::Video
                        if !st
                            .disposition()
                            .contains(ff::format::stream::Disposition::ATTACHED_PIC) =>
                    {
                        StreamKind::Video
                    }
                    ff::media::Type::Audio => StreamKind::Audio,
                    ff::media::Type::Subtitle => StreamKind::Subtitle,
                    _ => StreamKind::Other,
                };
                let tb = st.time_base();
                StreamSummary {
                    index: st.index(),
                    kind,
                    codec: parameters.id().name().to_string(),
                    time_base: (tb.numerator(), tb.denominator()),
                    enabled: st.index() == self.info.index || self.enabled.contains(&st.index()),
                }
            })
            .collect()
    }

    /// Hands out the packets of stream `index` too (from the next packet
    /// read), unconverted, with their own stream index and time base.
    pub fn enable_stream(&mut self, index: usize) -> Result<(), MediaError> {
        let refuse = |reason| MediaError::NoSuchStream {
            path: self.path.clone(),
            index,
            reason,
        };
        if index == self.info.index {
            return Err(refuse("it is the video stream played"));
        }
        if self.input.stream(index).is_none() {
            return Err(refuse("the file has no such stream"));
        }
        if !self.enabled.contains(&index) {
            // SAFETY: the context is open and ours, and `index` is one of its
            // streams (checked above); libavformat reads `discard` on each read.
            unsafe {
                let ctx = self.input.as_mut_ptr();
                (**(*ctx).streams.add(index)).discard = ffi::AVDiscard::AVDISCARD_DEFAULT;
            }
            self.enabled.push(index);
        }
        Ok(())
    }

    /// The next packet of the video stream; `None` at the end of the file.
    pub fn next_packet(&mut self) -> Result<Option<Packet>, MediaError> {
        if let Some(packet) = self.pending.pop_front() {
            return Ok(Some(packet));
        }
        match self.read_packet()? {
            Some(packet) => Ok(Some(packet)),
            None => self.end_of_file(),
        }
    }

    /// The next packet of the video stream from the file; `None` at its end.
    fn read_packet(&mut self) -> Result<Option<Packet>, MediaError> {
        let mut invalid = 0;
        loop {
            let mut packet = ff::Packet::empty();
            match packet.read(&mut self.input) {
                Ok(()) => {}
                Err(ff::Error::Eof) if self.is_live_network() => {
                    self.reconnect("the stream ended")?;
                    continue;
                }
                Err(ff::Error::Eof) => return Ok(None),
                Err(ff::Error::InvalidData) => {
                    invalid += 1;
                    if invalid >= MAX_CONSECUTIVE_INVALID {
                        return Err(MediaError::Read(format!(
                            "{}: {invalid} consecutive unreadable packets",
                            self.path.display()
                        )));
                    }
                    tracing::debug!("skipping unreadable data in {}", self.path.display());
                    continue;
                }
                Err(e) if self.is_live_network() => {
                    self.reconnect(&e.to_string())?;
                    continue;
                }
                Err(e) => {
                    return Err(MediaError::Read(format!("{}: {e}", self.path.display())));
                }
            }
            invalid = 0;
            let index = packet.stream();
            let position = packet.position() as i64;
            if index != self.info.index {
                if !self.enabled.contains(&index) {
                    continue;
                }
                if let Some(mut other) = self.other_stream_packet(packet, index) {
                    self.mend_timestamps(&mut other);
                    return Ok(Some(other));
                }
                continue;
            }
            let Some(mut packet) = self.convert(packet) else {
                continue;
            };
            self.mend_timestamps(&mut packet);
            if packet.keyframe {
                self.timeline
                    .note_keyframe(position, packet.pts.or(packet.dts));
            }
            if let Some(pts) = packet.pts {
                let end = pts.saturating_add(packet.duration);
                self.reached_end = Some(self.reached_end.map_or(end, |r| r.max(end)));
            }
            return Ok(Some(packet));
        }
    }

    /// Puts `packet` on the file's continuous clock.
    fn mend_timestamps(&mut self, packet: &mut Packet) {
        self.timeline.mend(
            packet.stream_index,
            packet.time_base,
            &mut packet.pts,
            &mut packet.dts,
            packet.duration,
        );
    }

    /// `Ok(None)`, or once `Truncated` when the data stopped well before
    /// the end the header declares.
    fn end_of_file(&mut self) -> Result<Option<Packet>, MediaError> {
        let (Some(declared), false) = (self.declared_end, self.truncation_reported) else {
            return Ok(None);
        };
        let reached = self.reached_end.unwrap_or(self.info.start_pts);
        let start = self.info.start_pts;
        let span = declared.end.saturating_sub(start).max(0);
        if reached >= declared.end.saturating_sub(declared.slack) {
            return Ok(None);
        }
        self.truncation_reported = true;
        Err(MediaError::Truncated {
            path: self.path.clone(),
            reached: ts_to_duration(reached.saturating_sub(start), self.info.time_base),
            declared: ts_to_duration(span, self.info.time_base),
        })
    }

    /// A packet of an enabled stream other than the video one, as read.
    fn other_stream_packet(&self, packet: ff::Packet, index: usize) -> Option<Packet> {
        let tb = self.input.stream(index)?.time_base();
        let (pts, dts, duration) = (packet.pts(), packet.dts(), packet.duration().max(0));
        let (keyframe, corrupt) = (packet.is_key(), packet.is_corrupt());
        Some(Packet {
            stream_index: index,
            data: PacketData::read(packet)?,
            nal_units: None,
            pts,
            dts,
            duration,
            keyframe,
            corrupt,
            time_base: (tb.numerator(), tb.denominator()),
        })
    }

    /// The video packet as reel hands it on (Annex-B for H.264/HEVC),
    /// rewritten where libavformat read it when that takes no byte more;
    /// `None` for a packet without data.
    fn convert(&self, mut packet: ff::Packet) -> Option<Packet> {
        let keyframe = packet.is_key();
        let mut corrupt = packet.is_corrupt();
        let (pts, dts, duration) = (packet.pts(), packet.dts(), packet.duration().max(0));
        let (data, nal_units) = match &self.converter {
            None => (PacketData::read(packet)?, None),
            Some(conv) => match rewrite_in_place(conv, &mut packet, keyframe) {
                Some(done) => (PacketData::read(packet)?, done.nal_units),
                None => {
                    let raw = packet.data().filter(|d| !d.is_empty())?;
                    let mut data = Vec::with_capacity(raw.len() + 64);
                    if let Err(e) = conv.convert(raw, keyframe, &mut data) {
                        tracing::warn!("packet at pts {pts:?}: {e}");
                        corrupt = true;
                    }
                    (data.into(), None)
                }
            },
        };
        Some(Packet {
            stream_index: self.info.index,
            data,
            nal_units,
            pts,
            dts,
            duration,
            keyframe,
            corrupt,
            time_base: self.info.time_base,
        })
    }
}

/// Whether the file's format may restart its timestamps midway
/// (libavformat's `AVFMT_TS_DISCONT`: MPEG-TS, MPEG-PS, FLV).
fn may_restart_timestamps(input: &Input) -> bool {
    // SAFETY: an open input context always has its input format set, which
    // lives as long as libavformat.
    let flags = unsafe {
        let format = (*input.as_ptr()).iformat;
        if format.is_null() {
            return false;
        }
        (*format).flags
    };
    flags & ffi::AVFMT_TS_DISCONT != 0
}

/// `packet` rewritten to Annex-B where libavformat read it, if it could be
/// (`AnnexBConverter::convert_in_place`).
fn rewrite_in_place(
    conv: &AnnexBConverter,
    packet: &mut ff::Packet,
    keyframe: bool,
) -> Option<InPlace> {
    // SAFETY: a valid packet; av_packet_make_writable gives it a buffer of
    // its own (copying only if shared), so the rewrite touches no other
    // packet's bytes.
    let writable = !conv.is_length_prefixed()
        || unsafe { ffi::av_packet_make_writable(packet.as_mut_ptr()) } >= 0;
    if !writable {
        return None;
    }
    conv.convert_in_place(packet.data_mut()?, keyframe)
}

/// Opens a local file after checking it is one worth probing.
fn open_local(path: &Path) -> Result<(Input, FileIo), MediaError> {
    let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => not_found(path),
        _ => MediaError::Open(format!("{}: {e}", path.display())),
    })?;
    if meta.is_dir() {
        return Err(MediaError::Open(format!(
            "{}: is a directory",
            path.display()
        )));
    }
    if meta.len() == 0 {
        return Err(MediaError::Open(format!(
            "{}: file is empty",
            path.display()
        )));
    }
    open_input(path).map_err(|e| {
        MediaError::Open(format!(
            "{}: cannot open as a media file ({e})",
            path.display()
        ))
    })
}

/// No such file; when the name looks like a URL of a scheme reel does not
/// play, that is said instead.
fn not_found(path: &Path) -> MediaError {
    match path.to_str().and_then(location::url_scheme) {
        Some(scheme) => MediaError::UnsupportedProtocol {
            url: path.display().to_string(),
            scheme: scheme.to_owned(),
            known: location::known_schemes(),
        },
        None => MediaError::NotFound(path.to_owned()),
    }
}

/// Opens and probes a local file, read through reel's own I/O context
/// (`file_io`: packets read straight into their buffers). The path goes to
/// libavformat as raw bytes behind `file:` only as its name (the extension
/// helps probing raw streams), so names that are not UTF-8 work.
fn open_input(path: &Path) -> Result<(Input, FileIo), ff::Error> {
    use std::os::unix::ffi::OsStrExt;
    let mut url = b"file:".to_vec();
    url.extend_from_slice(path.as_os_str().as_bytes());
    let url = std::ffi::CString::new(url).map_err(|_| ff::Error::InvalidData)?;
    let io = FileIo::open(path)
        .map_err(|e| ff::Error::from(-e.raw_os_error().unwrap_or(nix::libc::EIO)))?;
    // What a local playlist may open besides the file: never the network.
    let mut options = Dictionary::default();
    options.set("protocol_whitelist", LOCAL_PROTOCOL_WHITELIST)?;
    // SAFETY: a fresh context (null if allocation failed) gets our I/O
    // context as `pb`, which avformat_open_input then uses (marking it
    // custom I/O, which it never frees: `io` does, after the context is
    // closed). `url` is a NUL-terminated string that outlives the call; on
    // success libavformat hands us an open context that `Input` takes over
    // (and closes on drop); on failure it has freed it and set it to null.
    // The options dictionary is ours, freed on drop.
    let mut input = unsafe {
        let mut ctx = ffi::avformat_alloc_context();
        if ctx.is_null() {
            return Err(ff::Error::Other {
                errno: nix::libc::ENOMEM,
            });
        }
        (*ctx).pb = io.as_ptr();
        let ret = ffi::avformat_open_input(
            &mut ctx,
            url.as_ptr(),
            std::ptr::null_mut(),
            options.as_mut_ptr(),
        );
        if ret < 0 {
            return Err(ff::Error::from(ret));
        }
        Input::wrap(ctx)
    };
    stream_probe::find_stream_info(&mut input)?;
    Ok((input, io))
}

/// The video stream to play: FFmpeg's best pick when reel decodes it, else
/// the first video stream reel decodes. Cover art (attached pictures) does
/// not count as video.
fn pick_video_stream(input: &Input, path: &Path) -> Result<(usize, Codec), MediaError> {
    let is_video = |st: &ff::format::stream::Stream| {
        st.parameters().medium() == ff::media::Type::Video
            && !st
                .disposition()
                .contains(ff::format::stream::Disposition::ATTACHED_PIC)
    };
    let best = input
        .streams()
        .best(ff::media::Type::Video)
        .filter(|st| is_video(st));
    let candidates = best
        .into_iter()
        .chain(input.streams().filter(|st| is_video(st)));
    let mut first_unsupported = None;
    for st in candidates {
        match codec_from_id(st.parameters().id()) {
            Ok(codec) => return Ok((st.index(), codec)),
            Err(e) => {
                first_unsupported.get_or_insert(e);
            }
        }
    }
    Err(first_unsupported.unwrap_or_else(|| MediaError::NoVideoStream(path.to_owned())))
}

fn codec_from_id(id: ff::codec::Id) -> Result<Codec, MediaError> {
    use ff::codec::Id;
    Ok(match id {
        Id::H264 => Codec::H264,
        Id::HEVC => Codec::Hevc,
        Id::VP8 => Codec::Vp8,
        Id::VP9 => Codec::Vp9,
        Id::AV1 => Codec::Av1,
        Id::MPEG2VIDEO => Codec::Mpeg2,
        other => return Err(MediaError::UnsupportedCodec(other.name().to_owned())),
    })
}

fn rational(r: ff::Rational) -> Option<(i32, i32)> {
    (r.numerator() > 0 && r.denominator() > 0).then(|| (r.numerator(), r.denominator()))
}

fn stream_info(
    input: &Input,
    index: usize,
    codec: Codec,
    parameters: CodecParameters,
    converter: Option<&AnnexBConverter>,
) -> VideoStreamInfo {
    // SAFETY: the context is open and `index` one of its streams; these
    // calls only read it.
    let (stream_tb, stream_start, stream_duration, frame_rate, container_start) = unsafe {
        let ctx = input.as_ptr();
        let st = *(*ctx).streams.add(index);
        let guessed = ffi::av_guess_frame_rate(ctx as *mut _, st, std::ptr::null_mut());
        (
            ff::Rational::from((*st).time_base),
            (*st).start_time,
            (*st).duration,
            ff::Rational::from(guessed),
            (*ctx).start_time,
        )
    };
    let par = parameters.get();
    // SAFETY: `par` is a valid AVCodecParameters we own. Its pixel format
    // is turned into the C enum only when inside the enum's contiguous range
    // 0..AV_PIX_FMT_NB; the descriptor returned for it is static (or null).
    let (width, height, sar, pix_fmt, depth) = unsafe {
        let p = &*par.as_ptr();
        let desc = if (0..ffi::AVPixelFormat::AV_PIX_FMT_NB as i32).contains(&p.format) {
            let fmt: ffi::AVPixelFormat = std::mem::transmute(p.format);
            ffi::av_pix_fmt_desc_get(fmt)
        } else {
            std::ptr::null()
        };
        let (name, depth) = if desc.is_null() {
            (None, None)
        } else {
            let name = std::ffi::CStr::from_ptr((*desc).name)
                .to_string_lossy()
                .into_owned();
            (Some(name), Some((*desc).comp[0].depth as u32))
        };
        (
            p.width,
            p.height,
            ff::Rational::from(p.sample_aspect_ratio),
            name,
            depth,
        )
    };
    // SAFETY: `par` is a valid AVCodecParameters we own;
    // avcodec_profile_name takes any codec id and profile number and returns
    // a static string or null.
    let (profile, level) = unsafe {
        let p = &*par.as_ptr();
        let name = ffi::avcodec_profile_name(p.codec_id, p.profile);
        let profile = (!name.is_null()).then(|| {
            std::ffi::CStr::from_ptr(name)
                .to_string_lossy()
                .into_owned()
        });
        (profile, (p.level > 0).then_some(p.level))
    };
    let time_base = rational(stream_tb).unwrap_or((1, 90_000));
    let start_pts = match stream_start {
        ffi::AV_NOPTS_VALUE => 0,
        t => t,
    };
    let duration = match stream_duration {
        d if d > 0 && d != ffi::AV_NOPTS_VALUE => Some(ts_to_duration(d, time_base)),
        _ => match input.duration() {
            d if d > 0 && d != ffi::AV_NOPTS_VALUE => {
                Some(ts_to_duration(d, (1, ffi::AV_TIME_BASE)))
            }
            _ => None,
        },
    };
    VideoStreamInfo {
        index,
        codec,
        width: width.max(0) as u32,
        height: height.max(0) as u32,
        time_base,
        frame_rate: rational(frame_rate),
        duration,
        start_time: ts_to_duration(start_pts, time_base),
        start_pts,
        container_start_us: if container_start == ffi::AV_NOPTS_VALUE {
            0
        } else {
            container_start
        },
        sample_aspect: rational(sar)
            .map(|(n, d)| (n as u32, d as u32))
            .unwrap_or((1, 1)),
        bit_depth: depth.unwrap_or(8),
        pixel_format: pix_fmt,
        profile,
        level,
        parameter_sets: converter
            .map(|c| c.parameter_sets().to_vec())
            .unwrap_or_default(),
        container_format: Some(input.format().name().to_string()),
        parameters,
    }
}

/// The end of the stream its header declares, when it declares one: the
/// track's own duration (libavformat's, or Matroska's `DURATION` tag), else
/// the container's when libavformat took it from the header (not estimated
/// from timestamps or bitrate).
fn declared_end(input: &Input, info: &VideoStreamInfo) -> Option<DeclaredEnd> {
    // SAFETY: reading plain fields of an open format context and of one of
    // its streams.
    let (method, stream_duration, container_duration) = unsafe {
        let ctx = input.as_ptr();
        let st = *(*ctx).streams.add(info.index);
        (
            (*ctx).duration_estimation_method,
            (*st).duration,
            (*ctx).duration,
        )
    };
    let tb = info.time_base;
    let valid = |d: i64| d > 0 && d != ffi::AV_NOPTS_VALUE;
    let track = if valid(stream_duration) {
        Some(stream_duration)
    } else {
        input
            .stream(info.index)
            .and_then(|st| st.metadata().get("DURATION").and_then(parse_hms))
            .map(|d| duration_to_ts(d, tb))
    };
    if let Some(duration) = track {
        let frame = info
            .frame_rate
            .map(|(n, d)| duration_to_ts(Duration::from_secs_f64(d as f64 / n as f64), tb))
            .unwrap_or(0);
        let slack = duration_to_ts(TRACK_SLACK, tb).max(frame * TRACK_SLACK_FRAMES);
        return Some(DeclaredEnd {
            end: info.start_pts.saturating_add(duration),
            slack,
        });
    }
    if method != ffi::AVDurationEstimationMethod::AVFMT_DURATION_FROM_STREAM
        || !valid(container_duration)
    {
        return None;
    }
    let end_us = info.container_start_us.saturating_add(container_duration);
    let end = duration_to_ts(Duration::from_micros(end_us.max(0) as u64), tb);
    let span = end.saturating_sub(info.start_pts).max(0);
    let slack =
        duration_to_ts(CONTAINER_SLACK, tb).max((span as f64 * CONTAINER_SLACK_FRACTION) as i64);
    Some(DeclaredEnd { end, slack })
}

/// Parses Matroska's `HH:MM:SS.nnnnnnnnn` duration tags.
fn parse_hms(text: &str) -> Option<Duration> {
    let mut parts = text.trim().splitn(3, ':');
    let hours: u64 = parts.next()?.parse().ok()?;
    let minutes: u64 = parts.next()?.parse().ok()?;
    let seconds: f64 = parts.next()?.parse().ok()?;
    if !(0.0..60.0).contains(&seconds) || minutes >= 60 {
        return None;
    }
    Some(Duration::from_secs(hours * 3600 + minutes * 60) + Duration::from_secs_f64(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matroska_duration_tags() {
        assert_eq!(
            parse_hms("00:00:02.000000000"),
            Some(Duration::from_secs(2))
        );
        assert_eq!(
            parse_hms("01:02:03.500000000"),
            Some(Duration::from_millis(3_723_500))
        );
        assert_eq!(parse_hms("00:61:00.0"), None);
        assert_eq!(parse_hms("garbage"), None);
        assert_eq!(parse_hms("00:00:-1"), None);
    }
}
