//! The damaged copies of every codec's source (`support::damage::SOURCES`:
//! VP8, VP9, HEVC, MPEG-2, AV1), 200 each, through reel's software path
//! (`--hwdec no`: FFmpeg's decoders) on the host, with the checks the codec
//! guest suite (tests/guest_codecs/) makes of its copies through visl: no panic, no hang (each run
//! under a time limit), the exit status and error line README documents, a
//! truncation reported, every picture from the first key frame after the
//! damage on output; and the software decoder used. The guest suite runs
//! the first 24 of each codec's copies through the V4L2 path; the bulk runs here,
//! where a run takes a tenth of a second rather than one or two under TCG.
//!
//! The runs go one per CPU at a time across the tests (`REEL_DAMAGE_JOBS`
//! to change that); each run's stdout, stderr and exit status stay in
//! target/damage-software/LABEL/runs.

mod support;

use support::damage::{self, DamageRuns, Decoder, HOST_COPIES};

/// The codecs with a test below.
const TESTED: [&str; 5] = ["vp8", "vp9", "hevc", "mpeg2", "av1"];
/// The decoder's threads per run (libavcodec's; libdav1d's for AV1), not
/// reel's default of one per core: with frame threading a decode error
/// surfaces up to about that many packets after the packet that failed,
/// possibly after the key frame decoding must resume at, and a fixed count
/// makes that happen alike on every machine. (Single-threaded, errors come
/// at once: tests/host/framemd5.rs.)
const DECODER_THREADS: &str = "4";

/// Damages `label`'s source into target/damage-software/LABEL, decodes
/// every copy with `--hwdec no --threads DECODER_THREADS --output framemd5
/// -v` and checks the runs.
fn recovers(label: &str) {
    let spec = damage::source(label);
    let dir = support::target_dir().join("damage-software").join(label);
    let runs = DamageRuns::new(spec, HOST_COPIES, &dir.join("damaged"))
        .unwrap_or_else(|e| panic!("{label}: {e}"));
    let outputs = runs
        .run_on_host(
            &dir.join("runs"),
            &[
                "--no-config",
                "--hwdec",
                "no",
                "--threads",
                DECODER_THREADS,
                "--output",
                "framemd5",
                "-v",
            ],
        )
        .unwrap_or_else(|e| panic!("{label}: {e}"));
    runs.assert_runs(&outputs, Decoder::Software);
}

#[test]
fn every_damage_source_is_tested() {
    let sources: Vec<&str> = damage::SOURCES.iter().map(|s| s.label).collect();
    assert_eq!(sources, TESTED, "a damage source without a test here");
}

#[test]
fn vp8_damaged_copies_recover_at_the_next_key_frame() {
    recovers("vp8");
}

#[test]
fn vp9_damaged_copies_recover_at_the_next_key_frame() {
    recovers("vp9");
}

#[test]
fn hevc_damaged_copies_recover_at_the_next_irap() {
    recovers("hevc");
}

#[test]
fn mpeg2_damaged_copies_recover_at_the_next_i_picture() {
    recovers("mpeg2");
}

#[test]
fn av1_damaged_copies_recover_at_the_next_key_frame() {
    recovers("av1");
}
