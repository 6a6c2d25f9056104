//! FFmpeg's log messages, re-emitted through `tracing` (target `ffmpeg`) so
//! that reel's stderr has one format and one filter (`RUST_LOG`).
//!
//! libav* "errors" are mostly recoverable events (a concealed slice, a
//! damaged packet) that reel reports itself when they matter, so they map
//! one level down: error -> WARN, warning -> INFO, info -> DEBUG, rest -> TRACE.

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
    if !enabled {
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
    match level {
        l if l <= ffi::AV_LOG_ERROR => tracing::warn!(target: "ffmpeg", "{text}"),
        l if l <= ffi::AV_LOG_WARNING => tracing::info!(target: "ffmpeg", "{text}"),
        l if l <= ffi::AV_LOG_INFO => tracing::debug!(target: "ffmpeg", "{text}"),
        _ => tracing::trace!(target: "ffmpeg", "{text}"),
    }
}
