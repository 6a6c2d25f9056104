//! Window content size: the video's display aspect ratio kept inside
//! whatever size the compositor asks for.

/// The size a picture is meant to be seen at: its pixel size with the sample
/// aspect ratio applied to the width. Never zero.
pub fn display_size(width: u32, height: u32, sample_aspect: (u32, u32)) -> (u32, u32) {
    let (num, den) = match sample_aspect {
        (0, _) | (_, 0) => (1, 1),
        sar => sar,
    };
    let w = (u64::from(width) * u64::from(num) + u64::from(den) / 2) / u64::from(den);
    (clamp_dim(w), height.max(1))
}

/// The largest `content`-shaped rectangle that fits in `bounds`, rounded to
/// whole pixels. Never zero in either direction.
pub fn fit(content: (u32, u32), bounds: (u32, u32)) -> (u32, u32) {
    let (cw, ch) = (u64::from(content.0.max(1)), u64::from(content.1.max(1)));
    let (bw, bh) = (u64::from(bounds.0.max(1)), u64::from(bounds.1.max(1)));
    // Width-limited when cw/ch >= bw/bh, compared without division.
    if cw * bh >= bw * ch {
        (clamp_dim(bw), clamp_dim((ch * bw + cw / 2) / cw))
    } else {
        (clamp_dim((cw * bh + ch / 2) / ch), clamp_dim(bh))
    }
}

fn clamp_dim(v: u64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX).max(1)
}

/// The surface size for a picture: fitted into the compositor's size when
/// it sets one, else the picture's display size.
pub fn surface_size(display: (u32, u32), configured: Option<(u32, u32)>) -> (u32, u32) {
    match configured {
        Some(bounds) => fit(display, bounds),
        None => display,
    }
}

/// A size for the protocol's `int` arguments (sizes beyond `i32::MAX`
/// are clamped, never wrapped).
pub(super) fn clamp_i32(v: u32) -> i32 {
    i32::try_from(v).unwrap_or(i32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anamorphic_sample_aspect_widens() {
        // DVD PAL 16:9: 720x576 with SAR 64:45 is shown at 1024x576.
        assert_eq!(display_size(720, 576, (64, 45)), (1024, 576));
        assert_eq!(display_size(320, 240, (1, 1)), (320, 240));
        assert_eq!(display_size(320, 240, (0, 1)), (320, 240));
    }

    #[test]
    fn wide_content_is_letterboxed() {
        assert_eq!(fit((1920, 1080), (640, 480)), (640, 360));
    }

    #[test]
    fn tall_content_is_pillarboxed() {
        assert_eq!(fit((480, 640), (640, 480)), (360, 480));
    }

    #[test]
    fn same_aspect_fills_exactly() {
        assert_eq!(fit((320, 240), (1024, 768)), (1024, 768));
    }

    #[test]
    fn degenerate_sizes_stay_positive() {
        assert_eq!(fit((1, 10000), (100, 100)), (1, 100));
        assert_eq!(fit((0, 0), (0, 0)), (1, 1));
    }

    #[test]
    fn configured_size_only_when_given() {
        assert_eq!(surface_size((320, 180), None), (320, 180));
        assert_eq!(surface_size((320, 180), Some((800, 800))), (800, 450));
    }
}
