//! Subtitles onto an overlay picture of premultiplied ARGB8888 (B, G,
//! R, A): libass's bitmaps, each an alpha mask in one colour, blended in
//! order; bitmap formats' pictures, scaled.

use super::libass::Glyphs;
use crate::osd::OverlayImage;

/// A transparent `width` x `height` picture for `scale`.
pub fn blank(width: u32, height: u32, scale: u32) -> OverlayImage {
    OverlayImage {
        width,
        height,
        pixels: vec![0; width as usize * height as usize * 4],
        scale,
    }
}

/// Blends `glyphs` over `image` where they overlap.
pub fn blend(image: &mut OverlayImage, glyphs: Glyphs<'_>) {
    let [r, g, b, transparency] = glyphs.color.to_be_bytes();
    let opacity = 255 - u32::from(transparency);
    if opacity == 0 {
        return;
    }
    let (width, height) = (image.width as i64, image.height as i64);
    let stride = image.stride();
    for row in 0..glyphs.height {
        let y = i64::from(glyphs.y) + row as i64;
        if y < 0 || y >= height {
            continue;
        }
        let mask = &glyphs.alpha[row * glyphs.stride..];
        for (col, &coverage) in mask.iter().take(glyphs.width).enumerate() {
            let x = i64::from(glyphs.x) + col as i64;
            if coverage == 0 || x < 0 || x >= width {
                continue;
            }
            let alpha = u32::from(coverage) * opacity / 255;
            let at = y as usize * stride + x as usize * 4;
            let pixel = &mut image.pixels[at..at + 4];
            let keep = 255 - alpha;
            for (dst, src) in pixel.iter_mut().zip([b, g, r, 255]) {
                *dst = ((u32::from(src) * alpha + u32::from(*dst) * keep + 127) / 255) as u8;
            }
        }
    }
}

/// Blends `pixels` (premultiplied, `size` of them, row by row) over
/// `image`, their top left corner at `at` and scaled by `scale`,
/// sampled bilinearly.
pub fn blend_scaled(
    image: &mut OverlayImage,
    pixels: &[[u8; 4]],
    (width, height): (u32, u32),
    at: (f64, f64),
    scale: (f64, f64),
) {
    let (w, h) = (width as usize, height as usize);
    if !(scale.0 > 0.0 && scale.1 > 0.0) || pixels.len() < w * h {
        return;
    }
    let span = |start: f64, length: f64, limit: u32| {
        let from = start.floor().clamp(0.0, f64::from(limit)) as usize;
        let to = (start + length).ceil().clamp(0.0, f64::from(limit)) as usize;
        from..to
    };
    let columns = span(at.0, f64::from(width) * scale.0, image.width);
    let rows = span(at.1, f64::from(height) * scale.1, image.height);
    let texel = |x: i64, y: i64| -> [u32; 4] {
        if x < 0 || y < 0 || x >= w as i64 || y >= h as i64 {
            return [0; 4];
        }
        pixels[y as usize * w + x as usize].map(u32::from)
    };
    let stride = image.stride();
    for row in rows {
        let v = (row as f64 + 0.5 - at.1) / scale.1 - 0.5;
        let (y, fy) = (v.floor() as i64, v - v.floor());
        for column in columns.clone() {
            let u = (column as f64 + 0.5 - at.0) / scale.0 - 0.5;
            let (x, fx) = (u.floor() as i64, u - u.floor());
            let weights = [
                (1.0 - fx) * (1.0 - fy),
                fx * (1.0 - fy),
                (1.0 - fx) * fy,
                fx * fy,
            ];
            let corners = [
                texel(x, y),
                texel(x + 1, y),
                texel(x, y + 1),
                texel(x + 1, y + 1),
            ];
            let mut source = [0f64; 4];
            for (corner, weight) in corners.iter().zip(weights) {
                for (sum, &c) in source.iter_mut().zip(corner) {
                    *sum += f64::from(c) * weight;
                }
            }
            let alpha = source[3].round().clamp(0.0, 255.0) as u32;
            if alpha == 0 {
                continue;
            }
            let at = row * stride + column * 4;
            let pixel = &mut image.pixels[at..at + 4];
            for (dst, src) in pixel.iter_mut().zip(source) {
                let src = src.round().clamp(0.0, 255.0) as u32;
                *dst = (src + (u32::from(*dst) * (255 - alpha) + 127) / 255).min(255) as u8;
            }
        }
    }
}

