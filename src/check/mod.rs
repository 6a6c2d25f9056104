//! `reel check FILE`: the file decoded through the V4L2 stateless decoder
//! and through the software decoder side by side, each pair of pictures in
//! output order compared in the stream's planar layout (a picture one side
//! did not put out reported alone: `compare::Aligner`); one line per frame
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
use compare::{compare, Aligner, FrameLine, Step, Tally};
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

/// One side's decoding: its pipeline, packing, the next picture (with
/// its place in the side's output order), and why it stopped early.
struct Side {
    name: &'static str,
    pipeline: Pipeline,
    packer: Packer,
    next: Option<(u64, Picture)>,
    pictures: u64,
    ended: bool,
    failure: Option<String>,
}

impl Side {
    fn new(name: &'static str, pipeline: Pipeline) -> Self {
        Self {
            name,
            pipeline,
            packer: Packer::default(),
            next: None,
            pictures: 0,
            ended: false,
            failure: None,
        }
    }

    /// The pts of the next picture, decoding it if need be; none at the
    /// end (or after a failure, kept).
    fn peek(&mut self) -> Option<i64> {
        if self.next.is_none() && !self.ended {
            match self.decode() {
                Ok(Some(picture)) => {
                    self.next = Some((self.pictures, picture));
                    self.pictures += 1;
                }
                Ok(None) => self.ended = true,
                Err(e) => {
                    self.ended = true;
                    self.failure = Some(crate::message::causes(&e));
                }
            }
        }
        self.next.as_ref().map(|(_, p)| p.pts_raw)
    }

    fn decode(&mut self) -> Result<Option<Picture>> {
        match self.pipeline.next_frame()? {
            Some(frame) => Ok(Some(self.packer.pack(&frame)?)),
            None => Ok(None),
        }
    }

    /// The next picture and its place in this side's output order.
    fn take(&mut self) -> Option<(u64, Picture)> {
        self.next.take()
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
    let mut aligner = Aligner::default();
    for index in 0u64.. {
        let step = match (v4l2.peek(), software.peek()) {
            (None, None) => break,
            (a, b) => aligner.step(a, b),
        };
        let mut a = (step != Step::SoftwareOnly).then(|| v4l2.take()).flatten();
        let b = (step != Step::V4l2Only).then(|| software.take()).flatten();
        // The V4L2 side's own output index: its request log and the
        // poison hook count by it.
        let v4l2_index = a.as_ref().map(|(i, _)| *i);
        if let Some((_, picture)) = a.as_mut().filter(|(i, _)| poisoned == Some(*i)) {
            poison::poison(picture);
        }
        let (a, b) = (a.map(|(_, p)| p), b.map(|(_, p)| p));
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
            if let Some(i) = v4l2_index.filter(|_| first.is_none()) {
                requests.forget(i);
            }
            continue;
        }
        if first.is_none() {
            first = Some(FirstDifference {
                index,
                pts,
                log: v4l2_index.and_then(|i| requests.picture(i)),
            });
            requests.stop();
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
