//! Which decoder a file gets: a V4L2 stateless decoder that handles the
//! stream (discovered, or the node named with `--device`), else libavcodec,
//! as `--hwdec` allows.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use tracing::info;

use super::pipeline::{DecodeFault, FrameDecoder};
use crate::cli::Hwdec;
use crate::frame::{DecoderKind, Frame};
use crate::media::{Codec, Packet, VideoStreamInfo};
use crate::sw::{SwDecoder, SwOptions};
use crate::v4l2::decoder::{DecoderError, V4l2Decoder};
use crate::v4l2::discovery::{self, DecoderInfo};
use crate::v4l2::h264::{self, H264Codec};
use crate::v4l2::session::{CaptureChooser, SessionError};

/// What the user allows.
#[derive(Clone, Debug)]
pub struct DecoderChoice {
    pub hwdec: Hwdec,
    /// Use this video node rather than discovering one.
    pub device: Option<PathBuf>,
    /// Picks the V4L2 CAPTURE format from what the driver offers (the
    /// compositor's side of the negotiation); None: the driver's choice.
    pub capture_chooser: Option<CaptureChooser>,
}

impl Default for DecoderChoice {
    fn default() -> Self {
        Self {
            hwdec: Hwdec::Auto,
            device: None,
            capture_chooser: None,
        }
    }
}

impl DecoderChoice {
    /// A V4L2 decoder only (discovered), its CAPTURE format picked by
    /// `capture_chooser`.
    pub fn v4l2_only(capture_chooser: CaptureChooser) -> Self {
        Self {
            hwdec: Hwdec::V4l2,
            device: None,
            capture_chooser: Some(capture_chooser),
        }
    }
}

/// The decoder a stream would get, before any is opened.
#[derive(Debug)]
pub enum Plan {
    V4l2(Box<DecoderInfo>),
    /// Software decoding, and why not V4L2.
    Software(String),
}

/// Finds the V4L2 decoder for the stream, or says why there is none.
pub fn plan(stream: &VideoStreamInfo, choice: &DecoderChoice) -> Plan {
    if choice.hwdec == Hwdec::No {
        return Plan::Software("--hwdec=no".into());
    }
    if stream.codec != Codec::H264 {
        return Plan::Software(format!("reel has no V4L2 path for {} yet", stream.codec));
    }
    let needs = h264::requirements(stream);
    let found = match &choice.device {
        Some(path) => discovery::probe_device(path).and_then(|info| {
            info.check(&needs)?;
            Ok(info)
        }),
        None => discovery::discover().choose(&needs).cloned(),
    };
    match found {
        Ok(info) => Plan::V4l2(Box::new(info)),
        Err(e) => Plan::Software(e.to_string()),
    }
}

/// Opens the decoder for `stream`: V4L2 when `plan` finds one and it
/// opens, software otherwise (an error with `--hwdec=v4l2`).
pub fn open(
    stream: &VideoStreamInfo,
    choice: &DecoderChoice,
    sw: SwOptions,
) -> Result<Box<dyn FrameDecoder>> {
    let reason = match plan(stream, choice) {
        Plan::V4l2(info) => match h264::open_decoder(&info, stream, choice.capture_chooser.clone())
        {
            Ok(decoder) => {
                info!(
                    device = %info.video_node.display(),
                    driver = %info.driver,
                    "decoder: V4L2 stateless"
                );
                return Ok(Box::new(decoder));
            }
            Err(e) => e,
        },
        Plan::Software(reason) => reason,
    };
    if choice.hwdec == Hwdec::V4l2 {
        bail!("--hwdec=v4l2: no V4L2 decoding for this file: {reason}");
    }
    if choice.hwdec == Hwdec::Auto {
        info!("decoder: software, not V4L2: {reason}");
    }
    let decoder =
        SwDecoder::new(stream, sw).with_context(|| format!("cannot decode {}", stream.codec))?;
    Ok(Box::new(decoder))
}

impl From<DecoderError> for DecodeFault {
    fn from(error: DecoderError) -> Self {
        // Device and setup failures end the stream; a bad picture does not.
        let recoverable = match &error {
            DecoderError::Bitstream(_) | DecoderError::Unreadable(_) => true,
            DecoderError::Session(e) => matches!(
                e,
                SessionError::Controls { .. }
                    | SessionError::MissingControl(_)
                    | SessionError::BitstreamTooLarge { .. }
                    | SessionError::EmptyBitstream
                    | SessionError::RequestTimeout { .. }
                    | SessionError::NoCaptureBuffer { .. }
                    | SessionError::DuplicateTimestamp(_)
            ),
        };
        Self {
            recoverable,
            error: error.into(),
        }
    }
}

impl FrameDecoder for V4l2Decoder<H264Codec> {
    fn kind(&self) -> DecoderKind {
        DecoderKind::V4l2Stateless
    }
    fn send(&mut self, packet: &Packet) -> Result<(), DecodeFault> {
        let pts = packet.pts.or(packet.dts).unwrap_or(0);
        Ok(V4l2Decoder::send(self, &packet.data, pts, packet.duration)?)
    }
    fn receive(&mut self) -> Result<Option<Frame>, DecodeFault> {
        Ok(V4l2Decoder::receive(self)?)
    }
    fn send_eof(&mut self) -> Result<(), DecodeFault> {
        Ok(V4l2Decoder::send_eof(self)?)
    }
    fn flush(&mut self) {
        V4l2Decoder::flush(self)
    }
}
