//! mpv's JSON IPC (`--input-ipc-server`), checked against mpv itself: one
//! scripted session runs against Debian's mpv (`--vo=null --ao=null`), reel
//! headless (`--output null`) and reel in weston 14, and the replies and
//! events must agree field by field. A third-party mpv client library
//! drives reel unchanged; hostile clients do not stop playback; the
//! sockets never replace a file; `--idle` waits for `loadfile`.

use crate::support;

use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::thread::sleep;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::compositor::Weston;
use support::media;
use support::mpv_ipc::{IpcClient, Player, TIMEOUT};
use support::picture::psnr;

const REEL: &str = env!("CARGO_BIN_EXE_reel");
/// One frame of the 30 fps clips: how far time values may differ.
const FRAME: f64 = 1.0 / 30.0 + 1e-6;

/// The events of the subset reel speaks. mpv also sends `video-reconfig`
/// (the video output's state, which reel does not report) and `idle`
/// (sent by both, but mpv's first one may go out before the client is
/// connected, so its presence depends on timing): those are left out.
const COMPARED_EVENTS: [&str; 7] = [
    "start-file",
    "file-loaded",
    "seek",
    "playback-restart",
    "end-file",
    "property-change",
    "shutdown",
];

/// `video-params` fields mpv knows from its colour management and the
/// video output, which reel does not track: compared are the fields reel
/// sends (pixelformat, average-bpp, w, h, dw, dh, aspect, par).
const MPV_ONLY_VIDEO_PARAMS: [&str; 9] = [
    "colormatrix",
    "colorlevels",
    "primaries",
    "gamma",
    "sig-peak",
    "light",
    "chroma-location",
    "stereo-in",
    "rotate",
];

/// `track-list` fields mpv knows from its decoders and its track
/// selection options, which reel does not have: compared are the fields
/// reel sends (id, type, src-id, default, forced, external, selected,
/// ff-index, codec, lang, title, demux-w/h/fps, channels and rate).
const MPV_ONLY_TRACK_FIELDS: [&str; 8] = [
    "image",
    "albumart",
    "dependent",
    "visual-impaired",
    "hearing-impaired",
    "main-selection",
    "decoder-desc",
    "demux-par",
];

/// A directory for one player's socket and log: short, as socket paths
/// must be (108 bytes), and apart from other runs.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir()
        .join(format!("reel-ipc-{}", std::process::id()))
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// What one player answered to the session: each step's reply, and every
/// event of the compared kinds, in order.
#[derive(Debug)]
struct Transcript {
    replies: Vec<(String, Value)>,
    events: Vec<Value>,
}

