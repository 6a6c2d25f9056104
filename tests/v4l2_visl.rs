//! The V4L2 stateless session against the kernel's visl driver, in the QEMU
//! test guest (tests/vm). The host test `visl_guest_suite` boots the guest
//! and runs this same test binary inside it with `--ignored inguest_`: the
//! `inguest_*` tests need /dev/video* from visl and are ignored on the host.
//!
//! Oracles: `v4l2-ctl` output for discovery, visl's trace events for what
//! the driver received, the driver's own buffer bookkeeping (DQBUF) for
//! timestamps and buffer return.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use reel::codec::h264::H264Error;
use reel::fourcc::fourcc_text;
use reel::v4l2::codec::{
    Bitstream, BitstreamPart, CodecError, Damage, OutputPicture, Request, StatelessCodec,
    Timestamps,
};
use reel::v4l2::controls::ExtControl;
use reel::v4l2::discovery::{self, DecoderInfo, StreamRequirements};
use reel::v4l2::formats::coded;
use reel::v4l2::session::{DecodeRequest, DecodedFrame, Session, SessionConfig, SessionError};
use v4l2r::bindings;

use support::{media, vm};

// ---------------------------------------------------------------- host side

/// The `inguest_*` tests below; the guest run must pass every one.
const GUEST_TESTS: usize = 12;

#[test]
fn visl_guest_suite() {
    let media = media::dir();
    let clip = annexb_clip(&media.join("h264_baseline.mp4"), "baseline");
    let sliced = annexb_clip(&media.join("h264_slices.mp4"), "slices");
    let command = vm::GuestCommand::inguest_tests()
        .env("REEL_VISL_CLIP", clip.to_string_lossy())
        .env("REEL_VISL_SLICED_CLIP", sliced.to_string_lossy())
        .timeout(Duration::from_secs(400))
        .label("v4l2-visl");
    vm::Guest::run(&command)
        .unwrap_or_else(|e| panic!("the visl guest could not run: {e}"))
        .assert_tests_passed(GUEST_TESTS);
}

/// Annex-B elementary stream of `clip`, made by FFmpeg.
fn annexb_clip(clip: &Path, name: &str) -> PathBuf {
    let dir = support::target_dir().join("v4l2-visl");
    std::fs::create_dir_all(&dir).expect("create target/v4l2-visl");
    let out = dir.join(format!("{name}.h264"));
    let status = Command::new("ffmpeg")
        .args(["-v", "error", "-y", "-i"])
        .arg(clip)
        .args(["-c:v", "copy", "-bsf:v", "h264_mp4toannexb", "-f", "h264"])
        .arg(&out)
        .status()
        .expect("run ffmpeg");
    assert!(status.success(), "ffmpeg failed on {}", clip.display());
    out
}

#[test]
fn annexb_splitter_agrees_with_ffprobe() {
    let media = media::dir();
    for (clip, name) in [
        ("h264_baseline.mp4", "baseline"),
        ("h264_slices.mp4", "slices"),
    ] {
        let path = annexb_clip(&media.join(clip), name);
        let data = std::fs::read(&path).expect("read clip");
        let aus = annexb::access_units(&data);
        let output = Command::new("ffprobe")
            .args(["-v", "error", "-count_packets", "-select_streams", "v:0"])
            .args(["-show_entries", "stream=nb_read_packets", "-of", "csv=p=0"])
            .arg(&path)
            .output()
            .expect("run ffprobe");
        let packets: usize = String::from_utf8_lossy(&output.stdout)
            .trim()
            .parse()
            .expect("packet count");
        assert_eq!(aus.len(), packets, "{clip}");
        // The sliced clip has 4 slices per picture.
        if name == "slices" {
            assert!(aus.iter().all(|au| au.slices.len() == 4), "{clip}");
        }
    }
}

/// NAL units grouped into access units at the first slice of each picture.
mod annexb {
    use reel::codec::bitstream::annexb::nal_units;

    pub struct AccessUnit {
        /// Each VCL NAL unit with its start code.
        pub slices: Vec<Vec<u8>>,
    }

    pub fn access_units(data: &[u8]) -> Vec<AccessUnit> {
        let mut units: Vec<AccessUnit> = Vec::new();
        let mut new_au_pending = true;
        for nal in nal_units(data) {
            let kind = nal[0] & 0x1f;
            match kind {
                1 | 5 => {
                    // first_mb_in_slice == 0 (ue(v) "1") starts a picture.
                    let first_slice = nal.get(1).is_some_and(|b| b & 0x80 != 0);
                    if new_au_pending || first_slice || units.is_empty() {
                        units.push(AccessUnit { slices: Vec::new() });
                        new_au_pending = false;
                    }
                    let mut with_start = vec![0, 0, 1];
                    with_start.extend_from_slice(nal);
                    if let Some(au) = units.last_mut() {
                        au.slices.push(with_start);
                    }
                }
                6..=9 => new_au_pending = true,
                _ => {}
            }
        }
        units
    }
}

// --------------------------------------------------------------- guest side

fn visl() -> DecoderInfo {
    let found = discovery::discover();
    found
        .decoders
        .into_iter()
        .find(|d| d.driver == "visl")
        .unwrap_or_else(|| panic!("visl not discovered"))
}

fn clip(var: &str) -> Vec<annexb::AccessUnit> {
    let path = std::env::var(var).unwrap_or_else(|_| panic!("{var} not set"));
    let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    annexb::access_units(&data)
}

