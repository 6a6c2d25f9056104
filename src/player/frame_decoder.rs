//! What the pipeline asks of a decoder (software or V4L2): packets in,
//! frames out, faults that say whether decoding can go on, and how many
//! decoded frames the player may hold at once.

use crate::frame::{DecoderKind, Frame};
use crate::media::Packet;
use crate::sw::{SwDecoder, SwError};
use crate::v4l2::decoder::{DecoderError, V4l2Decoder};

/// Frames the decode thread decodes ahead of the one on screen.
pub const DECODE_AHEAD: usize = 4;

/// Decoded frames the player may hold at once outside the decoder: the
/// compositor's (2: on screen, and committed but not yet shown), the
/// decode-ahead queue, and 2 in transit (the one the decode thread is
/// handing over, the player's next). A V4L2 decoder keeps a CAPTURE
/// buffer for each.
pub const FRAMES_HELD_DOWNSTREAM: usize = 2 + DECODE_AHEAD + 2;

/// A decoder's complaint about one packet or frame. Recoverable faults
/// (corrupt data) are counted and decoding goes on at the next keyframe;
/// the others end the stream.
#[derive(Debug)]
pub struct DecodeFault {
    pub recoverable: bool,
    pub error: anyhow::Error,
}

impl From<SwError> for DecodeFault {
    fn from(error: SwError) -> Self {
        Self {
            recoverable: error.is_recoverable(),
            error: error.into(),
        }
    }
}

/// Anything that turns packets into frames: the software decoder and the
/// V4L2 stateless decoder.
pub trait FrameDecoder: Send {
    fn kind(&self) -> DecoderKind;
    fn send(&mut self, packet: &Packet) -> Result<(), DecodeFault>;
    fn receive(&mut self) -> Result<Option<Frame>, DecodeFault>;
    fn send_eof(&mut self) -> Result<(), DecodeFault>;
    /// Forgets every buffered packet and frame (after a container seek).
    fn discard(&mut self);
}

impl FrameDecoder for SwDecoder {
    fn kind(&self) -> DecoderKind {
        DecoderKind::Software
    }
    fn send(&mut self, packet: &Packet) -> Result<(), DecodeFault> {
        Ok(SwDecoder::send(self, packet)?)
    }
    fn receive(&mut self) -> Result<Option<Frame>, DecodeFault> {
        Ok(SwDecoder::receive(self)?)
    }
    fn send_eof(&mut self) -> Result<(), DecodeFault> {
        Ok(SwDecoder::send_eof(self)?)
    }
    fn discard(&mut self) {
        SwDecoder::discard(self)
    }
}

impl From<DecoderError> for DecodeFault {
    fn from(error: DecoderError) -> Self {
        Self {
            recoverable: error.is_recoverable(),
            error: error.into(),
        }
    }
}

impl FrameDecoder for V4l2Decoder {
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
    fn discard(&mut self) {
        V4l2Decoder::discard(self)
    }
}
