//! Bitmap subtitles for the tests: lines of text drawn by FFmpeg's
//! `drawtext` and written as a Blu-ray PGS stream (`.sup`: presentation,
//! window, palette, object and end segments per display set, the object
//! run-length coded), which FFmpeg then re-encodes as DVB and DVD
//! subtitles (its encoders take pictures, not text). FFmpeg has no PGS
//! encoder; the format is in the Blu-ray specification and FFmpeg's
//! `pgssubdec.c` reads what is written here.

use std::path::Path;
use std::process::Command;

/// A text line's picture size.
const WIDTH: u16 = 480;
const HEIGHT: u16 = 64;

/// One cue: `text` from `start` to `end` seconds.
pub struct Cue<'a> {
    pub text: &'a str,
    pub start: f64,
    pub end: f64,
}

/// Writes `cues` as a PGS stream for a `canvas`-sized video to `path`,
/// each line centred near the bottom in white on transparent.
pub fn write(path: &Path, canvas: (u16, u16), cues: &[Cue<'_>]) {
    let x = canvas.0.saturating_sub(WIDTH) / 2;
    let y = canvas.1.saturating_sub(HEIGHT + HEIGHT / 4);
    let mut out = Vec::new();
    for (n, cue) in cues.iter().enumerate() {
        let number = (n * 2) as u16;
        let shown = palette_indices(&text_picture(cue.text));
        out.extend(display_set(
            pts(cue.start),
            canvas,
            number,
            (x, y),
            Some(&shown),
        ));
        out.extend(display_set(pts(cue.end), canvas, number + 1, (x, y), None));
    }
    std::fs::write(path, out).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

fn pts(seconds: f64) -> u32 {
    (seconds * 90_000.0).round() as u32
}

/// `text` in white on black, one grey byte per pixel, from FFmpeg's
/// `drawtext`.
fn text_picture(text: &str) -> Vec<u8> {
    let filter =
        format!("drawtext=text='{text}':fontcolor=white:fontsize=40:x=(w-tw)/2:y=(h-th)/2");
    let output = Command::new("ffmpeg")
        .args(["-nostdin", "-v", "error", "-f", "lavfi", "-i"])
        .arg(format!("color=black:size={WIDTH}x{HEIGHT}"))
        .args(["-vf", &filter, "-frames:v", "1", "-pix_fmt", "gray"])
        .args(["-f", "rawvideo", "-"])
        .output()
        .expect("cannot run ffmpeg");
    assert!(output.status.success(), "drawtext: {output:?}");
    assert_eq!(
        output.stdout.len(),
        usize::from(WIDTH) * usize::from(HEIGHT)
    );
    output.stdout
}

/// Grey levels as indices 0 (transparent) to 3 (opaque white).
fn palette_indices(grey: &[u8]) -> Vec<u8> {
    grey.iter()
        .map(|&g| ((u16::from(g) + 32) / 64).min(3) as u8)
        .collect()
}

/// One segment: "PG", pts, dts, type, size, body.
fn segment(pts: u32, kind: u8, body: &[u8]) -> Vec<u8> {
    let mut out = b"PG".to_vec();
    out.extend(pts.to_be_bytes());
    out.extend(0u32.to_be_bytes());
    out.push(kind);
    out.extend((body.len() as u16).to_be_bytes());
    out.extend(body);
    out
}

/// A display set at `pts`: showing `picture` at `at`, or (None) clearing.
fn display_set(
    pts: u32,
    canvas: (u16, u16),
    number: u16,
    at: (u16, u16),
    picture: Option<&[u8]>,
) -> Vec<u8> {
    // Presentation composition: size, frame rate code, number, state
    // (0x80 epoch start, 0 normal), no palette update, palette 0, objects.
    let mut pcs = Vec::new();
    pcs.extend(canvas.0.to_be_bytes());
    pcs.extend(canvas.1.to_be_bytes());
    pcs.push(0x10);
    pcs.extend(number.to_be_bytes());
    pcs.push(if picture.is_some() { 0x80 } else { 0x00 });
    pcs.extend([0, 0, u8::from(picture.is_some())]);
    if picture.is_some() {
        // Object 0 in window 0, not cropped, at `at`.
        pcs.extend([0, 0, 0, 0]);
        pcs.extend(at.0.to_be_bytes());
        pcs.extend(at.1.to_be_bytes());
    }
    let mut out = segment(pts, 0x16, &pcs);
    let mut wds = vec![1, 0];
    for v in [at.0, at.1, WIDTH, HEIGHT] {
        wds.extend(v.to_be_bytes());
    }
    out.extend(segment(pts, 0x17, &wds));
    if let Some(picture) = picture {
        // Palette 0, version 0: entries 1-3 white (Y 235, Cr Cb 128) at
        // a third, two thirds and full opacity.
        let mut pds = vec![0, 0];
        for index in 1..=3u8 {
            pds.extend([index, 235, 128, 128, index * 85]);
        }
        out.extend(segment(pts, 0x14, &pds));
        let mut object = Vec::new();
        object.extend(WIDTH.to_be_bytes());
        object.extend(HEIGHT.to_be_bytes());
        object.extend(run_lengths(picture));
        // Object 0, version 0, first and last in sequence, data length.
        let mut ods = vec![0, 0, 0, 0xc0];
        ods.extend(&(object.len() as u32).to_be_bytes()[1..]);
        ods.extend(object);
        out.extend(segment(pts, 0x15, &ods));
    }
    out.extend(segment(pts, 0x80, &[]));
    out
}

/// PGS run-length coding, line by line: a lone non-zero index as itself,
/// runs as 0 then flags (0x40: 14-bit length, 0x80: an index follows),
/// each line ended by 0 0.
fn run_lengths(picture: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for line in picture.chunks(usize::from(WIDTH)) {
        let mut x = 0;
        while x < line.len() {
            let index = line[x];
            let run = line[x..]
                .iter()
                .take(16_383)
                .take_while(|&&i| i == index)
                .count();
            if index != 0 && run <= 2 {
                out.extend(std::iter::repeat_n(index, run));
                x += run;
                continue;
            }
            let colour = if index == 0 { 0 } else { 0x80 };
            out.push(0);
            if run >= 64 {
                out.extend([colour | 0x40 | (run >> 8) as u8, (run & 0xff) as u8]);
            } else {
                out.push(colour | run as u8);
            }
            if index != 0 {
                out.push(index);
            }
            x += run;
        }
        out.extend([0, 0]);
    }
    out
}
