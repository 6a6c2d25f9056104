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
