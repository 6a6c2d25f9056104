//! What a kiosk needs of the window, against sway headless (weston 14 offers
//! neither `zwp_idle_inhibit_manager_v1` nor `zxdg_decoration_manager_v1`,
//! and its headless seat has no pointer): the screen is kept awake exactly
//! while playing, the cursor is hidden in fullscreen and after a second
//! without motion in a window, and decorations are asked for only in a
//! window. Checked in sway's protocol log; reel is driven through its
//! control socket, the mouse through a virtual pointer.

use crate::support;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::thread::sleep;
use std::time::Duration;

use support::reel_process::Reel;
use support::sway::{Message, Sway};

fn sample() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/sample.mp4")
}

fn position(status: &HashMap<String, String>) -> f64 {
    status["position"].parse().expect("position is a number")
}

fn spawn(sway: &Sway, args: &[&str]) -> Reel {
    Reel::spawn(&sway.client_env(), sway.runtime_dir(), args, &[&sample()])
}

/// The `wl_surface#N` reel made its window of.
fn video_surface(sway: &Sway) -> String {
    let message = sway.wait_for("the window's xdg_surface", |m| {
        !m.event && m.text.contains(".get_xdg_surface(")
    });
    argument(&message, 1)
}

/// Argument `index` of a message, as the log prints it.
fn argument(message: &Message, index: usize) -> String {
    let args = &message.text[message.text.find('(').expect("(") + 1..message.text.len() - 1];
    let arg = args
        .split(", ")
        .nth(index)
        .unwrap_or_else(|| panic!("no argument {index} in {}", message.text));
    arg.trim_start_matches("new id ").to_owned()
}

fn count(sway: &Sway, wanted: impl Fn(&Message) -> bool) -> usize {
    sway.messages().iter().filter(|m| wanted(m)).count()
}

fn is_create_inhibitor(m: &Message) -> bool {
    !m.event && m.text.contains(".create_inhibitor(")
}

#[test]
fn the_screen_is_kept_awake_while_playing_and_released_on_pause() {
    let sway = Sway::start(640, 480);
    let mut reel = spawn(&sway, &["--loop"]);
    reel.wait_for("playback", |s| s["state"] == "playing" && position(s) > 0.2);
    let surface = video_surface(&sway);
    let created = sway.wait_for("an idle inhibitor", is_create_inhibitor);
    assert_eq!(argument(&created, 1), surface, "{}", created.text);
    let inhibitor = argument(&created, 0);
    let destroy = format!("{inhibitor}.destroy()");
    assert_eq!(count(&sway, |m| m.text == destroy), 0);

    assert_eq!(reel.command("pause"), "ok");
    reel.wait_for("pause", |s| s["state"] == "paused");
    sway.wait_for("the inhibitor destroyed on pause", |m| m.text == destroy);
    sleep(Duration::from_millis(300));
    assert_eq!(
        count(&sway, is_create_inhibitor),
        1,
        "an inhibitor while paused"
    );

    assert_eq!(reel.command("resume"), "ok");
    reel.wait_for("playback again", |s| s["state"] == "playing");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while count(&sway, is_create_inhibitor) < 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "no inhibitor after resuming:\n{}",
            reel.log()
        );
        sleep(Duration::from_millis(20));
    }
    assert!(reel.quit().success(), "{}", reel.log());
}

/// `wl_pointer#N.set_cursor(serial, surface, x, y)` requests.
fn set_cursors(sway: &Sway) -> Vec<Message> {
    sway.messages()
        .into_iter()
        .filter(|m| !m.event && m.text.contains(".set_cursor("))
        .collect()
}

