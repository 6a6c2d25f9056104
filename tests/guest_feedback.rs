//! dmabuf feedback (zwp_linux_dmabuf_v1 v4+) from a real compositor, in the
//! QEMU guest (tests/vm/guest/feedback.sh): weston 14's DRM backend on vkms
//! (tests/vm/guest/weston-drm.sh), GL renderer on Mesa's kms_swrast. reel
//! plays an H.264 clip through visl and what it logs is compared with:
//! - `wayland-info` in the same guest against the same weston (the oracle for
//!   the default feedback: version, main device, tranches, format pairs);
//! - the guest kernel's device nodes (the main device is vkms's render node);
//! - weston's protocol log (the `proto` debug scope): every feedback batch
//!   weston sent to reel's process, default and per surface, with its
//!   tranches and scanout flags. reel's fullscreen (kiosk-shell) NV12
//!   surface cannot go on a vkms plane, so after 2 s weston adds a scanout
//!   tranche to the surface's feedback (its drm-backend scope says `Need to
//!   update and resend the dma-buf feedback`); reel must log each batch as
//!   sent, log the change and re-negotiate.
//!
//! - in the same boot, a second weston with the desktop shell: reel starts
//!   windowed with `--control`, then `fullscreen on` and `fullscreen off`
//!   go through its control socket (tests/vm/guest/reel-control.py). Per
//!   phase, weston's protocol log gives the surface batches sent to reel;
//!   reel must log each, log and re-negotiate each change, report the state
//!   in `status` and keep presenting zero-copy frames.
//!
//! reel's lines read here (`-vv`): `dmabuf feedback` (debug, one per batch:
//! `surface`, `version`, `tranches`, `scanout_tranches`, `table`,
//! `main_device`), `dmabuf feedback changed` (info), `dmabuf negotiation: `
//! and `renegotiated` (info: `changed`, `from`, `to`).
//!
//! One guest boot runs everything; if the guest or weston cannot start,
//! every test fails with the reason.

mod support;

use std::collections::{BTreeSet, HashMap};
use std::sync::OnceLock;
use std::time::Duration;

use support::vm::{Guest, GuestCommand, GuestResult, ScriptCall};
use support::weston_log;
use support::{media, reel_output};

const CLIP: &str = "h264_baseline.mp4";
/// weston-drm.sh's log for the first instance of tests/vm/guest/feedback.sh.
const WESTON_LOG: &str = "weston-feedback.log";
/// What weston's drm backend logs when it re-sends a surface's feedback
/// (a scanout tranche added or removed); feedback.sh waits for it too.
const WESTON_RESENDS: &str = "Need to update and resend the dma-buf feedback";

fn run() -> &'static GuestResult {
    static RUN: OnceLock<GuestResult> = OnceLock::new();
    RUN.get_or_init(|| {
        let result = Guest::run(
            &GuestCommand::script(
                ScriptCall::new("feedback.sh")
                    .arg(env!("CARGO_BIN_EXE_reel"))
                    .arg(media::dir().join(CLIP)),
            )
            .timeout(Duration::from_secs(420))
            .env("RUST_BACKTRACE", "1")
            .label("guest-feedback"),
        )
        .unwrap_or_else(|e| panic!("the test guest did not run: {e}"));
        result.assert_success();
        result
    })
}

fn read(name: &str) -> String {
    run()
        .read_result(name)
        .unwrap_or_else(|e| panic!("{e}\n{}", run().report()))
}

/// A (fourcc, modifier) pair by name: ("NV12", "LINEAR").
type Pair = (String, String);

/// One tranche of a feedback, as wayland-info prints it.
#[derive(Debug)]
struct Tranche {
    target_device: u64,
    scanout: bool,
    pairs: Vec<Pair>,
}

/// zwp_linux_dmabuf_v1 as wayland-info saw it: its default feedback.
#[derive(Debug)]
struct Advertised {
    version: u32,
    main_device: u64,
    tranches: Vec<Tranche>,
}

impl Advertised {
    fn pairs(&self) -> BTreeSet<Pair> {
        self.tranches
            .iter()
            .flat_map(|t| t.pairs.iter().cloned())
            .collect()
    }
}

fn hex(text: &str) -> Option<u64> {
    u64::from_str_radix(text.trim().strip_prefix("0x")?, 16).ok()
}

