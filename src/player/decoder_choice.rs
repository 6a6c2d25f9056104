//! Which decoder a file gets: a V4L2 stateless decoder that handles the
//! stream (discovered, or the node named with `--device`), else software
//! (libavcodec, or reel's FWHT decoder), as `--hwdec` allows.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::{bail, Context, Result};
use tracing::info;

use super::frame_decoder::{FrameDecoder, FRAMES_HELD_DOWNSTREAM};
use crate::media::{Codec, VideoStreamInfo};
use crate::sw::{FwhtDecoder, SwDecoder, SwOptions};
use crate::v4l2::decoder::V4l2Decoder;
use crate::v4l2::discovery::{self, DecoderInfo, Discovery};
use crate::v4l2::registry::{self, CodecEntry};
use crate::v4l2::session::{CaptureChooser, CaptureOptions};

/// Which decoders a file may get (`--hwdec`).
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hwdec {
    /// A V4L2 decoder if one handles the stream, else software.
    Auto,
    /// Software only.
    No,
    /// V4L2 only, no fallback.
    V4l2,
}

/// What the user allows.
#[derive(Clone, Debug)]
pub struct DecoderChoice {
    pub hwdec: Hwdec,
    /// Use this video node rather than discovering one.
    pub device: Option<PathBuf>,
    /// How a V4L2 decoder's CAPTURE side is set up (the compositor's side
    /// of the negotiation, the frames held downstream, whether the CPU
    /// reads the pictures, who imports them), handed to it whole.
    pub capture: CaptureOptions,
}

impl Default for DecoderChoice {
    fn default() -> Self {
        Self {
            hwdec: Hwdec::Auto,
            device: None,
            capture: CaptureOptions {
                frames_held_downstream: FRAMES_HELD_DOWNSTREAM,
                ..CaptureOptions::default()
            },
        }
    }
}

impl DecoderChoice {
    /// A V4L2 decoder only (discovered), its CAPTURE format picked by
    /// `capture_chooser`.
    pub fn v4l2_only(capture_chooser: CaptureChooser) -> Self {
        let mut choice = Self {
            hwdec: Hwdec::V4l2,
            ..Self::default()
        };
        choice.capture.chooser = Some(capture_chooser);
        choice
    }
}

/// The decoder a stream would get, before any is opened.
#[derive(Debug)]
pub enum Plan {
    V4l2 {
        entry: &'static CodecEntry,
        info: Box<DecoderInfo>,
    },
    /// Software decoding, and why not V4L2.
    Software(String),
}

/// The last walk of `/dev` for decoders, kept for the process: the media
/// nodes it saw (path and device number) and what it found.
struct Walked {
    media: Vec<(PathBuf, u64)>,
    found: Arc<Discovery>,
}

static DISCOVERED: Mutex<Option<Walked>> = Mutex::new(None);

/// The V4L2 decoders of the machine ([`discovery::discover`]), walked once
/// per process and kept while `/dev` lists the same media nodes (a device
/// plugged in or removed changes the list) and the walk had no problem (a
/// busy node is asked again); [`forget_discovered`] drops them. Every file
/// opened and every reopen for a new CAPTURE format asks.
fn discovered() -> Arc<Discovery> {
    let media: Vec<(PathBuf, u64)> = discovery::media_nodes(Path::new("/dev"))
        .into_iter()
        .map(|path| {
            let rdev = std::fs::metadata(&path).map_or(0, |m| m.rdev());
            (path, rdev)
        })
        .collect();
    let mut cache = DISCOVERED.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(walked) = cache.as_ref().filter(|w| w.media == media) {
        return walked.found.clone();
    }
    let found = Arc::new(discovery::discover());
    *cache = found.problems.is_empty().then(|| Walked {
        media,
        found: found.clone(),
    });
    found
}

/// Drops what [`discovered`] keeps: a decoder it found failed to open (the
/// device went away, or changed), so the next open walks `/dev` again.
fn forget_discovered() {
    *DISCOVERED.lock().unwrap_or_else(PoisonError::into_inner) = None;
}

/// Finds the V4L2 decoder for the stream, or says why there is none.
pub fn plan(stream: &VideoStreamInfo, choice: &DecoderChoice) -> Plan {
    if choice.hwdec == Hwdec::No {
        return Plan::Software("--hwdec=no".into());
    }
    let Some(entry) = registry::lookup(stream.codec) else {
        return Plan::Software(format!("reel has no V4L2 path for {} yet", stream.codec));
    };
    let needs = (entry.requirements)(stream);
    let found = match &choice.device {
        Some(path) => discovery::probe_device(path).and_then(|info| {
            info.check(&needs)?;
            Ok(info)
        }),
        None => discovered().choose(&needs).cloned(),
    };
    match found {
        Ok(info) => Plan::V4l2 {
            entry,
            info: Box::new(info),
        },
        Err(e) => Plan::Software(e.to_string()),
    }
}

/// Opens the decoder for `stream`: V4L2 when `plan` finds one and it
/// opens, software otherwise (an error with `--hwdec=v4l2`).
pub fn open(
    stream: &VideoStreamInfo,
    choice: &DecoderChoice,
    sw: SwOptions,
) -> Result<Box<dyn FrameDecoder>> {
    let reason = match plan(stream, choice) {
        Plan::V4l2 { entry, info } => {
            match V4l2Decoder::open(entry, &info, stream, choice.capture.clone()) {
                Ok(decoder) => {
                    info!(
                        device = %info.video_node.display(),
                        driver = %info.driver,
                        "decoder: V4L2 stateless"
                    );
                    return Ok(Box::new(decoder));
                }
                Err(e) => {
                    // The device found may be gone or changed: look again next time.
                    forget_discovered();
                    e.to_string()
                }
            }
        }
        Plan::Software(reason) => reason,
    };
    if choice.hwdec == Hwdec::V4l2 {
        bail!("--hwdec=v4l2: no V4L2 decoding for this file: {reason}");
    }
    if choice.hwdec == Hwdec::Auto {
        info!("decoder: software, not V4L2: {reason}");
    }
    if stream.codec == Codec::Fwht {
        return Ok(Box::new(FwhtDecoder::new()));
    }
    let decoder =
        SwDecoder::new(stream, sw).with_context(|| format!("cannot decode {}", stream.codec))?;
    Ok(Box::new(decoder))
}
