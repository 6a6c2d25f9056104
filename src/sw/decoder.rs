//! One libavcodec video decoder: packets in, `Frame`s out.

use std::collections::VecDeque;
use std::time::Duration;

use ff::ffi;
use ff::Discard;
use ffmpeg_next as ff;

use super::format::{from_av, target_for, Converter};
use super::planes::AvFramePlanes;
use super::{SwError, SwOptions};
use crate::frame::{DecoderKind, Frame, FrameStorage};
use crate::media::{ts_to_duration, Packet, VideoStreamInfo};

/// Bound on how many frames `send` moves out of a full decoder before it
/// gives up on a packet (a decoder that neither takes input nor gives
/// output is broken).
const MAX_DRAIN_PER_SEND: usize = 64;

/// Key packets remembered as in flight (see `SwDecoder::pending_keys`):
/// more than the frame threads FFmpeg runs here.
const MAX_PENDING_KEYS: usize = 32;

pub struct SwDecoder {
    decoder: ff::decoder::Video,
    codec_name: String,
    /// Threads asked for (0: libavcodec's choice).
    threads: usize,
    time_base: (i32, i32),
    /// Frame duration in `time_base` units when the stream says nothing.
    default_duration: i64,
    for_display: bool,
    converter: Converter,
    /// Frames taken out of the decoder while it refused input.
    ready: VecDeque<ff::frame::Video>,
    /// After an error or a discard, packets are dropped until a keyframe.
    need_keyframe: bool,
    /// Key packets sent whose frame has not come out yet (their pts, in
    /// decode order). libavcodec gives each packet's result, its frame or
    /// its error, in decode order, several packets late with frame
    /// threading: an error surfacing while a key packet is pending belongs
    /// to a packet before it (or to it), so no packet is skipped after
    /// that error; decoding resumes at the pending key frame.
    pending_keys: VecDeque<Option<i64>>,
    /// After an error, frames still in flight (frame threading reports an
    /// error a few packets late) are dropped until a key frame comes out:
    /// they may reference the picture that failed.
    discard_until_key_frame: bool,
    skipped_packets: u64,
    discarded_frames: u64,
    /// Packets are decoded only if later pictures refer to them (before
    /// an exact seek's target): libavcodec's `skip_frame` at non-reference,
    /// as mpv's `--hr-seek-framedrop`.
    references_only: bool,
    /// libavcodec's `skip_frame` as last set.
    skipping: Discard,
    eof_sent: bool,
    next_pts: i64,
    epoch: u64,
}

impl std::fmt::Debug for SwDecoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SwDecoder")
            .field("codec", &self.codec_name)
            .field("epoch", &self.epoch)
            .finish()
    }
}

impl SwDecoder {
    pub fn new(stream: &VideoStreamInfo, opts: SwOptions) -> Result<SwDecoder, SwError> {
        crate::media::init_ffmpeg();
        if super::decoder_name(stream.codec).is_none()
            && stream.parameters.get().id() == ff::codec::Id::None
        {
            return Err(SwError::NoSoftwareCodec(stream.codec));
        }
        let params = stream.parameters.get().clone();
        let id = params.id();
        let codec_name = id.name().to_owned();
        let codec = ff::decoder::find(id).ok_or_else(|| SwError::NoDecoder(codec_name.clone()))?;
        let open_err = |e: ff::Error| SwError::Open {
            codec: codec_name.clone(),
            message: e.to_string(),
        };
        let mut ctx = ff::codec::Context::from_parameters(params).map_err(open_err)?;
        // SAFETY: the context is ours and not yet opened; libavcodec reads
        // these two plain fields when it is opened.
        unsafe {
            let c = ctx.as_mut_ptr();
            (*c).thread_count = i32::try_from(opts.threads).unwrap_or(0);
            (*c).thread_type = ffi::FF_THREAD_FRAME | ffi::FF_THREAD_SLICE;
        }
        let mut decoder = ctx.decoder();
        decoder.set_packet_time_base(stream.time_base);
        let decoder = decoder
            .open_as(codec)
            .and_then(|d| d.video())
            .map_err(open_err)?;
        let default_duration = stream
            .frame_rate
            .map(|(n, d)| {
                // One frame (d/n s) in time_base (tn/td) units, rounded.
                let (tn, td) = stream.time_base;
                let num = d as i128 * td as i128;
                let den = n as i128 * tn as i128;
                if den > 0 {
                    ((num + den / 2) / den) as i64
                } else {
                    0
                }
            })
            .unwrap_or(0);
        tracing::debug!(
            "software decoder {} ({}), threads {}",
            codec.name(),
            codec_name,
            opts.threads
        );
        Ok(SwDecoder {
            decoder,
            codec_name: codec.name().to_owned(),
            threads: opts.threads,
            time_base: stream.time_base,
            default_duration,
            for_display: opts.for_display,
            converter: Converter::default(),
            ready: VecDeque::new(),
            need_keyframe: false,
            pending_keys: VecDeque::new(),
            discard_until_key_frame: false,
            skipped_packets: 0,
            references_only: false,
            skipping: Discard::Default,
            discarded_frames: 0,
            eof_sent: false,
            next_pts: stream.start_pts,
            epoch: 0,
        })
    }

