//! packaging/fluster/reel_fluster.py through fluster-conformance
//! (support::fluster): `reel-sw-<codec>` passes every vector of the local
//! suites, one per codec, and a vector whose result is wrong is reported
//! failed. (tests/guest_real_drivers.rs runs `reel-v4l2-<codec>` on visl.)

use crate::support;
use support::fluster::{self, VECTORS};

use std::path::Path;
use std::process::Command;

#[test]
fn fluster_runs_local_suites_with_reels_software_decoders() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fluster");
    let _ = std::fs::remove_dir_all(&dir);
    let suites = fluster::write_suites(&dir, "high10");
    let list = Command::new(fluster::venv_python())
        .arg(support::project_dir().join("packaging/fluster/reel_fluster.py"))
        .arg("list")
        .env("REEL", env!("CARGO_BIN_EXE_reel"))
        .output()
        .expect("run reel_fluster.py list");
    let listed = String::from_utf8_lossy(&fluster::checked("reel_fluster.py list", list).stdout)
        .into_owned();
    let mut failures = Vec::new();
    for &(suite, codec) in &suites {
        for path in ["v4l2", "sw"] {
            let decoder = format!("reel-{path}-{codec}");
            if !listed.contains(&format!("{decoder}:")) {
                failures.push(format!("`list` does not name {decoder}"));
            }
        }
        let decoder = format!("reel-sw-{codec}");
        let (status, results) = fluster::run_suite(&dir, suite, &decoder);
        let expected: Vec<(String, String)> = VECTORS
            .iter()
            .filter(|v| v.0 == suite)
            .map(|v| {
                let name = fluster::vector_name(v.4).to_string();
                let verdict = if name == "high10" { "KO" } else { "OK" };
                (name, verdict.to_string())
            })
            .collect();
        let want_status = if expected.iter().any(|(_, v)| v == "KO") {
            1
        } else {
            0
        };
        if results != expected || status != Some(want_status) {
            failures.push(format!(
                "{suite} with {decoder}: exit {status:?} (want {want_status}), {results:?} (want {expected:?})"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
