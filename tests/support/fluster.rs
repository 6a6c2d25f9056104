//! Local test suites in fluster's JSON format, written from the test clips
//! in the elementary forms conformance vectors come in (each vector's
//! result FFmpeg's md5 of its raw decode), and fluster run through
//! packaging/fluster/reel_fluster.py with fluster-conformance 0.8.0 from
//! target/fluster-venv (packaging/install-deps.sh installs it).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// (suite, fluster codec, clip, muxer, vector file, pixel format).
pub const VECTORS: &[(&str, &str, &str, &str, &str, &str)] = &[
    (
        "reel-h264",
        "H.264",
        "h264_main_bframes.mkv",
        "h264",
        "bframes.264",
        "yuv420p",
    ),
    (
        "reel-h264",
        "H.264",
        "h264_high10_intra.mkv",
        "h264",
        "high10.264",
        "yuv420p10le",
    ),
    (
        "reel-h265",
        "H.265",
        "hevc_main10.mp4",
        "hevc",
        "main10.bit",
        "yuv420p10le",
    ),
    (
        "reel-h265",
        "H.265",
        "hevc_wpp.mkv",
        "hevc",
        "wpp.bit",
        "yuv420p",
    ),
    (
        "reel-vp8",
        "VP8",
        "vp8_altref.webm",
        "ivf",
        "altref.ivf",
        "yuv420p",
    ),
    (
        "reel-vp9",
        "VP9",
        "vp9_profile2.webm",
        "ivf",
        "profile2.ivf",
        "yuv420p10le",
    ),
    (
        "reel-av1",
        "AV1",
        "av1_film_grain.mkv",
        "obu",
        "film_grain.obu",
        "yuv420p",
    ),
    (
        "reel-mpeg2",
        "MPEG2_VIDEO",
        "mpeg2_interlaced.ts",
        "mpeg2video",
        "interlaced.m2v",
        "yuv420p",
    ),
];

pub fn venv_python() -> PathBuf {
    let python = super::target_dir().join("fluster-venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: packaging/install-deps.sh installs fluster-conformance there",
        python.display()
    );
    python
}

fn md5_of(bytes: &[u8]) -> String {
    use md5::{Digest, Md5};
    Md5::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

pub fn checked(what: &str, out: Output) -> Output {
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Writes the suites and their vectors under `dir` (suites/, resources/);
/// `wrong` names a vector given a wrong result.
pub fn write_suites(dir: &Path, wrong: &str) -> Vec<(&'static str, &'static str)> {
    let mut suites: Vec<(&str, &str)> = Vec::new();
    let mut vectors: std::collections::BTreeMap<&str, Vec<String>> = Default::default();
    for &(suite, codec, clip, muxer, file, pix_fmt) in VECTORS {
        let name = vector_name(file);
        let vector_dir = dir.join("resources").join(suite).join(name);
        std::fs::create_dir_all(&vector_dir).expect("create a vector's directory");
        let input = vector_dir.join(file);
        let made = Command::new("ffmpeg")
            .args(["-nostdin", "-loglevel", "error", "-y", "-i"])
            .arg(super::media::clip(clip))
            .args(["-map", "0:v:0", "-c", "copy", "-f", muxer])
            .arg(&input)
            .output()
            .expect("run ffmpeg");
        checked(&format!("making {file}"), made);
        let source = md5_of(&std::fs::read(&input).expect("read a vector"));
        let result = if name == wrong {
            "0".repeat(32)
        } else {
            md5_of(&super::media::ffmpeg_rawvideo(&input))
        };
        vectors.entry(suite).or_default().push(format!(
            r#"{{"name": "{name}", "source": "file://{}", "source_checksum": "{source}", "input_file": "{file}", "output_format": "{pix_fmt}", "result": "{result}"}}"#,
            input.display()
        ));
        if !suites.iter().any(|(s, _)| *s == suite) {
            suites.push((suite, codec));
        }
    }
    std::fs::create_dir_all(dir.join("suites")).expect("create suites/");
    for &(suite, codec) in &suites {
        let json = format!(
            r#"{{"name": "{suite}", "codec": "{codec}", "description": "reel's test clips", "test_vectors": [{}]}}"#,
            vectors[suite].join(", ")
        );
        std::fs::write(dir.join("suites").join(format!("{suite}.json")), json)
            .expect("write a suite");
    }
    suites
}

/// Runs one suite with one decoder; returns fluster's exit status and its
/// summary's per-vector results (name, OK|KO).
pub fn run_suite(dir: &Path, suite: &str, decoder: &str) -> (Option<i32>, Vec<(String, String)>) {
    let summary = dir.join(format!("{suite}-{decoder}.md"));
    let out = Command::new(venv_python())
        .arg(super::project_dir().join("packaging/fluster/reel_fluster.py"))
        .arg("-tsd")
        .arg(dir.join("suites"))
        .arg("-r")
        .arg(dir.join("resources"))
        .arg("-o")
        .arg(dir.join("out"))
        .args([
            "-ne", "run", "-ts", suite, "-d", decoder, "-t", "60", "-s", "-so",
        ])
        .arg(&summary)
        .env("REEL", env!("CARGO_BIN_EXE_reel"))
        .output()
        .expect("run reel_fluster.py");
    let text = std::fs::read_to_string(&summary).unwrap_or_else(|e| {
        panic!(
            "no summary from fluster ({e}):\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code(), summary_results(&text))
}

/// The (vector, verdict) rows of a fluster summary (`-s -so FILE`): OK,
/// KO (a wrong md5), TO (timed out) or ER (the decoder failed).
pub fn summary_results(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split('|').collect();
            match cells.as_slice() {
                [name, verdict] if ["OK", "KO", "TO", "ER"].contains(verdict) => {
                    Some((name.to_string(), verdict.to_string()))
                }
                _ => None,
            }
        })
        .collect()
}

/// A vector's name: its file's stem.
pub fn vector_name(file: &str) -> &str {
    file.split('.').next().unwrap_or(file)
}
