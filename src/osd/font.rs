//! The OSD's font: DejaVu Sans Mono (Bold where installed), found where
//! distributions install it. Monospace keeps columns of numbers still as
//! they change. Debian's `fonts-dejavu-core` has it; the package depends
//! on it.

use std::path::{Path, PathBuf};

/// Where DejaVu Sans Mono lives on Debian/Ubuntu, Fedora, Arch and
/// openSUSE, best first.
const CANDIDATES: &[&str] = &[
    "/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf",
    "/usr/share/fonts/dejavu-sans-mono-fonts/DejaVuSansMono-Bold.ttf",
    "/usr/share/fonts/TTF/DejaVuSansMono-Bold.ttf",
    "/usr/share/fonts/truetype/DejaVuSansMono-Bold.ttf",
    "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf",
    "/usr/share/fonts/dejavu-sans-mono-fonts/DejaVuSansMono.ttf",
    "/usr/share/fonts/TTF/DejaVuSansMono.ttf",
    "/usr/share/fonts/truetype/DejaVuSansMono.ttf",
];

/// The first candidate that exists, under `root` (`/` but in tests).
pub fn locate_under(root: &Path) -> Option<PathBuf> {
    CANDIDATES
        .iter()
        .map(|c| root.join(c.trim_start_matches('/')))
        .find(|p| p.is_file())
}

/// The font file the OSD uses, if the system has one.
pub fn locate() -> Option<PathBuf> {
    locate_under(Path::new("/"))
}

/// What was looked for, for the warning when nothing was found.
pub fn searched() -> String {
    CANDIDATES.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bold_face_is_preferred_and_others_are_found() {
        let root = std::env::temp_dir().join(format!("reel-font-{}", std::process::id()));
        let regular = root.join("usr/share/fonts/TTF/DejaVuSansMono.ttf");
        std::fs::create_dir_all(regular.parent().unwrap()).unwrap();
        assert_eq!(locate_under(&root), None);
        std::fs::write(&regular, b"x").unwrap();
        assert_eq!(locate_under(&root), Some(regular.clone()));
        let bold = root.join("usr/share/fonts/TTF/DejaVuSansMono-Bold.ttf");
        std::fs::write(&bold, b"x").unwrap();
        assert_eq!(locate_under(&root), Some(bold));
        std::fs::remove_dir_all(&root).unwrap();
    }
}
