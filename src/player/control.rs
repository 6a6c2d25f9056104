//! The control socket: a Unix stream socket speaking one command per line
//! (see `commands::parse_command`), one reply line per command. For kiosk
//! remote control and for driving reel from test scripts.

use std::io::{ErrorKind, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;

use anyhow::Result;
use calloop::generic::Generic;
use calloop::{Interest, LoopHandle, Mode, PostAction};
use tracing::{debug, warn};

use super::socket_file::{read_client, serve, ClientRead};

/// Longest command line accepted; a client sending more is disconnected.
const MAX_LINE: usize = 4096;

/// Whatever executes commands: the player.
pub trait CommandTarget {
    /// Runs one control line and returns the reply (without newline).
    fn control(&mut self, line: &str) -> String;
}

pub use super::socket_file::SocketFile as ControlSocket;

pub fn listen<T: CommandTarget + 'static>(
    path: &Path,
    handle: &LoopHandle<'static, T>,
) -> Result<ControlSocket> {
    let client_handle = handle.clone();
    serve(path, handle, "control socket", move |stream, _| {
        accept_client(stream, &client_handle)
    })
}

fn accept_client<T: CommandTarget + 'static>(stream: UnixStream, handle: &LoopHandle<'static, T>) {
    if let Err(e) = stream.set_nonblocking(true) {
        warn!("control client: {e}");
        return;
    }
    debug!("control client connected");
    let mut pending = Vec::new();
    let inserted = handle.insert_source(
        Generic::new(stream, Interest::READ, Mode::Level),
        move |_, stream, target| {
            // Everything the client sent so far: only an unfinished line
            // longer than MAX_LINE is refused (below).
            // A client that closed its sending side (`echo ... | socat`)
            // is still answered what it sent.
            let closed = match read_client(stream, &mut pending, usize::MAX, usize::MAX) {
                ClientRead::Open => false,
                ClientRead::Closed => true,
                ClientRead::Failed => return Ok(PostAction::Remove),
            };
            while let Some(end) = pending.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = pending.drain(..=end).collect();
                let reply = match std::str::from_utf8(&line) {
                    Ok(text) if text.trim().is_empty() => continue,
                    Ok(text) => target.control(text),
                    Err(_) => "error: command is not UTF-8".to_string(),
                };
                if write_reply(stream, &reply).is_err() {
                    return Ok(PostAction::Remove);
                }
            }
            if pending.len() > MAX_LINE {
                let _ = write_reply(stream, "error: line too long");
                return Ok(PostAction::Remove);
            }
            Ok(if closed {
                PostAction::Remove
            } else {
                PostAction::Continue
            })
        },
    );
    if let Err(e) = inserted {
        warn!("cannot watch a control client: {e}");
    }
}

fn write_reply(stream: &UnixStream, reply: &str) -> std::io::Result<()> {
    let mut out = stream;
    let mut bytes = reply.as_bytes().to_vec();
    bytes.push(b'\n');
    let mut written = 0;
    let mut spins = 0;
    // Replies are short; a client that does not read them for long is dropped.
    while written < bytes.len() {
        match out.write(&bytes[written..]) {
            Ok(n) => written += n,
            Err(e) if e.kind() == ErrorKind::WouldBlock && spins < 100 => {
                spins += 1;
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
