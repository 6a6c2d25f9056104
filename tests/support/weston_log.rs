//! Reading weston's log with its `proto` debug scope on.

use std::collections::HashMap;

use super::reel_output;

/// The protocol errors weston sent to any client
/// (`... ev wl_display@1.error(object, code, "message")`).
pub fn protocol_errors(log: &str) -> Vec<&str> {
    log.lines()
        .filter(|l| l.contains("[proto]") && l.contains(" ev wl_display@1.error("))
        .collect()
}

/// The dmabuf imports in a weston log: the planes added to
/// zwp_linux_buffer_params_v1 objects.
pub fn dmabuf_plane_adds(log: &str) -> usize {
    log.lines()
        .filter(|l| l.contains("rq zwp_linux_buffer_params_v1") && l.contains(".add("))
        .count()
}

/// Playback `play` in weston was zero-copy throughout: reel's `--stats`
/// line counts every presented frame as zero-copy and none as copied, its
/// log says the negotiation chose zero-copy, and weston's protocol log
/// (the proto scope on) shows reel's dmabuf imports and no protocol error.
#[track_caller]
pub fn assert_zero_copy_playback(
    play: &str,
    stats: &HashMap<String, u64>,
    reel_log: &str,
    weston_log: &str,
) {
    let presented = reel_output::number(stats, "presented");
    assert!(presented > 0, "{play}: nothing presented: {stats:?}");
    assert_eq!(
        reel_output::number(stats, "zero_copy_frames"),
        presented,
        "{play}: {stats:?}"
    );
    assert_eq!(
        reel_output::number(stats, "copy_frames"),
        0,
        "{play}: {stats:?}"
    );
    assert!(
        reel_log.contains("dmabuf negotiation: zero-copy: V4L2"),
        "{play}: no zero-copy negotiation in reel's log"
    );
    assert!(
        dmabuf_plane_adds(weston_log) > 0,
        "{play}: no dmabuf import in weston's log:\n{weston_log}"
    );
    let errors = protocol_errors(weston_log);
    assert!(errors.is_empty(), "{play}: protocol errors: {errors:#?}");
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

/// The protocol lines of client `pid` in a weston log, as
/// `("rq" | "ev", "interface@id.message(args)")`.
pub fn client_protocol(log: &str, pid: &str) -> Vec<(String, String)> {
    let marker = format!("(PID {}) ", pid.trim());
    log.lines()
        .filter(|l| l.contains("[proto]"))
        .filter_map(|l| {
            let rest = &l[l.find(&marker)? + marker.len()..];
            let (dir, msg) = rest.split_once(' ')?;
            Some((dir.to_owned(), msg.to_owned()))
        })
        .collect()
}

/// What a client's OSD subsurface and the surface under it (the video)
/// were given to show, from its protocol lines.
#[derive(Debug, Default)]
pub struct OsdBuffers {
    /// Attaches of wl_shm ARGB8888 buffers to the overlay subsurfaces (the
    /// OSD's, the subtitles').
    pub osd_shm: usize,
    /// Attaches of linux-dmabuf buffers to the video surface.
    pub video_dmabuf: usize,
    /// Any other attach to any of them (a null attach hides an overlay and
    /// is not counted).
    pub other: Vec<String>,
}

impl OsdBuffers {
    /// Panics if the client made no subsurface.
    pub fn of(protocol: &[(String, String)]) -> OsdBuffers {
        // Each get_subsurface(overlay, video): the video surface is the
        // parent of them all.
        let pairs: Vec<(String, String)> = protocol
            .iter()
            .filter_map(|(_, m)| {
                let args = m.split_once(".get_subsurface(")?.1;
                let ids: Vec<&str> = args
                    .trim_end_matches(')')
                    .split(", ")
                    .filter_map(|a| a.strip_prefix("wl_surface@"))
                    .collect();
                Some((ids.first()?.to_string(), ids.get(1)?.to_string()))
            })
            .collect();
        let video = pairs
            .first()
            .map(|(_, video)| video.clone())
            .expect("no wl_subsurface in weston's protocol log");
        let overlays: std::collections::HashSet<String> =
            pairs.into_iter().map(|(overlay, _)| overlay).collect();
        // Ids are reused once destroyed: what each id is now.
        let mut shm_argb = std::collections::HashSet::new();
        let mut dmabuf = std::collections::HashSet::new();
        let mut seen = OsdBuffers::default();
        for (_, m) in protocol {
            if let Some((_, args)) = m.split_once(".create_buffer(new id wl_buffer@") {
                let fields: Vec<&str> = args.trim_end_matches(')').split(", ").collect();
                let id = fields[0].to_string();
                dmabuf.remove(&id);
                if fields.last() == Some(&"0") {
                    shm_argb.insert(id);
                } else {
                    shm_argb.remove(&id);
                }
            }
            if let Some((_, id)) = m.split_once(".created(new id wl_buffer@") {
                let id = id.trim_end_matches(')').to_string();
                shm_argb.remove(&id);
                dmabuf.insert(id);
            }
            let Some((surface, args)) = m
                .strip_prefix("wl_surface@")
                .and_then(|m| m.split_once(".attach("))
            else {
                continue;
            };
            let Some(buffer) = args.strip_prefix("wl_buffer@") else {
                continue; // nil: the OSD hidden
            };
            let buffer = buffer.split(',').next().unwrap_or_default();
            let overlay = overlays.contains(surface);
            if overlay && shm_argb.contains(buffer) {
                seen.osd_shm += 1;
            } else if surface == video && dmabuf.contains(buffer) {
                seen.video_dmabuf += 1;
            } else if overlay || surface == video {
                seen.other.push(m.clone());
            }
        }
        seen
    }
}
