//! Start-up cost: the libraries the dynamic linker looks symbols up in
//! most must sit at the front of reel's global scope (build.rs names them
//! as reel's own dependencies). With immediate binding every reference is
//! resolved at start by walking the scope in order; FFmpeg's tree left
//! libcrypto, libstdc++ and GLib 40 to 100 libraries deep, and the walk was
//! most of reel's start-up instructions (docs/benchmark-log.md).
//!
//! The ranking is taken from this machine's dynamic linker
//! (`LD_DEBUG=bindings`), not from build.rs's list, so a change in FFmpeg's
//! dependencies that makes another library the most looked up fails here.

use std::collections::HashMap;
use std::process::Command;

/// `reel --version` under `LD_DEBUG=what`: the dynamic linker's report.
fn linker_report(what: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_reel"))
        .arg("--version")
        .env("LD_DEBUG", what)
        .output()
        .expect("run reel --version");
    assert!(out.status.success(), "reel --version: {}", out.status);
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The global scope's objects, in search order.
fn global_scope() -> Vec<String> {
    let report = linker_report("scopes");
    let line = report
        .lines()
        .find_map(|l| l.split_once("scope 0:").map(|(_, rest)| rest.to_owned()))
        .unwrap_or_else(|| panic!("no global scope in\n{report}"));
    line.split_whitespace().map(str::to_owned).collect()
}

/// How many symbol references bound to each library.
fn bindings_per_library() -> HashMap<String, usize> {
    let report = linker_report("bindings");
    let mut counts = HashMap::new();
    for line in report.lines() {
        // "binding file A [0] to B [0]: normal symbol `s' [V]"
        if let Some((_, rest)) = line.split_once(" to ") {
            if let Some(target) = rest.split_whitespace().next() {
                *counts.entry(target.to_owned()).or_insert(0) += 1;
            }
        }
    }
    counts
}

#[test]
fn the_most_looked_up_libraries_are_searched_first() {
    let scope = global_scope();
    assert!(
        scope.len() > 50,
        "FFmpeg's dependency tree should be loaded: {scope:?}"
    );
    let mut ranked: Vec<(String, usize)> = bindings_per_library().into_iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    assert!(ranked.len() > 50, "too few bindings reported: {ranked:?}");
    // reel's direct dependencies (FFmpeg, libc, ...) come first, then the
    // libraries build.rs names: the ten most looked up must be within the
    // first 40 of ~140.
    const FRONT: usize = 40;
    for (library, count) in ranked.iter().take(10) {
        let position = scope
            .iter()
            .position(|s| s == library)
            .unwrap_or_else(|| panic!("{library} is bound to but not in the scope"));
        assert!(
            position < FRONT,
            "{library} ({count} bindings) is {position}th in the global scope, \
             after {FRONT} others: add it to build.rs's FIRST_IN_SCOPE\n{ranked:?}"
        );
    }
}
