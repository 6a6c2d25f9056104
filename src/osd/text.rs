//! What the OSD says, from facts the player gathers. While playing, the
//! text changes at most once a second (whole seconds, no frame number), so
//! the overlay is not redrawn every frame; paused or stepping, it is exact
//! to the frame.

use std::time::Duration;

/// Where playback stands.
#[derive(Clone, Debug, PartialEq)]
pub struct Playback {
    /// From the stream's start.
    pub position: Duration,
    pub duration: Option<Duration>,
    pub paused: bool,
    pub frame_rate: Option<f64>,
    /// The frame's own timestamp (not counted from the stream's start).
    pub pts: Option<Duration>,
    pub file_name: String,
    /// 1-based.
    pub index: usize,
    pub count: usize,
}

/// What the stats page shows besides [`Playback`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stats {
    /// The decoder: V4L2 node, driver and mode, or libavcodec's.
    pub decoder: String,
    /// Codec, profile, level, pixel layout.
    pub codec: String,
    pub visible: Option<(u32, u32)>,
    pub coded: Option<(u32, u32)>,
    /// How frames reach the screen: the decoder's buffer format and
    /// modifier, zero-copy or copied and why.
    pub path: String,
    /// The negotiation's outcome (format chosen and the tranche it came
    /// from), when frames go through it.
    pub negotiated: Option<String>,
    pub presented: u64,
    pub dropped: u64,
    pub decode_errors: u64,
    /// Mean time between frames presented over the last second.
    pub frame_time: Option<Duration>,
    /// Mean and largest distance between the frame shown and the sound
    /// heard, while sound plays.
    pub av_offset: Option<(Duration, Duration)>,
}

