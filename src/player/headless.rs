//! Playback with no window: every frame to a checksum writer (`framemd5`),
//! a raw video writer (`raw`) or nowhere (`null`), as fast as the decoder
//! goes.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;
use tracing::info;

use crate::display::framemd5::Framemd5Writer;
use crate::display::rawvideo::{planar_layout, RawVideoWriter};
use crate::frame::DecoderKind;
use crate::sw::Repacker;
use ffmpeg_next::format::Pixel;

use super::decoder_choice::DecoderChoice;
use super::frame_decoder::{DamageCounters, DamageCounts};
use super::pipeline::{Pipeline, PipelineOptions};

/// Decoded frames held outside the decoder at once: the one being hashed
/// (or dropped) and one more the decoder put out with it. A V4L2 decoder
/// allocates a CAPTURE buffer for each, not the player's eight (the
/// compositor's, the decode-ahead queue's): on a board, memory from a
/// small CMA pool.
const FRAMES_HELD: usize = 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sink {
    Framemd5,
    /// Raw pictures, in the stream's own layout or the one named.
    Raw(Option<Pixel>),
    Null,
}

/// The writer a sink puts frames through.
enum Writer<W: Write> {
    Framemd5(Framemd5Writer<W>),
    Raw(RawVideoWriter<W>),
    /// Packed in the stream's layout first, then converted.
    RawAs {
        planar: RawVideoWriter<Vec<u8>>,
        repacker: Repacker,
        out: W,
    },
    Null,
}

impl<W: Write> Writer<W> {
    fn write_frame(&mut self, frame: &crate::frame::Frame) -> std::io::Result<()> {
        match self {
            Self::Framemd5(w) => w.write_frame(frame),
            Self::Raw(w) => w.write_frame(frame),
            Self::RawAs {
                planar,
                repacker,
                out,
            } => {
                planar.write_frame(frame)?;
                let layout = planar_layout(frame.format);
                let packed = std::mem::take(planar.get_mut());
                let converted = repacker
                    .repack(&packed, frame.width, frame.height, layout)
                    .map_err(std::io::Error::other)?;
                out.write_all(converted)?;
                // The buffer's memory is kept for the next picture.
                *planar.get_mut() = packed;
                planar.get_mut().clear();
                Ok(())
            }
            Self::Null => Ok(()),
        }
    }

    fn finish(self) -> std::io::Result<()> {
        match self {
            Self::Framemd5(w) => w.finish().map(drop),
            Self::Raw(w) => w.finish().map(drop),
            Self::RawAs { mut out, .. } => out.flush(),
            Self::Null => Ok(()),
        }
    }
}

/// What one headless run did.
#[derive(Debug, Clone)]
pub struct HeadlessReport {
    pub frames: u64,
    pub errors: u64,
    /// What went wrong, when `errors` > 0.
    pub error_summary: Option<String>,
    pub elapsed: Duration,
    /// Which decoder decoded the file.
    pub decoder: DecoderKind,
    /// Pictures the decoder knew to be damaged, and those not output
    /// because of them.
    pub damage: DamageCounts,
}

impl HeadlessReport {
    /// What makes the run a failure (its exit status), if anything: errors
    /// the stream went on after, or pictures the decoder reported damaged.
    pub fn failure(&self) -> Option<String> {
        match (&self.error_summary, self.damage.decode_errors) {
            (Some(summary), _) if self.errors > 0 => Some(summary.clone()),
            (_, 0) => None,
            (_, n) => Some(format!(
                "{n} pictures decoded with errors; {} pictures not output",
                self.damage.frames_skipped
            )),
        }
    }
}

pub fn run_file(
    path: &Path,
    start: Option<Duration>,
    threads: usize,
    decoder: &DecoderChoice,
    sink: Sink,
    out: &mut impl Write,
) -> Result<HeadlessReport> {
    let began = Instant::now();
    let damage = Arc::new(DamageCounters::default());
    let mut decoder = decoder.clone();
    decoder.capture.frames_held_downstream = FRAMES_HELD;
    let mut pipeline = Pipeline::open(
        path,
        &PipelineOptions {
            for_display: false,
            threads,
            decoder,
        },
    )?;
    pipeline.count_damage_in(damage.clone());
    if let Some(position) = start {
        pipeline.seek(position, 0)?;
    }
    let mut writer = match sink {
        Sink::Framemd5 => Writer::Framemd5(Framemd5Writer::new(&mut *out, pipeline.stream())),
        Sink::Raw(None) => Writer::Raw(RawVideoWriter::new(
            &mut *out,
            pipeline.stream().pixel_format.clone(),
        )),
        Sink::Raw(Some(layout)) => Writer::RawAs {
            planar: RawVideoWriter::new(Vec::new(), pipeline.stream().pixel_format.clone()),
            repacker: Repacker::new(layout),
            out: &mut *out,
        },
        Sink::Null => Writer::Null,
    };
    let mut frames = 0u64;
    while let Some(frame) = pipeline.next_frame()? {
        writer.write_frame(&frame)?;
        frames += 1;
    }
    writer.finish()?;
    pipeline.settle();
    if frames == 0 {
        anyhow::bail!("no frame could be decoded");
    }
    let report = HeadlessReport {
        frames,
        errors: pipeline.errors(),
        error_summary: pipeline.error_summary(),
        elapsed: began.elapsed(),
        decoder: pipeline.decoder_kind(),
        damage: damage.get(),
    };
    let fps = frames as f64 / report.elapsed.as_secs_f64().max(1e-9);
    info!(
        file = %path.display(),
        frames,
        errors = report.errors,
        decoder = %pipeline.decoder_kind(),
        "decoded in {:.3} s ({fps:.1} fps)",
        report.elapsed.as_secs_f64()
    );
    Ok(report)
}
