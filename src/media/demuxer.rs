//! Opening a container, picking its video stream, reading its packets and
//! seeking, with FFmpeg's libavformat.

use std::path::{Path, PathBuf};
use std::time::Duration;

use ff::ffi;
use ff::format::context::Input;
use ffmpeg_next as ff;

use super::annexb::AnnexBConverter;
use super::{
    duration_to_ts, init_ffmpeg, ts_to_duration, Codec, CodecParameters, MediaError, Packet,
    VideoStreamInfo,
};

/// Consecutive unreadable packets after which a file is declared broken
/// rather than resynchronised (each one consumes input, so this only bounds
/// the noise on a garbage file).
const MAX_CONSECUTIVE_INVALID: u32 = 1000;

/// The demuxer of one file, yielding the packets of its best video stream.
pub struct Demuxer {
    input: Input,
    path: PathBuf,
    info: VideoStreamInfo,
    converter: Option<AnnexBConverter>,
}

impl std::fmt::Debug for Demuxer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Demuxer")
            .field("path", &self.path)
            .field("stream", &self.info)
            .finish()
    }
}

impl Demuxer {
    pub fn open(path: &Path) -> Result<Demuxer, MediaError> {
        init_ffmpeg();
        let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => MediaError::NotFound(path.to_owned()),
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
        let mut input = ff::format::input(path).map_err(|e| {
            MediaError::Open(format!(
                "{}: not a media file FFmpeg can read ({e})",
                path.display()
            ))
        })?;
        let stream = input
            .streams()
            .best(ff::media::Type::Video)
            .ok_or_else(|| MediaError::NoVideoStream(path.to_owned()))?;
        let index = stream.index();
        let codec = codec_from_id(stream.parameters().id())?;
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
        Ok(Demuxer {
            input,
            path: path.to_owned(),
            info,
            converter,
        })
    }

    pub fn stream(&self) -> &VideoStreamInfo {
        &self.info
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The next packet of the video stream; `None` at the end of the file.
    pub fn next_packet(&mut self) -> Result<Option<Packet>, MediaError> {
        let mut invalid = 0;
        loop {
            let mut packet = ff::Packet::empty();
            match packet.read(&mut self.input) {
                Ok(()) => {}
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
                Err(e) => {
                    return Err(MediaError::Read(format!("{}: {e}", self.path.display())));
                }
            }
            invalid = 0;
            if packet.stream() != self.info.index {
                continue;
            }
            let Some(raw) = packet.data().filter(|d| !d.is_empty()) else {
                continue;
            };
            return Ok(Some(self.convert(&packet, raw)));
        }
    }

    fn convert(&self, packet: &ff::Packet, raw: &[u8]) -> Packet {
        let keyframe = packet.is_key();
        let mut corrupt = packet.is_corrupt();
        let mut data = Vec::with_capacity(raw.len() + 64);
        match &self.converter {
            Some(conv) => {
                if let Err(e) = conv.convert(raw, keyframe, &mut data) {
                    tracing::warn!("packet at pts {:?}: {e}", packet.pts());
                    corrupt = true;
                }
            }
            None => data.extend_from_slice(raw),
        }
        Packet {
            data,
            pts: packet.pts(),
            dts: packet.dts(),
            duration: packet.duration().max(0),
            keyframe,
            corrupt,
            time_base: self.info.time_base,
        }
    }

    /// Moves to the keyframe at or before `target`, on the same clock as
    /// `Frame::pts` (stream time, not offset by `start_time`). Targets before
    /// the stream's start go to its start.
    pub fn seek(&mut self, target: Duration) -> Result<(), MediaError> {
        let ts = duration_to_ts(target, self.info.time_base);
        let index = self.info.index as i32;
        // SAFETY: the context is the open format context we own; the stream
        // index is one of its streams. libavformat resets the I/O EOF state.
        let ret =
            unsafe { ffi::avformat_seek_file(self.input.as_mut_ptr(), index, i64::MIN, ts, ts, 0) };
        if ret >= 0 {
            return Ok(());
        }
        // Demuxers without an index may not find a keyframe below `ts` this
        // way; a backward seek is their nearest equivalent.
        // SAFETY: as above.
        let ret = unsafe {
            ffi::av_seek_frame(
                self.input.as_mut_ptr(),
                index,
                ts,
                ffi::AVSEEK_FLAG_BACKWARD,
            )
        };
        if ret >= 0 {
            return Ok(());
        }
        Err(MediaError::Seek {
            target,
            message: ff::Error::from(ret).to_string(),
        })
    }
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
        parameter_sets: converter
            .map(|c| c.parameter_sets().to_vec())
            .unwrap_or_default(),
        parameters,
    }
}

/// Tells libavformat to drop packets of streams reel does not play.
fn discard_other_streams(input: &mut Input, keep: usize) {
    // SAFETY: the context is open and ours; we write the `discard` field of
    // its streams, which libavformat reads on each read.
    unsafe {
        let ctx = input.as_mut_ptr();
        for i in 0..(*ctx).nb_streams as usize {
            if i != keep {
                (**(*ctx).streams.add(i)).discard = ffi::AVDiscard::AVDISCARD_ALL;
            }
        }
    }
}