/// The zwp_linux_dmabuf_v1 section of wayland-info's output.
fn parse_wayland_info(text: &str) -> Result<Advertised, String> {
    let mut lines = text
        .lines()
        .skip_while(|l| !l.contains("'zwp_linux_dmabuf_v1'"));
    let header = lines.next().ok_or("no zwp_linux_dmabuf_v1 global")?;
    let version = header
        .split("version:")
        .nth(1)
        .and_then(|v| v.split(',').next()?.trim().parse().ok())
        .ok_or_else(|| format!("no version in {header:?}"))?;
    let mut main_device = None;
    let mut tranches: Vec<Tranche> = Vec::new();
    for line in lines.take_while(|l| !l.starts_with("interface:")) {
        let line = line.trim();
        if let Some(dev) = line.strip_prefix("main device:") {
            main_device = Some(hex(dev).ok_or_else(|| format!("bad {line:?}"))?);
        } else if line == "tranche" {
            tranches.push(Tranche {
                target_device: 0,
                scanout: false,
                pairs: Vec::new(),
            });
        } else if let Some(dev) = line.strip_prefix("target device:") {
            let tranche = tranches
                .last_mut()
                .ok_or("target device outside a tranche")?;
            tranche.target_device = hex(dev).ok_or_else(|| format!("bad {line:?}"))?;
        } else if let Some(flags) = line.strip_prefix("flags:") {
            let tranche = tranches.last_mut().ok_or("flags outside a tranche")?;
            tranche.scanout = flags.contains("scanout");
        } else if line.starts_with("0x") {
            // 0x3231564e = 'NV12'; 0x0000000000000000 = LINEAR
            let (format, modifier) = line.split_once(';').ok_or_else(|| format!("{line:?}"))?;
            let fourcc = format
                .split('\'')
                .nth(1)
                .ok_or_else(|| format!("{line:?}"))?;
            let modifier = modifier
                .rsplit('=')
                .next()
                .ok_or_else(|| format!("{line:?}"))?;
            let tranche = tranches.last_mut().ok_or("a format outside a tranche")?;
            tranche
                .pairs
                .push((fourcc.trim().to_owned(), modifier.trim().to_owned()));
        }
    }
    Ok(Advertised {
        version,
        main_device: main_device.ok_or("no main device (dmabuf v3?)")?,
        tranches,
    })
}

fn advertised() -> Advertised {
    let text = read("wayland-info.txt");
    assert_eq!(
        read("wayland-info.rc").trim(),
        "0",
        "wayland-info failed:\n{text}"
    );
    parse_wayland_info(&text).unwrap_or_else(|e| panic!("wayland-info: {e}\n{text}"))
}

/// glibc's makedev(): the dev_t the protocol carries.
fn makedev(major: u64, minor: u64) -> u64 {
    ((major & 0xfff) << 8) | ((major & !0xfff) << 32) | (minor & 0xff) | ((minor & !0xff) << 12)
}

/// A dev_t as `major:minor`.
fn major_minor(dev: u64) -> String {
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    format!("{major}:{minor}")
}

/// The guest's DRM node NAME (renderD128, card0) as a dev_t.
fn dri_node(name: &str) -> u64 {
    let nodes = read("dri-nodes.txt");
    nodes
        .lines()
        .find_map(|l| {
            let mut f = l.split_whitespace();
            (f.next()? == name).then_some(())?;
            Some(makedev(f.next()?.parse().ok()?, f.next()?.parse().ok()?))
        })
        .unwrap_or_else(|| panic!("no /dev/dri/{name} in the guest:\n{nodes}"))
}

/// A device number as reel logs it: hexadecimal, in an Option's debug form
/// (`Some("e280")`); `0xe280` and `226:128` are read too.
fn parse_device(text: &str) -> Option<u64> {
    let text = text
        .strip_prefix("Some(")
        .and_then(|t| t.strip_suffix(')'))
        .unwrap_or(text)
        .trim_matches('"');
    if let Some((major, minor)) = text.split_once(':') {
        return Some(makedev(major.parse().ok()?, minor.parse().ok()?));
    }
    u64::from_str_radix(text.strip_prefix("0x").unwrap_or(text), 16).ok()
}

/// A feedback batch as weston's protocol log shows it sent.
#[derive(Debug, PartialEq)]
struct Sent {
    surface: bool,
    tranches: usize,
    scanout_tranches: usize,
}

/// The feedback batches weston sent to process `pid`, in order, from its
/// `proto` scope: `client 0x... (PID n) rq|ev interface@id.request(args)`.
fn sent_batches(weston_log: &str, pid: &str) -> Vec<Sent> {
    sent_batches_at(weston_log, pid)
        .into_iter()
        .map(|(_, sent)| sent)
        .collect()
}

