//! Running one check over many rows (or codecs) and reporting every one
//! that failed, by name, in one assertion: a check panics at its first
//! failed assertion, as a test would; the panic is caught and kept as
//! that row's failure, and the next row is checked.

use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::rows::{Codec, Row};

/// Something a check is run for, named in the failure report.
pub trait Named {
    fn describe(&self) -> String;
}

impl Named for &Row {
    fn describe(&self) -> String {
        format!("{} ({}, {})", self.name, self.file, self.carries)
    }
}

impl Named for Codec {
    fn describe(&self) -> String {
        self.label().to_string()
    }
}

/// Runs `check` for each of `items`, then panics listing those whose check
/// failed, each with its failure message; panics too when there is none to
/// check (a table that lost its rows must not pass).
#[track_caller]
pub fn check_each<T: Named>(what: &str, items: impl IntoIterator<Item = T>, check: impl Fn(&T)) {
    let mut checked = 0;
    let mut failures = Vec::new();
    for item in items {
        checked += 1;
        if let Err(panic) = catch_unwind(AssertUnwindSafe(|| check(&item))) {
            failures.push(format!("{}:\n  {}", item.describe(), message(&*panic)));
        }
    }
    assert!(checked > 0, "{what}: nothing to check");
    assert!(
        failures.is_empty(),
        "{what}: {} of {checked} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    eprintln!("{what}: {checked} checked");
}

/// The text of a panic's payload.
fn message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "(a panic without a message)".to_string())
        .replace('\n', "\n  ")
}
