//! The Debian package (debian/, packaging/README.md), built from this tree
//! in cargo's dev profile (DEB_BUILD_OPTIONS=noopt: the binary `cargo test`
//! built, no release build) and installed into a clean bookworm root
//! (packaging/test-root.sh: debootstrap minbase, cached) by that root's own
//! apt, which resolves the dependencies the package declares. There it
//! must run: `reel --version`, its man page, `reel probe`, a clip played
//! with `--output null`. Also: lintian without errors, desktop-file-validate,
//! systemd-analyze verify on the units.
//!
//! One test: the steps share the package and the root, and the order
//! matters (build, check, install, run).

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

use support::{media, project_dir, target_dir};

fn run(what: &str, command: &mut Command) -> Output {
    let out = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {what}: {e} (packaging/install-deps.sh)"));
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Builds the .deb into `dir`; the tree is left as it was (debian/rules clean).
fn build_package(dir: &Path) -> PathBuf {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).expect("create the package dir");
    let rules = |target: &str| {
        let mut command = Command::new("debian/rules");
        command
            .arg(target)
            .current_dir(project_dir())
            .env("DEB_BUILD_OPTIONS", "noopt nocheck noautodbgsym")
            .env("REEL_DEB_DESTDIR", dir)
            .env("CARGO_TARGET_DIR", target_dir());
        command
    };
    run("debian/rules binary", &mut rules("binary"));
    run("debian/rules clean", &mut rules("clean"));
    let debs: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("read the package dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "deb"))
        .collect();
    assert_eq!(debs.len(), 1, "one package: {debs:?}");
    debs[0].clone()
}

/// A fresh copy of the cached clean bookworm root.
fn clean_root(cache: &Path) -> PathBuf {
    run(
        "packaging/test-root.sh",
        Command::new(project_dir().join("packaging/test-root.sh")).arg(cache),
    );
    let root = cache.join("run");
    let _ = std::fs::remove_dir_all(&root);
    run(
        "copying the root",
        Command::new("cp")
            .args(["-a", "--reflink=auto"])
            .arg(cache.join("bookworm"))
            .arg(&root),
    );
    root
}

/// `args` run in `root` with a plain environment.
fn in_root(root: &Path, args: &[&str]) -> Command {
    let mut command = Command::new("chroot");
    command
        .arg(root)
        .args(args)
        .env_clear()
        .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
        .env("HOME", "/root")
        .env("LC_ALL", "C.UTF-8")
        .env("DEBIAN_FRONTEND", "noninteractive");
    command
}

#[test]
fn the_package_installs_and_runs_in_a_clean_bookworm_root() {
    let started = Instant::now();
    let deb = build_package(&target_dir().join("deb"));
    let built = started.elapsed();

    let lintian = Command::new("lintian")
        .args(["--fail-on", "error", "--tag-display-limit", "0"])
        .arg(&deb)
        .output()
        .expect("run lintian (packaging/install-deps.sh)");
    assert!(
        lintian.status.success(),
        "lintian errors:\n{}",
        stdout(&lintian)
    );
    let info = stdout(&run(
        "dpkg-deb -f",
        Command::new("dpkg-deb").arg("-f").arg(&deb),
    ));
    let depends = info
        .lines()
        .find_map(|l| l.strip_prefix("Depends: "))
        .unwrap_or_else(|| panic!("no Depends:\n{info}"));
    // From the libraries the binary links (dh_shlibdeps), not written by hand.
    for library in ["libavcodec59", "libavformat59", "libc6", "libxkbcommon0"] {
        assert!(depends.contains(library), "{library} missing: {depends}");
    }
    let checked = started.elapsed();

    let cache = target_dir().join("package-root");
    let root = clean_root(&cache);
    std::fs::copy(&deb, root.join("tmp/reel.deb")).expect("copy the package into the root");
    let clip = media::clip("h264_baseline.mp4");
    std::fs::copy(&clip, root.join("tmp/clip.mp4")).expect("copy the clip into the root");
    run(
        "apt-get install ./reel.deb in the root",
        &mut in_root(
            &root,
            &[
                "apt-get",
                "install",
                "-y",
                "-q",
                "--no-install-recommends",
                "/tmp/reel.deb",
            ],
        ),
    );
    let installed = started.elapsed();
    // The libraries apt fetched serve the next run's copy of the root.
    keep_downloads(&root, &cache.join("bookworm"));

    let version = stdout(&run(
        "reel --version",
        &mut in_root(&root, &["reel", "--version"]),
    ));
    assert_eq!(
        version.trim(),
        format!("reel {}", env!("CARGO_PKG_VERSION"))
    );

    let mut man = in_root(&root, &["man", "-l", "/usr/share/man/man1/reel.1.gz"]);
    man.env("MANPAGER", "cat").env("MANWIDTH", "80");
    let page = stdout(&run("man -l reel.1.gz", &mut man));
    for section in ["SYNOPSIS", "OPTIONS", "EXIT STATUS", "FILES", "--no-config"] {
        assert!(
            page.contains(section),
            "{section} not in the man page:\n{page}"
        );
    }

    let probe = stdout(&run("reel probe", &mut in_root(&root, &["reel", "probe"])));
    assert!(
        probe.contains("Software decoders (libavcodec):") && probe.contains("h264: h264"),
        "{probe}"
    );

    let played = run(
        "reel --output null",
        &mut in_root(
            &root,
            &["reel", "--output", "null", "--stats", "/tmp/clip.mp4"],
        ),
    );
    let stats = String::from_utf8_lossy(&played.stderr);
    assert!(
        stats.contains(&format!("frames={} ", media::frame_count(&clip))),
        "not every frame decoded: {stats}"
    );

    let desktop = root.join("usr/share/applications/reel.desktop");
    run(
        "desktop-file-validate",
        Command::new("desktop-file-validate").arg(&desktop),
    );
    verify_units(&root);

    // The fluster decoders, for driver developers (README).
    let fluster = root.join("usr/share/reel/fluster/reel_fluster.py");
    assert_eq!(
        std::fs::read(&fluster).unwrap_or_else(|e| panic!("{}: {e}", fluster.display())),
        std::fs::read(project_dir().join("packaging/fluster/reel_fluster.py"))
            .expect("read packaging/fluster/reel_fluster.py"),
    );

    eprintln!(
        "package test: built in {:.1} s, lintian {:.1} s, root and install {:.1} s, all {:.1} s",
        built.as_secs_f64(),
        (checked - built).as_secs_f64(),
        (installed - checked).as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
    let _ = std::fs::remove_dir_all(&root);
}

/// systemd-analyze verify, in the root for the units that start reel (its
/// /usr/bin/reel, its man page), on the host for weston's example (the root
/// has no weston).
fn verify_units(root: &Path) {
    let examples = "/usr/share/doc/reel/examples";
    let mut user = in_root(
        root,
        &[
            "systemd-analyze",
            "verify",
            "--user",
            "/usr/lib/systemd/user/reel-kiosk.service",
        ],
    );
    std::fs::create_dir_all(root.join("tmp/xdg")).expect("runtime dir for --user");
    user.env("XDG_RUNTIME_DIR", "/tmp/xdg");
    let signage = format!("{examples}/reel-signage.service");
    let weston = root.join(&examples[1..]).join("weston-kiosk.service");
    let mut host = Command::new("systemd-analyze");
    host.args(["verify", "--man=no"]).arg(&weston);
    for (what, command) in [
        ("reel-kiosk.service", &mut user),
        (
            "reel-signage.service",
            &mut in_root(root, &["systemd-analyze", "verify", &signage]),
        ),
        ("weston-kiosk.service", &mut host),
    ] {
        let out = run(&format!("systemd-analyze verify {what}"), command);
        // It may warn on stderr without failing: nothing may be said.
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(said.trim().is_empty(), "{what}: {said}");
    }
}

/// Moves the .debs apt downloaded in `root` into `cache`'s apt archive.
fn keep_downloads(root: &Path, cache: &Path) {
    let archives = Path::new("var/cache/apt/archives");
    let Ok(entries) = std::fs::read_dir(root.join(archives)) else {
        return;
    };
    for path in entries.filter_map(|e| e.ok().map(|e| e.path())) {
        if path.extension().is_some_and(|x| x == "deb") {
            if let Some(name) = path.file_name() {
                let _ = std::fs::rename(&path, cache.join(archives).join(name));
            }
        }
    }
}
