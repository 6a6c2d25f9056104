//! AV1 against GStreamer 1.26's `v4l2slav1dec` on visl (the trixie root,
//! support::oracle), in two parts:
//! - reel's parser: for every frame of the oracle's `av1` clip, in decoding
//!   order, the control fields GStreamer sent that follow from the headers
//!   and the reference slots (order hints, skip mode frames, references,
//!   refresh, primary reference, loop filter levels and deltas, quantizer,
//!   CDEF, sizes, tiles and each tile's size) equal what reel's parser
//!   derives (GStreamer's stored trace: no guest run);
//! - reel's V4L2 path, in one guest boot with visl:
//!   - the normalised visl traces (sequence, frame, tile group entries,
//!     film grain) equal GStreamer's frame by frame for every AV1 clip it
//!     decodes: 8 and 10 bits, 2x2 tiles, film grain, hidden altref frames
//!     shown again, segmentation, superres;
//!   - the OUTPUT buffers hold the same bytes as GStreamer's (the size and
//!     sha256 of each, stored with the oracle);
//!   - across a resolution change GStreamer cannot follow on visl, the
//!     traces and OUTPUT buffers equal GStreamer's of each part decoded
//!     alone;
//!   - `--output framemd5`: libdav1d's frame count (FFmpeg's AV1 decoder
//!     here), increasing pts, the same output twice, also across the
//!     resolution change;
//!   - frames shown again (each hidden altref frame shown twice) are the
//!     pictures of their slots' buffers: reel's frames fall into the same
//!     groups of equal pictures as FFmpeg's, visl's pictures of two
//!     decodes never being equal;
//!   - exact seek lands on FFmpeg's pts;
//!   - 24 damaged copies of a clip with a key frame every 6 frames
//!     (support::damage; all 200 go through the software path in
//!     tests/damage_software.rs): no panic, no hang, every frame from the
//!     next key frame on output;
//!   - in weston 14 headless `av1_shown_twice` plays zero-copy, its frames shown
//!     again (show_existing_frame, twice in a row) included;
//!   - `reel probe` lists visl's AV1 decoder and what reel makes of it.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use reel::codec::av1::decoder::{Av1Decoder, Event, Frame};
use reel::media::Demuxer;
use support::damage::{self, DamageRuns};
use support::media;
use support::oracle::{self, OracleClip};
use support::reel_runs::{self, traced_decode};
use support::visl_bitstream;
use support::visl_trace::{self, FrameRecord};
use support::vm::{Guest, GuestCommand, GuestResult, ScriptCall};

/// `{0x1,0xff}`: how the visl trace prints arrays (signed bytes as u8).
fn hex<T: Into<i64>>(values: impl IntoIterator<Item = T>, bits: u32) -> String {
    let mask = (1i64 << bits) - 1;
    let items: Vec<String> = values
        .into_iter()
        .map(|v| format!("{:#x}", v.into() & mask))
        .collect();
    format!("{{{}}}", items.join(","))
}

/// The fields reel can tell from its parse of one frame, as the trace
/// prints them.
fn expected_fields(frame: &Frame<u64>) -> Vec<(&'static str, String)> {
    let h = &frame.header;
    let s = &h.size;
    let lf = &h.loop_filter;
    let mut fields = vec![
        ("order_hint", h.order_hint.to_string()),
        ("refresh_frame_flags", h.refresh_frame_flags.to_string()),
        ("primary_ref_frame", h.primary_ref_frame.to_string()),
        ("order_hints", hex(h.order_hints, 8)),
        ("upscaled_width", s.upscaled_width.to_string()),
        ("frame_width_minus_1", (s.frame_width - 1).to_string()),
        ("frame_height_minus_1", (s.frame_height - 1).to_string()),
        ("render_width_minus_1", (s.render_width - 1).to_string()),
        ("render_height_minus_1", (s.render_height - 1).to_string()),
        ("superres_denom", s.superres_denom.to_string()),
        (
            "quantization.base_q_idx",
            h.quantization.base_q_idx.to_string(),
        ),
        ("loop_filter.level", hex(lf.loop_filter_level, 8)),
        (
            "loop_filter.sharpness",
            lf.loop_filter_sharpness.to_string(),
        ),
        ("loop_filter.ref_deltas", hex(lf.deltas.ref_deltas, 8)),
        ("loop_filter.mode_deltas", hex(lf.deltas.mode_deltas, 8)),
        (
            "cdef.damping_minus_3",
            h.cdef.cdef_damping_minus_3.to_string(),
        ),
        ("cdef.bits", h.cdef.cdef_bits.to_string()),
        ("tile_info.tile_cols", h.tile_info.tile_cols.to_string()),
        ("tile_info.tile_rows", h.tile_info.tile_rows.to_string()),
    ];
    // Skip mode frames are only meaningful where skip mode is allowed.
    if h.skip_mode_frame != [0, 0] {
        fields.push(("skip_mode_frame", hex(h.skip_mode_frame, 8)));
    }
    if !h.frame_is_intra() {
        fields.push(("ref_frame_idx", hex(h.ref_frame_idx, 8)));
    }
    fields
}

