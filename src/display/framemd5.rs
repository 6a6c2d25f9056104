//! `--output framemd5`: one MD5 per decoded frame, in the format of
//! `ffmpeg -f framemd5` (framehash version 2), so the two can be diffed.
//!
//! The hash covers the frame's pixels packed without row padding, plane
//! after plane, as FFmpeg's rawvideo encoder lays them out. Timestamps are
//! printed the way the `ffmpeg` tool computes them for this muxer: in an
//! output time base of 1/frame-rate, relative to the container start, made
//! strictly increasing by its variable-frame-rate sync.

use std::io::{self, Write};

use md5::{Digest, Md5};

use crate::frame::Frame;
use crate::media::VideoStreamInfo;

/// The MD5 of `frame`'s pixels packed as libavcodec's rawvideo lays them
/// out, in hex: what `ffmpeg -f framemd5` prints for it.
pub fn frame_md5(frame: &Frame) -> String {
    let mut md5 = Md5::new();
    frame.for_each_packed_row(|row| md5.update(row));
    md5.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Writes the framemd5 header before the first frame, then a row per frame.
pub struct Framemd5Writer<W: Write> {
    out: W,
    clock: OutputClock,
    header_written: bool,
    dropped: u64,
}

impl<W: Write> Framemd5Writer<W> {
    pub fn new(out: W, stream: &VideoStreamInfo) -> Self {
        Self {
            out,
            clock: OutputClock::new(stream),
            header_written: false,
            dropped: 0,
        }
    }

    /// Frames left out because their timestamp went backwards (see
    /// `OutputClock::next`).
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    pub fn write_frame(&mut self, frame: &Frame) -> io::Result<()> {
        if !self.header_written {
            self.write_header(frame)?;
            self.header_written = true;
        }
        let hash = frame_md5(frame);
        let Some((pts, duration)) = self.clock.next(frame.pts_raw, frame.duration_raw) else {
            tracing::warn!(
                "framemd5: frame at pts {} is behind the output clock; left out as ffmpeg's vfr sync does",
                frame.pts_raw
            );
            self.dropped += 1;
            return Ok(());
        };
        write!(
            self.out,
            "0, {pts:>10}, {pts:>10}, {duration:>8}, {:>8}, ",
            frame.packed_size()
        )?;
        writeln!(self.out, "{hash}")
    }

    /// Flushes and returns the writer. A stream without frames leaves no
    /// output at all (the header needs the first frame's size).
    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }

    fn write_header(&mut self, frame: &Frame) -> io::Result<()> {
        let (tb_num, tb_den) = self.clock.output_time_base;
        writeln!(self.out, "#format: frame checksums")?;
        writeln!(self.out, "#version: 2")?;
        writeln!(self.out, "#hash: MD5")?;
        writeln!(self.out, "#software: reel {}", env!("CARGO_PKG_VERSION"))?;
        writeln!(self.out, "#tb 0: {tb_num}/{tb_den}")?;
        writeln!(self.out, "#media_type 0: video")?;
        writeln!(self.out, "#codec_id 0: rawvideo")?;
        writeln!(self.out, "#dimensions 0: {}x{}", frame.width, frame.height)?;
        let (sar_num, sar_den) = frame.sample_aspect;
        writeln!(self.out, "#sar 0: {sar_num}/{sar_den}")?;
        writeln!(
            self.out,
            "#stream#, dts,        pts, duration,     size, hash"
        )
    }
}

/// Maps decoder timestamps to the `ffmpeg` tool's output timestamps for a
/// variable-frame-rate muxer (`-vsync vfr`, the default for framemd5):
/// output time base = 1/frame rate (the stream's own when the rate is
/// unknown), input shifted so the container starts at 0, each frame placed
/// at the rounded input time, or one slot after the previous frame when it
/// is slightly early; a frame more than half a slot behind that is dropped.
#[derive(Clone, Debug)]
pub struct OutputClock {
    pub output_time_base: (i32, i32),
    stream_time_base: (i32, i32),
    /// Added to input timestamps (stream time base) to start at 0.
    offset: i64,
    next: i64,
}

impl OutputClock {
    pub fn new(stream: &VideoStreamInfo) -> Self {
        let output_time_base = stream
            .frame_rate
            .map(|(n, d)| (d, n))
            .unwrap_or(stream.time_base);
        let offset = -rescale(stream.container_start_us, (1, 1_000_000), stream.time_base);
        Self {
            output_time_base,
            stream_time_base: stream.time_base,
            offset,
            next: 0,
        }
    }

