//! Subtitles in weston 14 (headless), read off its screenshots by OCR
//! (tesseract), as the OSD's text is: for each text format a clip carries
//! (SubRip, ASS, WebVTT in Matroska, mov_text in MP4) and for subtitle
//! files beside the video or given with `--sub-file`, paused on frames
//! inside and outside each cue (after a seek, and a frame step onto a
//! cue's first frame), the cue's text is on screen exactly when the
//! frame's pts is in its interval. Bitmap tracks (PGS, DVB, DVD, and a
//! `.sup` file) the same way, fullscreen: their pictures scaled from the
//! canvas to the video's place, the text where it should be. The subtitles live on a subsurface of
//! their own: the video surface gets only the frames' dmabufs. A broken
//! subtitle file, or a track in a codec libavcodec lacks, costs the
//! subtitles only, with one warning.
//!
//! Over the JSON IPC, against mpv 0.35 on the same clip: `track-list`'s
//! subtitle track, `sid`, `sub-text` inside and outside a cue,
//! `sub-delay`, `sub-visibility`, and `sid` set to `no`; the clip's
//! chapters (`chapter-list`, `chapter`).

use crate::support;

use std::path::{Path, PathBuf};
use std::thread::sleep;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::compositor::{Screenshot, Weston};
use support::mpv_ipc::{IpcClient, Player};
use support::pgs;
use support::picture::read_text;
use support::reel_process::Reel;
use support::weston_log::OsdBuffers;

/// Two cues on a 6 s clip at 25 fps: 1.0-2.5 s and 4.0-5.0 s.
const SRT: &str = "1\n00:00:01,000 --> 00:00:02,500\nHELLO WORLD\n\n\
                   2\n00:00:04,000 --> 00:00:05,000\nSECOND CUE\n";
const FIRST: &str = "HELLO WORLD";
const SECOND: &str = "SECOND CUE";

fn media_dir() -> PathBuf {
    let dir = support::target_dir().join("subtitle-media");
    std::fs::create_dir_all(&dir).expect("subtitle media dir");
    dir
}

fn srt_file() -> PathBuf {
    let path = media_dir().join("cues.srt");
    if !path.exists() {
        std::fs::write(&path, SRT).expect("write the SRT");
    }
    path
}

/// The two cues as PGS pictures (`.sup`) for the 640x360 clip.
fn sup_file() -> PathBuf {
    let path = media_dir().join("cues.sup");
    if !path.exists() {
        let partial = media_dir().join(format!("partial-{}-cues.sup", std::process::id()));
        let cues = [
            pgs::Cue {
                text: FIRST,
                start: 1.0,
                end: 2.5,
            },
            pgs::Cue {
                text: SECOND,
                start: 4.0,
                end: 5.0,
            },
        ];
        pgs::write(&partial, (640, 360), &cues);
        std::fs::rename(&partial, &path).expect("rename the PGS into place");
    }
    path
}

/// The clip with the cues as bitmap subtitles: PGS copied, or encoded as
/// `codec` (FFmpeg's DVB and DVD encoders, from the PGS pictures; their
/// ends from the clearing display sets).
fn bitmap_clip(name: &str, codec: &str) -> PathBuf {
    let plain = clip("plain.mkv", None);
    let sup = sup_file();
    support::pcm::derived(
        &media_dir().join(name),
        name,
        &[
            "-i",
            plain.to_str().expect("UTF-8 path"),
            "-fix_sub_duration",
            "-i",
            sup.to_str().expect("UTF-8 path"),
            "-copyts",
            "-map",
            "0:v",
            "-map",
            "1",
            "-c:v",
            "copy",
            "-c:s",
            codec,
        ],
    )
}