/// The session: started idle with an empty playlist; observe pause and
/// time-pos; pause; load; seek exactly; step; read the properties; step
/// back; append and move in the playlist; malformed and refused requests;
/// a missing file; quit (ending with `exit_code`). Each step waits for
/// what it causes, so that nothing depends on timing.
fn session(player: &mut Player, first: &Path, second: &Path, exit_code: i32) -> Transcript {
    let mut client = player.connect();
    let mut replies = Vec::new();
    for name in [
        "idle-active",
        "playlist-count",
        "time-pos",
        "pause",
        "core-idle",
        "speed",
        "time-remaining",
        "loop-file",
        "loop-playlist",
        "track-list",
        "aid",
        "sid",
        "vid",
    ] {
        ask(
            &mut client,
            &mut replies,
            name,
            json!(["get_property", name]),
        );
    }
    ask(
        &mut client,
        &mut replies,
        "observe pause",
        json!(["observe_property", 1, "pause"]),
    );
    ask(
        &mut client,
        &mut replies,
        "observe time-pos",
        json!(["observe_property", 2, "time-pos"]),
    );
    client.wait_change(1, Some(json!(false)));
    client.wait_change(2, None);
    ask(
        &mut client,
        &mut replies,
        "pause",
        json!(["set_property", "pause", true]),
    );
    client.wait_change(1, Some(json!(true)));

    ask(
        &mut client,
        &mut replies,
        "loadfile",
        json!(["loadfile", first]),
    );
    client.wait_named("playback-restart");
    ask(
        &mut client,
        &mut replies,
        "seek exact",
        json!(["seek", 0.5, "absolute+exact"]),
    );
    client.wait_named("playback-restart");
    ask(
        &mut client,
        &mut replies,
        "frame-step",
        json!(["frame-step"]),
    );
    client.wait_event("time-pos after the step", |e| {
        e["id"] == 2 && e["data"].as_f64().is_some_and(|t| t > 0.5 + FRAME / 2.0)
    });
    for name in [
        "time-pos",
        "duration",
        "percent-pos",
        "path",
        "filename",
        "playlist-pos",
        "playlist-count",
        "playlist",
        "width",
        "height",
        "estimated-frame-number",
        "video-params",
        "hwdec-current",
        "eof-reached",
        "idle-active",
        "fullscreen",
        "pause",
        "nonexistent",
        "video-params/w",
        "video-params/dh",
        "video-params/nope",
        "playlist/0/filename",
        "playlist/count",
        "container-fps",
        "estimated-vf-fps",
        "loop-file",
        "loop-playlist",
        "core-idle",
        "speed",
        "video-codec",
        "file-format",
        "mpv-version",
        "time-remaining",
        "track-list",
        "aid",
        "sid",
        "vid",
        "paused-for-cache",
        "cache-buffering-state",
        "demuxer-cache-duration",
        "demuxer-via-network",
    ] {
        ask(
            &mut client,
            &mut replies,
            name,
            json!(["get_property", name]),
        );
    }
    for name in ["pause", "filename", "width", "time-pos", "nonexistent"] {
        ask(
            &mut client,
            &mut replies,
            &format!("string {name}"),
            json!(["get_property_string", name]),
        );
    }
    for (label, command) in [
        ("add volume", json!(["add", "volume", -10])),
        ("volume after add", json!(["get_property", "volume"])),
        ("add volume by one", json!(["add", "volume"])),
        ("add to nothing", json!(["add", "nonexistent", 1])),
        ("add to a string", json!(["add", "filename", 1])),
        ("show-text", json!(["show-text", "hello"])),
        ("show-text for 1 s", json!(["show-text", "hello", 1000])),
        ("get_version", json!(["get_version"])),
        ("client_name", json!(["client_name"])),
        ("get_time_us", json!(["get_time_us"])),
        ("set speed 1", json!(["set_property", "speed", 1])),
        ("set speed 2", json!(["set_property", "speed", 2])),
        ("speed after", json!(["get_property", "speed"])),
        ("multiply speed", json!(["multiply", "speed", 1.5])),
        ("speed multiplied", json!(["get_property", "speed"])),
        ("multiply a flag", json!(["multiply", "pause", 2])),
        ("set speed back", json!(["set_property", "speed", 1])),
        ("run", json!(["run", "true"])),
    ] {
        ask(&mut client, &mut replies, label, command);
    }
    ask(
        &mut client,
        &mut replies,
        "frame-back-step",
        json!(["frame-back-step"]),
    );
    client.wait_named("playback-restart");
    ask(
        &mut client,
        &mut replies,
        "time-pos after back-step",
        json!(["get_property", "time-pos"]),
    );

    ask(
        &mut client,
        &mut replies,
        "append",
        json!(["loadfile", second, "append"]),
    );
    ask(
        &mut client,
        &mut replies,
        "playlist",
        json!(["get_property", "playlist"]),
    );
    ask(
        &mut client,
        &mut replies,
        "playlist-next",
        json!(["playlist-next"]),
    );
    client.wait_named("playback-restart");
    for name in [
        "filename",
        "playlist-pos",
        "time-pos",
        "pause",
        "duration",
        "video-params",
    ] {
        ask(
            &mut client,
            &mut replies,
            name,
            json!(["get_property", name]),
        );
    }
    ask(
        &mut client,
        &mut replies,
        "playlist-next at the end",
        json!(["playlist-next"]),
    );
    ask(
        &mut client,
        &mut replies,
        "playlist-prev",
        json!(["playlist-prev"]),
    );
    client.wait_named("playback-restart");
    ask(
        &mut client,
        &mut replies,
        "seek percent",
        json!(["seek", 50, "absolute-percent+exact"]),
    );
    client.wait_named("playback-restart");
    ask(
        &mut client,
        &mut replies,
        "time-pos after percent seek",
        json!(["get_property", "time-pos"]),
    );
    ask(
        &mut client,
        &mut replies,
        "seek back",
        json!(["seek", -0.2, "relative+exact"]),
    );
    client.wait_named("playback-restart");
    ask(
        &mut client,
        &mut replies,
        "set time-pos",
        json!(["set_property", "time-pos", 0.2]),
    );
    client.wait_named("playback-restart");
    ask(
        &mut client,
        &mut replies,
        "time-pos after set",
        json!(["get_property", "time-pos"]),
    );
    // An input.conf-style line: run, no reply.
    client.send_raw(b"seek 0.1 absolute+exact\n");
    client.wait_named("playback-restart");
    ask(
        &mut client,
        &mut replies,
        "time-pos after a text seek",
        json!(["get_property", "time-pos"]),
    );
    ask(
        &mut client,
        &mut replies,
        "screenshot",
        json!(["screenshot-to-file", "/nonexistent/shot.png"]),
    );
    ask(
        &mut client,
        &mut replies,
        "set duration",
        json!(["set_property", "duration", 3]),
    );

    client.send_raw(b"{\"command\": [\"get_property\", \"pause\"\n");
    replies.push(("malformed JSON".into(), client.next_reply()));
    client.send_raw(b"{\"command\": \"get_property\"}\n");
    replies.push(("command not an array".into(), client.next_reply()));
    ask(
        &mut client,
        &mut replies,
        "unknown command",
        json!(["no-such-command"]),
    );
    ask(
        &mut client,
        &mut replies,
        "seek to nowhere",
        json!(["seek", "abc"]),
    );
    ask(
        &mut client,
        &mut replies,
        "pause maybe",
        json!(["set_property", "pause", "maybe"]),
    );
    ask(
        &mut client,
        &mut replies,
        "get_property without name",
        json!(["get_property"]),
    );
    ask(
        &mut client,
        &mut replies,
        "unobserve time-pos",
        json!(["unobserve_property", 2]),
    );
    ask(
        &mut client,
        &mut replies,
        "cycle pause",
        json!(["cycle", "pause"]),
    );
    client.wait_change(1, Some(json!(false)));
    ask(
        &mut client,
        &mut replies,
        "cycle pause again",
        json!(["cycle", "pause"]),
    );
    client.wait_change(1, Some(json!(true)));
    for (label, command) in [
        (
            "playlist-remove out of range",
            json!(["playlist-remove", 5]),
        ),
        ("playlist-remove", json!(["playlist-remove", 1])),
        ("playlist after remove", json!(["get_property", "playlist"])),
    ] {
        ask(&mut client, &mut replies, label, command);
    }
    // A file that cannot be played: end-file with an error, then idle.
    ask(
        &mut client,
        &mut replies,
        "loadfile missing",
        json!(["loadfile", "/nonexistent/missing.mp4"]),
    );
    let failed = client.wait_event("end-file error", |e| e["reason"] == "error");
    assert_eq!(failed["file_error"], "loading failed", "{failed}");
    ask(
        &mut client,
        &mut replies,
        "idle after error",
        json!(["get_property", "idle-active"]),
    );
    ask(
        &mut client,
        &mut replies,
        "count after error",
        json!(["get_property", "playlist-count"]),
    );
    ask(&mut client, &mut replies, "quit", json!(["quit"]));
    client.read_to_close();
    let status = player.wait();
    assert_eq!(
        status.code(),
        Some(exit_code),
        "{} quit with {status}:\n{}",
        player.name,
        player.log()
    );
    let events = client
        .events
        .iter()
        .filter(|e| COMPARED_EVENTS.iter().any(|name| e["event"] == *name))
        .cloned()
        .collect();
    Transcript { replies, events }
}

