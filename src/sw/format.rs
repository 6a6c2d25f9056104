//! Which libavcodec pixel layouts reel takes as they are, and which it
//! converts (with libswscale) into one `display/` can show.

use ffmpeg_next::format::Pixel;
use ffmpeg_next::software::scaling;
use ffmpeg_next::{ffi, frame};

use super::SwError;
use crate::frame::PixelFormat;

/// reel's name for a libavcodec layout with the same bytes, if there is one.
/// The JPEG-range variants share their layout with the limited-range ones.
pub fn from_av(pixel: Pixel) -> Option<PixelFormat> {
    Some(match pixel {
        Pixel::YUV420P | Pixel::YUVJ420P => PixelFormat::Yuv420,
        Pixel::YUV422P | Pixel::YUVJ422P => PixelFormat::Yuv422,
        Pixel::YUV444P | Pixel::YUVJ444P => PixelFormat::Yuv444,
        Pixel::NV12 => PixelFormat::Nv12,
        Pixel::YUV420P10LE => PixelFormat::Yuv420p10,
        Pixel::P010LE => PixelFormat::P010,
        Pixel::GRAY8 => PixelFormat::Gray8,
        _ => return None,
    })
}

pub fn to_av(format: PixelFormat) -> Pixel {
    match format {
        PixelFormat::Yuv420 => Pixel::YUV420P,
        PixelFormat::Yuv422 => Pixel::YUV422P,
        PixelFormat::Yuv444 => Pixel::YUV444P,
        PixelFormat::Nv12 => Pixel::NV12,
        PixelFormat::Yuv420p10 => Pixel::YUV420P10LE,
        PixelFormat::P010 => Pixel::P010LE,
        PixelFormat::Gray8 => Pixel::GRAY8,
    }
}

fn luma_depth(pixel: Pixel) -> u32 {
    pixel
        .descriptor()
        // SAFETY: the descriptor pointer is libavutil's static table entry.
        .map(|d| unsafe { (*d.as_ptr()).comp[0].depth as u32 })
        .unwrap_or(8)
}

/// The layout a decoded frame is handed on in. `for_display` keeps only
/// layouts with a DRM fourcc (4:2:0 10-bit becomes P010, grey becomes
/// YUV420); otherwise the decoder's own layout is kept when reel can
/// describe it. Anything else becomes YUV420, or P010 above 8 bits.
pub fn target_for(pixel: Pixel, for_display: bool) -> PixelFormat {
    match from_av(pixel) {
        Some(f) if !for_display || f.drm_fourcc().is_some() => f,
        Some(PixelFormat::Yuv420p10) => PixelFormat::P010,
        _ if luma_depth(pixel) > 8 => PixelFormat::P010,
        _ => PixelFormat::Yuv420,
    }
}

/// A libswscale context converting between two layouts at one size,
/// rebuilt when the input changes (e.g. a mid-stream resolution change).
#[derive(Default)]
pub struct Converter {
    scaler: Option<Scaler>,
}

struct Scaler {
    key: (Pixel, u32, u32, Pixel),
    ctx: scaling::Context,
}

// SAFETY: an SwsContext has no thread affinity; `Converter` only uses it
// through `&mut self`, so it is never used from two threads at once.
unsafe impl Send for Scaler {}

impl Converter {
    pub fn convert(
        &mut self,
        src: &frame::Video,
        to: PixelFormat,
    ) -> Result<frame::Video, SwError> {
        self.convert_to_av(src, to_av(to))
    }

    /// As `convert`, into any layout libswscale writes.
    pub fn convert_to_av(
        &mut self,
        src: &frame::Video,
        to: Pixel,
    ) -> Result<frame::Video, SwError> {
        let (w, h) = (src.width(), src.height());
        let key = (src.format(), w, h, to);
        if self.scaler.as_ref().map(|s| s.key) != Some(key) {
            tracing::debug!("converting {:?} {w}x{h} to {to:?}", src.format());
            // Bicubic is libswscale's (and the ffmpeg tool's) default, so
            // conversions equal `ffmpeg -pix_fmt ...` bit for bit.
            let ctx = scaling::Context::get(key.0, w, h, key.3, w, h, scaling::Flags::BICUBIC)
                .map_err(|e| {
                    SwError::Convert(format!("{:?} {w}x{h} to {to:?}: {e}", src.format()))
                })?;
            self.scaler = Some(Scaler { key, ctx });
        }
        let Some(scaler) = self.scaler.as_mut() else {
            return Err(SwError::Convert("no scaler".into()));
        };
        let mut out = frame::Video::new(key.3, w, h);
        // SAFETY: reading the data pointer of a frame we own.
        if unsafe { (*out.as_ptr()).data[0].is_null() } {
            return Err(SwError::Convert(format!(
                "out of memory for a {w}x{h} frame"
            )));
        }
        scaler
            .ctx
            .run(src, &mut out)
            .map_err(|e| SwError::Convert(e.to_string()))?;
        // SAFETY: both frames are valid and ours; this copies timestamps,
        // durations, aspect ratio and side data, not pixels.
        let ret = unsafe { ffi::av_frame_copy_props(out.as_mut_ptr(), src.as_ptr()) };
        if ret < 0 {
            return Err(SwError::Convert(format!(
                "copying frame properties: {}",
                ffmpeg_next::Error::from(ret)
            )));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_targets() {
        assert_eq!(target_for(Pixel::YUV420P, true), PixelFormat::Yuv420);
        assert_eq!(target_for(Pixel::YUV420P10LE, true), PixelFormat::P010);
        assert_eq!(
            target_for(Pixel::YUV420P10LE, false),
            PixelFormat::Yuv420p10
        );
        assert_eq!(target_for(Pixel::YUV422P, true), PixelFormat::Yuv422);
        assert_eq!(target_for(Pixel::GRAY8, true), PixelFormat::Yuv420);
        assert_eq!(target_for(Pixel::GRAY8, false), PixelFormat::Gray8);
        assert_eq!(target_for(Pixel::YUV444P12LE, false), PixelFormat::P010);
        assert_eq!(target_for(Pixel::RGB24, false), PixelFormat::Yuv420);
        for f in [
            PixelFormat::Yuv420,
            PixelFormat::Yuv422,
            PixelFormat::Yuv444,
            PixelFormat::Nv12,
            PixelFormat::Yuv420p10,
            PixelFormat::P010,
            PixelFormat::Gray8,
        ] {
            assert_eq!(from_av(to_av(f)), Some(f));
            assert_eq!(to_av(f).descriptor().map(|d| d.name()), Some(f.av_name()));
        }
    }
}
