//! `reel probe`: what this machine offers reel — V4L2 stateless decoders,
//! software decoders, the compositor's formats — and, for a file, the path
//! it would take.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

use anyhow::Result;

use crate::display::dmabuf_formats::{device_name, AdvertisedFormats, Feedback};
use crate::display::{CompositorFormats, Display, WindowOptions};
use crate::fourcc::{fourcc_text, fourcc_text_distinct, modifier_name};
use crate::media::{Codec, Demuxer};
use crate::negotiation::{copy_target, CopyTarget};
use crate::player::decoder_choice::{self, DecoderChoice, Plan};
use crate::player::negotiator::Negotiator;
use crate::player::pipeline::{Pipeline, PipelineOptions};
use crate::v4l2::discovery::{self, DecoderInfo};
use crate::v4l2::registry;

/// Prints the report on stdout. Returns problems that did not stop it.
pub fn run(file: Option<&Path>) -> Result<Vec<String>> {
    let mut problems = Vec::new();
    let text = report(file, &mut problems)?;
    // A closed pipe (`reel probe | head`) is not an error worth a message.
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => return Err(e.into()),
        _ => {}
    }
    Ok(problems)
}

fn report(file: Option<&Path>, problems: &mut Vec<String>) -> Result<String> {
    let mut out = String::new();
    v4l2_section(&mut out, problems);

    let _ = writeln!(out, "Software decoders (libavcodec):");
    for codec in Codec::ALL {
        let name = crate::sw::decoder_name(codec).unwrap_or_else(|| "none".into());
        let _ = writeln!(out, "  {codec}: {name}");
    }

    let _ = writeln!(out, "Compositor:");
    let display = Display::connect(&WindowOptions {
        title: "reel probe".into(),
        app_id: "reel".into(),
        ..WindowOptions::default()
    });
    // What the compositor takes, as the negotiation reads it.
    let compositor =
        match &display {
            Ok(display) => {
                let version = display.dmabuf_version();
                match display.dmabuf_feedback() {
                    Some(feedback) => feedback_section(&mut out, version, feedback),
                    None => formats_section(&mut out, version, display.advertised_formats()),
                }
                Some(display.compositor_formats().unwrap_or_else(|_| {
                    CompositorFormats::V3(display.advertised_formats().clone())
                }))
            }
            Err(e) => {
                let _ = writeln!(out, "  not available: {e}");
                None
            }
        };

    audio_section(&mut out);

    if let Some(path) = file {
        let demuxer = Demuxer::open(path)?;
        let stream = demuxer.stream();
        let _ = writeln!(out, "File {}:", path.display());
        let _ = writeln!(
            out,
            "  {} {}x{}, {}-bit, {}",
            stream.codec,
            stream.width,
            stream.height,
            stream.bit_depth,
            stream
                .pixel_format
                .as_deref()
                .unwrap_or("unknown pixel format")
        );
        let presentation_by_v4l2 = match decoder_choice::plan(stream, &DecoderChoice::default()) {
            Plan::V4l2 { entry, info } => {
                let mode = (entry.open)(&info, stream)
                    .map(|setup| setup.codec.describe())
                    .unwrap_or_else(|e| e.to_string());
                let _ = writeln!(
                    out,
                    "  decoder: V4L2 stateless {} ({}; {mode})",
                    info.video_node.display(),
                    info.driver
                );
                true
            }
            Plan::Software(reason) => {
                let decoder =
                    crate::sw::decoder_name(stream.codec).unwrap_or_else(|| "none".into());
                let _ = writeln!(out, "  decoder: software ({decoder}), not V4L2: {reason}");
                false
            }
        };
        match (&display, compositor) {
            (Ok(display), Some(_)) if presentation_by_v4l2 => {
                let _ = writeln!(out, "  presentation: {}", v4l2_presentation(path, display));
            }
            (_, Some(compositor)) => {
                let path = match crate::sw::display_format_for(stream) {
                    Some(layout) => format!(
                        "copy: {layout} -> {} (one CPU copy per frame)",
                        copy_target(layout, &compositor)
                    ),
                    None => format!("{} (converted by the CPU)", CopyTarget::Shm),
                };
                let _ = writeln!(out, "  presentation: {path}");
            }
            _ => {}
        }
    }
    Ok(out)
}

/// The sound outputs `--audio-device` can name, the default first.
fn audio_section(out: &mut String) {
    let _ = writeln!(out, "Audio outputs (ALSA; --audio-device NAME):");
    match crate::audio::output::list() {
        Ok(names) if names.is_empty() => {
            let _ = writeln!(out, "  none: video plays without sound");
        }
        Ok(names) => {
            for (name, default) in names {
                let default = if default { " (default)" } else { "" };
                let _ = writeln!(out, "  {name}{default}");
            }
        }
        Err(e) => {
            let _ = writeln!(out, "  not available: {e}");
        }
    }
}

