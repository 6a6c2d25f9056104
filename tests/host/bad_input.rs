//! Bad input never panics or hangs: reel prints one `reel: error: ...` line
//! and exits 1, within a time limit.
//!
//! A truncated file is decoded as far as its data goes (the frames are
//! output, identical to ffmpeg's), then reported as an error with exit code
//! 1: the file is damaged, and a script checking a file must be able to see
//! that, while a viewer still gets every frame the file holds.

use crate::support;
use support::media::clip;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Generous for a debug build on two shared cores; the clips take well
/// under a second.
const TIME_LIMIT: Duration = Duration::from_secs(60);

fn scratch(name: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(name)
}

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Runs reel, killing it and failing the test if it outlives `TIME_LIMIT`.
fn reel(args: &[&str], file: &Path) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_reel"))
        .args(["--hwdec=no"])
        .args(args)
        .arg(file)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn reel");
    let mut pipe_out = child.stdout.take().expect("stdout pipe");
    let mut pipe_err = child.stderr.take().expect("stderr pipe");
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        pipe_out.read_to_string(&mut s).map(|_| s)
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        pipe_err.read_to_string(&mut s).map(|_| s)
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for reel") {
            break status;
        }
        if start.elapsed() > TIME_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "reel hung on {} (killed after {TIME_LIMIT:?})",
                file.display()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let run = Run {
        code: status.code(),
        stdout: out.join().expect("stdout reader").expect("read stdout"),
        stderr: err.join().expect("stderr reader").expect("read stderr"),
    };
    assert!(
        !run.stderr.contains("panicked"),
        "reel panicked on {}: {}",
        file.display(),
        run.stderr
    );
    run
}

/// Exit code 1 and exactly one `reel: error:` line containing `expected`.
fn assert_clear_error(run: &Run, file: &Path, expected: &str) {
    assert_eq!(
        run.code,
        Some(1),
        "{}: exit code {:?}, stderr: {}",
        file.display(),
        run.code,
        run.stderr
    );
    let errors: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("reel: error: "))
        .collect();
    assert_eq!(
        errors.len(),
        1,
        "{}: stderr: {}",
        file.display(),
        run.stderr
    );
    assert!(
        errors[0].contains(expected),
        "{}: error {:?} does not say {expected:?}",
        file.display(),
        errors[0]
    );
}

#[test]
fn garbage_file() {
    let file = clip("garbage.bin");
    let run = reel(&["--output", "null"], &file);
    // libavformat's probe takes the noise for "bintext", a text-art format.
    assert_clear_error(&run, &file, "garbage.bin");
}

#[test]
fn audio_only_file() {
    let file = clip("audio_only.mka");
    assert_clear_error(
        &reel(&["--output", "null"], &file),
        &file,
        "no video stream",
    );
}

/// Cover art is a "video" stream to libavformat, not to a player.
#[test]
fn audio_with_cover_art() {
    let file = scratch("cover.m4a");
    let status = Command::new("ffmpeg")
        .args(["-nostdin", "-loglevel", "error", "-y"])
        .args(["-f", "lavfi", "-i", "sine=frequency=440:duration=0.5"])
        .args(["-f", "lavfi", "-i", "testsrc2=size=64x64:duration=0.1"])
        .args([
            "-map",
            "0:a",
            "-map",
            "1:v",
            "-frames:v",
            "1",
            "-c:v",
            "png",
        ])
        .args(["-disposition:v", "attached_pic", "-c:a", "aac"])
        .arg(&file)
        .status()
        .expect("run ffmpeg");
    assert!(status.success());
    assert_clear_error(
        &reel(&["--output", "null"], &file),
        &file,
        "no video stream",
    );
}

/// File names are bytes: not UTF-8, or with a colon that libavformat would
/// otherwise read as a protocol name.
#[test]
fn awkward_file_names_play() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let source = std::fs::read(clip("vp9.webm")).expect("read clip");
    for name in [
        OsStr::from_bytes(b"concat:clip.webm"),
        OsStr::from_bytes(b"latin1-\xe9t\xe9.webm"),
    ] {
        let file = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
        std::fs::write(&file, &source).expect("write");
        let run = reel(&["--output", "null"], &file);
        assert_eq!(run.code, Some(0), "{}: {}", file.display(), run.stderr);
    }
}

