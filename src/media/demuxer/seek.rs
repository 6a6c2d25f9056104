//! Seeking: to the keyframe at or before a target, by libavformat's seek
//! and a scan from where it lands, or, in a file whose timestamps restart,
//! by the keyframes read (`ContinuousTimeline`).

use std::collections::VecDeque;
use std::time::Duration;

use ff::ffi;
use ffmpeg_next as ff;

use super::super::timeline::KeyframeMark;
use super::super::{duration_to_ts, MediaError, Packet};
use super::FfmpegDemuxer;

/// First step back when a container seek lands after the last keyframe
/// before the target; doubled at each further try.
const SEEK_BACK_OFF: Duration = Duration::from_secs(1);
/// How many byte positions `restarts_ahead` samples, and how many packets
/// it reads at each for a video timestamp.
const RESTART_SAMPLES: i64 = 16;
const RESTART_SAMPLE_PACKETS: usize = 64;

impl FfmpegDemuxer {
    /// Moves to the keyframe at or before `target`, on the same clock as
    /// `Frame::pts` (stream time, not offset by `start_time`): the next
    /// packet is that keyframe. Targets before the stream's start go to its
    /// start.
    ///
    /// Containers with an index (MP4, Matroska) land there directly; others
    /// (MPEG-TS) land near a timestamp, so the packets after the landing
    /// point are scanned for the last keyframe at or before the target, and
    /// the landing point is moved further back while none is found. In a
    /// file whose timestamps restart, the file's own timestamps repeat:
    /// reading starts at the keyframe read at or before the target instead
    /// (`seek_in_restarting_file`).
    pub fn seek(&mut self, target: Duration) -> Result<(), MediaError> {
        self.pending.clear();
        let start = self.info.start_pts;
        let ts = duration_to_ts(target, self.info.time_base).max(start);
        let seek_error = |message| MediaError::Seek { target, message };
        if self.timeline.restarting() || self.restarts_ahead() {
            let mark = self.timeline.mark_at_or_before(ts);
            return self.seek_in_restarting_file(mark, ts).map_err(seek_error);
        }
        let mut back_off = duration_to_ts(SEEK_BACK_OFF, self.info.time_base).max(1);
        // `None`: the very start of the file.
        let mut landing = Some(ts);
        loop {
            match landing {
                Some(at) => self.seek_container(at).map_err(seek_error)?,
                None => self.seek_file_start().map_err(seek_error)?,
            }
            // Each landing point is read afresh: no restart to mend yet.
            self.timeline.restart_reading(0);
            if let Some(packets) = self.scan_to_keyframe(ts)? {
                self.pending = packets;
                return Ok(());
            }
            landing = match landing {
                // Timestamp seeks go by dts, which may start before the
                // stream's first pts: go one step below it before giving up.
                Some(at) if at >= start => {
                    let next = at.saturating_sub(back_off);
                    back_off = back_off.saturating_mul(2);
                    Some(next)
                }
                Some(_) => None,
                None => {
                    // No keyframe at or before the target anywhere: play
                    // from the start (the decoder waits for a keyframe).
                    tracing::warn!("no keyframe at or before {target:?}; going to the start");
                    self.seek_file_start().map_err(seek_error)?;
                    self.timeline.restart_reading(0);
                    return Ok(());
                }
            };
        }
    }

    /// The timestamp (stream time base) of the last keyframe the
    /// container's index lists at or before `target`: None without an
    /// index (MPEG-TS) or in a file whose timestamps restart. MP4's index
    /// holds decode timestamps, Matroska's cues presentation ones.
    pub fn indexed_keyframe_at_or_before(&self, target: Duration) -> Option<i64> {
        if self.timeline.restarting() {
            return None;
        }
        let ts = duration_to_ts(target, self.info.time_base);
        let stream = self.input.stream(self.info.index)?;
        // SAFETY: the stream belongs to the open context we own;
        // libavformat only reads its index here, and the entry it points
        // to (or null) is read at once, before the index can change.
        unsafe {
            let entry = ffi::avformat_index_get_entry_from_timestamp(
                stream.as_ptr().cast_mut(),
                ts,
                ffi::AVSEEK_FLAG_BACKWARD,
            );
            (!entry.is_null()).then(|| (*entry).timestamp)
        }
    }

    /// Whether the timestamps of a file whose format allows restarts go
    /// back somewhere ahead of what was read: the first video decode
    /// timestamps after `RESTART_SAMPLES` evenly spaced byte positions,
    /// read once, at the first seek that needs to know.
    fn restarts_ahead(&mut self) -> bool {
        if !self.timeline.may_restart() || self.restarts_sampled {
            return false;
        }
        self.restarts_sampled = true;
        let size = std::fs::metadata(&self.path).map_or(0, |m| m.len()) as i64;
        let slack = duration_to_ts(Duration::from_millis(100), self.info.time_base);
        let mut last: Option<i64> = None;
        for sample in 0..RESTART_SAMPLES {
            let position = size * sample / RESTART_SAMPLES;
            let Some(dts) = self.first_video_dts_from(position) else {
                continue;
            };
            if last.is_some_and(|l| dts.saturating_add(slack) < l) {
                tracing::info!(
                    "{}: timestamps go back near byte {position}: seeking by the keyframes read",
                    self.path.display()
                );
                self.timeline.set_restarting();
                return true;
            }
            last = Some(dts);
        }
        false
    }