/// Replies whose value is reel's own by nature (a version, a clock):
/// compared in kind, the error and the data's JSON type.
/// `demuxer-cache-duration`: mpv reads a second ahead of a local file,
/// reel decodes a few frames ahead and reads no further.
const COMPARED_IN_KIND: [&str; 4] = [
    "mpv-version",
    "get_time_us",
    "string time-pos",
    "demuxer-cache-duration",
];

/// Where reel differs from mpv on purpose (README, "mpv's JSON IPC"),
/// with reel's reply: it runs no program for a client.
const DELIBERATE: [(&str, &str); 1] = [("run", "invalid parameter")];

fn ask(client: &mut IpcClient, replies: &mut Vec<(String, Value)>, label: &str, command: Value) {
    let reply = client.request(command);
    replies.push((label.to_string(), reply));
}

/// Equal JSON, numbers within one frame, `video-params` on reel's fields.
fn same(mpv: &Value, reel: &Value, at: &str) -> Result<(), String> {
    match (mpv, reel) {
        (Value::Number(a), Value::Number(b)) => {
            let (a, b) = (
                a.as_f64().unwrap_or(f64::NAN),
                b.as_f64().unwrap_or(f64::NAN),
            );
            // Percentages of a one-second clip: one frame is 100/30 %.
            let tolerance = if at.contains("percent") {
                100.0 * FRAME
            } else {
                FRAME
            };
            if (a - b).abs() <= tolerance {
                Ok(())
            } else {
                Err(format!("{at}: mpv {a}, reel {b}"))
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => a
            .iter()
            .zip(b)
            .enumerate()
            .try_for_each(|(i, (a, b))| same(a, b, &format!("{at}[{i}]"))),
        (Value::Object(a), Value::Object(b)) => {
            let video_params = a.contains_key("colormatrix");
            let track = a.contains_key("ff-index");
            for key in a.keys().chain(b.keys()) {
                if (video_params && MPV_ONLY_VIDEO_PARAMS.contains(&key.as_str()))
                    || (track && MPV_ONLY_TRACK_FIELDS.contains(&key.as_str()))
                {
                    assert!(!b.contains_key(key), "{at}: reel sends {key}: compare it");
                    continue;
                }
                match (a.get(key), b.get(key)) {
                    (Some(a), Some(b)) => same(a, b, &format!("{at}.{key}"))?,
                    (a, b) => return Err(format!("{at}.{key}: mpv {a:?}, reel {b:?}")),
                }
            }
            Ok(())
        }
        (a, b) if a == b => Ok(()),
        (a, b) => Err(format!("{at}: mpv {a}, reel {b}")),
    }
}

fn assert_agree(mpv: &Transcript, reel: &Transcript, what: &str) {
    let mut differences = Vec::new();
    assert_eq!(mpv.replies.len(), reel.replies.len());
    for ((label, a), (_, b)) in mpv.replies.iter().zip(&reel.replies) {
        if let Some((_, error)) = DELIBERATE.iter().find(|(l, _)| l == label) {
            assert_eq!(b["error"], *error, "reply to {label}: {b}");
            continue;
        }
        let compared = if COMPARED_IN_KIND.contains(&label.as_str()) {
            same(&kind(a), &kind(b), &format!("reply to {label} (in kind)"))
        } else {
            same(a, b, &format!("reply to {label}"))
        };
        if let Err(e) = compared {
            differences.push(e);
        }
    }
    // The other events in the same order.
    let (mpv_events, reel_events) = (happenings(&mpv.events), happenings(&reel.events));
    for i in 0..mpv_events.len().max(reel_events.len()) {
        match (mpv_events.get(i), reel_events.get(i)) {
            (Some(a), Some(b)) => {
                if let Err(e) = same(a, b, &format!("event {i}")) {
                    differences.push(e);
                }
            }
            (a, b) => differences.push(format!("event {i}: mpv {a:?}, reel {b:?}")),
        }
    }
    // Each observed property's changes: the same values in the same order,
    // each after the same events give or take one. mpv's own order of a
    // change and the events next to it varies from run to run (seen: a
    // seek's time-pos before or after its playback-restart; time-pos going
    // unavailable before end-file or after the next start-file), so the
    // events counted are those a change cannot overtake: not start-file
    // and end-file, and one either way.
    for id in [1, 2] {
        let (a, b) = (changes(&mpv.events, id), changes(&reel.events, id));
        if a.len() != b.len() {
            differences.push(format!("observer {id}: mpv {a:?}, reel {b:?}"));
            continue;
        }
        for (i, ((at_a, a), (at_b, b))) in a.iter().zip(&b).enumerate() {
            if let Err(e) = same(a, b, &format!("observer {id} change {i}")) {
                differences.push(e);
            }
            if at_a.abs_diff(*at_b) > 1 {
                differences.push(format!(
                    "observer {id} change {i}: after event {at_a} in mpv, {at_b} in reel"
                ));
            }
        }
    }
    assert!(
        differences.is_empty(),
        "{what} differs from mpv:\n{}\n\nmpv events:\n{}\nreel events:\n{}",
        differences.join("\n"),
        lines(&mpv.events),
        lines(&reel.events)
    );
}

/// A reply with its data replaced by the name of its JSON type.
fn kind(reply: &Value) -> Value {
    let mut reply = reply.clone();
    if let Some(data) = reply.get_mut("data") {
        *data = json!(match data {
            Value::Null => "null",
            Value::Bool(_) => "bool",
            Value::Number(n) if n.is_f64() => "float",
            Value::Number(_) => "integer",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
        });
    }
    reply
}

/// The events that are not property changes.
fn happenings(events: &[Value]) -> Vec<Value> {
    events
        .iter()
        .filter(|e| e["event"] != "property-change")
        .cloned()
        .collect()
}

/// Observer `id`'s changes, each with the number of events before it,
/// start-file and end-file not counted.
fn changes(events: &[Value], id: i64) -> Vec<(usize, Value)> {
    let mut before = 0;
    let mut found = Vec::new();
    for event in events {
        if event["event"] == "property-change" {
            if event["id"] == id {
                found.push((before, event.clone()));
            }
        } else if event["event"] != "start-file" && event["event"] != "end-file" {
            before += 1;
        }
    }
    found
}

fn lines(events: &[Value]) -> String {
    events.iter().map(|e| format!("  {e}\n")).collect()
}

fn clips() -> (PathBuf, PathBuf) {
    (
        media::clip("h264_baseline.mp4"),
        media::clip("hevc_main.mkv"),
    )
}

/// mpv's transcript, recorded once for every comparison.
fn mpv_transcript() -> &'static Transcript {
    static MPV: OnceLock<Transcript> = OnceLock::new();
    MPV.get_or_init(|| {
        let (first, second) = clips();
        let mut mpv = Player::spawn(
            "mpv",
            "mpv",
            &[
                "--no-config",
                "--idle",
                "--vo=null",
                "--ao=null",
                "--hwdec=no",
            ],
            &[],
            &scratch("mpv"),
        );
        // mpv's `quit` ends it with 0 whatever failed.
        session(&mut mpv, &first, &second, 0)
    })
}

#[test]
fn reel_headless_answers_the_session_as_mpv_does() {
    let (first, second) = clips();
    let mut reel = Player::spawn(
        "reel-null",
        REEL,
        &["--idle", "--output", "null"],
        &[],
        &scratch("null"),
    );
    // reel's exit status says a file could not be played (README).
    let transcript = session(&mut reel, &first, &second, 1);
    assert_agree(mpv_transcript(), &transcript, "reel --output null");
}

#[test]
fn reel_in_weston_answers_the_session_as_mpv_does() {
    let weston = Weston::start_with_shell(640, 480, "desktop");
    let (first, second) = clips();
    let mut reel = Player::spawn(
        "reel-weston",
        REEL,
        &["--idle"],
        &weston.client_env(),
        &scratch("weston"),
    );
    // reel's exit status says a file could not be played (README).
    let transcript = session(&mut reel, &first, &second, 1);
    assert_agree(mpv_transcript(), &transcript, "reel in weston");
}

/// reel headless playing `clip` in a loop, serving the IPC and the line
/// protocol (`control.sock` beside the IPC socket).
fn looping_reel(name: &str, clip: &Path) -> Player {
    let dir = scratch(name);
    let control = dir.join("control.sock");
    let args = [
        "--output",
        "null",
        "--loop",
        "--control",
        control.to_str().expect("socket path"),
        clip.to_str().expect("clip path"),
    ];
    Player::spawn(name, REEL, &args, &[], &dir)
}

fn time_pos(client: &mut IpcClient) -> f64 {
    let reply = client.request(json!(["get_property", "time-pos"]));
    reply["data"]
        .as_f64()
        .unwrap_or_else(|| panic!("no time-pos: {reply}"))
}

/// Media time passes: the player is still playing.
fn assert_playing(player: &mut Player, client: &mut IpcClient) {
    let playlist_time = |client: &mut IpcClient| {
        (
            client.request(json!(["get_property", "estimated-frame-number"]))["data"].clone(),
            time_pos(client),
        )
    };
    let before = playlist_time(client);
    sleep(Duration::from_millis(300));
    let after = playlist_time(client);
    assert_ne!(before, after, "playback stopped:\n{}", player.log());
    assert!(player.is_running(), "reel died:\n{}", player.log());
}

/// Whether the player closed `stream` (reading reaches its end).
fn closed_by_player(stream: &mut UnixStream) -> bool {
    let deadline = Instant::now() + TIMEOUT;
    stream
        .set_read_timeout(Some(Duration::from_millis(200)))
        .expect("timeout");
    let mut sink = vec![0u8; 1 << 16];
    while Instant::now() < deadline {
        match stream.read(&mut sink) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return true,
            Err(_) => {}
        }
    }
    false
}

