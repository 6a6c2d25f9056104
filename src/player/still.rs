//! The picture of a file that has none (music, a voice-over): its cover art
//! (an attached picture, as music files carry), else black, ten frames a
//! second over the sound's duration. Everything the player does by frames
//! (position, seek, step, the file's end, the OSD) then works as for a
//! video, and there is a window to take keys, show the OSD and go
//! fullscreen: reel has no terminal controls, so without a window a
//! desktop user could not pause or quit it (`--output null` has none).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, Context, Result};
use ffmpeg_next as ff;
use tracing::warn;

use crate::frame::{CpuPlanes, DecoderKind, Frame, FrameStorage, PixelFormat};

/// The black picture's size.
pub const WIDTH: u32 = 640;
pub const HEIGHT: u32 = 360;
/// Cover art larger than this is scaled down to fit (it is copied to the
/// screen ten times a second).
const MAX_COVER: (u32, u32) = (1920, 1080);
/// Packets read looking for the cover (FFmpeg hands attached pictures out
/// first).
const COVER_SEARCH_PACKETS: usize = 32;
/// Frames a second: the position moves in tenths of a second.
const RATE: u32 = 10;
const PERIOD: Duration = Duration::from_millis(1000 / RATE as u64);

/// The still frames for the sound of one file.
pub struct StillPicture {
    /// Media time of the sound's first sample.
    start: Duration,
    /// How long the sound lasts.
    duration: Duration,
    /// Media time of the next frame.
    next: Duration,
    epoch: u64,
    planes: Arc<StillPlanes>,
    /// Whether the picture is the file's cover art (else black).
    cover: bool,
}

impl StillPicture {
    /// For `path` when it has sound but no picture (None when it has no
    /// sound either, or its length is unknown).
    pub fn for_audio_only(path: &Path) -> Result<Option<Self>> {
        crate::media::init_ffmpeg();
        let mut input = crate::media::SourceInput::open(path)?;
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
        let cover = match cover_art(&mut input) {
            Ok(cover) => cover,
            Err(e) => {
                warn!(file = %path.display(), "cover art not shown: {e:#}");
                None
            }
        };
        Ok(Some(Self {
            start,
            duration,
            next: start,
            epoch: 0,
            cover: cover.is_some(),
            planes: Arc::new(cover.unwrap_or_else(StillPlanes::black)),
        }))
    }

    /// Whether the picture is the file's cover art (else black).
    pub fn is_cover(&self) -> bool {
        self.cover
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
            width: self.planes.width,
            height: self.planes.height,
            format: PixelFormat::Yuv420,
            sample_aspect: (1, 1),
            decoder: DecoderKind::Software,
            epoch: self.epoch,
            storage: FrameStorage::Cpu(Box::new(Shared(self.planes.clone()))),
        })
    }
}

/// The file's attached picture (its first), decoded and in I420 at most
/// [`MAX_COVER`]; None when it has none.
fn cover_art(input: &mut ff::format::context::Input) -> Result<Option<StillPlanes>> {
    let Some(stream) = input.streams().find(|st| {
        st.parameters().medium() == ff::media::Type::Video
            && st
                .disposition()
                .contains(ff::format::stream::Disposition::ATTACHED_PIC)
    }) else {
        return Ok(None);
    };
    let index = stream.index();
    let mut decoder = ff::codec::context::Context::from_parameters(stream.parameters())?
        .decoder()
        .video()
        .context("no decoder for the cover art")?;
    let packet = input
        .packets()
        .take(COVER_SEARCH_PACKETS)
        .find_map(|(st, packet)| (st.index() == index).then_some(packet))
        .ok_or_else(|| anyhow!("its picture was not found"))?;
    decoder.send_packet(&packet)?;
    decoder.send_eof()?;
    let mut picture = ff::frame::Video::empty();
    decoder
        .receive_frame(&mut picture)
        .context("the picture does not decode")?;
    StillPlanes::from_picture(&picture).map(Some)
}

/// `(width, height)` scaled down to fit within `max`, aspect kept, even
/// (I420's chroma halves both).
fn fitted((width, height): (u32, u32), max: (u32, u32)) -> (u32, u32) {
    let scale = (f64::from(max.0) / f64::from(width.max(1)))
        .min(f64::from(max.1) / f64::from(height.max(1)))
        .min(1.0);
    let even = |v: f64| ((v.round() as u32) & !1).max(2);
    (
        even(f64::from(width) * scale),
        even(f64::from(height) * scale),
    )
}

/// One I420 picture, made once per file: Y, U and V, rows unpadded.
struct StillPlanes {
    width: u32,
    height: u32,
    planes: [Vec<u8>; 3],
}

impl StillPlanes {
    /// Video black (limited range).
    fn black() -> Self {
        let pixels = (WIDTH * HEIGHT) as usize;
        Self {
            width: WIDTH,
            height: HEIGHT,
            planes: [
                vec![16; pixels],
                vec![128; pixels / 4],
                vec![128; pixels / 4],
            ],
        }
    }

    fn from_picture(picture: &ff::frame::Video) -> Result<Self> {
        let (width, height) = fitted((picture.width(), picture.height()), MAX_COVER);
        let mut scaler = ff::software::scaling::Context::get(
            picture.format(),
            picture.width(),
            picture.height(),
            ff::format::Pixel::YUV420P,
            width,
            height,
            ff::software::scaling::Flags::BICUBIC,
        )
        .context("cannot convert the cover art")?;
        let mut out = ff::frame::Video::empty();
        scaler
            .run(picture, &mut out)
            .context("cannot convert the cover art")?;
        let plane = |index: usize, w: u32, h: u32| {
            let stride = out.stride(index);
            let data = out.data(index);
            (0..h as usize)
                .flat_map(|row| &data[row * stride..row * stride + w as usize])
                .copied()
                .collect::<Vec<u8>>()
        };
        Ok(Self {
            width,
            height,
            planes: [
                plane(0, width, height),
                plane(1, width / 2, height / 2),
                plane(2, width / 2, height / 2),
            ],
        })
    }
}

struct Shared(Arc<StillPlanes>);

impl CpuPlanes for Shared {
    fn plane(&self, plane: usize) -> &[u8] {
        &self.0.planes[plane.min(2)]
    }

    fn stride(&self, plane: usize) -> usize {
        if plane == 0 {
            self.0.width as usize
        } else {
            self.0.width as usize / 2
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn picture(duration: Duration) -> StillPicture {
        StillPicture {
            start: Duration::from_millis(20),
            duration,
            next: Duration::from_millis(20),
            epoch: 0,
            planes: Arc::new(StillPlanes::black()),
            cover: false,
        }
    }

    #[test]
    fn covers_are_scaled_down_to_fit_and_even() {
        assert_eq!(fitted((500, 500), MAX_COVER), (500, 500));
        assert_eq!(fitted((3000, 3000), MAX_COVER), (1080, 1080));
        assert_eq!(fitted((3841, 1000), MAX_COVER), (1920, 500));
        assert_eq!(fitted((301, 201), MAX_COVER), (300, 200));
        assert_eq!(fitted((1, 1), MAX_COVER), (2, 2));
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
