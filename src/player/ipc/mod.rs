//! mpv's JSON IPC (`--input-ipc-server PATH`): the subset of mpv's protocol
//! a signage controller or a test script uses, with mpv's JSON shapes, so
//! that tools written for mpv drive reel unchanged. The player runs the
//! commands (`IpcTarget`); this module frames requests and replies, keeps
//! each client's observed properties and sends the player's events.

pub mod codec;
pub mod commands;
pub mod events;
pub mod observers;
pub mod properties;
pub mod property_text;

use std::io::{ErrorKind, Write};
use std::net::Shutdown;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::OnceLock;
use std::time::Instant;

use anyhow::Result;
use calloop::generic::Generic;
use calloop::{Interest, LoopHandle, Mode, PostAction};
use serde_json::Value;
use tracing::{debug, warn};

use super::socket_file::{read_client, serve, ClientRead, SocketFile};
use codec::{IpcError, Line, Outcome};
use commands::IpcCommand;
use events::PlayerEvent;
use observers::Observers;
use properties::{Property, Snapshot};

/// Longest request line; a client sending more is disconnected.
const MAX_LINE: usize = 64 * 1024;
/// Reads of a client's socket per wake-up of the event loop.
const READS_PER_WAKE: usize = 16;
/// Output a client may leave unread before it is disconnected.
const MAX_UNREAD: usize = 1024 * 1024;
/// mpv's client API version 2.0 (`get_version`), whose shapes reel speaks.
const CLIENT_API_VERSION: u64 = 2 << 16;

/// The start of the player's clock `get_time_us` reads.
fn clock_origin() -> Instant {
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    *ORIGIN.get_or_init(Instant::now)
}

/// The player, as the IPC server sees it.
pub trait IpcTarget {
    fn ipc_server(&mut self) -> Option<&mut Server>;
    fn snapshot(&self) -> Snapshot;
    /// Runs a command other than property access and observation.
    fn run_ipc(&mut self, command: IpcCommand) -> Outcome;
    fn set_property(&mut self, property: Property, value: &Value) -> Result<(), IpcError>;
}

struct Client {
    id: u64,
    /// The write side (a duplicate of the descriptor the reader holds).
    stream: UnixStream,
    unsent: Vec<u8>,
    observers: Observers,
}

/// The listening socket and its clients.
pub struct Server {
    clients: Vec<Client>,
    next_client: u64,
    _file: SocketFile,
}

pub fn listen<T: IpcTarget + 'static>(
    path: &Path,
    handle: &LoopHandle<'static, T>,
) -> Result<Server> {
    clock_origin();
    let client_handle = handle.clone();
    let file = serve(path, handle, "IPC socket", move |stream, target| {
        accept(stream, target, &client_handle)
    })?;
    Ok(Server {
        clients: Vec::new(),
        next_client: 0,
        _file: file,
    })
}

fn accept<T: IpcTarget + 'static>(
    stream: UnixStream,
    target: &mut T,
    handle: &LoopHandle<'static, T>,
) {
    let Some(server) = target.ipc_server() else {
        return;
    };
    let writer = match stream
        .set_nonblocking(true)
        .and_then(|()| stream.try_clone())
    {
        Ok(writer) => writer,
        Err(e) => {
            warn!("IPC client: {e}");
            return;
        }
    };
    let id = server.next_client;
    server.next_client += 1;
    debug!(client = id, "IPC client connected");
    server.clients.push(Client {
        id,
        stream: writer,
        unsent: Vec::new(),
        observers: Observers::default(),
    });
    let mut pending = Vec::new();
    let inserted = handle.insert_source(
        Generic::new(stream, Interest::READ, Mode::Level),
        move |_, stream, target| Ok(read_requests(id, stream, &mut pending, target)),
    );
    if let Err(e) = inserted {
        warn!("cannot watch an IPC client: {e}");
        if let Some(server) = target.ipc_server() {
            server.disconnect(id);
        }
    }
}