/// Black 640x360 at 25 fps, 6 s; with the cues as `codec` in `name`'s
/// container, or none (`codec` None).
pub(crate) fn clip(name: &str, codec: Option<&str>) -> PathBuf {
    let srt = srt_file();
    let srt = srt.to_str().expect("UTF-8 path");
    let mut args = vec![
        "-f",
        "lavfi",
        "-i",
        "color=black:size=640x360:rate=25:duration=6",
    ];
    if codec.is_some() {
        args.extend(["-i", srt]);
    }
    args.extend([
        "-c:v",
        "libx264",
        "-preset",
        "ultrafast",
        "-pix_fmt",
        "yuv420p",
    ]);
    if let Some(codec) = codec {
        args.extend(["-c:s", codec]);
    }
    support::pcm::derived(&media_dir().join(name), name, &args)
}

/// The subtitles' text on screen now: read until it says `want` (the
/// overlay is committed right after the frame), or what it says after a
/// while when `want` is None.
fn text_on_screen(weston: &Weston, want: Option<&str>) -> String {
    let deadline = Instant::now() + Duration::from_secs(5);
    if want.is_none() {
        sleep(Duration::from_millis(400));
    }
    loop {
        let shot = weston.screenshot();
        let text = read_text(&shot, shot.height, weston.runtime_dir());
        let done = want.is_none_or(|want| text.contains(want));
        if done || Instant::now() > deadline {
            return text;
        }
        sleep(Duration::from_millis(100));
    }
}

fn seek(reel: &mut Reel, to: &str) {
    assert_eq!(reel.command(&format!("seek {to}")), "ok");
    reel.wait_for("the seek", |s| {
        s.get("state").is_some_and(|st| st == "paused") && s["position"].starts_with(to)
    });
}

/// The SubRip clip with two chapters, "Opening" (0-2 s) and "Middle"
/// (2-6 s).
fn chapters_clip() -> PathBuf {
    let meta = media_dir().join("chapters.txt");
    std::fs::write(
        &meta,
        ";FFMETADATA1\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=0\nEND=2000\ntitle=Opening\n\
         [CHAPTER]\nTIMEBASE=1/1000\nSTART=2000\nEND=6000\ntitle=Middle\n",
    )
    .expect("write the chapters");
    let subrip = clip("subrip.mkv", Some("srt"));
    let name = "subrip_chapters.mkv";
    support::pcm::derived(
        &media_dir().join(name),
        name,
        &[
            "-i",
            subrip.to_str().expect("UTF-8 path"),
            "-i",
            meta.to_str().expect("UTF-8 path"),
            "-map",
            "0",
            "-map_chapters",
            "1",
            "-c",
            "copy",
        ],
    )
}

/// The smallest rectangle (left, top, right, bottom; exclusive) holding
/// every white pixel of `shot`.
fn white_box(shot: &Screenshot) -> Option<(u32, u32, u32, u32)> {
    let mut found: Option<(u32, u32, u32, u32)> = None;
    for y in 0..shot.height {
        for x in 0..shot.width {
            if shot.pixel(x, y).iter().all(|&c| c > 200) {
                let (l, t, r, b) = found.get_or_insert((x, y, x + 1, y + 1));
                (*l, *t, *r, *b) = ((*l).min(x), (*t).min(y), (*r).max(x + 1), (*b).max(y + 1));
            }
        }
    }
    found
}

