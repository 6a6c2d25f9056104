//! A subtitle stream read whole: a file's embedded track, or a subtitle
//! file (`.srt`, `.ass`, `.vtt`, `.sup`) libavformat opens as one. Each
//! packet goes through libavcodec's subtitle decoder, which gives every
//! text format as ASS event lines, with the ASS header it writes for
//! them (an ASS track's own header for ASS), and bitmap formats (PGS,
//! DVB, DVD) as pictures.

use std::path::Path;
use std::time::Duration;

use ffmpeg_next as ff;
use tracing::{debug, warn};

use super::pictures::{self, PictureCue};
use crate::media::{discard_other_streams, MediaError, SourceInput};

/// Events longer than this are cut to it: a cue "10 hours long" from a
/// broken file shows as long as it could be watched, not forever.
const LONGEST_EVENT: Duration = Duration::from_secs(24 * 3600);
/// More events than this in one stream is not a subtitle stream.
const MOST_EVENTS: usize = 1_000_000;

/// One event: an ASS line (`ReadOrder,Layer,Style,Name,...,Text`) and
/// its time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub line: String,
    pub start_ms: i64,
    pub duration_ms: i64,
}

/// A whole subtitle stream.
#[derive(Debug, Default)]
pub struct SubtitleStream {
    /// The ASS header (`[Script Info]`, styles).
    pub header: Vec<u8>,
    pub events: Vec<Event>,
    /// A bitmap format's cues, in time order.
    pub pictures: Vec<PictureCue>,
    /// The plane a bitmap format's pictures are placed on (None: the
    /// video's size).
    pub canvas: Option<(u32, u32)>,
    /// libavcodec's name of its codec (`subrip`, `ass`, `mov_text`).
    pub codec: String,
    /// Packets that did not decode, skipped.
    pub damaged: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum SubtitleError {
    #[error(transparent)]
    Media(#[from] MediaError),
    #[error("{0}: no subtitle stream")]
    NoStream(String),
    #[error("{0}: cannot decode subtitles ({1})")]
    Decoder(String, ff::Error),
}

/// Reads the subtitle stream `stream_index` of `path` (None: its first
/// subtitle stream, as for a subtitle file).
pub fn read(path: &Path, stream_index: Option<usize>) -> Result<SubtitleStream, SubtitleError> {
    let name = path.display().to_string();
    let mut input = SourceInput::open(path)?;
    let stream = input
        .streams()
        .find(|s| match stream_index {
            Some(index) => s.index() == index,
            None => s.parameters().medium() == ff::media::Type::Subtitle,
        })
        .filter(|s| s.parameters().medium() == ff::media::Type::Subtitle)
        .ok_or_else(|| SubtitleError::NoStream(name.clone()))?;
    let index = stream.index();
    let time_base = stream.time_base();
    let codec_id = stream.parameters().id();
    let codec = codec_id.name().to_string();
    let context = ff::codec::context::Context::from_parameters(stream.parameters())
        .map_err(|e| SubtitleError::Decoder(name.clone(), e))?;
    let mut decoder = context
        .decoder()
        .subtitle()
        .map_err(|e| SubtitleError::Decoder(name.clone(), e))?;
    let mut out = SubtitleStream {
        header: header_of(&decoder),
        codec,
        ..SubtitleStream::default()
    };
    // Only this track's packets are read: a film's video is skipped.
    discard_other_streams(&mut input, index);
    for (stream, packet) in input.packets() {
        if stream.index() != index {
            continue;
        }
        let Some(pts) = packet.pts().or(packet.dts()) else {
            continue;
        };
        let mut subtitle = ff::Subtitle::new();
        match decoder.decode(&packet, &mut subtitle) {
            Ok(true) => {}
            Ok(false) => continue,
            Err(e) => {
                out.damaged += 1;
                debug!("{name}: a subtitle packet did not decode: {e}");
                continue;
            }
        }
        let start_ms = millis(pts, time_base) + i64::from(subtitle.start());
        let duration_ms = if packet.duration() > 0 {
            millis(packet.duration(), time_base)
        } else {
            i64::from(subtitle.end().saturating_sub(subtitle.start()))
        };
        if is_bitmap(codec_id) {
            // A bitmap cue's end is often open (PGS: until the next
            // display set): `pictures::timed` settles it.
            out.pictures.push(PictureCue {
                start_ms,
                duration_ms,
                pictures: pictures::from_subtitle(&subtitle),
            });
            if out.pictures.len() > MOST_EVENTS {
                warn!("{name}: more than {MOST_EVENTS} subtitle pictures, the rest are left out");
                break;
            }
            continue;
        }
        let duration_ms = duration_ms.clamp(0, LONGEST_EVENT.as_millis() as i64);
        for rect in subtitle.rects() {
            let ff::subtitle::Rect::Ass(ass) = rect else {
                continue;
            };
            let line = ass.get().trim_end();
            // An empty cue shows nothing: not worth an event.
            if line.is_empty() || duration_ms == 0 {
                continue;
            }
            out.events.push(Event {
                line: line.to_string(),
                start_ms,
                duration_ms,
            });
        }
        if out.events.len() > MOST_EVENTS {
            warn!("{name}: more than {MOST_EVENTS} subtitle events, the rest are left out");
            break;
        }
    }
    out.pictures = pictures::timed(out.pictures, LONGEST_EVENT.as_millis() as i64);
    if is_bitmap(codec_id) {
        out.canvas = canvas_of(&decoder, codec_id);
    }
    Ok(out)
}

/// Text formats libavcodec decodes to ASS; the others are pictures.
fn is_bitmap(codec: ff::codec::Id) -> bool {
    use ff::codec::Id;
    matches!(
        codec,
        Id::HDMV_PGS_SUBTITLE | Id::DVB_SUBTITLE | Id::DVD_SUBTITLE | Id::XSUB
    )
}

/// The plane a bitmap stream's pictures are placed on: the size its
/// decoder read from the stream (PGS's presentation segments, DVD's
/// `size:`, DVB's display definition), DVB's 720x576 when it has none.
fn canvas_of(decoder: &ff::decoder::Subtitle, codec: ff::codec::Id) -> Option<(u32, u32)> {
    // SAFETY: the decoder's context is open and owned by `decoder`;
    // two integers are read.
    let (width, height) = unsafe {
        let context = decoder.as_ptr();
        ((*context).width, (*context).height)
    };
    match (u32::try_from(width), u32::try_from(height)) {
        (Ok(width), Ok(height)) if width > 0 && height > 0 => Some((width, height)),
        _ if codec == ff::codec::Id::DVB_SUBTITLE => Some((720, 576)),
        _ => None,
    }
}

/// The ASS header the decoder wrote (its `subtitle_header`).
fn header_of(decoder: &ff::decoder::Subtitle) -> Vec<u8> {
    // SAFETY: the decoder's context is open and owned by `decoder`;
    // `subtitle_header` is its own buffer of `subtitle_header_size`
    // bytes (or null), read here and copied.
    unsafe {
        let context = decoder.as_ptr();
        let header = (*context).subtitle_header;
        let size = usize::try_from((*context).subtitle_header_size).unwrap_or(0);
        if header.is_null() || size == 0 {
            return Vec::new();
        }
        std::slice::from_raw_parts(header, size).to_vec()
    }
}

fn millis(ts: i64, time_base: ff::Rational) -> i64 {
    let (num, den) = (
        i128::from(time_base.numerator()),
        i128::from(time_base.denominator()),
    );
    if den == 0 {
        return 0;
    }
    (i128::from(ts) * num * 1000 / den).clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_to_milliseconds() {
        assert_eq!(millis(90_000, ff::Rational::new(1, 90_000)), 1000);
        assert_eq!(millis(1500, ff::Rational::new(1, 1000)), 1500);
        assert_eq!(millis(5, ff::Rational::new(1, 0)), 0);
    }
}
