//! HEVC on the V4L2 path through the player, from the runs of
//! tests/vm/guest/hevc-play.sh in the zero-copy guest boot. Expected
//! pictures come from FFmpeg's framemd5 of the same clips (their pts),
//! expected formats from what visl (v4l2-ctl) and weston (wayland-info)
//! offered in that guest.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::process::Command;

use super::support::{media, reel_output, reel_runs, weston_log};
use super::{
    buffer_ids, read, runs, stats, CRA_TARGET, HEVC_MAIN10_CLIP, HEVC_OPEN_GOP_CLIP, RASL_TARGET,
};

/// The frames of FFmpeg's framemd5 of `clip`: pts in its time base.
struct Oracle {
    pts: Vec<i64>,
    time_base: (i64, i64),
}

impl Oracle {
    fn of(clip: &str) -> Oracle {
        let out = Command::new("ffmpeg")
            .args(["-nostdin", "-v", "error", "-i"])
            .arg(media::clip(clip))
            .args(["-f", "framemd5", "-"])
            .output()
            .expect("run ffmpeg");
        assert!(out.status.success(), "ffmpeg failed on {clip}");
        let text = String::from_utf8_lossy(&out.stdout);
        Oracle {
            pts: reel_runs::framemd5_lines(&text)
                .iter()
                .map(|l| l.0)
                .collect(),
            time_base: framemd5_time_base(&text),
        }
    }

    fn seconds(&self, pts: i64) -> f64 {
        let first = self.pts.first().copied().unwrap_or(0);
        (pts - first) as f64 * self.time_base.0 as f64 / self.time_base.1 as f64
    }

    /// The pts in presentation order.
    fn sorted(&self) -> Vec<i64> {
        let mut sorted = self.pts.clone();
        sorted.sort_unstable();
        sorted
    }

    /// The pts of the frame an exact seek to `target` seconds from the
    /// start lands on: the first starting at or after it, give or take
    /// mpv's 5 ms (the last when none does).
    fn landing(&self, target: f64) -> i64 {
        let sorted = self.sorted();
        let times: Vec<f64> = sorted.iter().map(|&p| self.seconds(p)).collect();
        sorted[media::seek_landing(&times, target, media::SEEK_TOLERANCE)]
    }

    /// The position (seconds from the start) of the frame an exact seek to
    /// `target` lands on.
    fn position_at(&self, target: f64) -> f64 {
        self.seconds(self.landing(target))
    }

    /// The position of the `offset`-th frame after (or before) the one an
    /// exact seek to `target` lands on.
    fn position_near(&self, target: f64, offset: isize) -> f64 {
        let sorted = self.sorted();
        let at = self.landing(target);
        let index = sorted.iter().position(|&p| p == at).expect("in the list");
        let neighbour = sorted[index.checked_add_signed(offset).expect("a frame before")];
        self.seconds(neighbour)
    }
}

fn framemd5_time_base(out: &str) -> (i64, i64) {
    out.lines()
        .find_map(|l| l.strip_prefix("#tb 0: "))
        .and_then(|tb| tb.trim().split_once('/'))
        .and_then(|(n, d)| Some((n.parse().ok()?, d.parse().ok()?)))
        .unwrap_or_else(|| panic!("no time base in:\n{out}"))
}

fn target(seconds: &str) -> f64 {
    seconds.parse().expect("a target in seconds")
}

/// One step of a control-socket session and reel's reply (a status reply's
/// fields, or the command's answer under "reply").
struct Step {
    step: String,
    reply: HashMap<String, String>,
}

/// The steps of session `name`, which must have completed, with reel
/// exiting 0 after it.
fn session(name: &str) -> Vec<Step> {
    let text = read(&format!("{name}.session"));
    let log = read(&format!("{name}.log"));
    assert_eq!(
        read(&format!("{name}.session.rc")).trim(),
        "0",
        "{name}: the session did not complete:\n{text}\nreel's log:\n{log}"
    );
    assert_eq!(read(&format!("{name}.rc")).trim(), "0", "{name}:\n{log}");
    assert!(!log.contains("panicked"), "{name}:\n{log}");
    text.lines()
        .filter_map(|l| l.split_once('\t'))
        .map(|(step, reply)| Step {
            step: step.to_owned(),
            reply: reel_output::status(reply)
                .unwrap_or_else(|| HashMap::from([("reply".to_owned(), reply.to_owned())])),
        })
        .collect()
}