    /// Output (pts, duration) for a frame at `pts` lasting `duration`
    /// (stream time base), or `None` when the `ffmpeg` tool would drop it.
    pub fn next(&mut self, pts: i64, duration: i64) -> Option<(i64, i64)> {
        let to_out = |ts: i64| -> f64 {
            let (sn, sd) = self.stream_time_base;
            let (on, od) = self.output_time_base;
            ts as f64 * (sn as f64 * od as f64) / (sd as f64 * on as f64)
        };
        let ipts = to_out(pts.saturating_add(self.offset));
        let frame_duration = if duration > 0 { to_out(duration) } else { 1.0 };
        // The tool's VFR sync: a frame slightly early is moved to the next
        // slot; one more than half a slot late sets the clock to its time.
        let delta0 = ipts - self.next as f64;
        let delta = delta0 + frame_duration;
        let mut sync_ipts = ipts;
        if delta0 < 0.0 && delta > 0.0 {
            sync_ipts = self.next as f64;
        }
        if delta <= -0.6 {
            return None;
        }
        if delta > 0.6 {
            self.next = sync_ipts.round_ties_even() as i64;
        }
        let out = self.next;
        self.next += 1;
        let out_duration = (frame_duration.round() as i64).max(1);
        Some((out, out_duration))
    }
}

/// `ts` from time base `from` to `to`, rounding to nearest (halves away
/// from zero), as `av_rescale_q`.
fn rescale(ts: i64, (fnum, fden): (i32, i32), (tnum, tden): (i32, i32)) -> i64 {
    let num = ts as i128 * fnum as i128 * tden as i128;
    let den = fden as i128 * tnum as i128;
    if den == 0 {
        return 0;
    }
    let half = den.abs() / 2;
    let q = if (num >= 0) == (den > 0) {
        (num.abs() + half) / den.abs()
    } else {
        -((num.abs() + half) / den.abs())
    };
    i64::try_from(q).unwrap_or(if q > 0 { i64::MAX } else { i64::MIN })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clock(time_base: (i32, i32), fps: Option<(i32, i32)>, start_us: i64) -> OutputClock {
        OutputClock {
            output_time_base: fps.map(|(n, d)| (d, n)).unwrap_or(time_base),
            stream_time_base: time_base,
            offset: -rescale(start_us, (1, 1_000_000), time_base),
            next: 0,
        }
    }

    #[test]
    fn mpegts_timestamps_start_at_zero_in_frame_units() {
        // 30 fps in 90 kHz, container starting at 1.4 s.
        let mut c = clock((1, 90_000), Some((30, 1)), 1_400_000);
        assert_eq!(c.next(126_000, 3000), Some((0, 1)));
        assert_eq!(c.next(129_000, 3000), Some((1, 1)));
        // A gap of two frames keeps its place.
        assert_eq!(c.next(138_000, 3000), Some((4, 1)));
    }

    #[test]
    fn early_timestamps_move_forward_and_late_ones_drop() {
        let mut c = clock((1, 1000), Some((25, 1)), 0);
        assert_eq!(c.next(0, 40), Some((0, 1)));
        // Same time as the previous frame: one slot behind, moved forward.
        assert_eq!(c.next(0, 40), Some((1, 1)));
        assert_eq!(c.next(80, 40), Some((2, 1)));
        // Two slots behind (time 1 while the clock is at 3): dropped.
        assert_eq!(c.next(40, 40), None);
        assert_eq!(c.next(120, 40), Some((3, 1)));
    }

    #[test]
    fn unknown_rate_uses_stream_time_base() {
        let mut c = clock((1, 1000), None, 0);
        assert_eq!(c.output_time_base, (1, 1000));
        assert_eq!(c.next(0, 33), Some((0, 33)));
        assert_eq!(c.next(33, 33), Some((33, 33)));
        assert_eq!(c.next(67, 0), Some((67, 1)));
    }

    #[test]
    fn rescale_rounds_like_av_rescale_q() {
        assert_eq!(rescale(1_466_667, (1, 1_000_000), (1, 90_000)), 132_000);
        assert_eq!(rescale(-1_466_667, (1, 1_000_000), (1, 90_000)), -132_000);
        assert_eq!(rescale(1, (1, 2), (1, 1)), 1);
        assert_eq!(rescale(-1, (1, 2), (1, 1)), -1);
        assert_eq!(rescale(5, (1, 0), (1, 1)), 0);
    }
}
