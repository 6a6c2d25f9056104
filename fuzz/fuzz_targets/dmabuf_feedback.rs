//! zwp_linux_dmabuf_feedback_v1 events as a compositor could send them, in
//! any order and with any payload: the format table, devices, tranche
//! indices and flags, `done` on either feedback object, then negotiation
//! against the result. Errors are fine, panics are not.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reel::display::feedback::{FeedbackKind, FeedbackTracker};
use reel::negotiation::{negotiate, CompositorFormats, DecoderFormat};
use reel::v4l2::formats::CAPTURE_FORMATS;

fuzz_target!(|data: &[u8]| {
    let mut tracker = FeedbackTracker::default();
    let decoder: Vec<DecoderFormat> = CAPTURE_FORMATS
        .iter()
        .map(|f| DecoderFormat::from_capture(f, 128))
        .collect();
    // Each event: one byte of opcode, one byte of length, that many bytes.
    let mut rest = data;
    while let [op, len, tail @ ..] = rest {
        let len = usize::from(*len).min(tail.len());
        let (payload, next) = tail.split_at(len);
        rest = next;
        let kind = if op & 0x80 == 0 {
            FeedbackKind::Default
        } else {
            FeedbackKind::Surface
        };
        let builder = tracker.builder(kind);
        match op & 0x7 {
            0 => {
                let _ = builder.format_table(payload);
            }
            1 => builder.main_device(payload),
            2 => builder.tranche_target_device(payload),
            3 => {
                let _ = builder.tranche_formats(payload);
            }
            4 => builder.tranche_flags(payload.first().is_some_and(|f| f & 1 == 1)),
            5 => builder.tranche_done(),
            _ => {
                if tracker.done(kind).is_ok() {
                    if let Some(Ok(formats)) =
                        tracker.effective().map(CompositorFormats::from_feedback)
                    {
                        for depth in [8, 10] {
                            let _ = negotiate(&decoder, &formats, depth);
                        }
                    }
                }
            }
        }
    }
});
