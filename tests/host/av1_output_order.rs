//! The AV1 decode jobs and display order (`codec::av1::decoder`) on the
//! demuxed packets of every generated AV1 clip, against FFmpeg: as many
//! frames shown as FFmpeg's decoder (libdav1d) outputs, each with the size
//! FFmpeg gives it, in that order; every frame FFmpeg's trace holds
//! decoded once; a shown-existing frame is a hidden frame decoded earlier
//! and shown from the same picture; every reference a frame names is in
//! its slots.

use crate::support;

use std::collections::HashMap;
use std::process::Command;

use reel::codec::av1::decoder::{Av1Decoder, Event};
use reel::codec::av1::FrameType;
use reel::media::Demuxer;
use support::h264::{annex_b_with_trace_of, run, work_dir, Codec, AV1_CLIPS};
use support::media;

/// (width, height) of every frame FFmpeg's decoder outputs, in order.
fn ffmpeg_frame_sizes(clip: &str) -> Vec<(u32, u32)> {
    let out = run(Command::new("ffprobe")
        .args(["-v", "error", "-select_streams", "v:0"])
        .args(["-show_entries", "frame=width,height", "-of", "csv=p=0"])
        .arg(media::dir().join(clip)));
    out.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let mut it = l.split(',').map(|v| v.trim().parse::<u32>().expect("size"));
            (it.next().expect("width"), it.next().expect("height"))
        })
        .collect()
}

/// Frame headers in FFmpeg's trace that decode a frame (not
/// show_existing_frame).
fn ffmpeg_decoded_frames(clip: &str) -> usize {
    let work = work_dir("av1-output-order");
    let traced = annex_b_with_trace_of(Codec::Av1, &media::dir().join(clip), &work);
    traced
        .trace
        .iter()
        .flatten()
        .filter(|(_, name, value)| name == "show_existing_frame" && *value == 0)
        .count()
}

struct Decoded {
    shown_at_decode: bool,
    showable: bool,
    render: (u32, u32),
}

fn check_clip(clip: &str) -> (usize, usize) {
    let mut demuxer = Demuxer::open(&media::dir().join(clip)).expect("open clip");
    let mut decoder: Av1Decoder<u32> = Av1Decoder::new();
    let mut next = 0u32;
    let mut decoded: HashMap<u32, Decoded> = HashMap::new();
    let mut shown: Vec<(u32, u32)> = Vec::new();
    let mut shown_existing = 0;
    let mut last_decoded = None;
    while let Some(packet) = demuxer.next_packet().expect("read packet") {
        let events = decoder
            .decode_temporal_unit(&packet.data, || {
                next += 1;
                next
            })
            .unwrap_or_else(|e| panic!("{clip}: {e}"));
        for event in events {
            match event {
                Event::Decode(frame) => {
                    let h = &frame.header;
                    if h.frame_type != FrameType::Key && !h.frame_is_intra() {
                        for &slot in &h.ref_frame_idx {
                            assert!(
                                frame.slots[usize::from(slot)].is_some(),
                                "{clip}: reference slot {slot} empty"
                            );
                        }
                    }
                    assert!(!frame.tile_groups.is_empty());
                    let old = decoded.insert(
                        frame.picture,
                        Decoded {
                            shown_at_decode: h.show_frame,
                            showable: h.showable_frame,
                            render: (h.size.render_width, h.size.render_height),
                        },
                    );
                    assert!(old.is_none(), "{clip}: a picture decoded twice");
                    last_decoded = Some(frame.picture);
                }
                Event::Show(picture) => {
                    let d = decoded
                        .get(&picture)
                        .unwrap_or_else(|| panic!("{clip}: shown before decoded"));
                    if last_decoded != Some(picture) || !d.shown_at_decode {
                        assert!(
                            d.showable && !d.shown_at_decode,
                            "{clip}: {picture} shown again"
                        );
                        shown_existing += 1;
                    }
                    shown.push(d.render);
                }
            }
        }
    }
    assert_eq!(
        shown,
        ffmpeg_frame_sizes(clip),
        "{clip}: shown frames and sizes"
    );
    assert_eq!(
        decoded.len(),
        ffmpeg_decoded_frames(clip),
        "{clip}: decoded frames"
    );
    if clip == "av1_altref.mkv" {
        assert!(shown_existing > 0, "{clip}: no show_existing_frame");
    }
    (shown.len(), shown_existing)
}

#[test]
fn display_order_and_sizes_match_ffmpeg() {
    for clip in AV1_CLIPS {
        let (shown, existing) = check_clip(clip);
        eprintln!("{clip}: {shown} frames shown as FFmpeg shows them, {existing} shown again");
    }
}

/// Started mid-stream (a seek without flushing to a key frame) or after a
/// damaged frame, decoding skips frames without error until the next key
/// frame and goes on from there: the resolution change clip's second
/// sequence starts with one at packet 15.
#[test]
fn resumes_at_the_next_key_frame() {
    let clip = "av1_resolution_change.mkv";
    let mut demuxer = Demuxer::open(&media::dir().join(clip)).expect("open clip");
    let mut packets = Vec::new();
    while let Some(p) = demuxer.next_packet().expect("read packet") {
        packets.push(p);
    }
    assert_eq!(packets.len(), 30);
    assert!(packets[15].keyframe);
    let shows = |decoder: &mut Av1Decoder<u32>, data: &[u8]| {
        decoder.decode_temporal_unit(data, || 1).map(|events| {
            events
                .iter()
                .filter(|e| matches!(e, Event::Show(_)))
                .count()
        })
    };
    // Mid-stream: nothing shown, no error, until the key frame.
    let mut decoder = Av1Decoder::new();
    for (i, p) in packets.iter().enumerate().skip(3) {
        let n = shows(&mut decoder, &p.data).unwrap_or_else(|e| panic!("packet {i}: {e}"));
        assert_eq!(n, usize::from(i >= 15), "packet {i}");
    }
    // A frame cut short is an error; the frames after it are skipped until
    // the key frame.
    let mut decoder = Av1Decoder::new();
    let mut failed = Vec::new();
    for (i, p) in packets.iter().enumerate() {
        let data = if i == 5 {
            &p.data[..p.data.len() / 2]
        } else {
            &p.data[..]
        };
        match shows(&mut decoder, data) {
            Ok(n) => assert_eq!(n, usize::from(!(5..15).contains(&i)), "packet {i}"),
            Err(_) => failed.push(i),
        }
    }
    assert_eq!(failed, vec![5], "the damaged packet, and only it, fails");
}