/// Reads what client `id` sent and answers each complete line.
fn read_requests<T: IpcTarget>(
    id: u64,
    stream: &UnixStream,
    pending: &mut Vec<u8>,
    target: &mut T,
) -> PostAction {
    // A bounded read per wake-up; a failed read ends the client as its
    // closing does, once what it sent is answered.
    let closed = read_client(stream, pending, READS_PER_WAKE, MAX_LINE) != ClientRead::Open;
    while let Some(end) = pending.iter().position(|&b| b == b'\n') {
        let line: Vec<u8> = pending.drain(..=end).collect();
        answer(id, &String::from_utf8_lossy(&line), target);
    }
    let connected = target
        .ipc_server()
        .is_some_and(|server| server.clients.iter().any(|c| c.id == id));
    if pending.len() > MAX_LINE {
        warn!(
            client = id,
            "IPC request longer than {MAX_LINE} bytes: disconnecting"
        );
    }
    if closed || !connected || pending.len() > MAX_LINE {
        debug!(client = id, "IPC client gone");
        if let Some(server) = target.ipc_server() {
            // A client that only closed its sending side (`echo ... |
            // socat`) still reads the replies to what it sent.
            server.flush();
            server.disconnect(id);
        }
        return PostAction::Remove;
    }
    PostAction::Continue
}

fn answer<T: IpcTarget>(client: u64, line: &str, target: &mut T) {
    let reply = match codec::parse_line(line) {
        Line::Blank => return,
        Line::Text(command) => {
            if command.is_empty() {
                return;
            }
            if let Err(e) = execute(client, &command, target) {
                debug!(?command, "IPC text command: {}", e.as_str());
            }
            return;
        }
        Line::Invalid(error) => codec::invalid_reply(error),
        Line::Request(request) => {
            let outcome = execute(client, &request.command, target);
            if let Err(e) = &outcome {
                debug!(command = ?request.command, "IPC: {}", e.as_str());
            }
            codec::reply(&request.request_id, &outcome)
        }
    };
    if let Some(server) = target.ipc_server() {
        server.send(client, &reply);
    }
}

fn execute<T: IpcTarget>(client: u64, command: &[Value], target: &mut T) -> Outcome {
    let known = |name: &str| Property::from_name(name).ok_or(IpcError::PropertyNotFound);
    match commands::parse(command)? {
        IpcCommand::GetProperty(name) => target.snapshot().get_path(&name).map(Some),
        // mpv answers success, with null for what it cannot read.
        IpcCommand::GetPropertyString(name) => Ok(Some(
            target
                .snapshot()
                .get_path(&name)
                .map_or(Value::Null, |value| {
                    Value::String(property_text::as_mpv_string(&value))
                }),
        )),
        IpcCommand::Add(name, by) => add(target, &name, by).map(|()| Some(Value::Null)),
        IpcCommand::Multiply(name, factor) => {
            multiply(target, &name, factor).map(|()| Some(Value::Null))
        }
        IpcCommand::GetVersion => Ok(Some(Value::from(CLIENT_API_VERSION))),
        IpcCommand::ClientName => Ok(Some(Value::String(format!("ipc_{client}")))),
        IpcCommand::GetTimeUs => {
            let micros = clock_origin().elapsed().as_micros();
            Ok(Some(Value::from(u64::try_from(micros).unwrap_or(u64::MAX))))
        }
        IpcCommand::SetProperty(name, value) => {
            target.set_property(known(&name)?, &value).map(|()| None)
        }
        IpcCommand::ObserveProperty(id, name) => {
            if let Some(observers) = target.ipc_server().and_then(|s| s.observers(client)) {
                observers.observe(id, &name);
            }
            Ok(None)
        }
        IpcCommand::UnobserveProperty(id) => {
            if let Some(observers) = target.ipc_server().and_then(|s| s.observers(client)) {
                observers.unobserve(&id);
            }
            Ok(None)
        }
        other => target.run_ipc(other),
    }
}