/// As `sent_batches`, each with the number of the log line of its `done`.
fn sent_batches_at(weston_log: &str, pid: &str) -> Vec<(usize, Sent)> {
    const FEEDBACK: &str = "zwp_linux_dmabuf_feedback_v1@";
    let tag = format!("(PID {pid}) ");
    // Feedback object id -> its batch in progress.
    let mut objects: std::collections::HashMap<String, Sent> = Default::default();
    let mut sent = Vec::new();
    for (number, line) in weston_log
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains("[proto]"))
    {
        let Some((_, message)) = line.split_once(&tag) else {
            continue;
        };
        if let Some(request) = message.strip_prefix("rq ") {
            let surface = request.contains(".get_surface_feedback(");
            if !surface && !request.contains(".get_default_feedback(") {
                continue;
            }
            let Some(id) = request
                .split_once(&format!("new id {FEEDBACK}"))
                .and_then(|(_, rest)| rest.split([',', ')']).next())
            else {
                continue;
            };
            let batch = Sent {
                surface,
                tranches: 0,
                scanout_tranches: 0,
            };
            objects.insert(id.to_owned(), batch);
        } else if let Some(event) = message.strip_prefix(&format!("ev {FEEDBACK}")) {
            let Some((id, event)) = event.split_once('.') else {
                continue;
            };
            let Some(batch) = objects.get_mut(id) else {
                continue;
            };
            if event.starts_with("tranche_done(") {
                batch.tranches += 1;
            } else if let Some(flags) = event.strip_prefix("tranche_flags(") {
                let flags: u32 = flags.trim_end_matches(')').parse().unwrap_or(0);
                batch.scanout_tranches += (flags & 1) as usize;
            } else if event.starts_with("done(") {
                let done = Sent {
                    surface: batch.surface,
                    tranches: 0,
                    scanout_tranches: 0,
                };
                sent.push((number, std::mem::replace(batch, done)));
            }
        }
    }
    sent
}

/// What weston sent to reel.
fn sent_to_reel() -> Vec<Sent> {
    let pid = read("reel.pid");
    let sent = sent_batches(&read(WESTON_LOG), pid.trim());
    assert!(
        !sent.is_empty(),
        "weston's protocol log shows no feedback sent to reel (PID {})",
        pid.trim()
    );
    sent
}

/// reel's log (stderr, `-vv`).
fn reel_log() -> String {
    let log = read("reel.log");
    assert_eq!(read("reel.rc").trim(), "0", "reel failed:\n{log}");
    assert!(!log.contains("panicked"), "reel panicked:\n{log}");
    log
}

/// The `key=value` fields of a log line after its message `message`.
fn fields(line: &str, message: &str) -> Vec<(String, String)> {
    let rest = line.split_once(message).map_or("", |(_, r)| r);
    rest.split_whitespace()
        .filter_map(|w| {
            let (k, v) = w.split_once('=')?;
            Some((k.to_owned(), v.trim_matches('"').to_owned()))
        })
        .collect()
}

fn field<'a>(fields: &'a [(String, String)], key: &str, line: &str) -> &'a str {
    fields
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("no {key}= in {line:?}"))
}

/// One complete feedback batch reel logged ("dmabuf feedback", debug).
#[derive(Debug)]
struct Batch {
    /// Line number in reel's log.
    line: usize,
    surface: bool,
    version: u32,
    tranches: usize,
    main_device: u64,
    /// Scanout-flagged tranches.
    scanout_tranches: usize,
    /// Entries of the format table.
    table: usize,
    /// `First`, `Unchanged` or `Changed`: against the feedback in effect.
    update: String,
}

fn batches(log: &str) -> Vec<Batch> {
    const MESSAGE: &str = "dmabuf feedback";
    log.lines()
        .enumerate()
        .filter(|(_, l)| l.contains(MESSAGE) && !l.contains("dmabuf feedback changed"))
        .filter(|(_, l)| !l.contains("malformed"))
        .map(|(n, l)| {
            let f = fields(l, MESSAGE);
            let number = |key: &str| -> u64 {
                let v = field(&f, key, l);
                v.parse()
                    .unwrap_or_else(|_| panic!("{key}={v} is not a number in {l:?}"))
            };
            Batch {
                line: n,
                surface: match field(&f, "surface", l) {
                    "true" => true,
                    "false" => false,
                    v => panic!("surface={v} in {l:?}"),
                },
                version: number("version") as u32,
                tranches: number("tranches") as usize,
                main_device: parse_device(field(&f, "main_device", l))
                    .unwrap_or_else(|| panic!("main_device is not a device number in {l:?}")),
                scanout_tranches: number("scanout_tranches") as usize,
                table: number("table") as usize,
                update: field(&f, "update", l).to_owned(),
            }
        })
        .collect()
}

/// The FOURCC:MODIFIER a negotiation line names (`... as NV12:LINEAR ...`).
fn chosen_pair(line: &str) -> Option<Pair> {
    line.split_whitespace()
        .map(|w| w.trim_matches(|c: char| c == '"' || c == ',' || c == '(' || c == ')'))
        .map(|w| w.rsplit('=').next().unwrap_or(w))
        .find_map(|w| {
            let (fourcc, modifier) = w.split_once(':')?;
            let plausible = (2..=4).contains(&fourcc.len())
                && fourcc
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
                && !modifier.is_empty()
                && modifier
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_');
            plausible.then(|| (fourcc.to_owned(), modifier.to_owned()))
        })
}