/// Plays `file` paused with `args` and checks the cues on and off screen;
/// where the first cue's white pixels are.
fn cues_show_in_their_intervals(file: &Path, args: &[&str]) -> Option<(u32, u32, u32, u32)> {
    let weston = Weston::start(1280, 720);
    let mut all = vec!["--pause", "-v"];
    all.extend_from_slice(args);
    let mut reel = Reel::spawn(&weston.client_env(), weston.runtime_dir(), &all, &[file]);
    reel.settled();
    let what = format!("{} {args:?}", file.display());
    seek(&mut reel, "1.520000");
    let text = text_on_screen(&weston, Some(FIRST));
    assert!(text.contains(FIRST), "{what}: at 1.52 s OCR read {text:?}");
    let first_cue = white_box(&weston.screenshot());
    seek(&mut reel, "3.000000");
    let text = text_on_screen(&weston, None);
    assert!(
        !text.contains("HELLO") && !text.contains("CUE"),
        "{what}: between the cues OCR read {text:?}"
    );
    // The frame before the second cue, then a step onto its first frame.
    seek(&mut reel, "3.960000");
    let text = text_on_screen(&weston, None);
    assert!(!text.contains("CUE"), "{what}: at 3.96 s OCR read {text:?}");
    assert_eq!(reel.command("step"), "ok");
    reel.wait_for("the step", |s| s["position"].starts_with("4.000000"));
    let text = text_on_screen(&weston, Some(SECOND));
    assert!(text.contains(SECOND), "{what}: at 4.0 s OCR read {text:?}");
    seek(&mut reel, "5.200000");
    let text = text_on_screen(&weston, None);
    assert!(
        !text.contains("CUE"),
        "{what}: after the last cue OCR read {text:?}"
    );
    assert!(reel.quit().success(), "{}", reel.log());

    // On their own subsurface: the video surface only had dmabufs.
    let seen = OsdBuffers::of(&weston.protocol_of(reel.child.id()));
    assert!(seen.other.is_empty(), "{what}: {:#?}", seen.other);
    assert!(seen.osd_shm >= 2, "{what}: {seen:?}");
    assert!(seen.video_dmabuf >= 3, "{what}: {seen:?}");
    let log = reel.log();
    assert!(log.contains("subtitles ready"), "{what}: {log}");
    assert!(!log.contains("WARN"), "{what}: {log}");
    first_cue
}

#[test]
fn embedded_text_tracks_show_each_cue_on_its_frames() {
    for (name, codec) in [
        ("subrip.mkv", "srt"),
        ("ass.mkv", "ass"),
        ("webvtt.mkv", "webvtt"),
        ("mov_text.mp4", "mov_text"),
    ] {
        cues_show_in_their_intervals(&clip(name, Some(codec)), &["--sid", "1"]);
    }
}

#[test]
fn bitmap_tracks_are_scaled_onto_the_video_on_their_frames() {
    // Fullscreen in 1280x720: the 640x360 canvas is shown twice as large.
    // The text of the first cue is at x 176-464, y 297-327 of the canvas
    // (a 480x64 picture at 80, 280): on screen at twice that.
    let want = (352, 594, 928, 654);
    let sup = sup_file();
    for (file, args) in [
        (bitmap_clip("pgs.mkv", "copy"), vec!["--sid", "1"]),
        (bitmap_clip("dvb.mkv", "dvbsub"), vec!["--sid", "1"]),
        (bitmap_clip("dvd.mkv", "dvdsub"), vec!["--sid", "1"]),
        (
            clip("plain.mkv", None),
            vec!["--sub-file", sup.to_str().expect("UTF-8 path")],
        ),
    ] {
        let mut args = args;
        args.push("--fullscreen");
        let seen = cues_show_in_their_intervals(&file, &args).expect("white text");
        let near = |a: u32, b: u32| a.abs_diff(b) <= 6;
        assert!(
            near(seen.0, want.0)
                && near(seen.1, want.1)
                && near(seen.2, want.2)
                && near(seen.3, want.3),
            "{}: the first cue's text at {seen:?}, not at {want:?}",
            file.display()
        );
    }
}

#[test]
fn subtitle_files_beside_the_video_or_given_are_shown() {
    // `film.srt` beside `film.mkv`: picked without asking.
    let dir = media_dir().join("sidecar");
    std::fs::create_dir_all(&dir).expect("sidecar dir");
    let video = dir.join("film.mkv");
    if !video.exists() {
        std::fs::copy(clip("plain.mkv", None), &video).expect("copy the clip");
        std::fs::copy(srt_file(), dir.join("film.srt")).expect("copy the SRT");
    }
    cues_show_in_their_intervals(&video, &[]);
    cues_show_in_their_intervals(
        &clip("plain.mkv", None),
        &["--sub-file", srt_file().to_str().expect("UTF-8 path")],
    );
}

