//! Subtitles: a stream read whole (`events`: embedded tracks and
//! subtitle files through libavformat and libavcodec, every text format as
//! ASS events, bitmap formats as pictures), drawn by libass (`libass`) or
//! scaled from their pictures (`pictures`) into an overlay picture
//! (`compose`) that the display shows on a subsurface of its own, above
//! the video, which keeps its decoder's buffers.

pub mod compose;
pub mod events;
pub mod libass;
pub mod pictures;

use std::path::{Path, PathBuf};

use tracing::info;

use crate::osd::OverlayImage;
pub use events::{Event, SubtitleError, SubtitleStream};
use libass::{Ass, AssError};
use pictures::PictureCue;

/// Subtitle files looked for beside a video, as mpv's `--sub-auto=exact`.
pub const SIDECAR_EXTENSIONS: [&str; 6] = ["srt", "ass", "ssa", "vtt", "sup", "idx"];

/// The subtitle files named as `video` is, beside it (`film.srt` for
/// `film.mkv`), in `SIDECAR_EXTENSIONS` order.
pub fn sidecars(video: &Path) -> Vec<PathBuf> {
    SIDECAR_EXTENSIONS
        .iter()
        .map(|ext| video.with_extension(ext))
        .filter(|candidate| candidate != video && candidate.is_file())
        .collect()
}

/// One subtitle stream ready to draw.
pub struct Subtitles {
    kind: Kind,
    /// The last picture drawn was empty.
    blank: bool,
    /// The picture size last drawn for.
    size: (u32, u32, u32),
    /// The time last drawn for: the same time again (a wake-up without a
    /// new frame) is not rendered again.
    drawn_at: Option<i64>,
}

enum Kind {
    /// Text formats, drawn by libass.
    Text { ass: Ass, events: Vec<Event> },
    /// Bitmap formats: cues in time order, not overlapping.
    Pictures {
        cues: Vec<PictureCue>,
        canvas: Option<(u32, u32)>,
        /// The cue last drawn.
        drawn: Option<usize>,
    },
}

impl Subtitles {
    pub fn new(stream: SubtitleStream) -> Result<Self, AssError> {
        info!(
            codec = %stream.codec,
            events = stream.events.len(),
            pictures = stream.pictures.len(),
            canvas = ?stream.canvas,
            damaged = stream.damaged,
            "subtitles ready"
        );
        let kind = if stream.events.is_empty() && !stream.pictures.is_empty() {
            Kind::Pictures {
                cues: stream.pictures,
                canvas: stream.canvas,
                drawn: None,
            }
        } else {
            let mut ass = Ass::new()?;
            ass.set_header(&stream.header);
            for event in &stream.events {
                ass.add_event(&event.line, event.start_ms, event.duration_ms);
            }
            Kind::Text {
                ass,
                events: stream.events,
            }
        };
        Ok(Self {
            kind,
            blank: true,
            size: (0, 0, 0),
            drawn_at: None,
        })
    }