/// The line number and text of the first line of `log` containing `marker`,
/// from line `from` on.
fn find_line<'a>(log: &'a str, marker: &str, from: usize) -> Option<(usize, &'a str)> {
    log.lines()
        .enumerate()
        .skip(from)
        .find(|(_, l)| l.contains(marker))
}

#[test]
fn weston_drm_sends_feedback_with_vkms_render_node_as_main_device() {
    let adv = advertised();
    assert!(adv.version >= 4, "dmabuf v{} only: {adv:?}", adv.version);
    let render = dri_node("renderD128");
    assert_eq!(
        adv.main_device, render,
        "main device {:#x} is not vkms's render node ({render:#x})",
        adv.main_device
    );
    assert!(!adv.tranches.is_empty(), "no tranches");
    assert!(
        adv.tranches.iter().all(|t| t.target_device == render),
        "default tranches target another device: {:?}",
        adv.tranches
            .iter()
            .map(|t| t.target_device)
            .collect::<Vec<_>>()
    );
    assert!(
        adv.pairs().contains(&("NV12".into(), "LINEAR".into())),
        "NV12:LINEAR not advertised"
    );
}

#[test]
fn default_feedback_reel_logs_matches_wayland_info() {
    let adv = advertised();
    let log = reel_log();
    let batches = batches(&log);
    let default = batches
        .iter()
        .find(|b| !b.surface)
        .unwrap_or_else(|| panic!("no default (surface=false) feedback batch logged:\n{log}"));
    assert!(
        (4..=adv.version).contains(&default.version),
        "reel says version {}, weston offers {}",
        default.version,
        adv.version
    );
    assert_eq!(
        default.main_device, adv.main_device,
        "main device: reel {:#x}, wayland-info {:#x}",
        default.main_device, adv.main_device
    );
    assert_eq!(default.tranches, adv.tranches.len(), "tranche count");
    let sent = sent_to_reel();
    let first_default = sent.iter().find(|s| !s.surface);
    assert_eq!(
        first_default.map(|s| (s.tranches, s.scanout_tranches)),
        Some((default.tranches, default.scanout_tranches)),
        "reel's first default batch is not what weston sent it: {sent:?}"
    );
    let scanout = adv.tranches.iter().filter(|t| t.scanout).count();
    assert_eq!(default.scanout_tranches, scanout, "scanout tranche count");
    // Every pair a tranche names is an entry of the table.
    assert!(
        default.table >= adv.pairs().len(),
        "a format table of {} entries for {} distinct pairs",
        default.table,
        adv.pairs().len()
    );
}

/// `reel probe FILE` against the same weston: the compositor section shows
/// the feedback wayland-info shows, tranche by tranche, and the file's
/// presentation line is the negotiation reel makes when it plays the file.
#[test]
fn probe_reports_the_feedback_and_the_negotiation_playback_makes() {
    let adv = advertised();
    let out = read("probe.txt");
    assert_eq!(
        read("probe.rc").trim(),
        "0",
        "reel probe failed:\n{out}\n{}",
        read("probe.log")
    );
    let header = format!(
        "linux-dmabuf v{}: main device {}, {} tranches",
        adv.version,
        major_minor(adv.main_device),
        adv.tranches.len()
    );
    assert!(out.contains(&header), "probe lacks {header:?}:\n{out}");
    let lines: Vec<&str> = out.lines().collect();
    for (index, tranche) in adv.tranches.iter().enumerate() {
        let title = format!(
            "  tranche {index}: target device {}{}",
            major_minor(tranche.target_device),
            if tranche.scanout { ", scanout" } else { "" }
        );
        let at = lines
            .iter()
            .position(|l| *l == title)
            .unwrap_or_else(|| panic!("probe lacks {title:?}:\n{out}"));
        // "    NV12: INVALID (implicit), LINEAR" lines, one per format.
        let pairs: usize = lines[at + 1..]
            .iter()
            .take_while(|l| l.starts_with("    "))
            .map(|l| l.split_once(": ").map_or(0, |(_, m)| m.split(", ").count()))
            .sum();
        assert_eq!(pairs, tranche.pairs.len(), "tranche {index} pairs:\n{out}");
    }
    let probed = out
        .lines()
        .find_map(|l| l.trim().strip_prefix("presentation: "))
        .unwrap_or_else(|| panic!("probe has no presentation line:\n{out}"));
    let log = reel_log();
    let (_, played) = find_line(&log, "dmabuf negotiation: ", 0)
        .unwrap_or_else(|| panic!("reel logged no negotiation:\n{log}"));
    let played = played
        .split_once("dmabuf negotiation: ")
        .map(|(_, n)| n.trim())
        .unwrap_or_default();
    assert!(
        probed.starts_with("zero-copy: V4L2 NV12 as NV12:LINEAR"),
        "probe: {probed:?}"
    );
    assert_eq!(probed, played, "probe and playback negotiated differently");
}