fn reel_frames(file: &str) -> Vec<Frame<u64>> {
    let mut demuxer = Demuxer::open(&media::dir().join(file)).expect("open clip");
    let mut decoder: Av1Decoder<u64> = Av1Decoder::new();
    let mut next = 0;
    let mut frames = Vec::new();
    while let Some(packet) = demuxer.next_packet().expect("read packet") {
        let events = decoder
            .decode_temporal_unit(&packet.data, || {
                next += 1000;
                next
            })
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        frames.extend(events.into_iter().filter_map(|e| match e {
            Event::Decode(frame) => Some(frame),
            Event::Show(_) => None,
        }));
    }
    frames
}

fn field<'a>(record: &'a FrameRecord, control: &str, key: &str) -> Option<&'a str> {
    record.controls.get(control)?.get(key).map(String::as_str)
}

#[test]
fn parsed_headers_equal_gstreamers_controls() {
    let clip = oracle::clip("av1").expect("the AV1 oracle clip");
    let records = oracle::oracle_frames(clip).unwrap_or_else(|e| panic!("{e}"));
    let frames = reel_frames(clip.file);
    assert_eq!(frames.len(), records.len(), "frames decoded vs GStreamer's");
    let mut compared = 0;
    for (frame, record) in frames.iter().zip(&records) {
        let i = record.index;
        for (key, ours) in expected_fields(frame) {
            let theirs = field(record, "v4l2_ctrl_av1_frame", key)
                .unwrap_or_else(|| panic!("frame {i}: GStreamer's trace has no {key}"));
            assert_eq!(theirs.trim(), ours, "frame {i}: {key}");
            compared += 1;
        }
        // The single tile's size (the clip has one tile per frame).
        let tiles = &frame.tile_groups[0].group.tiles;
        let size = record
            .controls
            .iter()
            .filter(|(name, _)| name.starts_with("v4l2_ctrl_av1_tile_group_entry"))
            .find_map(|(_, fields)| fields.get("tile_size"))
            .unwrap_or_else(|| panic!("frame {i}: no tile group entry"));
        assert_eq!(
            size.trim(),
            tiles[0].size.to_string(),
            "frame {i}: tile_size"
        );
        let sequence = &frame.sequence;
        if let Some(bits) = field(record, "v4l2_ctrl_av1_sequence", "order_hint_bits") {
            assert_eq!(bits.trim(), sequence.order_hint_bits().to_string());
        }
    }
    eprintln!(
        "{compared} control fields over {} frames equal GStreamer's",
        frames.len()
    );
}

const LABEL: &str = "guest-av1";

/// The clip whose GStreamer oracle is its parts' (tests/support/oracle.rs
/// says why).
const RESOLUTION_CHANGE: &str = "av1_resolution_change";
/// av1_altref with every frame shown again shown twice
/// (tests/media/av1_show_again.py).
const SHOWN_TWICE: &str = "av1_shown_twice";
/// AV1 clips beyond GStreamer's that reel must decode whole, in order.
const FRAMEMD5_ONLY: [&str; 2] = [RESOLUTION_CHANGE, SHOWN_TWICE];

/// Where the seek test starts av1.mkv (30 fps, 30 frames, one key frame).
const SEEK_CLIP: &str = "av1.mkv";
const SEEK_SECONDS: f64 = 0.5;

/// The clip played in weston (hidden altref frames shown again later, each
/// twice in a row), and its runs' name.
const WESTON_CLIP: &str = "av1_shown_twice.mkv";
const WESTON_NAME: &str = "weston-av1";
/// What reel logs when a frame is shown again (the looping playback in
/// weston goes on until it has).
const SHOWN_AGAIN: &str = "AV1 show_existing_frame";