fn position(step: &Step) -> f64 {
    step.reply
        .get("position")
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("{}: no position in {:?}", step.step, step.reply))
}

#[track_caller]
fn assert_position(step: &Step, want: f64, what: &str) {
    let got = position(step);
    assert!(
        (got - want).abs() < 1e-3,
        "{what}: shown at {got} s, the frame at the target is at {want} s ({:?})",
        step.reply
    );
}

/// The status replies of the polling steps, in order.
fn statuses(steps: &[Step]) -> Vec<&Step> {
    steps
        .iter()
        .filter(|s| s.reply.contains_key("state"))
        .collect()
}

/// Every frame of `name` was presented zero-copy, through CAPTURE buffers
/// weston imported as dmabufs (one wl_buffer each), with no protocol error.
fn assert_zero_copy_throughout(name: &str) -> HashMap<String, u64> {
    let s = stats(name);
    let presented = reel_output::number(&s, "presented");
    assert!(presented > 0, "{name}: nothing presented: {s:?}");
    assert_eq!(
        reel_output::number(&s, "zero_copy_frames"),
        presented,
        "{name}: {s:?}"
    );
    assert_eq!(reel_output::number(&s, "copy_frames"), 0, "{name}: {s:?}");
    assert_eq!(
        reel_output::number(&s, "buffers_allocated"),
        0,
        "{name}: {s:?}"
    );
    let weston = read(&format!("weston-{name}.log"));
    let errors = weston_log::protocol_errors(&weston);
    assert!(errors.is_empty(), "{name}: protocol errors: {errors:#?}");
    // Each import: the NV12 planes added, created as one wl_buffer.
    let created = weston
        .lines()
        .filter(|l| l.contains("ev zwp_linux_buffer_params_v1@") && l.contains(".created("))
        .count();
    let nv12 = u32::from_le_bytes(*b"NV12");
    let creates: Vec<&str> = weston
        .lines()
        .filter(|l| l.contains("rq zwp_linux_buffer_params_v1@") && l.contains(".create("))
        .collect();
    assert!(
        creates.iter().all(|l| l.contains(&format!(", {nv12}, 0)"))),
        "{name}: an import that is not NV12 LINEAR: {creates:#?}"
    );
    assert!(
        !weston
            .lines()
            .any(|l| l.contains("zwp_linux_buffer_params_v1@") && l.contains(".failed(")),
        "{name}: weston refused an import"
    );
    let imported = buffer_ids(&read(&format!("{name}.log")), "decoder dmabuf imported");
    assert_eq!(
        created,
        imported.len(),
        "{name}: weston created a wl_buffer per imported CAPTURE buffer"
    );
    assert_eq!(
        reel_output::number(&s, "zero_copy_buffers"),
        created as u64,
        "{name}: {s:?}"
    );
    s
}

#[test]
fn hevc_plays_zero_copy_from_visls_buffers() {
    assert_zero_copy_throughout("hevc-zerocopy");
    let log = read("hevc-zerocopy.log");
    assert!(
        log.contains("codec=hevc") && log.contains("decoder=v4l2-stateless"),
        "the HEVC clip was not opened on the V4L2 path:\n{log}"
    );
    assert!(
        log.contains("dmabuf negotiation: zero-copy: V4L2 NV12 as NV12:LINEAR"),
        "{log}"
    );
    super::assert_shows_visl_bars("hevc-zerocopy");
}

/// The fourccs `v4l2-ctl --list-formats` printed (`[0]: 'NV12' (...)`).
fn v4l2_ctl_formats(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix('[')?.split_once("]: '"))
        .filter_map(|(_, rest)| rest.split_once('\'').map(|(f, _)| f.to_owned()))
        .collect()
}

