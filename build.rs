//! Start-up cost: the order in which the dynamic linker searches reel's
//! libraries.
//!
//! reel is linked with immediate binding (full RELRO), so at start the
//! dynamic linker resolves every symbol reference of the ~140 libraries
//! FFmpeg brings, each by walking the global scope (the executable, then
//! the libraries breadth first) until one defines it. That includes a
//! library's references to its own exported symbols: libcrypto, for one,
//! looks up ~3,800 of its own symbols, and sat ~85th in the scope. The
//! walk was more than half of reel's start-up instructions.
//!
//! Naming the libraries most looked up as reel's own dependencies puts
//! them at the front of the scope. The list below is ranked by the number
//! of bindings to each on Debian bookworm (`LD_DEBUG=bindings reel
//! --version`); only those in FFmpeg's dependency closure on the build
//! machine are named, so elsewhere the list only shrinks. Which definition
//! a symbol binds to is unchanged but for C++ template instances and inline
//! functions that libstdc++-using libraries each carry (one definition
//! rule: identical copies); docs/benchmark-log.md has the figures.

use std::path::PathBuf;
use std::process::Command;

/// Library names (the soname up to ".so"), most bindings first.
const FIRST_IN_SCOPE: &[&str] = &[
    "libc",
    "libcrypto",
    "libstdc++",
    "libglib-2.0",
    "libsrt-gnutls",
    "libgio-2.0",
    "libnettle",
    "libgnutls",
    "libmbedcrypto",
    "libcodec2",
    "libunistring",
    "libpango-1.0",
    "libgobject-2.0",
    "libcairo",
    "libharfbuzz",
    "liblcms2",
    "libhogweed",
    "libzvbi",
    "libmount",
    "libpng16",
    "libssl",
    "libfreetype",
    "libsodium",
    "libgmp",
    "libgssapi_krb5",
    "libpixman-1",
    "libjpeg",
    "libselinux",
    "libblkid",
];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    // Which FFmpeg pkg-config finds, and where its libraries are looked for.
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    println!("cargo:rerun-if-env-changed=LD_LIBRARY_PATH");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
        return;
    }
    match ffmpeg_closure() {
        Ok(closure) => {
            for name in FIRST_IN_SCOPE {
                let prefix = format!("{name}.so");
                let found = closure.iter().find(|path| {
                    path.file_name()
                        .and_then(|f| f.to_str())
                        .is_some_and(|f| f.starts_with(&prefix))
                });
                if let Some(path) = found {
                    // Linked by path: its soname becomes a DT_NEEDED entry
                    // even though reel calls nothing in it.
                    println!(
                        "cargo:rustc-link-arg-bin=reel=-Wl,--push-state,--no-as-needed,{},--pop-state",
                        path.display()
                    );
                }
            }
        }
        Err(why) => println!("cargo:warning=library search order left to the linker: {why}"),
    }
}

/// The shared libraries libavformat and libavcodec load, as `ldd` lists
/// them (it asks the dynamic linker, running no code of the libraries).
fn ffmpeg_closure() -> Result<Vec<PathBuf>, String> {
    let libdir = Command::new("pkg-config")
        .args(["--variable=libdir", "libavformat"])
        .output()
        .map_err(|e| format!("pkg-config: {e}"))?;
    if !libdir.status.success() {
        return Err("pkg-config knows no libavformat".into());
    }
    let libdir = PathBuf::from(String::from_utf8_lossy(&libdir.stdout).trim());
    let ffmpeg = [libdir.join("libavformat.so"), libdir.join("libavcodec.so")];
    // An FFmpeg upgrade may bring another tree: look again then.
    for library in &ffmpeg {
        println!("cargo:rerun-if-changed={}", library.display());
    }
    // FFmpeg's libraries name each other by soname: without its libdir
    // first, ldd would resolve them to another FFmpeg (the system's, when
    // reel is built against one of its own through PKG_CONFIG_PATH).
    let inherited = std::env::var_os("LD_LIBRARY_PATH").unwrap_or_default();
    let search = std::iter::once(libdir.clone())
        .chain(std::env::split_paths(&inherited).filter(|p| !p.as_os_str().is_empty()));
    let search = std::env::join_paths(search).map_err(|e| format!("LD_LIBRARY_PATH: {e}"))?;
    let ldd = Command::new("ldd")
        .args(&ffmpeg)
        .env("LD_LIBRARY_PATH", search)
        .output()
        .map_err(|e| format!("ldd: {e}"))?;
    if !ldd.status.success() {
        return Err(format!(
            "ldd failed: {}",
            String::from_utf8_lossy(&ldd.stderr)
        ));
    }
    // "\tlibfoo.so.1 => /lib/x86_64-linux-gnu/libfoo.so.1 (0x...)"
    let closure: Vec<PathBuf> = String::from_utf8_lossy(&ldd.stdout)
        .lines()
        .filter_map(|line| line.split_once(" => ")?.1.split_whitespace().next())
        .filter(|path| path.starts_with('/'))
        .map(PathBuf::from)
        .collect();
    if closure.is_empty() {
        return Err("ldd listed no library".into());
    }
    Ok(closure)
}
