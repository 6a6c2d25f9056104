//! Text to pixels: lines of white text on a translucent black backdrop,
//! readable over any picture.

use ab_glyph::{point, Font, FontArc, PxScale, ScaleFont};

use super::OverlayImage;

/// The backdrop's opacity (premultiplied black).
const BACKDROP_ALPHA: f32 = 0.65;

#[derive(Debug, thiserror::Error)]
pub enum RasterError {
    #[error("cannot read the OSD font {path}: {source}")]
    Read {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the OSD font {0} is not a usable TrueType/OpenType font")]
    Invalid(std::path::PathBuf),
}

/// Draws text with one font.
pub struct TextRenderer {
    font: FontArc,
}

impl TextRenderer {
    pub fn open(path: &std::path::Path) -> Result<Self, RasterError> {
        let bytes = std::fs::read(path).map_err(|source| RasterError::Read {
            path: path.to_owned(),
            source,
        })?;
        let font =
            FontArc::try_from_vec(bytes).map_err(|_| RasterError::Invalid(path.to_owned()))?;
        Ok(Self { font })
    }

    /// `lines` at `size` surface pixels per line, drawn for buffer `scale`
    /// (the image is `scale` times larger than it appears). The backdrop
    /// pads the text by a third of a line.
    pub fn render(&self, lines: &[String], size: f32, scale: u32) -> OverlayImage {
        let scale = scale.max(1);
        let px = PxScale::from(size * scale as f32);
        let font = self.font.as_scaled(px);
        let line_height = (font.height() + font.line_gap()).ceil();
        let pad = (line_height / 3.0).ceil();
        let widths: Vec<f32> = lines.iter().map(|l| self.line_width(l, px)).collect();
        let text_width = widths.iter().copied().fold(0.0, f32::max);
        let width = (text_width + 2.0 * pad).ceil().max(1.0) as u32;
        let height = (line_height * lines.len() as f32 + 2.0 * pad)
            .ceil()
            .max(1.0) as u32;
        let stride = width as usize * 4;
        // Coverage of white text per pixel, then composed over the backdrop.
        let mut coverage = vec![0f32; width as usize * height as usize];
        for (row, line) in lines.iter().enumerate() {
            let baseline = pad + line_height * row as f32 + font.ascent();
            let mut x = pad;
            let mut previous = None;
            for c in line.chars() {
                let id = self.font.glyph_id(c);
                if let Some(prev) = previous {
                    x += font.kern(prev, id);
                }
                let glyph = id.with_scale_and_position(px, point(x, baseline));
                x += font.h_advance(id);
                previous = Some(id);
                let Some(outline) = self.font.outline_glyph(glyph) else {
                    continue; // a space
                };
                let bounds = outline.px_bounds();
                outline.draw(|gx, gy, c| {
                    let px = bounds.min.x as i64 + i64::from(gx);
                    let py = bounds.min.y as i64 + i64::from(gy);
                    if px < 0 || py < 0 || px >= i64::from(width) || py >= i64::from(height) {
                        return;
                    }
                    let i = py as usize * width as usize + px as usize;
                    coverage[i] = (coverage[i] + c).min(1.0);
                });
            }
        }
        let mut pixels = vec![0u8; stride * height as usize];
        for (pixel, &c) in pixels.chunks_exact_mut(4).zip(&coverage) {
            // White over premultiplied black: colour is the text's
            // coverage, alpha what text and backdrop cover together.
            let value = (c * 255.0).round() as u8;
            let alpha = ((c + (1.0 - c) * BACKDROP_ALPHA) * 255.0).round() as u8;
            pixel.copy_from_slice(&[value, value, value, alpha]);
        }
        OverlayImage {
            width,
            height,
            pixels,
            scale,
        }
    }

    fn line_width(&self, line: &str, px: PxScale) -> f32 {
        let font = self.font.as_scaled(px);
        let mut previous = None;
        let mut width = 0.0;
        for c in line.chars() {
            let id = self.font.glyph_id(c);
            if let Some(prev) = previous {
                width += font.kern(prev, id);
            }
            width += font.h_advance(id);
            previous = Some(id);
        }
        width
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn renderer() -> TextRenderer {
        let path = crate::osd::font::locate().expect("DejaVu Sans Mono (fonts-dejavu-core)");
        TextRenderer::open(&path).expect("font")
    }

    /// Pixels whose colour is mostly text (bright), per image.
    fn bright(image: &OverlayImage) -> usize {
        image.pixels.chunks_exact(4).filter(|p| p[1] > 128).count()
    }

    #[test]
    fn text_is_white_on_a_translucent_backdrop_and_grows_with_lines_and_scale() {
        let r = renderer();
        let one = r.render(&["00:00:02 / 00:00:10".into()], 20.0, 1);
        assert!(one.width > 150 && one.width < 400, "{}", one.width);
        assert!(one.height > 20 && one.height < 50, "{}", one.height);
        assert_eq!(one.pixels.len(), one.stride() * one.height as usize);
        // Premultiplied: no channel exceeds alpha; the corner is backdrop.
        assert!(one
            .pixels
            .chunks_exact(4)
            .all(|p| p[0] <= p[3] && p[2] <= p[3]));
        assert_eq!(&one.pixels[..4], &[0, 0, 0, 166]);
        let lit = bright(&one);
        assert!(lit > 100, "{lit} text pixels");
        let two = r.render(&["00:00:02 / 00:00:10".into(), "frame 50".into()], 20.0, 1);
        assert_eq!(two.width, one.width);
        assert!(two.height > one.height + 15);
        assert!(bright(&two) > lit);
        let doubled = r.render(&["00:00:02 / 00:00:10".into()], 20.0, 2);
        assert_eq!(doubled.scale, 2);
        assert!(doubled.width.abs_diff(one.width * 2) <= 2);
        assert!(bright(&doubled) > 3 * lit);
    }

    #[test]
    fn different_text_draws_differently_and_nothing_is_drawn_outside() {
        let r = renderer();
        let a = r.render(&["frame 50".into()], 24.0, 1);
        let b = r.render(&["frame 51".into()], 24.0, 1);
        assert_eq!((a.width, a.height), (b.width, b.height));
        assert_ne!(a.pixels, b.pixels);
        let empty = r.render(&[], 24.0, 1);
        assert!(empty.width >= 1 && empty.height >= 1);
        assert_eq!(bright(&empty), 0);
    }

    #[test]
    fn a_file_that_is_not_a_font_is_a_clear_error() {
        let path = std::env::temp_dir().join(format!("reel-notafont-{}", std::process::id()));
        std::fs::write(&path, b"not a font").unwrap();
        let error = TextRenderer::open(&path).err().expect("refused");
        assert!(error.to_string().contains("not a usable"), "{error}");
        std::fs::remove_file(&path).unwrap();
    }
}
