//! FWHT end to end, in the QEMU guest with vicodec: reel's first
//! pixel-exact V4L2 test. Clips made on the host (ffmpeg's testsrc2, raw
//! 4:2:0) are encoded by vicodec's stateful encoder into raw FWHT streams
//! (I and P frames) and decoded back by vicodec's stateful decoder: the
//! reference (tests/vm/guest/fwht-encode.sh; kept in `target/fwht-media`
//! until the script or a source changes). Then reel decodes the streams
//! through vicodec's stateless decoder (tests/vm/guest/fwht-play.sh):
//! - its framemd5 equals ffmpeg's framemd5 of the reference frames, from
//!   the start and after a seek onto a P frame, also for a clip larger than
//!   vicodec's default CAPTURE size; its `--output raw` is the reference
//!   decode itself, byte for byte (yuv420p, whichever CAPTURE layout);
//! - in weston 14 headless every presented frame is vicodec's own CAPTURE
//!   buffer (zero-copy, weston's protocol log shows the dmabuf imports);
//! - the screenshot shows the reference frame (PSNR, and better than its
//!   neighbours) and is close to the source pixels;
//! - reel's software FWHT decoder (`--hwdec=no`, on the host) gives the
//!   reference decode byte for byte.
//! - `reel check` finds vicodec and the software decoder equal on every
//!   frame (exit 0), and reports the first differing frame of a copy with
//!   one P frame's payload damaged and of a V4L2 picture spoilt by its test
//!   hook (exit 1; -v lists the frame's request, --dump-dir its pictures).
//!
//! One guest boot plays everything (plus one to encode when the media are
//! stale); if the guest cannot start, every test fails with the reason.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use reel::codec::fwht::FrameHeader;
use support::compositor::{decode_png, Screenshot};
use support::vm::{self, Guest, GuestCommand, GuestResult, ScriptCall};
use support::{reel_output, target_dir, weston_log};

struct Clip {
    name: &'static str,
    width: u32,
    height: u32,
    frames: u32,
    /// An I frame every `gop` frames.
    gop: u32,
    /// The seek target, a P frame.
    start_frame: u32,
    /// Played in weston too (not the large clip: llvmpipe under TCG).
    playback: bool,
}

/// 640x360: coded 640x368. 648x372: coded 656x384, and a GOP that does
/// not divide the clip. 1920x1080: larger than vicodec's default CAPTURE
/// size (1280x720), which reel must set.
const CLIPS: [Clip; 3] = [
    Clip {
        name: "fwht_640x360",
        width: 640,
        height: 360,
        frames: 30,
        gop: 10,
        start_frame: 13,
        playback: true,
    },
    Clip {
        name: "fwht_648x372",
        width: 648,
        height: 372,
        frames: 30,
        gop: 8,
        start_frame: 13,
        playback: true,
    },
    Clip {
        name: "fwht_1920x1080",
        width: 1920,
        height: 1080,
        frames: 6,
        gop: 4,
        start_frame: 3,
        playback: false,
    },
];
/// Playbacks of each clip in weston.
const PLAYBACKS: [&str; 2] = ["loop", "paused"];

impl Clip {
    /// `--start` for `start_frame` (25 fps).
    fn start(&self) -> String {
        format!("{:.2}", f64::from(self.start_frame) / 25.0)
    }

    fn frame_len(&self) -> usize {
        (self.width * self.height * 3 / 2) as usize
    }

    fn media(&self, suffix: &str) -> PathBuf {
        self.in_dir(media_dir(), suffix)
    }

    fn in_dir(&self, dir: &Path, suffix: &str) -> PathBuf {
        dir.join(format!("{}{suffix}", self.name))
    }
}

fn media_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = target_dir().join("fwht-media");
        std::fs::create_dir_all(&dir).expect("create target/fwht-media");
        make_media(&dir);
        dir
    })
}

