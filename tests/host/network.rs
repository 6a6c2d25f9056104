//! Network sources against real local servers (loopback only): a clip
//! served progressively over HTTP with byte ranges, and as HLS, decodes to
//! FFmpeg's framemd5; what a network source may open is its protocol's
//! whitelist (an HLS playlist naming a local file is refused when it came
//! from the network, played when it came from the disk); a 404, an unknown scheme, an untrusted TLS
//! certificate and a server that never answers each end in one clear error;
//! a live stream has no duration, does not seek, and plays on after its
//! server was killed and started again, five times, without growing its
//! file descriptors, and another file loaded while it waits to reconnect
//! plays at once, as one does while a source connects (`quit` ends reel at
//! once then); MPEG-TS over UDP plays live; a live RTSP camera (GStreamer's
//! test source) plays on after its server was killed and started again. RTSP (GStreamer's server):
//! H.264 and HEVC, interleaved in TCP (the default) and over UDP, decode to
//! FFmpeg's framemd5 of the same URL; `--rtsp-transport` is what reel asks
//! the server for (a server refusing it is one clear error).

use crate::support;
use support::http_server::HttpServer;
use support::media::clip;
use support::rtsp_server::RtspServer;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const CLIP: &str = "h264_25fps.mp4";

/// A fresh directory for one test's served files.
fn served_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("network")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("served dir");
    dir
}

fn reel(args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_reel"))
        .args(["--hwdec=no"])
        .args(args)
        .output()
        .expect("spawn reel");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "reel panicked: {stderr}");
    out
}

fn ffmpeg_framemd5(input: &str) -> String {
    ffmpeg_framemd5_with(&[], input)
}

/// FFmpeg's framemd5 of `input` opened with `options`.
fn ffmpeg_framemd5_with(options: &[&str], input: &str) -> String {
    let out = Command::new("ffmpeg")
        .args(["-nostdin", "-hide_banner", "-loglevel", "error"])
        .args(options)
        .args(["-i", input])
        .args(["-autoscale", "0", "-an", "-f", "framemd5", "-"])
        .output()
        .expect("spawn ffmpeg");
    assert!(
        out.status.success(),
        "ffmpeg failed on {input}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 framemd5")
}

/// The framemd5 rows (no header: the stream's index and the writing
/// program may differ), at least one.
fn rows(framemd5: &str) -> Vec<String> {
    let rows: Vec<String> = framemd5
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(str::to_owned)
        .collect();
    assert!(!rows.is_empty(), "no frames in:\n{framemd5}");
    rows
}

/// The hashes, sizes and timestamps of each row (the stream index cut).
fn pictures(framemd5: &str) -> Vec<String> {
    rows(framemd5)
        .iter()
        .map(|row| {
            row.split_once(',')
                .map_or(row.clone(), |(_, rest)| rest.to_owned())
        })
        .collect()
}

fn reel_framemd5(url: &str, extra: &[&str]) -> String {
    let out = reel(&[&["--output", "framemd5"], extra, &[url]].concat());
    assert!(
        out.status.success(),
        "reel failed on {url}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 framemd5")
}

/// Exit code 1 and one error line that says `expected`.
fn assert_fails(out: &Output, expected: &[&str]) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "exit status; stderr:\n{stderr}");
    let errors: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("reel: error:"))
        .collect();
    assert_eq!(errors.len(), 1, "one error line expected:\n{stderr}");
    for word in expected {
        assert!(errors[0].contains(word), "{word:?} not in {:?}", errors[0]);
    }
}

/// HLS VOD segments and playlist of `clip` in `dir` (two-second segments).
fn make_hls(source: &Path, dir: &Path, playlist: &str) {
    let status = Command::new("ffmpeg")
        .args(["-nostdin", "-v", "error", "-y", "-i"])
        .arg(source)
        .args(["-c", "copy", "-an", "-f", "hls", "-hls_time", "1"])
        .args(["-hls_playlist_type", "vod", "-hls_segment_filename"])
        .arg(dir.join("seg%03d.ts"))
        .arg(dir.join(playlist))
        .status()
        .expect("spawn ffmpeg");
    assert!(status.success(), "ffmpeg -f hls failed");
}

