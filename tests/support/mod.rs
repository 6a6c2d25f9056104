//! Code shared by the integration tests. Each test binary uses a part of it.
#![allow(dead_code)]

pub mod oracle;
pub mod visl_trace;
#[path = "../vm/mod.rs"]
pub mod vm;
pub mod weston_log;