/// The negotiation a V4L2 decode of `path` really makes with this
/// compositor: the decoder is opened and decodes the first frame (the
/// CAPTURE formats are known only once the sequence is set).
fn v4l2_presentation(path: &Path, display: &Display) -> String {
    let formats = match display.compositor_formats() {
        Ok(formats) => formats,
        Err(e) => return format!("unknown: the compositor's feedback is unusable: {e}"),
    };
    let negotiator = Negotiator::new(formats);
    let options = PipelineOptions {
        for_display: true,
        threads: 1,
        decoder: DecoderChoice::v4l2_only(negotiator.chooser()),
    };
    let first = Pipeline::open(path, &options).and_then(|mut p| p.next_frame());
    match (first, negotiator.current()) {
        (Ok(Some(_)), Some(outcome)) => outcome.to_string(),
        (Ok(_), _) => "unknown: the V4L2 decoder gave no frame".to_string(),
        (Err(e), _) => format!(
            "unknown: V4L2 decoding failed: {}",
            crate::message::causes(&e)
        ),
    }
}

fn v4l2_section(out: &mut String, problems: &mut Vec<String>) {
    let _ = writeln!(out, "V4L2 stateless decoders:");
    let found = discovery::discover();
    if found.decoders.is_empty() {
        let _ = writeln!(out, "  no V4L2 stateless decoder");
    }
    for decoder in &found.decoders {
        for line in decoder.to_string().lines() {
            let _ = writeln!(out, "  {line}");
        }
        codec_menu_lines(out, decoder);
    }
    for problem in &found.problems {
        let _ = writeln!(out, "  skipped: {problem}");
    }
    problems.extend(found.problems.iter().map(ToString::to_string));
}

/// For each coded format of the decoder that reel has a V4L2 path for,
/// that codec and the menus that say how the driver decodes it (decode
/// mode, start code, profiles, levels).
fn codec_menu_lines(out: &mut String, decoder: &DecoderInfo) {
    for format in &decoder.coded_formats {
        let Some(entry) = registry::by_coded_format(format.fourcc) else {
            continue;
        };
        let _ = writeln!(
            out,
            "    reel decodes {} here ({})",
            entry.codec,
            fourcc_text(format.fourcc)
        );
        for (id, label) in entry.menus {
            if let Some(menu) = decoder.menu(*id) {
                let names: Vec<String> =
                    menu.items.iter().map(|(v, n)| format!("{v}={n}")).collect();
                let _ = writeln!(out, "    {label}: {}", names.join(", "));
            }
        }
    }
}

/// v4+: the feedback in effect, tranche by tranche in preference order.
fn feedback_section(out: &mut String, version: Option<u32>, feedback: &Feedback) {
    let _ = writeln!(
        out,
        "  linux-dmabuf v{}: main device {}, {} tranches",
        version.unwrap_or(0),
        feedback.main_device.map_or("none".into(), device_name),
        feedback.tranches.len()
    );
    for (index, tranche) in feedback.tranches.iter().enumerate() {
        let pairs =
            AdvertisedFormats::from_feedback(&feedback.table, std::slice::from_ref(tranche));
        let _ = writeln!(
            out,
            "  tranche {index}: target device {}{}",
            tranche.target_device.map_or("none".into(), device_name),
            if tranche.scanout { ", scanout" } else { "" }
        );
        match pairs {
            Ok(pairs) => pairs_lines(out, &pairs),
            Err(e) => {
                let _ = writeln!(out, "    unusable: {e}");
            }
        }
    }
}

fn formats_section(out: &mut String, version: Option<u32>, formats: &AdvertisedFormats) {
    let _ = writeln!(
        out,
        "  linux-dmabuf v{}: {} format/modifier pairs",
        version.unwrap_or(0),
        formats.len()
    );
    pairs_lines(out, formats);
}

fn pairs_lines(out: &mut String, formats: &AdvertisedFormats) {
    let mut by_format: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (fourcc, modifier) in formats.pairs() {
        let name = drm_fourcc::DrmFourcc::try_from(fourcc)
            .map(|f| f.to_string())
            .unwrap_or_else(|_| fourcc_text_distinct(fourcc));
        by_format
            .entry(name)
            .or_default()
            .push(modifier_name(modifier));
    }
    for (name, mut modifiers) in by_format {
        modifiers.sort();
        let _ = writeln!(out, "    {name}: {}", modifiers.join(", "));
    }
}
