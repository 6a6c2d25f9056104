//! reel's machine-readable output, so that assertions do not depend on its
//! log wording: the `reel: stats:` line `--stats` prints on exit (stderr)
//! and the control socket's `status` reply. Both are `key=value` words.

use std::collections::HashMap;

/// The `key=value` words of a line; other words are skipped.
pub fn fields(text: &str) -> HashMap<String, String> {
    text.split_whitespace()
        .filter_map(|word| word.split_once('='))
        .map(|(key, value)| (key.to_owned(), value.to_owned()))
        .collect()
}

/// The numeric fields of the `reel: stats:` line in reel's stderr, or None
/// when it printed none.
pub fn stats(stderr: &str) -> Option<HashMap<String, u64>> {
    let line = stderr.lines().find(|l| l.starts_with("reel: stats:"))?;
    Some(
        fields(line)
            .into_iter()
            .filter_map(|(key, value)| Some((key, value.parse().ok()?)))
            .collect(),
    )
}

/// A `status` reply's fields, or None when `reply` is not one.
pub fn status(reply: &str) -> Option<HashMap<String, String>> {
    let fields = fields(reply);
    fields.contains_key("state").then_some(fields)
}

/// A numeric field of [`stats`] or [`status`], failing the test (showing
/// all fields) when it is absent or not a number.
#[track_caller]
pub fn number<V: ToString + std::fmt::Debug>(fields: &HashMap<String, V>, key: &str) -> u64 {
    fields
        .get(key)
        .and_then(|v| v.to_string().parse().ok())
        .unwrap_or_else(|| panic!("no numeric {key} in {fields:?}"))
}

/// A frame weston presented, as reel logs its presentation feedback at
/// debug level ("frame on screen").
#[derive(Debug, Clone, Copy)]
pub struct OnScreen {
    /// Which file (or seek) the frame belongs to.
    pub epoch: u64,
    pub pts: std::time::Duration,
    /// When it was shown, on the presentation clock `clock` (a `clockid_t`).
    pub shown: std::time::Duration,
    pub clock: i64,
}

/// Every "frame on screen" line of reel's `log`, in order.
pub fn frames_on_screen(log: &str) -> Vec<OnScreen> {
    log.lines()
        .filter(|line| line.contains("frame on screen"))
        .map(|line| {
            let field = |name: &str| -> i64 {
                line.split_whitespace()
                    .find_map(|word| word.strip_prefix(&format!("{name}=")))
                    .and_then(|value| value.parse().ok())
                    .unwrap_or_else(|| panic!("no {name} in {line:?}"))
            };
            let unsigned = |name: &str| u64::try_from(field(name)).unwrap_or(0);
            OnScreen {
                epoch: unsigned("epoch"),
                pts: std::time::Duration::from_micros(unsigned("pts_us")),
                shown: std::time::Duration::from_nanos(unsigned("shown_ns")),
                clock: field("clock"),
            }
        })
        .collect()
}