fn h264_sps(level_idc: u8) -> bindings::v4l2_ctrl_h264_sps {
    bindings::v4l2_ctrl_h264_sps {
        profile_idc: 66,
        level_idc,
        chroma_format_idc: 1,
        max_num_ref_frames: 1,
        pic_width_in_mbs_minus1: 19,
        pic_height_in_map_units_minus1: 14,
        flags: bindings::V4L2_H264_SPS_FLAG_FRAME_MBS_ONLY,
        ..Default::default()
    }
}

fn frame_controls(frame_num: u16, level_idc: u8) -> Vec<ExtControl> {
    let decode = bindings::v4l2_ctrl_h264_decode_params {
        frame_num,
        nal_ref_idc: 1,
        ..Default::default()
    };
    vec![
        ExtControl::compound(bindings::V4L2_CID_STATELESS_H264_SPS, h264_sps(level_idc)),
        ExtControl::compound(
            bindings::V4L2_CID_STATELESS_H264_PPS,
            bindings::v4l2_ctrl_h264_pps::default(),
        ),
        ExtControl::compound(
            bindings::V4L2_CID_STATELESS_H264_SCALING_MATRIX,
            bindings::v4l2_ctrl_h264_scaling_matrix::default(),
        ),
        ExtControl::compound(bindings::V4L2_CID_STATELESS_H264_DECODE_PARAMS, decode),
    ]
}

fn session_config(decoder: &DecoderInfo) -> SessionConfig {
    let media = decoder.media_node.clone().expect("visl has a media node");
    let mut config = SessionConfig::new(&decoder.video_node, &media, coded::H264_SLICE, 320, 240);
    config.initial_controls = vec![
        ExtControl::value(
            bindings::V4L2_CID_STATELESS_H264_DECODE_MODE,
            bindings::v4l2_stateless_h264_decode_mode_V4L2_STATELESS_H264_DECODE_MODE_FRAME_BASED
                as i32,
        ),
        ExtControl::value(
            bindings::V4L2_CID_STATELESS_H264_START_CODE,
            bindings::v4l2_stateless_h264_start_code_V4L2_STATELESS_H264_START_CODE_ANNEX_B as i32,
        ),
        ExtControl::compound(bindings::V4L2_CID_STATELESS_H264_SPS, h264_sps(30)),
    ];
    config.capture_buffers = 6;
    config.output_buffers = 3;
    config
}

fn timestamp(i: usize) -> u64 {
    // 30 fps, whole microseconds.
    (i as u64 + 1) * 33_333_000
}

/// visl's trace events, on for the guard's life.
struct Trace;

const TRACING: &str = "/sys/kernel/tracing";

impl Trace {
    fn start() -> Self {
        let write = |file: &str, value: &str| {
            std::fs::write(format!("{TRACING}/{file}"), value)
                .unwrap_or_else(|e| panic!("{file}: {e}"))
        };
        write("tracing_on", "0");
        write("buffer_size_kb", "16384");
        write("trace", "");
        write("events/visl_h264_controls/enable", "1");
        write("tracing_on", "1");
        Trace
    }

    fn read(&self) -> String {
        std::fs::read_to_string(format!("{TRACING}/trace")).expect("read trace")
    }
}

impl Drop for Trace {
    fn drop(&mut self) {
        let _ = std::fs::write(format!("{TRACING}/events/visl_h264_controls/enable"), "0");
        let _ = std::fs::write(format!("{TRACING}/tracing_on"), "0");
    }
}

/// Values of `key N` lines in a trace, in order.
fn trace_values(trace: &str, key: &str) -> Vec<i64> {
    trace
        .lines()
        .filter_map(|l| {
            l.trim()
                .strip_prefix(key)?
                .strip_prefix(' ')?
                .trim()
                .parse()
                .ok()
        })
        .collect()
}

