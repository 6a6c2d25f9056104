//! The file's audio stream: its own demuxer on the file (so audio never
//! waits for video packets, nor video for audio ones) and libavcodec's
//! decoder.

use std::path::Path;
use std::time::Duration;

use ffmpeg_next as ff;
use thiserror::Error;
use tracing::{debug, warn};

use crate::media::discard_other_streams;

/// Which audio stream to play.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Track {
    /// FFmpeg's pick (the default stream).
    Default,
    /// The Nth audio stream, from 1 (`--aid N`, as mpv counts).
    Number(usize),
}

#[derive(Debug, Error)]
pub enum SourceError {
    #[error("cannot open the file for audio: {0}")]
    Open(crate::media::MediaError),
    #[error("no audio stream {0}")]
    NoTrack(usize),
    #[error("audio codec {0} is not supported")]
    Unsupported(String),
    #[error("cannot read audio: {0}")]
    Read(ff::Error),
}

/// Damaged packets in a row after which the stream is given up.
const MAX_ERRORS_IN_A_ROW: u32 = 100;

pub struct AudioSource {
    input: crate::media::SourceInput,
    index: usize,
    time_base: ff::Rational,
    decoder: ff::decoder::Audio,
    /// The next frame's pts when a frame has none.
    next_pts: Option<Duration>,
    damaged: u64,
    errors_in_a_row: u32,
    eof_sent: bool,
}

/// A decoded frame and its media time.
pub struct Decoded {
    pub frame: ff::frame::Audio,
    pub pts: Duration,
}

impl AudioSource {
    /// Opens `track` of `path`; Ok(None) when the file has no audio.
    pub fn open(path: &Path, track: Track) -> Result<Option<Self>, SourceError> {
        let mut input = crate::media::SourceInput::open(path).map_err(SourceError::Open)?;
        let audio =
            |st: &ff::format::stream::Stream| st.parameters().medium() == ff::media::Type::Audio;
        let stream = match track {
            Track::Default => match input.streams().best(ff::media::Type::Audio) {
                Some(st) => st,
                None => return Ok(None),
            },
            Track::Number(n) => input
                .streams()
                .filter(audio)
                .nth(n.saturating_sub(1))
                .ok_or(SourceError::NoTrack(n))?,
        };
        let index = stream.index();
        let time_base = stream.time_base();
        let parameters = stream.parameters();
        let name = parameters.id().name().to_string();
        let decoder = ff::codec::context::Context::from_parameters(parameters)
            .and_then(|context| context.decoder().audio())
            .map_err(|_| SourceError::Unsupported(name.clone()))?;
        debug!(
            stream = index,
            codec = %name,
            rate = decoder.rate(),
            channels = decoder.channels(),
            format = ?decoder.format(),
            "audio stream"
        );
        discard_other_streams(&mut input, index);
        Ok(Some(Self {
            input,
            index,
            time_base,
            decoder,
            next_pts: None,
            damaged: 0,
            errors_in_a_row: 0,
            eof_sent: false,
        }))
    }

    pub fn rate(&self) -> u32 {
        self.decoder.rate()
    }

    /// Seeks to the last key point at or before media time `target`.
    pub fn seek(&mut self, target: Duration) -> Result<(), SourceError> {
        let us = i64::try_from(target.as_micros()).unwrap_or(i64::MAX);
        self.input.seek(us, ..us + 1).map_err(SourceError::Read)?;
        self.decoder.flush();
        self.next_pts = None;
        self.eof_sent = false;
        Ok(())
    }

    /// The next decoded frame; None at the end of the stream.
    pub fn decode(&mut self) -> Result<Option<Decoded>, SourceError> {
        loop {
            let mut frame = ff::frame::Audio::empty();
            match self.decoder.receive_frame(&mut frame) {
                Ok(()) => {
                    self.errors_in_a_row = 0;
                    let pts = self.pts_of(&frame);
                    return Ok(Some(Decoded { frame, pts }));
                }
                Err(ff::Error::Eof) => return Ok(None),
                Err(ff::Error::Other { errno }) if errno == libc_eagain() => {}
                Err(e) => self.damage(&e)?,
            }
            if self.eof_sent {
                return Ok(None);
            }
            let mut packet = ff::Packet::empty();
            match packet.read(&mut self.input) {
                Ok(()) => {
                    if packet.stream() != self.index {
                        continue;
                    }
                    if let Err(e) = self.decoder.send_packet(&packet) {
                        self.damage(&e)?;
                    }
                }
                Err(ff::Error::Eof) => {
                    self.eof_sent = true;
                    // Draining after EOF cannot fail in a way worth reporting.
                    let _ = self.decoder.send_eof();
                }
                Err(e) => self.damage(&e)?,
            }
        }
    }

    /// A damaged packet: skipped, said once per file.
    fn damage(&mut self, error: &ff::Error) -> Result<(), SourceError> {
        self.damaged += 1;
        self.errors_in_a_row += 1;
        if self.damaged == 1 {
            warn!("damaged audio skipped: {error}");
        } else {
            debug!("damaged audio skipped: {error}");
        }
        if self.errors_in_a_row >= MAX_ERRORS_IN_A_ROW {
            return Err(SourceError::Read(*error));
        }
        Ok(())
    }

    fn pts_of(&mut self, frame: &ff::frame::Audio) -> Duration {
        let pts = frame
            .timestamp()
            .map(|ts| to_duration(ts, self.time_base))
            .or(self.next_pts)
            .unwrap_or_default();
        let rate = frame.rate().max(1);
        self.next_pts =
            Some(pts + Duration::from_secs_f64(frame.samples() as f64 / f64::from(rate)));
        pts
    }
}

fn libc_eagain() -> i32 {
    nix::errno::Errno::EAGAIN as i32
}

fn to_duration(ts: i64, tb: ff::Rational) -> Duration {
    crate::media::ts_to_duration(ts, (tb.numerator(), tb.denominator()))
}
