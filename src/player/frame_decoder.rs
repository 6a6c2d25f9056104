//! What the pipeline asks of a decoder (software or V4L2): packets in,
//! frames out, faults that say whether decoding can go on, and how many
//! decoded frames the player may hold at once.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::frame::{DecoderKind, Frame};
use crate::media::Packet;
use crate::sw::{FwhtDecoder, SwDecoder, SwError};
use crate::v4l2::decoder::{DecoderError, V4l2Decoder};

/// Frames the decode thread decodes ahead of the one on screen.
pub const DECODE_AHEAD: usize = 4;

/// Decoded frames the player may hold at once outside the decoder: the
/// compositor's (2: on screen, and committed but not yet shown), the
/// decode-ahead queue, and 2 in transit (the one the decode thread is
/// handing over, the player's next). A V4L2 decoder keeps a CAPTURE
/// buffer for each.
pub const FRAMES_HELD_DOWNSTREAM: usize = 2 + DECODE_AHEAD + 2;

/// Pictures a decoder knew to be damaged (the V4L2 path: returned with
/// `V4L2_BUF_FLAG_ERROR`, or their request failed) and pictures it did not
/// hand out because of them (the damaged ones and those that may reference
/// them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DamageCounts {
    pub decode_errors: u64,
    pub frames_skipped: u64,
}

/// [`DamageCounts`] over a whole run, shared between the decode thread and
/// the player's statistics.
#[derive(Debug, Default)]
pub struct DamageCounters {
    decode_errors: AtomicU64,
    frames_skipped: AtomicU64,
}

impl DamageCounters {
    pub fn add(&self, counts: DamageCounts) {
        self.decode_errors
            .fetch_add(counts.decode_errors, Ordering::Relaxed);
        self.frames_skipped
            .fetch_add(counts.frames_skipped, Ordering::Relaxed);
    }

    pub fn get(&self) -> DamageCounts {
        DamageCounts {
            decode_errors: self.decode_errors.load(Ordering::Relaxed),
            frames_skipped: self.frames_skipped.load(Ordering::Relaxed),
        }
    }
}

/// A decoder's complaint about one packet or frame. Recoverable faults
/// (corrupt data) are counted and decoding goes on at the next keyframe;
/// the others end the stream.
#[derive(Debug)]
pub struct DecodeFault {
    pub recoverable: bool,
    /// The decoding device failed (gone, stuck), or cannot decode what the
    /// stream now needs: another decoder may take over.
    pub hand_over: bool,
    pub error: anyhow::Error,
}

impl From<SwError> for DecodeFault {
    fn from(error: SwError) -> Self {
        Self {
            recoverable: error.is_recoverable(),
            hand_over: false,
            error: error.into(),
        }
    }
}

/// Anything that turns packets into frames: the software decoder and the
/// V4L2 stateless decoder.
pub trait FrameDecoder: Send {
    fn kind(&self) -> DecoderKind;
    /// The decoder in words (device and driver, or libavcodec's decoder).
    fn describe(&self) -> String;
    fn send(&mut self, packet: &Packet) -> Result<(), DecodeFault>;
    fn receive(&mut self) -> Result<Option<Frame>, DecodeFault>;
    fn send_eof(&mut self) -> Result<(), DecodeFault>;
    /// Forgets every buffered packet and frame (after a container seek).
    fn discard(&mut self);
    /// Whether the packets sent from now on are shown wholly before an
    /// exact seek's target, so that their pictures are wanted only as
    /// references: a decoder may leave out those no other picture refers
    /// to (and never put them out).
    fn set_references_only(&mut self, references_only: bool) {
        let _ = references_only;
    }
    /// Damaged pictures since the decoder was opened.
    fn damage(&self) -> DamageCounts {
        DamageCounts::default()
    }
    /// Whether the decoder is decoding again after its last fault (a V4L2
    /// decoder after a reset: once a request completes). Until then what
    /// the fault cost may still be decoded again by another decoder.
    fn resumed(&self) -> bool {
        true
    }
}

impl FrameDecoder for SwDecoder {
    fn kind(&self) -> DecoderKind {
        DecoderKind::Software
    }
    fn describe(&self) -> String {
        SwDecoder::describe(self)
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
    fn set_references_only(&mut self, references_only: bool) {
        SwDecoder::set_references_only(self, references_only)
    }
}

impl FrameDecoder for FwhtDecoder {
    fn kind(&self) -> DecoderKind {
        DecoderKind::Software
    }
    fn describe(&self) -> String {
        FwhtDecoder::describe(self)
    }
    fn send(&mut self, packet: &Packet) -> Result<(), DecodeFault> {
        Ok(FwhtDecoder::send(self, packet)?)
    }
    fn receive(&mut self) -> Result<Option<Frame>, DecodeFault> {
        Ok(FwhtDecoder::receive(self))
    }
    fn send_eof(&mut self) -> Result<(), DecodeFault> {
        Ok(())
    }
    fn discard(&mut self) {
        FwhtDecoder::discard(self)
    }
}

impl From<DecoderError> for DecodeFault {
    fn from(error: DecoderError) -> Self {
        Self {
            recoverable: error.is_recoverable(),
            hand_over: error.needs_another_decoder(),
            error: error.into(),
        }
    }
}

impl FrameDecoder for V4l2Decoder {
    fn kind(&self) -> DecoderKind {
        DecoderKind::V4l2Stateless
    }
    fn describe(&self) -> String {
        V4l2Decoder::describe(self).to_owned()
    }
    fn send(&mut self, packet: &Packet) -> Result<(), DecodeFault> {
        let pts = packet.pts.or(packet.dts).unwrap_or(0);
        Ok(V4l2Decoder::send(
            self,
            &packet.data,
            packet.nal_units.as_ref(),
            pts,
            packet.duration,
        )?)
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
    fn set_references_only(&mut self, references_only: bool) {
        V4l2Decoder::set_references_only(self, references_only)
    }
    fn damage(&self) -> DamageCounts {
        DamageCounts {
            decode_errors: self.damage.decode_errors,
            frames_skipped: self.damage.frames_skipped,
        }
    }
    fn resumed(&self) -> bool {
        V4l2Decoder::resumed(self)
    }
}
