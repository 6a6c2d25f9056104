//! HEVC and AV1 oracles: GStreamer 1.26 from a debootstrapped Debian trixie
//! root, booted as the test guest's root with the same kernel and visl
//! (bookworm's GStreamer 1.22 cannot: its HEVC element crashes on 6.12, it
//! has no AV1 element). Separate from guest_visl so that the host-root tests
//! run whatever happens here.

mod support;

use support::oracle::{self, OracleClip};
use support::vm::{self, Guest, GuestCommand, Root};

fn check(clip: &OracleClip) {
    let media = vm::test_media().unwrap_or_else(|e| panic!("{e}"));
    let frames = oracle::oracle_frames(clip).unwrap_or_else(|e| panic!("{e}"));
    let expected = oracle::ffmpeg_frame_count(clip, &media).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        frames.len(),
        expected,
        "{}: frames traced vs FFmpeg's count",
        clip.name
    );
    for frame in &frames {
        for control in clip.per_frame_controls {
            assert!(
                frame.controls.contains_key(*control),
                "{}: frame {} lacks {control}",
                clip.name,
                frame.index
            );
        }
    }
}

#[test]
fn trixie_root_runs_gstreamer_1_26() {
    let result = Guest::run(
        &GuestCommand::new("gst-launch-1.0 --version; . /etc/os-release; echo $VERSION_CODENAME")
            .root(Root::Trixie)
            .label("trixie-version"),
    )
    .unwrap_or_else(|e| panic!("the trixie guest did not run: {e}"));
    result.assert_success();
    assert!(
        result.stdout.contains("GStreamer 1.26"),
        "{}",
        result.report()
    );
    assert!(
        result.stdout.lines().any(|l| l == "trixie"),
        "{}",
        result.report()
    );
}

#[test]
fn hevc_oracle_capture_is_complete() {
    check(oracle::clip("hevc_main").expect("known clip"));
}

#[test]
fn av1_oracle_capture_is_complete() {
    check(oracle::clip("av1").expect("known clip"));
}
