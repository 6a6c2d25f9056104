//! reel side by side with FFmpeg and GStreamer on the same clips, in the same
//! run, reported as ratios (these machines are noisy: absolute times mean
//! little, ratios measured back to back do).
//!
//!   cargo bench --bench compare            all cases
//!   cargo bench --bench compare -- decode  only the cases whose name contains "decode"
//!
//! Cases:
//! - decode: `reel --output null` vs `ffmpeg -f null` vs GStreamer's
//!   `avdec_*` into `fakesink`, as fast as possible, all cores; wall time
//!   and CPU time (user + system). H.264 720p and 1080p, HEVC 720p.
//! - detile: the copy path's CPU conversion of a tiled 1920x1088 CAPTURE
//!   picture (NV12_4L4, NV12_32L32) to linear NV12: reel's detiler in
//!   process vs GStreamer's videoconvert (its pipeline's CPU time minus the
//!   same pipeline without the conversion); CPU ms per frame.
//! - present: real-time playback into weston 14 headless (GL renderer):
//!   `reel` vs `gst-launch-1.0 ... ! waylandsink`; CPU time per frame.
//! - v4l2-parse: what the V4L2 path costs the CPU before the device: 1080p
//!   HEVC demuxed, parsed and turned into requests (controls filled,
//!   bitstream written to a buffer, requests dropped) by reel's
//!   `StatelessCodec` in a child process of this bench (`--v4l2-parse`), vs
//!   `ffmpeg -c copy -f null` (demuxing alone) on the same file.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const RUNS: usize = 5;

struct Measure {
    wall: Duration,
    cpu: Duration,
}

/// Runs `cmd` to completion; wall time and the CPU time of it and its children.
fn measure(cmd: &mut Command) -> Measure {
    let before = children_cpu();
    let start = Instant::now();
    let out = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .expect("run command");
    let wall = start.elapsed();
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    Measure {
        wall,
        cpu: children_cpu() - before,
    }
}

