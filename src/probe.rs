//! `reel probe`: what this machine offers reel — V4L2 stateless decoders,
//! software decoders, the compositor's formats — and, for a file, the path
//! it would take.

use std::path::Path;

use anyhow::Result;

use crate::display::{Display, WindowOptions};
use crate::media::{Codec, Demuxer};
use crate::v4l2::topology;

/// Prints the report on stdout. Returns problems that did not stop it.
pub fn run(file: Option<&Path>) -> Result<Vec<String>> {
    let mut problems = Vec::new();

    println!("V4L2 stateless decoders:");
    let mut media_nodes: Vec<_> = std::fs::read_dir("/dev")
        .map(|dir| {
            dir.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with("media"))
                })
                .collect()
        })
        .unwrap_or_default();
    media_nodes.sort();
    let mut decoders = 0;
    for node in &media_nodes {
        match topology::read_topology(node) {
            Ok(topology) => {
                for decoder in topology.decoders() {
                    decoders += 1;
                    let (major, minor) = decoder.devnode;
                    let video = topology::devnode_path(major, minor)
                        .map(|p| p.display().to_string())
                        .unwrap_or_else(|| format!("char {major}:{minor}"));
                    println!(
                        "  {video} ({}, driver {}, entity {}, media {})",
                        topology.model,
                        topology.driver,
                        decoder.entity,
                        node.display()
                    );
                }
            }
            Err(e) => problems.push(e.to_string()),
        }
    }
    if decoders == 0 {
        println!("  none found ({} media devices)", media_nodes.len());
    }

    println!("Software decoders (libavcodec):");
    for codec in Codec::ALL {
        match crate::sw::decoder_name(codec) {
            Some(name) => println!("  {codec}: {name}"),
            None => println!("  {codec}: none"),
        }
    }

    println!("Compositor:");
    match Display::connect(&WindowOptions {
        title: "reel probe".into(),
        app_id: "reel".into(),
        ..WindowOptions::default()
    }) {
        Ok(display) => {
            let formats = display.advertised_formats();
            println!("  dmabuf: {} format/modifier pairs", formats.len());
            let mut pairs: Vec<_> = formats.pairs().collect();
            pairs.sort();
            for (fourcc, modifier) in pairs {
                let name = drm_fourcc::DrmFourcc::try_from(fourcc)
                    .map(|f| f.to_string())
                    .unwrap_or_else(|_| format!("{fourcc:#010x}"));
                println!(
                    "    {name} {}",
                    crate::display::formats::modifier_name(modifier)
                );
            }
        }
        Err(e) => println!("  not available: {e}"),
    }

    if let Some(path) = file {
        println!("File {}:", path.display());
        let demuxer = Demuxer::open(path)?;
        let stream = demuxer.stream();
        println!(
            "  {} {}x{}, {}-bit, time base {}/{}",
            stream.codec,
            stream.width,
            stream.height,
            stream.bit_depth,
            stream.time_base.0,
            stream.time_base.1
        );
        println!(
            "  would decode with: software ({})",
            crate::sw::decoder_name(stream.codec).unwrap_or_else(|| "none".into())
        );
    }
    Ok(problems)
}
