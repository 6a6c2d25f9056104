//! Bitmap subtitles (PGS, DVB, DVD, XSUB): the pictures libavcodec's
//! decoders give, kept run-length coded (a film's worth of Blu-ray
//! subtitles is hundreds of megabytes as pixels, a few as runs), timed as
//! the formats mean (each display set replaces the one before), and drawn
//! scaled from the stream's canvas onto the video's place on the overlay.

use ffmpeg_next as ff;

use super::compose;
use crate::osd::OverlayImage;

/// Pictures larger than this in either direction are not subtitles.
const LARGEST_SIDE: u32 = 8192;

/// One picture of a cue, at `x`, `y` on the stream's canvas.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Picture {
    pub x: i32,
    pub y: i32,
    pub width: u32,
    pub height: u32,
    /// Premultiplied B, G, R, A for each index.
    palette: Vec<[u8; 4]>,
    /// (index, count) in raster order, counts 1..=255.
    runs: Vec<(u8, u8)>,
}

impl Picture {
    /// A picture from one palette index per pixel, rows of `width`, and
    /// the palette's colours as libavcodec gives them (0xAARRGGBB).
    pub fn new(x: i32, y: i32, width: u32, indices: &[u8], argb: &[u32]) -> Option<Self> {
        let height = u32::try_from(indices.len().checked_div(width as usize)?).ok()?;
        if width == 0 || height == 0 || width > LARGEST_SIDE || height > LARGEST_SIDE {
            return None;
        }
        let palette = argb.iter().map(|&c| premultiplied(c)).collect();
        let mut runs: Vec<(u8, u8)> = Vec::new();
        for &index in indices {
            match runs.last_mut() {
                Some((last, count)) if *last == index && *count < u8::MAX => *count += 1,
                _ => runs.push((index, 1)),
            }
        }
        Some(Self {
            x,
            y,
            width,
            height,
            palette,
            runs,
        })
    }

    /// The picture's pixels, premultiplied B, G, R, A, row by row; an
    /// index outside the palette is transparent.
    fn pixels(&self) -> Vec<[u8; 4]> {
        let mut out = Vec::with_capacity(self.width as usize * self.height as usize);
        for &(index, count) in &self.runs {
            let colour = self
                .palette
                .get(usize::from(index))
                .copied()
                .unwrap_or([0; 4]);
            out.extend(std::iter::repeat_n(colour, usize::from(count)));
        }
        out
    }

    /// Whether every pixel is transparent.
    fn is_clear(&self) -> bool {
        self.runs.iter().all(|&(index, _)| {
            self.palette
                .get(usize::from(index))
                .is_none_or(|colour| colour[3] == 0)
        })
    }
}

fn premultiplied(argb: u32) -> [u8; 4] {
    let [a, r, g, b] = argb.to_be_bytes();
    let scale = |c: u8| ((u32::from(c) * u32::from(a) + 127) / 255) as u8;
    [scale(b), scale(g), scale(r), a]
}

/// The pictures shown from `start_ms` for `duration_ms` (a clearing
/// display set has none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PictureCue {
    pub start_ms: i64,
    pub duration_ms: i64,
    pub pictures: Vec<Picture>,
}

/// The bitmaps of one decoded subtitle, empty for a clearing one.
pub fn from_subtitle(subtitle: &ff::Subtitle) -> Vec<Picture> {
    subtitle
        .rects()
        .filter_map(|rect| match rect {
            ff::subtitle::Rect::Bitmap(bitmap) => {
                // SAFETY: the rect belongs to `subtitle`, alive and not
                // changed while it is read.
                let rect = unsafe { &*bitmap.as_ptr() };
                from_rect(rect)
            }
            _ => None,
        })
        .filter(|picture| !picture.is_clear())
        .collect()
}

fn from_rect(rect: &ff::ffi::AVSubtitleRect) -> Option<Picture> {
    let width = usize::try_from(rect.w).ok()?;
    let height = usize::try_from(rect.h).ok()?;
    let stride = usize::try_from(rect.linesize[0]).ok()?;
    let colours = usize::try_from(rect.nb_colors).ok()?.min(256);
    if rect.data[0].is_null() || rect.data[1].is_null() || stride < width || width == 0 {
        return None;
    }
    if width > LARGEST_SIDE as usize || height > LARGEST_SIDE as usize {
        return None;
    }
    // SAFETY: libavcodec's bitmap rects hold `h` rows of `linesize[0]`
    // indices in data[0] and `nb_colors` 32-bit colours in data[1]
    // (avcodec.h, AVSubtitleRect); both are copied out here.
    let (rows, palette) = unsafe {
        (
            std::slice::from_raw_parts(rect.data[0], stride * (height - 1) + width),
            std::slice::from_raw_parts(rect.data[1].cast::<u32>(), colours),
        )
    };
    let mut indices = Vec::with_capacity(width * height);
    for row in 0..height {
        indices.extend_from_slice(&rows[row * stride..row * stride + width]);
    }
    Picture::new(rect.x, rect.y, width as u32, &indices, palette)
}

