//! The two decoders of `reel check`: the file opened twice, once through
//! the V4L2 stateless decoder (no software fallback) and once through the
//! software decoder.

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::exit::{Exit, Fatal};
use crate::media::Demuxer;
use crate::player::decoder_choice::{self, DecoderChoice, Hwdec, Plan};
use crate::player::pipeline::{Pipeline, PipelineOptions};

/// Frames of the V4L2 side held outside its decoder at once: each is
/// packed into memory and let go before the next is asked for.
const FRAMES_HELD: usize = 2;

pub struct Sides {
    pub v4l2: Pipeline,
    pub software: Pipeline,
}

/// Opens both sides; an error when the file cannot be opened or no V4L2
/// decoder handles its stream ("no V4L2 decoder for <codec>").
pub fn open(file: &Path, device: Option<PathBuf>, threads: usize) -> Result<Sides> {
    let mut v4l2 = DecoderChoice {
        hwdec: Hwdec::V4l2,
        device,
        ..DecoderChoice::default()
    };
    v4l2.capture.cpu_reads_pictures = true;
    v4l2.capture.frames_held_downstream = FRAMES_HELD;
    {
        let demuxer = Demuxer::open(file)?;
        let stream = demuxer.stream();
        if let Plan::Software(reason) = decoder_choice::plan(stream, &v4l2) {
            return Err(Fatal::new(
                Exit::Failed,
                format!("no V4L2 decoder for {}: {reason}", stream.codec),
            )
            .into());
        }
    }
    let options = |decoder| PipelineOptions {
        for_display: false,
        threads,
        decoder,
    };
    let software = DecoderChoice {
        hwdec: Hwdec::No,
        ..DecoderChoice::default()
    };
    Ok(Sides {
        v4l2: Pipeline::open(file, &options(v4l2))?,
        software: Pipeline::open(file, &options(software))?,
    })
}