/// The AV1 clips GStreamer's oracle covers.
fn av1_clips() -> Vec<&'static OracleClip> {
    oracle::CLIPS
        .iter()
        .filter(|c| c.element == "v4l2slav1dec" && c.part_of.is_none())
        .collect()
}

/// Every clip of the framemd5 checks, as (name, file).
fn framemd5_clips() -> Vec<(String, PathBuf)> {
    let media = media::dir();
    av1_clips()
        .iter()
        .map(|c| (c.name.to_string(), media.join(c.file)))
        .chain(
            FRAMEMD5_ONLY
                .iter()
                .map(|n| (n.to_string(), media.join(format!("{n}.mkv")))),
        )
        .collect()
}

/// The first damaged copies of support::damage's av1 source, made on
/// the host, where the guest sees them too (tests/damage_software.rs runs
/// the rest through the software path).
fn damaged() -> &'static DamageRuns {
    static DAMAGED: OnceLock<DamageRuns> = OnceLock::new();
    DAMAGED.get_or_init(|| DamageRuns::for_guest(damage::source("av1")))
}

fn runs() -> &'static GuestResult {
    static RUNS: OnceLock<GuestResult> = OnceLock::new();
    RUNS.get_or_init(|| {
        let media = media::dir();
        // A decode traced, visl keeping the OUTPUT buffers.
        let traced_with_bits = |name: &str, file: &Path| {
            ScriptCall::new("visl-bitstream.sh")
                .arg(format!("bits-{name}"))
                .wrapping(traced_decode(
                    &format!("trace-{name}"),
                    &["--hwdec", "v4l2", "--output", "null"],
                    file,
                ))
        };
        let mut calls = vec![damaged().guest_call()];
        for clip in av1_clips() {
            calls.push(traced_with_bits(clip.name, &media.join(clip.file)));
        }
        calls.push(traced_with_bits(
            RESOLUTION_CHANGE,
            &media.join(format!("{RESOLUTION_CHANGE}.mkv")),
        ));
        for (name, file) in framemd5_clips() {
            calls.extend(reel_runs::framemd5_twice(&name, &file));
        }
        calls.push(traced_decode("probe", &["probe"], &media.join(WESTON_CLIP)));
        let seek = SEEK_SECONDS.to_string();
        calls.push(traced_decode(
            "seek",
            &["--hwdec", "v4l2", "--start", &seek, "--output", "framemd5"],
            &media.join(SEEK_CLIP),
        ));
        // Playback in weston (the generic playback script: framemd5 runs,
        // then `--loop` and `--paused` playbacks, each until a frame is
        // presented).
        calls.push(
            ScriptCall::new("fwht-play.sh")
                .arg(env!("CARGO_BIN_EXE_reel"))
                .arg(WESTON_NAME)
                .arg(media.join(WESTON_CLIP))
                .arg("320x240")
                .arg("0.2")
                .arg("play")
                .arg(SHOWN_AGAIN),
        );
        let count = calls.len();
        let result = Guest::run(
            &GuestCommand::scripts(calls)
                .timeout(Duration::from_secs(
                    120 + 60 * count as u64 + damaged().guest_seconds(),
                ))
                .env("RUST_BACKTRACE", "1")
                .label(LABEL),
        )
        .unwrap_or_else(|e| panic!("the test guest did not run: {e}"));
        result.assert_success();
        result
    })
}