#[test]
fn hevc_main10_negotiation_is_logged_with_what_each_side_offered() {
    let clip = media::clip(HEVC_MAIN10_CLIP);
    let pix_fmt: Vec<String> = media::ffprobe(&clip, "stream=pix_fmt");
    assert_eq!(pix_fmt.first().map(String::as_str), Some("yuv420p10le"));

    // visl's side: what it lists for HEVC, and what reel saw after the SPS.
    let offered = v4l2_ctl_formats(&read("hevc-capture-formats.txt"));
    assert!(!offered.is_empty(), "{}", read("hevc-capture-formats.txt"));
    let log = read("hevc-main10.log");
    let line = format!(
        "CAPTURE formats offered for a 10-bit sequence: {}",
        offered.join(", ")
    );
    assert_eq!(log.matches(&line).count(), 1, "want '{line}' once:\n{log}");

    // weston's side: it takes P010, so a 10-bit decoder format would have
    // been shared; visl has none, so the reason is the decoder's.
    let weston = read("wayland-info-hevc-main10.txt");
    assert!(
        weston.contains("'P010'; 0x0000000000000000 = LINEAR")
            && weston.contains("'NV12'; 0x0000000000000000 = LINEAR"),
        "weston advertised:\n{weston}"
    );
    assert!(
        offered.iter().all(|f| f == "NV12" || f == "YU12"),
        "visl now offers {offered:?}: a 10-bit format must be shared zero-copy; update this test"
    );
    let choice = "dmabuf negotiation: copy: V4L2 NV12 -> NV12:LINEAR (tranche 0): \
                  the stream is 10-bit but the decoder offers at most 8-bit output";
    assert_eq!(
        log.matches(choice).count(),
        1,
        "want '{choice}' once:\n{log}"
    );
    let display = "copying decoded frames instead of presenting their dmabufs: \
                   the stream is 10-bit, the decoder's buffers 8-bit";
    assert_eq!(
        log.matches(display).count(),
        1,
        "want '{display}' once:\n{log}"
    );

    // And playback follows the choice: every frame through the copy path.
    let s = stats("hevc-main10");
    let presented = reel_output::number(&s, "presented");
    assert!(presented > 0, "{s:?}");
    assert_eq!(reel_output::number(&s, "zero_copy_frames"), 0, "{s:?}");
    assert_eq!(reel_output::number(&s, "copy_frames"), presented, "{s:?}");
    super::assert_shows_visl_bars("hevc-main10");
}

/// Nal unit types of the slices visl received in run `name`, in order.
fn traced_nal_types(name: &str) -> Vec<u32> {
    let trace = read(&format!("{name}.trace"));
    let types: Vec<u32> = trace
        .split("nal_unit_type ")
        .skip(1)
        .filter_map(|rest| {
            rest.split(|c: char| !c.is_ascii_digit())
                .next()?
                .parse()
                .ok()
        })
        .collect();
    assert!(!types.is_empty(), "{name}: no HEVC slice in the trace");
    types
}

const CRA_NUT: u32 = 21;
const RASL_N: u32 = 8;
const RASL_R: u32 = 9;

#[test]
fn hevc_start_lands_on_the_frame_at_the_target() {
    let oracle = Oracle::of(HEVC_OPEN_GOP_CLIP);
    let (_, whole) = reel_runs::successful(&runs().result, "hevc-md5");
    let whole: Vec<i64> = reel_runs::framemd5_lines(&whole)
        .iter()
        .map(|l| l.0)
        .collect();
    assert_eq!(whole, oracle.pts, "the whole clip, against FFmpeg's");
    for (name, at) in [
        ("hevc-start-rasl", RASL_TARGET),
        ("hevc-start-cra", CRA_TARGET),
    ] {
        let (log, out) = reel_runs::successful(&runs().result, name);
        let got: Vec<i64> = reel_runs::framemd5_lines(&out)
            .iter()
            .map(|l| l.0)
            .collect();
        let first = oracle.landing(target(at));
        let want: Vec<i64> = oracle.pts.iter().copied().filter(|&p| p >= first).collect();
        assert_eq!(got, want, "{name}: --start {at}\n{log}");
        assert_eq!(
            reel_runs::stats_decoder(name, &log),
            "v4l2-stateless",
            "{log}"
        );
    }
    // From the first RASL picture's time the demuxer starts at the IDR: the
    // CRA's RASL pictures are decodable and decoded (none is before the
    // target, where a non-reference picture is not decoded).
    let rasl = traced_nal_types("hevc-start-rasl");
    let cra = rasl.iter().position(|&t| t == CRA_NUT).expect("a CRA");
    assert!(
        rasl[cra + 1..].starts_with(&[RASL_R, RASL_N, RASL_N]),
        "the clip's CRA is not followed by its RASL pictures: {rasl:?}"
    );
    // After the CRA, decoding starts there: its RASL pictures (which refer
    // to pictures before the CRA) never reach the decoder, so none is shown
    // broken.
    let cra_start = traced_nal_types("hevc-start-cra");
    assert_eq!(cra_start[0], CRA_NUT, "{cra_start:?}");
    assert!(
        !cra_start.iter().any(|&t| t == RASL_N || t == RASL_R),
        "RASL pictures decoded after a CRA that started decoding: {cra_start:?}"
    );
    let (log, _) = reel_runs::successful(&runs().result, "hevc-start-cra");
    assert_eq!(log.matches("skipping a RASL picture").count(), 3, "{log}");
}

