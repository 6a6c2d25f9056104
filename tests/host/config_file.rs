//! The configuration file, through the binary: XDG_CONFIG_HOME's file over
//! XDG_CONFIG_DIRS's, the command line over both, comments, a bad line
//! named with its file and line (usage status), `--no-config`. What took
//! effect is seen in what reel does: `output=framemd5` prints frame MD5s,
//! `output=null` prints nothing.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use support::media;

struct Dirs {
    root: PathBuf,
}

impl Dirs {
    fn new(name: &str) -> Dirs {
        let root = std::env::temp_dir().join(format!("reel-config-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for dir in ["user/reel", "system/reel"] {
            std::fs::create_dir_all(root.join(dir)).expect("create config dir");
        }
        Dirs { root }
    }

    fn user_file(&self) -> PathBuf {
        self.root.join("user/reel/reel.conf")
    }

    fn write(&self, which: &str, text: &str) -> PathBuf {
        let path = self.root.join(which).join("reel/reel.conf");
        std::fs::write(&path, text).expect("write config");
        path
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_reel"))
            .env("XDG_CONFIG_HOME", self.root.join("user"))
            .env("XDG_CONFIG_DIRS", self.root.join("system"))
            .env_remove("RUST_LOG")
            .args(args)
            .arg(clip())
            .output()
            .expect("run reel")
    }
}

impl Drop for Dirs {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn clip() -> PathBuf {
    media::clip("h264_baseline.mp4")
}

/// Frame MD5 lines reel printed (0 with `--output null`).
fn md5_lines(out: &Output) -> usize {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.starts_with('#'))
        .count()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn the_command_line_overrides_the_users_file_which_overrides_the_systems() {
    let dirs = Dirs::new("precedence");
    let frames = media::frame_count(&clip());
    dirs.write("system", "# signage defaults\noutput=null\n");
    let out = dirs.run(&[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(md5_lines(&out), 0, "system file's output=null ignored");

    dirs.write(
        "user",
        "\n# mine\n   output = framemd5   \n\n# output=null\nhwdec=no\n",
    );
    let out = dirs.run(&[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        md5_lines(&out),
        frames,
        "user file's output=framemd5 ignored"
    );

    let out = dirs.run(&["--output", "null"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(md5_lines(&out), 0, "the command line did not win");
}

#[test]
fn a_bad_line_names_its_file_and_line_and_exits_with_the_usage_status() {
    let dirs = Dirs::new("bad");
    for (text, line, cause) in [
        (
            "output=null\n# fine\nbogus=1\n",
            3,
            "unknown option 'bogus'",
        ),
        ("hwdec=sometimes\n", 1, "invalid value 'sometimes'"),
    ] {
        let file = dirs.write("user", text);
        let out = dirs.run(&[]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{err}");
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(lines.len(), 1, "one line: {err}");
        let prefix = format!("reel: error: {}:{line}: ", file.display());
        assert!(lines[0].starts_with(&prefix), "{err}");
        assert!(lines[0].contains(cause), "{err}");
        assert_eq!(md5_lines(&out), 0);
    }
}

#[test]
fn no_config_reads_no_file() {
    let dirs = Dirs::new("none");
    dirs.write("user", "bogus=1\n");
    dirs.write("system", "bogus=2\n");
    let out = dirs.run(&["--no-config", "--output", "null"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(dirs.user_file().exists());
    assert!(Path::new(&dirs.root).exists());
}
