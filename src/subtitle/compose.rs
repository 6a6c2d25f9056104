//! libass's bitmaps onto an overlay picture: each an alpha mask in one
//! colour, blended in order over premultiplied ARGB8888 (B, G, R, A).

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
    fn transparency_is_libass_inverted_alpha() {
        let mut image = blank(2, 1, 1);
        // White at transparency 0x80: about half opaque.
        blend(&mut image, glyphs(&[255, 255], 0xffff_ff80, 0, 0));
        assert_eq!(&image.pixels[0..4], &[127, 127, 127, 127]);
        blend(&mut image, glyphs(&[255, 255], 0xffff_ffff, 0, 0));
        assert_eq!(&image.pixels[0..4], &[127, 127, 127, 127]);
    }
}
