//! The configuration file: mpv-style `option=value` lines with the long
//! option names of the command line (`fullscreen=yes`, `hwdec=no`,
//! `output=null`), `#` comment lines, blank lines.
//!
//! Read from the system directory (`$XDG_CONFIG_DIRS`, by default
//! `/etc/xdg`: `reel/reel.conf`), then the user's (`$XDG_CONFIG_HOME`, by
//! default `~/.config`); `--no-config` reads neither. Each line becomes
//! command-line tokens placed before the real arguments, so clap checks
//! every value and the command line wins (later occurrences override
//! earlier ones), and the user's file wins over the system's. A line clap
//! refuses is reported with its file and line number (exit status 2).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use clap::{ArgAction, CommandFactory, Parser};

use crate::cli::Cli;

pub const FILE_NAME: &str = "reel/reel.conf";

/// A configuration line that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}:{line}: {message}", file.display())]
pub struct ConfigError {
    pub file: PathBuf,
    pub line: usize,
    pub message: String,
}

/// The configuration files that apply, the least important first: the
/// first system one found, then the user's.
pub fn config_files(env: impl Fn(&str) -> Option<OsString>) -> Vec<PathBuf> {
    let absolute = |value: OsString| Some(PathBuf::from(value)).filter(|p| p.is_absolute());
    let system_dirs = env("XDG_CONFIG_DIRS")
        .filter(|dirs| !dirs.is_empty())
        .unwrap_or_else(|| "/etc/xdg".into());
    let system = std::env::split_paths(&system_dirs)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(FILE_NAME))
        .find(|file| file.is_file());
    let user = env("XDG_CONFIG_HOME")
        .and_then(absolute)
        .or_else(|| env("HOME").and_then(absolute).map(|h| h.join(".config")))
        .map(|dir| dir.join(FILE_NAME))
        .filter(|file| file.is_file());
    system.into_iter().chain(user).collect()
}

/// The command-line tokens `text` (the contents of `file`) stands for.
pub fn tokens(file: &Path, text: &str) -> Result<Vec<OsString>, ConfigError> {
    let command = Cli::command();
    let mut tokens = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let fail = |message: String| ConfigError {
            file: file.to_owned(),
            line: index + 1,
            message,
        };
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (key, value) = match line.split_once('=') {
            Some((key, value)) => (key.trim(), Some(unquote(value.trim()))),
            None => (line, None),
        };
        let arg = command
            .get_arguments()
            .find(|a| !a.is_positional() && a.get_long() == Some(key) && key != "no-config")
            .ok_or_else(|| fail(format!("unknown option '{key}'")))?;
        let line_tokens = match arg.get_action() {
            ArgAction::SetTrue => match value.unwrap_or("yes") {
                "yes" | "true" => vec![format!("--{key}")],
                "no" | "false" => Vec::new(),
                other => return Err(fail(format!("{key} takes yes or no, not '{other}'"))),
            },
            ArgAction::Count => {
                let count = value
                    .unwrap_or("1")
                    .parse::<u8>()
                    .map_err(|_| fail(format!("{key} takes a count (0, 1, 2, ...)")))?;
                vec![format!("--{key}"); usize::from(count)]
            }
            ArgAction::Set | ArgAction::Append => match value {
                Some(value) => vec![format!("--{key}={value}")],
                None => return Err(fail(format!("{key} needs a value ({key}=...)"))),
            },
            // --help, --version: not options a file can set.
            _ => return Err(fail(format!("unknown option '{key}'"))),
        };
        // clap checks the value now, so that its error names this line.
        let mut probe = vec![OsString::from("reel")];
        probe.extend(line_tokens.iter().map(OsString::from));
        probe.extend(["--".into(), "file".into()]);
        if let Err(e) = Cli::try_parse_from(probe) {
            return Err(fail(clap_message(&e)));
        }
        tokens.extend(line_tokens.into_iter().map(OsString::from));
    }
    Ok(tokens)
}

/// `"value"` or `'value'` without its quotes (mpv accepts both).
fn unquote(value: &str) -> &str {
    for quote in ['"', '\''] {
        if let Some(inner) = value
            .strip_prefix(quote)
            .and_then(|v| v.strip_suffix(quote))
        {
            return inner;
        }
    }
    value
}

/// clap's error in one line, without its "error: " and usage lines.
fn clap_message(error: &clap::Error) -> String {
    let text = error.to_string();
    let first = text.lines().next().unwrap_or_default();
    first.strip_prefix("error: ").unwrap_or(first).to_owned()
}

/// reel's command line with the configuration files applied. A mistake
/// on the command line itself exits as clap does (usage status).
pub fn command_line() -> Result<Cli, ConfigError> {
    let files = config_files(|name| std::env::var_os(name));
    let args = with_config(std::env::args_os().collect(), &files, |file| {
        std::fs::read_to_string(file)
    })?;
    Ok(Cli::parse_from(args))
}

