//! The decode pipeline for one file: demuxer + decoder, pulled one frame at
//! a time, with frame-exact seeking (container seek to the keyframe at or
//! before the target, then decode forward and drop what comes before it).

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};
use tracing::{debug, info, warn};

use crate::frame::{DecoderKind, Frame};
use crate::media::{Demuxer, Packet, VideoStreamInfo};
use crate::sw::{SwDecoder, SwOptions};

/// Anything that turns packets into frames: the software decoder today, the
/// V4L2 stateless decoder next to it.
pub trait FrameDecoder: Send {
    fn kind(&self) -> DecoderKind;
    /// Feeds one packet. An error is about this packet only: decoding goes on.
    fn send(&mut self, packet: &Packet) -> Result<()>;
    fn receive(&mut self) -> Result<Option<Frame>>;
    fn send_eof(&mut self) -> Result<()>;
    /// Forgets every buffered packet and frame (after a container seek).
    fn flush(&mut self);
}

impl FrameDecoder for SwDecoder {
    fn kind(&self) -> DecoderKind {
        DecoderKind::Software
    }
    fn send(&mut self, packet: &Packet) -> Result<()> {
        Ok(SwDecoder::send(self, packet)?)
    }
    fn receive(&mut self) -> Result<Option<Frame>> {
        Ok(SwDecoder::receive(self)?)
    }
    fn send_eof(&mut self) -> Result<()> {
        Ok(SwDecoder::send_eof(self)?)
    }
    fn flush(&mut self) {
        SwDecoder::flush(self)
    }
}

/// How the pipeline is built.
#[derive(Clone, Debug)]
pub struct PipelineOptions {
    /// Frames go to the screen (converted to a layout the display can show)
    /// rather than to a checksum or nowhere (kept in the decoder's layout).
    pub for_display: bool,
    pub threads: usize,
}

pub struct Pipeline {
    demuxer: Demuxer,
    decoder: Box<dyn FrameDecoder>,
    epoch: u64,
    /// Frames ending before this media time are dropped (frame-exact seek).
    drop_before: Option<Duration>,
    /// The last frame dropped while seeking: shown if the target lies past
    /// the last frame, so a seek beyond the end shows the final picture.
    last_dropped: Option<Frame>,
    eof_sent: bool,
    /// Demux or decode errors seen (the stream went on after each).
    pub errors: u64,
}

impl Pipeline {
    pub fn open(path: &Path, options: &PipelineOptions) -> Result<Self> {
        let demuxer = Demuxer::open(path)?;
        let stream = demuxer.stream();
        let decoder = SwDecoder::new(
            stream,
            SwOptions {
                threads: options.threads,
                for_display: options.for_display,
            },
        )
        .with_context(|| format!("cannot decode {}", stream.codec))?;
        info!(
            file = %path.display(),
            codec = %stream.codec,
            width = stream.width,
            height = stream.height,
            decoder = %DecoderKind::Software,
            "opened"
        );
        Ok(Self {
            demuxer,
            decoder: Box::new(decoder),
            epoch: 0,
            drop_before: None,
            last_dropped: None,
            eof_sent: false,
            errors: 0,
        })
    }

    pub fn stream(&self) -> &VideoStreamInfo {
        self.demuxer.stream()
    }

    pub fn decoder_kind(&self) -> DecoderKind {
        self.decoder.kind()
    }

    /// Positions are media times counted from the stream's start time.
    pub fn media_time(&self, position: Duration) -> Duration {
        self.stream().start_time + position
    }

    pub fn position_of(&self, frame: &Frame) -> Duration {
        frame.pts.saturating_sub(self.stream().start_time)
    }

    /// Seeks to `position`; frames pulled afterwards carry `epoch`, and the
    /// first one is the frame showing at `position`.
    pub fn seek(&mut self, position: Duration, epoch: u64) -> Result<()> {
        let target = self.media_time(position);
        debug!(?position, ?target, epoch, "seek");
        self.decoder.flush();
        self.demuxer.seek(target)?;
        self.epoch = epoch;
        self.drop_before = Some(target);
        self.last_dropped = None;
        self.eof_sent = false;
        Ok(())
    }

    /// The next frame in presentation order, or None at the end of the stream.
    pub fn next_frame(&mut self) -> Result<Option<Frame>> {
        loop {
            if let Some(mut frame) = self.decoder.receive()? {
                frame.epoch = self.epoch;
                if self.before_seek_target(&frame) {
                    self.last_dropped = Some(frame);
                    continue;
                }
                self.drop_before = None;
                self.last_dropped = None;
                return Ok(Some(frame));
            }
            if self.eof_sent {
                self.drop_before = None;
                return Ok(self.last_dropped.take());
            }
            match self.demuxer.next_packet() {
                Ok(Some(packet)) => {
                    if let Err(error) = self.decoder.send(&packet) {
                        self.errors += 1;
                        warn!("decode error (continuing at the next keyframe): {error:#}");
                    }
                }
                Ok(None) => {
                    self.decoder.send_eof()?;
                    self.eof_sent = true;
                }
                Err(error) => {
                    self.errors += 1;
                    warn!("read error, ending the stream here: {error:#}");
                    self.decoder.send_eof()?;
                    self.eof_sent = true;
                }
            }
        }
    }

    fn before_seek_target(&self, frame: &Frame) -> bool {
        let Some(target) = self.drop_before else {
            return false;
        };
        if frame.duration.is_zero() {
            frame.pts < target
        } else {
            frame.pts + frame.duration <= target
        }
    }
}