#[test]
fn zero_copy_negotiation_picks_a_pair_weston_advertised() {
    let adv = advertised();
    let log = reel_log();
    let (_, line) = find_line(&log, "dmabuf negotiation: zero-copy", 0)
        .unwrap_or_else(|| panic!("no zero-copy negotiation:\n{log}"));
    let pair = chosen_pair(line).unwrap_or_else(|| panic!("no FOURCC:MODIFIER in {line:?}"));
    assert!(
        adv.pairs().contains(&pair),
        "{pair:?} negotiated but not advertised by weston"
    );
    let stats =
        reel_output::stats(&read("reel.log")).unwrap_or_else(|| panic!("no stats line:\n{log}"));
    let zero_copy = reel_output::number(&stats, "zero_copy_frames");
    assert!(zero_copy > 0, "no zero-copy frame presented: {stats:?}");
}

#[test]
fn surface_feedback_change_is_logged_and_renegotiated() {
    let adv = advertised();
    let weston = read(WESTON_LOG);
    let log = reel_log();
    assert!(
        weston.contains(WESTON_RESENDS),
        "weston never re-sent a surface feedback (does reel ask for one, \
         get_surface_feedback?); reel's log:\n{log}"
    );
    let sent: Vec<Sent> = sent_to_reel().into_iter().filter(|s| s.surface).collect();
    assert!(
        sent.len() >= 2 && sent.iter().any(|s| s.scanout_tranches > 0),
        "weston did not re-send reel's surface feedback with a scanout tranche: {sent:?}"
    );
    let batches = batches(&log);
    let logged: Vec<Sent> = batches
        .iter()
        .filter(|b| b.surface)
        .map(|b| Sent {
            surface: true,
            tranches: b.tranches,
            scanout_tranches: b.scanout_tranches,
        })
        .collect();
    assert_eq!(logged, sent, "reel's per-surface batches against weston's");
    let first_surface = batches
        .iter()
        .find(|b| b.surface)
        .unwrap_or_else(|| panic!("no per-surface (surface=true) batch logged:\n{log}"));
    // weston's resend adds a scanout tranche (card0, the plane's formats) in
    // front of the renderer's.
    let with_scanout = batches
        .iter()
        .find(|b| b.surface && b.scanout_tranches > 0 && b.tranches > adv.tranches.len())
        .unwrap_or_else(|| {
            panic!(
                "no per-surface batch with a scanout tranche besides the default's {}: {batches:?}",
                adv.tranches.len()
            )
        });
    assert!(with_scanout.line > first_surface.line, "{batches:?}");
    assert_eq!(
        with_scanout.main_device, adv.main_device,
        "{with_scanout:?}"
    );
    let (changed_at, changed_line) = find_line(&log, "dmabuf feedback changed", with_scanout.line)
        .unwrap_or_else(|| panic!("the new per-surface batch was not logged as a change:\n{log}"));
    let f = fields(changed_line, "dmabuf feedback changed");
    assert_eq!(
        field(&f, "surface", changed_line),
        "true",
        "{changed_line:?}"
    );
    assert_eq!(
        field(&f, "tranches", changed_line),
        with_scanout.tranches.to_string(),
        "{changed_line:?}"
    );
    let (_, renegotiated) = find_line(&log, "renegotiated", changed_at)
        .unwrap_or_else(|| panic!("no renegotiation after the change:\n{log}"));
    let f = fields(renegotiated, "renegotiated");
    let changed = field(&f, "changed", renegotiated);
    let after = |key: &str| {
        renegotiated
            .split_once(&format!(" {key}="))
            .and_then(|(_, rest)| chosen_pair(rest))
            .unwrap_or_else(|| panic!("no {key}=...FOURCC:MODIFIER in {renegotiated:?}"))
    };
    let (from, to) = (after("from"), after("to"));
    assert!(
        adv.pairs().contains(&to),
        "{to:?} chosen but not advertised"
    );
    let (_, first) = find_line(&log, "dmabuf negotiation", 0)
        .unwrap_or_else(|| panic!("no first negotiation:\n{log}"));
    assert_eq!(
        chosen_pair(first),
        Some(from.clone()),
        "{renegotiated:?} after {first:?}"
    );
    // changed: whether the V4L2 CAPTURE format changes, so the decoder is
    // reopened. NV12 cannot go on a vkms plane, so it stays on the
    // renderer's tranche either way.
    match changed {
        "false" => assert_eq!(from.0, to.0, "changed=false: {renegotiated:?}"),
        "true" => assert!(
            log[log.find(renegotiated).unwrap_or(0)..]
                .contains("reopening the decoder for the new CAPTURE format"),
            "changed=true but the decoder was not reopened:\n{log}"
        ),
        other => panic!("changed={other} in {renegotiated:?}"),
    }
}

