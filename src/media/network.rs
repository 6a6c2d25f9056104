//! Opening a network source with libavformat, safely: every connection the
//! source makes — the URL itself, its playlist's segments, a redirect —
//! goes through one hook that refuses protocols off the source's whitelist
//! (saying which URL was refused) and gives each connection the same TLS
//! verification and I/O timeout; an interrupt callback lets the process
//! abandon a connect or a read at once.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use ff::ffi;
use ff::format::context::Input;
use ffmpeg_next as ff;

use super::ffmpeg_log::ErrorCapture;
use super::location::{whitelist_allows, Scheme};
use super::MediaError;

/// How network sources are opened: the command line's `--tls-verify`,
/// `--network-timeout` and `--rtsp-transport`, the same for every source
/// of the process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NetworkOptions {
    /// Verify TLS certificates against the system's trust store.
    pub tls_verify: bool,
    /// A connect or a read that waits longer fails.
    pub timeout: Duration,
    pub rtsp_transport: RtspTransport,
}

impl Default for NetworkOptions {
    fn default() -> Self {
        Self {
            tls_verify: true,
            timeout: Duration::from_secs(30),
            rtsp_transport: RtspTransport::Tcp,
        }
    }
}

/// How an RTSP source's media is carried (mpv's `--rtsp-transport`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RtspTransport {
    /// Interleaved in the RTSP connection.
    Tcp,
    Udp,
    UdpMulticast,
    /// RTSP and its media tunnelled in HTTP.
    Http,
    /// FFmpeg's own choice: UDP, then TCP when no packet arrives.
    Lavf,
}

impl RtspTransport {
    pub fn parse(text: &str) -> Result<Self, String> {
        match text {
            "tcp" => Ok(Self::Tcp),
            "udp" => Ok(Self::Udp),
            "udp_multicast" => Ok(Self::UdpMulticast),
            "http" => Ok(Self::Http),
            "lavf" => Ok(Self::Lavf),
            other => Err(format!(
                "'{other}': the RTSP transport is tcp, udp, udp_multicast, http or lavf"
            )),
        }
    }

    /// The RTSP demuxer's `rtsp_transport` option, None for its default.
    fn ffmpeg_name(self) -> Option<&'static str> {
        match self {
            Self::Tcp => Some("tcp"),
            Self::Udp => Some("udp"),
            Self::UdpMulticast => Some("udp_multicast"),
            Self::Http => Some("http"),
            Self::Lavf => None,
        }
    }
}

static OPTIONS: OnceLock<NetworkOptions> = OnceLock::new();
static ABANDONED: AtomicBool = AtomicBool::new(false);

/// Sets the options of every network source opened from now on (once, at
/// start-up; later calls are ignored).
pub fn configure(options: NetworkOptions) {
    if OPTIONS.set(options).is_err() {
        tracing::debug!("network options already set");
    }
}

fn options() -> NetworkOptions {
    OPTIONS.get().copied().unwrap_or_default()
}

/// Makes every network connect and read fail at once, for good: the
/// process is quitting and must not wait for a server.
pub fn abandon() {
    ABANDONED.store(true, Ordering::Relaxed);
}

/// One source's link to whoever plays it, shared by its demuxer and the
/// player's thread: abandoning its network connects, reads and waits (the
/// player is done with it: stopped, skipped), and whether it is
/// reconnecting (a watcher told of each change).
#[derive(Clone, Default)]
pub struct SourceLink(Arc<LinkState>);

#[derive(Default)]
struct LinkState {
    cancelled: AtomicBool,
    reconnecting: AtomicBool,
    watcher: Mutex<Option<Box<dyn Fn() + Send>>>,
}

impl std::fmt::Debug for SourceLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SourceLink")
            .field("cancelled", &self.0.cancelled)
            .field("reconnecting", &self.0.reconnecting)
            .finish_non_exhaustive()
    }
}

impl SourceLink {
    pub fn cancel(&self) {
        self.0.cancelled.store(true, Ordering::Relaxed);
    }

    fn is_cancelled(&self) -> bool {
        self.0.cancelled.load(Ordering::Relaxed) || ABANDONED.load(Ordering::Relaxed)
    }

    /// The source lost its connection and is opening it again.
    pub fn is_reconnecting(&self) -> bool {
        self.0.reconnecting.load(Ordering::Relaxed)
    }

    pub(super) fn set_reconnecting(&self, reconnecting: bool) {
        if self.0.reconnecting.swap(reconnecting, Ordering::Relaxed) != reconnecting {
            if let Ok(watcher) = self.0.watcher.lock() {
                if let Some(tell) = watcher.as_ref() {
                    tell();
                }
            }
        }
    }

    /// Calls `tell` (on the source's thread) whenever `is_reconnecting`
    /// changes.
    pub fn watch(&self, tell: impl Fn() + Send + 'static) {
        if let Ok(mut watcher) = self.0.watcher.lock() {
            *watcher = Some(Box::new(tell));
        }
    }
}