#[test]
fn hevc_seeks_steps_and_pauses_in_weston() {
    let oracle = Oracle::of(HEVC_OPEN_GOP_CLIP);
    let steps = session("hevc-seek");
    let polls = statuses(&steps);
    let script: Vec<&str> = polls.iter().map(|s| s.step.as_str()).collect();
    let rasl = target(RASL_TARGET);
    let expected = [
        ("shown", 0.0),
        ("shown", oracle.position_at(target(CRA_TARGET))),
        ("shown", oracle.position_at(rasl)),
        // step, step, back
        ("until:position>0.44", oracle.position_near(rasl, 1)),
        ("until:position>0.47", oracle.position_near(rasl, 2)),
        ("until:position<0.49", oracle.position_near(rasl, 1)),
        // onto the CRA (a target 1.7 ms after its start, within mpv's
        // 5 ms: the demuxer seeks to the CRA), then back onto its last
        // RASL picture
        ("shown", oracle.position_at(0.535)),
        ("until:position<0.53", oracle.position_near(0.535, -1)),
        // where playing on has room before the end
        ("shown", oracle.position_at(0.1)),
    ];
    assert!(polls.len() >= expected.len() + 3, "steps: {script:?}");
    for (i, (step, want)) in expected.iter().enumerate() {
        assert_eq!(polls[i].step, *step, "steps: {script:?}");
        assert_position(polls[i], *want, &format!("step {i} ({step})"));
        // Paused: each seek or step put exactly one more frame on screen.
        assert_eq!(
            reel_output::number(&polls[i].reply, "presented"),
            i as u64 + 1,
            "step {i} ({step}): {:?}",
            polls[i].reply
        );
        assert_eq!(polls[i].reply["state"], "paused", "{:?}", polls[i].reply);
    }
    // Playing on, then paused: the position stays.
    let n = expected.len();
    assert!(position(polls[n]) > 0.3, "{:?}", polls[n].reply);
    let (paused, later) = (polls[n + 1], polls[n + 2]);
    assert_eq!(paused.reply["state"], "paused");
    assert_eq!(later.step, "status");
    assert_eq!(
        paused.reply["position"], later.reply["position"],
        "the position moved while paused"
    );
    // The seeks landing on the CRA (CRA_TARGET, 0.535) skipped its three
    // RASL pictures; the others started at the IDR.
    let log = read("hevc-seek.log");
    assert_eq!(log.matches("skipping a RASL picture").count(), 6, "{log}");
    assert_zero_copy_throughout("hevc-seek");
}

#[test]
fn hevc_start_in_weston_shows_the_frame_at_the_target() {
    let oracle = Oracle::of(HEVC_OPEN_GOP_CLIP);
    let steps = session("hevc-start");
    let shown = statuses(&steps);
    let first = shown.first().expect("a status");
    assert_position(first, oracle.position_at(target(CRA_TARGET)), "--start");
    assert_eq!(reel_output::number(&first.reply, "presented"), 1);
    assert_zero_copy_throughout("hevc-start");
}

/// `Duration`'s Debug text (`0ns`, `167ms`, `1.133333333s`) in seconds.
fn debug_seconds(text: &str) -> f64 {
    let (number, scale) = [("ns", 1e-9), ("µs", 1e-6), ("ms", 1e-3), ("s", 1.0)]
        .iter()
        .find_map(|(unit, scale)| text.strip_suffix(unit).map(|n| (n, *scale)))
        .unwrap_or_else(|| panic!("not a duration: {text}"));
    number.parse::<f64>().expect("a number") * scale
}