#[test]
fn a_clip_over_http_decodes_as_the_file_does() {
    let dir = served_dir("progressive");
    std::fs::copy(clip(CLIP), dir.join(CLIP)).expect("copy clip");
    let server = HttpServer::start(&dir);
    let expected = ffmpeg_framemd5(&clip(CLIP).to_string_lossy());
    let got = reel_framemd5(&server.url(CLIP), &[]);
    assert_eq!(pictures(&got), pictures(&expected));
}

#[test]
fn hls_over_http_decodes_as_ffmpeg_decodes_it() {
    let dir = served_dir("hls-vod");
    make_hls(&clip(CLIP), &dir, "index.m3u8");
    let server = HttpServer::start(&dir);
    let url = server.url("index.m3u8");
    let expected = ffmpeg_framemd5(&url);
    let got = reel_framemd5(&url, &[]);
    assert_eq!(pictures(&got), pictures(&expected));
    assert!(pictures(&got).len() >= 25, "a second of pictures at least");
}

#[test]
fn rtsp_decodes_as_ffmpeg_decodes_it_over_tcp_and_udp() {
    let hevc = "hevc_main.mkv";
    let server = RtspServer::start(&[&clip(CLIP), &clip(hevc)]);
    for name in [CLIP, hevc] {
        let url = server.url(name);
        let expected = pictures(&ffmpeg_framemd5_with(&["-rtsp_transport", "tcp"], &url));
        assert!(
            expected.len() >= 25,
            "{name}: FFmpeg's pictures {expected:?}"
        );
        for transport in ["tcp", "udp"] {
            let got = reel_framemd5(&url, &["--rtsp-transport", transport]);
            assert_eq!(pictures(&got), expected, "{name} over {transport}");
        }
    }
    // TCP unless told otherwise: a server that only speaks TCP plays, one
    // that only speaks UDP refuses with its reason.
    let expected = pictures(&ffmpeg_framemd5_with(
        &["-rtsp_transport", "tcp"],
        &server.url(CLIP),
    ));
    let got = reel_framemd5(&server.url(&format!("tcp/{CLIP}")), &[]);
    assert_eq!(pictures(&got), expected);
    let udp_only = server.url(&format!("udp/{CLIP}"));
    assert_fails(
        &reel(&["--output", "framemd5", &udp_only]),
        &[&udp_only, "Unsupported transport"],
    );
}

#[test]
fn a_playlist_from_the_network_cannot_name_a_local_file() {
    let dir = served_dir("hls-file-segment");
    make_hls(&clip(CLIP), &dir, "index.m3u8");
    let local = dir.join("seg000.ts");
    let playlist = format!(
        "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXT-X-PLAYLIST-TYPE:VOD\n\
         #EXTINF:1.0,\nfile://{}\n#EXT-X-ENDLIST\n",
        local.display()
    );
    std::fs::write(dir.join("evil.m3u8"), playlist).expect("write playlist");
    // The segment is a real one: the same playlist read from the disk
    // plays it, as FFmpeg does.
    let from_disk = dir.join("evil.m3u8").to_string_lossy().into_owned();
    assert_eq!(
        pictures(&reel_framemd5(&from_disk, &[])),
        pictures(&ffmpeg_framemd5(&from_disk))
    );
    let server = HttpServer::start(&dir);
    let url = server.url("evil.m3u8");
    let out = reel(&["--output", "framemd5", &url]);
    assert_fails(&out, &["refused", "file://", "http source may not open"]);
    assert!(out.stdout.is_empty(), "no picture of the local file");
}

#[test]
fn a_missing_resource_is_one_clear_error() {
    let dir = served_dir("missing");
    let server = HttpServer::start(&dir);
    let url = server.url("nothing-here.mp4");
    assert_fails(&reel(&["--output", "null", &url]), &[&url, "404"]);
}

