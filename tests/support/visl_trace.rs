//! Turns the text of a visl trace (`/sys/kernel/tracing/trace` with the
//! `visl_*_controls` events and `vb2:vb2_buf_done` enabled, as written by
//! `tests/vm/guest/visl-trace.sh`) into a form two decoders' traces can be
//! compared in: one record per control per frame, every timestamp replaced by
//! the decode-order index of the frame it names.
//!
//! visl traces the controls of a request when it runs it, then completes the
//! OUTPUT buffer (a `vb2_buf_done` of an OUTPUT queue): that buffer's
//! timestamp identifies the run. Consecutive runs with the same timestamp are
//! the slices of one frame (slice-based decoding).
//!
//! Fields that a decoder may leave at any value because the hardware ignores
//! them are blanked, so that only meaningful differences remain: H.264 DPB
//! entries without the VALID flag, reference list entries beyond the active
//! count (lists whose entries name a DPB slot are rewritten to name the frame
//! in it instead), H.264 prediction weights and scaling matrices the PPS and
//! slice type do not use (left out), HEVC DPB entries past
//! `num_active_dpb_entries` and scaling matrices the SPS does not enable, VP8/VP9 reference timestamps of intra
//! frames, MPEG-2 reference timestamps the picture type does not use.

use std::collections::BTreeMap;
use std::fmt::Write as _;

/// One trace event: its name and its fields in printed order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceEvent {
    pub name: String,
    /// The `[i]:` prefix of per-entry events (DPB entries, reference lists).
    pub index: Option<usize>,
    pub fields: Vec<(String, String)>,
}

