//! The decode pipeline for one file: demuxer + decoder, pulled one frame at
//! a time, with frame-exact seeking (container seek to the keyframe at or
//! before the target, then decode forward and drop what comes before it).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use tracing::{debug, info, warn};

use crate::frame::{DecoderKind, Frame};
use crate::media::{duration_to_ts, Demuxer, Packet, VideoStreamInfo};
use crate::message::{causes, Causes};
use crate::sw::SwOptions;

use super::decoder_choice::{self, DecoderChoice, Hwdec};
use super::frame_decoder::{DamageCounters, DamageCounts, DecodeFault, FrameDecoder};

/// Stands in for a decoder between closing one and opening the next.
struct Closed;

impl FrameDecoder for Closed {
    fn kind(&self) -> DecoderKind {
        DecoderKind::Software
    }
    fn describe(&self) -> String {
        "closed".into()
    }
    fn send(&mut self, _: &Packet) -> Result<(), DecodeFault> {
        Err(DecodeFault {
            recoverable: false,
            hand_over: false,
            error: anyhow::anyhow!("the decoder is closed"),
        })
    }
    fn receive(&mut self) -> Result<Option<Frame>, DecodeFault> {
        Ok(None)
    }
    fn send_eof(&mut self) -> Result<(), DecodeFault> {
        Ok(())
    }
    fn discard(&mut self) {}
}

/// How the pipeline is built.
#[derive(Clone, Debug)]
pub struct PipelineOptions {
    /// Frames go to the screen (converted to a layout the display can show)
    /// rather than to a checksum or nowhere (kept in the decoder's layout).
    pub for_display: bool,
    pub threads: usize,
    pub decoder: DecoderChoice,
}

pub struct Pipeline {
    demuxer: Demuxer,
    decoder: Box<dyn FrameDecoder>,
    /// How the decoder was chosen, to open it again (`reopen_decoder`).
    decoder_options: (DecoderChoice, SwOptions),
    epoch: u64,
    /// Frames ending before this media time are dropped (frame-exact seek).
    drop_before: Option<Duration>,
    /// The last frame dropped while seeking: shown if the target lies past
    /// the last frame, so a seek beyond the end shows the final picture.
    last_dropped: Option<Frame>,
    /// The seek target in the stream's time base, while it is looked for.
    seek_target_ts: Option<i64>,
    /// Pictures decoded and dropped on the way to the seek target.
    dropped_before_target: u64,
    /// Packets sent on the way to it whose pictures were wanted only as
    /// references.
    sent_references_only: u64,
    eof_sent: bool,
    /// (pts, duration) of the last frame handed out: where another decoder
    /// takes over.
    last_delivered: Option<(Duration, Duration)>,
    damage: Arc<DamageCounters>,
    /// The decoder's counts already taken into `unsettled`.
    damage_published: DamageCounts,
    /// Demux or decode errors seen (the stream went on after each).
    errors: u64,
    /// The first of them, for the report at the end.
    first_error: Option<String>,
    unsettled: Unsettled,
}

/// Errors and damage not yet counted: those of a decoder that has not
/// resumed since a fault. When it fails instead, the decoder taking over
/// decodes again from the last frame handed out, and they cost nothing.
#[derive(Default)]
struct Unsettled {
    errors: u64,
    first_error: Option<String>,
    damage: DamageCounts,
}

impl Pipeline {
    pub fn open(path: &Path, options: &PipelineOptions) -> Result<Self> {
        let demuxer = Demuxer::open(path)?;
        let stream = demuxer.stream();
        let sw = SwOptions {
            threads: options.threads,
            for_display: options.for_display,
        };
        let decoder = decoder_choice::open(stream, &options.decoder, sw)?;
        info!(
            file = %path.display(),
            codec = %stream.codec,
            width = stream.width,
            height = stream.height,
            decoder = %decoder.kind(),
            "opened"
        );
        Ok(Self {
            demuxer,
            decoder,
            decoder_options: (options.decoder.clone(), sw),
            epoch: 0,
            drop_before: None,
            last_dropped: None,
            seek_target_ts: None,
            dropped_before_target: 0,
            sent_references_only: 0,
            eof_sent: false,
            last_delivered: None,
            damage: Arc::default(),
            damage_published: DamageCounts::default(),
            errors: 0,
            first_error: None,
            unsettled: Unsettled::default(),
        })
    }

    pub fn stream(&self) -> &VideoStreamInfo {
        self.demuxer.stream()
    }

