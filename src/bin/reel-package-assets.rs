//! Writes reel's man page (clap_mangen) and its bash, zsh and fish
//! completions (clap_complete) from the command line's definition, for the
//! Debian package (debian/rules runs it; packaging/README.md):
//!
//!   cargo run --bin reel-package-assets -- DIR
//!
//! DIR gets reel.1, reel-probe.1, reel-check.1, reel.bash, _reel and reel.fish.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::CommandFactory;
use clap_complete::Shell;
use clap_mangen::roff::{bold, roman, Roff};
use reel::cli::Cli;
use reel::exit::Exit;

fn main() -> ExitCode {
    let Some(dir) = std::env::args_os().nth(1).map(PathBuf::from) else {
        eprintln!("usage: reel-package-assets DIR");
        return Exit::Usage.code();
    };
    match write_assets(&dir) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("reel-package-assets: {}: {e}", dir.display());
            Exit::Failed.code()
        }
    }
}

fn write_assets(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut command = Cli::command();
    // The pages: reel(1), and reel-probe(1) and reel-check(1), which
    // reel(1) refers to (not `reel help`, which says what --help says).
    let mut pages = Cli::command().disable_help_subcommand(true);
    pages.build();
    let mut page = BufWriter::new(File::create(dir.join("reel.1"))?);
    clap_mangen::Man::new(pages.clone()).render(&mut page)?;
    page.write_all(extra_sections().as_bytes())?;
    page.flush()?;
    for sub in pages.get_subcommands() {
        // Built, a subcommand is displayed as reel-NAME.
        let name = sub.get_display_name().unwrap_or(sub.get_name());
        let mut page = BufWriter::new(File::create(dir.join(format!("{name}.1")))?);
        clap_mangen::Man::new(sub.clone()).render(&mut page)?;
        page.flush()?;
    }
    for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
        clap_complete::generate_to(shell, &mut command, "reel", dir)?;
    }
    Ok(())
}

/// What the clap definition does not hold: exit statuses, files,
/// environment.
fn extra_sections() -> String {
    let mut roff = Roff::new();
    roff.control("SH", ["EXIT STATUS"]);
    for exit in Exit::ALL {
        roff.control("TP", []);
        roff.text([bold((exit as u8).to_string())]);
        roff.text([roman(exit.meaning())]);
    }
    roff.control("SH", ["FILES"]);
    for (file, what) in [
        (
            "$XDG_CONFIG_HOME/reel/reel.conf",
            "The user's options (default ~/.config/reel/reel.conf): \
             option=value lines with the long option names, # comments. \
             The command line overrides them; --no-config skips the files.",
        ),
        (
            "/etc/xdg/reel/reel.conf",
            "The system's options (the first of $XDG_CONFIG_DIRS), \
             overridden by the user's.",
        ),
        (
            "/usr/lib/systemd/user/reel-kiosk.service",
            "A user service that plays a playlist fullscreen in a loop and \
             is restarted on failure; it reads $XDG_CONFIG_HOME/reel/kiosk.env.",
        ),
    ] {
        roff.control("TP", []);
        roff.text([bold(file)]);
        roff.text([roman(what)]);
    }
    roff.control("SH", ["ENVIRONMENT"]);
    for (name, what) in [
        (
            "WAYLAND_DISPLAY",
            "The compositor to connect to (in $XDG_RUNTIME_DIR).",
        ),
        (
            "RUST_LOG",
            "Log filter (tracing's env-filter syntax); overrides -v.",
        ),
    ] {
        roff.control("TP", []);
        roff.text([bold(name)]);
        roff.text([roman(what)]);
    }
    roff.render()
}