#[test]
fn a_scheme_reel_does_not_play_is_said_so() {
    let url = "gopher://127.0.0.1:1/clip.mp4";
    assert_fails(
        &reel(&["--output", "null", url]),
        &["does not play gopher://", "https"],
    );
}

/// A self-signed certificate for 127.0.0.1, made by openssl.
fn self_signed(dir: &Path) -> (PathBuf, PathBuf) {
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    let status = Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
        ])
        .args([
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .stderr(std::process::Stdio::null())
        .status()
        .expect("spawn openssl");
    assert!(status.success(), "openssl req failed");
    (cert, key)
}

#[test]
fn an_untrusted_certificate_is_refused_unless_told_otherwise() {
    let dir = served_dir("tls");
    let keys = served_dir("tls-keys");
    std::fs::copy(clip(CLIP), dir.join(CLIP)).expect("copy clip");
    let (cert, key) = self_signed(&keys);
    let server = HttpServer::start_tls(&dir, &cert, &key);
    let url = server.url(CLIP);
    let out = reel(&["--output", "framemd5", &url]);
    assert_fails(&out, &[&url, "certificate"]);
    assert!(out.stdout.is_empty());
    let expected = ffmpeg_framemd5(&clip(CLIP).to_string_lossy());
    let got = reel_framemd5(&url, &["--tls-verify=no"]);
    assert_eq!(pictures(&got), pictures(&expected));
}

/// A server that accepts and never answers (connections complete in the
/// kernel's backlog; nobody reads them), and a URL on it.
fn silent_server() -> (TcpListener, String) {
    let silent = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = silent.local_addr().expect("address").port();
    (silent, format!("http://127.0.0.1:{port}/clip.mp4"))
}

#[test]
fn a_server_that_never_answers_times_out() {
    let (_silent, url) = silent_server();
    let start = Instant::now();
    let out = reel(&["--output", "null", "--network-timeout", "2", &url]);
    let took = start.elapsed();
    assert_fails(&out, &[&url, "no answer within 2 s"]);
    assert!(
        took >= Duration::from_secs(2) && took < Duration::from_secs(20),
        "gave up after {took:?}"
    );
}

#[test]
fn commands_are_answered_while_a_source_connects() {
    use serde_json::json;
    let (_silent, url) = silent_server();
    let mut reel = support::mpv_ipc::Player::spawn(
        "reel",
        env!("CARGO_BIN_EXE_reel"),
        &[
            "--hwdec=no",
            "--output",
            "null",
            "--network-timeout",
            "60",
            &url,
        ],
        &[],
        &Path::new(env!("CARGO_TARGET_TMPDIR")).join("network/connecting"),
    );
    let mut client = reel.connect();
    // The connect waits for an answer that never comes; the player does
    // not: a local file loaded meanwhile plays at once.
    let start = Instant::now();
    let count = client.request(json!(["get_property", "playlist-count"]));
    assert_eq!(count["data"], 1, "{count}");
    let local = clip(CLIP);
    let reply = client.request(json!(["loadfile", local.to_string_lossy()]));
    assert_eq!(reply["error"], "success", "{reply}");
    playing_position(&mut client);
    let path = client.request(json!(["get_property", "path"]));
    assert_eq!(path["data"], json!(local.to_string_lossy()), "{path}");
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "the connect held the player for {:?}",
        start.elapsed()
    );
    // `quit` while the source connects again ends reel at once.
    let reply = client.request(json!(["loadfile", url]));
    assert_eq!(reply["error"], "success", "{reply}");
    std::thread::sleep(Duration::from_millis(300));
    quits_at_once(&mut reel, &mut client);
}

/// FFmpeg sending a live stream in real time, stopped when dropped.
struct LiveFfmpeg(std::process::Child);