#[test]
fn a_broken_subtitle_file_costs_the_subtitles_only() {
    let broken = media_dir().join("broken.srt");
    std::fs::write(&broken, [0xffu8, 0xfe, 0x00, 0x01, 0x02, 0x80, 0x81, 0x00]).expect("write");
    let weston = Weston::start(640, 360);
    let mut reel = Reel::spawn(
        &weston.client_env(),
        weston.runtime_dir(),
        &["--sub-file", broken.to_str().expect("UTF-8 path")],
        &[&clip("plain.mkv", None)],
    );
    reel.wait_for("playback", |s| {
        s["position"].parse::<f64>().is_ok_and(|p| p > 1.0)
    });
    assert!(reel.quit().success(), "{}", reel.log());
    let log = reel.log();
    let warnings: Vec<&str> = log.lines().filter(|l| l.contains("WARN")).collect();
    assert_eq!(warnings.len(), 1, "{log}");
    assert!(warnings[0].contains("subtitle"), "{log}");
}

/// One player's replies to the subtitle properties, paused at 1.52 s,
/// then at 3.0 s, with the delay and the track changed.
fn subtitle_replies(mut player: Player) -> Vec<(String, Value)> {
    let mut client = player.connect();
    let deadline = Instant::now() + Duration::from_secs(20);
    let at = |client: &mut IpcClient, time: f64| {
        // Refused until the file is loaded.
        while client.request(json!(["seek", time, "absolute", "exact"]))["error"] != "success" {
            assert!(Instant::now() < deadline, "{} loaded nothing", player.name);
            sleep(Duration::from_millis(50));
        }
        loop {
            let pos = client.request(json!(["get_property", "time-pos"]))["data"].as_f64();
            if pos.is_some_and(|p| (p - time).abs() < 0.01) {
                // mpv updates sub-text with the frame: give both a moment.
                sleep(Duration::from_millis(300));
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{} did not seek:\n{}",
                player.name,
                player.log()
            );
            sleep(Duration::from_millis(50));
        }
    };
    let mut replies = Vec::new();
    let mut ask = |client: &mut IpcClient, label: &str, command: Value| {
        replies.push((label.to_string(), client.request(command)));
    };
    at(&mut client, 1.52);
    ask(&mut client, "sid", json!(["get_property", "sid"]));
    ask(
        &mut client,
        "chapter-list",
        json!(["get_property", "chapter-list"]),
    );
    ask(
        &mut client,
        "chapter in the first",
        json!(["get_property", "chapter"]),
    );
    ask(
        &mut client,
        "sub-text in a cue",
        json!(["get_property", "sub-text"]),
    );
    ask(
        &mut client,
        "track-list",
        json!(["get_property", "track-list"]),
    );
    ask(
        &mut client,
        "sub-visibility",
        json!(["get_property", "sub-visibility"]),
    );
    ask(
        &mut client,
        "sub-delay",
        json!(["get_property", "sub-delay"]),
    );
    ask(
        &mut client,
        "set sub-delay",
        json!(["set_property", "sub-delay", 0.6]),
    );
    ask(
        &mut client,
        "sub-delay set",
        json!(["get_property", "sub-delay"]),
    );
    ask(
        &mut client,
        "set sub-visibility",
        json!(["set_property", "sub-visibility", false]),
    );
    ask(
        &mut client,
        "sub-visibility set",
        json!(["get_property", "sub-visibility"]),
    );
    at(&mut client, 3.0);
    ask(
        &mut client,
        "chapter in the second",
        json!(["get_property", "chapter"]),
    );
    ask(
        &mut client,
        "set chapter 5",
        json!(["set_property", "chapter", 5]),
    );
    ask(
        &mut client,
        "sub-text between cues",
        json!(["get_property", "sub-text"]),
    );
    ask(
        &mut client,
        "set sid no",
        json!(["set_property", "sid", "no"]),
    );
    ask(&mut client, "sid no", json!(["get_property", "sid"]));
    ask(
        &mut client,
        "sub-text without a track",
        json!(["get_property", "sub-text"]),
    );
    ask(&mut client, "set sid 2", json!(["set_property", "sid", 2]));
    ask(
        &mut client,
        "sid of no track",
        json!(["get_property", "sid"]),
    );
    client.request(json!(["quit"]));
    replies
}