    /// The text shown at `ms`, as mpv's `sub-text`: each event's text with
    /// its override tags left out, events on lines of their own.
    /// Pictures have none.
    pub fn text_at(&self, ms: i64) -> String {
        let Kind::Text { events, .. } = &self.kind else {
            return String::new();
        };
        let mut texts: Vec<(&str, String)> = events
            .iter()
            .filter(|e| e.start_ms <= ms && ms < e.start_ms.saturating_add(e.duration_ms))
            .map(|e| (e.line.as_str(), plain_text(&e.line)))
            .collect();
        // Events in their read order, as the file has them.
        texts.sort_by_key(|(line, _)| read_order(line));
        texts
            .into_iter()
            .map(|(_, text)| text)
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The picture at `ms` for a `width` x `height` surface at `scale`
    /// (buffer pixels), the video `video` pixels large: None when it is
    /// the same as the last one drawn, Some(None) when nothing shows.
    pub fn draw(
        &mut self,
        ms: i64,
        (width, height, scale): (u32, u32, u32),
        video: (u32, u32),
    ) -> Option<Option<OverlayImage>> {
        let resized = self.size != (width, height, scale);
        if !resized && self.drawn_at == Some(ms) {
            return None;
        }
        self.size = (width, height, scale);
        self.drawn_at = Some(ms);
        let mut image: Option<OverlayImage> = None;
        let changed = match &mut self.kind {
            Kind::Text { ass, .. } => {
                ass.set_frame(width, height, video);
                ass.render(ms, |glyphs| {
                    let image = image.get_or_insert_with(|| compose::blank(width, height, scale));
                    compose::blend(image, glyphs);
                })
            }
            Kind::Pictures {
                cues,
                canvas,
                drawn,
            } => {
                let current = cue_at(cues, ms);
                if current == *drawn && !resized {
                    return None;
                }
                if let Some(cue) = current.and_then(|i| cues.get(i)) {
                    let mut picture = compose::blank(width, height, scale);
                    let area = pictures::video_area((width, height), video);
                    pictures::draw(&mut picture, cue, canvas.unwrap_or(video), area);
                    image = Some(picture);
                }
                std::mem::replace(drawn, current) != current
            }
        };
        let blank = image.as_ref().is_none_or(compose::is_blank);
        if !changed && !resized && blank == self.blank {
            return None;
        }
        self.blank = blank;
        Some(image.filter(|_| !blank))
    }

    /// Draw again at the next `draw` (the overlay was hidden meanwhile).
    pub fn forget_drawn(&mut self) {
        self.size = (0, 0, 0);
        self.drawn_at = None;
    }
}

/// The cue of `cues` (in time order, not overlapping) showing at `ms`.
fn cue_at(cues: &[PictureCue], ms: i64) -> Option<usize> {
    let index = cues
        .partition_point(|cue| cue.start_ms <= ms)
        .checked_sub(1)?;
    let cue = &cues[index];
    (ms < cue.start_ms.saturating_add(cue.duration_ms)).then_some(index)
}

/// The text of an ASS event line (`ReadOrder,Layer,Style,Name,MarginL,
/// MarginR,MarginV,Effect,Text`): `{...}` override blocks left out, `\N`
/// and `\n` as new lines, `\h` as a space.
pub fn plain_text(line: &str) -> String {
    let text = line.splitn(9, ',').nth(8).unwrap_or("");
    let mut out = String::with_capacity(text.len());
    let mut in_override = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' => in_override = true,
            '}' if in_override => in_override = false,
            _ if in_override => {}
            '\\' => match chars.peek() {
                Some('N') | Some('n') => {
                    chars.next();
                    out.push('\n');
                }
                Some('h') => {
                    chars.next();
                    out.push(' ');
                }
                _ => out.push(c),
            },
            _ => out.push(c),
        }
    }
    out
}

fn read_order(line: &str) -> i64 {
    line.split(',')
        .next()
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_leaves_override_tags_out() {
        assert_eq!(
            plain_text("0,0,Default,,0,0,0,,{\\i1}Hello{\\i0}\\Nworld, again"),
            "Hello\nworld, again"
        );
        assert_eq!(plain_text("3,0,Default,,0,0,0,,a\\hb"), "a b");
        assert_eq!(plain_text("not an event"), "");
    }

    #[test]
    fn a_cue_shows_from_its_start_until_its_end() {
        let stream = SubtitleStream {
            header: Vec::new(),
            events: vec![
                Event {
                    line: "1,0,Default,,0,0,0,,second".into(),
                    start_ms: 1000,
                    duration_ms: 500,
                },
                Event {
                    line: "0,0,Default,,0,0,0,,first".into(),
                    start_ms: 1200,
                    duration_ms: 1000,
                },
            ],
            codec: "subrip".into(),
            ..SubtitleStream::default()
        };
        let subtitles = Subtitles::new(stream).expect("libass");
        assert_eq!(subtitles.text_at(999), "");
        assert_eq!(subtitles.text_at(1000), "second");
        assert_eq!(subtitles.text_at(1300), "first\nsecond");
        assert_eq!(subtitles.text_at(1500), "first");
        assert_eq!(subtitles.text_at(2200), "");
    }

    #[test]
    fn a_picture_cue_is_drawn_scaled_on_its_frames_only() {
        // A 2x2 white picture at (2, 2) of a 4x4 canvas, 1.0-2.0 s.
        let white = pictures::Picture::new(2, 2, 2, &[1; 4], &[0, 0xffff_ffff]).expect("picture");
        let stream = SubtitleStream {
            pictures: vec![PictureCue {
                start_ms: 1000,
                duration_ms: 1000,
                pictures: vec![white],
            }],
            canvas: Some((4, 4)),
            codec: "hdmv_pgs_subtitle".into(),
            ..SubtitleStream::default()
        };
        let mut subtitles = Subtitles::new(stream).expect("pictures");
        // An 8x8 overlay for a 4x4 video: the picture covers 4..8 x 4..8.
        let size = (8, 8, 1);
        assert_eq!(subtitles.draw(500, size, (4, 4)), Some(None));
        let image = subtitles
            .draw(1000, size, (4, 4))
            .flatten()
            .expect("a picture");
        let alpha = |x: usize, y: usize| image.pixels[(y * 8 + x) * 4 + 3];
        assert_eq!((alpha(5, 5), alpha(6, 6), alpha(2, 5)), (255, 255, 0));
        assert_eq!(subtitles.text_at(1500), "");
        // The same cue again: nothing new to draw; after it, cleared.
        assert_eq!(subtitles.draw(1500, size, (4, 4)), None);
        assert_eq!(subtitles.draw(2000, size, (4, 4)), Some(None));
    }
}
