//! The weston harness itself: start-up failures carry weston's log,
//! instances run side by side, screenshots have the output's size.

use crate::support;

use std::panic;

use support::compositor::Weston;

#[test]
fn start_failure_reports_westons_log() {
    let result = panic::catch_unwind(|| Weston::start_with_shell(320, 240, "no-such-shell"));
    let payload = result
        .err()
        .expect("weston with an unknown shell must not start");
    let msg = payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default();
    assert!(msg.contains("weston exited during start-up"), "{msg}");
    // weston's own words about the missing module are in the message.
    assert!(msg.contains("no-such-shell"), "{msg}");
}

#[test]
fn protocol_errors_are_found_in_westons_log() {
    use std::io::{Read, Write};
    let mut weston = Weston::start(320, 240);
    assert!(weston.protocol_errors().is_empty());
    // A request to an object that does not exist: weston answers with
    // wl_display.error(invalid_object) and closes the connection.
    let mut client =
        std::os::unix::net::UnixStream::connect(weston.socket_path()).expect("connect to weston");
    let mut request = Vec::new();
    for word in [99u32, 8 << 16] {
        request.extend_from_slice(&word.to_ne_bytes());
    }
    client.write_all(&request).expect("send the request");
    let mut answer = Vec::new();
    client
        .set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .expect("read timeout");
    let _ = client.read_to_end(&mut answer);
    assert!(!answer.is_empty(), "weston did not answer the bad request");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while weston.protocol_errors().is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let errors = weston.protocol_errors();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("invalid object 99"), "{errors:?}");
    weston.expect_protocol_errors();
}

#[test]
fn instances_do_not_collide_and_screenshots_have_the_output_size() {
    let a = Weston::start(320, 240);
    let b = Weston::start(200, 100);
    assert_ne!(a.socket_path(), b.socket_path());
    assert_ne!(a.runtime_dir(), b.runtime_dir());
    let (sa, sb) = (a.screenshot(), b.screenshot());
    assert_eq!((sa.width, sa.height), (320, 240));
    assert_eq!((sb.width, sb.height), (200, 100));
    // Nothing mapped: kiosk shows black.
    assert_eq!(sa.pixel(160, 120), [0, 0, 0]);
    let dir = a.runtime_dir().to_owned();
    drop(a);
    assert!(!dir.exists(), "runtime dir left behind");
    assert!(
        b.socket_path().exists(),
        "dropping one weston affected the other"
    );
}
