//! reel's detiler against GStreamer's: videoconvert writes one random
//! picture in a tiled or packed layout, and converts that same buffer back
//! to linear NV12 / P010 (GStreamer's own unpacking is the oracle). reel
//! detiles the first file and must match the second byte for byte.
//!
//! GStreamer names: NV12_4L4 = V4L2 NV12_4L4 (VT12), NV12_32L32 = ST12,
//! NV12_16L32S = MM21, NV12_10LE40 = NV15. Needs gst-launch-1.0 with
//! videoconvert (packaging/install-deps.sh installs it); fails if missing.

use std::path::Path;
use std::process::Command;

use reel::fourcc::fourcc;
use reel::frame::{CpuPlanes, PixelFormat};
use reel::v4l2::detile::{detile, TiledPicture};

/// No colour, chroma or dither processing: only the layout changes.
const VIDEOCONVERT: &str =
    "videoconvert dither=none chroma-mode=none matrix-mode=none primaries-mode=none";

/// Runs GStreamer once: a random I420 picture converted to `tiled`, saved,
/// and that buffer converted to `linear`, saved.
fn gst_pair(tiled: &str, linear: &str, (w, h): (u32, u32), dir: &Path) -> (Vec<u8>, Vec<u8>) {
    let a = dir.join(format!("{tiled}-{w}x{h}.raw"));
    let b = dir.join(format!("{tiled}-{w}x{h}-{linear}.raw"));
    let pipeline = format!(
        "videotestsrc num-buffers=1 pattern=snow ! video/x-raw,format=I420,width={w},height={h} \
         ! {VIDEOCONVERT} ! video/x-raw,format={tiled} ! tee name=t \
         t. ! queue ! filesink location={} \
         t. ! queue ! {VIDEOCONVERT} ! video/x-raw,format={linear} ! filesink location={}",
        a.display(),
        b.display()
    );
    let status = Command::new("gst-launch-1.0")
        .arg("-q")
        .args(pipeline.split_whitespace())
        .status()
        .expect("gst-launch-1.0 must be installed (packaging/install-deps.sh)");
    assert!(status.success(), "gst-launch-1.0 failed: {pipeline}");
    (std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap())
}

fn align(v: u32, to: u32) -> u32 {
    v.div_ceil(to) * to
}

/// GStreamer's linear NV12 / P010_10LE planes: rows of `stride` bytes (the
/// row size rounded up to 4), chroma after `align(h, 2)` luma rows.
fn gst_linear_rows(buffer: &[u8], format: PixelFormat, w: u32, h: u32) -> Vec<Vec<u8>> {
    let row_bytes = |p| format.plane_extent(p, w, h);
    let stride = align(row_bytes(0).0 as u32, 4) as usize;
    let chroma = stride * align(h, 2) as usize;
    let mut rows = Vec::new();
    for (p, base) in [(0, 0), (1, chroma)] {
        let (bytes, count) = row_bytes(p);
        for r in 0..count {
            rows.push(buffer[base + r * stride..][..bytes].to_vec());
        }
    }
    rows
}

fn detiled_rows(planes: &dyn CpuPlanes, format: PixelFormat, w: u32, h: u32) -> Vec<Vec<u8>> {
    let mut rows = Vec::new();
    for p in 0..2 {
        let (bytes, count) = format.plane_extent(p, w, h);
        for r in 0..count {
            rows.push(planes.plane(p)[r * planes.stride(p)..][..bytes].to_vec());
        }
    }
    rows
}

struct Case {
    gst: &'static str,
    v4l2: &'static [u8; 4],
    /// (bytesperline, expected buffer size, chroma memory-plane split) of
    /// GStreamer's buffer at `w` x `h`.
    layout: fn(u32, u32) -> (u32, usize, Option<usize>),
}

const CASES: [Case; 4] = [
    Case {
        gst: "NV12_4L4",
        v4l2: b"VT12",
        layout: |w, h| {
            let bpl = align(w, 4);
            let size = bpl * (align(h, 4) + align(h.div_ceil(2), 4));
            (bpl, size as usize, None)
        },
    },
    Case {
        gst: "NV12_32L32",
        v4l2: b"ST12",
        layout: |w, h| {
            let bpl = align(w, 32);
            let size = bpl * (align(h, 32) + align(h.div_ceil(2), 32));
            (bpl, size as usize, None)
        },
    },
    Case {
        gst: "NV12_16L32S",
        v4l2: b"MM21",
        // GStreamer gives the chroma plane as much room as the luma plane.
        layout: |w, h| {
            let bpl = align(w, 16);
            let luma = (bpl * align(h, 32)) as usize;
            (bpl, 2 * luma, Some(luma))
        },
    },
    Case {
        gst: "NV12_10LE40",
        v4l2: b"NV15",
        layout: |w, h| {
            let bpl = w.div_ceil(4) * 5;
            (bpl, (bpl * (h + h.div_ceil(2))) as usize, None)
        },
    },
];

#[test]
fn detiled_pictures_match_gstreamer() {
    let dir = std::env::temp_dir().join(format!("reel-detile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for case in &CASES {
        for (w, h) in [(100, 60), (130, 66)] {
            let ten_bit = case.gst.contains("10");
            let (format, linear) = if ten_bit {
                (PixelFormat::P010, "P010_10LE")
            } else {
                (PixelFormat::Nv12, "NV12")
            };
            let (tiled, reference) = gst_pair(case.gst, linear, (w, h), &dir);
            let (bpl, size, split) = (case.layout)(w, h);
            assert_eq!(tiled.len(), size, "{} {w}x{h}: GStreamer layout", case.gst);
            let planes: Vec<(&[u8], u32)> = match split {
                Some(at) => vec![(&tiled[..at], bpl), (&tiled[at..], bpl)],
                None => vec![(&tiled[..], bpl)],
            };
            let picture = TiledPicture {
                v4l2: fourcc(case.v4l2),
                coded_width: w,
                coded_height: h,
                planes: &planes,
            };
            let out = detile(&picture, w, h).unwrap_or_else(|e| panic!("{}: {e}", case.gst));
            assert_eq!(out.format, format);
            let ours = detiled_rows(&out, format, w, h);
            let theirs = gst_linear_rows(&reference, format, w, h);
            assert_eq!(ours.len(), theirs.len());
            for (r, (a, b)) in ours.iter().zip(&theirs).enumerate() {
                assert!(a == b, "{} {w}x{h}: row {r} differs", case.gst);
            }
            // The picture is random: a layout mistake cannot match by luck.
            let distinct: std::collections::HashSet<_> = ours[0].iter().collect();
            assert!(distinct.len() > 16, "{}: test picture too flat", case.gst);
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}