fn modified(path: &Path) -> Option<std::time::SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// The sources (host ffmpeg) and, in one guest run, the streams and
/// reference decodes, unless every output is newer than its inputs.
fn make_media(dir: &Path) {
    for clip in &CLIPS {
        let source = dir.join(format!("{}.src.yuv", clip.name));
        if source.exists() {
            continue;
        }
        let status = Command::new("ffmpeg")
            .args(["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i"])
            .arg(format!(
                "testsrc2=size={}x{}:rate=25",
                clip.width, clip.height
            ))
            .args([
                "-frames:v",
                &clip.frames.to_string(),
                "-pix_fmt",
                "yuv420p",
                "-f",
            ])
            .arg("rawvideo")
            .arg(&source)
            .status()
            .expect("run ffmpeg");
        assert!(
            status.success(),
            "ffmpeg could not make {}",
            source.display()
        );
    }
    let script = modified(&vm::guest_script("fwht-encode.sh"));
    let fresh = CLIPS.iter().all(|clip| {
        let made = [".fwht", ".ref.yuv", ".sl.yuv"].map(|s| modified(&clip.in_dir(dir, s)));
        let newest_input = script.max(modified(&clip.in_dir(dir, ".src.yuv")));
        made.iter().all(|m| m.is_some() && *m >= newest_input)
    });
    if fresh {
        return;
    }
    let specs = CLIPS.iter().map(|c| {
        format!(
            "{}:{}x{}:{}:{}",
            c.name,
            c.width,
            c.height,
            c.gop,
            c.in_dir(dir, ".src.yuv").display()
        )
    });
    let result = Guest::run(
        &GuestCommand::script(ScriptCall::new("fwht-encode.sh").args(specs))
            .modules(["vicodec"])
            .timeout(Duration::from_secs(300))
            .label("fwht-encode"),
    )
    .unwrap_or_else(|e| panic!("the test guest did not run: {e}"));
    result.assert_success();
    for clip in &CLIPS {
        for suffix in [".fwht", ".ref.yuv", ".sl.yuv"] {
            let from = result.result_dir.join(format!("{}{suffix}", clip.name));
            // Through a rename, so that a file is only ever complete or absent.
            let partial = clip.in_dir(dir, &format!("{suffix}.partial"));
            std::fs::copy(&from, &partial)
                .and_then(|_| std::fs::rename(&partial, clip.in_dir(dir, suffix)))
                .unwrap_or_else(|e| panic!("{}: {e}", from.display()));
        }
    }
}

/// The clip `reel check` runs on damaged or poisoned, and the P frame
/// (in a GOP of 10) whose payload the corrupted copy flips bytes in, and
/// the frame the poison hook spoils.
const CHECKED: usize = 0;
const CORRUPT_FRAME: usize = 13;
const POISON_FRAME: usize = 7;

/// A copy of `clip`'s stream with bytes of frame `frame`'s payload flipped
/// (its header left alone): `NAME.corrupt.fwht`.
fn corrupted_stream(clip: &Clip, frame: usize) -> PathBuf {
    let mut stream = read_bytes(&clip.media(".fwht"));
    let mut offset = 0;
    for i in 0.. {
        let (header, payload) = reel::codec::fwht::split_frame(&stream[offset..])
            .unwrap_or_else(|e| panic!("{}: frame {i}: {e}", clip.name));
        if i == frame {
            assert!(!header.is_intra(), "frame {frame} is a P frame");
            let (start, end) = (offset + payload.start, offset + payload.end);
            // Every 16th word of the first half of the payload: coefficients
            // and run lengths of the luma plane's blocks change.
            let half = start + (end - start) / 2;
            for byte in stream[start..half].iter_mut().step_by(32) {
                *byte ^= 0x5a;
            }
            break;
        }
        offset += payload.end;
    }
    let path = clip.media(".corrupt.fwht");
    std::fs::write(&path, &stream).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    path
}