    /// What abandons a network source's reads from another thread.
    pub fn canceller(&self) -> crate::media::network::SourceCancel {
        self.demuxer.canceller()
    }

    pub fn decoder_kind(&self) -> DecoderKind {
        self.decoder.kind()
    }

    /// Whether the file has a sound track (the audio thread opens the file
    /// again only then).
    pub fn has_audio(&self) -> bool {
        self.demuxer
            .streams()
            .iter()
            .any(|s| s.kind == crate::media::StreamKind::Audio)
    }

    pub fn describe_decoder(&self) -> String {
        self.decoder.describe()
    }

    /// Positions are media times counted from the stream's start time.
    pub fn media_time(&self, position: Duration) -> Duration {
        self.stream().start_time + position
    }

    pub fn position_of(&self, frame: &Frame) -> Duration {
        frame.pts.saturating_sub(self.stream().start_time)
    }

    /// Frames pulled from now on carry `epoch`.
    pub fn set_epoch(&mut self, epoch: u64) {
        self.epoch = epoch;
    }

    /// Seeks to `position`; frames pulled afterwards carry `epoch`, and the
    /// first one is the frame showing at `position`.
    pub fn seek(&mut self, position: Duration, epoch: u64) -> Result<()> {
        let target = self.media_time(position);
        debug!(?position, ?target, epoch, "seek");
        self.settle();
        self.decoder.discard();
        self.demuxer.seek(target)?;
        self.epoch = epoch;
        self.drop_before = Some(target);
        self.seek_target_ts = Some(duration_to_ts(target, self.stream().time_base));
        self.dropped_before_target = 0;
        self.sent_references_only = 0;
        self.last_dropped = None;
        self.eof_sent = false;
        Ok(())
    }

    /// Closes the decoder and opens it again (a V4L2 decoder then asks its
    /// chooser for a CAPTURE format afresh and allocates new buffers);
    /// follow with `seek` to go on where playback was. Frames still shown
    /// keep their old buffers until the compositor lets go of them.
    pub fn reopen_decoder(&mut self) -> Result<()> {
        self.publish_damage();
        self.damage_published = DamageCounts::default();
        let old = self.decoder.kind();
        // The old decoder goes first: a device may allow one context only.
        self.decoder = Box::new(Closed);
        let (choice, sw) = &self.decoder_options;
        self.decoder = decoder_choice::open(self.demuxer.stream(), choice, *sw)?;
        info!(from = %old, to = %self.decoder.kind(), "decoder reopened");
        Ok(())
    }

    /// The next frame in presentation order, or None at the end of the stream.
    pub fn next_frame(&mut self) -> Result<Option<Frame>> {
        let next = self.pull_frame();
        // Faults the decoder has not resumed after stay unsettled while
        // frames come (those it put out before resetting).
        if !matches!(next, Ok(Some(_))) || self.decoder.resumed() {
            self.settle();
        }
        next
    }

    fn pull_frame(&mut self) -> Result<Option<Frame>> {
        loop {
            self.publish_damage();
            match self.decoder.receive() {
                Ok(Some(mut frame)) => {
                    frame.epoch = self.epoch;
                    if self.before_seek_target(&frame) {
                        self.last_dropped = Some(frame);
                        self.dropped_before_target += 1;
                        continue;
                    }
                    if self.drop_before.take().is_some() {
                        self.seek_target_ts = None;
                        debug!(
                            pts = ?frame.pts,
                            decoded_before = self.dropped_before_target,
                            references_only = self.sent_references_only,
                            "seek landed (packets sent for their references only, \
                             pictures decoded and dropped before the target)"
                        );
                    }
                    self.last_dropped = None;
                    self.last_delivered = Some((frame.pts, frame.duration));
                    return Ok(Some(frame));
                }
                Ok(None) => {}
                Err(fault) => {
                    self.fault(fault)?;
                    continue;
                }
            }
            if self.eof_sent {
                self.drop_before = None;
                self.seek_target_ts = None;
                return Ok(self.last_dropped.take());
            }
            match self.demuxer.next_packet() {
                // Only the video stream is decoded here; other streams
                // are handed out only when enabled for their own consumer.
                Ok(Some(packet)) if packet.stream_index != self.demuxer.stream().index => {}
                Ok(Some(packet)) => {
                    if packet.corrupt {
                        warn!(pts = ?packet.pts, "packet marked corrupt by the demuxer");
                    }
                    let references_only = self.shown_before_target(&packet);
                    self.sent_references_only += u64::from(references_only);
                    self.decoder.set_references_only(references_only);
                    if let Err(fault) = self.decoder.send(&packet) {
                        self.fault(fault)?;
                    }
                }
                Ok(None) => self.end_of_input()?,
                Err(error) => {
                    warn!("read error, ending the stream here: {}", Causes(&error));
                    self.record(Causes(&error).to_string());
                    self.end_of_input()?;
                }
            }
        }
    }

