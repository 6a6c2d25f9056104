//! The generated test clips (`tests/media/generate.sh`), for integration tests.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Where the clips are: `$REEL_TEST_MEDIA`, else `test-media` in the cargo
/// target directory. Absolute, since the test guest sees the host's paths;
/// nothing is generated (see [`dir`]).
pub fn location() -> PathBuf {
    let dir = std::env::var_os("REEL_TEST_MEDIA")
        .map(PathBuf::from)
        .unwrap_or_else(|| super::target_dir().join("test-media"));
    dir.canonicalize()
        .or_else(|_| std::path::absolute(&dir))
        .unwrap_or(dir)
}

/// The directory holding the clips ([`location`]), generated on first use.
/// Every test finds its media here.
pub fn dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = location();
        let script = super::project_dir().join("tests/media/generate.sh");
        let output = Command::new(&script)
            .arg(&dir)
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", script.display()));
        assert!(
            output.status.success(),
            "tests/media/generate.sh failed:\n{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        // Resolved now that it exists: a symlink would point outside the
        // paths the guest's other root binds in.
        dir.canonicalize()
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
    })
}

/// A clip encoded by the ffmpeg CLI on first use into `target/DIR/NAME`:
/// `source` is a lavfi graph, `codec` the encoder options (yuv420p).
/// For tests whose clips are too large or too long to live with the
/// generated test media.
pub fn encoded(dir: &str, name: &str, source: &str, codec: &[&str]) -> PathBuf {
    let dir = super::target_dir().join(dir);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let path = dir.join(name);
    if !path.exists() {
        // Renamed into place when complete: an interrupted run leaves no
        // half clip behind.
        let partial = dir.join(format!("partial-{name}"));
        let status = Command::new("ffmpeg")
            .args(["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", source])
            .args(codec)
            .args(["-pix_fmt", "yuv420p"])
            .arg(&partial)
            .status()
            .unwrap_or_else(|e| panic!("ffmpeg: {e}"));
        assert!(status.success(), "ffmpeg could not make {name}");
        std::fs::rename(&partial, &path).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    path
}

pub fn clip(name: &str) -> PathBuf {
    let path = dir().join(name);
    assert!(path.exists(), "test clip {} is missing", path.display());
    path
}

/// FFmpeg's raw decode of `clip`: every decoded picture at its own size
/// (`-autoscale 0 -fps_mode passthrough`), planes packed, as `-f rawvideo`
/// writes them: what `reel --output raw` must write.
pub fn ffmpeg_rawvideo(clip: &Path) -> Vec<u8> {
    ffmpeg_rawvideo_as(clip, &[])
}

/// As [`ffmpeg_rawvideo`], in the layout `-pix_fmt NAME` asks for when
/// `pix_fmt` is `["NAME"]`.
pub fn ffmpeg_rawvideo_as(clip: &Path, pix_fmt: &[&str]) -> Vec<u8> {
    let out = Command::new("ffmpeg")
        .args(["-nostdin", "-loglevel", "error", "-i"])
        .arg(clip)
        .args(["-autoscale", "0", "-fps_mode", "passthrough"])
        .args(pix_fmt.iter().flat_map(|p| ["-pix_fmt", p]))
        .args(["-f", "rawvideo", "-"])
        .output()
        .expect("run ffmpeg");
    assert!(
        out.status.success(),
        "ffmpeg rawvideo of {}: {}",
        clip.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// One ffprobe column for the first video stream of `clip`: `entries` as
/// `-show_entries` takes it (e.g. `frame=pts`), one value per line.
pub fn ffprobe<T: std::str::FromStr>(clip: &Path, entries: &str) -> Vec<T> {
    ffprobe_with(clip, &[], entries)
}

/// Presentation times (seconds from the stream's start) of every frame of
/// `clip`, in presentation order, from ffprobe.
pub fn frame_times(clip: &Path) -> Vec<f64> {
    let start = ffprobe::<f64>(clip, "stream=start_time")[0];
    ffprobe::<f64>(clip, "frame=best_effort_timestamp_time")
        .iter()
        .map(|t| t - start)
        .collect()
}

/// How far before an exact seek's target a frame may start and still be
/// the one the seek lands on (mpv's 5 ms), in seconds.
pub const SEEK_TOLERANCE: f64 = 0.005;

/// The index of the frame an exact seek to `target` lands on, of frames
/// starting at `times` (ascending, any unit; `tolerance` in the same):
/// the first starting at or after the target, give or take `tolerance`
/// (mpv's rule for exact seeks); the last when none does.
pub fn seek_landing<T>(times: &[T], target: T, tolerance: T) -> usize
where
    T: Copy + PartialOrd + std::ops::Add<Output = T>,
{
    assert!(!times.is_empty(), "no frames to land on");
    times
        .iter()
        .position(|&t| t + tolerance >= target)
        .unwrap_or(times.len() - 1)
}

/// The number of video frames in `clip`, as ffprobe decodes them.
pub fn frame_count(clip: &Path) -> usize {
    // MPEG-TS files also list the stream under their program: one count
    // per line, the same.
    ffprobe_with(clip, &["-count_frames"], "stream=nb_read_frames")
        .first()
        .copied()
        .unwrap_or_else(|| panic!("ffprobe gave no frame count for {}", clip.display()))
}

fn ffprobe_with<T: std::str::FromStr>(clip: &Path, options: &[&str], entries: &str) -> Vec<T> {
    let output = Command::new("ffprobe")
        .args(["-v", "error", "-select_streams", "v:0"])
        .args(options)
        .args(["-show_entries", entries])
        .args(["-of", "csv=p=0"])
        .arg(clip)
        .output()
        .expect("cannot run ffprobe");
    assert!(
        output.status.success(),
        "ffprobe failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| l.trim().trim_end_matches(','))
        .filter(|l| !l.is_empty())
        .map(|l| {
            l.parse().unwrap_or_else(|_| {
                panic!(
                    "ffprobe {entries} of {}: '{l}' is not a value",
                    clip.display()
                )
            })
        })
        .collect()
}

/// Frame `index` (presentation order) of `clip`, decoded by ffmpeg and
/// scaled to `width` x `height`, as packed RGB.
pub fn ffmpeg_frame_rgb(clip: &Path, index: u32, width: u32, height: u32) -> Vec<u8> {
    ffmpeg_frame_rgb_through(clip, index, "null", width, height)
}

/// [`ffmpeg_frame_rgb`], the frame first through the filter `filter` (e.g.
/// `crop=160:120:80:60`).
pub fn ffmpeg_frame_rgb_through(
    clip: &Path,
    index: u32,
    filter: &str,
    width: u32,
    height: u32,
) -> Vec<u8> {
    let output = Command::new("ffmpeg")
        // No filter re-initialisation at a resolution change, so `n` counts
        // every frame of the stream (scale adapts to the new input size).
        .args(["-nostdin", "-v", "error", "-reinit_filter", "0", "-i"])
        .arg(clip)
        .args([
            "-vf",
            &format!("select=eq(n\\,{index}),{filter},scale={width}:{height}:flags=bilinear"),
            "-frames:v",
            "1",
            "-f",
            "rawvideo",
            "-pix_fmt",
            "rgb24",
            "-",
        ])
        .output()
        .expect("cannot run ffmpeg");
    assert!(
        output.status.success(),
        "ffmpeg failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        output.stdout.len(),
        (width * height * 3) as usize,
        "ffmpeg gave no frame {index} of {}",
        clip.display()
    );
    output.stdout
}
