//! Comparing pictures and reading text off them: PSNR of RGB pictures, and
//! the OSD's text read by OCR (Debian's tesseract-ocr).

use std::path::Path;
use std::process::Command;

use super::compositor::Screenshot;

/// Peak signal-to-noise ratio of two RGB pictures of the same size, in dB.
pub fn psnr(a: &[u8], b: &[u8]) -> f64 {
    assert_eq!(a.len(), b.len(), "pictures of different sizes");
    let sum: f64 = a
        .iter()
        .zip(b)
        .map(|(&x, &y)| (f64::from(x) - f64::from(y)).powi(2))
        .sum();
    let mse = sum / a.len() as f64;
    if mse == 0.0 {
        99.0
    } else {
        10.0 * (255.0f64 * 255.0 / mse).log10()
    }
}

/// The `w` x `h` rectangle at (`x`, `y`) of `shot`, as packed RGB.
pub fn crop(shot: &Screenshot, (x, y, w, h): (u32, u32, u32, u32)) -> Vec<u8> {
    let mut rgb = Vec::with_capacity((w * h * 3) as usize);
    for row in y..y + h {
        for col in x..x + w {
            rgb.extend_from_slice(&shot.pixel(col, row));
        }
    }
    rgb
}

/// The text in the top `height` rows of `shot`, as tesseract reads it.
/// The OSD's text is white; everything else (the video dimmed by its
/// backdrop, the video elsewhere) is not: pixels bright in all three
/// channels become black ink on white, upscaled three times (tesseract
/// misreads DejaVu's dotted zero in text under 30 pixels).
pub fn read_text(shot: &Screenshot, height: u32, scratch: &Path) -> String {
    const UP: u32 = 3;
    let (w, h) = (shot.width * UP, height.min(shot.height) * UP);
    let mut grey = vec![255u8; (w * h) as usize];
    for y in 0..h {
        for x in 0..w {
            let [r, g, b] = shot.pixel(x / UP, y / UP);
            if r.min(g).min(b) > 200 {
                grey[(y * w + x) as usize] = 0;
            }
        }
    }
    let png = scratch.join(format!("ocr-{}.png", std::process::id()));
    let file = std::fs::File::create(&png).expect("create OCR input");
    let mut encoder = png::Encoder::new(std::io::BufWriter::new(file), w, h);
    encoder.set_color(png::ColorType::Grayscale);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().expect("OCR PNG header");
    writer.write_image_data(&grey).expect("OCR PNG data");
    writer.finish().expect("OCR PNG end");
    let out = Command::new("tesseract")
        .arg(&png)
        .args(["stdout", "--psm", "6"])
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run tesseract (packaging/install-deps.sh installs tesseract-ocr): {e}")
        });
    assert!(
        out.status.success(),
        "tesseract failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}
