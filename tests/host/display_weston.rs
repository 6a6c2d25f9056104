//! The Wayland display against a real weston 14 (headless, GL renderer on
//! llvmpipe). Expected colours come from FFmpeg's own BT.601 conversion;
//! which buffer path was used is read from weston's protocol log.

use crate::support;

use std::collections::HashSet;
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use reel::display::{Display, WindowOptions, MAX_POOL_BUFFERS};
use reel::frame::{CpuPlanes, DecoderKind, Frame, FrameStorage, PixelFormat};
use support::compositor::{Screenshot, Weston};

/// 8-bit limited-range Y'CbCr of the four quadrants: red, green, blue, grey.
const QUADRANTS: [[u8; 3]; 4] = [
    [81, 90, 240],
    [145, 54, 34],
    [41, 240, 110],
    [150, 128, 128],
];

struct Planes(Vec<(Vec<u8>, usize)>);

impl CpuPlanes for Planes {
    fn plane(&self, plane: usize) -> &[u8] {
        &self.0[plane].0
    }
    fn stride(&self, plane: usize) -> usize {
        self.0[plane].1
    }
}

/// A frame split in four quadrants of the given 8-bit Y'CbCr colours
/// (10-bit formats get the same colours scaled by 4). Width and height must
/// be multiples of 4 so chroma never straddles a quadrant edge. Rows are
/// padded (stride > width) as decoders do.
fn quadrant_frame(format: PixelFormat, width: u32, height: u32, colours: [[u8; 3]; 4]) -> Frame {
    let (w, h) = (width as usize, height as usize);
    let colour_at =
        |x: usize, y: usize| colours[usize::from(y >= h / 2) * 2 + usize::from(x >= w / 2)];
    // (value of component c at luma coords (x, y)) as the format stores it.
    let store = |v: u8, out: &mut Vec<u8>| match format {
        PixelFormat::Yuv420p10 => out.extend_from_slice(&(u16::from(v) << 2).to_le_bytes()),
        PixelFormat::P010 => out.extend_from_slice(&(u16::from(v) << 8).to_le_bytes()),
        _ => out.push(v),
    };
    let pad = 32;
    let mut luma = Vec::new();
    let bps = format.bytes_per_sample();
    let luma_stride = w * bps + pad;
    for y in 0..h {
        for x in 0..w {
            store(colour_at(x, y)[0], &mut luma);
        }
        luma.extend(std::iter::repeat_n(0xAA, pad));
    }
    let (cw, ch) = (w / 2, h / 2);
    let planes = match format {
        PixelFormat::Nv12 | PixelFormat::P010 => {
            let stride = cw * 2 * bps + pad;
            let mut uv = Vec::new();
            for y in 0..ch {
                for x in 0..cw {
                    let c = colour_at(x * 2, y * 2);
                    store(c[1], &mut uv);
                    store(c[2], &mut uv);
                }
                uv.extend(std::iter::repeat_n(0xAA, pad));
            }
            vec![(luma, luma_stride), (uv, stride)]
        }
        PixelFormat::Yuv420
        | PixelFormat::Yuv420p10
        | PixelFormat::Yuv422
        | PixelFormat::Yuv444 => {
            let (sx, sy) = match format {
                PixelFormat::Yuv444 => (1, 1),
                PixelFormat::Yuv422 => (2, 1),
                _ => (2, 2),
            };
            let stride = w / sx * bps + pad;
            let mut planes = vec![(luma, luma_stride)];
            for comp in 1..3 {
                let mut p = Vec::new();
                for y in 0..h / sy {
                    for x in 0..w / sx {
                        store(colour_at(x * sx, y * sy)[comp], &mut p);
                    }
                    p.extend(std::iter::repeat_n(0xAA, pad));
                }
                planes.push((p, stride));
            }
            planes
        }
        PixelFormat::Gray8 => vec![(luma, luma_stride)],
    };
    Frame {
        pts: Duration::ZERO,
        pts_raw: 0,
        duration: Duration::from_millis(40),
        duration_raw: 1,
        width,
        height,
        format,
        sample_aspect: (1, 1),
        decoder: DecoderKind::Software,
        epoch: 0,
        storage: FrameStorage::Cpu(Box::new(Planes(planes))),
    }
}