/// The subtitle entry of a `track-list` reply, on the fields reel sends
/// but `src-id` (libavformat gives Matroska tracks none; mpv's own
/// demuxer gives their track number: README).
fn subtitle_entry(reply: &Value) -> Value {
    let entry = reply["data"]
        .as_array()
        .and_then(|tracks| tracks.iter().find(|t| t["type"] == "sub"))
        .cloned()
        .unwrap_or(Value::Null);
    let fields = [
        "id", "type", "default", "forced", "external", "selected", "codec",
    ];
    Value::Object(
        fields
            .iter()
            .map(|&f| (f.to_string(), entry[f].clone()))
            .collect(),
    )
}

#[test]
fn ipc_subtitle_properties_answer_as_mpv_does() {
    let clip = chapters_clip();
    let clip = clip.to_str().expect("UTF-8 path");
    let dir = std::env::temp_dir().join(format!("reel-subs-ipc-{}", std::process::id()));
    let mpv = Player::spawn(
        "mpv",
        "mpv",
        &[
            "--no-config",
            "--vo=null",
            "--ao=null",
            "--pause",
            "--sid=1",
            clip,
        ],
        &[],
        &dir,
    );
    let reel = Player::spawn(
        "reel",
        env!("CARGO_BIN_EXE_reel"),
        &["--output", "null", "--pause", "--sid=1", clip],
        &[],
        &dir.join("reel"),
    );
    let reel = subtitle_replies(reel);
    let mpv = subtitle_replies(mpv);
    for ((label, a), (_, b)) in mpv.iter().zip(&reel) {
        // The reply, not its request id (the seeks' retries differ).
        let (a, b) = if label == "track-list" {
            (subtitle_entry(a), subtitle_entry(b))
        } else {
            (
                json!({"error": a["error"], "data": a["data"]}),
                json!({"error": b["error"], "data": b["data"]}),
            )
        };
        assert_eq!(a, b, "{label}: mpv {a}, reel {b}");
    }
    assert_eq!(mpv[3].1["data"], FIRST, "mpv read the cue: {mpv:?}");
    assert_eq!(
        mpv[1].1["data"][1]["title"], "Middle",
        "mpv's chapters: {mpv:?}"
    );
}

/// `file` plays with `args` in weston: the position goes past 2 s (the
/// subtitles never hold the picture up), the subtitles are ready or given
/// up on, and reel quits cleanly; its log.
fn plays_on(file: &Path, args: &[&str]) -> String {
    let weston = Weston::start(640, 360);
    let mut reel = Reel::spawn(&weston.client_env(), weston.runtime_dir(), args, &[file]);
    reel.wait_for("playback", |s| {
        s["position"].parse::<f64>().is_ok_and(|p| p > 2.0)
    });
    // The subtitles read (or given up on) meanwhile, at their own pace.
    let deadline = Instant::now() + Duration::from_secs(30);
    while !reel.log().contains("subtitles ready") && !reel.log().contains("WARN") {
        assert!(Instant::now() < deadline, "no subtitles:\n{}", reel.log());
        sleep(Duration::from_millis(100));
    }
    assert!(reel.quit().success(), "{}", reel.log());
    reel.log()
}

