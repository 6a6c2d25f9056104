//! `--output raw`: every decoded picture in output order, its planes packed
//! with no row padding in the stream's own planar layout (libavcodec's
//! `yuv420p`, `yuv420p10le`, `yuv422p`, ...), byte for byte what
//! `ffmpeg -i FILE -f rawvideo -` writes. Pictures a V4L2 decoder gave in a
//! semi-planar layout (NV12, P010 CAPTURE buffers) are de-interleaved, and
//! P010's high-bit samples moved to the low bits, on the way out.
//!
//! A raw stream has no header: each change of size or layout is logged, so
//! that a reader of a stream whose resolution or bit depth changes can cut
//! it (FFmpeg converts every picture to the first one's layout instead). A
//! layout other than the stream's (the software path gives 4:2:2 and 4:4:4
//! 10-bit pictures as 4:2:0 10-bit) is warned of.

use std::io::{self, Write};

use crate::frame::{Frame, PixelFormat};

/// The planar layout a picture of `format` is written in, and its FFmpeg
/// name.
pub fn planar_layout(format: PixelFormat) -> PixelFormat {
    match format {
        PixelFormat::Nv12 => PixelFormat::Yuv420,
        PixelFormat::P010 => PixelFormat::Yuv420p10,
        other => other,
    }
}

/// Writes each frame's pixels, planar, one after the other.
pub struct RawVideoWriter<W: Write> {
    out: W,
    /// The stream's own layout as FFmpeg names it, when known.
    stream_layout: Option<String>,
    layout: Option<(u32, u32, PixelFormat)>,
    frames: u64,
    /// Log each change of size or layout (a raw stream's reader cuts it
    /// there).
    log_layout: bool,
    /// The chroma samples of the picture being written, de-interleaved.
    cb: Vec<u8>,
    cr: Vec<u8>,
}

impl<W: Write> RawVideoWriter<W> {
    /// A writer for a stream whose pictures FFmpeg names `stream_layout`
    /// (`VideoStreamInfo::pixel_format`).
    pub fn new(out: W, stream_layout: Option<String>) -> Self {
        Self {
            out,
            stream_layout,
            layout: None,
            frames: 0,
            log_layout: true,
            cb: Vec::new(),
            cr: Vec::new(),
        }
    }

    /// A writer that does not log changes of layout (pictures packed for
    /// another use than a raw stream: `reel check`).
    pub fn without_layout_log(mut self) -> Self {
        self.log_layout = false;
        self
    }

    pub fn write_frame(&mut self, frame: &Frame) -> io::Result<()> {
        let written = planar_layout(frame.format);
        let layout = (frame.width, frame.height, written);
        if self.log_layout && self.layout != Some(layout) {
            tracing::info!(
                "raw output from frame {}: {}x{} {}",
                self.frames,
                frame.width,
                frame.height,
                written.av_name()
            );
            if self
                .stream_layout
                .as_deref()
                .is_some_and(|s| s != written.av_name())
            {
                tracing::warn!(
                    "raw output: pictures from frame {} are {}, not the stream's {}",
                    self.frames,
                    written.av_name(),
                    self.stream_layout.as_deref().unwrap_or_default()
                );
            }
            self.layout = Some(layout);
        }
        match frame.format {
            PixelFormat::Nv12 | PixelFormat::P010 => self.write_semi_planar(frame)?,
            _ => {
                let mut result = Ok(());
                frame.for_each_packed_row(|row| {
                    if result.is_ok() {
                        result = self.out.write_all(row);
                    }
                });
                result?;
            }
        }
        self.frames += 1;
        Ok(())
    }

    /// Luma as it is, then the interleaved chroma rows split into Cb and
    /// Cr planes; P010 samples shifted down to the low 10 bits.
    fn write_semi_planar(&mut self, frame: &Frame) -> io::Result<()> {
        let high_bits = frame.format == PixelFormat::P010;
        let sample = frame.format.bytes_per_sample();
        let (_, luma_rows) = frame.format.plane_extent(0, frame.width, frame.height);
        self.cb.clear();
        self.cr.clear();
        let (out, cb, cr) = (&mut self.out, &mut self.cb, &mut self.cr);
        let mut row_index = 0;
        let mut shifted = Vec::new();
        let mut result = Ok(());
        frame.for_each_packed_row(|row| {
            if result.is_err() {
                return;
            }
            let row = if high_bits {
                shifted.clear();
                shifted.extend(
                    row.chunks_exact(2)
                        .flat_map(|s| (u16::from_le_bytes([s[0], s[1]]) >> 6).to_le_bytes()),
                );
                &shifted[..]
            } else {
                row
            };
            if row_index < luma_rows {
                result = out.write_all(row);
            } else {
                for pair in row.chunks_exact(2 * sample) {
                    cb.extend_from_slice(&pair[..sample]);
                    cr.extend_from_slice(&pair[sample..]);
                }
            }
            row_index += 1;
        });
        result?;
        self.out.write_all(&self.cb)?;
        self.out.write_all(&self.cr)
    }

    /// The writer pictures go to.
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.out
    }

    /// Flushes and returns the writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::{CpuPlanes, DecoderKind, FrameStorage};
    use std::time::Duration;

    struct Planes(Vec<Vec<u8>>, Vec<usize>);

    impl CpuPlanes for Planes {
        fn plane(&self, plane: usize) -> &[u8] {
            &self.0[plane]
        }
        fn stride(&self, plane: usize) -> usize {
            self.1[plane]
        }
    }

    fn frame(format: PixelFormat, planes: Vec<Vec<u8>>, strides: Vec<usize>) -> Frame {
        Frame {
            pts: Duration::ZERO,
            pts_raw: 0,
            duration: Duration::ZERO,
            duration_raw: 0,
            width: 2,
            height: 2,
            format,
            sample_aspect: (1, 1),
            decoder: DecoderKind::Software,
            epoch: 0,
            storage: FrameStorage::Cpu(Box::new(Planes(planes, strides))),
        }
    }

    fn written(frame: &Frame) -> Vec<u8> {
        let mut writer = RawVideoWriter::new(Vec::new(), None);
        writer.write_frame(frame).expect("write to memory");
        writer.finish().expect("flush memory")
    }

    #[test]
    fn nv12_is_written_as_yuv420p_without_padding() {
        // 2x2, rows padded to 4 bytes; CbCr pairs (10, 20).
        let f = frame(
            PixelFormat::Nv12,
            vec![vec![1, 2, 0, 0, 3, 4, 0, 0], vec![10, 20, 0, 0]],
            vec![4, 4],
        );
        assert_eq!(written(&f), vec![1, 2, 3, 4, 10, 20]);
    }

    #[test]
    fn p010_is_written_as_yuv420p10le() {
        let sample = |v: u16| (v << 6).to_le_bytes();
        let luma: Vec<u8> = [1u16, 2, 3, 1023].iter().flat_map(|&v| sample(v)).collect();
        let chroma: Vec<u8> = [512u16, 7].iter().flat_map(|&v| sample(v)).collect();
        let f = frame(PixelFormat::P010, vec![luma, chroma], vec![4, 4]);
        let expected: Vec<u8> = [1u16, 2, 3, 1023, 512, 7]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        assert_eq!(written(&f), expected);
    }

    #[test]
    fn planar_pictures_are_written_as_they_are() {
        let f = frame(
            PixelFormat::Yuv420,
            vec![vec![1, 2, 9, 3, 4, 9], vec![5, 9], vec![6, 9]],
            vec![3, 2, 2],
        );
        assert_eq!(written(&f), vec![1, 2, 3, 4, 5, 6]);
    }
}