/// `HH:MM:SS`.
pub fn clock(d: Duration) -> String {
    let s = d.as_secs();
    format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// `HH:MM:SS.mmm`.
pub fn clock_ms(d: Duration) -> String {
    format!("{}.{:03}", clock(d), d.subsec_millis())
}

/// The frame's number in display order, counted from 0 at the stream's
/// start (mpv's `estimated-frame-number`).
pub fn frame_number(position: Duration, frame_rate: Option<f64>) -> Option<u64> {
    let rate = frame_rate.filter(|r| r.is_finite() && *r > 0.0)?;
    Some((position.as_secs_f64() * rate).round() as u64)
}

/// Position / duration (and how far, in whole percent), and `paused`.
/// Playing, it counts whole seconds.
pub fn status_line(p: &Playback) -> String {
    let (position, duration) = if p.paused {
        (clock_ms(p.position), p.duration.map(clock_ms))
    } else {
        let whole = Duration::from_secs(p.position.as_secs());
        (clock(whole), p.duration.map(clock))
    };
    let mut line = position;
    if let Some(duration) = duration {
        line.push_str(" / ");
        line.push_str(&duration);
    }
    if let Some(total) = p.duration.filter(|d| !d.is_zero()) {
        let at = if p.paused {
            p.position
        } else {
            Duration::from_secs(p.position.as_secs())
        };
        let percent = (at.as_secs_f64() / total.as_secs_f64() * 100.0).clamp(0.0, 100.0);
        line.push_str(&format!(" ({percent:.0}%)"));
    }
    if p.paused {
        line.push_str(" paused");
    }
    line
}

/// The playlist entry.
pub fn file_line(p: &Playback) -> String {
    format!("file {}/{} {}", p.index, p.count, p.file_name)
}

/// Shown for a moment after a seek, pause or step (level 1); a file change
/// names the file too.
pub fn event_lines(p: &Playback, file_changed: bool) -> Vec<String> {
    let mut lines = Vec::new();
    if file_changed {
        lines.push(file_line(p));
    }
    lines.push(status_line(p));
    lines
}

/// The frame on screen: its number and pts (paused), or the rate (playing).
pub fn frame_line(p: &Playback) -> String {
    if !p.paused {
        return match p.frame_rate {
            Some(rate) => format!("playing at {rate:.3} fps"),
            None => "playing".into(),
        };
    }
    let number = frame_number(p.position, p.frame_rate)
        .map_or_else(|| "frame ?".into(), |n| format!("frame {n}"));
    match p.pts {
        Some(pts) => format!("{number}  pts {:.6}", pts.as_secs_f64()),
        None => number,
    }
}

/// Level 3 (`o`): position, frame, playlist entry.
pub fn status_lines(p: &Playback) -> Vec<String> {
    vec![status_line(p), frame_line(p), file_line(p)]
}

/// The stats page (`i`).
pub fn stats_lines(p: &Playback, s: &Stats) -> Vec<String> {
    let size = |s: Option<(u32, u32)>| s.map_or("?".into(), |(w, h)| format!("{w}x{h}"));
    let mut lines = vec![
        file_line(p),
        status_line(p),
        format!("decoder: {}", s.decoder),
        format!("codec: {}", s.codec),
        format!("size: {} visible, {} coded", size(s.visible), size(s.coded)),
        format!("frames: {}", s.path),
    ];
    if let Some(negotiated) = &s.negotiated {
        lines.push(format!("negotiated: {negotiated}"));
    }
    lines.push(format!(
        "presented {}  dropped {}  decode errors {}",
        s.presented, s.dropped, s.decode_errors
    ));
    if let Some(t) = s.frame_time {
        lines.push(format!("frame time: {:.1} ms", t.as_secs_f64() * 1000.0));
    }
    if let Some((mean, max)) = s.av_offset {
        lines.push(format!(
            "A/V offset: mean {:.1} ms, max {:.1} ms",
            mean.as_secs_f64() * 1000.0,
            max.as_secs_f64() * 1000.0
        ));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: f64, paused: bool) -> Playback {
        Playback {
            position: Duration::from_secs_f64(secs),
            duration: Some(Duration::from_secs(10)),
            paused,
            frame_rate: Some(25.0),
            pts: Some(Duration::from_secs_f64(secs)),
            file_name: "clip.mp4".into(),
            index: 2,
            count: 3,
        }
    }

    #[test]
    fn clocks() {
        assert_eq!(clock(Duration::from_secs(3725)), "01:02:05");
        assert_eq!(clock_ms(Duration::from_millis(2040)), "00:00:02.040");
    }

    #[test]
    fn a_seek_to_two_seconds_at_25_fps_is_frame_50_and_a_step_frame_51() {
        let p = at(2.0, true);
        assert_eq!(
            status_lines(&p),
            [
                "00:00:02.000 / 00:00:10.000 (20%) paused",
                "frame 50  pts 2.000000",
                "file 2/3 clip.mp4",
            ]
        );
        assert_eq!(frame_line(&at(2.04, true)), "frame 51  pts 2.040000");
        assert_eq!(frame_number(Duration::from_millis(40), None), None);
    }

    #[test]
    fn playing_the_text_changes_once_a_second() {
        let frames: Vec<Vec<String>> = (0..50)
            .map(|i| status_lines(&at(2.0 + f64::from(i) * 0.04, false)))
            .collect();
        let mut distinct = frames.clone();
        distinct.dedup();
        assert_eq!(distinct.len(), 2, "{distinct:?}");
        assert_eq!(distinct[0][0], "00:00:02 / 00:00:10 (20%)");
        assert_eq!(distinct[0][1], "playing at 25.000 fps");
    }

    #[test]
    fn events_name_the_file_on_a_change_only() {
        assert_eq!(
            event_lines(&at(0.0, false), false),
            ["00:00:00 / 00:00:10 (0%)"]
        );
        assert_eq!(event_lines(&at(0.0, false), true)[0], "file 2/3 clip.mp4");
        let unknown = Playback {
            duration: None,
            ..at(1.5, false)
        };
        assert_eq!(status_line(&unknown), "00:00:01");
    }

    #[test]
    fn the_stats_page_says_how_frames_reach_the_screen() {
        let stats = Stats {
            decoder: "V4L2 /dev/video0 visl (frame-based)".into(),
            codec: "h264 High, level 4.0, yuv420p".into(),
            visible: Some((1920, 1080)),
            coded: Some((1920, 1088)),
            path: "NV12:LINEAR zero-copy".into(),
            negotiated: Some("NV12:LINEAR (tranche 0)".into()),
            presented: 10,
            dropped: 1,
            decode_errors: 0,
            frame_time: Some(Duration::from_millis(40)),
            av_offset: Some((Duration::from_millis(12), Duration::from_millis(30))),
        };
        let lines = stats_lines(&at(2.0, true), &stats);
        assert!(lines.contains(&"size: 1920x1080 visible, 1920x1088 coded".to_string()));
        assert!(lines.contains(&"frames: NV12:LINEAR zero-copy".to_string()));
        assert!(lines.contains(&"presented 10  dropped 1  decode errors 0".to_string()));
        assert!(lines.contains(&"frame time: 40.0 ms".to_string()));
        assert!(lines.contains(&"A/V offset: mean 12.0 ms, max 30.0 ms".to_string()));
        let without = stats_lines(&at(2.0, true), &Stats::default());
        assert!(!without.iter().any(|l| l.starts_with("negotiated")));
        assert!(!without.iter().any(|l| l.starts_with("A/V")));
    }
}
