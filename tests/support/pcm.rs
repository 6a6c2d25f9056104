//! Sound for the audio tests: clips with a video and an audio stream, FFmpeg's
//! decode of them (the oracle), and comparing recorded PCM against it.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A clip of `seconds` with a small moving picture and the audio of the
/// lavfi graph `audio`, encoded with `codec` (ffmpeg options), made on first
/// use into `target/audio-media/NAME`.
pub fn clip(name: &str, seconds: f64, audio: &str, codec: &[&str]) -> PathBuf {
    let picture = format!("testsrc2=size=160x120:rate=25:duration={seconds}");
    let seconds = seconds.to_string();
    let mut args = vec!["-f", "lavfi", "-i", &picture, "-f", "lavfi", "-t", &seconds];
    args.extend(["-i", audio, "-map", "0:v", "-map", "1:a", "-c:v", "libx264"]);
    args.extend(["-preset", "ultrafast", "-g", "25", "-pix_fmt", "yuv420p"]);
    args.extend_from_slice(codec);
    made(name, &args)
}

/// A clip ffmpeg makes with `args` (its inputs and options; the output
/// comes last), named `name` beside `beside`, made on first use. Tests run
/// in parallel and may make the same clip at once: each writes its own and
/// renames it into place.
pub fn derived(beside: &Path, name: &str, args: &[&str]) -> PathBuf {
    let path = beside.with_file_name(name);
    if path.exists() {
        return path;
    }
    let partial = beside.with_file_name(format!(
        "partial-{}-{:?}-{name}",
        std::process::id(),
        std::thread::current().id()
    ));
    let status = Command::new("ffmpeg")
        .args(["-nostdin", "-v", "error", "-y"])
        .args(args)
        .arg(&partial)
        .status()
        .expect("cannot run ffmpeg");
    assert!(status.success(), "ffmpeg could not make {name}");
    std::fs::rename(&partial, &path).expect("rename the clip into place");
    path
}

/// A clip ffmpeg makes from `args` alone (its inputs and options),
/// into `target/audio-media/NAME`, made on first use as `derived`.
pub fn made(name: &str, args: &[&str]) -> PathBuf {
    let dir = super::target_dir().join("audio-media");
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    derived(&dir.join(name), name, args)
}

