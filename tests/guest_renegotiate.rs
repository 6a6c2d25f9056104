//! Re-negotiation of the V4L2 CAPTURE format during playback, against the
//! kernel's visl driver in the QEMU test guest: the compositor's formats
//! change (as when the surface goes fullscreen and the compositor sends a
//! scanout tranche), the negotiation over the formats visl really offers
//! picks another CAPTURE format, the decoder is reopened with new buffers,
//! and playback goes on from the next frame.
//!
//! Oracles: ffprobe's frame timestamps for the clip (no frame lost or
//! repeated across the reopen), the driver's own format (the dmabufs'
//! fourcc after S_FMT), and the held frames' pixels (a frame decoded before
//! the reopen stays intact while the compositor could still show it).
//!
//! The host test `renegotiation_guest_suite` boots the guest and runs this
//! binary inside it with `--ignored inguest_`.

mod support;

use std::path::PathBuf;
use std::time::Duration;

use reel::fourcc::{fourcc, fourcc_text, MOD_LINEAR};
use reel::frame::{DecoderKind, Frame, FrameStorage};
use reel::negotiation::{CompositorFormats, CompositorTranche, Negotiation};
use reel::player::decoder_choice::DecoderChoice;
use reel::player::negotiator::{Negotiator, Renegotiated};
use reel::player::pipeline::{Pipeline, PipelineOptions};

use support::{media, vm};

const CLIP: &str = "h264_baseline.mp4";
const GUEST_TESTS: usize = 1;
const NV12: u32 = fourcc(b"NV12");
const YU12: u32 = fourcc(b"YU12");
/// Frames decoded before the compositor's formats change.
const SPLIT: usize = 12;

#[test]
fn renegotiation_guest_suite() {
    let media = media::dir();
    let command = vm::GuestCommand::inguest_tests()
        .env("REEL_RENEGOTIATE_CLIP", media.join(CLIP).to_string_lossy())
        .timeout(Duration::from_secs(300))
        .label("renegotiate");
    vm::Guest::run(&command)
        .unwrap_or_else(|e| panic!("the visl guest could not run: {e}"))
        .assert_tests_passed(GUEST_TESTS);
}

// --------------------------------------------------------------- guest side

fn linear_tranches(list: &[(bool, &[u32])]) -> CompositorFormats {
    CompositorFormats::Tranches(
        list.iter()
            .map(|(scanout, fourccs)| CompositorTranche {
                target_device: None,
                scanout: *scanout,
                pairs: fourccs.iter().map(|&f| (f, MOD_LINEAR)).collect(),
            })
            .collect(),
    )
}

/// (DRM fourcc, buffer generation) of a V4L2 frame.
fn dmabuf_of(frame: &Frame) -> (u32, u64) {
    match &frame.storage {
        FrameStorage::Dmabuf(d) => (d.fourcc, d.id.generation),
        FrameStorage::Cpu(_) => panic!("frame at {:?} is not in a dmabuf", frame.pts),
    }
}

fn packed(frame: &Frame) -> Vec<u8> {
    let mut bytes = Vec::new();
    frame.for_each_packed_row(|row| bytes.extend_from_slice(row));
    bytes
}

#[test]
#[ignore = "needs visl: runs in the test guest (renegotiation_guest_suite)"]
fn inguest_new_capture_format_reopens_the_decoder_and_playback_goes_on() {
    let clip = PathBuf::from(std::env::var("REEL_RENEGOTIATE_CLIP").expect("clip path"));
    let expected_pts: Vec<i64> = media::ffprobe(&clip, "frame=pts");
    assert!(
        expected_pts.len() > SPLIT + 5,
        "clip too short: {expected_pts:?}"
    );

    // Windowed: the compositor samples NV12 only.
    let negotiator = Negotiator::new(linear_tranches(&[(false, &[NV12])]));
    let options = PipelineOptions {
        for_display: true,
        threads: 1,
        decoder: DecoderChoice::v4l2_only(negotiator.chooser()),
    };
    let mut pipeline = Pipeline::open(&clip, &options).expect("open the clip on visl");
    assert_eq!(pipeline.decoder_kind(), DecoderKind::V4l2Stateless);
    // (pts, DRM fourcc, buffer generation, epoch) of every frame; only the
    // last frame is kept, as the player keeps only the frame on screen.
    let mut seen: Vec<(i64, u32, u64, u64)> = Vec::new();
    let mut held: Option<Frame> = None;
    for i in 0..SPLIT {
        let frame = pipeline
            .next_frame()
            .unwrap_or_else(|e| panic!("frame {i}: {e:#}"))
            .unwrap_or_else(|| panic!("stream ended at frame {i}"));
        let (fourcc, generation) = dmabuf_of(&frame);
        seen.push((frame.pts_raw, fourcc, generation, frame.epoch));
        held = Some(frame);
    }
    let first_generation = seen[0].2;
    assert_eq!(fourcc_text(seen[0].1), "NV12", "visl's first format");
    assert!(seen.iter().all(|s| (s.1, s.2) == (NV12, first_generation)));
    assert!(
        matches!(negotiator.current(), Some(Negotiation::ZeroCopy { v4l2_fourcc, .. }) if v4l2_fourcc == NV12),
        "{:?}",
        negotiator.current()
    );

    // Fullscreen: a scanout tranche that takes YU12 only comes first. The
    // negotiation runs over what visl offered for this stream.
    let change =
        negotiator.compositor_changed(linear_tranches(&[(true, &[YU12]), (false, &[NV12, YU12])]));
    assert!(
        matches!(
            &change,
            Renegotiated::Reallocate(Negotiation::ZeroCopy { v4l2_fourcc, scanout: true, .. })
                if *v4l2_fourcc == YU12
        ),
        "{change:?}"
    );

    // The last frame decoded so far stays on screen through the reopen.
    let held = held.expect("frames");
    let held_pixels = packed(&held);
    assert!(!held_pixels.is_empty());
    let resume = pipeline.position_of(&held) + held.duration;
    pipeline.reopen_decoder().expect("reopen the decoder");
    pipeline.seek(resume, 2).expect("seek after the reopen");
    while let Some(frame) = pipeline.next_frame().expect("decode after the reopen") {
        let (fourcc, generation) = dmabuf_of(&frame);
        seen.push((frame.pts_raw, fourcc, generation, frame.epoch));
    }
    assert_eq!(
        packed(&held),
        held_pixels,
        "a frame held across the reopen changed"
    );

    let after = &seen[SPLIT..];
    assert!(!after.is_empty(), "no frame after the reopen");
    let generation_after = after[0].2;
    assert_eq!(
        fourcc_text(after[0].1),
        "YU12",
        "CAPTURE format after the reopen"
    );
    assert!(
        generation_after > first_generation,
        "buffers were not reallocated"
    );
    assert!(after
        .iter()
        .all(|s| (s.1, s.2, s.3) == (YU12, generation_after, 2)));
    let pts: Vec<i64> = seen.iter().map(|s| s.0).collect();
    assert_eq!(
        pts, expected_pts,
        "frames across the reopen differ from ffprobe's"
    );
}
