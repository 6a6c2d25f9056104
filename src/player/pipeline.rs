//! The decode pipeline for one file: demuxer + decoder, pulled one frame at
//! a time, with frame-exact seeking (container seek to the keyframe at or
//! before the target, then decode forward and drop what comes before it).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use tracing::{debug, info, warn};

use crate::frame::{DecoderKind, Frame};
use crate::media::{Demuxer, Packet, VideoStreamInfo};
use crate::message::{causes, Causes};
use crate::sw::SwOptions;

use super::decoder_choice::{self, DecoderChoice, Hwdec};
use super::frame_decoder::{DamageCounters, DamageCounts, DecodeFault, FrameDecoder};

/// How far before a seek's target a frame may start and still be the one
/// it lands on, as in mpv: a target a rounding error past a frame's start
/// lands on that frame, not the next.
const SEEK_TOLERANCE: Duration = Duration::from_millis(5);

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
    /// The target of a frame-exact seek while it is looked for: frames
    /// starting before it (by more than [`SEEK_TOLERANCE`]) are dropped.
    drop_before: Option<Duration>,
    /// The last frame dropped while seeking: shown if no frame starts at
    /// or after the target, so a seek beyond the last frame's start shows
    /// the final picture.
    last_dropped: Option<Frame>,
    /// Whether packets before the target may be sent for their references
    /// only (false when the seek is looked for again because the last
    /// picture may have been one of those left undecoded).
    skip_non_references: bool,
    /// The latest pts of a packet sent for its references only.
    latest_skippable: Option<Duration>,
    /// Pictures decoded and dropped on the way to the seek target.
    dropped_before_target: u64,
    /// Packets sent on the way to it whose pictures were wanted only as
    /// references.
    sent_references_only: u64,
    eof_sent: bool,
    /// The pts of the last frame handed out: another decoder takes over
    /// after it.
    last_delivered: Option<Duration>,
    /// The pts of the latest frame the decoder put out (handed out or
    /// dropped) since it was last flushed.
    last_out: Option<Duration>,
    /// The decode (else presentation) timestamp of the last video packet
    /// sent to the decoder since it was last flushed, in stream units.
    last_sent: Option<i64>,
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
            skip_non_references: true,
            latest_skippable: None,
            dropped_before_target: 0,
            sent_references_only: 0,
            eof_sent: false,
            last_delivered: None,
            last_out: None,
            last_sent: None,
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
    pub fn canceller(&self) -> crate::media::network::SourceLink {
        self.demuxer.canceller()
    }

    pub fn decoder_kind(&self) -> DecoderKind {
        self.decoder.kind()
    }

    /// Whether the file has a sound track (the audio thread opens the file
    /// again only then).
    /// The tracks and chapters of the file being demuxed, if its format
    /// lists them.
    pub fn contents(&self) -> Option<crate::media::tracks::Contents> {
        self.demuxer.contents()
    }

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
    /// first one is the first frame starting at or after `position` (the
    /// last frame when none does).
    pub fn seek(&mut self, position: Duration, epoch: u64) -> Result<()> {
        let target = self.media_time(position);
        self.settle();
        if self.decodes_on_to(target) {
            // No flush, no jump back to the keyframe: the pictures up to
            // the target come from where decoding stands.
            debug!(
                ?position,
                ?target,
                epoch,
                "seek: decoding on from where decoding stands"
            );
        } else {
            debug!(?position, ?target, epoch, "seek");
            self.decoder.discard();
            self.demuxer.seek(target)?;
            self.last_out = None;
            self.last_sent = None;
            self.latest_skippable = None;
            self.eof_sent = false;
        }
        self.epoch = epoch;
        self.drop_before = Some(target);
        self.dropped_before_target = 0;
        self.sent_references_only = 0;
        self.last_dropped = None;
        self.skip_non_references = true;
        Ok(())
    }

    /// Whether a seek to `target` can go on decoding from where decoding
    /// stands instead of from the keyframe before it: every picture from
    /// the target on is still to come out of the decoder (none put out,
    /// none left undecoded as a mere reference), and that keyframe has
    /// already been sent, so that going on costs no more pictures than
    /// going back to it. A forward seek within a long GOP, and a seek
    /// superseding one still on its way, then decode only what lies
    /// between.
    fn decodes_on_to(&self, target: Duration) -> bool {
        let (Some(out), Some(sent)) = (self.last_out, self.last_sent) else {
            return false;
        };
        !self.eof_sent
            && self.decoder.resumed()
            && before_target(out, target)
            && self
                .latest_skippable
                .is_none_or(|skipped| before_target(skipped, target))
            && self
                .demuxer
                .indexed_keyframe_at_or_before(target)
                .is_some_and(|keyframe| keyframe <= sent)
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
        // The new one has decoded nothing: the next seek goes back to a
        // keyframe.
        self.last_out = None;
        self.last_sent = None;
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
                    self.last_out = self.last_out.max(Some(frame.pts));
                    if self.before_seek_target(&frame) {
                        self.last_dropped = Some(frame);
                        self.dropped_before_target += 1;
                        continue;
                    }
                    if self.drop_before.take().is_some() {
                        debug!(
                            pts = ?frame.pts,
                            decoded_before = self.dropped_before_target,
                            references_only = self.sent_references_only,
                            "seek landed (packets sent for their references only, \
                             pictures decoded and dropped before the target)"
                        );
                    }
                    self.last_dropped = None;
                    self.last_delivered = Some(frame.pts);
                    return Ok(Some(frame));
                }
                Ok(None) => {}
                Err(fault) => {
                    self.fault(fault)?;
                    continue;
                }
            }
            if self.eof_sent {
                if self.last_picture_left_undecoded() {
                    self.seek_again_decoding_everything()?;
                    continue;
                }
                self.drop_before = None;
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
                    let references_only =
                        self.skip_non_references && self.shown_before_target(&packet);
                    if references_only {
                        self.sent_references_only += 1;
                        let pts = packet.pts.map(|pts| self.stream().ts_to_duration(pts));
                        self.latest_skippable = self.latest_skippable.max(pts);
                    }
                    self.decoder.set_references_only(references_only);
                    self.last_sent = packet.dts.or(packet.pts).or(self.last_sent);
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

    /// At the end of the stream with no frame at or after the seek's
    /// target: whether a packet later than the last picture decoded was
    /// sent for its references only, so that the stream's last picture may
    /// not have been decoded.
    fn last_picture_left_undecoded(&self) -> bool {
        let (Some(_), Some(latest)) = (self.drop_before, self.latest_skippable) else {
            return false;
        };
        self.last_dropped
            .as_ref()
            .is_none_or(|frame| frame.pts < latest)
    }

    /// Looks for the seek's target again, every picture decoded, so that
    /// the last one is there to show.
    fn seek_again_decoding_everything(&mut self) -> Result<()> {
        let target = self.drop_before.unwrap_or_default();
        debug!(
            ?target,
            "no frame at or after the seek target, and the last picture was \
             not decoded: seeking again, decoding every picture"
        );
        let start = self.stream().start_time;
        self.seek(target.saturating_sub(start), self.epoch)?;
        self.skip_non_references = false;
        Ok(())
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
            // Past the frame shown: `seek` then drops every frame starting
            // at or before it, and lands on the next.
            (None, Some(pts)) => pts + SEEK_TOLERANCE + Duration::from_nanos(1),
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

    /// Whether the picture of `packet` is shown before the one the seek
    /// lands on (its pts known and before the target by the same rule as
    /// [`Self::before_seek_target`]): it is decoded only if later pictures
    /// refer to it.
    fn shown_before_target(&self, packet: &Packet) -> bool {
        match (self.drop_before, packet.pts) {
            (Some(target), Some(pts)) => {
                before_target(self.demuxer.stream().ts_to_duration(pts), target)
            }
            _ => false,
        }
    }

    /// Whether `frame` comes before the one a seek lands on: the first
    /// frame starting at or after the target, give or take
    /// [`SEEK_TOLERANCE`] (mpv's rule for exact seeks).
    fn before_seek_target(&self, frame: &Frame) -> bool {
        let Some(target) = self.drop_before else {
            return false;
        };
        before_target(frame.pts, target)
    }
}

/// A picture starting at `pts` comes before the one an exact seek to
/// `target` lands on.
fn before_target(pts: Duration, target: Duration) -> bool {
    pts + SEEK_TOLERANCE < target
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seek_lands_on_the_first_frame_starting_at_or_after_its_target() {
        let ms = Duration::from_millis;
        // 30 fps: frames at 833.3 ms and 866.7 ms.
        let (f25, f26) = (
            Duration::from_nanos(833_333_333),
            Duration::from_nanos(866_666_667),
        );
        // Between them: the later one, not the one on screen.
        assert!(before_target(f25, ms(850)));
        assert!(!before_target(f26, ms(850)));
        // On a frame's start, or up to 5 ms past it: that frame.
        assert!(!before_target(f25, f25));
        assert!(!before_target(f25, f25 + ms(5)));
        assert!(before_target(f25, f25 + ms(5) + Duration::from_nanos(1)));
        // A frame after the target is never before it.
        assert!(!before_target(f26, ms(0)));
    }
}
