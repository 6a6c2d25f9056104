//! Setting a session up in the order the stateless decoder interface
//! asks: OUTPUT format, sequence controls, CAPTURE format (chosen among the
//! formats the driver offers once the sequence is known), then buffers.

use std::fs::File;

use tracing::{debug, info, warn};
use v4l2r::ioctl;
use v4l2r::{Format, PlaneLayout, QueueType};

use super::buffers::{self, CaptureBuffer, OutputBuffer};
use super::config::{OfferedCapture, SessionConfig};
use super::device::set_controls;
use super::error::SessionError;
use super::layout::CaptureLayout;
use crate::fourcc::fourcc_text;
use crate::v4l2::detile::detiled_format;
use crate::v4l2::formats::{capture_format, CAPTURE_FORMATS};

/// OUTPUT format, sequence controls, CAPTURE format, then buffers (the
/// stateless decoder interface's order).
pub(super) fn configure(
    video: &mut File,
    output_queue: QueueType,
    capture_queue: QueueType,
    config: &SessionConfig,
) -> Result<(CaptureLayout, Vec<OutputBuffer>, Vec<CaptureBuffer>), SessionError> {
    // 1. OUTPUT format: the coded format and size.
    let wanted = Format {
        width: config.width,
        height: config.height,
        pixelformat: config.coded_format.into(),
        plane_fmt: vec![PlaneLayout {
            sizeimage: config.bitstream_buffer_size,
            bytesperline: 0,
        }],
    };
    let got: Format = ioctl::s_fmt(video, (output_queue, &wanted)).map_err(|e| match e {
        ioctl::SFmtError::DeviceBusy => SessionError::busy(&config.video_node),
        e => SessionError::ioctl("VIDIOC_S_FMT(OUTPUT)", e.into()),
    })?;
    if u32::from(got.pixelformat) != config.coded_format {
        return Err(SessionError::CodedFormat(fourcc_text(config.coded_format)));
    }

    // 2. Sequence-level controls, which decide the CAPTURE formats.
    set_controls(video, None, &config.initial_controls)?;

    // 3. CAPTURE format.
    let (layout, cpu_reads) = choose_capture_format(video, capture_queue, config)?;
    info!(
        "{}: OUTPUT {} {}x{}, CAPTURE {} {}x{} planes {:?}",
        config.video_node.display(),
        fourcc_text(config.coded_format),
        got.width,
        got.height,
        layout.format.name,
        layout.coded_width,
        layout.coded_height,
        layout.planes
    );

    // 4. Buffers, read back from the driver.
    let output = buffers::allocate_output(video, output_queue, config.output_buffers.max(1))?;
    let capture = buffers::allocate_capture(
        video,
        capture_queue,
        config.capture_buffers.max(1),
        cpu_reads,
    )?;
    debug!(
        "buffers: {} OUTPUT, {} CAPTURE",
        output.len(),
        capture.len()
    );
    if capture.len() < config.min_capture_buffers as usize {
        // Out of CAPTURE memory (a CMA pool, on boards): not even the
        // codec's pictures fit.
        return Err(SessionError::OutOfCaptureMemory {
            granted: capture.len() as u32,
            needed: config.min_capture_buffers,
        });
    }
    if capture.len() < config.capture_buffers as usize {
        // Fewer than the DPB plus the frames held downstream, even after
        // CREATE_BUFS asked for the rest: fewer frames can be held
        // downstream at once.
        warn!(
            granted = capture.len(),
            wanted = config.capture_buffers,
            "the driver granted fewer CAPTURE buffers than needed"
        );
    }
    if output.is_empty() || capture.is_empty() {
        return Err(SessionError::Buffers {
            queue: if output.is_empty() {
                output_queue
            } else {
                capture_queue
            },
            reason: "the driver granted no buffers".into(),
        });
    }
    Ok((layout, output, capture))
}

/// The CAPTURE layout G_FMT reports; `None` for a format reel does not
/// know.
pub(super) fn read_capture_layout(
    video: &File,
    queue: QueueType,
) -> Result<Option<CaptureLayout>, SessionError> {
    let format: Format = ioctl::g_fmt(video, queue)
        .map_err(|e| SessionError::ioctl("VIDIOC_G_FMT(CAPTURE)", e.into()))?;
    Ok(
        capture_format(format.pixelformat.into()).map(|f| CaptureLayout {
            format: f,
            coded_width: format.width,
            coded_height: format.height,
            planes: format
                .plane_fmt
                .iter()
                .map(|p| (p.bytesperline, p.sizeimage))
                .collect(),
        }),
    )
}