fn children_cpu() -> Duration {
    // SAFETY: getrusage fills the struct we pass; RUSAGE_CHILDREN counts
    // waited-for children only.
    let usage = unsafe {
        let mut usage: libc_rusage::rusage = std::mem::zeroed();
        libc_rusage::getrusage(libc_rusage::RUSAGE_CHILDREN, &mut usage);
        usage
    };
    let tv = |t: libc_rusage::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

mod libc_rusage {
    pub use nix::libc::{getrusage, rusage, timeval, RUSAGE_CHILDREN};
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A longer clip than the tests use, made once into target/bench-media.
fn bench_clip(name: &str, args: &[&str]) -> PathBuf {
    bench_clip_sized(name, "1280x720", args)
}

/// [`bench_clip`] at another size: 30 fps, 10 s.
fn bench_clip_sized(name: &str, size: &str, args: &[&str]) -> PathBuf {
    let dir = root().join("target/bench-media");
    std::fs::create_dir_all(&dir).expect("bench media dir");
    let path = dir.join(name);
    if !path.exists() {
        let status = Command::new("ffmpeg")
            .args(["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i"])
            .arg(format!("testsrc2=size={size}:rate=30:duration=10"))
            .args(args)
            .arg(&path)
            .status()
            .expect("run ffmpeg");
        assert!(status.success(), "cannot make {name}");
    }
    path
}

struct Case {
    tool: &'static str,
    command: Command,
}

fn report(title: &str, frames: u64, cases: Vec<Case>) {
    let mut results: Vec<(&str, Duration, Duration)> = Vec::new();
    let mut cases = cases;
    let mut walls = vec![Vec::new(); cases.len()];
    let mut cpus = vec![Vec::new(); cases.len()];
    // Interleaved runs, so drift in machine load hits every tool alike.
    for _ in 0..RUNS {
        for (i, case) in cases.iter_mut().enumerate() {
            let m = measure(&mut case.command);
            walls[i].push(m.wall);
            cpus[i].push(m.cpu);
        }
    }
    for (i, case) in cases.iter().enumerate() {
        results.push((case.tool, median(walls[i].clone()), median(cpus[i].clone())));
    }
    let (_, reel_wall, reel_cpu) = results[0];
    println!("\n{title} ({frames} frames, median of {RUNS} interleaved runs)");
    println!(
        "| tool | wall s | frames/s | CPU s | CPU ms/frame | reel wall / tool wall | reel CPU / tool CPU |"
    );
    println!("|---|---|---|---|---|---|---|");
    for (tool, wall, cpu) in &results {
        println!(
            "| {tool} | {:.3} | {:.0} | {:.3} | {:.2} | {:.2} | {:.2} |",
            wall.as_secs_f64(),
            frames as f64 / wall.as_secs_f64(),
            cpu.as_secs_f64(),
            cpu.as_secs_f64() * 1000.0 / frames as f64,
            reel_wall.as_secs_f64() / wall.as_secs_f64(),
            reel_cpu.as_secs_f64() / cpu.as_secs_f64(),
        );
    }
}

fn reel() -> Command {
    Command::new(env!("CARGO_BIN_EXE_reel"))
}

fn gst(pipeline: &str) -> Command {
    let mut cmd = Command::new("gst-launch-1.0");
    cmd.arg("-q").args(pipeline.split_whitespace());
    cmd
}

fn decode_cases(clip: &Path, gst_pipeline: &str) -> Vec<Case> {
    let mut reel_cmd = reel();
    reel_cmd.args(["--output", "null"]).arg(clip);
    let mut ffmpeg = Command::new("ffmpeg");
    ffmpeg
        .args(["-nostdin", "-v", "error", "-i"])
        .arg(clip)
        .args(["-f", "null", "-"]);
    vec![
        Case {
            tool: "reel --output null",
            command: reel_cmd,
        },
        Case {
            tool: "ffmpeg -f null",
            command: ffmpeg,
        },
        Case {
            tool: "gst-launch (avdec) ! fakesink",
            command: gst(&gst_pipeline.replace("CLIP", &clip.display().to_string())),
        },
    ]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == V4L2_PARSE) {
        let clip = args.get(at + 1).expect("--v4l2-parse FILE");
        v4l2_parse(Path::new(clip));
        return;
    }
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let wanted = |name: &str| filter.as_deref().is_none_or(|f| name.contains(f));

    if wanted("decode") {
        let h264 = bench_clip(
            "h264_720p.mp4",
            &[
                "-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p",
            ],
        );
        report(
            "decode: H.264 1280x720",
            300,
            decode_cases(
                &h264,
                "filesrc location=CLIP ! qtdemux ! h264parse ! avdec_h264 ! fakesink sync=false",
            ),
        );
        let hevc = bench_clip(
            "hevc_720p.mkv",
            &[
                "-c:v",
                "libx265",
                "-preset",
                "ultrafast",
                "-pix_fmt",
                "yuv420p",
                "-x265-params",
                "log-level=error",
            ],
        );
        report(
            "decode: HEVC 1280x720",
            300,
            decode_cases(&hevc, "filesrc location=CLIP ! matroskademux ! h265parse ! avdec_h265 ! fakesink sync=false"),
        );
        let h264_1080 = bench_clip_sized(
            "h264_1080p.mp4",
            "1920x1080",
            &[
                "-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p",
            ],
        );
        report(
            "decode: H.264 1920x1080",
            300,
            decode_cases(
                &h264_1080,
                "filesrc location=CLIP ! qtdemux ! h264parse ! avdec_h264 ! fakesink sync=false",
            ),
        );
    }

    if wanted("detile") {
        detile();
    }

    if wanted("v4l2-parse") {
        v4l2_parse_cases();
    }

    if wanted("present") {
        present();
    }
}

/// The argument running this bench as the child measured by `v4l2-parse`.
const V4L2_PARSE: &str = "--v4l2-parse";

/// The V4L2 path's work on the CPU for one file, without a device: every
/// packet from the demuxer through `HevcCodec::decode_units` (its NAL
/// units where the demuxer located them) in slice-based mode (visl's
/// default and the most requests), each request's bitstream written into
/// an OUTPUT-sized buffer as the session does, then dropped; pictures
/// taken for output as they become due.
fn v4l2_parse(clip: &Path) {
    use reel::v4l2::codec::{Bitstream, StatelessCodec, Timestamps};
    use reel::v4l2::hevc::HevcCodec;
    use reel::v4l2::slice_mode::{DecodeMode, SliceMode};

    let mut demuxer = reel::media::Demuxer::open(clip).expect("open the clip");
    let mut codec = HevcCodec::new(
        SliceMode {
            decode_mode: DecodeMode::SliceBased,
            start_codes: false,
            holds_capture: true,
        },
        "/dev/null".into(),
    );
    let mut timestamps = Timestamps::new();
    let mut output_buffer = vec![0u8; 4 << 20];
    let (mut requests, mut pictures) = (0usize, 0usize);
    let mut codec_cpu = Duration::ZERO;
    while let Some(packet) = demuxer.next_packet().expect("demux") {
        let start = thread_cpu();
        timestamps.start_packet();
        let decoded = codec
            .decode_units(&packet.data, packet.nal_units.as_ref(), &mut timestamps)
            .expect("parse");
        for request in decoded {
            Bitstream::new(&packet.data, &request.bitstream).write_to(&mut output_buffer);
            std::hint::black_box(&request.controls);
            requests += 1;
        }
        std::hint::black_box(codec.references());
        pictures += codec.take_output(false).len();
        codec_cpu += thread_cpu() - start;
    }
    pictures += codec.take_output(true).len();
    println!(
        "{pictures} pictures, {requests} requests, codec layer CPU {:.3} ms",
        codec_cpu.as_secs_f64() * 1000.0
    );
}

/// CPU time of the calling thread.
fn thread_cpu() -> Duration {
    use nix::libc;
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec we pass.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

/// 1080p HEVC: reel's parse + control fill vs FFmpeg's demuxing alone.
fn v4l2_parse_cases() {
    let clip = bench_clip_sized(
        "hevc_1080p_slices.mkv",
        "1920x1080",
        &[
            "-c:v",
            "libx265",
            "-preset",
            "ultrafast",
            "-pix_fmt",
            "yuv420p",
            "-x265-params",
            "log-level=error:slices=4:bframes=3",
        ],
    );
    let mut parse = Command::new(std::env::current_exe().expect("bench executable"));
    parse.arg(V4L2_PARSE).arg(&clip);
    // Every picture parsed, every slice a request, before timing anything.
    let checked = parse.output().expect("run the parse child");
    let summary = String::from_utf8_lossy(&checked.stdout);
    assert!(
        summary.starts_with("300 pictures, 1200 requests,"),
        "{summary}{}",
        String::from_utf8_lossy(&checked.stderr)
    );
    let mut ffmpeg = Command::new("ffmpeg");
    ffmpeg
        .args(["-nostdin", "-v", "error", "-i"])
        .arg(&clip)
        .args(["-map", "0:v:0", "-c", "copy", "-f", "null", "-"]);
    report(
        "v4l2-parse: HEVC 1920x1080, 4 slices per picture",
        300,
        vec![
            Case {
                tool: "reel HevcCodec::decode_units (requests built, dropped)",
                command: parse,
            },
            Case {
                tool: "ffmpeg -c copy -f null",
                command: ffmpeg,
            },
        ],
    );
    // The codec layer alone (no process start, no demuxing), one run.
    println!("reel child, one run: {}", summary.trim());
}

/// Detiling 1080p pictures: reel vs GStreamer's videoconvert.
fn detile() {
    use reel::fourcc::fourcc;
    use reel::v4l2::detile::{detile as reel_detile, TiledPicture};
    const FRAMES: u32 = 60;
    const W: u32 = 1920;
    const H: u32 = 1088;
    // Snow-like bytes: the content does not change the work.
    let bytes: Vec<u8> = (0..W * H * 3 / 2)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    for (v4l2, gst_name) in [(b"VT12", "NV12_4L4"), (b"ST12", "NV12_32L32")] {
        let picture = TiledPicture {
            v4l2: fourcc(v4l2),
            coded_width: W,
            coded_height: H,
            planes: &[(&bytes, W)],
        };
        let mut reel_runs = Vec::new();
        let mut gst_runs = Vec::new();
        let source = format!(
            "videotestsrc num-buffers={FRAMES} pattern=snow ! video/x-raw,format=I420,width={W},height={H} \
             ! videoconvert ! video/x-raw,format={gst_name}"
        );
        let mut with = gst(&format!(
            "{source} ! videoconvert ! video/x-raw,format=NV12 ! fakesink"
        ));
        let mut without = gst(&format!("{source} ! fakesink"));
        for _ in 0..RUNS {
            let start = Instant::now();
            for _ in 0..FRAMES {
                let linear = reel_detile(&picture, W, H).expect("detile");
                std::hint::black_box(linear);
            }
            reel_runs.push(start.elapsed());
            let full = measure(&mut with).cpu;
            let base = measure(&mut without).cpu;
            gst_runs.push(full.saturating_sub(base));
        }
        let per_frame = |d: Duration| d.as_secs_f64() * 1000.0 / f64::from(FRAMES);
        let (reel_ms, gst_ms) = (per_frame(median(reel_runs)), per_frame(median(gst_runs)));
        println!(
            "\ndetile: {gst_name} {W}x{H} -> NV12 ({FRAMES} frames, median of {RUNS} interleaved runs)"
        );
        println!("| tool | CPU ms/frame | reel / tool |");
        println!("|---|---|---|");
        println!("| reel detile (one thread) | {reel_ms:.2} | 1.00 |");
        println!(
            "| GStreamer videoconvert | {gst_ms:.2} | {:.2} |",
            reel_ms / gst_ms
        );
    }
}

/// Real-time playback into weston: CPU per frame, reel vs GStreamer's waylandsink.
fn present() {
    let runtime = std::env::temp_dir().join(format!("reel-bench-{}", std::process::id()));
    std::fs::create_dir_all(&runtime).expect("runtime dir");
    let socket = "reel-bench";
    let mut weston = Command::new("weston")
        .env("XDG_RUNTIME_DIR", &runtime)
        .args([
            "--backend=headless",
            "--renderer=gl",
            // desktop-shell: weston 14's kiosk-shell segfaults now and then
            // when a client connects right after another one left.
            "--shell=desktop",
            "--width=1280",
            "--height=720",
        ])
        .arg(format!("--socket={socket}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start weston");
    let deadline = Instant::now() + Duration::from_secs(20);
    // The socket appears before the shell is loaded: ready once a client
    // sees the globals.
    loop {
        let ready = runtime.join(socket).exists()
            && Command::new("wayland-info")
                .env("XDG_RUNTIME_DIR", &runtime)
                .env("WAYLAND_DISPLAY", socket)
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .output()
                .is_ok_and(|out| {
                    out.status.success()
                        && String::from_utf8_lossy(&out.stdout).contains("xdg_wm_base")
                });
        if ready {
            break;
        }
        assert!(Instant::now() < deadline, "weston did not start");
        std::thread::sleep(Duration::from_millis(100));
    }
    let clip = bench_clip(
        "h264_720p.mp4",
        &[
            "-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p",
        ],
    );
    let env = |cmd: &mut Command| {
        cmd.env("XDG_RUNTIME_DIR", &runtime)
            .env("WAYLAND_DISPLAY", socket);
    };
    let mut reel_cmd = reel();
    reel_cmd.arg(&clip);
    env(&mut reel_cmd);
    let mut reel_shm = reel();
    reel_shm.arg("--shm").arg(&clip);
    env(&mut reel_shm);
    let mut gst_cmd = gst(&format!(
        "filesrc location={} ! qtdemux ! h264parse ! avdec_h264 ! waylandsink",
        clip.display()
    ));
    env(&mut gst_cmd);
    report(
        "present: H.264 1280x720 at 30 fps into weston (real time)",
        300,
        vec![
            Case {
                tool: "reel (dmabuf)",
                command: reel_cmd,
            },
            Case {
                tool: "reel --shm",
                command: reel_shm,
            },
            Case {
                tool: "gst-launch avdec_h264 ! waylandsink",
                command: gst_cmd,
            },
        ],
    );
    let _ = weston.kill();
    let _ = weston.wait();
    let _ = std::fs::remove_dir_all(&runtime);
}
