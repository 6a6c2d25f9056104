//! The listening Unix socket both remote-control servers (`--control`,
//! `--input-ipc-server`) use: created owner-only (0600), and never put in
//! place of anything but a stale socket left by an earlier run.

use std::io::{ErrorKind, Read};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use calloop::generic::Generic;
use calloop::{Interest, LoopHandle, PostAction};
use nix::sys::stat::{umask, Mode};
use tracing::warn;

/// The socket file; removed when dropped.
pub struct SocketFile {
    path: PathBuf,
}

impl Drop for SocketFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Binds a listening socket at `path`, non-blocking, mode 0600.
pub fn bind_private(path: &Path) -> Result<(UnixListener, SocketFile)> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if !meta.file_type().is_socket() => bail!(
            "{} exists and is not a socket: refusing to replace it",
            path.display()
        ),
        Ok(_) => {
            // A live socket belongs to another process, which we must not
            // steal from; a dead one is left over from an earlier run.
            if UnixStream::connect(path).is_ok() {
                bail!("socket {} is in use by another process", path.display());
            }
            std::fs::remove_file(path)
                .with_context(|| format!("cannot remove stale socket {}", path.display()))?;
        }
        Err(e) if e.kind() == ErrorKind::NotFound => {}
        Err(e) => return Err(e).with_context(|| format!("cannot inspect {}", path.display())),
    }
    // The umask makes the socket owner-only from its creation: no window
    // in which another user could connect.
    let previous = umask(Mode::from_bits_truncate(0o177));
    let bound = UnixListener::bind(path);
    umask(previous);
    let listener = bound.with_context(|| format!("cannot listen on {}", path.display()))?;
    let file = SocketFile {
        path: path.to_path_buf(),
    };
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .with_context(|| format!("cannot restrict {} to its owner", path.display()))?;
    listener.set_nonblocking(true)?;
    Ok((listener, file))
}

/// Listens at `path` (as [`bind_private`]) and hands each client that
/// connects to `on_client` from the event loop; `what` names the socket
/// in messages.
pub fn serve<T: 'static>(
    path: &Path,
    handle: &LoopHandle<'static, T>,
    what: &'static str,
    mut on_client: impl FnMut(UnixStream, &mut T) + 'static,
) -> Result<SocketFile> {
    let (listener, file) = bind_private(path).context(what)?;
    handle
        .insert_source(
            Generic::new(listener, Interest::READ, calloop::Mode::Level),
            move |_, listener, target| {
                loop {
                    match listener.accept() {
                        Ok((stream, _)) => on_client(stream, target),
                        Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                        Err(e) => {
                            warn!("{what}: accept failed: {e}");
                            break;
                        }
                    }
                }
                Ok(PostAction::Continue)
            },
        )
        .map_err(|e| anyhow::anyhow!("cannot watch the {what}: {e}"))?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("reel-socket-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("scratch dir");
        dir.join(name)
    }

    #[test]
    fn refuses_a_regular_file_and_keeps_it() {
        let path = scratch("data");
        std::fs::write(&path, b"precious").expect("write");
        assert!(bind_private(&path).is_err());
        assert_eq!(std::fs::read(&path).expect("still there"), b"precious");
    }

    #[test]
    fn replaces_a_stale_socket_and_is_owner_only() {
        let path = scratch("stale.sock");
        let _ = std::fs::remove_file(&path);
        drop(UnixListener::bind(&path).expect("stale socket"));
        let (_listener, file) = bind_private(&path).expect("stale socket replaced");
        let mode = std::fs::metadata(&path).expect("socket").mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert!(bind_private(&path).is_err(), "a live socket was taken over");
        drop(file);
        assert!(!path.exists());
    }
}

/// What a client's socket gave at one wake-up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientRead {
    /// All it had for now was read.
    Open,
    /// The client closed its sending side (what it sent is still answered).
    Closed,
    /// Reading failed.
    Failed,
}

/// Reads what the non-blocking `stream` has into `pending`: at most
/// `max_reads` reads (a client that floods requests waits its turn, the
/// source being level-triggered, rather than stalling playback), fewer
/// once `pending` holds more than `max_line` bytes and no line end.
pub fn read_client(
    stream: &UnixStream,
    pending: &mut Vec<u8>,
    max_reads: usize,
    max_line: usize,
) -> ClientRead {
    let mut chunk = [0u8; 4096];
    for _ in 0..max_reads {
        match (&*stream).read(&mut chunk) {
            Ok(0) => return ClientRead::Closed,
            Ok(n) => pending.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(_) => return ClientRead::Failed,
        }
        if pending.len() > max_line && !pending.contains(&b'\n') {
            break;
        }
    }
    ClientRead::Open
}