#[test]
fn hostile_clients_are_answered_or_dropped_and_playback_goes_on() {
    let clip = media::clip("h264_baseline.mp4");
    let mut reel = looping_reel("hostile", &clip);
    let mut client = reel.connect();
    let control = reel.socket.with_file_name("control.sock");
    for socket in [&reel.socket, &control] {
        let mode = std::fs::metadata(socket)
            .expect("socket")
            .permissions()
            .mode();
        assert_eq!(
            mode & 0o777,
            0o600,
            "{} is not owner-only",
            socket.display()
        );
    }

    // Malformed and unknown requests are answered with mpv's errors.
    for (line, error) in [
        (&b"{\"command\": [\"seek\"\n"[..], "invalid parameter"),
        (b"{\"command\": 5}\n", "invalid parameter"),
        (b"{\xff\xfe}\n", "invalid parameter"),
        (
            b"{\"command\": [\"launch-rockets\"], \"request_id\": 9}\n",
            "invalid parameter",
        ),
        (
            b"{\"command\": [\"get_property\", \"x\"], \"request_id\": 9}\n",
            "property not found",
        ),
        (b"{\"command\": [\"seek\", 1e400]}\n", "invalid parameter"),
    ] {
        client.send_raw(line);
        let reply = client.next_reply();
        assert_eq!(reply["error"], error, "{}", String::from_utf8_lossy(line));
    }

    // A client that sends its request and closes its sending side, as
    // `echo ... | socat - UNIX-CONNECT:...` does, still gets the reply.
    let mut half = UnixStream::connect(&reel.socket).expect("connect");
    half.write_all(b"{\"command\": [\"get_property\", \"filename\"]}\n")
        .expect("send");
    half.shutdown(std::net::Shutdown::Write)
        .expect("half-close");
    let mut answer = String::new();
    half.set_read_timeout(Some(TIMEOUT)).expect("timeout");
    half.read_to_string(&mut answer).expect("read the reply");
    assert!(
        answer.contains("\"data\":\"h264_baseline.mp4\""),
        "{answer:?}"
    );
    // The same on the line protocol.
    let mut half = UnixStream::connect(&control).expect("connect");
    half.write_all(b"pause\nresume\n").expect("send");
    half.shutdown(std::net::Shutdown::Write)
        .expect("half-close");
    let mut answer = String::new();
    half.set_read_timeout(Some(TIMEOUT)).expect("timeout");
    half.read_to_string(&mut answer).expect("read the reply");
    assert_eq!(answer, "ok\nok\n");

    // A line longer than any request: disconnected.
    let mut huge = UnixStream::connect(&reel.socket).expect("connect");
    let chunk = vec![b'x'; 1 << 20];
    let _ = huge.write_all(&chunk);
    assert!(closed_by_player(&mut huge), "a 1 MiB line was not refused");

    // A client that sends requests but never reads its replies: dropped
    // once its replies pile up, while the others are served.
    let mut deaf = UnixStream::connect(&reel.socket).expect("connect");
    deaf.set_write_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    let request = b"{\"command\": [\"get_property\", \"playlist\"]}\n".repeat(1000);
    for _ in 0..100 {
        if deaf.write_all(&request).is_err() {
            break;
        }
    }
    assert_playing(&mut reel, &mut client);

    // 100 clients at once, each answered.
    let mut crowd: Vec<IpcClient> = (0..100)
        .map(|i| {
            IpcClient::new(
                UnixStream::connect(&reel.socket).expect("connect"),
                &format!("client {i}"),
            )
        })
        .collect();
    for member in &mut crowd {
        member.send_raw(b"{\"command\": [\"get_property\", \"filename\"], \"request_id\": 1}\n");
    }
    for member in &mut crowd {
        assert_eq!(member.next_reply()["data"], "h264_baseline.mp4");
    }
    drop(crowd);
    assert!(
        closed_by_player(&mut deaf),
        "a client that never reads was kept"
    );
    assert_playing(&mut reel, &mut client);

    assert_eq!(client.request(json!(["quit"]))["error"], "success");
    let status = reel.wait();
    let log = reel.log();
    assert!(status.success(), "reel ended with {status}:\n{log}");
    assert!(!log.contains("panicked"), "{log}");
}