#[test]
fn traces_match_gstreamer() {
    let mut failures = Vec::new();
    for clip in av1_clips() {
        let oracle = oracle::oracle_frames(clip).unwrap_or_else(|e| panic!("{e}"));
        let reel = reel_runs::reel_frames(runs(), &format!("trace-{}", clip.name), LABEL);
        assert_eq!(reel.len(), oracle.len(), "{}: frames traced", clip.name);
        // Every frame a stateless decoder is given, hidden ones included.
        let given = oracle::ffmpeg_frame_count(clip, media::dir()).expect("ffmpeg");
        assert_eq!(reel.len(), given, "{}: requests", clip.name);
        let diff = visl_trace::diff(&oracle, &reel);
        failures.extend(reel_runs::diff_report(clip.name, &diff));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// GStreamer cannot follow av1_resolution_change on visl; each of its
/// parts (key frame and sequence header first) decoded alone is its oracle.
/// reel's trace of the whole, cut where each part starts, equals them (the
/// new sequence starts afresh, and nothing before it is referenced), and so
/// do its OUTPUT buffers.
#[test]
fn a_resolution_change_decodes_as_gstreamer_decodes_its_parts() {
    let whole = RESOLUTION_CHANGE;
    let parts = oracle::parts_of(whole);
    assert!(parts.len() > 1, "{whole}: oracle parts");
    let reel = reel_runs::reel_frames(runs(), &format!("trace-{whole}"), LABEL);
    let bits = runs().result_dir.join(format!("bits-{whole}.bitstream"));
    let buffers = visl_bitstream::read_dump(&bits).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        buffers.len(),
        reel.len(),
        "{whole}: one OUTPUT buffer a frame"
    );
    let mut failures = Vec::new();
    let mut first = 0;
    for part in parts {
        let oracle = oracle::oracle_frames(part).unwrap_or_else(|e| panic!("{e}"));
        let ours: Vec<FrameRecord> = visl_trace::from_frame(&reel, first)
            .into_iter()
            .take(oracle.len())
            .collect();
        let diff = visl_trace::diff(&oracle, &ours);
        failures.extend(reel_runs::diff_report(part.name, &diff));
        let theirs = oracle::oracle_output_digests(part).unwrap_or_else(|e| panic!("{e}"));
        let end = (first + theirs.len()).min(buffers.len());
        failures.extend(visl_bitstream::differences(
            part.name,
            &buffers[first.min(end)..end],
            &theirs,
        ));
        eprintln!(
            "{whole}: frames {first}..{} against {}",
            first + oracle.len(),
            part.name
        );
        first += oracle.len();
    }
    assert_eq!(first, reel.len(), "{whole}: frames traced vs the parts'");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn output_buffer_bytes_equal_gstreamers() {
    let mut failures = Vec::new();
    for clip in av1_clips() {
        let theirs = oracle::oracle_output_digests(clip).unwrap_or_else(|e| panic!("{e}"));
        let name = format!("bits-{}", clip.name);
        let result = runs();
        let rc = result
            .read_result(&format!("{name}.rc"))
            .unwrap_or_default();
        assert_eq!(rc.trim(), "0", "{name}: exit status\n{}", result.report());
        let ours = visl_bitstream::read_dump(&result.result_dir.join(format!("{name}.bitstream")))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(!ours.is_empty(), "{name}: no OUTPUT buffer dumped");
        failures.extend(visl_bitstream::differences(clip.name, &ours, &theirs));
        eprintln!("{}: {} OUTPUT buffers compared", clip.name, ours.len());
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn framemd5_has_every_shown_frame_in_order_and_is_deterministic() {
    for (name, file) in framemd5_clips() {
        reel_runs::assert_framemd5_in_order_and_deterministic(runs(), &name, &file);
    }
}

/// The frames of a framemd5 output grouped by picture: for each frame, the
/// index of the first frame with the same MD5.
fn same_picture_as(lines: &[(i64, String)]) -> Vec<usize> {
    lines
        .iter()
        .map(|(_, md5)| {
            lines
                .iter()
                .position(|(_, other)| other == md5)
                .unwrap_or_default()
        })
        .collect()
}

/// Frames shown again come from the buffer their slot names. visl writes
/// each decode's sequence number and timestamp into its picture, so every
/// decode's picture differs from every other's: two frames reel outputs
/// have the same MD5 exactly when they are one buffer. FFmpeg's decode says
/// which frames are one picture (the hidden ones each shown twice); reel's
/// frames must be grouped the same way. Showing any other buffer (the last
/// decoded, another slot's) would join a frame to the wrong group.
#[test]
fn frames_shown_again_come_from_their_slots_buffer() {
    let clip = media::dir().join(format!("{SHOWN_TWICE}.mkv"));
    let output = Command::new("ffmpeg")
        .args(["-nostdin", "-v", "error", "-i"])
        .arg(&clip)
        .args(["-f", "framemd5", "-"])
        .output()
        .unwrap_or_else(|e| panic!("ffmpeg: {e}"));
    assert!(output.status.success(), "ffmpeg on {}", clip.display());
    let theirs = same_picture_as(&reel_runs::framemd5_lines(&String::from_utf8_lossy(
        &output.stdout,
    )));
    let shown_again = theirs.iter().enumerate().filter(|(i, f)| i != *f).count();
    assert!(shown_again >= 2, "FFmpeg shows no frame twice: {theirs:?}");
    let (log, out) = reel_runs::successful(runs(), &format!("md5a-{SHOWN_TWICE}"));
    let ours = same_picture_as(&reel_runs::framemd5_lines(&out));
    assert_eq!(
        ours, theirs,
        "frames grouped by picture, reel vs FFmpeg\n{log}"
    );
    eprintln!("{shown_again} frames shown again, each from its slot's buffer");
}

/// FFmpeg's framemd5 pts of `clip`.
fn ffmpeg_pts(clip: &Path) -> (Vec<i64>, (i64, i64)) {
    let output = Command::new("ffmpeg")
        .args(["-nostdin", "-v", "error", "-i"])
        .arg(clip)
        .args(["-map", "0:v:0", "-f", "framemd5", "-"])
        .output()
        .unwrap_or_else(|e| panic!("ffmpeg: {e}"));
    assert!(
        output.status.success(),
        "ffmpeg failed on {}",
        clip.display()
    );
    let text = String::from_utf8_lossy(&output.stdout);
    let pts = reel_runs::framemd5_lines(&text)
        .iter()
        .map(|l| l.0)
        .collect();
    (pts, reel_runs::framemd5_time_base(&text))
}

#[test]
fn seeking_lands_on_ffmpegs_pts() {
    let (log, seek) = reel_runs::successful(runs(), "seek");
    let (all, (num, den)) = ffmpeg_pts(&media::dir().join(SEEK_CLIP));
    assert_eq!(reel_runs::framemd5_time_base(&seek), (num, den), "{log}");
    let first = *all.first().expect("frames");
    let target = first + (SEEK_SECONDS * den as f64 / num as f64).round() as i64;
    let expected: Vec<i64> = all.into_iter().filter(|&p| p >= target).collect();
    let got: Vec<i64> = reel_runs::framemd5_lines(&seek)
        .iter()
        .map(|l| l.0)
        .collect();
    assert!(!expected.is_empty());
    assert_eq!(got, expected, "{log}");
}

#[test]
fn damaged_copies_recover_at_the_next_key_frame() {
    damaged().assert_recovered(runs());
}

#[test]
fn playback_in_weston_is_zero_copy_with_frames_shown_again() {
    for play in ["loop", "paused"].map(|p| format!("{WESTON_NAME}-{p}")) {
        let log = runs()
            .read_result(&format!("{play}.log"))
            .unwrap_or_default();
        let rc = runs()
            .read_result(&format!("{play}.rc"))
            .unwrap_or_default();
        assert_eq!(rc.trim(), "0", "{play}: reel failed:\n{log}");
        assert!(!log.contains("panicked"), "{play}:\n{log}");
        let s = support::reel_output::stats(&log)
            .unwrap_or_else(|| panic!("{play}: no stats line:\n{log}"));
        let presented = support::reel_output::number(&s, "presented");
        assert!(presented > 0, "{play}: nothing presented: {s:?}");
        assert_eq!(
            support::reel_output::number(&s, "zero_copy_frames"),
            presented,
            "{play}: {s:?}"
        );
        assert_eq!(
            support::reel_output::number(&s, "copy_frames"),
            0,
            "{play}: {s:?}"
        );
        assert!(
            log.contains("dmabuf negotiation: zero-copy: V4L2"),
            "{play}: no zero-copy negotiation in reel's log"
        );
    }
    // The looping playback went through the altref frames: hidden ones
    // decoded, then shown again from their CAPTURE buffers.
    let log = runs()
        .read_result(&format!("{WESTON_NAME}-loop.log"))
        .unwrap_or_default();
    assert!(
        log.contains(SHOWN_AGAIN),
        "no frame shown again in weston:\n{log}"
    );
}

#[test]
fn probe_lists_the_av1_decoder() {
    let (rc, log, out) = reel_runs::outcome(runs(), "probe");
    assert_eq!(rc, 0, "{log}\n{out}");
    for expected in [
        "AV1F",
        "reel decodes av1 here (AV1F)",
        "(visl; AV1, one request per frame, film grain applied by the decoder)",
    ] {
        assert!(out.contains(expected), "probe lacks {expected:?}:\n{out}");
    }
}
