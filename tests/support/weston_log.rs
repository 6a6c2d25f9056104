//! Reading weston's log with its `proto` debug scope on.

/// The protocol errors weston sent to any client
/// (`... ev wl_display@1.error(object, code, "message")`).
pub fn protocol_errors(log: &str) -> Vec<&str> {
    log.lines()
        .filter(|l| l.contains("[proto]") && l.contains(" ev wl_display@1.error("))
        .collect()
}

/// weston's protocol log shows client `pid`'s dmabuf requests (the scope
/// was on, so its silence means something) and no protocol error at all.
#[track_caller]
pub fn assert_clean_protocol_log(log: &str, pid: &str) {
    assert!(
        log.contains(&format!(
            "(PID {}) rq zwp_linux_buffer_params_v1",
            pid.trim()
        )),
        "weston's protocol log of client {pid} is missing"
    );
    let errors = protocol_errors(log);
    assert!(errors.is_empty(), "protocol errors: {errors:#?}");
}
