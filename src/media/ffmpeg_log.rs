//! FFmpeg's log messages, re-emitted through `tracing` (target `ffmpeg`) so
//! that reel's stderr has one format and one filter (`RUST_LOG`).
//!
//! libav* "errors" are mostly recoverable events (a concealed slice, a
//! damaged packet) that reel reports itself when they matter, so they map
//! one level down: error -> WARN, warning -> INFO, info -> DEBUG, rest -> TRACE.

use std::cell::RefCell;
use std::ffi::{c_char, c_int, c_void, CStr};

use ffmpeg_next::ffi;

/// Installs the bridge. On architectures where reel does not know the
/// `va_list` ABI of the callback, FFmpeg keeps printing to stderr itself.
pub fn install() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `callback` has the signature libavutil expects on x86_64
    // (va_list passed as a pointer to `__va_list_tag`) and is thread-safe.
    unsafe {
        ffi::av_log_set_callback(Some(callback));
    }
}

thread_local! {
    /// FFmpeg's error lines logged on this thread while an `ErrorCapture`
    /// lives (None otherwise).
    static CAPTURED: RefCell<Option<Vec<String>>> = const { RefCell::new(None) };
}

/// FFmpeg's error messages logged on this thread between `start` and
/// `finish`: what an error code alone does not say (why a TLS handshake
/// or an HTTP request failed), for the error reel reports.
pub struct ErrorCapture(());

impl ErrorCapture {
    pub fn start() -> Self {
        CAPTURED.with(|c| *c.borrow_mut() = Some(Vec::new()));
        Self(())
    }

    /// The lines captured, oldest first.
    pub fn finish(self) -> Vec<String> {
        CAPTURED.with(|c| c.borrow_mut().take()).unwrap_or_default()
    }
}

impl Drop for ErrorCapture {
    fn drop(&mut self) {
        CAPTURED.with(|c| c.borrow_mut().take());
    }
}

fn capturing() -> bool {
    CAPTURED.with(|c| c.borrow().is_some())
}

fn capture(line: &str) {
    CAPTURED.with(|c| {
        if let Some(lines) = c.borrow_mut().as_mut() {
            lines.push(line.to_owned());
        }
    });
}

#[cfg(target_arch = "x86_64")]
unsafe extern "C" fn callback(
    avcl: *mut c_void,
    level: c_int,
    fmt: *const c_char,
    args: *mut ffi::__va_list_tag,
) {
    // SAFETY: reads libavutil's global level.
    if level > unsafe { ffi::av_log_get_level() } {
        return;
    }
    let enabled = match level {
        l if l <= ffi::AV_LOG_ERROR => tracing::enabled!(target: "ffmpeg", tracing::Level::WARN),
        l if l <= ffi::AV_LOG_WARNING => tracing::enabled!(target: "ffmpeg", tracing::Level::INFO),
        l if l <= ffi::AV_LOG_INFO => tracing::enabled!(target: "ffmpeg", tracing::Level::DEBUG),
        _ => tracing::enabled!(target: "ffmpeg", tracing::Level::TRACE),
    };
    let captured = level <= ffi::AV_LOG_ERROR && capturing();
    if !enabled && !captured {
        return;
    }
    let mut line = [0 as c_char; 1024];
    let mut print_prefix: c_int = 1;
    // SAFETY: arguments are passed through from libavutil unchanged; the
    // output buffer and its size are ours, and the result is NUL-terminated.
    let text = unsafe {
        ffi::av_log_format_line2(
            avcl,
            level,
            fmt,
            args,
            line.as_mut_ptr(),
            line.len() as c_int,
            &mut print_prefix,
        );
        CStr::from_ptr(line.as_ptr()).to_string_lossy()
    };
    let text = text.trim_end();
    if text.is_empty() {
        return;
    }
    if captured {
        capture(text.rsplit("] ").next().unwrap_or(text));
    }
    if !enabled {
        return;
    }
    match level {
        l if l <= ffi::AV_LOG_ERROR => tracing::warn!(target: "ffmpeg", "{text}"),
        l if l <= ffi::AV_LOG_WARNING => tracing::info!(target: "ffmpeg", "{text}"),
        l if l <= ffi::AV_LOG_INFO => tracing::debug!(target: "ffmpeg", "{text}"),
        _ => tracing::trace!(target: "ffmpeg", "{text}"),
    }
}