    /// The decoder in words, for the OSD's stats page.
    pub fn describe(&self) -> String {
        match self.threads {
            0 => format!("software, libavcodec {}, threads auto", self.codec_name),
            n => format!("software, libavcodec {}, {n} threads", self.codec_name),
        }
    }

    /// The libavcodec decoder in use (e.g. `h264`, `libdav1d`).
    pub fn decoder_name(&self) -> &str {
        &self.codec_name
    }

    /// Packets dropped while waiting for a keyframe after an error or discard.
    pub fn skipped_packets(&self) -> u64 {
        self.skipped_packets
    }

    /// Decoded frames dropped after an error because they may reference
    /// the picture that failed.
    pub fn discarded_frames(&self) -> u64 {
        self.discarded_frames
    }

    /// Bumped at each `discard`; stamped on every frame.
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// Feeds one packet. Call `receive` until it returns `None` before the
    /// next `send` to keep memory flat; if you do not, frames are queued.
    pub fn send(&mut self, packet: &Packet) -> Result<(), SwError> {
        if self.need_keyframe {
            if !packet.keyframe {
                self.skipped_packets += 1;
                return Ok(());
            }
            self.need_keyframe = false;
        }
        self.apply_skipping();
        let mut av = packet.data.to_av_packet();
        av.set_pts(packet.pts);
        av.set_dts(packet.dts);
        av.set_duration(packet.duration);
        if packet.keyframe {
            av.set_flags(ff::packet::Flags::KEY);
            // A key packet that never gives a frame (refused by the
            // decoder) would stay: only the newest few can still be in
            // flight (frame threading holds one packet per thread).
            if self.pending_keys.len() >= MAX_PENDING_KEYS {
                self.pending_keys.pop_front();
            }
            self.pending_keys.push_back(packet.pts);
        }
        // An error surfacing while the decoder is drained here belongs to an
        // earlier packet: it is returned after this one is dealt with.
        let mut earlier_error = None;
        let mut attempts = 0;
        loop {
            if self.need_keyframe && !packet.keyframe {
                self.skipped_packets += 1;
                break;
            }
            attempts += 1;
            if attempts > MAX_DRAIN_PER_SEND {
                return Err(
                    self.decode_error(format!("{} decoder keeps refusing input", self.codec_name))
                );
            }
            match self.decoder.send_packet(&av) {
                Ok(()) => break,
                Err(ff::Error::Other { errno }) if errno == ff::util::error::EAGAIN => {
                    match self.receive_av() {
                        Ok(Some(frame)) => self.ready.push_back(frame),
                        Ok(None) => {
                            return Err(self.decode_error(format!(
                                "{} decoder accepts no input and gives no output",
                                self.codec_name
                            )))
                        }
                        // This packet, if a keyframe, is pending already:
                        // it is still sent.
                        Err(e) => {
                            earlier_error.get_or_insert(e);
                        }
                    }
                }
                Err(ff::Error::Eof) => {
                    return Err(SwError::Decode("packet sent after end of stream".into()))
                }
                Err(e) => {
                    return Err(self.decode_error(format!("packet at pts {:?}: {e}", packet.pts)))
                }
            }
        }
        earlier_error.map_or(Ok(()), Err)
    }

    /// See `FrameDecoder::set_references_only`.
    pub fn set_references_only(&mut self, references_only: bool) {
        self.references_only = references_only;
    }

