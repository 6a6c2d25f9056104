//! `--video-crop WxH+X+Y`: one rectangle of the picture shown, in the
//! video's pixels (mpv's `video-crop`), as a tile of a video wall shows its
//! part of a larger video. Applied with the viewport's source rectangle,
//! so the decoder's buffer is still presented as it is.

use std::fmt;
use std::str::FromStr;

/// A rectangle of a picture, in its pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rect {
    pub x: u32,
    pub y: u32,
    pub width: u32,
    pub height: u32,
}

impl Rect {
    /// The part of `self` inside a `width` x `height` picture; None when
    /// nothing of it is.
    pub fn within(self, width: u32, height: u32) -> Option<Rect> {
        let right = self.x.saturating_add(self.width).min(width);
        let bottom = self.y.saturating_add(self.height).min(height);
        (self.x < right && self.y < bottom).then(|| Rect {
            x: self.x,
            y: self.y,
            width: right - self.x,
            height: bottom - self.y,
        })
    }
}

impl fmt::Display for Rect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}+{}+{}", self.width, self.height, self.x, self.y)
    }
}

impl FromStr for Rect {
    type Err = String;

    /// `WxH+X+Y`, or `WxH` for the rectangle at the top left.
    fn from_str(text: &str) -> Result<Self, String> {
        let wrong = || format!("{text:?} is not WxH+X+Y (e.g. 960x540+960+0)");
        let (size, offset) = match text.split_once('+') {
            Some((size, offset)) => (size, Some(offset)),
            None => (text, None),
        };
        let (width, height) = size.split_once('x').ok_or_else(wrong)?;
        let (x, y) = match offset {
            Some(offset) => offset.split_once('+').ok_or_else(wrong)?,
            None => ("0", "0"),
        };
        let number = |s: &str| s.trim().parse::<u32>().map_err(|_| wrong());
        let rect = Rect {
            x: number(x)?,
            y: number(y)?,
            width: number(width)?,
            height: number(height)?,
        };
        if rect.width == 0 || rect.height == 0 {
            return Err(format!("{text:?}: the rectangle is empty"));
        }
        Ok(rect)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_mpv_spelling() {
        assert_eq!(
            "960x540+960+0".parse(),
            Ok(Rect {
                x: 960,
                y: 0,
                width: 960,
                height: 540
            })
        );
        assert_eq!(
            "320x240".parse::<Rect>().map(|r| (r.x, r.y, r.width)),
            Ok((0, 0, 320))
        );
        for bad in [
            "",
            "960",
            "960x",
            "x540",
            "960x540+1",
            "0x540+0+0",
            "-1x2+0+0",
            "axb+0+0",
        ] {
            assert!(bad.parse::<Rect>().is_err(), "{bad:?} parsed");
        }
    }

    #[test]
    fn a_crop_is_cut_to_the_picture() {
        let tile = |x, y, width, height| Rect {
            x,
            y,
            width,
            height,
        };
        assert_eq!(
            tile(960, 540, 960, 540).within(1920, 1080),
            Some(tile(960, 540, 960, 540))
        );
        // Past the edge: what is inside.
        assert_eq!(
            tile(1600, 0, 960, 540).within(1920, 1080),
            Some(tile(1600, 0, 320, 540))
        );
        // Outside (a smaller file in the playlist): nothing.
        assert_eq!(tile(1920, 0, 960, 540).within(1280, 720), None);
        assert_eq!(tile(u32::MAX, 0, 10, 10).within(1920, 1080), None);
    }
}