/// `add NAME BY`: numbers change by `by`; flags turn on for a positive
/// `by` and off for a negative one (half a unit or more), as in mpv.
fn add<T: IpcTarget>(target: &mut T, name: &str, by: f64) -> Result<(), IpcError> {
    let failed = IpcError::CommandFailed;
    let property = Property::from_name(name).ok_or(failed)?;
    let value = match target.snapshot().get(property).map_err(|_| failed)? {
        Value::Bool(on) if by.abs() < 0.5 => Value::Bool(on),
        Value::Bool(_) => Value::Bool(by > 0.0),
        Value::Number(n) if n.is_i64() => Value::from(n.as_i64().unwrap_or(0) + by.round() as i64),
        Value::Number(n) => Value::from(n.as_f64().unwrap_or(0.0) + by),
        _ => return Err(failed),
    };
    target.set_property(property, &value).map_err(|_| failed)
}

/// `multiply NAME FACTOR`: numbers only, as in mpv.
fn multiply<T: IpcTarget>(target: &mut T, name: &str, factor: f64) -> Result<(), IpcError> {
    let failed = IpcError::CommandFailed;
    let property = Property::from_name(name).ok_or(failed)?;
    let value = match target.snapshot().get(property).map_err(|_| failed)? {
        Value::Number(n) if n.is_i64() => {
            Value::from((n.as_i64().unwrap_or(0) as f64 * factor).round() as i64)
        }
        Value::Number(n) => Value::from(n.as_f64().unwrap_or(0.0) * factor),
        _ => return Err(failed),
    };
    target.set_property(property, &value).map_err(|_| failed)
}

impl Server {
    fn observers(&mut self, client: u64) -> Option<&mut Observers> {
        let client = self.clients.iter_mut().find(|c| c.id == client)?;
        Some(&mut client.observers)
    }

    fn send(&mut self, client: u64, line: &str) {
        if let Some(client) = self.clients.iter_mut().find(|c| c.id == client) {
            client.unsent.extend_from_slice(line.as_bytes());
            client.unsent.push(b'\n');
        }
    }

    /// Sends `event` to every client, after the observed properties that
    /// changed in `changed_before` (None: the event comes before them).
    pub fn broadcast(&mut self, changed_before: Option<&Snapshot>, event: &PlayerEvent) {
        if let Some(snapshot) = changed_before {
            self.publish_changes(snapshot);
        }
        let line = event.to_json();
        debug!(event = %line, "IPC event");
        for client in &mut self.clients {
            client.unsent.extend_from_slice(line.as_bytes());
            client.unsent.push(b'\n');
        }
    }

    pub fn publish_changes(&mut self, snapshot: &Snapshot) {
        for client in &mut self.clients {
            for line in client.observers.changes(snapshot) {
                client.unsent.extend_from_slice(line.as_bytes());
                client.unsent.push(b'\n');
            }
        }
    }

    /// Writes what each client can take now; a client that stopped
    /// reading is disconnected once too much waits for it.
    pub fn flush(&mut self) {
        let mut gone = Vec::new();
        for client in &mut self.clients {
            while !client.unsent.is_empty() {
                match (&client.stream).write(&client.unsent) {
                    Ok(0) => break,
                    Ok(n) => {
                        client.unsent.drain(..n);
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                    Err(_) => {
                        gone.push(client.id);
                        break;
                    }
                }
            }
            if client.unsent.len() > MAX_UNREAD {
                warn!(
                    client = client.id,
                    "IPC client does not read its replies: disconnecting"
                );
                gone.push(client.id);
            }
        }
        for id in gone {
            self.disconnect(id);
        }
    }

    /// Closes the connection; its reader sees the end and removes itself.
    fn disconnect(&mut self, id: u64) {
        if let Some(at) = self.clients.iter().position(|c| c.id == id) {
            let client = self.clients.remove(at);
            let _ = client.stream.shutdown(Shutdown::Both);
        }
    }
}