/// The first plane's bytesperline the driver would give `fourcc` in place
/// of `current`'s format (TRY_FMT changes nothing); 0 if it says nothing.
fn try_bytes_per_line(video: &File, queue: QueueType, current: &Format, fourcc: u32) -> u32 {
    let mut format = current.clone();
    format.pixelformat = fourcc.into();
    ioctl::try_fmt::<_, Format>(video, (queue, &format))
        .ok()
        .and_then(|f| f.plane_fmt.first().map(|p| p.bytesperline))
        .unwrap_or(0)
}

/// Keeps the driver's CAPTURE format when reel reads it and nothing else is
/// preferred; otherwise picks the first offered format by preference.
fn choose_capture_format(
    video: &mut File,
    queue: QueueType,
    config: &SessionConfig,
) -> Result<(CaptureLayout, bool), SessionError> {
    let offered: Vec<u32> = ioctl::FormatIterator::new(video, queue)
        .map(|d| d.pixelformat.into())
        .collect();
    let chosen;
    let mut cpu_reads = config.capture.cpu_reads_pictures;
    let preference: &[u32] = match &config.capture.chooser {
        Some(chooser) => {
            let current: Option<Format> = ioctl::g_fmt(video, queue).ok();
            let offered: Vec<OfferedCapture> = offered
                .iter()
                .map(|&fourcc| OfferedCapture {
                    fourcc,
                    bytes_per_line: current
                        .as_ref()
                        .map_or(0, |f| try_bytes_per_line(video, queue, f, fourcc)),
                })
                .collect();
            chosen = (chooser.0)(&offered, config.bit_depth);
            cpu_reads = chosen.cpu_reads;
            &chosen.order
        }
        None => &config.capture.preference,
    };
    let current = read_capture_layout(video, queue)?;
    if let Some(layout) = &current {
        let preferred_first = preference.iter().find(|p| offered.contains(p));
        let fits = layout.coded_width >= config.width && layout.coded_height >= config.height;
        if fits
            && layout.format.cpu.is_some()
            && preferred_first.is_none_or(|p| *p == layout.format.v4l2)
        {
            return Ok((layout.clone(), cpu_reads));
        }
    }
    // Linear layouts first, then those the CPU reads by detiling.
    let linear = CAPTURE_FORMATS.iter().filter(|f| f.cpu.is_some());
    let detiled = CAPTURE_FORMATS
        .iter()
        .filter(|f| f.cpu.is_none() && detiled_format(f.v4l2).is_some());
    let table_order = linear.chain(detiled).map(|f| f.v4l2);
    let candidate = preference
        .iter()
        .copied()
        .chain(table_order)
        .find(|f| offered.contains(f))
        .ok_or_else(|| {
            SessionError::NoCaptureFormat(
                offered
                    .iter()
                    .map(|f| fourcc_text(*f))
                    .collect::<Vec<_>>()
                    .join(" "),
            )
        })?;
    let mut format: Format = ioctl::g_fmt(video, queue)
        .map_err(|e| SessionError::ioctl("VIDIOC_G_FMT(CAPTURE)", e.into()))?;
    format.pixelformat = candidate.into();
    // Most drivers size CAPTURE from the OUTPUT format; vicodec keeps its
    // default (1280x720) and refuses larger pictures' controls.
    if format.width < config.width || format.height < config.height {
        format.width = format.width.max(config.width);
        format.height = format.height.max(config.height);
        for plane in &mut format.plane_fmt {
            *plane = PlaneLayout {
                sizeimage: 0,
                bytesperline: 0,
            };
        }
    }
    let _: Format = ioctl::s_fmt(video, (queue, &format))
        .map_err(|e| SessionError::ioctl("VIDIOC_S_FMT(CAPTURE)", e.into()))?;
    let layout = read_capture_layout(video, queue)?
        .ok_or_else(|| SessionError::NoCaptureFormat(fourcc_text(candidate)))?;
    Ok((layout, cpu_reads))
}