#[test]
fn hevc_playlist_loops_through_a_resolution_change_zero_copy() {
    let steps = session("hevc-playlist");
    let polls = statuses(&steps);
    // A poll right at a file change has no width yet: nothing of the new
    // file is shown.
    let widths: Vec<Option<&String>> = polls.iter().map(|s| s.reply.get("width")).collect();
    assert_eq!(polls.len(), 4, "{widths:?}");
    assert_eq!(polls[1].reply["index"], "2/2");
    assert_eq!(polls[1].reply["height"], "270", "the second sequence");
    assert_eq!(polls[2].reply["index"], "1/2", "looped back");
    assert_eq!(
        polls[3].reply["height"], "240",
        "the first file shown again"
    );
    let s = assert_zero_copy_throughout("hevc-playlist");
    let log = read("hevc-playlist.log");
    // Every file opened went through V4L2 (the stats line names the
    // decoder of the moment: none when stopped between two files).
    let opened: Vec<&str> = log
        .lines()
        .filter(|l| l.contains(" opened file="))
        .collect();
    assert!(
        opened.len() >= 3 && opened.iter().all(|l| l.contains("decoder=v4l2-stateless")),
        "files opened: {opened:#?}"
    );
    // Frames in order: positions rise within a file, and fall only where
    // the next file starts (the second file, then the first again).
    let positions: Vec<f64> = log
        .lines()
        .filter(|l| l.contains("frame shown"))
        .filter_map(|l| l.split("position=").nth(1)?.split(' ').next())
        .map(debug_seconds)
        .collect();
    assert_eq!(positions.len() as u64, reel_output::number(&s, "presented"));
    let falls = positions.windows(2).filter(|w| w[1] <= w[0]).count();
    assert_eq!(falls, 2, "frames out of order: {positions:?}");
    // Each CAPTURE allocation (generation) has one size; the 480x272
    // sequence got buffers of its own, the old ones' wl_buffers went.
    let mut sizes: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in log
        .lines()
        .filter(|l| l.contains("decoder dmabuf imported"))
    {
        let field = |key: &str| {
            line.split(&format!("{key}="))
                .nth(1)
                .and_then(|r| r.split(' ').next())
                .unwrap_or_default()
                .to_owned()
        };
        let generation = line
            .split("generation: ")
            .nth(1)
            .and_then(|r| r.split(',').next())
            .unwrap_or_default()
            .to_owned();
        sizes.entry(generation).or_default().insert(format!(
            "{}x{}",
            field("width"),
            field("height")
        ));
    }
    assert!(
        sizes.values().all(|s| s.len() == 1),
        "a generation with two sizes: {sizes:?}"
    );
    let large = sizes.values().filter(|s| s.contains("480x272")).count();
    let small = sizes.values().filter(|s| s.contains("320x240")).count();
    assert!(large >= 1 && small >= 2, "generations: {sizes:?}");
    assert!(
        log.matches("older wl_buffers destroyed").count() >= 2,
        "{log}"
    );
}

#[test]
fn hevc_bit_depth_change_negotiates_again() {
    let steps = session("hevc-bit-depth");
    let shown = statuses(&steps);
    assert!(
        shown.first().is_some_and(|s| position(s) > 1.3),
        "no frame of the second sequence shown"
    );
    let log = read("hevc-bit-depth.log");
    // In this order: Main negotiated zero-copy; the Main 10 SPS a new
    // sequence; visl's formats for it (8-bit only) and the copy path.
    let expected = [
        "CAPTURE formats offered for a 8-bit sequence: NV12, YU12",
        "dmabuf negotiation: zero-copy: V4L2 NV12 as NV12:LINEAR",
        "bit_depth=10",
        "CAPTURE formats offered for a 10-bit sequence: NV12, YU12",
        "dmabuf negotiation: copy: V4L2 NV12 -> NV12:LINEAR (tranche 0): \
         the stream is 10-bit but the decoder offers at most 8-bit output",
        "copying decoded frames instead of presenting their dmabufs: \
         the stream is 10-bit, the decoder's buffers 8-bit",
    ];
    let mut from = 0;
    for line in expected {
        let at = log[from..]
            .find(line)
            .unwrap_or_else(|| panic!("'{line}' missing or out of order:\n{log}"));
        from += at + line.len();
    }
    let s = stats("hevc-bit-depth");
    let presented = reel_output::number(&s, "presented");
    let zero_copy = reel_output::number(&s, "zero_copy_frames");
    let copied = reel_output::number(&s, "copy_frames");
    assert!(zero_copy > 0 && copied > 0, "{s:?}");
    assert_eq!(zero_copy + copied, presented, "{s:?}");
}