    /// Adds the damaged-picture counts of this pipeline to `counters` (the
    /// run's, over every file) from now on.
    pub fn count_damage_in(&mut self, counters: Arc<DamageCounters>) {
        self.damage = counters;
    }

    /// Takes what the decoder counted since the last call.
    fn publish_damage(&mut self) {
        let now = self.decoder.damage();
        let seen = self.damage_published;
        let damage = &mut self.unsettled.damage;
        damage.decode_errors += now.decode_errors.saturating_sub(seen.decode_errors);
        damage.frames_skipped += now.frames_skipped.saturating_sub(seen.frames_skipped);
        self.damage_published = now;
    }

    /// Counts every error and damaged picture seen so far: adds them to the
    /// run's damage counts and the pipeline's errors.
    pub fn settle(&mut self) {
        self.publish_damage();
        let unsettled = std::mem::take(&mut self.unsettled);
        self.errors += unsettled.errors;
        if let Some(first) = unsettled.first_error {
            self.first_error.get_or_insert(first);
        }
        self.damage.add(unsettled.damage);
    }

    /// Errors seen (the stream went on after each), settled or not.
    pub fn errors(&self) -> u64 {
        self.errors + self.unsettled.errors
    }

    fn end_of_input(&mut self) -> Result<()> {
        self.eof_sent = true;
        match self.decoder.send_eof() {
            Ok(()) => Ok(()),
            Err(fault) => self.fault(fault),
        }
    }

    /// Counts and logs a recoverable fault; a V4L2 decoder that failed, or
    /// cannot decode what the stream now needs, hands over to software
    /// decoding where `--hwdec auto` allows it; returns the others.
    fn fault(&mut self, fault: DecodeFault) -> Result<()> {
        if fault.hand_over
            && self.decoder.kind() == DecoderKind::V4l2Stateless
            && self.decoder_options.0.hwdec == Hwdec::Auto
        {
            warn!(
                "{}: the V4L2 decoder cannot go on; software decoding from the next frame",
                causes(&fault.error)
            );
            return self.fall_back_to_software();
        }
        if !fault.recoverable {
            return Err(fault.error);
        }
        warn!(
            "{} (decoding resumes at the next keyframe)",
            causes(&fault.error)
        );
        self.record(causes(&fault.error));
        Ok(())
    }

    /// Software decoding from the frame after the last one handed out (or
    /// from the seek target being looked for), same epoch: the consumer
    /// sees one stream, nothing repeated or lost.
    fn fall_back_to_software(&mut self) -> Result<()> {
        self.decoder_options.0.hwdec = Hwdec::No;
        self.reopen_decoder()?;
        let forgiven = std::mem::take(&mut self.unsettled);
        if forgiven.errors > 0 {
            info!(
                errors = forgiven.errors,
                decode_errors = forgiven.damage.decode_errors,
                "the failed decoder's errors since the last frame put out are decoded again"
            );
        }
        let start = self.stream().start_time;
        let resume = match (self.drop_before, self.last_delivered) {
            (Some(target), _) => target,
            // Past the frame shown: `seek` drops every frame ending by then.
            (None, Some((pts, duration))) => pts + duration.max(Duration::from_nanos(1)),
            (None, None) => start,
        };
        self.seek(resume.saturating_sub(start), self.epoch)
    }

    fn record(&mut self, error: String) {
        self.unsettled.errors += 1;
        self.unsettled.first_error.get_or_insert(error);
    }

    /// One line on the errors seen, if any: "N errors (first: ...)".
    pub fn error_summary(&self) -> Option<String> {
        let first = self
            .first_error
            .as_deref()
            .or(self.unsettled.first_error.as_deref())?;
        Some(match self.errors() {
            1 => first.to_string(),
            n => format!("{n} errors, the first: {first}"),
        })
    }

    /// Whether every picture of `packet` is shown before the seek target
    /// (its pts and duration known, its end at or before the target).
    fn shown_before_target(&self, packet: &Packet) -> bool {
        match (self.seek_target_ts, packet.pts) {
            (Some(target), Some(pts)) if packet.duration > 0 => {
                pts.saturating_add(packet.duration) <= target
            }
            _ => false,
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