impl TraceEvent {
    pub fn field(&self, key: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// The controls visl traced for one request, and its OUTPUT timestamp.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeRun {
    pub output_ts: u64,
    pub events: Vec<TraceEvent>,
}

/// Control name -> field name -> value.
pub type Controls = BTreeMap<String, BTreeMap<String, String>>;

/// The normalised controls of one frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameRecord {
    /// Position in decode order.
    pub index: usize,
    /// Requests the frame took (more than one for slice-based decoding).
    pub runs: usize,
    /// Controls of the first run under their event name (`name[i]` for
    /// entries); those of run k > 0 under `slice{k}/name`.
    pub controls: Controls,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TraceError {
    #[error("line {line}: event {event}: {problem}")]
    Malformed {
        line: usize,
        event: String,
        problem: String,
    },
    #[error("the trace ends with {0} control events not followed by a completed OUTPUT buffer")]
    UnterminatedRun(usize),
    #[error("the trace holds no decode run")]
    Empty,
}

/// V4L2_BUF_TYPE_VIDEO_OUTPUT and V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE.
const OUTPUT_BUFFER_TYPES: [&str; 2] = ["2", "10"];
const BUF_DONE: &str = "vb2_buf_done";

/// Splits the trace text into events. Multi-line events (visl prints most
/// control structs one field per line) are joined; hex dumps spread over
/// several lines inside `{}` become one value with single spaces.
pub fn parse_events(text: &str) -> Result<Vec<TraceEvent>, TraceError> {
    let mut events = Vec::new();
    let mut current: Option<(usize, TraceEvent)> = None;
    let mut open_value: Option<(String, String, i32)> = None; // key, value, brace depth

    let finish = |current: &mut Option<(usize, TraceEvent)>,
                  open_value: &mut Option<(String, String, i32)>,
                  events: &mut Vec<TraceEvent>|
     -> Result<(), TraceError> {
        if let Some((line, mut event)) = current.take() {
            if let Some((key, value, _)) = open_value.take() {
                return Err(TraceError::Malformed {
                    line,
                    event: event.name,
                    problem: format!("unbalanced braces in field {key}: {value}"),
                });
            }
            event.fields.retain(|(k, _)| !k.is_empty());
            events.push(event);
        }
        Ok(())
    };

    for (number, line) in text.lines().enumerate() {
        let number = number + 1;
        if line.starts_with('#') {
            continue;
        }
        if let Some((name, body)) = parse_header(line) {
            finish(&mut current, &mut open_value, &mut events)?;
            let mut event = TraceEvent {
                name: name.to_string(),
                index: None,
                fields: Vec::new(),
            };
            let mut body = body.trim();
            if let Some(rest) = body.strip_prefix('[') {
                if let Some((index, rest)) = rest.split_once("]:") {
                    if let Ok(index) = index.parse() {
                        event.index = Some(index);
                        body = rest.trim_start();
                    }
                }
            }
            if !body.is_empty() {
                event.fields = if name == BUF_DONE {
                    parse_assignments(body)
                } else {
                    parse_pairs(body)
                };
            }
            current = Some((number, event));
            continue;
        }
        let Some((_, event)) = current.as_mut() else {
            continue; // text before the first event
        };
        if let Some((key, value, depth)) = open_value.as_mut() {
            *depth += brace_balance(line);
            value.push(' ');
            value.push_str(line);
            if *depth <= 0 {
                event.fields.push((std::mem::take(key), squash(value)));
                open_value = None;
            }
            continue;
        }
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        // "key value", "key: value" and (AV1) "key:{...}".
        let key_end = trimmed
            .find(|c: char| !(c.is_ascii_alphanumeric() || "_.[]".contains(c)))
            .unwrap_or(trimmed.len());
        let (key, value) = trimmed.split_at(key_end);
        let key = key.to_string();
        let value = value.strip_prefix(':').unwrap_or(value).trim();
        let depth = brace_balance(value);
        if depth > 0 {
            open_value = Some((key, value.to_string(), depth));
        } else {
            event.fields.push((key, value.to_string()));
        }
    }
    finish(&mut current, &mut open_value, &mut events)?;
    Ok(events)
}

/// Single spaces between words, none just inside braces.
fn squash(value: &str) -> String {
    value
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace("{ ", "{")
        .replace(" }", "}")
}

fn brace_balance(text: &str) -> i32 {
    text.chars()
        .map(|c| match c {
            '{' => 1,
            '}' => -1,
            _ => 0,
        })
        .sum()
}

/// `  TASK-PID  [CPU] FLAGS  SECONDS: EVENT: BODY` -> (EVENT, BODY).
fn parse_header(line: &str) -> Option<(&str, &str)> {
    let open = line.find(" [")?;
    let after = &line[open + 2..];
    let close = after.find(']')?;
    if close == 0 || !after[..close].bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (_, pid) = line[..open].trim_end().rsplit_once('-')?;
    if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let rest = after[close + 1..].trim_start();
    let (_flags, rest) = rest.split_once(' ')?;
    let (seconds, rest) = rest.trim_start().split_once(": ")?;
    seconds.parse::<f64>().ok()?;
    let (event, body) = rest.split_once(':')?;
    if event.is_empty()
        || !event
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_')
    {
        return None;
    }
    Some((event, body))
}

/// `key value key value ...` on one line; a value may be empty (two spaces).
fn parse_pairs(body: &str) -> Vec<(String, String)> {
    let words: Vec<&str> = body.split(' ').collect();
    words
        .chunks(2)
        .map(|pair| {
            let key = pair[0].trim_end_matches([':', ',']).to_string();
            let value = pair.get(1).map_or("", |v| v.trim_end_matches(','));
            (key, value.to_string())
        })
        .collect()
}

/// `key = value, key = value` (the vb2 events).
fn parse_assignments(body: &str) -> Vec<(String, String)> {
    body.split(", ")
        .filter_map(|part| part.split_once(" = "))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

/// Groups the control events into decode runs, each closed by the completion
/// of its OUTPUT buffer.
pub fn decode_runs(events: &[TraceEvent]) -> Result<Vec<DecodeRun>, TraceError> {
    let mut runs = Vec::new();
    let mut pending = Vec::new();
    for event in events {
        if event.name != BUF_DONE {
            pending.push(event.clone());
            continue;
        }
        let is_output = event
            .field("type")
            .is_some_and(|t| OUTPUT_BUFFER_TYPES.contains(&t));
        // OUTPUT buffers handed back unused (STREAMOFF) follow no controls.
        if !is_output || pending.is_empty() {
            continue;
        }
        let output_ts = event
            .field("timestamp")
            .and_then(|t| t.parse().ok())
            .ok_or_else(|| TraceError::Malformed {
                line: 0,
                event: BUF_DONE.to_string(),
                problem: format!("no timestamp in {:?}", event.fields),
            })?;
        runs.push(DecodeRun {
            output_ts,
            events: std::mem::take(&mut pending),
        });
    }
    if !pending.is_empty() {
        return Err(TraceError::UnterminatedRun(pending.len()));
    }
    Ok(runs)
}

/// Parses and normalises a whole trace.
pub fn normalise(text: &str) -> Result<Vec<FrameRecord>, TraceError> {
    let runs = decode_runs(&parse_events(text)?)?;
    if runs.is_empty() {
        return Err(TraceError::Empty);
    }
    Ok(normalise_runs(&runs))
}

/// Groups runs into frames and maps timestamps to frame indices.
pub fn normalise_runs(runs: &[DecodeRun]) -> Vec<FrameRecord> {
    // Frame index of each run; a timestamp names the latest frame carrying it.
    let mut frame_of_run = Vec::with_capacity(runs.len());
    let mut frames = 0usize;
    for (i, run) in runs.iter().enumerate() {
        if i > 0 && runs[i - 1].output_ts == run.output_ts {
            frame_of_run.push(frames - 1);
        } else {
            frame_of_run.push(frames);
            frames += 1;
        }
    }

    let mut records: Vec<FrameRecord> = Vec::with_capacity(frames);
    let mut ts_to_frame: BTreeMap<u64, usize> = BTreeMap::new();
    let mut slice = 0usize;
    for (run, &frame) in runs.iter().zip(&frame_of_run) {
        let first_run = records.len() == frame;
        if first_run {
            records.push(FrameRecord {
                index: frame,
                runs: 0,
                controls: Controls::new(),
            });
            slice = 0;
        } else {
            slice += 1;
        }
        let record = &mut records[frame];
        record.runs += 1;
        let prefix = if slice == 0 {
            String::new()
        } else {
            format!("slice{slice}/")
        };
        for (name, fields) in normalise_run(run, &ts_to_frame) {
            record.controls.insert(format!("{prefix}{name}"), fields);
        }
        // Later runs of the frame (slices, a second field) may refer to it;
        // its first run cannot.
        if first_run {
            ts_to_frame.insert(run.output_ts, frame);
        }
    }
    records
}

/// Fields holding a CAPTURE timestamp (a reference) in visl's events.
const TIMESTAMP_FIELDS: [&str; 8] = [
    "reference_ts",
    "timestamp",
    "last_frame_ts",
    "golden_frame_ts",
    "alt_frame_ts",
    "backward_ref_ts",
    "forward_ref_ts",
    "reference_frame_ts",
];
const UNUSED: &str = "unused";
/// A timestamp naming no frame decoded before (e.g. AV1 key frames' refs).
const UNKNOWN: &str = "unknown";

fn map_timestamp(value: &str, ts_to_frame: &BTreeMap<u64, usize>) -> String {
    let parsed = match value.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => value.parse().ok(),
    };
    match parsed.and_then(|ts| ts_to_frame.get(&ts)) {
        Some(frame) => format!("frame {frame}"),
        None => UNKNOWN.to_string(),
    }
}

fn map_timestamp_field(value: &str, ts_to_frame: &BTreeMap<u64, usize>) -> String {
    match value.strip_prefix('{').and_then(|v| v.strip_suffix('}')) {
        Some(list) => {
            let mapped: Vec<String> = list
                .split(',')
                .map(|v| map_timestamp(v.trim(), ts_to_frame))
                .collect();
            format!("{{{}}}", mapped.join(","))
        }
        None => map_timestamp(value, ts_to_frame),
    }
}

fn has_flag(event: &TraceEvent, key: &str, flag: &str) -> bool {
    event
        .field(key)
        .is_some_and(|v| v.split('|').any(|f| f == flag))
}

/// One run's events as control name -> fields, with the codec rules applied.
fn normalise_run(
    run: &DecodeRun,
    ts_to_frame: &BTreeMap<u64, usize>,
) -> Vec<(String, BTreeMap<String, String>)> {
    // H.264 reference lists name DPB slots: resolve them to frames.
    let dpb_slot_frame: BTreeMap<usize, String> = run
        .events
        .iter()
        .filter(|e| e.name == "v4l2_h264_dpb_entry" && has_flag(e, "flags", "VALID"))
        .filter_map(|e| {
            Some((
                e.index?,
                map_timestamp(e.field("reference_ts")?, ts_to_frame),
            ))
        })
        .collect();
    let h264_slice = run
        .events
        .iter()
        .find(|e| e.name == "v4l2_ctrl_h264_slice_params");
    let active_refs = |list: usize| -> usize {
        let Some(slice) = h264_slice else { return 0 };
        let kind = slice.field("slice_type").unwrap_or("");
        let uses = match list {
            0 => matches!(kind, "P" | "SP" | "B"),
            _ => kind == "B",
        };
        let key = format!("num_ref_idx_l{list}_active_minus1");
        match (
            uses,
            slice.field(&key).and_then(|v| v.parse::<usize>().ok()),
        ) {
            (true, Some(n)) => n + 1,
            _ => 0,
        }
    };

    // Prediction weights and the scaling matrix only count when the PPS and
    // slice type use them; otherwise the control holds whatever was last set.
    let h264_pps = run.events.iter().find(|e| e.name == "v4l2_ctrl_h264_pps");
    let slice_type = h264_slice.and_then(|s| s.field("slice_type")).unwrap_or("");
    let weights_used = h264_pps.is_some_and(|pps| {
        (matches!(slice_type, "P" | "SP") && has_flag(pps, "flags", "WEIGHTED_PRED"))
            || (slice_type == "B" && pps.field("weighted_bipred_idc") == Some("1"))
    });
    let scaling_used = h264_pps.is_some_and(|pps| has_flag(pps, "flags", "SCALING_MATRIX_PRESENT"));
    // visl traces all 16 HEVC DPB entries; only the active ones mean anything.
    let hevc_active_dpb = run
        .events
        .iter()
        .find(|e| e.name == "v4l2_ctrl_hevc_decode_params")
        .and_then(|d| d.field("num_active_dpb_entries")?.parse::<usize>().ok())
        .unwrap_or(0);
    let hevc_scaling_used = run
        .events
        .iter()
        .find(|e| e.name == "v4l2_ctrl_hevc_sps")
        .is_some_and(|sps| has_flag(sps, "flags", "SCALING_LIST_ENABLED"));

    // The chroma quantiser matrices only count for 4:2:2 and 4:4:4 (the
    // uAPI says so); in a 4:2:0 sequence they hold whatever was last set.
    let mpeg2_chroma_matrices_used = run
        .events
        .iter()
        .find(|e| e.name == "v4l2_ctrl_mpeg2_sequence")
        .is_some_and(|seq| seq.field("chroma_format") != Some("1"));

    let mut out = Vec::new();
    let mut occurrences: BTreeMap<&str, usize> = BTreeMap::new();
    for event in &run.events {
        let mut fields: BTreeMap<String, String> = BTreeMap::new();
        let mut name = event.name.clone();
        match (event.name.as_str(), event.index) {
            ("v4l2_ctrl_h264_pred_weights", _) if !weights_used => continue,
            ("v4l2_ctrl_h264_scaling_matrix", _) if !scaling_used => continue,
            ("v4l2_ctrl_hevc_scaling_matrix", _) if !hevc_scaling_used => continue,
            ("v4l2_hevc_dpb_entry", None) => {
                let seen = occurrences.entry(event.name.as_str()).or_insert(0);
                let slot = *seen;
                *seen += 1;
                if slot >= hevc_active_dpb {
                    continue;
                }
                name = format!("{name}[{slot}]");
            }
            ("v4l2_h264_dpb_entry", Some(_)) => {
                if !has_flag(event, "flags", "VALID") {
                    continue;
                }
                // Slots are the decoder's choice: key entries by frame.
                let frame = map_timestamp(event.field("reference_ts").unwrap_or(""), ts_to_frame);
                name = format!("{name}[{frame}]");
            }
            ("v4l2_h264_ref_pic_list0" | "v4l2_h264_ref_pic_list1", Some(i)) => {
                let list = usize::from(event.name.ends_with('1'));
                if i >= active_refs(list) {
                    continue;
                }
                name = format!("{name}[{i}]");
                let slot = event.field("index").and_then(|v| v.parse::<usize>().ok());
                let target = slot
                    .and_then(|s| dpb_slot_frame.get(&s).cloned())
                    .unwrap_or_else(|| {
                        format!("invalid slot {}", event.field("index").unwrap_or(""))
                    });
                fields.insert("fields".into(), event.field("fields").unwrap_or("").into());
                fields.insert("frame".into(), target);
                out.push((name, fields));
                continue;
            }
            (_, Some(i)) => name = format!("{name}[{i}]"),
            (_, None) => {
                let seen = occurrences.entry(event.name.as_str()).or_insert(0);
                if *seen > 0 {
                    name = format!("{name}[{seen}]");
                }
                *seen += 1;
            }
        }
        for (key, value) in &event.fields {
            let value = if TIMESTAMP_FIELDS.contains(&key.as_str()) {
                map_timestamp_field(value, ts_to_frame)
            } else {
                value.clone()
            };
            fields.insert(key.clone(), value);
        }
        blank_unused_references(&event.name, &mut fields);
        blank_unused_av1_loop_filter_flags(&event.name, &mut fields);
        if event.name == "v4l2_ctrl_mpeg2_quantisation" && !mpeg2_chroma_matrices_used {
            for key in [
                "chroma_intra_quantiser_matrix",
                "chroma_non_intra_quantiser_matrix",
            ] {
                if let Some(v) = fields.get_mut(key) {
                    *v = UNUSED.to_string();
                }
            }
        }
        out.push((name, fields));
    }
    // A repeated unindexed event is numbered from its second occurrence; name
    // the first one [0] too when there were several, so keys line up.
    for (event_name, count) in occurrences {
        if count > 1 && event_name != "v4l2_hevc_dpb_entry" {
            if let Some(entry) = out.iter_mut().find(|(n, _)| n == event_name) {
                entry.0 = format!("{event_name}[0]");
            }
        }
    }
    out
}

fn blank_unused_references(event: &str, fields: &mut BTreeMap<String, String>) {
    let flags = |fields: &BTreeMap<String, String>, flag: &str| {
        fields
            .get("flags")
            .is_some_and(|v| v.split('|').any(|f| f == flag))
    };
    let blank = |fields: &mut BTreeMap<String, String>, keys: &[&str]| {
        for key in keys {
            if let Some(v) = fields.get_mut(*key) {
                *v = UNUSED.to_string();
            }
        }
    };
    match event {
        "v4l2_ctrl_vp8_frame" if flags(fields, "KEY_FRAME") => blank(
            fields,
            &["last_frame_ts", "golden_frame_ts", "alt_frame_ts"],
        ),
        "v4l2_ctrl_vp9_frame" if flags(fields, "KEY_FRAME") || flags(fields, "INTRA_ONLY") => {
            blank(
                fields,
                &["last_frame_ts", "golden_frame_ts", "alt_frame_ts"],
            )
        }
        "v4l2_ctrl_mpeg2_picture" => match fields.get("picture_coding_type").map(String::as_str) {
            Some("1") => blank(fields, &["backward_ref_ts", "forward_ref_ts"]),
            Some("2") => blank(fields, &["backward_ref_ts"]),
            _ => {}
        },
        _ => {}
    }
}

/// An AV1 frame with both luma loop filter levels 0 is not deblocked at all
/// (7.14): how levels would be adjusted (the loop filter flags) means
/// nothing, and is not even coded with `allow_intrabc` or coded lossless.
/// Without a primary reference frame the specification still defines it
/// (setup_past_independence(): deltas enabled), and it is compared; with
/// one, it is the last header's value, which decoders keep or not.
fn blank_unused_av1_loop_filter_flags(event: &str, fields: &mut BTreeMap<String, String>) {
    let unfiltered = fields
        .get("loop_filter.level")
        .is_some_and(|levels| levels.starts_with("{0x0,0x0,"));
    // PRIMARY_REF_NONE
    let past_independence = fields.get("primary_ref_frame").is_some_and(|p| p == "7");
    if event == "v4l2_ctrl_av1_frame" && unfiltered && !past_independence {
        if let Some(v) = fields.get_mut("loop_filter.flags") {
            *v = UNUSED.to_string();
        }
    }
}

/// A stable text form, one field per line, for files and diffs.
pub fn render(frames: &[FrameRecord]) -> String {
    let mut out = String::new();
    for frame in frames {
        let _ = writeln!(out, "frame {} runs {}", frame.index, frame.runs);
        for (control, fields) in &frame.controls {
            let _ = writeln!(out, "  {control}");
            for (key, value) in fields {
                let _ = writeln!(out, "    {key} = {value}");
            }
        }
    }
    out
}

/// The frames from `first` on, as a decoder starting there would have
/// traced them: numbered from 0, and a reference to a frame before `first`
/// becomes one to no frame decoded before ([`UNKNOWN`]). This makes the
/// trace of a whole clip comparable with the trace of one of its parts
/// decoded alone (from a key frame).
pub fn from_frame(frames: &[FrameRecord], first: usize) -> Vec<FrameRecord> {
    let rebase = |value: &str| -> String {
        let mut out = String::with_capacity(value.len());
        let mut rest = value;
        while let Some(at) = rest.find("frame ") {
            out.push_str(&rest[..at]);
            let after = &rest[at + "frame ".len()..];
            let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            match after[..digits].parse::<usize>() {
                Ok(n) if n >= first => out.push_str(&format!("frame {}", n - first)),
                Ok(_) => out.push_str(UNKNOWN),
                Err(_) => out.push_str("frame "),
            }
            rest = &after[digits..];
        }
        out.push_str(rest);
        out
    };
    frames
        .iter()
        .skip(first)
        .map(|frame| FrameRecord {
            index: frame.index - first,
            runs: frame.runs,
            controls: frame
                .controls
                .iter()
                .map(|(control, fields)| {
                    let fields = fields
                        .iter()
                        .map(|(key, value)| (key.clone(), rebase(value)))
                        .collect();
                    (control.clone(), fields)
                })
                .collect(),
        })
        .collect()
}

/// Differences between two normalised traces (`left` usually the oracle),
/// one line each; empty when they match.
pub fn diff(left: &[FrameRecord], right: &[FrameRecord]) -> Vec<String> {
    let mut out = Vec::new();
    if left.len() != right.len() {
        out.push(format!("frame count: {} vs {}", left.len(), right.len()));
    }
    for (l, r) in left.iter().zip(right) {
        let f = l.index;
        if l.runs != r.runs {
            out.push(format!("frame {f}: runs {} vs {}", l.runs, r.runs));
        }
        for (control, lf) in &l.controls {
            let Some(rf) = r.controls.get(control) else {
                out.push(format!("frame {f}: {control} only on the left"));
                continue;
            };
            for (key, lv) in lf {
                match rf.get(key) {
                    Some(rv) if rv == lv => {}
                    Some(rv) => out.push(format!("frame {f}: {control}.{key}: {lv} vs {rv}")),
                    None => out.push(format!("frame {f}: {control}.{key} only on the left")),
                }
            }
            for key in rf.keys().filter(|k| !lf.contains_key(*k)) {
                out.push(format!("frame {f}: {control}.{key} only on the right"));
            }
        }
        for control in r.controls.keys().filter(|c| !l.controls.contains_key(*c)) {
            out.push(format!("frame {f}: {control} only on the right"));
        }
    }
    out
}
