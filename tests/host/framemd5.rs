//! `reel --output framemd5` against the oracle `ffmpeg -f framemd5` on every
//! generated clip: same header (but `#software`), same rows (timestamps,
//! sizes, hashes) in the same order.

use crate::support;
use support::media::clip;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use reel::cli::Hwdec;
use reel::display::framemd5::Framemd5Writer;
use reel::media::Demuxer;
use reel::player::decoder_choice::DecoderChoice;
use reel::player::pipeline::{Pipeline, PipelineOptions};
use reel::sw::SwOptions;

fn run(cmd: &mut Command) -> Output {
    let out = cmd.output().expect("spawn");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "panic: {stderr}");
    out
}

fn ffmpeg_framemd5(path: &Path, extra: &[&str]) -> String {
    let out = run(Command::new("ffmpeg")
        .args(["-nostdin", "-hide_banner", "-loglevel", "error", "-i"])
        .arg(path)
        .args(["-autoscale", "0"])
        .args(extra)
        .args(["-f", "framemd5", "-"]));
    assert!(
        out.status.success(),
        "ffmpeg failed on {}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 framemd5")
}

fn reel_framemd5(path: &Path, extra: &[&str]) -> (Output, String) {
    let out = run(Command::new(env!("CARGO_BIN_EXE_reel"))
        .args(["--hwdec=no", "--output", "framemd5"])
        .args(extra)
        .arg(path));
    let text = String::from_utf8(out.stdout.clone()).expect("utf-8 framemd5");
    (out, text)
}

/// Lines that must match: everything but the `#software` line, which names
/// the writing program.
fn comparable(framemd5: &str) -> Vec<&str> {
    framemd5
        .lines()
        .filter(|l| !l.starts_with("#software"))
        .collect()
}

fn rows(framemd5: &str) -> Vec<&str> {
    framemd5.lines().filter(|l| !l.starts_with('#')).collect()
}

fn assert_same(name: &str, ours: &str, theirs: &str) {
    let (a, b) = (comparable(ours), comparable(theirs));
    if let Some(i) = (0..a.len().max(b.len())).find(|&i| a.get(i) != b.get(i)) {
        panic!(
            "{name}: framemd5 differs from ffmpeg's at line {}:\n  reel:   {:?}\n  ffmpeg: {:?}\n({} vs {} lines)",
            i + 1,
            a.get(i),
            b.get(i),
            a.len(),
            b.len()
        );
    }
    assert!(
        !rows(theirs).is_empty(),
        "{name}: ffmpeg decoded no frame: bad oracle"
    );
}