#[test]
fn hostile_subtitle_files_cost_at_most_a_warning() {
    let dir = media_dir();
    let video = clip("plain.mkv", None);
    // An empty cue, and a cue ten hours long.
    let odd = dir.join("odd-cues.srt");
    std::fs::write(
        &odd,
        "1\n00:00:00,500 --> 00:00:01,000\n\n\n\
         2\n00:00:01,000 --> 10:00:01,000\nA VERY LONG CUE\n",
    )
    .expect("write");
    // 20 MB of ASS: 100,000 events, read on their own thread while the
    // video plays.
    let big = dir.join("big.ass");
    if !big.exists() {
        let mut text = String::from(
            "[Script Info]\nScriptType: v4.00+\nPlayResX: 640\nPlayResY: 360\n\n\
             [V4+ Styles]\nFormat: Name, Fontname, Fontsize, PrimaryColour, Bold, Alignment\n\
             Style: Default,sans-serif,24,&H00FFFFFF,0,2\n\n\
             [Events]\nFormat: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text\n",
        );
        let filler = "x".repeat(150);
        for i in 0..100_000u32 {
            let (s, cs) = (i / 100, i % 100);
            text.push_str(&format!(
                "Dialogue: 0,0:{:02}:{:02}.{cs:02},0:{:02}:{:02}.{:02},Default,,0,0,0,,{i} {filler}\n",
                s / 60 % 60,
                s % 60,
                s / 60 % 60,
                s % 60,
                (cs + 1).min(99),
            ));
        }
        std::fs::write(&big, text).expect("write the big ASS");
    }
    assert!(std::fs::metadata(&big).expect("big.ass").len() > 18_000_000);
    for (file, what) in [(&odd, "odd cues"), (&big, "20 MB of ASS")] {
        let log = plays_on(&video, &["-v", "--sub-file", file.to_str().expect("UTF-8")]);
        let warnings: Vec<&str> = log.lines().filter(|l| l.contains("WARN")).collect();
        assert!(warnings.len() <= 1, "{what}: {warnings:#?}");
        assert!(log.contains("subtitles ready"), "{what}: {log}");
    }
    // A track in a codec libavcodec does not know: the SubRip clip with
    // its Matroska codec id renamed.
    let unknown = dir.join("unknown-codec.mkv");
    if !unknown.exists() {
        let bytes = std::fs::read(clip("subrip.mkv", Some("srt"))).expect("read the clip");
        let at = bytes
            .windows(11)
            .position(|w| w == b"S_TEXT/UTF8")
            .expect("the SubRip codec id");
        let mut renamed = bytes;
        renamed[at..at + 11].copy_from_slice(b"S_TEXT/XYZ1");
        std::fs::write(&unknown, renamed).expect("write the renamed clip");
    }
    let log = plays_on(&unknown, &["-v", "--sid", "1"]);
    let warnings: Vec<&str> = log.lines().filter(|l| l.contains("WARN")).collect();
    assert_eq!(warnings.len(), 1, "unknown codec: {log}");
    assert!(warnings[0].contains("subtitle"), "unknown codec: {log}");
}

#[test]
fn a_text_track_inside_a_network_stream_is_said_not_shown_and_the_video_plays() {
    let dir = media_dir().join("served");
    std::fs::create_dir_all(&dir).expect("served dir");
    std::fs::copy(clip("subrip.mkv", Some("srt")), dir.join("subrip.mkv")).expect("copy");
    let server = support::http_server::HttpServer::start(&dir);
    // A control socket makes `--output null` the player, in real time:
    // the last second of the clip.
    let control = dir.join(format!("control-{}.sock", std::process::id()));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_reel"))
        .args([
            "--output",
            "null",
            "--start",
            "5",
            "--sid",
            "1",
            "--control",
        ])
        .arg(&control)
        .arg(server.url("subrip.mkv"))
        .output()
        .expect("run reel");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains("WARN")).collect();
    assert_eq!(warnings.len(), 1, "{stderr}");
    assert!(
        warnings[0].contains("subtitles inside a network stream"),
        "{stderr}"
    );
}
