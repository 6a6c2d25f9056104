//! Opening a V4L2 or media node, and naming who holds a busy one.
//!
//! A decoder that allows one user at a time answers a second `open` (or
//! the first REQBUFS) with EBUSY. The error then names the processes that
//! have the node open, found the way `fuser` does: every
//! `/proc/PID/fd/N` link that points at the node. Processes whose fds
//! /proc does not show us (another user's, without privileges) are not
//! named, and the message says so.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use v4l2r::nix::errno::Errno;
use v4l2r::nix::libc;

/// Why a device node could not be opened; both name the node.
#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    #[error("{path}: cannot open: {source}")]
    Open { path: PathBuf, source: io::Error },
    /// EBUSY: a single-user decoder another process holds.
    #[error("{path}: device busy, {holders}")]
    Busy { path: PathBuf, holders: String },
}

impl NodeError {
    /// EBUSY from `path`, naming the processes that hold it.
    pub fn busy(path: &Path) -> Self {
        Self::Busy {
            path: path.to_path_buf(),
            holders: busy_reason(path),
        }
    }

    /// The error `open` of `path` failed with: EBUSY names the holders.
    pub fn opening(path: &Path, source: io::Error) -> Self {
        if source.raw_os_error() == Some(Errno::EBUSY as i32) {
            Self::busy(path)
        } else {
            Self::Open {
                path: path.to_path_buf(),
                source,
            }
        }
    }
}

/// [`open_node`], its error naming the node (and who holds a busy one).
pub fn open(path: &Path) -> Result<File, NodeError> {
    open_node(path).map_err(|source| NodeError::opening(path, source))
}

/// Opens a device node read-write, non-blocking, close-on-exec.
///
/// Debug builds honour `REEL_FAULT_OPEN_BUSY=PATH`: opening PATH fails
/// with EBUSY, as a single-user decoder that another process holds does
/// (visl accepts any number of users). Release builds ignore it.
pub fn open_node(path: &Path) -> io::Result<File> {
    if cfg!(debug_assertions)
        && std::env::var_os("REEL_FAULT_OPEN_BUSY").is_some_and(|busy| Path::new(&busy) == path)
    {
        return Err(io::Error::from_raw_os_error(Errno::EBUSY as i32));
    }
    OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
}

/// A process that has a device node open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    pub pid: u32,
    /// Its `comm` (the executable's name, at most 15 bytes).
    pub command: String,
}

/// Who, besides this process, has `device` open, by pid.
pub fn holders_of(device: &Path) -> Vec<Holder> {
    holders_in(Path::new("/proc"), device, std::process::id())
}

/// "held by sleep (pid 812), reel (pid 815)", or why nobody is named.
pub fn busy_reason(device: &Path) -> String {
    describe_holders(&holders_of(device))
}

pub fn describe_holders(holders: &[Holder]) -> String {
    if holders.is_empty() {
        return "held by another process (none that /proc shows us)".to_string();
    }
    let named: Vec<String> = holders
        .iter()
        .map(|h| format!("{} (pid {})", h.command, h.pid))
        .collect();
    format!("held by {}", named.join(", "))
}

/// The scan behind [`holders_of`], over a /proc tree at `proc_root`.
fn holders_in(proc_root: &Path, device: &Path, own_pid: u32) -> Vec<Holder> {
    // /proc's fd links name the node by its canonical path.
    let device: PathBuf = std::fs::canonicalize(device).unwrap_or_else(|_| device.to_path_buf());
    let Ok(processes) = std::fs::read_dir(proc_root) else {
        return Vec::new();
    };
    let mut holders: Vec<Holder> = processes
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| pid != own_pid)
        .filter(|&pid| has_open(&proc_root.join(pid.to_string()).join("fd"), &device))
        .map(|pid| Holder {
            pid,
            command: command_of(&proc_root.join(pid.to_string())),
        })
        .collect();
    holders.sort_by_key(|h| h.pid);
    holders
}

/// Whether any link in `fd_dir` points at `device`. Unreadable
/// directories (another user's process, one that just exited) hold nothing
/// we can see.
fn has_open(fd_dir: &Path, device: &Path) -> bool {
    let Ok(fds) = std::fs::read_dir(fd_dir) else {
        return false;
    };
    fds.flatten()
        .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|target| target == device))
}

fn command_of(process_dir: &Path) -> String {
    std::fs::read_to_string(process_dir.join("comm"))
        .map(|c| c.trim_end().to_string())
        .ok()
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| "?".to_string())
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    /// A /proc-like tree: each (pid, comm, fd targets).
    fn fake_proc(name: &str, processes: &[(&str, Option<&str>, &[&str])]) -> PathBuf {
        let root = std::env::temp_dir().join(format!("reel-proc-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for (pid, comm, targets) in processes {
            let dir = root.join(pid);
            std::fs::create_dir_all(dir.join("fd")).unwrap();
            if let Some(comm) = comm {
                std::fs::write(dir.join("comm"), format!("{comm}\n")).unwrap();
            }
            for (n, target) in targets.iter().enumerate() {
                symlink(target, dir.join("fd").join(n.to_string())).unwrap();
            }
        }
        // Not processes: ignored.
        std::fs::create_dir_all(root.join("sys")).unwrap();
        std::fs::write(root.join("uptime"), "1.0 1.0\n").unwrap();
        root
    }

    const NODE: &str = "/dev/reel-test-no-such-video9";

    #[test]
    fn names_every_other_process_with_the_node_open() {
        let root = fake_proc(
            "holders",
            &[
                ("812", Some("sleep"), &["/dev/null", NODE, "pipe:[1234]"]),
                ("77", Some("reel"), &["socket:[5]", NODE]),
                ("900", Some("weston"), &["/dev/dri/card0", "/dev/video1"]),
                ("5", Some("self"), &[NODE]),
                ("6", None, &[NODE]),
            ],
        );
        let holders = holders_in(&root, Path::new(NODE), 5);
        assert_eq!(
            holders,
            vec![
                Holder {
                    pid: 6,
                    command: "?".into()
                },
                Holder {
                    pid: 77,
                    command: "reel".into()
                },
                Holder {
                    pid: 812,
                    command: "sleep".into()
                },
            ]
        );
        assert_eq!(
            describe_holders(&holders[1..]),
            "held by reel (pid 77), sleep (pid 812)"
        );
        std::fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn a_process_whose_fds_cannot_be_read_is_not_named() {
        let root = fake_proc("unreadable", &[("812", Some("sleep"), &[])]);
        // No fd directory at all (the process exited during the scan).
        std::fs::remove_dir(root.join("812").join("fd")).unwrap();
        assert!(holders_in(&root, Path::new(NODE), 1).is_empty());
        assert_eq!(
            describe_holders(&[]),
            "held by another process (none that /proc shows us)"
        );
        std::fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn a_missing_proc_names_nobody() {
        assert!(holders_in(Path::new("/nonexistent-proc"), Path::new(NODE), 1).is_empty());
    }

    #[test]
    fn finds_this_process_in_the_real_proc() {
        // The real /proc, seen from another pid: this test's own fd.
        let file = File::open("/dev/null").unwrap();
        let holders = holders_in(Path::new("/proc"), Path::new("/dev/null"), 0);
        assert!(
            holders.iter().any(|h| h.pid == std::process::id()),
            "{holders:?}"
        );
        drop(file);
    }
}