fn check_clip(name: &str) {
    let path = clip(name);
    let (out, ours) = reel_framemd5(&path, &[]);
    assert!(
        out.status.success(),
        "reel failed on {name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let theirs = ffmpeg_framemd5(&path, &[]);
    assert_same(name, &ours, &theirs);
    // Every generated clip is at least one second at 30 fps.
    assert!(
        rows(&ours).len() >= 30,
        "{name}: {} frames",
        rows(&ours).len()
    );
}

macro_rules! clip_tests {
    ($($test:ident => $file:literal,)*) => {$(
        #[test]
        fn $test() {
            check_clip($file);
        }
    )*};
}

clip_tests! {
    h264_baseline_mp4 => "h264_baseline.mp4",
    h264_main_bframes_mkv => "h264_main_bframes.mkv",
    h264_high_ts => "h264_high.ts",
    h264_scaling_matrix_mp4 => "h264_scaling_matrix.mp4",
    h264_weighted_mp4 => "h264_weighted.mp4",
    h264_slices_mp4 => "h264_slices.mp4",
    h264_mbaff_ts => "h264_mbaff.ts",
    h264_odd_size_mp4 => "h264_odd_size.mp4",
    hevc_main_mkv => "hevc_main.mkv",
    hevc_main10_mp4 => "hevc_main10.mp4",
    vp8_webm => "vp8.webm",
    vp9_webm => "vp9.webm",
    av1_mkv => "av1.mkv",
    mpeg2_ts => "mpeg2.ts",
}

/// Two segments of different sizes joined in one transport stream: the whole
/// output must match, across the change.
#[test]
fn h264_resolution_change_ts() {
    check_clip("h264_resolution_change.ts");
    let theirs = ffmpeg_framemd5(&clip("h264_resolution_change.ts"), &[]);
    let sizes: std::collections::BTreeSet<&str> = rows(&theirs)
        .iter()
        .filter_map(|r| r.split(',').nth(4))
        .map(str::trim)
        .collect();
    assert!(
        sizes.len() >= 2,
        "oracle shows no resolution change: frame sizes {sizes:?}"
    );
}

/// One decoding thread gives the same pictures as many (frame threading
/// reorders work, never output).
#[test]
fn single_thread_matches_ffmpeg() {
    for name in ["h264_main_bframes.mkv", "hevc_main.mkv", "h264_slices.mp4"] {
        let path = clip(name);
        let (out, ours) = reel_framemd5(&path, &["--threads", "1"]);
        assert!(out.status.success(), "{name}: {out:?}");
        assert_same(name, &ours, &ffmpeg_framemd5(&path, &[]));
    }
}

/// framemd5 of a file decoded with `for_display`, and the layouts seen.
fn display_framemd5(path: &Path) -> (String, Vec<&'static str>) {
    let mut pipeline = Pipeline::open(
        path,
        &PipelineOptions {
            threads: 0,
            for_display: true,
            // The software path's display conversions are what is compared.
            decoder: DecoderChoice {
                hwdec: Hwdec::No,
                ..DecoderChoice::default()
            },
        },
    )
    .expect("open");
    let mut ours = Vec::new();
    let mut writer = Framemd5Writer::new(&mut ours, pipeline.stream());
    let mut formats = std::collections::BTreeSet::new();
    while let Some(frame) = pipeline.next_frame().expect("decode") {
        formats.insert(frame.format.av_name());
        writer.write_frame(&frame).expect("write");
    }
    assert_eq!(pipeline.errors(), 0, "{:?}", pipeline.error_summary());
    writer.finish().expect("flush");
    (
        String::from_utf8(ours).expect("utf-8"),
        formats.into_iter().collect(),
    )
}

/// With `for_display`, layouts without a DRM fourcc go through libswscale
/// (10-bit 4:2:0 to P010, deeper or wider chroma to P010 too); 8-bit 4:2:2
/// is kept. The oracle is ffmpeg converting to the same layout with its
/// default scaler.
#[test]
fn display_conversion_matches_ffmpeg() {
    let make = |name: &str, args: &[&str]| -> PathBuf {
        let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
        let status = Command::new("ffmpeg")
            .args(["-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i"])
            .arg("testsrc2=size=96x64:rate=30:duration=0.5")
            .args(args)
            .arg(&path)
            .status()
            .expect("run ffmpeg");
        assert!(status.success(), "making {name}");
        path
    };
    let x264 = ["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt"];
    let x265 = [
        "-c:v",
        "libx265",
        "-x265-params",
        "log-level=error",
        "-pix_fmt",
    ];
    let cases = [
        (clip("hevc_main10.mp4"), "p010le"),
        (
            make("c422p10.mkv", &[&x264[..], &["yuv422p10le"]].concat()),
            "p010le",
        ),
        (
            make("c444p12.mkv", &[&x265[..], &["yuv444p12le"]].concat()),
            "p010le",
        ),
        (
            make("c422p.mkv", &[&x264[..], &["yuv422p"]].concat()),
            "yuv422p",
        ),
    ];
    for (path, layout) in cases {
        let (ours, formats) = display_framemd5(&path);
        assert_eq!(formats, [layout], "{}", path.display());
        let theirs = ffmpeg_framemd5(&path, &["-pix_fmt", layout]);
        assert_same(&format!("{} as {layout}", path.display()), &ours, &theirs);
    }
}

#[test]
fn null_output_decodes_every_clip_silently() {
    for name in ["h264_high.ts", "vp9.webm", "av1.mkv", "hevc_main10.mp4"] {
        let out = run(Command::new(env!("CARGO_BIN_EXE_reel"))
            .args(["--hwdec=no", "--output", "null"])
            .arg(clip(name)));
        assert!(out.status.success(), "{name}: {out:?}");
        assert!(out.stdout.is_empty(), "{name}: null output wrote to stdout");
    }
}

/// After a seek and a decoder flush, decoding resumes at the keyframe with
/// the very pictures ffmpeg decodes there: the hashes after the seek are
/// the tail of ffmpeg's list for the whole file.
#[test]
fn seek_then_decode_gives_ffmpeg_frames() {
    use md5::{Digest, Md5};
    use reel::sw::SwDecoder;
    use std::time::Duration;

    for name in ["h264_baseline.mp4", "h264_main_bframes.mkv", "mpeg2.ts"] {
        let path = clip(name);
        let theirs: Vec<String> = rows(&ffmpeg_framemd5(&path, &[]))
            .iter()
            .filter_map(|r| r.rsplit(", ").next().map(str::to_owned))
            .collect();
        let mut demuxer = Demuxer::open(&path).expect("open");
        let mut decoder = SwDecoder::new(
            demuxer.stream(),
            SwOptions {
                threads: 0,
                for_display: false,
            },
        )
        .expect("decoder");
        // Decode a few frames first so the flush has something to drop.
        for _ in 0..5 {
            let packet = demuxer.next_packet().expect("read").expect("packet");
            decoder.send(&packet).expect("send");
            while decoder.receive().expect("receive").is_some() {}
        }
        let target = demuxer.stream().start_time + Duration::from_millis(900);
        demuxer.seek(target).expect("seek");
        decoder.discard();
        let mut ours = Vec::new();
        let mut hash = |frame: reel::frame::Frame| {
            assert_eq!(frame.epoch, 1, "{name}: frame from before the flush");
            let mut md5 = Md5::new();
            frame.for_each_packed_row(|row| md5.update(row));
            ours.push(format!("{:x}", md5.finalize()));
        };
        while let Some(packet) = demuxer.next_packet().expect("read") {
            decoder.send(&packet).expect("send");
            while let Some(frame) = decoder.receive().expect("receive") {
                hash(frame);
            }
        }
        decoder.send_eof().expect("eof");
        while let Some(frame) = decoder.receive().expect("receive") {
            hash(frame);
        }
        assert!(
            !ours.is_empty() && ours.len() < theirs.len(),
            "{name}: {} frames after the seek, {} in the file",
            ours.len(),
            theirs.len()
        );
        assert_eq!(
            ours[..],
            theirs[theirs.len() - ours.len()..],
            "{name}: frames after the seek"
        );
    }
}

/// A packet the decoder rejects is reported (not fatal); the packets up to
/// the next keyframe are skipped (and frames already in flight that may
/// reference the failed picture are dropped), and from that keyframe on the
/// pictures are exactly ffmpeg's. Single- and multi-threaded.
#[test]
fn decode_error_resumes_at_the_next_keyframe() {
    use md5::{Digest, Md5};
    use reel::sw::{SwDecoder, SwError};

    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("resume_vp9.webm");
    let status = Command::new("ffmpeg")
        .args(["-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i"])
        .arg("testsrc2=size=96x64:rate=30:duration=1")
        .args(["-c:v", "libvpx-vp9", "-deadline", "realtime", "-g", "10"])
        .args(["-auto-alt-ref", "0", "-lag-in-frames", "0"])
        .arg(&path)
        .status()
        .expect("run ffmpeg");
    assert!(status.success());
    let theirs: Vec<String> = rows(&ffmpeg_framemd5(&path, &[]))
        .iter()
        .filter_map(|r| r.rsplit(", ").next().map(str::to_owned))
        .collect();
    assert_eq!(theirs.len(), 30, "oracle frame count");
    // Frames 0..=2 before the damage, then 10.. from the next keyframe.
    let expected: Vec<String> = theirs[..3].iter().chain(&theirs[10..]).cloned().collect();

    for threads in [1, 0] {
        let mut demuxer = Demuxer::open(&path).expect("open");
        let opts = SwOptions {
            threads,
            for_display: false,
        };
        let mut decoder = SwDecoder::new(demuxer.stream(), opts).expect("decoder");
        let mut ours = Vec::new();
        let mut errors = 0;
        let step = |decoder: &mut SwDecoder, ours: &mut Vec<String>, errors: &mut u32| loop {
            match decoder.receive() {
                Ok(Some(frame)) => {
                    let mut md5 = Md5::new();
                    frame.for_each_packed_row(|row| md5.update(row));
                    ours.push(format!("{:x}", md5.finalize()));
                }
                Ok(None) => break,
                Err(SwError::Decode(_)) => *errors += 1,
                Err(e) => panic!("fatal error on a bad packet: {e}"),
            }
        };
        let mut index = 0;
        while let Some(mut packet) = demuxer.next_packet().expect("read") {
            if index == 3 {
                assert!(!packet.keyframe);
                // An invalid VP9 frame marker: the decoder must reject it.
                packet.data.to_mut().iter_mut().for_each(|b| *b = 0xff);
            }
            match decoder.send(&packet) {
                Ok(()) => {}
                Err(SwError::Decode(_)) => errors += 1,
                Err(e) => panic!("fatal error on a bad packet: {e}"),
            }
            step(&mut decoder, &mut ours, &mut errors);
            index += 1;
        }
        decoder.send_eof().expect("eof");
        step(&mut decoder, &mut ours, &mut errors);
        assert_eq!(errors, 1, "threads {threads}: decode errors reported");
        assert_eq!(ours, expected, "threads {threads}");
        // Packets 4..=9 are skipped or their frames dropped.
        assert_eq!(
            decoder.skipped_packets() + decoder.discarded_frames(),
            6,
            "threads {threads}"
        );
        if threads == 1 {
            assert_eq!(decoder.skipped_packets(), 6);
        }
    }
}

/// Timestamps (the `tb` line, pts and duration columns) follow ffmpeg's for
/// NTSC rates in millisecond (Matroska) and 90 kHz (MPEG-TS) time bases and
/// for B-frame reordering, on clips made here with the ffmpeg CLI.
#[test]
fn frame_rates_and_time_bases_match_ffmpeg() {
    let clips: [(&str, &str, &[&str]); 4] = [
        (
            "30000/1001",
            "mkv",
            &["-c:v", "libx264", "-preset", "ultrafast", "-bf", "2"],
        ),
        (
            "24000/1001",
            "ts",
            &["-c:v", "libx264", "-preset", "ultrafast", "-bf", "2"],
        ),
        (
            "25",
            "mp4",
            &["-c:v", "libx264", "-preset", "ultrafast", "-bf", "2"],
        ),
        ("60", "webm", &["-c:v", "libvpx", "-deadline", "realtime"]),
    ];
    for (rate, ext, codec) in clips {
        let path = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("rate_{}.{ext}", rate.replace('/', "_")));
        let status = Command::new("ffmpeg")
            .args(["-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i"])
            .arg(format!("testsrc2=size=64x48:rate={rate}:duration=2"))
            .args(codec)
            .arg(&path)
            .status()
            .expect("run ffmpeg");
        assert!(status.success(), "making {}", path.display());
        let (out, ours) = reel_framemd5(&path, &[]);
        assert!(out.status.success(), "{}: {out:?}", path.display());
        let theirs = ffmpeg_framemd5(&path, &[]);
        assert_same(&path.display().to_string(), &ours, &theirs);
        assert!(rows(&ours).len() >= 48, "{}", path.display());
    }
}