/// FFmpeg's (swscale's) BT.601 limited-range conversion of one colour: the
/// oracle the screenshots are compared with.
fn ffmpeg_rgb(yuv: [u8; 3]) -> [u8; 3] {
    let (w, h) = (16, 16);
    let mut raw = Vec::new();
    for c in yuv {
        raw.extend(std::iter::repeat_n(c, w * h));
    }
    let mut child = Command::new("ffmpeg")
        .args(["-v", "error", "-f", "rawvideo", "-pix_fmt", "yuv444p", "-s", "16x16", "-i", "pipe:"])
        .args(["-vf", "scale=in_range=tv:in_color_matrix=bt601:flags=accurate_rnd+full_chroma_int,format=rgb24"])
        .args(["-f", "rawvideo", "pipe:"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("run ffmpeg (the colour oracle)");
    child
        .stdin
        .take()
        .expect("ffmpeg stdin")
        .write_all(&raw)
        .expect("feed ffmpeg");
    let out = child.wait_with_output().expect("ffmpeg output");
    assert!(out.status.success(), "ffmpeg failed");
    let i = (8 * w + 8) * 3;
    [out.stdout[i], out.stdout[i + 1], out.stdout[i + 2]]
}

fn connect(weston: &Weston, opts: WindowOptions) -> Display {
    Display::connect_to_socket(&weston.socket_path(), &opts)
        .unwrap_or_else(|e| panic!("connect to weston: {e}\nweston log:\n{}", weston.log()))
}

fn options(title: &str) -> WindowOptions {
    WindowOptions {
        title: title.into(),
        app_id: "reel.test".into(),
        fullscreen: false,
        force_shm: false,
        force_copy: false,
        crop: None,
    }
}

fn wait_ready(display: &mut Display, weston: &Weston) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !display.ready_for_frame() {
        assert!(
            Instant::now() < deadline,
            "no configure/frame callback within 10 s\n{}",
            weston.log()
        );
        display
            .dispatch_timeout(Duration::from_millis(50))
            .expect("dispatch");
    }
}

/// Presents `frame` and waits until weston has shown it (frame callback).
fn show(display: &mut Display, weston: &Weston, frame: &Frame) {
    wait_ready(display, weston);
    display.present(frame).expect("present");
    wait_ready(display, weston);
    assert_no_protocol_error(weston);
}

fn assert_close(got: [u8; 3], want: [u8; 3], tol: u8, what: &str) {
    let ok = got.iter().zip(want).all(|(g, w)| g.abs_diff(w) <= tol);
    assert!(ok, "{what}: got {got:?}, want {want:?} (±{tol})");
}

/// Checks the four quadrant centres of the rectangle (x0, y0, w, h) of the
/// screenshot against the FFmpeg oracle.
fn assert_quadrants(shot: &Screenshot, rect: (u32, u32, u32, u32), tol: u8) {
    let (x0, y0, w, h) = rect;
    let points = [
        (w / 4, h / 4),
        (3 * w / 4, h / 4),
        (w / 4, 3 * h / 4),
        (3 * w / 4, 3 * h / 4),
    ];
    for (i, (x, y)) in points.into_iter().enumerate() {
        let want = ffmpeg_rgb(QUADRANTS[i]);
        assert_close(
            shot.pixel(x0 + x, y0 + y),
            want,
            tol,
            &format!("quadrant {i} at ({}, {})", x0 + x, y0 + y),
        );
    }
}

/// Buffer ids (as weston names them) our client attached to a surface.
fn attached_buffers(proto: &[(String, String)]) -> Vec<String> {
    proto
        .iter()
        .filter(|(dir, msg)| {
            dir == "rq" && msg.starts_with("wl_surface@") && msg.contains(".attach(wl_buffer@")
        })
        .filter_map(|(_, msg)| Some(msg.split("attach(").nth(1)?.split(',').next()?.to_owned()))
        .collect()
}

/// Buffer ids created through linux-dmabuf params (`created` events).
fn dmabuf_buffers(proto: &[(String, String)]) -> HashSet<String> {
    proto
        .iter()
        .filter(|(dir, msg)| {
            dir == "ev"
                && msg.starts_with("zwp_linux_buffer_params_v1@")
                && msg.contains(".created(")
        })
        .filter_map(|(_, msg)| {
            Some(
                msg.split("new id ")
                    .nth(1)?
                    .trim_end_matches(')')
                    .to_owned(),
            )
        })
        .collect()
}

/// Buffer ids created from wl_shm pools.
fn shm_buffers(proto: &[(String, String)]) -> HashSet<String> {
    proto
        .iter()
        .filter(|(dir, msg)| {
            dir == "rq" && msg.starts_with("wl_shm_pool@") && msg.contains(".create_buffer(")
        })
        .filter_map(|(_, msg)| Some(msg.split("new id ").nth(1)?.split(',').next()?.to_owned()))
        .collect()
}

/// Weston logs `wl_display.error` events it sends; none may be for us.
fn assert_no_protocol_error(weston: &Weston) {
    let errors = weston.protocol_errors();
    assert!(errors.is_empty(), "protocol errors: {errors:?}");
}

#[test]
fn yuv420_through_dmabuf_shows_the_right_colours() {
    let weston = Weston::start(640, 480);
    let mut display = connect(&weston, options("yuv420.mp4"));
    assert!(
        !display.advertised_formats().is_empty(),
        "weston advertised no dmabuf formats"
    );
    let frame = quadrant_frame(PixelFormat::Yuv420, 320, 240, QUADRANTS);
    show(&mut display, &weston, &frame);
    let stats = display.stats();
    assert_eq!((stats.frames_dmabuf, stats.frames_shm), (1, 0), "{stats:?}");
    // Kiosk shell makes the window fullscreen: 4:3 content fills the 4:3 output.
    assert_eq!(display.surface_size(), Some((640, 480)));
    let shot = weston.screenshot();
    assert_eq!((shot.width, shot.height), (640, 480));
    assert_quadrants(&shot, (0, 0, 640, 480), 10);

    // Weston's side of the story: the attached buffer came from linux-dmabuf,
    // with three planes of a linear YUV420 buffer, and the title was set.
    let proto = weston.protocol_of(std::process::id());
    let dmabufs = dmabuf_buffers(&proto);
    let attached = attached_buffers(&proto);
    assert!(
        !attached.is_empty() && attached.iter().all(|b| dmabufs.contains(b)),
        "{attached:?} vs {dmabufs:?}"
    );
    let adds = proto
        .iter()
        .filter(|(d, m)| d == "rq" && m.contains(".add(fd "))
        .count();
    assert_eq!(adds, 3, "three planes added");
    let fourcc = u32::from_le_bytes(*b"YU12");
    assert!(
        proto
            .iter()
            .any(|(_, m)| m.contains(&format!(".create(320, 240, {fourcc}, 0)"))),
        "params.create with YUV420 not in weston's log"
    );
    assert!(proto
        .iter()
        .any(|(_, m)| m.contains("set_title(\"yuv420.mp4\")")));
}

#[test]
fn forced_shm_shows_the_right_colours() {
    let weston = Weston::start(640, 480);
    let mut display = connect(
        &weston,
        WindowOptions {
            force_shm: true,
            force_copy: false,
            crop: None,
            ..options("shm")
        },
    );
    let frame = quadrant_frame(PixelFormat::Yuv420, 320, 240, QUADRANTS);
    show(&mut display, &weston, &frame);
    let stats = display.stats();
    assert_eq!((stats.frames_dmabuf, stats.frames_shm), (0, 1), "{stats:?}");
    let shot = weston.screenshot();
    assert_quadrants(&shot, (0, 0, 640, 480), 4);
    let proto = weston.protocol_of(std::process::id());
    let shm = shm_buffers(&proto);
    let attached = attached_buffers(&proto);
    assert!(
        !attached.is_empty() && attached.iter().all(|b| shm.contains(b)),
        "{attached:?} vs {shm:?}"
    );
    assert!(
        !proto
            .iter()
            .any(|(_, m)| m.starts_with("zwp_linux_buffer_params_v1")),
        "dmabuf used despite force_shm"
    );
}

fn semi_planar_through_dmabuf(format: PixelFormat, fourcc: &[u8; 4], tol: u8) {
    let weston = Weston::start(640, 480);
    let mut display = connect(&weston, options(&format.to_string()));
    let frame = quadrant_frame(format, 320, 240, QUADRANTS);
    show(&mut display, &weston, &frame);
    let stats = display.stats();
    assert_eq!((stats.frames_dmabuf, stats.frames_shm), (1, 0), "{stats:?}");
    let shot = weston.screenshot();
    assert_quadrants(&shot, (0, 0, 640, 480), tol);
    let proto = weston.protocol_of(std::process::id());
    let code = u32::from_le_bytes(*fourcc);
    assert!(proto
        .iter()
        .any(|(_, m)| m.contains(&format!(".create(320, 240, {code}, 0)"))));
    assert_eq!(
        proto
            .iter()
            .filter(|(d, m)| d == "rq" && m.contains(".add(fd "))
            .count(),
        2
    );
}

#[test]
fn nv12_through_dmabuf() {
    semi_planar_through_dmabuf(PixelFormat::Nv12, b"NV12", 10);
}

#[test]
fn p010_through_dmabuf() {
    semi_planar_through_dmabuf(PixelFormat::P010, b"P010", 10);
}

#[test]
fn ten_bit_planar_is_repacked_to_p010() {
    semi_planar_through_dmabuf(PixelFormat::Yuv420p10, b"P010", 10);
}

/// 4:2:2 and 4:4:4 planar: dmabuf when weston lists the format as linear
/// and imports it; a refused import (`failed`, which weston 14 on llvmpipe
/// sends for YUV422 although it advertises it) is not retried: the next
/// advertised modifier, then wl_shm, without a protocol error. The colours
/// are right either way.
#[test]
fn yuv422_and_yuv444_use_dmabuf_or_fall_back() {
    for (format, fourcc) in [
        (PixelFormat::Yuv422, *b"YU16"),
        (PixelFormat::Yuv444, *b"YU24"),
    ] {
        let weston = Weston::start(640, 480);
        let mut display = connect(&weston, options(&format.to_string()));
        let code = u32::from_le_bytes(fourcc);
        let linear = display.advertised_formats().contains(code, 0);
        let frame = quadrant_frame(format, 320, 240, QUADRANTS);
        show(&mut display, &weston, &frame);
        show(&mut display, &weston, &frame);
        let stats = display.stats();
        let proto = weston.protocol_of(std::process::id());
        let failed = proto
            .iter()
            .filter(|(d, m)| {
                d == "ev" && m.contains("zwp_linux_buffer_params_v1@") && m.ends_with(".failed()")
            })
            .count() as u64;
        eprintln!("{format}: linear advertised {linear}, weston refused {failed}, {stats:?}");
        assert_eq!(
            stats.dmabuf_failures, failed,
            "our failure count matches weston's log"
        );
        if linear && failed == 0 {
            assert_eq!(
                (stats.frames_dmabuf, stats.frames_shm),
                (2, 0),
                "{format}: {stats:?}"
            );
        } else {
            // One attempt per advertised modifier (LINEAR, INVALID), never
            // a retry of a refused one: every create was refused.
            let creates = proto
                .iter()
                .filter(|(d, m)| {
                    d == "rq"
                        && m.starts_with("zwp_linux_buffer_params_v1@")
                        && m.contains(".create(")
                })
                .count() as u64;
            assert!((1..=2).contains(&failed), "{format}: {failed} refusals");
            assert_eq!(creates, failed, "{format}: a refused pair was tried again");
            assert_eq!(
                (stats.frames_dmabuf, stats.frames_shm),
                (0, 2),
                "{format}: {stats:?}"
            );
        }
        assert_quadrants(&weston.screenshot(), (0, 0, 640, 480), 10);
    }
}

/// Many frames: the pool stays within its bound, nothing is dropped when we
/// wait for frame callbacks, and (from weston's log) no buffer is attached
/// again before weston released it, so none was written while held.
fn many_frames_respect_release(force_shm: bool) {
    let weston = Weston::start(320, 240);
    let mut display = connect(
        &weston,
        WindowOptions {
            force_shm,
            force_copy: false,
            crop: None,
            ..options("release")
        },
    );
    const N: u64 = 120;
    for i in 0..N {
        // Rotate the colours so every frame differs.
        let mut colours = QUADRANTS;
        colours.rotate_left((i % 4) as usize);
        let mut frame = quadrant_frame(PixelFormat::Nv12, 160, 120, colours);
        frame.pts = Duration::from_millis(20 * i);
        wait_ready(&mut display, &weston);
        display.present(&frame).expect("present");
    }
    wait_ready(&mut display, &weston);
    // Every commit is reported shown or discarded (wp_presentation).
    let deadline = Instant::now() + Duration::from_secs(10);
    while display.stats().frames_shown + display.stats().frames_discarded < N {
        assert!(
            Instant::now() < deadline,
            "presentation feedback missing: {:?}",
            display.stats()
        );
        display
            .dispatch_timeout(Duration::from_millis(50))
            .expect("dispatch");
    }
    let last = display.last_presented().expect("a frame was shown");
    assert_eq!(
        last.pts,
        Duration::from_millis(20 * (N - 1)),
        "the last frame is the last shown"
    );
    assert!(display.presentation_clock().is_some());
    let stats = display.stats();
    assert!(
        stats.frames_shown >= N / 2,
        "most frames were shown: {stats:?}"
    );
    assert_eq!(stats.frames_dmabuf + stats.frames_shm, N, "{stats:?}");
    assert_eq!(
        stats.dropped_no_buffer + stats.dropped_not_ready,
        0,
        "{stats:?}"
    );
    assert!(stats.pool_peak <= MAX_POOL_BUFFERS, "{stats:?}");
    assert_eq!(
        stats.buffers_allocated, stats.pool_peak as u64,
        "buffers were re-made: {stats:?}"
    );
    assert!(
        stats.buffers_released >= N - stats.held_now as u64,
        "{stats:?}"
    );

    let proto = weston.protocol_of(std::process::id());
    let mut held = HashSet::new();
    let mut attaches = 0;
    let mut releases = 0;
    for (dir, msg) in &proto {
        if dir == "rq" && msg.contains(".attach(wl_buffer@") {
            let id = msg
                .split("attach(")
                .nth(1)
                .and_then(|s| s.split(',').next())
                .unwrap_or_default();
            assert!(
                held.insert(id.to_owned()),
                "{id} attached again while weston held it"
            );
            attaches += 1;
        } else if dir == "ev" && msg.starts_with("wl_buffer@") && msg.ends_with(".release()") {
            let id = msg.split('.').next().unwrap_or_default();
            held.remove(id);
            releases += 1;
        } else if dir == "rq" && msg.starts_with("wl_buffer@") && msg.ends_with(".destroy()") {
            let id = msg.split('.').next().unwrap_or_default();
            assert!(!held.contains(id), "{id} destroyed while weston held it");
        }
    }
    assert_eq!(attaches, N, "weston saw {attaches} attaches");
    assert_eq!(
        releases, stats.buffers_released,
        "our release count disagrees with weston's"
    );
}

#[test]
fn dmabuf_buffers_are_reused_only_after_release() {
    many_frames_respect_release(false);
}

#[test]
fn shm_buffers_are_reused_only_after_release() {
    many_frames_respect_release(true);
}

/// Fullscreen 16:9 content on a 4:3 output: full width, letterboxed, centred.
#[test]
fn fullscreen_keeps_the_aspect_ratio() {
    let weston = Weston::start(640, 480);
    let mut display = connect(
        &weston,
        WindowOptions {
            fullscreen: true,
            ..options("wide")
        },
    );
    let frame = quadrant_frame(PixelFormat::Nv12, 320, 180, QUADRANTS);
    show(&mut display, &weston, &frame);
    assert!(display.is_fullscreen());
    // 640 / 320 * 180 = 360 rows, centred: 60 black rows above and below.
    assert_eq!(display.surface_size(), Some((640, 360)));
    let shot = weston.screenshot();
    for x in [5, 320, 635] {
        for y in [2, 57, 423, 477] {
            assert_close(
                shot.pixel(x, y),
                [0, 0, 0],
                2,
                &format!("letterbox at ({x}, {y})"),
            );
        }
    }
    assert_quadrants(&shot, (0, 60, 640, 360), 10);
    // The picture's top edge is at row 60 (±1 for filtering).
    let first_lit = (0..480)
        .find(|&y| shot.pixel(160, y) != [0, 0, 0])
        .expect("picture visible");
    assert!(
        (59..=61).contains(&first_lit),
        "picture starts at row {first_lit}"
    );
}

/// A mid-stream size change: a new pool, the old buffers destroyed once
/// released, and the new picture shown with its own aspect ratio.
#[test]
fn resolution_change_makes_a_new_pool() {
    let weston = Weston::start(640, 480);
    let mut display = connect(&weston, options("change"));
    for _ in 0..3 {
        show(
            &mut display,
            &weston,
            &quadrant_frame(PixelFormat::Nv12, 320, 240, QUADRANTS),
        );
    }
    let before = display.stats();
    for _ in 0..3 {
        show(
            &mut display,
            &weston,
            &quadrant_frame(PixelFormat::Nv12, 160, 90, QUADRANTS),
        );
    }
    let after = display.stats();
    assert!(
        after.buffers_allocated > before.buffers_allocated,
        "{after:?}"
    );
    assert_eq!(display.surface_size(), Some((640, 360)));
    let shot = weston.screenshot();
    assert_quadrants(&shot, (0, 60, 640, 360), 10);
    // Every first-size buffer was destroyed (weston's log), none while held.
    let proto = weston.protocol_of(std::process::id());
    let destroyed = proto
        .iter()
        .filter(|(d, m)| d == "rq" && m.starts_with("wl_buffer@") && m.ends_with(".destroy()"))
        .count();
    assert_eq!(
        destroyed as u64, before.buffers_allocated,
        "old buffers destroyed"
    );
}

/// Odd sizes (4:2:0 chroma rounded up) still go through dmabuf and show.
#[test]
fn odd_size_frame_through_dmabuf() {
    let weston = Weston::start(640, 480);
    let mut display = connect(&weston, options("odd"));
    // Planes made for 252x132; the frame claims 251x131 as a decoder of an
    // odd-sized stream would (the last chroma sample covers one luma column).
    let mut frame = quadrant_frame(PixelFormat::Nv12, 252, 132, QUADRANTS);
    frame.width = 251;
    frame.height = 131;
    show(&mut display, &weston, &frame);
    let stats = display.stats();
    assert_eq!((stats.frames_dmabuf, stats.frames_shm), (1, 0), "{stats:?}");
    // 251x131 fitted to 640 wide: 640 * 131 / 251 = 334 rows, centred at 73.
    assert_eq!(display.surface_size(), Some((640, 334)));
    let shot = weston.screenshot();
    assert_quadrants(&shot, (0, 73, 640, 334), 12);
    assert_no_protocol_error(&weston);
}

/// Sample aspect ratio: 320x240 pixels at 4:3 SAR are shown 427x240 wide.
#[test]
fn sample_aspect_ratio_is_applied() {
    let weston = Weston::start(640, 480);
    let mut display = connect(&weston, options("anamorphic"));
    let mut frame = quadrant_frame(PixelFormat::Yuv420, 320, 240, QUADRANTS);
    frame.sample_aspect = (4, 3);
    show(&mut display, &weston, &frame);
    // 427x240 fitted to 640 wide: 640 * 240 / 427 = 359.7, so 360 rows at 60.
    assert_eq!(display.surface_size(), Some((640, 360)));
    let shot = weston.screenshot();
    assert_close(shot.pixel(320, 30), [0, 0, 0], 2, "letterbox");
    assert_quadrants(&shot, (0, 60, 640, 360), 10);
    assert_no_protocol_error(&weston);
}

/// The compositor going away is an error from `dispatch`, not a panic or a hang.
#[test]
fn compositor_exit_is_an_error() {
    let weston = Weston::start(320, 240);
    let mut display = connect(&weston, options("gone"));
    show(
        &mut display,
        &weston,
        &quadrant_frame(PixelFormat::Nv12, 160, 120, QUADRANTS),
    );
    drop(weston);
    let deadline = Instant::now() + Duration::from_secs(5);
    let err = loop {
        if let Err(e) = display.dispatch_timeout(Duration::from_millis(100)) {
            break e;
        }
        assert!(
            Instant::now() < deadline,
            "dispatch kept succeeding after weston exited"
        );
    };
    assert!(!err.to_string().is_empty());
    let frame = quadrant_frame(PixelFormat::Nv12, 160, 120, QUADRANTS);
    // Present either drops (not ready) or fails; it must not panic.
    let _ = display.present(&frame);
}

/// An ordinary (desktop-shell) window opens at the video's display size and
/// toggles fullscreen on request, keeping the aspect ratio both ways; the
/// sizes are checked in weston's log of our viewport requests.
#[test]
fn desktop_window_size_and_fullscreen_toggle() {
    let weston = Weston::start_with_shell(800, 600, "desktop");
    let mut display = connect(&weston, options("desktop"));
    let frame = quadrant_frame(PixelFormat::Nv12, 320, 180, QUADRANTS);
    show(&mut display, &weston, &frame);
    assert!(!display.is_fullscreen());
    assert_eq!(
        display.surface_size(),
        Some((320, 180)),
        "initial size = display size"
    );

    display.set_fullscreen(true);
    let deadline = Instant::now() + Duration::from_secs(10);
    while !display.is_fullscreen() {
        assert!(
            Instant::now() < deadline,
            "no fullscreen configure\n{}",
            weston.log()
        );
        display
            .dispatch_timeout(Duration::from_millis(50))
            .expect("dispatch");
    }
    assert!(display
        .take_events()
        .contains(&reel::display::DisplayEvent::Resized {
            width: 800,
            height: 600
        }));
    show(&mut display, &weston, &frame);
    // 16:9 in 800x600: 800x450, centred with 75 rows above and below.
    assert_eq!(display.surface_size(), Some((800, 450)));
    // (No screenshot here: desktop-shell's panel and fade animations make
    // pixels timing-dependent; the kiosk tests check pixels.)

    display.set_fullscreen(false);
    let deadline = Instant::now() + Duration::from_secs(10);
    while display.is_fullscreen() {
        assert!(
            Instant::now() < deadline,
            "no un-fullscreen configure\n{}",
            weston.log()
        );
        display
            .dispatch_timeout(Duration::from_millis(50))
            .expect("dispatch");
    }
    show(&mut display, &weston, &frame);
    assert_eq!(
        display.surface_size(),
        Some((320, 180)),
        "back to the display size"
    );
    // What weston was told: the viewport destinations, in order.
    let proto = weston.protocol_of(std::process::id());
    let dests: Vec<_> = proto
        .iter()
        .filter(|(d, m)| {
            d == "rq" && m.starts_with("wp_viewport@") && m.contains(".set_destination(")
        })
        .map(|(_, m)| {
            m.split(".set_destination")
                .nth(1)
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    assert_eq!(dests, vec!["(320, 180)", "(800, 450)", "(320, 180)"]);
}

/// The way the player drives the display: a calloop loop watching the
/// connection fd (level-triggered) calls `dispatch`, a timer presents due
/// frames when `ready_for_frame`, `flush` before sleeping. Frame callbacks
/// must arrive through the fd alone for playback to advance.
#[test]
fn calloop_driven_playback_advances() {
    use calloop::generic::Generic;
    use calloop::timer::{TimeoutAction, Timer};
    use calloop::{EventLoop, Interest, Mode, PostAction};

    struct Player {
        display: Display,
        start: Instant,
        next: u64,
        errors: Vec<String>,
    }
    const FPS: u64 = 50;
    const FRAMES: u64 = 50;

    let weston = Weston::start(320, 240);
    let display = connect(&weston, options("calloop"));
    let fd = display
        .as_fd()
        .try_clone_to_owned()
        .expect("dup wayland fd");
    let mut event_loop: EventLoop<Player> = EventLoop::try_new().expect("event loop");
    let handle = event_loop.handle();
    handle
        .insert_source(
            Generic::new(fd, Interest::READ, Mode::Level),
            |_, _, p: &mut Player| {
                if let Err(e) = p.display.dispatch() {
                    p.errors.push(e.to_string());
                }
                Ok(PostAction::Continue)
            },
        )
        .expect("watch wayland fd");
    handle
        .insert_source(
            Timer::from_duration(Duration::from_millis(2)),
            |_, _, p: &mut Player| {
                let due = Duration::from_millis(p.next * 1000 / FPS);
                if p.next < FRAMES && p.start.elapsed() >= due && p.display.ready_for_frame() {
                    let mut colours = QUADRANTS;
                    colours.rotate_left((p.next % 4) as usize);
                    let frame = quadrant_frame(PixelFormat::Nv12, 160, 120, colours);
                    if let Err(e) = p.display.present(&frame) {
                        p.errors.push(e.to_string());
                    }
                    p.next += 1;
                }
                TimeoutAction::ToDuration(Duration::from_millis(2))
            },
        )
        .expect("timer");
    let mut player = Player {
        display,
        start: Instant::now(),
        next: 0,
        errors: Vec::new(),
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    while player.next < FRAMES && Instant::now() < deadline && player.errors.is_empty() {
        event_loop
            .dispatch(Some(Duration::from_millis(50)), &mut player)
            .expect("loop dispatch");
        if let Err(e) = player.display.flush() {
            player.errors.push(e.to_string());
        }
    }
    assert!(player.errors.is_empty(), "{:?}", player.errors);
    let stats = player.display.stats();
    assert_eq!(player.next, FRAMES, "playback stalled: {stats:?}");
    assert_eq!(stats.frames_dmabuf, FRAMES, "{stats:?}");
    assert_eq!(stats.frames_dropped, 0, "{stats:?}");
    assert_no_protocol_error(&weston);
}

/// A compositor without linux-dmabuf (weston's pixman renderer): wl_shm is
/// chosen by itself, and the picture is right.
#[test]
fn no_dmabuf_compositor_falls_back_to_shm() {
    let weston = Weston::start_with(640, 480, "kiosk", "pixman");
    let mut display = connect(&weston, options("pixman"));
    assert!(display.advertised_formats().is_empty());
    show(
        &mut display,
        &weston,
        &quadrant_frame(PixelFormat::Nv12, 320, 240, QUADRANTS),
    );
    let stats = display.stats();
    assert_eq!((stats.frames_dmabuf, stats.frames_shm), (0, 1), "{stats:?}");
    assert_quadrants(&weston.screenshot(), (0, 0, 640, 480), 4);
    let proto = weston.protocol_of(std::process::id());
    assert!(
        !proto
            .iter()
            .any(|(_, m)| m.contains("zwp_linux_dmabuf_v1\", ")),
        "dmabuf was bound"
    );
}

/// A compositor without xdg-shell (weston's fullscreen-shell): a clear
/// error naming the missing global.
#[test]
fn missing_xdg_shell_is_a_clear_error() {
    let weston = Weston::start_with(320, 240, "fullscreen", "gl");
    let err = Display::connect_to_socket(&weston.socket_path(), &options("no xdg"))
        .err()
        .expect("connect must fail without xdg_wm_base");
    assert!(err.to_string().contains("xdg_wm_base"), "{err}");
    assert_no_protocol_error(&weston);
}

/// `dispatch` returns at once when the compositor has nothing to say.
#[test]
fn dispatch_does_not_block() {
    let weston = Weston::start(320, 240);
    let mut display = connect(&weston, options("idle"));
    show(
        &mut display,
        &weston,
        &quadrant_frame(PixelFormat::Nv12, 160, 120, QUADRANTS),
    );
    let started = Instant::now();
    for _ in 0..20 {
        display.dispatch().expect("dispatch");
    }
    assert!(
        started.elapsed() < Duration::from_millis(500),
        "20 idle dispatches took {:?}",
        started.elapsed()
    );
}

/// Switching path mid-stream (a format weston takes as dmabuf, then one it
/// cannot, then back): each switch makes a new pool, old buffers are
/// destroyed only once released, and the last picture is right.
#[test]
fn path_switch_mid_stream() {
    let weston = Weston::start(640, 480);
    let mut display = connect(&weston, options("switch"));
    show(
        &mut display,
        &weston,
        &quadrant_frame(PixelFormat::Nv12, 320, 240, QUADRANTS),
    );
    show(
        &mut display,
        &weston,
        &quadrant_frame(PixelFormat::Gray8, 320, 240, QUADRANTS),
    );
    show(
        &mut display,
        &weston,
        &quadrant_frame(PixelFormat::Gray8, 320, 240, QUADRANTS),
    );
    show(
        &mut display,
        &weston,
        &quadrant_frame(PixelFormat::Nv12, 320, 240, QUADRANTS),
    );
    let stats = display.stats();
    assert_eq!((stats.frames_dmabuf, stats.frames_shm), (2, 2), "{stats:?}");
    assert_quadrants(&weston.screenshot(), (0, 0, 640, 480), 10);
    let proto = weston.protocol_of(std::process::id());
    let mut held = HashSet::new();
    for (dir, msg) in &proto {
        let id = msg.split('.').next().unwrap_or_default().to_owned();
        if dir == "rq" && msg.contains(".attach(wl_buffer@") {
            held.insert(
                msg.split("attach(")
                    .nth(1)
                    .and_then(|s| s.split(',').next())
                    .unwrap_or_default()
                    .to_owned(),
            );
        } else if dir == "ev" && msg.ends_with(".release()") {
            held.remove(&id);
        } else if dir == "rq" && msg.starts_with("wl_buffer@") && msg.ends_with(".destroy()") {
            assert!(!held.contains(&id), "{id} destroyed while held");
        }
    }
    let destroyed = proto
        .iter()
        .filter(|(d, m)| d == "rq" && m.starts_with("wl_buffer@") && m.ends_with(".destroy()"))
        .count();
    // The first NV12 buffer and the shm buffer(s) are gone by now.
    assert!(destroyed >= 2, "only {destroyed} buffers destroyed");
}

/// A frame whose planes are shorter than its size says (a decoder bug) is
/// an error from `present`, not a panic, and the display stays usable.
fn short_frame_is_an_error(force_shm: bool) {
    let weston = Weston::start(320, 240);
    let mut display = connect(
        &weston,
        WindowOptions {
            force_shm,
            force_copy: false,
            crop: None,
            ..options("short")
        },
    );
    let mut bad = quadrant_frame(PixelFormat::Nv12, 160, 120, QUADRANTS);
    bad.height = 240; // the planes hold 120 rows
    wait_ready(&mut display, &weston);
    let err = display
        .present(&bad)
        .expect_err("short planes must be refused");
    assert!(err.to_string().contains("shorter"), "{err}");
    show(
        &mut display,
        &weston,
        &quadrant_frame(PixelFormat::Nv12, 160, 120, QUADRANTS),
    );
    let stats = display.stats();
    assert_eq!(stats.frames_dmabuf + stats.frames_shm, 1, "{stats:?}");
    assert_quadrants(&weston.screenshot(), (0, 0, 320, 240), 10);
}

#[test]
fn short_frame_is_an_error_dmabuf() {
    short_frame_is_an_error(false);
}

#[test]
fn short_frame_is_an_error_shm() {
    short_frame_is_an_error(true);
}
