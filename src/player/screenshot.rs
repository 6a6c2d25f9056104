//! `screenshot-to-file`: the picture at a position of a file, written as a
//! PNG. It is decoded afresh in software: the one on screen may be a V4L2
//! buffer the compositor holds, and no CPU copy of it is kept.

use std::fs::File;
use std::io::BufWriter;
use std::path::Path;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};

use super::decoder_choice::{DecoderChoice, Hwdec};
use super::pipeline::{Pipeline, PipelineOptions};
use crate::display::frame_to_xrgb;

/// Writes the picture of `media` showing at `position` to `out` (a `.png`).
pub fn write_png(media: &Path, position: Duration, threads: usize, out: &Path) -> Result<()> {
    let is_png = out
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("png"));
    if !is_png {
        bail!("{}: reel writes PNG screenshots only", out.display());
    }
    let options = PipelineOptions {
        for_display: true,
        threads,
        decoder: DecoderChoice {
            hwdec: Hwdec::No,
            ..DecoderChoice::default()
        },
    };
    let mut pipeline = Pipeline::open(media, &options)?;
    pipeline.seek(position, 0)?;
    let frame = pipeline
        .next_frame()?
        .ok_or_else(|| anyhow!("no picture at {position:?}"))?;
    let (width, height) = (frame.width, frame.height);
    let stride = width as usize * 4;
    let mut xrgb = vec![0u8; stride * height as usize];
    frame_to_xrgb(&frame, &mut xrgb, stride)?;
    // XRGB8888 is B, G, R, X in memory.
    let rgb: Vec<u8> = xrgb
        .chunks_exact(4)
        .flat_map(|px| [px[2], px[1], px[0]])
        .collect();
    let file = File::create(out).with_context(|| format!("cannot create {}", out.display()))?;
    let mut encoder = png::Encoder::new(BufWriter::new(file), width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(&rgb)?;
    writer.finish()?;
    Ok(())
}