#[test]
fn weston_sent_no_protocol_error() {
    weston_log::assert_clean_protocol_log(&read(WESTON_LOG), &read("reel.pid"));
}

#[test]
fn protocol_log_parser_follows_feedback_objects() {
    let log = "\
[t][proto] client 0x1 (PID 7) rq zwp_linux_dmabuf_v1@6.get_default_feedback(new id zwp_linux_dmabuf_feedback_v1@10)
[t][proto] client 0x1 (PID 7) ev zwp_linux_dmabuf_feedback_v1@10.tranche_flags(0)
[t][proto] client 0x1 (PID 7) ev zwp_linux_dmabuf_feedback_v1@10.tranche_done()
[t][proto] client 0x1 (PID 7) ev zwp_linux_dmabuf_feedback_v1@10.done()
[t][proto] client 0x2 (PID 8) ev zwp_linux_dmabuf_feedback_v1@10.done()
[t][proto] client 0x1 (PID 7) rq zwp_linux_dmabuf_v1@6.get_surface_feedback(new id zwp_linux_dmabuf_feedback_v1@11, wl_surface@9)
[t][proto] client 0x1 (PID 7) ev zwp_linux_dmabuf_feedback_v1@11.tranche_flags(1)
[t][proto] client 0x1 (PID 7) ev zwp_linux_dmabuf_feedback_v1@11.tranche_done()
[t][proto] client 0x1 (PID 7) ev zwp_linux_dmabuf_feedback_v1@11.tranche_flags(0)
[t][proto] client 0x1 (PID 7) ev zwp_linux_dmabuf_feedback_v1@11.tranche_done()
[t][proto] client 0x1 (PID 7) ev zwp_linux_dmabuf_feedback_v1@11.done()
";
    let sent = |surface, tranches, scanout_tranches| Sent {
        surface,
        tranches,
        scanout_tranches,
    };
    assert_eq!(
        sent_batches(log, "7"),
        vec![sent(false, 1, 0), sent(true, 2, 1)]
    );
}

#[test]
fn wayland_info_parser_reads_tranches() {
    let text = "interface: 'zwp_linux_dmabuf_v1',                        version:  5, name: 15\n\
        \tmain device: 0xE280\n\ttranche\n\t\ttarget device: 0xE200\n\t\tflags: scanout\n\
        \t\tformats (fourcc) and modifiers (names):\n\
        \t\t0x34325258 = 'XR24'; 0x0000000000000000 = LINEAR\n\ttranche\n\
        \t\ttarget device: 0xE280\n\t\tflags: none\n\
        \t\tformats (fourcc) and modifiers (names):\n\
        \t\t0x3231564e = 'NV12'; 0x00ffffffffffffff = INVALID\n\
        interface: 'wl_output', version: 4, name: 16\n";
    let adv = parse_wayland_info(text).unwrap();
    assert_eq!(adv.version, 5);
    assert_eq!(adv.main_device, makedev(226, 128));
    assert_eq!(adv.tranches.len(), 2);
    assert!(adv.tranches[0].scanout && !adv.tranches[1].scanout);
    assert_eq!(adv.tranches[0].target_device, makedev(226, 0));
    assert_eq!(
        adv.tranches[1].pairs,
        vec![("NV12".to_owned(), "INVALID".to_owned())]
    );
    assert_eq!(parse_device("Some(\"e280\")"), Some(0xe280));
    assert_eq!(parse_device("226:128"), Some(0xe280));
    assert_eq!(parse_device("0xe280"), Some(57984));
    assert_eq!(parse_device("None"), None);
    let line = "INFO renegotiated changed=false from=zero-copy: V4L2 NV12 as NV12:LINEAR \
        (tranche 0) to=zero-copy: V4L2 NV12 as YU12:INVALID (tranche 1) capture_format=NV12";
    assert_eq!(
        chosen_pair(line.split_once(" to=").unwrap().1),
        Some(("YU12".to_owned(), "INVALID".to_owned()))
    );
    assert_eq!(
        chosen_pair("2026-11-22T02:42:54Z INFO reel::display: dmabuf negotiation: zero-copy"),
        None
    );
}

// The run-time switch (second weston of the same boot: desktop shell, reel
// windowed, `fullscreen on`, `fullscreen off` through the control socket).
//
// What weston 14 does on vkms: reel's NV12 buffer cannot be imported for a
// plane (`couldn't get FB for view: 0x1000`, GBM_BO_IMPORT_FAILED) whatever
// the view's geometry, windowed or fullscreen, overlay planes or not, so it
// adds the scanout tranche to the window's feedback 2 s after its first frame
// and keeps it across both switches: the feedback changes once, while
// windowed, and not at the switches. The tests below take weston's protocol
// log as the oracle for every phase, whatever it sent.

