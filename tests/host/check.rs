//! `reel check` on the host, which has no V4L2 decoder (the decoders are
//! the guest's, tests/guest_fwht.rs and tests/guest_codecs): the check
//! cannot run, and says why, with the error status, printing no frame.

use std::path::Path;
use std::process::Command;

use crate::support::media::clip;

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn check(file: &Path) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_reel"))
        .arg("check")
        .arg(file)
        .output()
        .expect("run reel check");
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn assert_error(run: &Run, expected: &str) {
    let context = format!(
        "status {:?}\n{}\nstderr:\n{}",
        run.code, run.stdout, run.stderr
    );
    assert_eq!(run.code, Some(1), "{context}");
    let errors: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("reel: error: "))
        .collect();
    assert_eq!(errors.len(), 1, "{context}");
    assert!(errors[0].contains(expected), "{context}");
    assert!(!run.stdout.contains("frame="), "{context}");
    assert!(!run.stderr.contains("panicked"), "{context}");
}

#[test]
fn without_a_v4l2_decoder_the_check_says_so() {
    let file = clip("h264_baseline.mp4");
    assert_error(&check(&file), "no V4L2 decoder for h264");
}

#[test]
fn a_file_that_cannot_be_opened_is_an_error() {
    let file = Path::new(env!("CARGO_TARGET_TMPDIR")).join("no-such-file.mp4");
    assert_error(&check(&file), "no such file");
}