/// Runs reel with `option PATH` on a regular file holding data.
fn refuses_to_replace_a_file(option: &str) {
    let dir = scratch(&format!("refuse{option}"));
    let path = dir.join("precious.txt");
    std::fs::write(&path, "data that must survive\n").expect("write");
    let clip = media::clip("h264_baseline.mp4");
    let output = Command::new(REEL)
        .args(["--output", "null", option])
        .arg(&path)
        .arg(&clip)
        .output()
        .expect("run reel");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !output.status.success(),
        "{option} took over a file:\n{stderr}"
    );
    assert!(stderr.contains("not a socket"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(&path).expect("the file survived"),
        "data that must survive\n"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn ipc_socket_never_replaces_a_file() {
    refuses_to_replace_a_file("--input-ipc-server");
}

#[test]
fn control_socket_never_replaces_a_file() {
    refuses_to_replace_a_file("--control");
}

/// `--idle`: open with an empty playlist; plays what `loadfile` brings;
/// idle again at the end of it, still running.
fn idle_waits_for_loadfile(mut reel: Player) {
    let clip = media::clip("h264_baseline.mp4");
    let mut client = reel.connect();
    sleep(Duration::from_millis(500));
    assert!(reel.is_running(), "reel left idle:\n{}", reel.log());
    assert_eq!(
        client.request(json!(["get_property", "idle-active"]))["data"],
        true
    );
    assert_eq!(
        client.request(json!(["get_property", "playlist-count"]))["data"],
        0
    );
    let reply = client.request(json!(["loadfile", clip, "append-play"]));
    assert_eq!(reply["data"]["playlist_entry_id"], 1, "{reply}");
    client.wait_named("playback-restart");
    assert_eq!(
        client.request(json!(["get_property", "idle-active"]))["data"],
        false
    );
    let end = client.wait_named("end-file");
    assert_eq!(end["reason"], "eof", "{end}");
    client.wait_named("idle");
    sleep(Duration::from_millis(300));
    assert!(
        reel.is_running(),
        "reel exited after the playlist:\n{}",
        reel.log()
    );
    assert_eq!(
        client.request(json!(["get_property", "idle-active"]))["data"],
        true
    );
    assert_eq!(client.request(json!(["quit"]))["error"], "success");
    assert!(reel.wait().success(), "{}", reel.log());
}

#[test]
fn idle_headless_waits_for_loadfile() {
    idle_waits_for_loadfile(Player::spawn(
        "idle-null",
        REEL,
        &["--idle", "--output", "null"],
        &[],
        &scratch("idle-null"),
    ));
}

#[test]
fn idle_in_weston_waits_for_loadfile() {
    let weston = Weston::start(640, 480);
    idle_waits_for_loadfile(Player::spawn(
        "idle-weston",
        REEL,
        &["--idle"],
        &weston.client_env(),
        &scratch("idle-weston"),
    ));
}

/// The venv packaging/install-deps.sh puts python-mpv-jsonipc in.
fn mpv_client_python() -> PathBuf {
    let venv = std::env::var_os("REEL_IPC_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| support::target_dir().join("mpv-ipc-venv"));
    let python = venv.join("bin/python");
    let found = Command::new(&python)
        .args(["-c", "import python_mpv_jsonipc"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        found,
        "python-mpv-jsonipc is not installed in {} (run packaging/install-deps.sh)",
        venv.display()
    );
    python
}

/// python-mpv-jsonipc, a client library written for mpv, drives reel
/// unchanged: it learns the properties, loads a file, observes time-pos,
/// seeks, pauses and reads properties back.
#[test]
fn a_third_party_mpv_client_drives_reel() {
    let python = mpv_client_python();
    let clip = media::clip("h264_baseline.mp4");
    let mut reel = Player::spawn(
        "python",
        REEL,
        &["--idle", "--output", "null"],
        &[],
        &scratch("python"),
    );
    drop(reel.connect());
    let script = r#"
import json, sys, threading
from python_mpv_jsonipc import MPV
mpv = MPV(start_mpv=False, ipc_socket=sys.argv[1])
restarted = threading.Event()
mpv.bind_event("playback-restart", lambda data: restarted.set())
times = []
mpv.bind_property_observer("time-pos", lambda name, value: times.append(value))
mpv.pause = True
mpv.play(sys.argv[2])
assert restarted.wait(20), "no playback-restart after loadfile"
restarted.clear()
mpv.seek(0.5, "absolute+exact")
assert restarted.wait(20), "no playback-restart after seek"
print(json.dumps({
    "pause": mpv.pause,
    "time_pos": mpv.time_pos,
    "filename": mpv.filename,
    "duration": mpv.duration,
    "count": mpv.playlist_count,
    "width": mpv.width,
    "observed": [t for t in times if t is not None],
}))
mpv.command("quit")
mpv.terminate()
"#;
    let output = Command::new(python)
        .arg("-c")
        .arg(script)
        .arg(&reel.socket)
        .arg(&clip)
        .output()
        .expect("run python");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the client failed:\n{stdout}\n{}\nreel:\n{}",
        String::from_utf8_lossy(&output.stderr),
        reel.log()
    );
    let report: Value = serde_json::from_str(stdout.trim()).expect("the script's report");
    assert_eq!(report["pause"], true);
    assert_eq!(report["filename"], "h264_baseline.mp4");
    assert_eq!(report["count"], 1);
    assert_eq!(report["width"], 320);
    let time = report["time_pos"].as_f64().expect("time-pos");
    assert!((time - 0.5).abs() < FRAME, "{report}");
    let duration = report["duration"].as_f64().expect("duration");
    assert!((duration - 1.0).abs() < FRAME, "{report}");
    assert!(
        report["observed"]
            .as_array()
            .is_some_and(|t| t.iter().any(|t| t.as_f64() == Some(time))),
        "the observer never saw the seek: {report}"
    );
    assert!(reel.wait().success(), "{}", reel.log());
}

/// `screenshot-to-file` writes the frame on screen (the decoder's, with no
/// window here): ffmpeg's decode of that frame, matched better than its
/// neighbours.
#[test]
fn screenshot_is_the_picture_on_screen() {
    let clip = media::clip("h264_baseline.mp4");
    let dir = scratch("screenshot");
    let mut reel = Player::spawn(
        "screenshot",
        REEL,
        &["--idle", "--pause", "--output", "null"],
        &[],
        &dir,
    );
    let mut client = reel.connect();
    client.request(json!(["loadfile", clip]));
    client.wait_named("playback-restart");
    // 0.4 s is frame 12 of the 30 fps clip.
    client.request(json!(["seek", 0.4, "absolute+exact"]));
    client.wait_named("playback-restart");
    let shot = dir.join("shot.png");
    let reply = client.request(json!(["screenshot-to-file", shot]));
    assert_eq!(reply["error"], "success", "{reply}\n{}", reel.log());
    let picture = support::compositor::decode_png(&shot);
    assert_eq!((picture.width, picture.height), (320, 240));
    let score = |index| {
        psnr(
            &picture.rgb,
            &media::ffmpeg_frame_rgb(&clip, index, 320, 240),
        )
    };
    // The decoder's own pixels, converted to RGB as ffmpeg converts them.
    let wanted = score(12);
    assert!(
        wanted >= 45.0,
        "the screenshot is not frame 12: PSNR {wanted:.1} dB"
    );
    for other in [11, 13] {
        let theirs = score(other);
        assert!(
            wanted > theirs + 0.5,
            "the screenshot matches frame {other} ({theirs:.2} dB) as well as frame 12 ({wanted:.2} dB)"
        );
    }
    let refused = client.request(json!(["screenshot-to-file", dir.join("shot.jpg")]));
    assert_eq!(refused["error"], "error running command");
    assert_eq!(client.request(json!(["quit"]))["error"], "success");
    assert!(reel.wait().success(), "{}", reel.log());
}