#[test]
fn nonexistent_path() {
    let file = scratch("does-not-exist.mkv");
    let _ = std::fs::remove_file(&file);
    assert_clear_error(&reel(&["--output", "null"], &file), &file, "no such file");
}

#[test]
fn directory() {
    let dir = scratch("a-directory.mp4");
    std::fs::create_dir_all(&dir).expect("mkdir");
    assert_clear_error(&reel(&["--output", "null"], &dir), &dir, "is a directory");
}

#[test]
fn empty_file() {
    let file = scratch("empty.mp4");
    std::fs::write(&file, b"").expect("write");
    assert_clear_error(&reel(&["--output", "null"], &file), &file, "empty");
}

#[test]
fn unsupported_codec() {
    let file = scratch("mpeg4.avi");
    let status = Command::new("ffmpeg")
        .args(["-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i"])
        .arg("testsrc2=size=64x48:rate=10:duration=0.5")
        .args(["-c:v", "mpeg4"])
        .arg(&file)
        .status()
        .expect("run ffmpeg");
    assert!(status.success());
    assert_clear_error(
        &reel(&["--output", "null"], &file),
        &file,
        "unsupported video codec: mpeg4",
    );
}

/// The decodable part is output exactly as ffmpeg decodes it, then the
/// truncation is reported.
#[test]
fn truncated_file_plays_what_it_can_then_fails() {
    let file = clip("truncated.mkv");
    let run = reel(&["--output", "framemd5"], &file);
    assert_clear_error(&run, &file, "truncated");
    let ffmpeg = Command::new("ffmpeg")
        .args(["-nostdin", "-hide_banner", "-loglevel", "quiet", "-i"])
        .arg(&file)
        .args(["-f", "framemd5", "-"])
        .output()
        .expect("run ffmpeg");
    let rows = |s: &str| -> Vec<String> {
        s.lines()
            .filter(|l| !l.starts_with('#'))
            .map(str::to_owned)
            .collect()
    };
    let theirs = rows(&String::from_utf8_lossy(&ffmpeg.stdout));
    assert!(!theirs.is_empty(), "ffmpeg decoded nothing: bad oracle");
    assert_eq!(rows(&run.stdout), theirs);
}

/// Files cut at many points, and files with bytes overwritten, end in a
/// clean exit (0 when what is left is a whole stream, else 1 with an error
/// line), never a panic or a hang.
#[test]
fn cut_and_corrupted_files_never_panic_or_hang() {
    for name in [
        "h264_main_bframes.mkv",
        "hevc_main10.mp4",
        "vp9.webm",
        "h264_high.ts",
    ] {
        let data = std::fs::read(clip(name)).expect("read clip");
        let ext = name.rsplit('.').next().unwrap_or("bin");
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for cut in [5, 30, 70, 95] {
            let file = scratch(&format!("cut{cut}_{name}"));
            std::fs::write(&file, &data[..data.len() * cut / 100]).expect("write");
            let run = reel(&["--output", "null"], &file);
            match (ext, cut) {
                // The header declares the duration; 30 % or 70 % of the data
                // falls far short of it.
                ("mkv" | "webm", 30 | 70) => assert_clear_error(&run, &file, "truncated"),
                // ffmpeg writes the index (moov) at the end: nothing to play.
                ("mp4", _) => assert_clear_error(&run, &file, "cannot open"),
                _ => check_exit(&run, &file),
            }
        }
        for i in 0..4 {
            let mut bad = data.clone();
            // Leave the first KiB alone so the container is still found.
            for _ in 0..16 {
                let at = 1024 + (next() as usize) % (bad.len() - 1024);
                bad[at] = next() as u8;
            }
            let file = scratch(&format!("corrupt{i}.{ext}"));
            std::fs::write(&file, &bad).expect("write");
            check_exit(&reel(&["--output", "framemd5"], &file), &file);
        }
    }
}

fn check_exit(run: &Run, file: &Path) {
    match run.code {
        Some(0) => {}
        Some(1) => assert!(
            run.stderr.lines().any(|l| l.starts_with("reel: error: ")),
            "{}: exit 1 without an error line: {}",
            file.display(),
            run.stderr
        ),
        other => panic!(
            "{}: exit {other:?} (killed by a signal?): {}",
            file.display(),
            run.stderr
        ),
    }
}