/// Waits `duration` unless the source is cancelled or the process
/// abandons the network meanwhile: then at once, with an error.
pub(super) fn sleep_unless_cancelled(
    duration: Duration,
    cancel: &SourceLink,
) -> Result<(), MediaError> {
    const STEP: Duration = Duration::from_millis(50);
    let deadline = std::time::Instant::now() + duration;
    loop {
        if cancel.is_cancelled() {
            return Err(MediaError::Read("abandoned".into()));
        }
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return Ok(());
        }
        std::thread::sleep(left.min(STEP));
    }
}

/// What one network source's hooks read: its whitelist, and the first URL
/// they refused. Boxed, so its address stays put while libavformat holds
/// it (the format context's `opaque`); dropped after the context.
pub(super) struct NetworkSession {
    scheme: Scheme,
    options: NetworkOptions,
    cancel: SourceLink,
    refused: Mutex<Option<String>>,
}

impl NetworkSession {
    fn refusal(&self) -> Option<String> {
        self.refused.lock().ok().and_then(|r| r.clone())
    }
}

/// An open network input and the session its hooks read, which outlives
/// it (fields drop in order).
pub struct NetworkInput {
    pub input: Input,
    _session: Box<NetworkSession>,
}

impl NetworkInput {
    /// The input, and the session to keep until after it is dropped.
    pub(super) fn into_parts(self) -> (Input, Box<NetworkSession>) {
        (self.input, self._session)
    }
}

/// Opens and probes `url`, of `scheme`, under its whitelist; `cancel`
/// abandons it (and every later read).
pub(super) fn open(
    url: &str,
    scheme: Scheme,
    cancel: &SourceLink,
) -> Result<NetworkInput, MediaError> {
    super::init_ffmpeg();
    let session = Box::new(NetworkSession {
        scheme,
        options: options(),
        cancel: cancel.clone(),
        refused: Mutex::new(None),
    });
    let capture = ErrorCapture::start();
    let opened = open_context(url, &session);
    let ffmpeg_said = capture.finish();
    let fail = |error: ff::Error| {
        if let Some(refused) = session.refusal() {
            return MediaError::Refused {
                url: url.to_owned(),
                message: refused,
            };
        }
        network_error(url, error, &ffmpeg_said)
    };
    let mut input = opened.map_err(fail)?;
    let capture = ErrorCapture::start();
    let probed = super::stream_probe::find_stream_info(&mut input);
    let ffmpeg_said = capture.finish();
    if let Err(error) = probed {
        return Err(match session.refusal() {
            Some(refused) => MediaError::Refused {
                url: url.to_owned(),
                message: refused,
            },
            None => network_error(url, error, &ffmpeg_said),
        });
    }
    Ok(NetworkInput {
        input,
        _session: session,
    })
}

/// The error a failed open or probe of `url` reports: FFmpeg's code in
/// words, and what FFmpeg logged about it (a TLS failure's reason).
fn network_error(url: &str, error: ff::Error, ffmpeg_said: &[String]) -> MediaError {
    let mut message = match error {
        ff::Error::Other { errno } if errno == nix::libc::ETIMEDOUT => format!(
            "no answer within {} s (--network-timeout)",
            options().timeout.as_secs_f64()
        ),
        ff::Error::Exit => "abandoned".to_owned(),
        other => other.to_string(),
    };
    if let Some(detail) = ffmpeg_said.last() {
        if !message.contains(detail.as_str()) {
            message.push_str(&format!(" ({detail})"));
        }
    }
    MediaError::Network {
        url: url.to_owned(),
        message,
    }
}

/// Allocates a format context with reel's hooks and opens `url` in it.
fn open_context(url: &str, session: &NetworkSession) -> Result<Input, ff::Error> {
    let c_url = CString::new(url).map_err(|_| ff::Error::InvalidData)?;
    let mut dict = Dictionary::default();
    dict.set("protocol_whitelist", session.scheme.protocol_whitelist())?;
    if session.scheme.is_rtsp() {
        // The RTSP demuxer opens its connections itself, not through
        // `io_open`: its own timeout option (microseconds).
        dict.set("timeout", &micros(session.options.timeout))?;
        if let Some(transport) = session.options.rtsp_transport.ffmpeg_name() {
            dict.set("rtsp_transport", transport)?;
        }
    }
    // SAFETY: a fresh context (null if allocation failed) gets reel's
    // io_open hook and interrupt callback, whose opaque pointers are the
    // session, which the caller keeps alive (boxed) longer than the
    // context. `c_url` outlives the call; on failure avformat_open_input
    // frees the context and sets it to null; on success `Input` takes it
    // over and closes it on drop. The dictionary is ours and freed by
    // `Dictionary`'s drop whatever libavformat left in it.
    unsafe {
        let mut ctx = ffi::avformat_alloc_context();
        if ctx.is_null() {
            return Err(ff::Error::Other {
                errno: nix::libc::ENOMEM,
            });
        }
        let opaque = std::ptr::from_ref(session).cast_mut().cast::<c_void>();
        (*ctx).opaque = opaque;
        (*ctx).io_open = Some(io_open);
        (*ctx).interrupt_callback = ffi::AVIOInterruptCB {
            callback: Some(interrupted),
            opaque,
        };
        let ret = ffi::avformat_open_input(
            &mut ctx,
            c_url.as_ptr(),
            std::ptr::null_mut(),
            dict.as_mut_ptr(),
        );
        if ret < 0 {
            return Err(ff::Error::from(ret));
        }
        Ok(Input::wrap(ctx))
    }
}

