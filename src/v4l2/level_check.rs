//! A stream's level against the highest one a driver's level menu offers
//! (`V4L2_CID_MPEG_VIDEO_H264_LEVEL`, `_AV1_LEVEL`, ...). A level bounds bit
//! rate, throughput and buffer sizes, not what the hardware can decode: the
//! frame sizes a driver enumerates bound that, and discovery checks them. So
//! a stream above the menu is still tried, with one warning naming both
//! levels; a decoder that then fails hands over as any failing one does.

use tracing::warn;

use super::discovery::MenuControl;

/// The check for one session: the menu's highest level, and whether the
/// warning was given.
#[derive(Debug, Clone, Default)]
pub struct LevelCheck {
    /// (menu value, the driver's name for it) of the highest offered level.
    highest: Option<(u32, String)>,
    warned: bool,
}

impl LevelCheck {
    /// `menu`: the driver's level menu, if it has one (none: every level
    /// passes).
    pub fn new(menu: Option<&MenuControl>) -> Self {
        let highest = menu.and_then(|m| m.items.iter().max_by_key(|(value, _)| *value).cloned());
        Self {
            highest,
            warned: false,
        }
    }

    /// Checks a stream at menu value `level` (`None`: a level the menu
    /// cannot name, such as AV1's "no constraints"), called `name()` in the
    /// warning (made only then: codecs check every frame); warns once per
    /// session. True when it is above the driver's.
    pub fn check(
        &mut self,
        codec: &str,
        level: Option<u32>,
        name: impl FnOnce() -> String,
    ) -> bool {
        let Some((highest, highest_name)) = &self.highest else {
            return false;
        };
        let above = level.is_some_and(|l| l > *highest);
        if above && !self.warned {
            let name = name();
            warn!(
                "{codec} stream of level {name} is above the driver's highest, {highest_name}: \
                 decoding is tried, and may fail or fall behind"
            );
            self.warned = true;
        }
        above
    }

    pub fn warned(&self) -> bool {
        self.warned
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn menu(items: &[(u32, &str)]) -> MenuControl {
        MenuControl {
            id: 1,
            minimum: 0,
            maximum: items.iter().map(|(v, _)| *v as i32).max().unwrap_or(0),
            default: 0,
            items: items.iter().map(|(v, n)| (*v, n.to_string())).collect(),
        }
    }

    #[test]
    fn a_level_above_the_menu_is_warned_once() {
        let menu = menu(&[(0, "2.0"), (1, "2.1")]);
        let mut check = LevelCheck::new(Some(&menu));
        assert!(!check.check("AV1", Some(1), || "2.1".into()));
        assert!(!check.warned());
        assert!(check.check("AV1", Some(4), || "3.0".into()));
        assert!(check.warned());
        // Still above, not warned again (the flag stays set).
        assert!(check.check("AV1", Some(5), || "3.1".into()));
    }

    #[test]
    fn no_menu_or_an_unnamed_level_passes() {
        let mut check = LevelCheck::new(None);
        assert!(!check.check("H.264", Some(19), || "6.2".into()));
        let menu = menu(&[(0, "1"), (1, "1b")]);
        let mut check = LevelCheck::new(Some(&menu));
        assert!(!check.check("AV1", None, || "unconstrained".into()));
        assert!(!check.warned());
    }

    #[test]
    fn skipped_items_do_not_count() {
        // A driver offering 2.0 and 3.0 only: 3.0 is its highest.
        let menu = menu(&[(0, "2.0"), (4, "3.0")]);
        let mut check = LevelCheck::new(Some(&menu));
        assert!(!check.check("AV1", Some(4), || "3.0".into()));
        assert!(check.check("AV1", Some(5), || "3.1".into()));
    }
}