impl LiveFfmpeg {
    /// A live HLS playlist in `dir` (no ENDLIST: segments are appended
    /// while it runs), once it lists two segments.
    fn hls(dir: &Path) -> LiveFfmpeg {
        let child = Command::new("ffmpeg")
            .args(["-nostdin", "-v", "error", "-re", "-f", "lavfi"])
            .args(["-i", "testsrc=size=160x90:rate=25", "-c:v", "libx264"])
            .args(["-preset", "ultrafast", "-g", "25", "-pix_fmt", "yuv420p"])
            .args(["-f", "hls", "-hls_time", "1", "-hls_list_size", "5"])
            .arg(dir.join("live.m3u8"))
            .stdin(std::process::Stdio::null())
            .spawn()
            .expect("spawn ffmpeg");
        let live = LiveFfmpeg(child);
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::fs::read_to_string(dir.join("live.m3u8"))
            .map_or(true, |playlist| playlist.matches("#EXTINF").count() < 2)
        {
            assert!(Instant::now() < deadline, "no live playlist");
            std::thread::sleep(Duration::from_millis(100));
        }
        live
    }
}

impl Drop for LiveFfmpeg {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// reel playing `url` under IPC control, with no output.
fn reel_player(url: &str, dir: &str) -> support::mpv_ipc::Player {
    support::mpv_ipc::Player::spawn(
        "reel",
        env!("CARGO_BIN_EXE_reel"),
        &["--hwdec=no", "--output", "null", "-v", url],
        &[],
        &Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join("network")
            .join(dir),
    )
}

/// The player's position once it plays.
fn playing_position(client: &mut support::mpv_ipc::IpcClient) -> f64 {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let reply = client.request(serde_json::json!(["get_property", "time-pos"]));
        if let Some(position) = reply["data"].as_f64() {
            return position;
        }
        assert!(Instant::now() < deadline, "never played: {reply}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_live_stream_has_no_duration_and_does_not_seek() {
    use serde_json::json;
    use support::mpv_ipc::Player;
    let dir = served_dir("hls-live");
    let _live = LiveFfmpeg::hls(&dir);
    let server = HttpServer::start(&dir);
    let url = server.url("live.m3u8");
    let players = Path::new(env!("CARGO_TARGET_TMPDIR")).join("network/players");
    let mut mpv = Player::spawn(
        "mpv",
        "mpv",
        &["--no-config", "--vo=null", "--ao=null", "--hwdec=no", &url],
        &[],
        &players.join("mpv"),
    );
    let mut oracle = mpv.connect();
    playing_position(&mut oracle);
    let mpv_seek = oracle.request(json!(["seek", 10, "absolute"]));
    drop(mpv);

    let mut reel = reel_player(&url, "players/reel");
    let mut client = reel.connect();
    let before = playing_position(&mut client);
    let duration = client.request(json!(["get_property", "duration"]));
    assert_eq!(duration["error"], "property unavailable", "{duration}");
    let seek = client.request(json!(["seek", 10, "absolute"]));
    assert_eq!(
        seek["error"], mpv_seek["error"],
        "reel {seek}, mpv {mpv_seek}"
    );
    // Segments appended after the start play on; the seek moved nothing.
    std::thread::sleep(Duration::from_millis(2500));
    let after = playing_position(&mut client);
    assert!(
        after > before + 1.0 && after < before + 6.0,
        "from {before} to {after}"
    );
    quits_at_once(&mut reel, &mut client);
}

fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .expect("the player's fds")
        .count()
}

/// Kills `server` (drops it) and starts it again (`restart`) `cycles`
/// times while `reel` plays its live stream: each time reel notices,
/// reconnects, and plays on a second at least. `outage` runs during the
/// first outage, `back` once the first is over. The player's open file
/// descriptors after each cycle.
fn play_through_outages<S>(
    reel: &mut support::mpv_ipc::Player,
    client: &mut support::mpv_ipc::IpcClient,
    (mut server, restart): (S, impl Fn() -> S),
    cycles: usize,
    outage: impl Fn(&support::mpv_ipc::Player, &mut support::mpv_ipc::IpcClient),
    back: impl Fn(&mut support::mpv_ipc::IpcClient),
) -> Vec<usize> {
    let mut position = playing_position(client);
    let mut fds = Vec::new();
    for cycle in 1..=cycles {
        drop(server);
        let deadline = Instant::now() + Duration::from_secs(20);
        // The outage noticed: a retry since the last reconnection.
        let outage_seen = |log: String| {
            log.rsplit("reconnected")
                .next()
                .is_some_and(|since| since.contains("reconnecting in"))
        };
        while !outage_seen(reel.log()) {
            assert!(
                Instant::now() < deadline,
                "no reconnection:\n{}",
                reel.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        if cycle == 1 {
            outage(reel, client);
        }
        server = restart();
        while reel.log().matches("reconnected").count() < cycle {
            assert!(Instant::now() < deadline, "not back:\n{}", reel.log());
            std::thread::sleep(Duration::from_millis(50));
        }
        position = played_a_second_past(reel, client, position, deadline);
        if cycle == 1 {
            back(client);
        }
        assert!(reel.is_running(), "{}", reel.log());
        fds.push(open_fds(reel.child.id()));
    }
    eprintln!("open file descriptors after each reconnection: {fds:?}");
    assert_eq!(
        reel.log().matches("reconnected").count(),
        cycles,
        "{}",
        reel.log()
    );
    fds
}

/// Waits, until `deadline`, for `reel` to play a second past `from`; the
/// position it reached.
fn played_a_second_past(
    reel: &support::mpv_ipc::Player,
    client: &mut support::mpv_ipc::IpcClient,
    from: f64,
    deadline: Instant,
) -> f64 {
    let mut position = from;
    while position < from + 1.0 {
        assert!(
            Instant::now() < deadline,
            "stuck at {position}:\n{}",
            reel.log()
        );
        std::thread::sleep(Duration::from_millis(100));
        position = playing_position(client);
    }
    position
}

/// `quit` ends `reel` cleanly within 2 s, whatever its source is doing.
fn quits_at_once(reel: &mut support::mpv_ipc::Player, client: &mut support::mpv_ipc::IpcClient) {
    let start = Instant::now();
    client.request(serde_json::json!(["quit"]));
    assert!(reel.wait().success(), "{}", reel.log());
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "quit took {:?}",
        start.elapsed()
    );
}

fn free_tcp_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

#[test]
fn a_live_stream_plays_on_after_its_server_comes_back() {
    use serde_json::json;
    let dir = served_dir("hls-reconnect");
    let _live = LiveFfmpeg::hls(&dir);
    let port = free_tcp_port();
    let server = HttpServer::start_on(&dir, port);
    let url = server.url("live.m3u8");
    let mut reel = reel_player(&url, "reconnect");
    let mut client = reel.connect();
    let fds = play_through_outages(
        &mut reel,
        &mut client,
        (server, || HttpServer::start_on(&dir, port)),
        5,
        |reel, client| {
            // mpv's cache properties: playback waits for the source; the
            // OSD says so.
            let waits = client.request(json!(["get_property", "paused-for-cache"]));
            assert_eq!(waits["data"], true, "{waits}");
            let state = client.request(json!(["get_property", "cache-buffering-state"]));
            assert_eq!(state["data"], 0, "{state}");
            let log = reel.log();
            assert!(log.contains("osd=\"Reconnecting\""), "{log}");
        },
        |client| {
            let waits = client.request(json!(["get_property", "paused-for-cache"]));
            assert_eq!(waits["data"], false, "{waits}");
            let network = client.request(json!(["get_property", "demuxer-via-network"]));
            assert_eq!(network["data"], true, "{network}");
        },
    );
    assert!(fds[4] <= fds[0] + 2, "file descriptors grew: {fds:?}");
}

#[test]
fn a_live_rtsp_camera_plays_on_after_its_server_comes_back() {
    let port = free_tcp_port();
    let server = RtspServer::start_on(port, &[]);
    let url = server.url("live");
    let mut reel = reel_player(&url, "rtsp-reconnect");
    let mut client = reel.connect();
    let fds = play_through_outages(
        &mut reel,
        &mut client,
        (server, || RtspServer::start_on(port, &[])),
        3,
        |_, _| {},
        |_| {},
    );
    assert!(fds[2] <= fds[0] + 2, "file descriptors grew: {fds:?}");
}

#[test]
fn an_mpeg_ts_stream_over_udp_plays_live_and_on_through_a_sender_restart() {
    use serde_json::json;
    use support::mpv_ipc::Player;
    let port = std::net::UdpSocket::bind("127.0.0.1:0")
        .and_then(|s| s.local_addr())
        .expect("a free port")
        .port();
    let mut reel = Player::spawn(
        "reel",
        env!("CARGO_BIN_EXE_reel"),
        &[
            "--hwdec=no",
            "--output",
            "null",
            &format!("udp://127.0.0.1:{port}?localaddr=127.0.0.1"),
        ],
        &[],
        &Path::new(env!("CARGO_TARGET_TMPDIR")).join("network/udp"),
    );
    let mut client = reel.connect();
    // The sender starts once reel listens (a datagram sent before is lost).
    let send = || {
        LiveFfmpeg(
            Command::new("ffmpeg")
                .args(["-nostdin", "-v", "error", "-re", "-f", "lavfi"])
                .args(["-i", "testsrc=size=160x90:rate=25", "-t", "30"])
                .args(["-c:v", "libx264", "-preset", "ultrafast", "-g", "25"])
                .args(["-pix_fmt", "yuv420p", "-f", "mpegts"])
                .arg(format!("udp://127.0.0.1:{port}?pkt_size=1316"))
                .stdin(std::process::Stdio::null())
                .spawn()
                .expect("spawn ffmpeg"),
        )
    };
    let sender = send();
    let before = playing_position(&mut client);
    let duration = client.request(json!(["get_property", "duration"]));
    assert_eq!(duration["error"], "property unavailable", "{duration}");
    // Listed from the demuxer's own socket: the port is not bound twice.
    let tracks = client.request(json!(["get_property", "track-list"]));
    assert_eq!(tracks["data"][0]["type"], "video", "{tracks}");
    assert_eq!(tracks["data"][0]["codec"], "h264", "{tracks}");
    std::thread::sleep(Duration::from_millis(2000));
    let after = playing_position(&mut client);
    assert!(
        after > before + 1.0 && after < before + 5.0,
        "from {before} to {after}"
    );
    // The sender restarts (an encoder rebooted): 2 s of nothing, then a
    // stream whose timestamps begin again. reel waits, then plays on.
    drop(sender);
    std::thread::sleep(Duration::from_millis(2000));
    let stalled = playing_position(&mut client);
    let _sender = send();
    let deadline = Instant::now() + Duration::from_secs(15);
    played_a_second_past(&reel, &mut client, stalled, deadline);
    quits_at_once(&mut reel, &mut client);
}

#[test]
fn another_file_is_loaded_at_once_while_a_source_reconnects() {
    use serde_json::json;
    let dir = served_dir("hls-replace");
    let _live = LiveFfmpeg::hls(&dir);
    let server = HttpServer::start(&dir);
    let url = server.url("live.m3u8");
    let mut reel = reel_player(&url, "replace");
    let mut client = reel.connect();
    playing_position(&mut client);
    drop(server);
    let deadline = Instant::now() + Duration::from_secs(20);
    while !reel.log().contains("reconnecting in 4 s") {
        assert!(Instant::now() < deadline, "no long wait:\n{}", reel.log());
        std::thread::sleep(Duration::from_millis(50));
    }
    let start = Instant::now();
    let local = clip(CLIP);
    let reply = client.request(json!(["loadfile", local.to_string_lossy()]));
    assert_eq!(reply["error"], "success", "{reply}");
    assert!(
        start.elapsed() < Duration::from_millis(1500),
        "the wait held the player for {:?}",
        start.elapsed()
    );
    let path = client.request(json!(["get_property", "path"]));
    assert_eq!(path["data"], json!(local.to_string_lossy()), "{path}");
    playing_position(&mut client);
}
