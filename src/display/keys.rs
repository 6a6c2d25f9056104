//! Keyboard: the keys the player understands, from xkb keysyms.

use smithay_client_toolkit::seat::keyboard::Keysym;

/// A key press the player may act on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Key {
    Space,
    Left,
    Right,
    Up,
    Down,
    Escape,
    PageUp,
    PageDown,
    Backspace,
    /// Any key that produces a character ('q', 'f', '.', ',' ...).
    Char(char),
}

/// Maps a pressed keysym; `text` is what xkb composed for it, if anything.
pub fn map_keysym(keysym: Keysym, text: Option<&str>) -> Option<Key> {
    let named = match keysym {
        Keysym::space => Some(Key::Space),
        Keysym::Left | Keysym::KP_Left => Some(Key::Left),
        Keysym::Right | Keysym::KP_Right => Some(Key::Right),
        Keysym::Up | Keysym::KP_Up => Some(Key::Up),
        Keysym::Down | Keysym::KP_Down => Some(Key::Down),
        Keysym::Escape => Some(Key::Escape),
        Keysym::Page_Up | Keysym::KP_Page_Up => Some(Key::PageUp),
        Keysym::Page_Down | Keysym::KP_Page_Down => Some(Key::PageDown),
        Keysym::BackSpace => Some(Key::Backspace),
        _ => None,
    };
    if named.is_some() {
        return named;
    }
    let from_text = text.and_then(|t| {
        let mut chars = t.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) if !c.is_control() => Some(c),
            _ => None,
        }
    });
    from_text
        .or_else(|| keysym.key_char().filter(|c| !c.is_control()))
        .map(Key::Char)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_keys() {
        assert_eq!(map_keysym(Keysym::space, Some(" ")), Some(Key::Space));
        assert_eq!(map_keysym(Keysym::Left, None), Some(Key::Left));
        assert_eq!(map_keysym(Keysym::Page_Down, None), Some(Key::PageDown));
        assert_eq!(
            map_keysym(Keysym::Escape, Some("\u{1b}")),
            Some(Key::Escape)
        );
    }

    #[test]
    fn characters() {
        assert_eq!(map_keysym(Keysym::q, Some("q")), Some(Key::Char('q')));
        assert_eq!(map_keysym(Keysym::period, None), Some(Key::Char('.')));
        assert_eq!(map_keysym(Keysym::comma, Some(",")), Some(Key::Char(',')));
        assert_eq!(map_keysym(Keysym::F, Some("F")), Some(Key::Char('F')));
    }

    #[test]
    fn modifiers_alone_are_ignored() {
        assert_eq!(map_keysym(Keysym::Shift_L, None), None);
        assert_eq!(map_keysym(Keysym::Control_L, None), None);
    }
}