/// Whether anything was drawn.
pub fn is_blank(image: &OverlayImage) -> bool {
    image.pixels.chunks_exact(4).all(|p| p[3] == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn glyphs(alpha: &[u8], color: u32, x: i32, y: i32) -> Glyphs<'_> {
        Glyphs {
            width: 2,
            height: alpha.len() / 2,
            stride: 2,
            alpha,
            color,
            x,
            y,
        }
    }

    #[test]
    fn an_opaque_mask_paints_its_colour_and_a_clipped_one_stays_inside() {
        let mut image = blank(3, 2, 1);
        assert!(is_blank(&image));
        // Red, opaque, full coverage on the left column, half on the right.
        blend(&mut image, glyphs(&[255, 128, 255, 128], 0xff00_0000, 0, 0));
        assert_eq!(&image.pixels[0..4], &[0, 0, 255, 255]);
        assert_eq!(&image.pixels[4..8], &[0, 0, 128, 128]);
        assert_eq!(&image.pixels[8..12], &[0, 0, 0, 0]);
        // Off the picture's edges: only the overlap is drawn, no panic.
        blend(&mut image, glyphs(&[255; 4], 0x0000_ff00, 2, 1));
        blend(&mut image, glyphs(&[255; 4], 0x0000_ff00, -5, -5));
        assert_eq!(&image.pixels[20..24], &[255, 0, 0, 255]);
        assert!(!is_blank(&image));
    }

    #[test]
    fn a_picture_scaled_twice_as_large_covers_twice_the_pixels() {
        let mut image = blank(8, 6, 1);
        let white = [255u8; 4];
        // 2x2 opaque white at (1, 1), scaled 2x: columns and rows 1..5.
        blend_scaled(&mut image, &[white; 4], (2, 2), (1.0, 1.0), (2.0, 2.0));
        let alpha = |image: &OverlayImage, x: usize, y: usize| image.pixels[(y * 8 + x) * 4 + 3];
        assert_eq!(alpha(&image, 0, 2), 0);
        assert_eq!(alpha(&image, 2, 2), 255);
        assert_eq!(alpha(&image, 3, 3), 255);
        assert_eq!(alpha(&image, 5, 2), 0);
        assert_eq!(alpha(&image, 2, 5), 0);
        // The edges are blended, not cut.
        assert!(alpha(&image, 1, 1) > 0 && alpha(&image, 1, 1) < 255);
        // Off the image: only the overlap, no panic; absurd scales draw nothing.
        blend_scaled(&mut image, &[white], (1, 1), (-10.0, 7.5), (3.0, 3.0));
        blend_scaled(&mut image, &[white], (1, 1), (0.0, 0.0), (0.0, f64::NAN));
        assert_eq!(alpha(&image, 0, 0), 0);
    }

    #[test]
    fn transparency_is_libass_inverted_alpha() {
        let mut image = blank(2, 1, 1);
        // White at transparency 0x80: about half opaque.
        blend(&mut image, glyphs(&[255, 255], 0xffff_ff80, 0, 0));
        assert_eq!(&image.pixels[0..4], &[127, 127, 127, 127]);
        blend(&mut image, glyphs(&[255, 255], 0xffff_ffff, 0, 0));
        assert_eq!(&image.pixels[0..4], &[127, 127, 127, 127]);
    }
}