/// Cues in time order, each ending at the latest where the next begins
/// (a display set replaces the one before it); clearing cues, which only
/// end the one before, are left out.
pub fn timed(mut cues: Vec<PictureCue>, longest_ms: i64) -> Vec<PictureCue> {
    cues.sort_by_key(|cue| cue.start_ms);
    let starts: Vec<i64> = cues.iter().map(|cue| cue.start_ms).skip(1).collect();
    for (cue, next) in cues.iter_mut().zip(starts.iter().map(Some).chain([None])) {
        let open = cue.duration_ms <= 0 || cue.duration_ms > longest_ms;
        let mut end = if open {
            cue.start_ms.saturating_add(longest_ms)
        } else {
            cue.start_ms.saturating_add(cue.duration_ms)
        };
        if let Some(&next) = next {
            end = end.min(next.max(cue.start_ms));
        }
        cue.duration_ms = end - cue.start_ms;
    }
    cues.retain(|cue| !cue.pictures.is_empty() && cue.duration_ms > 0);
    cues
}

/// The video's place on an overlay `width` x `height`: the largest
/// rectangle of the video's shape, centred, as the video is shown.
pub fn video_area((width, height): (u32, u32), video: (u32, u32)) -> (f64, f64, f64, f64) {
    let (w, h) = crate::display::fit(video, (width, height));
    (
        f64::from(width - w.min(width)) / 2.0,
        f64::from(height - h.min(height)) / 2.0,
        f64::from(w),
        f64::from(h),
    )
}

/// Draws `cue`'s pictures, placed on a `canvas`-sized plane, scaled onto
/// `area` (x, y, width, height) of `image`.
pub fn draw(
    image: &mut OverlayImage,
    cue: &PictureCue,
    canvas: (u32, u32),
    area: (f64, f64, f64, f64),
) {
    let (cw, ch) = (f64::from(canvas.0.max(1)), f64::from(canvas.1.max(1)));
    let (ax, ay, aw, ah) = area;
    let scale = (aw / cw, ah / ch);
    for picture in &cue.pictures {
        let at = (
            ax + f64::from(picture.x) * scale.0,
            ay + f64::from(picture.y) * scale.1,
        );
        compose::blend_scaled(
            image,
            &picture.pixels(),
            (picture.width, picture.height),
            at,
            scale,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cue(start_ms: i64, duration_ms: i64, shown: bool) -> PictureCue {
        let pictures = if shown {
            vec![Picture::new(0, 0, 2, &[1, 1], &[0, 0xffff_ffff]).expect("picture")]
        } else {
            Vec::new()
        };
        PictureCue {
            start_ms,
            duration_ms,
            pictures,
        }
    }

    #[test]
    fn runs_give_back_the_pixels_premultiplied() {
        let indices: Vec<u8> = [0u8; 300].into_iter().chain([1, 2, 2]).collect();
        let picture =
            Picture::new(3, 4, 303, &indices, &[0, 0x80ff_0000, 0xff00_00ff]).expect("a picture");
        assert_eq!(picture.height, 1);
        assert_eq!(picture.runs, vec![(0, 255), (0, 45), (1, 1), (2, 2)]);
        let pixels = picture.pixels();
        assert_eq!(pixels.len(), 303);
        assert_eq!(pixels[0], [0, 0, 0, 0]);
        // Red at half opacity, premultiplied; blue opaque.
        assert_eq!(pixels[300], [0, 0, 128, 128]);
        assert_eq!(pixels[302], [255, 0, 0, 255]);
        assert!(!picture.is_clear());
        assert!(Picture::new(0, 0, 2, &[0, 0], &[0])
            .expect("picture")
            .is_clear());
    }

    #[test]
    fn absurd_pictures_are_refused() {
        assert!(Picture::new(0, 0, 0, &[1], &[0]).is_none());
        assert!(Picture::new(0, 0, 4, &[1], &[0]).is_none());
        assert!(Picture::new(0, 0, 10_000, &[0; 10_000], &[0]).is_none());
    }

    #[test]
    fn a_cue_ends_where_the_next_begins_and_clearing_cues_are_dropped() {
        let cues = timed(
            vec![
                cue(4000, 0, true),
                cue(1000, 0, true),
                cue(2500, 0, false),
                cue(6000, 500, true),
                cue(5000, 0, false),
            ],
            24 * 3600 * 1000,
        );
        let times: Vec<(i64, i64)> = cues.iter().map(|c| (c.start_ms, c.duration_ms)).collect();
        assert_eq!(times, vec![(1000, 1500), (4000, 1000), (6000, 500)]);
        // The last, open-ended, lasts the longest a cue may.
        let open = timed(vec![cue(0, 0, true)], 10_000);
        assert_eq!(open[0].duration_ms, 10_000);
    }

    #[test]
    fn the_video_area_is_centred_as_the_video_is() {
        assert_eq!(
            video_area((1280, 1024), (1280, 720)),
            (0.0, 152.0, 1280.0, 720.0)
        );
        assert_eq!(video_area((640, 360), (640, 360)), (0.0, 0.0, 640.0, 360.0));
    }
}
