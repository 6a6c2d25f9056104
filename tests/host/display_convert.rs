//! The wl_shm path's YUV -> XRGB8888 conversion against FFmpeg's (swscale,
//! BT.601 limited range, accurate rounding) for every CPU pixel format.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use reel::display::frame_to_xrgb;
use reel::frame::{CpuPlanes, DecoderKind, Frame, FrameStorage, PixelFormat};

const W: u32 = 128;
const H: u32 = 64;
/// Chroma is constant over BLOCK x BLOCK squares, so every format's chroma
/// subsampling and any upsampling filter agree at block centres.
const BLOCK: u32 = 16;

struct Packed(Vec<Vec<u8>>, Vec<usize>);

impl CpuPlanes for Packed {
    fn plane(&self, plane: usize) -> &[u8] {
        &self.0[plane]
    }
    fn stride(&self, plane: usize) -> usize {
        self.1[plane]
    }
}

/// A deterministic pseudo-random Y'CbCr per block (8-bit nominal range
/// plus some out-of-range values to exercise clamping).
fn block_colour(bx: u32, by: u32) -> [u16; 3] {
    let mut h = (bx * 7919 + by * 104729 + 12345) as u64;
    let mut next = |lo: u64, hi: u64| {
        h = h
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (lo + (h >> 33) % (hi - lo + 1)) as u16
    };
    [next(8, 245), next(4, 252), next(4, 252)]
}

/// Builds the frame in `format` and the same pixels packed as FFmpeg reads
/// them (`-pix_fmt format.av_name()`).
fn make_frame(format: PixelFormat) -> (Frame, Vec<u8>) {
    let ten = format.bit_depth() == 10;
    let sample = |v: u16, extra: u16| -> u16 {
        match format {
            PixelFormat::Yuv420p10 => (v << 2) | extra,
            PixelFormat::P010 => ((v << 2) | extra) << 6,
            _ => v,
        }
    };
    let put = |out: &mut Vec<u8>, v: u16| {
        if ten {
            out.extend_from_slice(&v.to_le_bytes());
        } else {
            out.push(v as u8);
        }
    };
    let colour = |x: u32, y: u32| block_colour(x / BLOCK, y / BLOCK);
    let mut planes = Vec::new();
    let mut luma = Vec::new();
    for y in 0..H {
        for x in 0..W {
            put(&mut luma, sample(colour(x, y)[0], (x + y) as u16 % 4));
        }
    }
    planes.push(luma);
    let (sx, sy) = match format {
        PixelFormat::Yuv444 => (1, 1),
        PixelFormat::Yuv422 => (2, 1),
        _ => (2, 2),
    };
    match format {
        PixelFormat::Gray8 => {}
        PixelFormat::Nv12 | PixelFormat::P010 => {
            let mut uv = Vec::new();
            for y in 0..H / 2 {
                for x in 0..W / 2 {
                    let c = colour(x * 2, y * 2);
                    put(&mut uv, sample(c[1], 1));
                    put(&mut uv, sample(c[2], 2));
                }
            }
            planes.push(uv);
        }
        _ => {
            for comp in 1..3 {
                let mut p = Vec::new();
                for y in 0..H / sy {
                    for x in 0..W / sx {
                        put(&mut p, sample(colour(x * sx, y * sy)[comp], 3));
                    }
                }
                planes.push(p);
            }
        }
    }
    let packed: Vec<u8> = planes.concat();
    let strides = (0..planes.len())
        .map(|p| format.plane_extent(p, W, H).0)
        .collect();
    let frame = Frame {
        pts: Duration::ZERO,
        pts_raw: 0,
        duration: Duration::ZERO,
        duration_raw: 0,
        width: W,
        height: H,
        format,
        sample_aspect: (1, 1),
        decoder: DecoderKind::Software,
        epoch: 0,
        storage: FrameStorage::Cpu(Box::new(Packed(planes, strides))),
    };
    (frame, packed)
}

fn ffmpeg_rgb24(format: PixelFormat, raw: &[u8]) -> Vec<u8> {
    // FFmpeg 5.1 converts `gray` as full range whatever in_range says; a
    // limited-range monochrome picture is luma with neutral chroma, so give
    // it exactly that.
    let (pix_fmt, raw) = if format == PixelFormat::Gray8 {
        let mut yuv = raw.to_vec();
        yuv.resize(raw.len() * 3, 128);
        ("yuv444p", yuv)
    } else {
        (format.av_name(), raw.to_vec())
    };
    let mut child = Command::new("ffmpeg")
        .args(["-v", "error", "-f", "rawvideo", "-pix_fmt", pix_fmt])
        .args(["-s", &format!("{W}x{H}"), "-i", "pipe:"])
        .args(["-vf", "scale=in_range=tv:in_color_matrix=bt601:flags=accurate_rnd+full_chroma_int,format=rgb24"])
        .args(["-f", "rawvideo", "pipe:"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("run ffmpeg (the oracle)");
    let mut stdin = child.stdin.take().expect("ffmpeg stdin");
    let feeder = std::thread::spawn(move || stdin.write_all(&raw));
    let out = child.wait_with_output().expect("ffmpeg output");
    feeder.join().expect("feeder").expect("feed ffmpeg");
    assert!(out.status.success(), "ffmpeg failed for {format}");
    assert_eq!(out.stdout.len(), (W * H * 3) as usize);
    out.stdout
}

fn check(format: PixelFormat) {
    let (frame, raw) = make_frame(format);
    let want = ffmpeg_rgb24(format, &raw);
    let stride = W as usize * 4 + 64;
    let mut got = vec![0u8; stride * H as usize];
    frame_to_xrgb(&frame, &mut got, stride).expect("convert");
    let mut worst = 0;
    for by in 0..H / BLOCK {
        for bx in 0..W / BLOCK {
            // Block centre, where chroma is flat in every format.
            let (x, y) = (
                (bx * BLOCK + BLOCK / 2) as usize,
                (by * BLOCK + BLOCK / 2) as usize,
            );
            let g = &got[y * stride + x * 4..][..4];
            let w = &want[(y * W as usize + x) * 3..][..3];
            let ours = [g[2], g[1], g[0]];
            for c in 0..3 {
                worst = worst.max(ours[c].abs_diff(w[c]));
            }
            assert!(
                ours.iter().zip(w).all(|(a, b)| a.abs_diff(*b) <= 1),
                "{format} at ({x}, {y}): ours {ours:?}, ffmpeg {w:?}"
            );
            assert_eq!(g[3], 0xff, "X byte");
        }
    }
    eprintln!("{format}: worst difference from ffmpeg {worst}");
}

#[test]
fn yuv420_matches_ffmpeg() {
    check(PixelFormat::Yuv420);
}

#[test]
fn yuv422_matches_ffmpeg() {
    check(PixelFormat::Yuv422);
}

#[test]
fn yuv444_matches_ffmpeg() {
    check(PixelFormat::Yuv444);
}

#[test]
fn nv12_matches_ffmpeg() {
    check(PixelFormat::Nv12);
}

#[test]
fn yuv420p10_matches_ffmpeg() {
    check(PixelFormat::Yuv420p10);
}

#[test]
fn p010_matches_ffmpeg() {
    check(PixelFormat::P010);
}

#[test]
fn gray8_matches_ffmpeg() {
    check(PixelFormat::Gray8);
}