/// `args` (the command line, program name first) with the configuration
/// files' tokens inserted before the real arguments; unchanged for a
/// subcommand (`probe`) or with `--no-config`.
pub fn with_config(
    args: Vec<OsString>,
    files: &[PathBuf],
    read: impl Fn(&Path) -> std::io::Result<String>,
) -> Result<Vec<OsString>, ConfigError> {
    // The command line alone must parse (files come only from it); a
    // mistake in it is clap's to report, with the usual usage message.
    let Ok(alone) = Cli::try_parse_from(&args) else {
        return Ok(args);
    };
    if alone.command.is_some() || alone.play.no_config {
        return Ok(args);
    }
    let mut merged = args[..1].to_vec();
    for file in files {
        let text = read(file).map_err(|e| ConfigError {
            file: file.clone(),
            line: 0,
            message: format!("cannot read it: {e}"),
        })?;
        merged.extend(tokens(file, &text)?);
    }
    merged.extend(args.into_iter().skip(1));
    Ok(merged)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Hwdec, Output};

    fn parse(files: &[(&str, &str)], args: &[&str]) -> Result<Cli, ConfigError> {
        let paths: Vec<PathBuf> = files.iter().map(|(name, _)| PathBuf::from(name)).collect();
        let read = |path: &Path| {
            Ok(files
                .iter()
                .find(|(name, _)| Path::new(name) == path)
                .map(|(_, text)| text.to_string())
                .unwrap_or_default())
        };
        let args = args.iter().map(OsString::from).collect();
        let merged = with_config(args, &paths, read)?;
        Ok(Cli::try_parse_from(merged).expect("merged arguments parse"))
    }

    #[test]
    fn lines_become_options_and_the_command_line_wins() {
        let conf = "# kiosk\n\n  fullscreen = yes\nhwdec=no\nloop\nstart=\"1:02\"\nverbose=2\n";
        let cli = parse(&[("/etc/reel.conf", conf)], &["reel", "a.mp4"]).expect("parses");
        assert!(cli.play.fullscreen && cli.play.looping);
        assert_eq!(cli.play.hwdec, Hwdec::No);
        assert_eq!(cli.play.start, Some(std::time::Duration::from_secs(62)));
        assert_eq!(cli.play.log.verbose, 2);
        let cli = parse(
            &[("/etc/reel.conf", conf)],
            &["reel", "--hwdec", "v4l2", "--start=5", "a.mp4"],
        )
        .expect("parses");
        assert_eq!(cli.play.hwdec, Hwdec::V4l2);
        assert_eq!(cli.play.start, Some(std::time::Duration::from_secs(5)));
        assert!(cli.play.fullscreen, "what the command line leaves stays");
        // Later options override earlier ones, but files between options add up.
        let cli = parse(&[], &["reel", "a.mp4", "--loop", "b.mkv"]).expect("parses");
        assert_eq!(cli.play.files.len(), 2);
    }

    #[test]
    fn the_users_file_wins_over_the_systems() {
        let files = [
            ("/etc/xdg/reel/reel.conf", "output=null\nthreads=2\n"),
            ("/home/u/.config/reel/reel.conf", "output=framemd5\n"),
        ];
        let cli = parse(&files, &["reel", "a.mp4"]).expect("parses");
        assert_eq!(cli.play.output, Output::Framemd5);
        assert_eq!(cli.play.threads, 2);
    }

    #[test]
    fn no_config_and_subcommands_leave_the_files_unread() {
        let bad = [("/etc/reel.conf", "no-such-option=1\n")];
        let cli = parse(&bad, &["reel", "--no-config", "a.mp4"]).expect("file not read");
        assert!(cli.play.no_config);
        assert!(parse(&bad, &["reel", "probe"]).is_ok());
        assert!(parse(&bad, &["reel", "a.mp4"]).is_err());
    }

    #[test]
    fn bad_lines_name_their_file_and_line() {
        let cases = [
            ("fullscreen=yes\nbogus=1\n", 2, "unknown option 'bogus'"),
            ("\n# c\nhwdec=sometimes\n", 3, "sometimes"),
            ("fullscreen=maybe\n", 1, "yes or no"),
            ("help\n", 1, "unknown option 'help'"),
            ("start\n", 1, "needs a value"),
            ("start=-4\n", 1, "-4"),
            ("files=a.mp4\n", 1, "unknown option 'files'"),
            ("no-config\n", 1, "unknown option 'no-config'"),
            ("[profile]\n", 1, "unknown option '[profile]'"),
            ("verbose=lots\n", 1, "count"),
        ];
        for (text, line, needle) in cases {
            let error = parse(&[("/x/reel.conf", text)], &["reel", "a.mp4"])
                .err()
                .unwrap_or_else(|| panic!("{text:?} accepted"));
            assert_eq!(error.file, Path::new("/x/reel.conf"));
            assert_eq!(error.line, line, "{text:?}: {error}");
            assert!(error.message.contains(needle), "{text:?}: {error}");
            assert!(error.to_string().starts_with("/x/reel.conf:"), "{error}");
        }
    }

    #[test]
    fn files_are_found_in_xdg_order() {
        let dir = std::env::temp_dir().join(format!("reel-config-unit-{}", std::process::id()));
        let (system, user) = (dir.join("sys"), dir.join("user"));
        for base in [&system, &user] {
            std::fs::create_dir_all(base.join("reel")).expect("mkdir");
            std::fs::write(base.join(FILE_NAME), "fullscreen\n").expect("write");
        }
        let env = |name: &str| match name {
            "XDG_CONFIG_DIRS" => Some(format!("/nonexistent:{}", system.display()).into()),
            "XDG_CONFIG_HOME" => Some(user.clone().into_os_string()),
            _ => None,
        };
        assert_eq!(
            config_files(env),
            vec![system.join(FILE_NAME), user.join(FILE_NAME)]
        );
        // A relative XDG_CONFIG_HOME is ignored (the spec), HOME's .config used.
        let env = |name: &str| match name {
            "XDG_CONFIG_DIRS" => Some("/nonexistent".into()),
            "XDG_CONFIG_HOME" => Some("relative".into()),
            "HOME" => Some(dir.join("home").into_os_string()),
            _ => None,
        };
        assert!(config_files(env).is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