fn micros(duration: Duration) -> String {
    duration.as_micros().to_string()
}

/// libavformat's interrupt callback: non-zero abandons the blocking call.
unsafe extern "C" fn interrupted(opaque: *mut c_void) -> c_int {
    // SAFETY: the opaque pointer `open_context` set is the session, alive
    // while the context that calls back is.
    let session = unsafe { &*opaque.cast::<NetworkSession>() };
    c_int::from(session.cancel.is_cancelled())
}

/// Every connection a network source opens: refused off the whitelist,
/// else opened with the source's TLS, timeout and whitelist options.
unsafe extern "C" fn io_open(
    s: *mut ffi::AVFormatContext,
    pb: *mut *mut ffi::AVIOContext,
    url: *const c_char,
    flags: c_int,
    options: *mut *mut ffi::AVDictionary,
) -> c_int {
    // SAFETY: libavformat calls this hook with its open context (whose
    // opaque is the session `open_context` set, alive while the context
    // is), a NUL-terminated URL and a dictionary pointer that may be null.
    let (session, url_text) = unsafe {
        let session = &*(*s).opaque.cast::<NetworkSession>();
        (session, CStr::from_ptr(url).to_string_lossy().into_owned())
    };
    // SAFETY: avio_find_protocol_name takes any NUL-terminated URL and
    // returns a static name or null.
    let protocol = unsafe {
        let name = ffi::avio_find_protocol_name(url);
        (!name.is_null()).then(|| CStr::from_ptr(name).to_string_lossy().into_owned())
    };
    let whitelist = session.scheme.protocol_whitelist();
    let allowed = protocol
        .as_deref()
        .is_some_and(|p| whitelist_allows(whitelist, p));
    if !allowed {
        let what = protocol.unwrap_or_else(|| "an unknown protocol".into());
        let message = format!(
            "it names {url_text} ({what}), which a {} source may not open (allowed: {whitelist})",
            session.scheme.name()
        );
        tracing::warn!("refused: {message}");
        if let Ok(mut refused) = session.refused.lock() {
            refused.get_or_insert(message);
        }
        return ffi::AVERROR(nix::libc::EPERM);
    }
    let mut dict = Dictionary::default();
    // SAFETY: the caller's dictionary (if any) is only read (copied).
    unsafe {
        if !options.is_null() && !(*options).is_null() {
            ffi::av_dict_copy(dict.as_mut_ptr(), *options, 0);
        }
    }
    let set = dict
        .set("protocol_whitelist", whitelist)
        .and_then(|()| {
            dict.set(
                "tls_verify",
                if session.options.tls_verify { "1" } else { "0" },
            )
        })
        .and_then(|()| dict.set("rw_timeout", &micros(session.options.timeout)));
    if let Err(e) = set {
        return error_code(e);
    }
    // SAFETY: opens the URL into `pb` (libavformat's out-pointer) with the
    // context's interrupt callback; the dictionary is ours.
    unsafe {
        ffi::avio_open2(
            pb,
            url,
            flags,
            &raw const (*s).interrupt_callback,
            dict.as_mut_ptr(),
        )
    }
}

fn error_code(error: ff::Error) -> c_int {
    c_int::from(error)
}

/// An `AVDictionary` owned by reel, freed on drop.
pub(super) struct Dictionary(*mut ffi::AVDictionary);

impl Default for Dictionary {
    fn default() -> Self {
        Self(std::ptr::null_mut())
    }
}

impl Dictionary {
    pub(super) fn set(&mut self, key: &str, value: &str) -> Result<(), ff::Error> {
        let key = CString::new(key).map_err(|_| ff::Error::InvalidData)?;
        let value = CString::new(value).map_err(|_| ff::Error::InvalidData)?;
        // SAFETY: both strings are NUL-terminated and copied by av_dict_set.
        let ret = unsafe { ffi::av_dict_set(&mut self.0, key.as_ptr(), value.as_ptr(), 0) };
        if ret < 0 {
            return Err(ff::Error::from(ret));
        }
        Ok(())
    }

    pub(super) fn as_mut_ptr(&mut self) -> *mut *mut ffi::AVDictionary {
        &mut self.0
    }
}

impl Drop for Dictionary {
    fn drop(&mut self) {
        // SAFETY: the dictionary (or null) is ours; av_dict_free sets it null.
        unsafe { ffi::av_dict_free(&mut self.0) };
    }
}
