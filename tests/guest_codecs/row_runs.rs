//! What the guest runs for each row of the table and for each codec's
//! generic checks, and the names of their results (`NAME.rc`, `.log`,
//! `.out`, `.trace`; tests/vm/guest/traced-run.sh).

use crate::boot::GuestCall;
use crate::rows::{Codec, Row};
use crate::support::damage::{self, DamageRuns};
use crate::support::media;
use crate::support::reel_runs::traced_decode;
use crate::support::vm::ScriptCall;

pub const V4L2_NULL: [&str; 4] = ["--hwdec", "v4l2", "--output", "null"];
pub const V4L2_FRAMEMD5: [&str; 4] = ["--hwdec", "v4l2", "--output", "framemd5"];
/// The output size of the weston playbacks.
const WESTON_OUTPUT: &str = "320x240";

/// The traced decode in visl's default mode (slice-based, no start codes).
pub fn trace_run(row: &Row) -> String {
    format!("trace-{}", row.name)
}

/// The OUTPUT buffers visl kept in the traced decode
/// (`NAME.bitstream/`, tests/vm/guest/visl-bitstream.sh).
pub fn bits_run(row: &Row) -> String {
    format!("bits-{}", row.name)
}

/// The traced decode forced frame-based with Annex-B start codes.
pub fn frame_run(row: &Row) -> String {
    format!("frame-{}", row.name)
}

/// The framemd5 decode of a row.
pub fn md5a_run(row: &Row) -> String {
    format!("md5a-{}", row.name)
}

/// A second framemd5 decode of a row, for determinism: its traced decode
/// (same mode, framemd5 out) where it has one, else a run of its own.
pub fn md5b_run(row: &Row) -> String {
    if row.traced() {
        trace_run(row)
    } else {
        format!("md5b-{}", row.name)
    }
}

/// What reel logs (at debug, `reel::v4l2::codec`) for each picture an
/// exact seek leaves undecoded before its target.
pub const LEFT_OUT: &str = "non-reference picture before the seek target: not decoded";

pub fn seek_run(row: &Row) -> String {
    format!("seek-{}", row.name)
}

/// fwht-play.sh's NAME: its playbacks are `NAME-loop` and `NAME-paused`.
pub fn play_name(row: &Row) -> String {
    format!("play-{}", row.name)
}

pub fn probe_run(codec: Codec) -> String {
    format!("probe-{}", codec.label())
}

/// The damaged copies the guest decodes for a codec.
pub fn damaged(codec: Codec) -> Option<&'static DamageRuns> {
    use std::sync::OnceLock;
    static DAMAGED: [OnceLock<DamageRuns>; 6] = [const { OnceLock::new() }; 6];
    let index = crate::rows::CODECS.iter().position(|&c| c == codec)?;
    codec.has_damaged_copies().then(|| {
        DAMAGED[index].get_or_init(|| DamageRuns::for_guest(damage::source(codec.label())))
    })
}

/// A codec's generic calls: its damaged copies and its probe.
pub fn codec_calls(codec: Codec) -> Vec<GuestCall> {
    let mut calls = Vec::new();
    if let Some(damaged) = damaged(codec) {
        calls.push(GuestCall {
            extra_seconds: damaged.guest_seconds(),
            ..GuestCall::new(format!("damage-{}", codec.label()), damaged.guest_call())
        });
    }
    if let Some(probe) = codec.probe() {
        let name = probe_run(codec);
        let call = traced_decode(&name, &["probe"], &media::dir().join(probe.file));
        calls.push(GuestCall::new(name, call));
    }
    calls
}

/// A row's runs on visl as loaded at boot: frame-based, framemd5 twice,
/// seek, weston.
pub fn calls(row: &Row) -> Vec<GuestCall> {
    let file = row.path();
    let mut calls = Vec::new();
    if let (true, Some(env)) = (row.frame_mode, row.codec.frame_mode_env()) {
        let name = frame_run(row);
        let call = env
            .into_iter()
            .fold(traced_decode(&name, &V4L2_NULL, &file), |call, (k, v)| {
                call.env(k, v)
            });
        calls.push(GuestCall::new(name, call));
    }
    if row.framemd5 {
        for name in [md5a_run(row), md5b_run(row)] {
            if name != trace_run(row) {
                let call = traced_decode(&name, &V4L2_FRAMEMD5, &file);
                calls.push(GuestCall::new(name, call));
            }
        }
    }
    if let Some(seek) = row.seek {
        let name = seek_run(row);
        let start = seek.seconds.to_string();
        let options = ["--hwdec", "v4l2", "--start", &start, "--output", "framemd5"];
        // The pictures left undecoded logged too.
        let call =
            traced_decode(&name, &options, &file).env("RUST_LOG", "info,reel::v4l2::codec=debug");
        calls.push(GuestCall::new(name.clone(), call));
    }
    if let Some(weston) = row.weston {
        // The generic playback script FWHT's suite uses too (any clip with
        // `--hwdec v4l2`): framemd5 runs (unused here), then a looping and
        // a paused playback, each until a frame is presented.
        let name = play_name(row);
        let call = ScriptCall::new("fwht-play.sh")
            .arg(env!("CARGO_BIN_EXE_reel"))
            .arg(&name)
            .arg(&file)
            .arg(WESTON_OUTPUT)
            .arg(weston.paused_at.to_string())
            .arg("play")
            .args(weston.loop_until);
        calls.push(GuestCall::new(name, call));
    }
    calls
}

/// A row's traced decode in visl's default mode, visl keeping the OUTPUT
/// buffers (it reloads visl: these run last).
pub fn traced_call(row: &Row) -> Option<GuestCall> {
    row.traced().then(|| {
        // The per-request lines of `-vv` alone on top of `-v`'s; framemd5
        // out where the row checks that two decodes agree (`md5b_run`).
        let output = if row.framemd5 {
            V4L2_FRAMEMD5
        } else {
            V4L2_NULL
        };
        let decode = traced_decode(&trace_run(row), &output, &row.path())
            .env("RUST_LOG", "info,reel::request=debug");
        let call = ScriptCall::new("visl-bitstream.sh")
            .arg(bits_run(row))
            .wrapping(decode);
        GuestCall::new(trace_run(row), call)
    })
}
