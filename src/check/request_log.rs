//! The V4L2 side's per-request log (`reel::request`), captured in memory
//! so that the first differing frame can name its picture type and order
//! and, with `-v`, the controls reel sent for it. The decoder logs each
//! request with its device timestamp (`request ts=T ...`) and each picture
//! it puts out with the same timestamp (`V4L2 frame out`): the n-th frame
//! out is the V4L2 side's n-th picture.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, PoisonError};

use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::layer::{Context, Layer};

use crate::v4l2::decoder::REQUEST_LOG;

/// The message of the decoder's line for each picture put out.
const FRAME_OUT: &str = "V4L2 frame out";
/// The decoder's tracing target (its module).
const DECODER_TARGET: &str = "reel::v4l2::decoder";

#[derive(Default)]
struct Captured {
    /// Each request's line, by device timestamp, in the order sent; those
    /// of pictures compared equal are let go.
    requests: HashMap<u64, Vec<String>>,
    /// The device timestamp of each picture put out, in output order.
    frames_out: Vec<u64>,
    /// Nothing more is needed (the first difference is known).
    stopped: bool,
}

/// What was captured, shared between the layer and `reel check`.
#[derive(Clone, Default)]
pub struct RequestLog(Arc<Mutex<Captured>>);

/// What the request log says of one output picture.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PictureLog {
    pub timestamp: u64,
    /// `kind=` of its first request.
    pub kind: Option<String>,
    /// `order=` of its first request (POC, order hint, temporal reference).
    pub order: Option<String>,
    pub lines: Vec<String>,
}

impl RequestLog {
    /// The layer that fills this log (with its own filter: it sees the
    /// request and frame lines whatever `-v` says).
    pub fn layer<S>(&self) -> impl Layer<S>
    where
        S: Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
    {
        let targets = Targets::new()
            .with_target(REQUEST_LOG, LevelFilter::DEBUG)
            .with_target(DECODER_TARGET, LevelFilter::DEBUG);
        Capture(self.clone()).with_filter(targets)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Captured> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The V4L2 side's `index`-th output picture, as the log has it.
    pub fn picture(&self, index: u64) -> Option<PictureLog> {
        let captured = self.lock();
        let timestamp = *captured.frames_out.get(usize::try_from(index).ok()?)?;
        let lines = captured
            .requests
            .get(&timestamp)
            .cloned()
            .unwrap_or_default();
        let field = |name: &str| lines.first().and_then(|l| field(l, name));
        Some(PictureLog {
            timestamp,
            kind: field("kind"),
            order: field("order"),
            lines,
        })
    }

    /// The V4L2 side's `index`-th picture was equal: its requests are no
    /// longer needed (the log stays small over a long stream).
    pub fn forget(&self, index: u64) {
        let mut captured = self.lock();
        let timestamp = usize::try_from(index)
            .ok()
            .and_then(|i| captured.frames_out.get(i).copied());
        if let Some(timestamp) = timestamp {
            captured.requests.remove(&timestamp);
        }
    }

    /// Captures nothing more, and lets go of what it holds.
    pub fn stop(&self) {
        let mut captured = self.lock();
        captured.stopped = true;
        captured.requests = HashMap::new();
        captured.frames_out = Vec::new();
    }

    fn record(&self, message: &str, timestamp_ns: Option<u64>) {
        let mut captured = self.lock();
        if captured.stopped {
            return;
        }
        if message == FRAME_OUT {
            if let Some(ts) = timestamp_ns {
                captured.frames_out.push(ts);
            }
        } else if let Some(ts) = field(message, "ts").and_then(|t| t.parse().ok()) {
            if message.starts_with("request ") {
                captured
                    .requests
                    .entry(ts)
                    .or_default()
                    .push(message.to_owned());
            }
        }
    }
}

/// The value of ` name=value` in a request line.
fn field(line: &str, name: &str) -> Option<String> {
    line.split_whitespace()
        .find_map(|word| word.strip_prefix(name)?.strip_prefix('='))
        .map(str::to_owned)
}

struct Capture(RequestLog);

impl<S: Subscriber> Layer<S> for Capture {
    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        let mut fields = Fields::default();
        event.record(&mut fields);
        self.0.record(&fields.message, fields.timestamp_ns);
    }
}

#[derive(Default)]
struct Fields {
    message: String,
    timestamp_ns: Option<u64>,
}

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.message, "{value:?}");
        }
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message.push_str(value);
        }
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        if field.name() == "timestamp_ns" {
            self.timestamp_ns = Some(value);
        }
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        if field.name() == "timestamp_ns" {
            self.timestamp_ns = u64::try_from(value).ok();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pictures_requests_are_found_by_its_timestamp() {
        let log = RequestLog::default();
        log.record("request ts=1000 kind=I refs=[] slices=1 bytes=10", None);
        log.record(
            "request ts=2000 kind=P order=4 refs=[1000] slices=1 bytes=9 hold",
            None,
        );
        log.record(
            "request ts=2000 kind=P order=4 refs=[1000] slices=2 bytes=7",
            None,
        );
        log.record("something else ts=3000", None);
        log.record(FRAME_OUT, Some(2000));
        log.record(FRAME_OUT, Some(1000));
        let first = log.picture(0).expect("first picture");
        assert_eq!(first.timestamp, 2000);
        assert_eq!(first.kind.as_deref(), Some("P"));
        assert_eq!(first.order.as_deref(), Some("4"));
        assert_eq!(first.lines.len(), 2);
        let second = log.picture(1).expect("second picture");
        assert_eq!((second.kind.as_deref(), second.order), (Some("I"), None));
        assert_eq!(log.picture(2), None);
        log.forget(0);
        assert!(log.picture(0).expect("still counted").lines.is_empty());
        assert_eq!(log.picture(1).expect("kept").lines.len(), 1);
        log.stop();
        log.record(FRAME_OUT, Some(1000));
        assert_eq!(log.picture(0), None);
    }
}
