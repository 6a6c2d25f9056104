//! The picture of a file that has none (music, a voice-over): black, ten
//! frames a second over the sound's duration. Everything the player does
//! by frames (position, seek, step, the file's end, the OSD) then works as
//! for a video, and there is a window to take keys, show the OSD and go
//! fullscreen: reel has no terminal controls, so without a window a
//! desktop user could not pause or quit it (`--output null` has none).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use ffmpeg_next as ff;

use crate::frame::{CpuPlanes, DecoderKind, Frame, FrameStorage, PixelFormat};

pub const WIDTH: u32 = 640;
pub const HEIGHT: u32 = 360;
/// Frames a second: the position moves in tenths of a second.
const RATE: u32 = 10;
const PERIOD: Duration = Duration::from_millis(1000 / RATE as u64);

/// Black frames for the sound of one file.
pub struct BlackPicture {
    /// Media time of the sound's first sample.
    start: Duration,
    /// How long the sound lasts.
    duration: Duration,
    /// Media time of the next frame.
    next: Duration,
    epoch: u64,
    planes: Arc<BlackPlanes>,
}

impl BlackPicture {
    /// For `path` when it has sound but no picture (None when it has no
    /// sound either, or its length is unknown).
    pub fn for_audio_only(path: &Path) -> Result<Option<Self>> {
        crate::media::init_ffmpeg();
        let input = ff::format::input(path).with_context(|| format!("{}", path.display()))?;
        let Some(stream) = input.streams().best(ff::media::Type::Audio) else {
            return Ok(None);
        };
        let time_base = stream.time_base();
        let to_duration =
            |ts: i64, (num, den): (i32, i32)| crate::media::ts_to_duration(ts.max(0), (num, den));
        let start = match stream.start_time() {
            ts if ts > 0 => to_duration(ts, (time_base.numerator(), time_base.denominator())),
            _ => Duration::ZERO,
        };
        let duration = match stream.duration() {
            ts if ts > 0 => to_duration(ts, (time_base.numerator(), time_base.denominator())),
            // The container's, in microseconds.
            _ => match input.duration() {
                us if us > 0 => to_duration(us, (1, 1_000_000)),
                _ => return Ok(None),
            },
        };
        Ok(Some(Self {
            start,
            duration,
            next: start,
            epoch: 0,
            planes: Arc::new(BlackPlanes::new()),
        }))
    }

    /// Media time of the first sample.
    pub fn start_time(&self) -> Duration {
        self.start
    }

    pub fn duration(&self) -> Duration {
        self.duration
    }

    pub fn frame_rate(&self) -> f64 {
        f64::from(RATE)
    }

    pub fn set_epoch(&mut self, epoch: u64) {
        self.epoch = epoch;
    }

    /// Frames from `position` on (the one showing at it first) carry `epoch`.
    pub fn seek(&mut self, position: Duration, epoch: u64) {
        let periods = (position.as_nanos() / PERIOD.as_nanos()) as u32;
        self.next = self.start + (PERIOD * periods).min(self.last_frame());
        self.epoch = epoch;
    }

    /// Where the last frame starts (a seek past the end shows it).
    fn last_frame(&self) -> Duration {
        let periods = self.duration.as_nanos().saturating_sub(1) / PERIOD.as_nanos();
        PERIOD * periods as u32
    }

    pub fn next_frame(&mut self) -> Option<Frame> {
        let end = self.start + self.duration;
        if self.next >= end {
            return None;
        }
        let pts = self.next;
        let duration = PERIOD.min(end - pts);
        self.next = pts + duration;
        Some(Frame {
            pts,
            pts_raw: i64::try_from(pts.as_millis()).unwrap_or(i64::MAX),
            duration,
            duration_raw: i64::try_from(duration.as_millis()).unwrap_or(0),
            width: WIDTH,
            height: HEIGHT,
            format: PixelFormat::Yuv420,
            sample_aspect: (1, 1),
            decoder: DecoderKind::Software,
            epoch: self.epoch,
            storage: FrameStorage::Cpu(Box::new(Shared(self.planes.clone()))),
        })
    }
}

/// Video black (limited range) in I420, made once per file.
struct BlackPlanes {
    luma: Vec<u8>,
    chroma: Vec<u8>,
}

impl BlackPlanes {
    fn new() -> Self {
        let pixels = (WIDTH * HEIGHT) as usize;
        Self {
            luma: vec![16; pixels],
            chroma: vec![128; pixels / 4],
        }
    }
}

struct Shared(Arc<BlackPlanes>);

impl CpuPlanes for Shared {
    fn plane(&self, plane: usize) -> &[u8] {
        if plane == 0 {
            &self.0.luma
        } else {
            &self.0.chroma
        }
    }

    fn stride(&self, plane: usize) -> usize {
        if plane == 0 {
            WIDTH as usize
        } else {
            WIDTH as usize / 2
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn picture(duration: Duration) -> BlackPicture {
        BlackPicture {
            start: Duration::from_millis(20),
            duration,
            next: Duration::from_millis(20),
            epoch: 0,
            planes: Arc::new(BlackPlanes::new()),
        }
    }

    #[test]
    fn ten_black_frames_a_second_over_the_sound() {
        let mut black = picture(Duration::from_millis(1050));
        let frames: Vec<Frame> = std::iter::from_fn(|| black.next_frame()).collect();
        assert_eq!(frames.len(), 11);
        assert_eq!(frames[0].pts, Duration::from_millis(20));
        assert_eq!(frames[10].pts, Duration::from_millis(1020));
        assert_eq!(frames[10].duration, Duration::from_millis(50));
        let mut luma = Vec::new();
        frames[3].for_each_packed_row(|row| luma.push(row[0]));
        assert_eq!(luma.len(), (HEIGHT + HEIGHT / 2 + HEIGHT / 2) as usize);
        assert_eq!(luma[0], 16);
        assert_eq!(luma[HEIGHT as usize], 128);
    }

    #[test]
    fn a_seek_lands_on_the_frame_showing_then_or_the_last() {
        let mut black = picture(Duration::from_secs(3));
        black.seek(Duration::from_millis(1234), 7);
        let frame = black.next_frame().expect("a frame");
        assert_eq!(frame.pts, Duration::from_millis(1220));
        assert_eq!(frame.epoch, 7);
        black.seek(Duration::from_secs(60), 8);
        let frame = black.next_frame().expect("the last frame");
        assert_eq!(frame.pts, Duration::from_millis(2920));
        assert_eq!(black.next_frame().map(|f| f.pts), None);
    }
}
