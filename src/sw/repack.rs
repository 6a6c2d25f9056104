//! `--output raw --pix-fmt NAME`: pictures already packed in their own
//! planar layout (display/rawvideo.rs) converted by libswscale into the
//! layout a tester asked for, and packed again with no row padding, as
//! `ffmpeg -f rawvideo -pix_fmt NAME` writes them.

use ffmpeg_next::format::Pixel;
use ffmpeg_next::{ffi, frame};

use super::format::{to_av, Converter};
use super::SwError;
use crate::frame::PixelFormat;

/// The layout FFmpeg knows by `name` (`rgb24`, `nv12`, `yuv420p10le`, ...).
pub fn pixel_by_name(name: &str) -> Option<Pixel> {
    let name = std::ffi::CString::new(name).ok()?;
    // SAFETY: av_get_pix_fmt reads a NUL-terminated string we own for the call.
    let pixel = Pixel::from(unsafe { ffi::av_get_pix_fmt(name.as_ptr()) });
    (pixel != Pixel::None).then_some(pixel)
}

/// Converts packed planar pictures into `target`.
pub struct Repacker {
    target: Pixel,
    converter: Converter,
    packed: Vec<u8>,
}

impl Repacker {
    pub fn new(target: Pixel) -> Self {
        Self {
            target,
            converter: Converter::default(),
            packed: Vec::new(),
        }
    }

    /// `planar`: one `width`x`height` picture in `layout`, planes one after
    /// the other with no padding. Returns the picture in the target layout.
    pub fn repack(
        &mut self,
        planar: &[u8],
        width: u32,
        height: u32,
        layout: PixelFormat,
    ) -> Result<&[u8], SwError> {
        let source = unpacked(planar, width, height, layout)?;
        let converted = self.converter.convert_to_av(&source, self.target)?;
        let (w, h) = (width as i32, height as i32);
        // SAFETY: a pure computation on a valid pixel format and size.
        let size = unsafe { ffi::av_image_get_buffer_size(self.target.into(), w, h, 1) };
        let size = usize::try_from(size)
            .map_err(|_| SwError::Convert(format!("{:?} at {width}x{height}", self.target)))?;
        self.packed.resize(size, 0);
        // SAFETY: `converted` is a valid frame of the target layout and
        // size (libswscale wrote it), alive for the call; `packed` holds
        // `size` bytes, what av_image_get_buffer_size says that layout
        // needs with no padding.
        let written = unsafe {
            let frame = converted.as_ptr();
            ffi::av_image_copy_to_buffer(
                self.packed.as_mut_ptr(),
                size as i32,
                (*frame).data.as_ptr() as *const *const u8,
                (*frame).linesize.as_ptr(),
                self.target.into(),
                w,
                h,
                1,
            )
        };
        if written < 0 {
            return Err(SwError::Convert(format!(
                "packing {:?}: {}",
                self.target,
                ffmpeg_next::Error::from(written)
            )));
        }
        Ok(&self.packed)
    }
}

/// A frame holding `planar`'s planes, each row at the frame's stride.
fn unpacked(
    planar: &[u8],
    width: u32,
    height: u32,
    layout: PixelFormat,
) -> Result<frame::Video, SwError> {
    let mut frame = frame::Video::new(to_av(layout), width, height);
    let sample = layout.bytes_per_sample();
    let mut at = 0;
    for plane in 0..frame.planes() {
        let row = frame.plane_width(plane) as usize * sample;
        let rows = frame.plane_height(plane) as usize;
        let stride = frame.stride(plane);
        let data = frame.data_mut(plane);
        for r in 0..rows {
            let (Some(src), Some(dst)) = (
                planar.get(at..at + row),
                data.get_mut(r * stride..r * stride + row),
            ) else {
                return Err(SwError::Convert(format!(
                    "a {width}x{height} {layout} picture of {} bytes",
                    planar.len()
                )));
            };
            dst.copy_from_slice(src);
            at += row;
        }
    }
    Ok(frame)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_ffmpegs() {
        crate::media::init_ffmpeg();
        assert_eq!(pixel_by_name("rgb24"), Some(Pixel::RGB24));
        assert_eq!(pixel_by_name("yuv420p10le"), Some(Pixel::YUV420P10LE));
        assert_eq!(pixel_by_name("no-such-layout"), None);
    }

    #[test]
    fn a_planar_picture_repacks_into_nv12() {
        crate::media::init_ffmpeg();
        // 4x2 yuv420p: 8 luma, 2 Cb, 2 Cr samples.
        let planar: Vec<u8> = (0..12).collect();
        let mut repacker = Repacker::new(Pixel::NV12);
        let nv12 = repacker.repack(&planar, 4, 2, PixelFormat::Yuv420).unwrap();
        assert_eq!(nv12, [0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 9, 11]);
        let short = repacker.repack(&planar[..11], 4, 2, PixelFormat::Yuv420);
        assert!(short.is_err());
    }
}