/// FFmpeg's decode of `file`'s first audio stream (or of a recording),
/// from `start` seconds, resampled to `rate` Hz and `channels` channels:
/// interleaved f32.
pub fn decode(file: &Path, start: Option<f64>, rate: u32, channels: usize) -> Vec<f32> {
    let mut command = Command::new("ffmpeg");
    command.args(["-nostdin", "-v", "error", "-i"]).arg(file);
    if let Some(start) = start {
        command.args(["-ss", &start.to_string()]);
    }
    let output = command
        .args(["-map", "0:a:0", "-f", "f32le", "-ar", &rate.to_string()])
        .args(["-ac", &channels.to_string(), "-"])
        .output()
        .expect("cannot run ffmpeg");
    assert!(
        output.status.success(),
        "ffmpeg cannot decode {}: {}",
        file.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    output
        .stdout
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

/// The first stream of `kind` (`v` or `a`)'s start time, seconds.
pub fn start_time(file: &Path, kind: &str) -> f64 {
    let output = Command::new("ffprobe")
        .args(["-v", "error", "-select_streams", &format!("{kind}:0")])
        .args(["-show_entries", "stream=start_time", "-of", "csv=p=0"])
        .arg(file)
        .output()
        .expect("cannot run ffprobe");
    String::from_utf8_lossy(&output.stdout)
        .trim()
        .parse()
        .unwrap_or(0.0)
}

/// Interleaved stereo to mono (the mean of the two sides).
pub fn mono(stereo: &[f32]) -> Vec<f32> {
    stereo
        .chunks_exact(2)
        .map(|p| (p[0] + p[1]) / 2.0)
        .collect()
}

pub fn rms(x: &[f32]) -> f64 {
    if x.is_empty() {
        return 0.0;
    }
    (x.iter().map(|&v| f64::from(v) * f64::from(v)).sum::<f64>() / x.len() as f64).sqrt()
}

/// Normalised cross-correlation of two equally long signals.
pub fn ncc(a: &[f32], b: &[f32]) -> f64 {
    let (mut ab, mut aa, mut bb) = (0.0f64, 0.0f64, 0.0f64);
    for (&x, &y) in a.iter().zip(b) {
        let (x, y) = (f64::from(x), f64::from(y));
        ab += x * y;
        aa += x * x;
        bb += y * y;
    }
    if aa == 0.0 || bb == 0.0 {
        return 0.0;
    }
    ab / (aa * bb).sqrt()
}

/// The factor `a` is `b` scaled by (least squares).
pub fn gain(a: &[f32], b: &[f32]) -> f64 {
    let (mut ab, mut bb) = (0.0f64, 0.0f64);
    for (&x, &y) in a.iter().zip(b) {
        ab += f64::from(x) * f64::from(y);
        bb += f64::from(y) * f64::from(y);
    }
    ab / bb
}

const COARSE: usize = 8;

fn decimate(x: &[f32]) -> Vec<f32> {
    x.chunks_exact(COARSE)
        .map(|c| c.iter().sum::<f32>() / COARSE as f32)
        .collect()
}

/// Where `template` best matches in `signal` (mono, same rate): its offset
/// and the normalised correlation there. A coarse search on decimated
/// signals, then a fine one around its best offset.
pub fn find(template: &[f32], signal: &[f32]) -> Option<(usize, f64)> {
    if template.len() > signal.len() || template.len() < 4 * COARSE {
        return None;
    }
    let (t, s) = (decimate(template), decimate(signal));
    let mut best = (0usize, f64::MIN);
    for lag in 0..=(s.len() - t.len()) {
        let score = ncc(&t, &s[lag..lag + t.len()]);
        if score > best.1 {
            best = (lag, score);
        }
    }
    let centre = best.0 * COARSE;
    let from = centre.saturating_sub(3 * COARSE);
    let to = (centre + 3 * COARSE).min(signal.len() - template.len());
    (from..=to)
        .map(|lag| (lag, ncc(template, &signal[lag..lag + template.len()])))
        .max_by(|a, b| a.1.total_cmp(&b.1))
}

/// `x` without its runs of at least `min` samples of digital silence (an
/// output that ran dry: the sound server plays zeros until the stream
/// catches up), and where they were cut: (offset in what is kept, length).
pub fn without_dropouts(x: &[f32], min: usize) -> (Vec<f32>, Vec<(usize, usize)>) {
    let mut kept = Vec::with_capacity(x.len());
    let mut removed = Vec::new();
    let mut i = 0;
    while i < x.len() {
        let run = x[i..].iter().take_while(|&&v| v == 0.0).count();
        if run >= min {
            removed.push((kept.len(), run));
            i += run;
        } else {
            let end = i + run.max(1);
            kept.extend_from_slice(&x[i..end]);
            i = end;
        }
    }
    (kept, removed)
}

/// Stretches of at least `min` samples whose blocks of 480 samples are
/// silent: (start, end) sample offsets.
pub fn silences(x: &[f32], min: usize) -> Vec<(usize, usize)> {
    const BLOCK: usize = 480;
    let mut found = Vec::new();
    let mut start = None;
    for (i, block) in x.chunks(BLOCK).enumerate() {
        let quiet = rms(block) < 1e-4;
        match (quiet, start) {
            (true, None) => start = Some(i * BLOCK),
            (false, Some(s)) => {
                if i * BLOCK - s >= min {
                    found.push((s, i * BLOCK));
                }
                start = None;
            }
            _ => {}
        }
    }
    found
}