fn v4l2_ctl(args: &[&str]) -> String {
    let output = Command::new("v4l2-ctl")
        .args(args)
        .output()
        .expect("run v4l2-ctl");
    assert!(
        output.status.success(),
        "v4l2-ctl {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
#[ignore = "needs visl: runs in the test guest (visl_guest_suite)"]
fn inguest_discovery_matches_v4l2_ctl() {
    let found = discovery::discover();
    println!("{found}");
    let decoder = visl();
    let dev = decoder.video_node.to_string_lossy().into_owned();
    assert_eq!(decoder.entity.as_deref(), Some("visl-proc"));
    assert!(decoder.media_node.is_some());
    assert!(decoder.multiplanar);
    assert!(decoder.supports_requests);
    // visl holds CAPTURE buffers for every coded format by default.
    assert!(decoder.coded_formats.iter().all(|f| f.holds_capture));

    // OUTPUT formats: "[4]: 'S264' (H.264 Parsed Slice Data, compressed)".
    let listing = v4l2_ctl(&["-d", &dev, "--list-formats-out"]);
    let oracle: Vec<(String, String)> = listing
        .lines()
        .filter_map(|l| {
            let rest = l.trim().strip_prefix('[')?;
            let (_, rest) = rest.split_once("]: '")?;
            let (fourcc, rest) = rest.split_once("' (")?;
            let description = rest.strip_suffix(')')?;
            let description = description
                .strip_suffix(", compressed")
                .unwrap_or(description);
            Some((fourcc.to_string(), description.to_string()))
        })
        .collect();
    let ours: Vec<(String, String)> = decoder
        .coded_formats
        .iter()
        .map(|f| (fourcc_text(f.fourcc), f.description.clone()))
        .collect();
    assert!(
        oracle.len() >= 5,
        "v4l2-ctl listing not understood:\n{listing}"
    );
    assert_eq!(ours, oracle);

    // Frame sizes: "Size: Stepwise 64x64 - 4096x2304 with step 1/1".
    for format in &decoder.coded_formats {
        let listing = v4l2_ctl(&[
            "-d",
            &dev,
            &format!("--list-framesizes={}", fourcc_text(format.fourcc)),
        ]);
        let sizes = format
            .sizes
            .unwrap_or_else(|| panic!("no sizes for {}", fourcc_text(format.fourcc)));
        let expected = format!(
            "Stepwise {}x{} - {}x{} with step {}/{}",
            sizes.min_width,
            sizes.min_height,
            sizes.max_width,
            sizes.max_height,
            sizes.step_width,
            sizes.step_height
        );
        assert!(
            listing.contains(&expected),
            "{}: expected '{expected}' in:\n{listing}",
            fourcc_text(format.fourcc)
        );
    }

    // H.264 menus: "h264_decode_mode 0x00a40900 (menu) : ..." then "0: Slice-Based".
    let menus = v4l2_ctl(&["-d", &dev, "-L"]);
    for (name, id) in [
        (
            "h264_decode_mode",
            bindings::V4L2_CID_STATELESS_H264_DECODE_MODE,
        ),
        (
            "h264_start_code",
            bindings::V4L2_CID_STATELESS_H264_START_CODE,
        ),
    ] {
        let menu = decoder.menu(id).unwrap_or_else(|| panic!("{name} missing"));
        let block: Vec<&str> = menus
            .lines()
            .skip_while(|l| !l.trim_start().starts_with(name))
            .skip(1)
            .take_while(|l| {
                l.trim()
                    .split_once(": ")
                    .is_some_and(|(n, _)| n.parse::<u32>().is_ok())
            })
            .map(str::trim)
            .collect();
        let ours: Vec<String> = menu
            .items
            .iter()
            .map(|(v, n)| format!("{v}: {n}"))
            .collect();
        assert_eq!(ours, block, "{name}");
    }
    assert!(
        decoder
            .menu(bindings::V4L2_CID_MPEG_VIDEO_H264_PROFILE)
            .is_none(),
        "visl has no H.264 profile menu"
    );

    // --device path finds the same media node and entity.
    let probed = discovery::probe_device(&decoder.video_node).expect("probe_device");
    assert_eq!(probed.media_node, decoder.media_node);
    assert_eq!(probed.entity, decoder.entity);

    // Choosing: H.264 320x240 fits; 8192x8192 does not, and says why.
    let needs = StreamRequirements {
        coded_format: coded::H264_SLICE,
        width: 320,
        height: 240,
        profile: Some(reel::v4l2::h264::profile_need(66)),
    };
    assert_eq!(
        found.choose(&needs).expect("choose").video_node,
        decoder.video_node
    );
    let huge = StreamRequirements {
        width: 8192,
        height: 8192,
        ..needs
    };
    let err = found.choose(&huge).unwrap_err().to_string();
    assert!(err.contains(&dev) && err.contains("8192x8192"), "{err}");
}

#[test]
#[ignore = "needs visl: runs in the test guest (visl_guest_suite)"]
fn inguest_frames_round_trip_and_buffers_come_back() {
    let aus = clip("REEL_VISL_CLIP");
    assert!(aus.len() >= 20);
    let decoder = visl();
    let trace = Trace::start();
    let mut session = Session::open(session_config(&decoder)).expect("open session");
    let capture_count = session.capture_buffer_count();
    println!(
        "granted {} OUTPUT, {capture_count} CAPTURE; layout {:?}",
        session.output_buffer_count(),
        session.layout()
    );
    assert!(capture_count >= 1);
    let layout = session.layout().clone();
    assert_eq!(layout.format.name, "NV12");
    assert!(layout.coded_width >= 320 && layout.coded_height >= 240);

    // More pictures than CAPTURE buffers: only possible if they come back.
    let total = (capture_count * 3).min(aus.len());
    let mut alive: Vec<DecodedFrame> = Vec::new();
    let mut returned = Vec::new();
    let mut buffers_used = std::collections::BTreeSet::new();
    for (i, au) in aus.iter().take(total).enumerate() {
        let bitstream: Vec<u8> = au.slices.concat();
        let controls = frame_controls(i as u16, 40);
        session
            .submit(DecodeRequest {
                timestamp_ns: timestamp(i),
                controls: &controls,
                bitstream: Bitstream::whole(&bitstream),
                hold_capture: false,
            })
            .unwrap_or_else(|e| panic!("submit {i}: {e}"));
        // Keep the frames of the last two pictures alive, drop older ones.
        for frame in session
            .poll_completed(Duration::from_millis(500))
            .expect("poll")
        {
            buffers_used.insert(frame.buffer_index);
            returned.push(frame.timestamp_ns);
            assert!(!frame.error);
            alive.push(frame);
        }
        while alive.len() > 2 {
            check_cpu_planes(&alive.remove(0));
        }
    }
    returned.extend(
        session
            .drain()
            .expect("drain")
            .iter()
            .map(|f| f.timestamp_ns),
    );
    assert_eq!(session.in_flight(), 0);
    // Every timestamp came back, in decode order, through at most
    // `capture_count` buffers.
    assert_eq!(returned, (0..total).map(timestamp).collect::<Vec<_>>());
    assert!(buffers_used.len() <= capture_count);
    trace_guard_read(&trace, total);
}

fn trace_guard_read(trace: &Trace, total: usize) {
    let text = trace.read();
    let frame_nums = trace_values(&text, "frame_num");
    assert_eq!(
        frame_nums,
        (0..total as i64).collect::<Vec<_>>(),
        "visl saw these frame_num values"
    );
    let levels = trace_values(&text, "level_idc");
    assert_eq!(levels.len(), total);
    assert!(levels.iter().all(|&l| l == 40), "{levels:?}");
}

fn check_cpu_planes(frame: &DecodedFrame) {
    use reel::frame::CpuPlanes;
    let planes = frame.cpu_planes().expect("NV12 is CPU-readable");
    let layout = frame.hold.layout();
    let luma = planes.plane(0);
    let chroma = planes.plane(1);
    assert_eq!(planes.stride(0), layout.planes[0].0 as usize);
    assert!(luma.len() >= planes.stride(0) * layout.coded_height as usize);
    assert!(chroma.len() >= planes.stride(1) * (layout.coded_height as usize / 2));
    // visl paints colour bars and text: the picture is not blank.
    assert!(luma.iter().any(|&b| b != luma[0]));
}

#[test]
#[ignore = "needs visl: runs in the test guest (visl_guest_suite)"]
fn inguest_timestamps_round_trip() {
    let aus = clip("REEL_VISL_CLIP");
    let decoder = visl();
    let mut session = Session::open(session_config(&decoder)).expect("open session");
    let total = 12.min(aus.len());
    let mut returned = Vec::new();
    for (i, au) in aus.iter().take(total).enumerate() {
        let bitstream: Vec<u8> = au.slices.concat();
        let controls = frame_controls(i as u16, 30);
        session
            .submit(DecodeRequest {
                timestamp_ns: timestamp(i),
                controls: &controls,
                bitstream: Bitstream::whole(&bitstream),
                hold_capture: false,
            })
            .unwrap_or_else(|e| panic!("submit {i}: {e}"));
        returned.extend(
            session
                .poll_completed(Duration::from_millis(500))
                .expect("poll")
                .into_iter()
                .map(|f| f.timestamp_ns),
        );
    }
    returned.extend(
        session
            .drain()
            .expect("drain")
            .into_iter()
            .map(|f| f.timestamp_ns),
    );
    let expected: Vec<u64> = (0..total).map(timestamp).collect();
    assert_eq!(returned, expected);
}

#[test]
#[ignore = "needs visl: runs in the test guest (visl_guest_suite)"]
fn inguest_references_keep_buffers_from_the_driver() {
    let aus = clip("REEL_VISL_CLIP");
    let decoder = visl();
    let mut session = Session::open(session_config(&decoder)).expect("open session");
    let count = session.capture_buffer_count();
    let bitstream: Vec<u8> = aus[0].slices.concat();
    let submit = |session: &mut Session, i: usize| {
        let controls = frame_controls(i as u16, 30);
        session.submit(DecodeRequest {
            timestamp_ns: timestamp(i),
            controls: &controls,
            bitstream: Bitstream::whole(&bitstream),
            hold_capture: false,
        })
    };
    // Decode `count` pictures; drop every frame but keep each as a reference.
    let mut references = Vec::new();
    for i in 0..count {
        submit(&mut session, i).unwrap_or_else(|e| panic!("submit {i}: {e}"));
        let frames = session
            .poll_completed(Duration::from_millis(500))
            .expect("poll");
        references.extend(frames.iter().map(|f| f.timestamp_ns));
        session.set_references(&references);
    }
    assert_eq!(references.len(), count, "every picture came back");
    // Every CAPTURE buffer is a reference now: the next request must wait.
    match submit(&mut session, count) {
        Err(SessionError::NoCaptureBuffer { count: c }) => assert_eq!(c, count),
        other => panic!("expected NoCaptureBuffer, got {:?}", other.err()),
    }
    // One picture stops being a reference: its buffer is reused, and only it.
    session.set_references(&references[1..]);
    submit(&mut session, count).expect("submit after releasing one reference");
    let frames = session
        .poll_completed(Duration::from_millis(500))
        .expect("poll");
    assert_eq!(frames.len(), 1);
    assert_eq!(frames[0].timestamp_ns, timestamp(count));
    // A frame alive also keeps its buffer: drop the reference, keep the frame.
    session.set_references(&references[2..]);
    let held = frames;
    submit(&mut session, count + 1).expect("a buffer was freed by the reference list");
    let next = session
        .poll_completed(Duration::from_millis(500))
        .expect("poll");
    assert_eq!(next.len(), 1);
    assert_ne!(next[0].buffer_index, held[0].buffer_index);
    match submit(&mut session, count + 2) {
        Err(SessionError::NoCaptureBuffer { .. }) => {}
        other => panic!(
            "expected NoCaptureBuffer while frames are alive, got {:?}",
            other.err()
        ),
    }
    drop(held);
    submit(&mut session, count + 2).expect("the dropped frame's buffer is free again");
}

#[test]
#[ignore = "needs visl: runs in the test guest (visl_guest_suite)"]
fn inguest_bad_controls_fail_clearly() {
    let aus = clip("REEL_VISL_CLIP");
    let decoder = visl();
    let mut config = session_config(&decoder);
    config.required_controls = vec![bindings::V4L2_CID_STATELESS_H264_DECODE_PARAMS];
    let mut session = Session::open(config).expect("open session");
    let bitstream: Vec<u8> = aus[0].slices.concat();

    // A request without its decode parameters never reaches the driver.
    let mut controls = frame_controls(0, 30);
    controls.pop();
    let err = session
        .submit(DecodeRequest {
            timestamp_ns: timestamp(0),
            controls: &controls,
            bitstream: Bitstream::whole(&bitstream),
            hold_capture: false,
        })
        .unwrap_err();
    println!("missing control: {err}");
    assert!(
        matches!(err, SessionError::MissingControl(id) if id == bindings::V4L2_CID_STATELESS_H264_DECODE_PARAMS)
    );
    assert!(err.to_string().contains("H264_DECODE_PARAMS"), "{err}");

    // An SPS the kernel's validation refuses (log2_max_frame_num_minus4
    // above 12).
    let mut controls = frame_controls(0, 30);
    let mut bad = h264_sps(30);
    bad.log2_max_frame_num_minus4 = 13;
    controls[0] = ExtControl::compound(bindings::V4L2_CID_STATELESS_H264_SPS, bad);
    let err = session
        .submit(DecodeRequest {
            timestamp_ns: timestamp(0),
            controls: &controls,
            bitstream: Bitstream::whole(&bitstream),
            hold_capture: false,
        })
        .unwrap_err();
    println!("invalid SPS: {err}");
    match &err {
        SessionError::Controls {
            errno,
            error_idx,
            count,
            failing_control,
        } => {
            assert_eq!(*errno, v4l2r::nix::errno::Errno::EINVAL);
            assert_eq!(*count, 4);
            // The kernel names the control (index 0) or, for a validation
            // failure, none (index == count).
            assert!(*error_idx == 0 || *error_idx == 4, "error_idx {error_idx}");
            if *error_idx == 0 {
                assert_eq!(
                    *failing_control,
                    Some(bindings::V4L2_CID_STATELESS_H264_SPS)
                );
            }
        }
        other => panic!("expected a control error, got {other}"),
    }

    // A control id the driver does not have, at index 2.
    let mut controls = frame_controls(0, 30);
    controls.insert(
        2,
        ExtControl::value(bindings::V4L2_CID_STATELESS_H264_DECODE_MODE + 0x80, 0),
    );
    let err = session
        .submit(DecodeRequest {
            timestamp_ns: timestamp(0),
            controls: &controls,
            bitstream: Bitstream::whole(&bitstream),
            hold_capture: false,
        })
        .unwrap_err();
    println!("unknown control: {err}");
    match &err {
        SessionError::Controls {
            error_idx,
            count,
            failing_control,
            ..
        } => {
            // visl's kernel answers error_idx == count for a request control it
            // does not have; the session then finds the culprit with TRY.
            assert!(
                *error_idx == 2 || error_idx == count,
                "error_idx {error_idx}"
            );
            assert_eq!(
                *failing_control,
                Some(bindings::V4L2_CID_STATELESS_H264_DECODE_MODE + 0x80)
            );
            assert!(err.to_string().contains("0x00a40980"), "{err}");
        }
        other => panic!("expected a control error, got {other}"),
    }

    // The session is still usable: the failed requests went back to the pool.
    let controls = frame_controls(0, 30);
    for i in 0..4 {
        session
            .submit(DecodeRequest {
                timestamp_ns: timestamp(i),
                controls: &controls,
                bitstream: Bitstream::whole(&bitstream),
                hold_capture: false,
            })
            .unwrap_or_else(|e| panic!("submit {i} after errors: {e}"));
    }
    let frames = session.drain().expect("drain");
    assert_eq!(
        frames.iter().map(|f| f.timestamp_ns).collect::<Vec<_>>(),
        (0..4).map(timestamp).collect::<Vec<_>>()
    );
}

/// Sets visl's simulated processing time for the guard's life.
struct TransTime;

const TRANSTIME: &str = "/sys/module/visl/parameters/visl_transtime_ms";

impl TransTime {
    fn set(ms: u32) -> Self {
        std::fs::write(TRANSTIME, ms.to_string()).expect("set visl_transtime_ms");
        let now = std::fs::read_to_string(TRANSTIME).expect("read visl_transtime_ms");
        assert_eq!(now.trim(), ms.to_string());
        TransTime
    }
}

impl Drop for TransTime {
    fn drop(&mut self) {
        let _ = std::fs::write(TRANSTIME, "0");
    }
}

#[test]
#[ignore = "needs visl: runs in the test guest (visl_guest_suite)"]
fn inguest_in_flight_requests_keep_their_references() {
    let aus = clip("REEL_VISL_CLIP");
    let decoder = visl();
    let mut session = Session::open(session_config(&decoder)).expect("open session");
    let count = session.capture_buffer_count();
    let bitstream: Vec<u8> = aus[0].slices.concat();
    let submit = |session: &mut Session, i: usize| {
        let controls = frame_controls(i as u16, 30);
        session.submit(DecodeRequest {
            timestamp_ns: timestamp(i),
            controls: &controls,
            bitstream: Bitstream::whole(&bitstream),
            hold_capture: false,
        })
    };
    // Every buffer but one holds a reference.
    let mut references = Vec::new();
    for i in 0..count - 1 {
        submit(&mut session, i).unwrap_or_else(|e| panic!("submit {i}: {e}"));
        let frames = session
            .poll_completed(Duration::from_millis(500))
            .expect("poll");
        references.extend(frames.iter().map(|f| f.timestamp_ns));
        session.set_references(&references);
    }
    // A picture decoding from all of them takes the last buffer; visl
    // decodes it at once, but it stays in flight until collected.
    submit(&mut session, count - 1).expect("the last free buffer");
    // The codec lets every reference go while that request is in flight:
    // their buffers must not go back to the driver until it completes. So
    // the next request finds no CAPTURE buffer and waits: collecting gives
    // the in-flight picture alone. (Were the references requeued, visl
    // would decode the next request into one of them at once.)
    session.set_references(&[]);
    submit(&mut session, count).expect("queued, waiting for a buffer");
    let done = session
        .poll_completed(Duration::from_millis(500))
        .expect("poll");
    assert_eq!(
        done.iter().map(|f| f.timestamp_ns).collect::<Vec<_>>(),
        vec![timestamp(count - 1)],
        "a buffer an in-flight request reads was reused"
    );
    drop(done);
    // Completed, its references are free: the next submission gives them
    // back to the driver and both waiting pictures decode.
    submit(&mut session, count + 1).expect("submit");
    let mut later = Vec::new();
    for _ in 0..10 {
        later.extend(
            session
                .poll_completed(Duration::from_millis(200))
                .expect("poll")
                .into_iter()
                .map(|f| f.timestamp_ns),
        );
        if later.len() >= 2 {
            break;
        }
    }
    assert_eq!(later, vec![timestamp(count), timestamp(count + 1)]);
}

#[test]
#[ignore = "needs visl: runs in the test guest (visl_guest_suite)"]
fn inguest_visl_processing_time_runs_in_the_queue_call() {
    // visl's simulated processing time (visl_transtime_ms) is spent inside
    // MEDIA_REQUEST_IOC_QUEUE: v4l2-mem2mem runs the job in the caller's
    // context. So it delays submit, not completion, and cannot produce a
    // request that never completes (see the next test for that).
    let aus = clip("REEL_VISL_CLIP");
    let decoder = visl();
    let mut session = Session::open(session_config(&decoder)).expect("open session");
    let bitstream: Vec<u8> = aus[0].slices.concat();
    let controls = frame_controls(0, 30);
    let slow = TransTime::set(500);
    let start = Instant::now();
    session
        .submit(DecodeRequest {
            timestamp_ns: timestamp(0),
            controls: &controls,
            bitstream: Bitstream::whole(&bitstream),
            hold_capture: false,
        })
        .expect("submit");
    let in_submit = start.elapsed();
    let frames = session
        .poll_completed(Duration::from_millis(100))
        .expect("poll");
    drop(slow);
    println!("submit took {in_submit:?}; then {} frame(s)", frames.len());
    assert!(in_submit >= Duration::from_millis(500), "{in_submit:?}");
    assert_eq!(frames.len(), 1);
}

#[test]
#[ignore = "needs visl: runs in the test guest (visl_guest_suite)"]
fn inguest_stuck_request_times_out() {
    let aus = clip("REEL_VISL_CLIP");
    let decoder = visl();
    let mut config = session_config(&decoder);
    config.request_timeout = Duration::from_millis(300);
    let mut session = Session::open(config).expect("open session");
    let bitstream: Vec<u8> = aus[0].slices.concat();
    let controls = frame_controls(0, 30);
    // Stop the CAPTURE queue behind the session's back: the driver can
    // never run the job, so the request stays queued for ever.
    v4l2r::ioctl::streamoff(&session, v4l2r::QueueType::VideoCaptureMplane)
        .expect("STREAMOFF(CAPTURE)");
    session
        .submit(DecodeRequest {
            timestamp_ns: timestamp(0),
            controls: &controls,
            bitstream: Bitstream::whole(&bitstream),
            hold_capture: false,
        })
        .expect("submit");
    let start = Instant::now();
    let mut outcome = Ok(Vec::new());
    // Polling in short steps still ends at the request's deadline.
    while start.elapsed() < Duration::from_secs(5) {
        outcome = session.poll_completed(Duration::from_millis(50));
        if outcome.is_err() {
            break;
        }
        if let Ok(frames) = &outcome {
            let got: Vec<u64> = frames.iter().map(|f| f.timestamp_ns).collect();
            assert!(
                got.is_empty(),
                "a picture came back after {:?}: {got:?}",
                start.elapsed()
            );
        }
    }
    let waited = start.elapsed();
    println!(
        "timed out after {waited:?}: {}",
        outcome
            .as_ref()
            .err()
            .map(ToString::to_string)
            .unwrap_or_default()
    );
    match outcome {
        Err(SessionError::RequestTimeout { timestamp_ns, .. }) => {
            assert_eq!(timestamp_ns, timestamp(0))
        }
        other => panic!("expected a timeout, got {:?}", other.map(|f| f.len())),
    }
    assert!(waited < Duration::from_millis(1500), "took {waited:?}");
    // Recovery: reset drops the stuck request; decoding goes on.
    session.reset().expect("reset");
    let controls = frame_controls(1, 30);
    session
        .submit(DecodeRequest {
            timestamp_ns: timestamp(1),
            controls: &controls,
            bitstream: Bitstream::whole(&bitstream),
            hold_capture: false,
        })
        .expect("submit after reset");
    let frames = session.drain().expect("drain after reset");
    assert_eq!(
        frames.iter().map(|f| f.timestamp_ns).collect::<Vec<_>>(),
        vec![timestamp(1)]
    );
}

#[test]
#[ignore = "needs visl: runs in the test guest (visl_guest_suite)"]
fn inguest_slices_share_one_capture_buffer() {
    let aus = clip("REEL_VISL_SLICED_CLIP");
    let decoder = visl();
    let mut config = session_config(&decoder);
    config.initial_controls[0] = ExtControl::value(
        bindings::V4L2_CID_STATELESS_H264_DECODE_MODE,
        bindings::v4l2_stateless_h264_decode_mode_V4L2_STATELESS_H264_DECODE_MODE_SLICE_BASED
            as i32,
    );
    let mut session = Session::open(config).expect("open session");
    let trace = Trace::start();
    let pictures = 3;
    for (i, au) in aus.iter().take(pictures).enumerate() {
        assert_eq!(au.slices.len(), 4);
        for (s, slice) in au.slices.iter().enumerate() {
            let controls = frame_controls(i as u16, 30);
            // Every slice holds the buffer; the next picture's first slice
            // (another timestamp) or FLUSH releases it.
            session
                .submit(DecodeRequest {
                    timestamp_ns: timestamp(i),
                    controls: &controls,
                    bitstream: Bitstream::whole(slice),
                    hold_capture: true,
                })
                .unwrap_or_else(|e| panic!("picture {i} slice {s}: {e}"));
        }
    }
    let frames = session
        .drain()
        .expect("drain (FLUSH releases the last picture)");
    let returned: Vec<u64> = frames.iter().map(|f| f.timestamp_ns).collect();
    assert_eq!(returned, (0..pictures).map(timestamp).collect::<Vec<_>>());
    // visl ran once per slice.
    let text = trace.read();
    assert_eq!(trace_values(&text, "frame_num").len(), pictures * 4);
    // v4l2-mem2mem's FLUSH looks at the last queued CAPTURE buffer, not the
    // held one (the first): with more buffers queued it releases nothing,
    // and the session took the picture back by restarting CAPTURE.
    println!("held-buffer restarts: {}", session.held_buffer_restarts());
    assert_eq!(session.held_buffer_restarts(), 1);

    // The usual way: the last slice of a picture does not hold.
    drop(frames);
    let au = &aus[pictures];
    for (s, slice) in au.slices.iter().enumerate() {
        let controls = frame_controls(pictures as u16, 30);
        let last = s + 1 == au.slices.len();
        session
            .submit(DecodeRequest {
                timestamp_ns: timestamp(pictures),
                controls: &controls,
                bitstream: Bitstream::whole(slice),
                hold_capture: !last,
            })
            .unwrap_or_else(|e| panic!("slice {s}: {e}"));
    }
    let frames = session.drain().expect("drain");
    let returned: Vec<u64> = frames.iter().map(|f| f.timestamp_ns).collect();
    assert_eq!(returned, vec![timestamp(pictures)]);
    assert_eq!(session.held_buffer_restarts(), 1, "no restart needed");
}

#[test]
#[ignore = "needs visl: runs in the test guest (visl_guest_suite)"]
fn inguest_garbage_and_truncated_input_do_not_hang() {
    let aus = clip("REEL_VISL_CLIP");
    let decoder = visl();
    let mut session = Session::open(session_config(&decoder)).expect("open session");
    let controls = frame_controls(0, 30);
    let start = Instant::now();
    let mut count = 0;
    let mut seed = 0x1234_5678u32;
    for (i, au) in aus.iter().take(10).enumerate() {
        let mut bitstream: Vec<u8> = au.slices.concat();
        match i % 3 {
            0 => bitstream.truncate(bitstream.len() / 3 + 1),
            1 => bitstream.iter_mut().skip(8).for_each(|b| {
                seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
                *b = (seed >> 16) as u8;
            }),
            _ => {}
        }
        session
            .submit(DecodeRequest {
                timestamp_ns: timestamp(i),
                controls: &controls,
                bitstream: Bitstream::whole(&bitstream),
                hold_capture: false,
            })
            .unwrap_or_else(|e| panic!("submit {i}: {e}"));
        count += session
            .poll_completed(Duration::from_millis(200))
            .expect("poll")
            .len();
    }
    count += session.drain().expect("drain").len();
    assert_eq!(count, 10);
    // A timestamp still held by a frame cannot name a new picture.
    let bitstream: Vec<u8> = aus[0].slices.concat();
    session
        .submit(DecodeRequest {
            timestamp_ns: timestamp(30),
            controls: &controls,
            bitstream: Bitstream::whole(&bitstream),
            hold_capture: false,
        })
        .expect("submit");
    let alive = session.drain().expect("drain");
    let err = session
        .submit(DecodeRequest {
            timestamp_ns: timestamp(30),
            controls: &controls,
            bitstream: Bitstream::whole(&bitstream),
            hold_capture: false,
        })
        .unwrap_err();
    assert!(matches!(err, SessionError::DuplicateTimestamp(_)), "{err}");
    drop(alive);
    // An empty or oversized bitstream is refused before reaching the driver.
    let err = session
        .submit(DecodeRequest {
            timestamp_ns: timestamp(20),
            controls: &controls,
            bitstream: Bitstream::whole(&[]),
            hold_capture: false,
        })
        .unwrap_err();
    assert!(matches!(err, SessionError::EmptyBitstream));
    let huge = vec![0u8; 64 << 20];
    let err = session
        .submit(DecodeRequest {
            timestamp_ns: timestamp(21),
            controls: &controls,
            bitstream: Bitstream::whole(&huge),
            hold_capture: false,
        })
        .unwrap_err();
    assert!(
        matches!(err, SessionError::BitstreamTooLarge { .. }),
        "{err}"
    );
    assert!(start.elapsed() < Duration::from_secs(10));
}

/// A stand-in for the H.264 layer: every access unit is one frame-based
/// request with the test's controls; each picture references the previous
/// one; output is in decode order.
struct TestCodec {
    previous: Option<u64>,
    decoded: Vec<OutputPicture>,
    frame_num: u16,
}

impl StatelessCodec for TestCodec {
    fn decode(
        &mut self,
        packet: &[u8],
        timestamps: &mut Timestamps,
    ) -> Result<Vec<Request>, CodecError> {
        let units = annexb::access_units(packet);
        let Some(au) = units.first() else {
            return Err(CodecError::Bitstream(Damage::H264 {
                device: "test codec".into(),
                error: H264Error::Invalid("no slice in access unit"),
            }));
        };
        let timestamp_ns = timestamps.next_picture();
        self.frame_num = self.frame_num.wrapping_add(1);
        self.previous = self.decoded.last().map(|p| p.timestamp_ns);
        self.decoded.push(OutputPicture {
            timestamp_ns,
            packet: timestamps.packet(),
            visible: (320, 240),
            sample_aspect: (1, 1),
        });
        Ok(vec![Request {
            timestamp_ns,
            controls: frame_controls(self.frame_num, 30),
            bitstream: vec![BitstreamPart::Owned(au.slices.concat())],
            hold_capture: false,
            sequence: None,
            summary: Default::default(),
        }])
    }
    fn references(&self) -> Vec<u64> {
        self.previous.into_iter().collect()
    }
    fn take_output(&mut self, _end_of_stream: bool) -> Vec<OutputPicture> {
        std::mem::take(&mut self.decoded)
    }
    fn reset(&mut self) {
        self.previous = None;
        self.decoded.clear();
    }
    fn describe(&self) -> String {
        "test codec".into()
    }
}

fn decode_all(decoder_info: &DecoderInfo, aus: &[annexb::AccessUnit]) -> Vec<(i64, String)> {
    use md5::{Digest, Md5};
    use reel::v4l2::decoder::V4l2Decoder;
    fn assert_send<T: Send>(_: &T) {}
    let codec = TestCodec {
        previous: None,
        decoded: Vec::new(),
        frame_num: 0,
    };
    let mut config = session_config(decoder_info);
    config.capture.frames_held_downstream = 8;
    let mut decoder = V4l2Decoder::new(config, Box::new(codec), (1, 15360)).expect("decoder");
    assert_send(&decoder);
    let mut out = Vec::new();
    let take = |frame: reel::frame::Frame, out: &mut Vec<(i64, String)>| {
        assert_eq!((frame.width, frame.height), (320, 240));
        assert_eq!(frame.packed_size(), 320 * 240 * 3 / 2);
        assert_eq!(
            frame.pts,
            Duration::from_nanos(frame.pts_raw as u64 * 1_000_000_000 / 15360)
        );
        let mut md5 = Md5::new();
        frame.for_each_packed_row(|row| md5.update(row));
        out.push((frame.pts_raw, format!("{:x}", md5.finalize())));
    };
    for (i, au) in aus.iter().enumerate() {
        // The splitter's output is Annex-B again: what crate::media hands over.
        let packet: Vec<u8> = au.slices.concat();
        decoder
            .send(&packet, None, i as i64 * 512, 512)
            .unwrap_or_else(|e| panic!("send {i}: {e}"));
        while let Some(frame) = decoder.receive().expect("receive") {
            take(frame, &mut out);
        }
    }
    decoder.send_eof().expect("eof");
    while let Some(frame) = decoder.receive().expect("receive") {
        take(frame, &mut out);
    }
    assert_eq!(decoder.errors, 0);
    out
}

#[test]
#[ignore = "needs visl: runs in the test guest (visl_guest_suite)"]
fn inguest_decoder_gives_cpu_frames() {
    let aus = clip("REEL_VISL_CLIP");
    let decoder = visl();
    let first = decode_all(&decoder, &aus);
    // Every packet came out once, with its pts, in order.
    assert_eq!(
        first.iter().map(|f| f.0).collect::<Vec<_>>(),
        (0..aus.len() as i64).map(|i| i * 512).collect::<Vec<_>>()
    );
    // visl writes each picture's timestamp into it: pictures differ, and a
    // second run gives the same bytes (visl output is deterministic).
    let distinct: std::collections::HashSet<&String> = first.iter().map(|f| &f.1).collect();
    assert_eq!(
        distinct.len(),
        first.len(),
        "pictures with different timestamps must differ"
    );
    let second = decode_all(&decoder, &aus);
    assert_eq!(first, second);
}

#[test]
#[ignore = "needs visl: runs in the test guest (visl_guest_suite)"]
fn inguest_reconfigure_for_a_new_resolution() {
    let aus = clip("REEL_VISL_CLIP");
    let decoder = visl();
    let mut session = Session::open(session_config(&decoder)).expect("open session");
    let bitstream: Vec<u8> = aus[0].slices.concat();
    let controls = frame_controls(0, 30);
    let submit = |session: &mut Session, i: usize| {
        session.submit(DecodeRequest {
            timestamp_ns: timestamp(i),
            controls: &controls,
            bitstream: Bitstream::whole(&bitstream),
            hold_capture: false,
        })
    };
    submit(&mut session, 0).expect("submit");
    let frames = session.drain().expect("drain");
    assert_eq!(frames.len(), 1);

    let mut bigger = session_config(&decoder);
    bigger.width = 640;
    bigger.height = 480;
    bigger.capture_buffers = 4;
    // A frame still alive keeps its buffer through the reallocation (the
    // node is opened again, freeing every other buffer first), its picture
    // untouched.
    let picture = |frame: &DecodedFrame| -> Vec<u8> {
        use reel::frame::CpuPlanes;
        let planes = frame.cpu_planes().expect("cpu planes");
        planes.plane(0).to_vec()
    };
    let before = picture(&frames[0]);
    session
        .reconfigure(&bigger)
        .expect("reconfigure with a frame alive");
    assert!(before == picture(&frames[0]), "the held picture changed");
    drop(frames);
    let layout = session.layout();
    assert_eq!((layout.coded_width, layout.coded_height), (640, 480));
    assert_eq!(layout.planes[0].0, 640);
    // Decoding goes on at the new size.
    submit(&mut session, 1).expect("submit after reconfigure");
    let frames = session.drain().expect("drain after reconfigure");
    assert_eq!(
        frames.iter().map(|f| f.timestamp_ns).collect::<Vec<_>>(),
        vec![timestamp(1)]
    );
    let planes = frames[0].cpu_planes().expect("cpu planes");
    use reel::frame::CpuPlanes;
    assert!(planes.plane(0).len() >= 640 * 480);
}