/// `reel check` runs (tests/vm/guest/reel-check.sh): every clip as it is
/// (`check-NAME`), the corrupted copy (`check-corrupt`), and the clip with
/// the V4L2 side's picture POISON_FRAME spoilt by the test hook
/// (`check-poison`, with -v and --dump-dir).
fn check_calls() -> Vec<ScriptCall> {
    let reel = env!("CARGO_BIN_EXE_reel");
    let mut calls: Vec<ScriptCall> = CLIPS
        .iter()
        .map(|clip| {
            ScriptCall::new("reel-check.sh")
                .arg(reel)
                .arg(format!("check-{}", clip.name))
                .arg(clip.media(".fwht"))
        })
        .collect();
    let clip = &CLIPS[CHECKED];
    calls.push(
        ScriptCall::new("reel-check.sh")
            .arg(reel)
            .arg("check-corrupt")
            .arg(corrupted_stream(clip, CORRUPT_FRAME)),
    );
    calls.push(
        ScriptCall::new("reel-check.sh")
            .env("REEL_TEST_POISON_CAPTURE", POISON_FRAME.to_string())
            .env("CHECK_DUMP", "check-poison-dump")
            .arg(reel)
            .arg("check-poison")
            .arg(clip.media(".fwht"))
            .args(["-v", "--dump-count", "1"]),
    );
    calls
}

fn runs() -> &'static GuestResult {
    static RUNS: OnceLock<GuestResult> = OnceLock::new();
    RUNS.get_or_init(|| {
        let plays = CLIPS.iter().map(|clip| {
            ScriptCall::new("fwht-play.sh")
                .arg(env!("CARGO_BIN_EXE_reel"))
                .arg(clip.name)
                .arg(clip.media(".fwht"))
                .arg(format!("{}x{}", clip.width, clip.height))
                .arg(clip.start())
                .arg(if clip.playback { "play" } else { "no-play" })
        });
        let calls = plays.chain(check_calls());
        let result = Guest::run(
            &GuestCommand::scripts(calls)
                .modules(["vicodec"])
                .timeout(Duration::from_secs(600))
                .env("RUST_BACKTRACE", "1")
                .label("guest-fwht"),
        )
        .unwrap_or_else(|e| panic!("the test guest did not run: {e}"));
        result.assert_success();
        result
    })
}

fn read(name: &str) -> String {
    runs().read_result(name).unwrap_or_default()
}

fn read_bytes(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The (pts, size, hash) of each frame line of a framemd5.
fn framemd5_lines(text: &str) -> Vec<(i64, u64, String)> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split(',').map(str::trim).collect();
            assert_eq!(f.len(), 6, "not a framemd5 line: {l}");
            (
                f[2].parse().expect("pts"),
                f[4].parse().expect("size"),
                f[5].to_owned(),
            )
        })
        .collect()
}

/// ffmpeg's framemd5 of the reference frames in `pix_fmt` (the hash is of
/// the layout: NV12 and yuv420p hash the same pixels differently).
fn reference_framemd5(clip: &Clip, pix_fmt: &str) -> Vec<(i64, u64, String)> {
    let out = Command::new("ffmpeg")
        .args([
            "-nostdin", "-v", "error", "-f", "rawvideo", "-pix_fmt", "yuv420p",
        ])
        .args([
            "-s",
            &format!("{}x{}", clip.width, clip.height),
            "-r",
            "25",
            "-i",
        ])
        .arg(clip.media(".ref.yuv"))
        .args(["-pix_fmt", pix_fmt, "-f", "framemd5", "-"])
        .output()
        .expect("run ffmpeg");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    framemd5_lines(&String::from_utf8_lossy(&out.stdout))
}

/// The reference's framemd5 in the layout of reel's `ours`: reel hashes
/// the CAPTURE format it decoded into, YU12 or NV12, which are the same
/// pixels. reel's first frame decides; every frame must then match.
fn reference_like(clip: &Clip, ours: &[(i64, u64, String)]) -> Vec<(i64, u64, String)> {
    let planar = reference_framemd5(clip, "yuv420p");
    let semi = reference_framemd5(clip, "nv12");
    let Some((pts, _, hash)) = ours.first() else {
        return planar;
    };
    let frame = usize::try_from(*pts).unwrap_or(usize::MAX);
    if semi.get(frame).is_some_and(|(_, _, h)| h == hash) {
        semi
    } else {
        planar
    }
}

