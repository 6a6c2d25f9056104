//! `Display::connect` without a compositor: a clear error, no panic, no hang.
//! One test in its own binary because it changes the process environment.

use std::path::Path;

use reel::display::{Display, DisplayError, WindowOptions};

#[test]
fn no_compositor_is_a_clear_error() {
    let opts = WindowOptions {
        title: "t".into(),
        ..Default::default()
    };
    let runtime = std::env::temp_dir().join(format!("reel-connect-{}", std::process::id()));
    std::fs::create_dir_all(&runtime).expect("runtime dir");
    std::env::set_var("XDG_RUNTIME_DIR", &runtime);

    std::env::set_var("WAYLAND_DISPLAY", "reel-no-such-compositor");
    let err = Display::connect(&opts)
        .err()
        .expect("connect must fail without a compositor");
    assert!(matches!(err, DisplayError::Connect { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(
        msg.contains("reel-no-such-compositor"),
        "error does not name the display: {msg}"
    );

    std::env::remove_var("WAYLAND_DISPLAY");
    let err = Display::connect(&opts)
        .err()
        .expect("connect must fail with WAYLAND_DISPLAY unset");
    assert_eq!(
        err.to_string(),
        "cannot connect to a Wayland compositor: WAYLAND_DISPLAY is not set"
    );

    let missing = Path::new("/nonexistent/reel/wayland-0");
    let err = Display::connect_to_socket(missing, &opts)
        .err()
        .expect("no socket there");
    assert!(matches!(err, DisplayError::ConnectSocket { .. }), "{err:?}");
    assert!(
        err.to_string().contains("/nonexistent/reel/wayland-0"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&runtime);
}