/// weston-drm.sh's log for the switch instance.
const SWITCH_WESTON_LOG: &str = "weston-switch.log";

/// A result of the switch run; fails with the reason if its weston did not
/// start.
fn switch_read(name: &str) -> String {
    if let Ok(failed) = run().read_result("switch-weston.failed") {
        panic!(
            "{}; its log:\n{}",
            failed.trim(),
            run().read_result(SWITCH_WESTON_LOG).unwrap_or_default()
        );
    }
    read(name)
}

/// reel's log of the switch run; it must have exited 0 on SIGTERM.
fn switch_reel_log() -> String {
    let log = switch_read("switch-reel.log");
    assert_eq!(
        switch_read("switch-reel.rc").trim(),
        "0",
        "reel failed:\n{log}"
    );
    assert!(!log.contains("panicked"), "reel panicked:\n{log}");
    log
}

/// The phases of the switch run, in order.
const PHASES: [(&str, bool); 3] = [
    ("windowed", false),
    ("fullscreen", true),
    ("windowed-again", false),
];

/// A `status` reply of reel's control socket: its `key=value` words.
fn status(name: &str) -> HashMap<String, String> {
    let text = switch_read(&format!("switch-status-{name}.txt"));
    reel_output::status(&text)
        .unwrap_or_else(|| panic!("status {name} is not a status reply: {text:?}"))
}

/// The log line numbers of reel's `set_fullscreen` and `unset_fullscreen`
/// requests in weston's protocol log.
fn switch_requests(weston: &str, pid: &str) -> (usize, usize) {
    let tag = format!("(PID {pid}) rq xdg_toplevel@");
    let find = |request: &str| {
        weston
            .lines()
            .position(|l| l.contains(&tag) && l.contains(request))
            .unwrap_or_else(|| panic!("reel never sent {request} (weston's protocol log)"))
    };
    let on = find(".set_fullscreen(");
    let off = find(".unset_fullscreen(");
    assert!(on < off, "unset_fullscreen before set_fullscreen");
    (on, off)
}

#[test]
fn runtime_fullscreen_switch_follows_the_control_socket_and_stays_zero_copy() {
    let log = switch_reel_log();
    for (command, file) in [
        ("fullscreen on", "switch-on.txt"),
        ("fullscreen off", "switch-off.txt"),
    ] {
        assert_eq!(switch_read(file).trim(), "ok", "reply to {command}");
    }
    // weston saw both requests and answered each with a configure.
    let weston = switch_read(SWITCH_WESTON_LOG);
    let pid = switch_read("switch-reel.pid");
    let (on, off) = switch_requests(&weston, pid.trim());
    for (request, at) in [("set_fullscreen", on), ("unset_fullscreen", off)] {
        assert!(
            weston.lines().skip(at).any(|l| l
                .contains(&format!("(PID {}) ev xdg_toplevel@", pid.trim()))
                && l.contains(".configure(")),
            "no configure after reel's {request}"
        );
    }
    let mut previous_end = 0;
    for (phase, fullscreen) in PHASES {
        let start = status(&format!("{phase}-start"));
        let end = status(&format!("{phase}-end"));
        for (when, s) in [("start", &start), ("end", &end)] {
            assert_eq!(
                s.get("fullscreen").map(String::as_str),
                Some(if fullscreen { "true" } else { "false" }),
                "{phase} {when}: {s:?}"
            );
            assert_eq!(
                reel_output::number(s, "copy_frames"),
                0,
                "{phase} {when}: {s:?}"
            );
            assert_eq!(
                reel_output::number(s, "copy_buffers"),
                0,
                "{phase} {when}: {s:?}"
            );
        }
        let (from, to) = (
            reel_output::number(&start, "zero_copy_frames"),
            reel_output::number(&end, "zero_copy_frames"),
        );
        assert!(
            from >= previous_end && to > from,
            "{phase}: zero_copy_frames {from} -> {to} (previous phase ended at {previous_end})"
        );
        eprintln!("{phase}: zero_copy_frames {from} -> {to}");
        previous_end = to;
    }
    let stats = reel_output::stats(&log).unwrap_or_else(|| panic!("no stats line:\n{log}"));
    let stat = |key: &str| reel_output::number(&stats, key);
    assert!(stat("zero_copy_frames") >= previous_end, "{stats:?}");
    assert_eq!(stat("copy_frames"), 0, "{stats:?}");
}