fn stats_decoder(name: &str, log: &str) -> Option<String> {
    let line = log.lines().find(|l| l.starts_with("reel: stats:"));
    let line = line.unwrap_or_else(|| panic!("{name}: no stats line:\n{log}"));
    reel_output::fields(line).remove("decoder")
}

/// Frame `index` of a raw 4:2:0 file as RGB (ffmpeg's conversion).
fn yuv_frame_rgb(clip: &Clip, file: &Path, index: u32) -> Vec<u8> {
    let out = Command::new("ffmpeg")
        .args([
            "-nostdin", "-v", "error", "-f", "rawvideo", "-pix_fmt", "yuv420p",
        ])
        .args(["-s", &format!("{}x{}", clip.width, clip.height), "-i"])
        .arg(file)
        .args(["-vf", &format!("select=eq(n\\,{index})"), "-frames:v", "1"])
        .args(["-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
        .output()
        .expect("run ffmpeg");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.stdout.len(), (clip.width * clip.height * 3) as usize);
    out.stdout
}

fn psnr_of(mse: f64) -> f64 {
    if mse == 0.0 {
        99.0
    } else {
        10.0 * (255.0f64 * 255.0 / mse).log10()
    }
}

fn psnr(a: &[u8], b: &[u8]) -> f64 {
    assert_eq!(a.len(), b.len());
    let sum: f64 = a
        .iter()
        .zip(b)
        .map(|(&x, &y)| (f64::from(x) - f64::from(y)).powi(2))
        .sum();
    psnr_of(sum / a.len() as f64)
}

fn screenshot(play: &str) -> Screenshot {
    let dir = runs().result_dir.join(format!("{play}-shot"));
    let png = support::compositor::png_in(&dir).unwrap_or_else(|| {
        panic!(
            "{play}: no screenshot\nscreenshooter: {}\nweston log:\n{}",
            read(&format!("{play}-shot.log")),
            read(&format!("weston-{play}.log"))
        )
    });
    decode_png(&png)
}

/// The screenshot's top-left clip-sized corner (the output is the clip's
/// size: the picture fills it unscaled).
fn shown(clip: &Clip, play: &str) -> Vec<u8> {
    let shot = screenshot(play);
    assert_eq!(
        (shot.width, shot.height),
        (clip.width, clip.height),
        "{play}: the output is the clip's size"
    );
    shot.rgb
}

fn stats(play: &str) -> std::collections::HashMap<String, u64> {
    let log = read(&format!("{play}.log"));
    assert_eq!(
        read(&format!("{play}.rc")).trim(),
        "0",
        "{play}: reel failed:\n{log}"
    );
    assert!(!log.contains("panicked"), "{play}:\n{log}");
    reel_output::stats(&log).unwrap_or_else(|| panic!("{play}: no stats line:\n{log}"))
}

#[test]
fn vicodec_made_streams_of_i_and_p_frames() {
    for clip in &CLIPS {
        let stream = read_bytes(&clip.media(".fwht"));
        let mut offset = 0;
        let mut intra = Vec::new();
        while offset < stream.len() {
            let (header, payload) = reel::codec::fwht::split_frame(&stream[offset..])
                .unwrap_or_else(|e| panic!("{}: frame {}: {e}", clip.name, intra.len()));
            assert_eq!((header.width, header.height), (clip.width, clip.height));
            assert!(header.is_yuv420());
            intra.push(header.is_intra());
            offset += payload.end;
        }
        let want: Vec<bool> = (0..clip.frames).map(|i| i % clip.gop == 0).collect();
        assert_eq!(intra, want, "{}: I frames", clip.name);
        let first = FrameHeader::parse(&stream).expect("first header");
        assert_eq!(first.version, reel::codec::fwht::VERSION);
    }
}

#[test]
fn references_agree_and_are_close_to_the_source() {
    for clip in &CLIPS {
        let reference = read_bytes(&clip.media(".ref.yuv"));
        assert_eq!(
            reference.len(),
            clip.frame_len() * clip.frames as usize,
            "{}",
            clip.name
        );
        // v4l2-ctl through the stateless decoder: a second opinion, where it
        // can give one (v4l2-ctl 1.22 leaves the CAPTURE size at vicodec's
        // default 1280x720, and vicodec refuses larger frames' parameters).
        if clip.width <= 1280 && clip.height <= 720 {
            assert!(
                read_bytes(&clip.media(".sl.yuv")) == reference,
                "{}: vicodec's stateful and stateless decodes differ",
                clip.name
            );
        }
        let source = read_bytes(&clip.media(".src.yuv"));
        for (i, (r, s)) in reference
            .chunks(clip.frame_len())
            .zip(source.chunks(clip.frame_len()))
            .enumerate()
        {
            let db = psnr(r, s);
            assert!(
                db > 30.0,
                "{} frame {i}: PSNR {db:.1} dB against the source",
                clip.name
            );
        }
    }
}

#[test]
fn reel_decodes_every_frame_pixel_exact() {
    for clip in &CLIPS {
        let log = read(&format!("{}.md5.log", clip.name));
        assert_eq!(read(&format!("{}.md5.rc", clip.name)).trim(), "0", "{log}");
        assert_eq!(
            stats_decoder(clip.name, &log).as_deref(),
            Some("v4l2-stateless"),
            "{}: not decoded through V4L2:\n{log}",
            clip.name
        );
        let ours = framemd5_lines(&read(&format!("{}.md5", clip.name)));
        let want = reference_like(clip, &ours);
        assert_eq!(want.len(), clip.frames as usize);
        assert_eq!(
            ours, want,
            "{}: reel's framemd5 differs from the reference",
            clip.name
        );
    }
}

#[test]
fn raw_output_is_the_reference_decode() {
    for clip in &CLIPS {
        let log = read(&format!("{}.raw.log", clip.name));
        assert_eq!(read(&format!("{}.raw.rc", clip.name)).trim(), "0", "{log}");
        let ours = read_bytes(&runs().result_dir.join(format!("{}.raw", clip.name)));
        let reference = read_bytes(&clip.media(".ref.yuv"));
        assert_eq!(
            ours.len(),
            reference.len(),
            "{}: raw output size",
            clip.name
        );
        let frame = clip.frame_len();
        let first = ours
            .chunks(frame)
            .zip(reference.chunks(frame))
            .position(|(a, b)| a != b);
        assert_eq!(first, None, "{}: first raw frame differing", clip.name);
    }
}

/// reel's software FWHT decoder (`--hwdec=no`), on the host: its raw
/// output is vicodec's reference decode, byte for byte, for every clip.
#[test]
fn software_decode_is_the_reference_decode() {
    for clip in &CLIPS {
        let out = Command::new(env!("CARGO_BIN_EXE_reel"))
            .args(["--hwdec=no", "--output", "raw", "--stats"])
            .arg(clip.media(".fwht"))
            .output()
            .expect("run reel");
        let log = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{}: {log}", clip.name);
        assert_eq!(
            stats_decoder(clip.name, &log).as_deref(),
            Some("software"),
            "{}: not decoded in software:\n{log}",
            clip.name
        );
        let reference = read_bytes(&clip.media(".ref.yuv"));
        assert_eq!(out.stdout.len(), reference.len(), "{}: size", clip.name);
        let frame = clip.frame_len();
        let first = out
            .stdout
            .chunks(frame)
            .zip(reference.chunks(frame))
            .position(|(a, b)| a != b);
        assert_eq!(first, None, "{}: first frame differing", clip.name);
    }
}

#[test]
fn a_seek_onto_a_p_frame_decodes_it_exactly() {
    for clip in &CLIPS {
        let name = format!("{}-seek", clip.name);
        let log = read(&format!("{name}.md5.log"));
        assert_eq!(read(&format!("{name}.md5.rc")).trim(), "0", "{log}");
        assert_eq!(
            stats_decoder(&name, &log).as_deref(),
            Some("v4l2-stateless"),
            "{log}"
        );
        let ours = framemd5_lines(&read(&format!("{name}.md5")));
        let want = reference_like(clip, &ours);
        let ours_hashes: Vec<&String> = ours.iter().map(|(_, _, h)| h).collect();
        let want_hashes: Vec<&String> = want[clip.start_frame as usize..]
            .iter()
            .map(|(_, _, h)| h)
            .collect();
        assert_eq!(
            ours_hashes,
            want_hashes,
            "{}: frames from {} on after --start {}",
            clip.name,
            clip.start_frame,
            clip.start()
        );
    }
}

#[test]
fn playback_is_zero_copy() {
    for clip in CLIPS.iter().filter(|c| c.playback) {
        for play in PLAYBACKS.map(|p| format!("{}-{p}", clip.name)) {
            weston_log::assert_zero_copy_playback(
                &play,
                &stats(&play),
                &read(&format!("{play}.log")),
                &read(&format!("weston-{play}.log")),
            );
        }
    }
}

#[test]
fn paused_screenshot_shows_the_reference_frame_and_the_source() {
    for clip in CLIPS.iter().filter(|c| c.playback) {
        let start = clip.start_frame;
        let play = format!("{}-paused", clip.name);
        let shot = shown(clip, &play);
        let reference = clip.media(".ref.yuv");
        let score = |i: u32| psnr(&shot, &yuv_frame_rgb(clip, &reference, i));
        let wanted = score(start);
        // Measured: 49.6 dB (weston's conversion against ffmpeg's), the
        // neighbours about 20 dB.
        assert!(
            wanted > 40.0,
            "{play}: frame {start} not shown: PSNR {wanted:.1} dB"
        );
        for other in [start - 1, start + 1] {
            let theirs = score(other);
            assert!(
                wanted > theirs + 10.0,
                "{play}: the screen matches frame {other} ({theirs:.2} dB) as well as frame {start} ({wanted:.2} dB)"
            );
        }
        let source = psnr(&shot, &yuv_frame_rgb(clip, &clip.media(".src.yuv"), start));
        // Measured: 33-34 dB (vicodec's quantisation at QP 20).
        assert!(
            source > 28.0,
            "{play}: PSNR {source:.1} dB against the source frame"
        );
    }
}

#[test]
fn looping_screenshot_shows_a_reference_frame() {
    for clip in CLIPS.iter().filter(|c| c.playback) {
        let play = format!("{}-loop", clip.name);
        let shot = shown(clip, &play);
        let reference = clip.media(".ref.yuv");
        let best = (0..clip.frames)
            .map(|i| psnr(&shot, &yuv_frame_rgb(clip, &reference, i)))
            .fold(0.0, f64::max);
        assert!(
            best > 40.0,
            "{play}: no reference frame on screen (best PSNR {best:.1} dB)"
        );
    }
}

/// `reel check`'s run NAME: its exit status, its frame lines and the rest
/// of its output.
struct CheckRun {
    rc: String,
    frames: Vec<String>,
    output: String,
    log: String,
}

fn check_run(name: &str) -> CheckRun {
    let output = read(&format!("{name}.check"));
    CheckRun {
        rc: read(&format!("{name}.check.rc")).trim().to_owned(),
        frames: output
            .lines()
            .filter(|l| l.starts_with("frame="))
            .map(str::to_owned)
            .collect(),
        log: read(&format!("{name}.check.log")),
        output,
    }
}

impl CheckRun {
    fn context(&self, name: &str) -> String {
        format!(
            "{name}: status {}\n{}\nstderr:\n{}",
            self.rc, self.output, self.log
        )
    }

    /// The first differing frame's line of the summary.
    fn first_differing(&self) -> Option<&str> {
        self.output
            .lines()
            .find(|l| l.starts_with("first differing frame:"))
    }
}

#[test]
fn reel_check_finds_vicodec_and_the_software_decoder_equal() {
    for clip in &CLIPS {
        let name = format!("check-{}", clip.name);
        let run = check_run(&name);
        let context = run.context(&name);
        assert_eq!(run.rc, "0", "{context}");
        assert_eq!(run.frames.len(), clip.frames as usize, "{context}");
        for (i, line) in run.frames.iter().enumerate() {
            assert!(
                line.starts_with(&format!("frame={i} ")) && line.ends_with(" equal"),
                "{context}"
            );
        }
        let summary = format!(
            "summary: compared={0} differing=0 v4l2_frames={0} software_frames={0}",
            clip.frames
        );
        assert!(run.output.contains(&summary), "{context}");
        assert!(run.output.contains("every frame equal"), "{context}");
        assert!(!run.log.contains("panicked"), "{context}");
    }
}

#[test]
fn reel_check_reports_a_corrupted_p_frame() {
    let run = check_run("check-corrupt");
    let context = run.context("check-corrupt");
    assert_eq!(run.rc, "1", "{context}");
    let first = run.first_differing().unwrap_or_else(|| panic!("{context}"));
    assert!(
        first.starts_with(&format!("first differing frame: frame={CORRUPT_FRAME} ")),
        "{context}"
    );
    for line in &run.frames[..CORRUPT_FRAME] {
        assert!(line.ends_with(" equal"), "{context}");
    }
    // From the next I frame on, the sides agree again: a picture one side
    // did not put out (vicodec reports the damaged frame as an error) is
    // reported alone rather than shifting every later pair.
    let next_intra = CORRUPT_FRAME.next_multiple_of(CLIPS[CHECKED].gop as usize);
    assert_eq!(
        run.frames.len(),
        CLIPS[CHECKED].frames as usize,
        "{context}"
    );
    for line in &run.frames[next_intra..] {
        assert!(line.ends_with(" equal"), "{context}");
    }
    assert!(!run.log.contains("panicked"), "{context}");
}

#[test]
fn reel_check_reports_a_poisoned_capture_buffer() {
    let clip = &CLIPS[CHECKED];
    let run = check_run("check-poison");
    let context = run.context("check-poison");
    assert_eq!(run.rc, "1", "{context}");
    assert_eq!(run.frames.len(), clip.frames as usize, "{context}");
    for (i, line) in run.frames.iter().enumerate() {
        if i == POISON_FRAME {
            // Luma spoilt: a finite PSNR there, chroma equal.
            assert!(line.contains(" differ psnr_y="), "{context}");
            assert!(!line.contains("psnr_y=inf"), "{context}");
            assert!(line.ends_with("psnr_u=inf psnr_v=inf"), "{context}");
        } else {
            assert!(line.ends_with(" equal"), "{context}");
        }
    }
    assert!(
        run.output.contains(&format!(
            "summary: compared={0} differing=1 v4l2_frames={0} software_frames={0}",
            clip.frames
        )),
        "{context}"
    );
    // Frame 7 of a GOP of 10: a P frame; -v lists its request.
    let first = run.first_differing().unwrap_or_else(|| panic!("{context}"));
    assert!(
        first.starts_with(&format!("first differing frame: frame={POISON_FRAME} pts=")),
        "{context}"
    );
    assert!(first.contains(" type=P"), "{context}");
    let requests: Vec<&str> = run
        .output
        .lines()
        .filter(|l| l.trim_start().starts_with("request ts="))
        .collect();
    assert_eq!(requests.len(), 1, "{context}");
    assert!(requests[0].contains("kind=P"), "{context}");
    // --dump-count 1: both pictures of frame 7, the V4L2 one spoilt.
    let dir = runs().result_dir.join("check-poison-dump");
    let png = |side: &str| decode_png(&dir.join(format!("frame-{POISON_FRAME}-{side}.png")));
    let (v4l2, software) = (png("v4l2"), png("software"));
    for shot in [&v4l2, &software] {
        assert_eq!((shot.width, shot.height), (clip.width, clip.height));
    }
    assert!(v4l2.rgb != software.rgb, "{context}");
    let reference = yuv_frame_rgb(clip, &clip.media(".ref.yuv"), POISON_FRAME as u32);
    let db = psnr(&software.rgb, &reference);
    assert!(
        db > 40.0,
        "the software picture is frame {POISON_FRAME}: {db:.1} dB"
    );
    let entries = std::fs::read_dir(&dir).map(|d| d.count()).unwrap_or(0);
    assert_eq!(entries, 2, "{context}");
}