    /// The file's own decode timestamp of the first video packet read from
    /// byte `position` on.
    fn first_video_dts_from(&mut self, position: i64) -> Option<i64> {
        // SAFETY: the context is the open format context we own.
        let ret = unsafe {
            ffi::av_seek_frame(self.input.as_mut_ptr(), -1, position, ffi::AVSEEK_FLAG_BYTE)
        };
        if ret < 0 {
            return None;
        }
        for _ in 0..RESTART_SAMPLE_PACKETS {
            let mut packet = ff::Packet::empty();
            match packet.read(&mut self.input) {
                Ok(()) if packet.stream() == self.info.index => {
                    if let Some(ts) = packet.dts().or(packet.pts()) {
                        return Some(ts);
                    }
                }
                Ok(()) | Err(ff::Error::InvalidData) => {}
                Err(_) => return None,
            }
        }
        None
    }

    /// Seeks a file with restarts to the keyframe at or before mended `ts`:
    /// from `mark` (a keyframe read before, at or before `ts`; `None`: the
    /// file's start), reading on through any later restart; from the
    /// file's start if reading from `mark` finds no keyframe at or before
    /// `ts`.
    fn seek_in_restarting_file(
        &mut self,
        mark: Option<KeyframeMark>,
        ts: i64,
    ) -> Result<(), String> {
        if let Some(mark) = mark {
            // SAFETY: the context is the open format context we own.
            let ret = unsafe {
                ffi::av_seek_frame(
                    self.input.as_mut_ptr(),
                    -1,
                    mark.position,
                    ffi::AVSEEK_FLAG_BYTE,
                )
            };
            if ret >= 0 {
                self.timeline.restart_reading(mark.offset);
                if let Some(packets) = self.scan_to_keyframe(ts).map_err(|e| e.to_string())? {
                    self.pending = packets;
                    return Ok(());
                }
            }
            tracing::debug!(
                "no keyframe at or before {ts} from byte {}; reading from the start",
                mark.position
            );
        }
        self.seek_file_start()?;
        self.timeline.restart_reading(0);
        if let Some(packets) = self.scan_to_keyframe(ts).map_err(|e| e.to_string())? {
            self.pending = packets;
            return Ok(());
        }
        self.seek_file_start()?;
        self.timeline.restart_reading(0);
        Ok(())
    }

    /// Back to the first byte of the file, or as near as the container
    /// allows.
    fn seek_file_start(&mut self) -> Result<(), String> {
        // SAFETY: the context is the open format context we own.
        let ret =
            unsafe { ffi::av_seek_frame(self.input.as_mut_ptr(), -1, 0, ffi::AVSEEK_FLAG_BYTE) };
        if ret >= 0 {
            return Ok(());
        }
        self.seek_container(i64::MIN + 1)
    }

    /// Reads from the landing point of a container seek. Returns the last
    /// keyframe with pts at or before `ts` followed by the packets read
    /// after it, or `None` if the first keyframe found is after `ts` (or
    /// there is none).
    fn scan_to_keyframe(&mut self, ts: i64) -> Result<Option<VecDeque<Packet>>, MediaError> {
        let mut packets = VecDeque::new();
        let mut found = false;
        while let Some(packet) = self.read_packet()? {
            // Other streams follow the video: kept from its keyframe on.
            if packet.stream_index != self.info.index {
                if found {
                    packets.push_back(packet);
                }
                continue;
            }
            // A packet without timestamps counts as at the target: better a
            // keyframe slightly late than scanning without end.
            let pts = packet.pts.or(packet.dts).unwrap_or(ts);
            let dts = packet.dts.or(packet.pts).unwrap_or(ts);
            if packet.keyframe {
                if pts <= ts {
                    packets.clear();
                    found = true;
                } else if !found {
                    return Ok(None);
                }
            }
            // Decode order: once dts passes the target, so does every later
            // keyframe's pts.
            if !found {
                if dts > ts {
                    return Ok(None);
                }
                continue;
            }
            packets.push_back(packet);
            if dts > ts {
                break;
            }
        }
        Ok(found.then_some(packets))
    }

    /// libavformat's seek to the keyframe at or before `ts` (stream time
    /// base), as well as the container allows.
    fn seek_container(&mut self, ts: i64) -> Result<(), String> {
        let index = self.info.index as i32;
        // SAFETY: the context is the open format context we own; the stream
        // index is one of its streams. libavformat resets the I/O EOF state.
        let ret =
            unsafe { ffi::avformat_seek_file(self.input.as_mut_ptr(), index, i64::MIN, ts, ts, 0) };
        if ret >= 0 {
            return Ok(());
        }
        // Some demuxers cannot honour max_ts; a backward seek is their
        // nearest equivalent.
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
        Err(ff::Error::from(ret).to_string())
    }
}