#[test]
fn fullscreen_hides_the_cursor_and_asks_for_no_decorations() {
    let sway = Sway::start(640, 480);
    let mut reel = spawn(&sway, &["--fullscreen", "--paused"]);
    reel.settled();
    let surface = video_surface(&sway);
    sway.wait_for("client-side (no) decorations asked for", |m| {
        !m.event
            && m.text.starts_with("zxdg_toplevel_decoration_v1#")
            && m.text.ends_with(".set_mode(1)")
    });
    assert_eq!(
        count(&sway, |m| m.text.ends_with(".set_mode(2)")),
        0,
        "server-side decorations asked for in fullscreen"
    );

    let mut mouse = sway.virtual_pointer();
    mouse.move_to(320, 240);
    let enter = sway.wait_for("the pointer entering the video", |m| {
        m.event
            && m.text.starts_with("wl_pointer#")
            && m.text.contains(".enter(")
            && m.text.contains(&surface)
    });
    let serial = argument(&enter, 0);
    let hide = sway.wait_for("the cursor unset", |m| {
        !m.event && m.text.contains(".set_cursor(")
    });
    assert_eq!(argument(&hide, 0), serial, "{}", hide.text);
    assert_eq!(argument(&hide, 1), "nil", "a cursor surface in fullscreen");
    // Moving does not bring it back in fullscreen.
    mouse.move_to(100, 100);
    sleep(Duration::from_millis(300));
    let shown: Vec<Message> = set_cursors(&sway)
        .into_iter()
        .filter(|m| argument(m, 1) != "nil")
        .collect();
    assert!(shown.is_empty(), "cursor shown in fullscreen: {shown:?}");
    assert!(reel.quit().success(), "{}", reel.log());
}

#[test]
fn a_window_hides_a_still_cursor_after_a_second() {
    let sway = Sway::start(640, 480);
    let mut reel = spawn(&sway, &["--paused"]);
    reel.settled();
    let surface = video_surface(&sway);
    sway.wait_for("server-side decorations asked for", |m| {
        !m.event
            && m.text.starts_with("zxdg_toplevel_decoration_v1#")
            && m.text.ends_with(".set_mode(2)")
    });

    let mut mouse = sway.virtual_pointer();
    mouse.move_to(320, 240);
    sway.wait_for("the pointer entering the video", |m| {
        m.event
            && m.text.starts_with("wl_pointer#")
            && m.text.contains(".enter(")
            && m.text.contains(&surface)
    });
    let shown = sway.wait_for("the cursor shown", |m| {
        !m.event && m.text.contains(".set_cursor(") && argument(m, 1) != "nil"
    });
    let hidden = sway.wait_for("the cursor hidden", |m| {
        !m.event && m.text.contains(".set_cursor(") && argument(m, 1) == "nil"
    });
    // Counted from the last motion reel was told of before it.
    let last_motion = sway
        .messages()
        .into_iter()
        .rev()
        .find(|m| {
            m.event
                && m.at_ms < hidden.at_ms
                && m.text.starts_with("wl_pointer#")
                && (m.text.contains(".motion(") || m.text.contains(".enter("))
        })
        .expect("pointer events before the hide");
    let still = hidden.at_ms - last_motion.at_ms;
    assert!(
        (1000.0..2000.0).contains(&still),
        "hidden {still} ms after the last motion ({} then {})",
        shown.text,
        hidden.text
    );

    // Motion shows it again; going fullscreen hides it and drops the decorations.
    mouse.move_to(330, 250);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while set_cursors(&sway)
        .iter()
        .filter(|m| argument(m, 1) != "nil")
        .count()
        < 2
    {
        assert!(
            std::time::Instant::now() < deadline,
            "cursor not shown again on motion"
        );
        sleep(Duration::from_millis(20));
    }
    assert_eq!(reel.command("fullscreen on"), "ok");
    sway.wait_for("no decorations in fullscreen", |m| {
        !m.event
            && m.text.starts_with("zxdg_toplevel_decoration_v1#")
            && m.text.ends_with(".set_mode(1)")
    });
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while set_cursors(&sway)
        .iter()
        .filter(|m| argument(m, 1) == "nil")
        .count()
        < 2
    {
        assert!(
            std::time::Instant::now() < deadline,
            "cursor not hidden in fullscreen"
        );
        sleep(Duration::from_millis(20));
    }
    assert!(reel.quit().success(), "{}", reel.log());
}