    /// `skip_frame` for the packet about to be sent (libavcodec reads it
    /// per packet, frame threads included).
    fn apply_skipping(&mut self) {
        let wanted = if self.references_only {
            Discard::NonReference
        } else {
            Discard::Default
        };
        if wanted != self.skipping {
            self.decoder.skip_frame(wanted);
            self.skipping = wanted;
        }
    }

    /// The next decoded frame, or `None` when the decoder needs more input
    /// (or is fully drained after `send_eof`).
    pub fn receive(&mut self) -> Result<Option<Frame>, SwError> {
        loop {
            let av = match self.ready.pop_front() {
                Some(f) => f,
                None => match self.receive_av()? {
                    Some(f) => f,
                    None => return Ok(None),
                },
            };
            if av.is_key() && !self.pending_keys.is_empty() {
                // This frame's key packet, and any before it that gave no
                // frame; the oldest when no pts matches.
                let at = self.pending_keys.iter().position(|&p| p == av.pts());
                self.pending_keys.drain(..=at.unwrap_or(0));
            }
            if self.discard_until_key_frame {
                if !av.is_key() {
                    self.discarded_frames += 1;
                    continue;
                }
                self.discard_until_key_frame = false;
            }
            return self.make_frame(av).map(Some);
        }
    }

    /// Signals the end of input: `receive` then returns the buffered frames.
    pub fn send_eof(&mut self) -> Result<(), SwError> {
        if self.eof_sent {
            return Ok(());
        }
        self.eof_sent = true;
        match self.decoder.send_eof() {
            Ok(()) | Err(ff::Error::Eof) => Ok(()),
            Err(e) => Err(SwError::Decode(format!("draining: {e}"))),
        }
    }

    /// Drops every buffered frame and packet (after a seek); decoding
    /// resumes at the next keyframe sent.
    pub fn discard(&mut self) {
        self.decoder.flush();
        self.ready.clear();
        self.need_keyframe = true;
        self.pending_keys.clear();
        self.discard_until_key_frame = false;
        self.eof_sent = false;
        self.epoch += 1;
    }

    fn decode_error(&mut self, message: String) -> SwError {
        // Packets up to the next keyframe are skipped unless one went in
        // after the packet that failed (see `pending_keys`); either way,
        // frames come out again from a key frame on.
        if self.pending_keys.is_empty() {
            self.need_keyframe = true;
        }
        self.discard_until_key_frame = true;
        SwError::Decode(message)
    }

    fn receive_av(&mut self) -> Result<Option<ff::frame::Video>, SwError> {
        let mut frame = ff::frame::Video::empty();
        match self.decoder.receive_frame(&mut frame) {
            Ok(()) => Ok(Some(frame)),
            Err(ff::Error::Other { errno }) if errno == ff::util::error::EAGAIN => Ok(None),
            Err(ff::Error::Eof) => Ok(None),
            Err(e) => Err(self.decode_error(e.to_string())),
        }
    }

    fn make_frame(&mut self, av: ff::frame::Video) -> Result<Frame, SwError> {
        let target = target_for(av.format(), self.for_display);
        let av = if from_av(av.format()) == Some(target) {
            av
        } else {
            self.converter.convert(&av, target)?
        };
        let pts_raw = av.timestamp().or(av.pts()).unwrap_or(self.next_pts);
        let duration_raw = match av.packet().duration {
            d if d > 0 => d,
            _ => self.default_duration,
        };
        self.next_pts = pts_raw.saturating_add(duration_raw.max(1));
        let sar = av.aspect_ratio();
        let sample_aspect = if sar.numerator() > 0 && sar.denominator() > 0 {
            (sar.numerator() as u32, sar.denominator() as u32)
        } else {
            (1, 1)
        };
        Ok(Frame {
            pts: ts_to_duration(pts_raw, self.time_base),
            pts_raw,
            duration: if duration_raw > 0 {
                ts_to_duration(duration_raw, self.time_base)
            } else {
                Duration::ZERO
            },
            duration_raw,
            width: av.width(),
            height: av.height(),
            format: target,
            sample_aspect,
            decoder: DecoderKind::Software,
            epoch: self.epoch,
            storage: FrameStorage::Cpu(Box::new(AvFramePlanes::new(av))),
        })
    }
}
