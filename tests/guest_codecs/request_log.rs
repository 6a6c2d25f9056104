//! The per-request log (`-vv`, target `reel::request`) against what visl
//! received: a tester reads these lines next to a driver's debug log, so
//! each must describe the request the driver got. Every traced run logs
//! them (row_runs.rs); here, for every row, request by request: the same
//! number of requests as visl traced, the same OUTPUT timestamps in the same
//! order, every reference the line names among the reference timestamps
//! the controls carried, and the picture order where the controls carry it
//! (H.264's field order counts, HEVC's PicOrderCntVal, AV1's order_hint).

use crate::boot;
use crate::failures::check_each;
use crate::row_runs::trace_run;
use crate::rows::{Codec, ROWS};
use crate::support::reel_runs;
use crate::support::visl_trace::{self, DecodeRun, TraceEvent};

/// One `request ts=... kind=... [order=...] refs=[...] slices=... bytes=...` line.
#[derive(Debug, PartialEq, Eq)]
struct LoggedRequest {
    ts: u64,
    kind: String,
    order: Option<i64>,
    refs: Vec<u64>,
    slices: usize,
    bytes: usize,
}

fn parse_line(line: &str) -> Option<LoggedRequest> {
    let rest = &line[line.find("request ts=")? + "request ".len()..];
    let field = |key: &str| {
        rest.split_whitespace()
            .find_map(|word| word.strip_prefix(key)?.strip_prefix('='))
    };
    let refs = field("refs")?
        .trim_matches(|c| c == '[' || c == ']')
        .split(',')
        .filter(|r| !r.is_empty())
        .map(|r| r.parse().ok())
        .collect::<Option<Vec<u64>>>()?;
    Some(LoggedRequest {
        ts: field("ts")?.parse().ok()?,
        kind: field("kind")?.to_string(),
        order: field("order").map(|o| o.parse()).transpose().ok()?,
        refs,
        slices: field("slices")?.parse().ok()?,
        bytes: field("bytes")?.parse().ok()?,
    })
}

fn logged_requests(log: &str) -> Vec<LoggedRequest> {
    log.lines()
        .filter(|l| l.contains("request ts="))
        .map(|l| parse_line(l).unwrap_or_else(|| panic!("unreadable request line: {l}")))
        .collect()
}

/// Fields naming reference pictures by timestamp, in every codec's controls
/// (queue events, whose `timestamp` is a buffer's own, are left out).
const REFERENCE_FIELDS: [&str; 8] = [
    "reference_ts",
    "timestamp",
    "forward_ref_ts",
    "backward_ref_ts",
    "last_frame_ts",
    "golden_frame_ts",
    "alt_frame_ts",
    "reference_frame_ts",
];

/// A field's numbers, decimal or hex, single or `{a,b,...}` arrays.
fn numbers(value: &str) -> impl Iterator<Item = u64> + '_ {
    value
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter_map(|word| match word.strip_prefix("0x") {
            Some(hex) => u64::from_str_radix(hex, 16).ok(),
            None => word.parse().ok(),
        })
}

fn traced_references(run: &DecodeRun) -> Vec<u64> {
    let mut refs: Vec<u64> = run
        .events
        .iter()
        .filter(|e| e.name.starts_with("v4l2_ctrl_") || e.name.ends_with("_dpb_entry"))
        .flat_map(|e| e.fields.iter())
        .filter(|(key, _)| REFERENCE_FIELDS.contains(&key.as_str()))
        .flat_map(|(_, value)| numbers(value))
        .filter(|&ts| ts != 0)
        .collect();
    refs.sort_unstable();
    refs.dedup();
    refs
}

fn event<'a>(run: &'a DecodeRun, name: &str) -> Option<&'a TraceEvent> {
    run.events.iter().find(|e| e.name == name)
}

fn int_field(event: &TraceEvent, key: &str) -> Option<i64> {
    event.field(key)?.trim().parse().ok()
}

/// The picture order the run's controls carry, where they carry one.
fn traced_order(codec: Codec, run: &DecodeRun) -> Option<i64> {
    match codec {
        Codec::H264 => {
            let params = event(run, "v4l2_ctrl_h264_decode_params")?;
            let top = int_field(params, "top_field_order_cnt")?;
            let bottom = int_field(params, "bottom_field_order_cnt")?;
            let flags = params.field("flags").unwrap_or("");
            Some(if !flags.contains("FIELD_PIC") {
                top.min(bottom)
            } else if flags.contains("BOTTOM_FIELD") {
                bottom
            } else {
                top
            })
        }
        Codec::Hevc => int_field(
            event(run, "v4l2_ctrl_hevc_decode_params")?,
            "pic_order_cnt_val",
        ),
        Codec::Av1 => int_field(event(run, "v4l2_ctrl_av1_frame")?, "order_hint"),
        _ => None,
    }
}

#[test]
fn request_lines_describe_what_visl_received() {
    boot::boot();
    let rows = ROWS.iter().filter(|r| r.traced());
    check_each("request lines against visl's trace", rows, |row| {
        let name = trace_run(row);
        let (log, _) = reel_runs::successful(boot::result(), &name);
        let logged = logged_requests(&log);
        let trace = boot::result()
            .read_result(&format!("{name}.trace"))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let events = visl_trace::parse_events(&trace).unwrap_or_else(|e| panic!("{name}: {e}"));
        let runs = visl_trace::decode_runs(&events).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            logged.len(),
            runs.len(),
            "{name}: requests logged and traced"
        );
        for (i, (line, run)) in logged.iter().zip(&runs).enumerate() {
            assert_eq!(line.ts, run.output_ts, "{name}: request {i}: timestamp");
            assert!(
                line.bytes > 0 && line.slices > 0,
                "{name}: request {i}: {line:?}"
            );
            let sent = traced_references(run);
            for reference in &line.refs {
                assert!(
                    sent.contains(reference),
                    "{name}: request {i} names reference {reference}, the controls carried {sent:?}"
                );
            }
            if let Some(order) = traced_order(row.codec, run) {
                assert_eq!(
                    line.order,
                    Some(order),
                    "{name}: request {i}: picture order"
                );
            }
        }
    });
}

#[test]
fn request_lines_parse() {
    let line = "2026-11-28T21:00:00Z DEBUG request ts=3000 kind=B order=-2 \
                refs=[1000,2000] slices=4 bytes=512 hold";
    assert_eq!(
        parse_line(line),
        Some(LoggedRequest {
            ts: 3000,
            kind: "B".into(),
            order: Some(-2),
            refs: vec![1000, 2000],
            slices: 4,
            bytes: 512,
        })
    );
    let key = parse_line("request ts=1000 kind=key refs=[] slices=1 bytes=9").unwrap();
    assert_eq!((key.order, key.refs.len()), (None, 0));
    assert_eq!(
        numbers("{0x0,0x3e8,2000}").collect::<Vec<_>>(),
        [0, 1000, 2000]
    );
}
