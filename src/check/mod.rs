//! `reel check FILE`: the file decoded through the V4L2 stateless decoder
//! and through the software decoder side by side, each pair of pictures in
//! output order compared in the stream's planar layout; one line per frame
//! and a summary on stdout. Exit status 0 when every frame is equal, 1 on
//! any difference (a missing frame included).

pub mod compare;
pub mod dump;
pub mod picture;
pub mod poison;
pub mod psnr;
pub mod request_log;
pub mod sides;

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;

use crate::exit::{Exit, Outcome};
use crate::player::pipeline::Pipeline;
use compare::{compare, FrameLine, Tally};
use picture::{Packer, Picture};
use request_log::{PictureLog, RequestLog};

/// What `reel check` was asked.
#[derive(Clone, Debug)]
pub struct CheckOptions {
    pub file: PathBuf,
    pub device: Option<PathBuf>,
    pub threads: usize,
    pub dump_dir: Option<PathBuf>,
    pub dump_count: usize,
    /// Print the first differing frame's requests (`-v`).
    pub verbose: bool,
}

/// One side's decoding: its pipeline, packing, and why it stopped early.
struct Side {
    name: &'static str,
    pipeline: Pipeline,
    packer: Packer,
    ended: bool,
    failure: Option<String>,
}

impl Side {
    fn new(name: &'static str, pipeline: Pipeline) -> Self {
        Self {
            name,
            pipeline,
            packer: Packer::default(),
            ended: false,
            failure: None,
        }
    }

    /// The next picture, or none at the end (or after a failure, kept).
    fn next(&mut self) -> Option<Picture> {
        if self.ended {
            return None;
        }
        let packed = match self.pipeline.next_frame() {
            Ok(Some(frame)) => self.packer.pack(&frame).map_err(anyhow::Error::from),
            Ok(None) => {
                self.ended = true;
                return None;
            }
            Err(e) => Err(e),
        };
        packed
            .map_err(|e| {
                self.ended = true;
                self.failure = Some(crate::message::causes(&e));
            })
            .ok()
    }
}

/// The first differing frame, as the summary reports it.
struct FirstDifference {
    index: u64,
    pts: Option<i64>,
    log: Option<PictureLog>,
}

pub fn run(options: &CheckOptions, requests: &RequestLog, out: &mut impl Write) -> Result<Outcome> {
    let sides = sides::open(&options.file, options.device.clone(), options.threads)?;
    let mut v4l2 = Side::new("v4l2", sides.v4l2);
    let mut software = Side::new("software", sides.software);
    let poisoned = poison::poisoned_frame();
    let mut tally = Tally::default();
    let mut first: Option<FirstDifference> = None;
    let mut dumped = 0;
    for index in 0u64.. {
        let mut a = v4l2.next();
        let b = software.next();
        if a.is_none() && b.is_none() {
            break;
        }
        if let Some(picture) = a.as_mut().filter(|_| poisoned == Some(index)) {
            poison::poison(picture);
        }
        let verdict = compare(a.as_ref(), b.as_ref());
        let pts = a.as_ref().or(b.as_ref()).map(|p| p.pts_raw);
        writeln!(
            out,
            "{}",
            FrameLine {
                index,
                pts,
                verdict: &verdict
            }
        )?;
        tally.add(index, &verdict);
        if verdict.is_equal() {
            continue;
        }
        if first.is_none() {
            first = Some(FirstDifference {
                index,
                pts,
                log: requests.picture(index),
            });
        }
        if let Some(dir) = options
            .dump_dir
            .as_deref()
            .filter(|_| dumped < options.dump_count)
        {
            dumped += 1;
            for path in dump::dump_pair(dir, index, a.as_ref(), b.as_ref())? {
                writeln!(out, "dumped {}", path.display())?;
            }
        }
    }
    v4l2.pipeline.settle();
    software.pipeline.settle();
    summarise(
        out,
        &tally,
        first.as_ref(),
        [&v4l2, &software],
        options.verbose,
    )?;
    let failed = v4l2.failure.is_some() || software.failure.is_some();
    Ok(Outcome {
        failures: Vec::new(),
        exit: if tally.all_equal() && !failed {
            Exit::Success
        } else {
            Exit::Failed
        },
    })
}

fn summarise(
    out: &mut impl Write,
    tally: &Tally,
    first: Option<&FirstDifference>,
    sides: [&Side; 2],
    verbose: bool,
) -> std::io::Result<()> {
    writeln!(
        out,
        "summary: compared={} differing={} v4l2_frames={} software_frames={}",
        tally.compared, tally.differing, tally.v4l2_frames, tally.software_frames
    )?;
    if tally.counts_differ() {
        writeln!(
            out,
            "frame count differs: v4l2={} software={}",
            tally.v4l2_frames, tally.software_frames
        )?;
    }
    for side in sides {
        if let Some(failure) = &side.failure {
            writeln!(out, "{} decoding stopped: {failure}", side.name)?;
        }
        if let Some(summary) = side.pipeline.error_summary() {
            writeln!(
                out,
                "{} decode errors: {} ({summary})",
                side.name,
                side.pipeline.errors()
            )?;
        }
    }
    match first {
        None if tally.all_equal() => writeln!(out, "every frame equal"),
        None => writeln!(out, "no frame decoded"),
        Some(first) => {
            write!(out, "first differing frame: frame={}", first.index)?;
            if let Some(pts) = first.pts {
                write!(out, " pts={pts}")?;
            }
            let log = first.log.as_ref();
            if let Some(kind) = log.and_then(|l| l.kind.as_deref()) {
                write!(out, " type={kind}")?;
            }
            if let Some(order) = log.and_then(|l| l.order.as_deref()) {
                write!(out, " order={order}")?;
            }
            if let Some(log) = log {
                write!(out, " device_ts={}", log.timestamp)?;
            }
            writeln!(out)?;
            if verbose {
                let lines = log.map(|l| l.lines.as_slice()).unwrap_or_default();
                if lines.is_empty() {
                    writeln!(out, "requests: none logged for this frame")?;
                }
                for line in lines {
                    writeln!(out, "  {line}")?;
                }
            }
            Ok(())
        }
    }
}