#[test]
fn runtime_fullscreen_switch_feedback_matches_weston_and_renegotiates() {
    let log = switch_reel_log();
    let weston = switch_read(SWITCH_WESTON_LOG);
    let pid = switch_read("switch-reel.pid");
    let pid = pid.trim();
    let (on, off) = switch_requests(&weston, pid);
    let sent: Vec<(usize, Sent)> = sent_batches_at(&weston, pid)
        .into_iter()
        .filter(|(_, s)| s.surface)
        .collect();
    assert!(!sent.is_empty(), "weston sent reel no surface feedback");
    let phase_of = |line: usize| match line {
        l if l < on => PHASES[0].0,
        l if l < off => PHASES[1].0,
        _ => PHASES[2].0,
    };
    for (phase, _) in PHASES {
        let batches: Vec<String> = sent
            .iter()
            .filter(|(l, _)| phase_of(*l) == phase)
            .map(|(_, s)| format!("{} tranches ({} scanout)", s.tranches, s.scanout_tranches))
            .collect();
        eprintln!("weston -> reel, surface feedback, {phase}: {batches:?}");
    }

    // reel took in every batch weston sent, in order.
    let batches: Vec<Batch> = batches(&log).into_iter().filter(|b| b.surface).collect();
    let logged: Vec<Sent> = batches
        .iter()
        .map(|b| Sent {
            surface: true,
            tranches: b.tranches,
            scanout_tranches: b.scanout_tranches,
        })
        .collect();
    let weston_sent: Vec<&Sent> = sent.iter().map(|(_, s)| s).collect();
    assert_eq!(
        logged.iter().collect::<Vec<_>>(),
        weston_sent,
        "reel's per-surface batches against weston's"
    );

    // A batch is a change when its tranches differ from the previous one
    // (the first against the default feedback, which it repeats here).
    let default = batches_default_tranches(&log);
    let mut previous = default;
    let mut changes = Vec::new();
    for (batch, (line, s)) in batches.iter().zip(&sent) {
        let changed = (s.tranches, s.scanout_tranches) != previous;
        previous = (s.tranches, s.scanout_tranches);
        let expected = if changed { "Changed" } else { "Unchanged" };
        assert_eq!(
            batch.update,
            expected,
            "reel's batch {batch:?} ({}; weston sent {s:?})",
            phase_of(*line)
        );
        if changed {
            changes.push((batch, phase_of(*line)));
        }
    }
    assert!(
        !changes.is_empty(),
        "weston never changed reel's surface feedback: nothing re-negotiated"
    );
    let changed_lines: Vec<(usize, &str)> = log
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains("dmabuf feedback changed") && l.contains("surface=true"))
        .collect();
    assert_eq!(
        changed_lines.len(),
        changes.len(),
        "`dmabuf feedback changed` lines against the changes weston sent: {changed_lines:#?}"
    );

    // Each change is re-negotiated, from the choice in effect.
    let (_, first) = find_line(&log, "dmabuf negotiation", 0)
        .unwrap_or_else(|| panic!("no first negotiation:\n{log}"));
    let mut in_effect = chosen_pair(first).unwrap_or_else(|| panic!("no pair in {first:?}"));
    let adv = advertised();
    for (k, (batch, phase)) in changes.iter().enumerate() {
        let (changed_at, changed_line) = changed_lines[k];
        assert!(changed_at > batch.line, "{changed_line:?} before {batch:?}");
        let f = fields(changed_line, "dmabuf feedback changed");
        assert_eq!(
            field(&f, "tranches", changed_line),
            batch.tranches.to_string(),
            "{changed_line:?}"
        );
        let next_change = changed_lines.get(k + 1).map_or(usize::MAX, |(l, _)| *l);
        let (at, renegotiated) = find_line(&log, "renegotiated", changed_at)
            .filter(|(at, _)| *at < next_change)
            .unwrap_or_else(|| panic!("{phase}: no renegotiation after {changed_line:?}:\n{log}"));
        let pair = |key: &str| {
            renegotiated
                .split_once(&format!(" {key}="))
                .and_then(|(_, rest)| chosen_pair(rest))
                .unwrap_or_else(|| panic!("no {key}=...FOURCC:MODIFIER in {renegotiated:?}"))
        };
        let (from, to) = (pair("from"), pair("to"));
        assert_eq!(from, in_effect, "{phase}: {renegotiated:?}");
        assert!(
            adv.pairs().contains(&to),
            "{to:?} chosen but not advertised"
        );
        eprintln!("{phase}: line {at}: {renegotiated}");
        in_effect = to;
    }
}

/// The (tranches, scanout tranches) of the first default batch reel logged.
fn batches_default_tranches(log: &str) -> (usize, usize) {
    batches(log)
        .iter()
        .find(|b| !b.surface)
        .map(|b| (b.tranches, b.scanout_tranches))
        .unwrap_or_else(|| panic!("no default feedback batch logged:\n{log}"))
}

#[test]
fn runtime_fullscreen_switch_without_protocol_error() {
    weston_log::assert_clean_protocol_log(
        &switch_read(SWITCH_WESTON_LOG),
        &switch_read("switch-reel.pid"),
    );
}
