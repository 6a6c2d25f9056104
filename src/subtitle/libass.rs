//! libass, the field's subtitle renderer (Debian's libass9): the few calls
//! reel makes, behind safe owners. A track holds ASS events (every text
//! format arrives as ASS lines from libavcodec); the renderer turns the
//! track at a time into alpha bitmaps with a colour each.

use std::ffi::{c_char, c_int, c_longlong, c_uint, c_void, CStr, CString};
use std::ptr::NonNull;

use tracing::{debug, trace, warn};

#[repr(C)]
struct AssLibrary {
    _opaque: [u8; 0],
}
#[repr(C)]
struct AssRenderer {
    _opaque: [u8; 0],
}
#[repr(C)]
struct AssTrack {
    _opaque: [u8; 0],
}

/// libass's `ASS_Image` (ass.h, 0.17): one alpha bitmap and its colour.
#[repr(C)]
struct AssImage {
    w: c_int,
    h: c_int,
    stride: c_int,
    bitmap: *const u8,
    /// RGBA; A is transparency (0: opaque).
    color: u32,
    dst_x: c_int,
    dst_y: c_int,
    next: *const AssImage,
    kind: c_uint,
}

/// The message callback receives the format and its `va_list`; `va_list`
/// arrives as a pointer on x86-64 and AArch64 alike, and is not read.
type MessageCallback =
    extern "C" fn(level: c_int, format: *const c_char, args: *mut c_void, data: *mut c_void);

/// `ASS_FONTPROVIDER_AUTODETECT`: fontconfig on Debian.
const FONT_PROVIDER_AUTODETECT: c_int = 1;

#[link(name = "ass")]
extern "C" {
    fn ass_library_init() -> *mut AssLibrary;
    fn ass_library_done(library: *mut AssLibrary);
    fn ass_set_message_cb(library: *mut AssLibrary, callback: MessageCallback, data: *mut c_void);
    fn ass_set_extract_fonts(library: *mut AssLibrary, extract: c_int);
    fn ass_renderer_init(library: *mut AssLibrary) -> *mut AssRenderer;
    fn ass_renderer_done(renderer: *mut AssRenderer);
    fn ass_set_frame_size(renderer: *mut AssRenderer, w: c_int, h: c_int);
    fn ass_set_storage_size(renderer: *mut AssRenderer, w: c_int, h: c_int);
    fn ass_set_fonts(
        renderer: *mut AssRenderer,
        default_font: *const c_char,
        default_family: *const c_char,
        provider: c_int,
        config: *const c_char,
        update: c_int,
    );
    fn ass_render_frame(
        renderer: *mut AssRenderer,
        track: *mut AssTrack,
        now: c_longlong,
        detect_change: *mut c_int,
    ) -> *const AssImage;
    fn ass_new_track(library: *mut AssLibrary) -> *mut AssTrack;
    fn ass_free_track(track: *mut AssTrack);
    fn ass_process_codec_private(track: *mut AssTrack, data: *mut c_char, size: c_int);
    fn ass_process_chunk(
        track: *mut AssTrack,
        data: *mut c_char,
        size: c_int,
        timecode: c_longlong,
        duration: c_longlong,
    );
}

/// libass's own messages: its errors (level 0-1) as warnings, the rest at
/// trace. Only the format is logged: its arguments are a `va_list`.
extern "C" fn on_message(level: c_int, format: *const c_char, _: *mut c_void, _: *mut c_void) {
    if format.is_null() {
        return;
    }
    // SAFETY: libass passes a NUL-terminated format string, valid for the
    // call.
    let text = unsafe { CStr::from_ptr(format) }.to_string_lossy();
    if level <= 1 {
        warn!("libass: {}", text.trim_end());
    } else {
        trace!(level, "libass: {}", text.trim_end());
    }
}

#[derive(Debug, thiserror::Error)]
pub enum AssError {
    #[error("libass could not be initialised")]
    Init,
    #[error("libass could not make a renderer")]
    Renderer,
    #[error("libass could not make a track")]
    Track,
}

/// One libass library with its renderer and one track: a subtitle stream
/// ready to be drawn. Lives on the player's thread.
pub struct Ass {
    library: NonNull<AssLibrary>,
    renderer: NonNull<AssRenderer>,
    track: NonNull<AssTrack>,
    frame: (u32, u32),
}

/// One bitmap of a rendered frame.
#[derive(Debug, Clone, Copy)]
pub struct Glyphs<'a> {
    pub width: usize,
    pub height: usize,
    pub stride: usize,
    pub alpha: &'a [u8],
    /// 0xRRGGBBTT, TT the transparency.
    pub color: u32,
    pub x: i32,
    pub y: i32,
}

impl Ass {
    /// A renderer with fonts from fontconfig, and an empty track.
    pub fn new() -> Result<Self, AssError> {
        // SAFETY: plain constructor; a null return is checked.
        let library = NonNull::new(unsafe { ass_library_init() }).ok_or(AssError::Init)?;
        // SAFETY: `library` is live; the callback is a plain function that
        // outlives it and reads only the format string.
        unsafe {
            ass_set_message_cb(library.as_ptr(), on_message, std::ptr::null_mut());
            ass_set_extract_fonts(library.as_ptr(), 1);
        }
        // SAFETY: `library` is live; a null return is checked.
        let Some(renderer) = NonNull::new(unsafe { ass_renderer_init(library.as_ptr()) }) else {
            // SAFETY: made above, not used after.
            unsafe { ass_library_done(library.as_ptr()) };
            return Err(AssError::Renderer);
        };
        // SAFETY: `library` is live; a null return is checked.
        let Some(track) = NonNull::new(unsafe { ass_new_track(library.as_ptr()) }) else {
            // SAFETY: made above, not used after.
            unsafe {
                ass_renderer_done(renderer.as_ptr());
                ass_library_done(library.as_ptr());
            }
            return Err(AssError::Track);
        };
        let family = c"sans-serif";
        // SAFETY: `renderer` is live; the strings are NUL-terminated and
        // copied by libass.
        unsafe {
            ass_set_fonts(
                renderer.as_ptr(),
                std::ptr::null(),
                family.as_ptr(),
                FONT_PROVIDER_AUTODETECT,
                std::ptr::null(),
                1,
            );
        }
        debug!("libass renderer ready");
        Ok(Self {
            library,
            renderer,
            track,
            frame: (0, 0),
        })
    }

    /// The track's header: `[Script Info]` and `[V4+ Styles]` (an ASS
    /// file's, or the one libavcodec writes for text formats).
    pub fn set_header(&mut self, header: &[u8]) {
        let mut bytes = header.to_vec();
        let Ok(size) = c_int::try_from(bytes.len()) else {
            warn!("subtitle header too large, ignored");
            return;
        };
        // SAFETY: `track` is live; libass reads `size` bytes and copies
        // what it keeps.
        unsafe { ass_process_codec_private(self.track.as_ptr(), bytes.as_mut_ptr().cast(), size) };
    }

    /// One event: a Matroska-style ASS line (`ReadOrder,Layer,Style,...`)
    /// shown from `start_ms` for `duration_ms`.
    pub fn add_event(&mut self, line: &str, start_ms: i64, duration_ms: i64) {
        let Ok(mut line) = CString::new(line) else {
            return;
        };
        let size = line.as_bytes().len();
        let Ok(size) = c_int::try_from(size) else {
            return;
        };
        let mut bytes = std::mem::take(&mut line).into_bytes_with_nul();
        // SAFETY: `track` is live; libass reads `size` bytes and copies
        // the event.
        unsafe {
            ass_process_chunk(
                self.track.as_ptr(),
                bytes.as_mut_ptr().cast(),
                size,
                start_ms,
                duration_ms,
            );
        }
    }

    /// Draws for a `width` x `height` surface (buffer pixels), the video
    /// `video` pixels large inside it (its aspect for the script).
    pub fn set_frame(&mut self, width: u32, height: u32, video: (u32, u32)) {
        if self.frame == (width, height) {
            return;
        }
        self.frame = (width, height);
        let int = |v: u32| c_int::try_from(v).unwrap_or(c_int::MAX);
        // SAFETY: `renderer` is live.
        unsafe {
            ass_set_frame_size(self.renderer.as_ptr(), int(width), int(height));
            ass_set_storage_size(self.renderer.as_ptr(), int(video.0), int(video.1));
        }
    }

    /// The bitmaps at `now_ms`, and whether they differ from the last
    /// call's; `draw` gets each bitmap in order (back to front).
    pub fn render(&mut self, now_ms: i64, mut draw: impl FnMut(Glyphs<'_>)) -> bool {
        if self.frame.0 == 0 || self.frame.1 == 0 {
            return false;
        }
        let mut changed: c_int = 0;
        // SAFETY: renderer and track are live; the images stay valid
        // until the next render call or the renderer's end, both after
        // this function.
        let mut image = unsafe {
            ass_render_frame(
                self.renderer.as_ptr(),
                self.track.as_ptr(),
                now_ms,
                &mut changed,
            )
        };
        while !image.is_null() {
            // SAFETY: non-null images from libass are valid (see above).
            let current = unsafe { &*image };
            let (width, height, stride) = (
                usize::try_from(current.w).unwrap_or(0),
                usize::try_from(current.h).unwrap_or(0),
                usize::try_from(current.stride).unwrap_or(0),
            );
            if width > 0 && height > 0 && stride >= width && !current.bitmap.is_null() {
                let len = stride * (height - 1) + width;
                // SAFETY: libass's bitmap holds `h` rows of `stride`
                // bytes, the last at least `w` long.
                let alpha = unsafe { std::slice::from_raw_parts(current.bitmap, len) };
                draw(Glyphs {
                    width,
                    height,
                    stride,
                    alpha,
                    color: current.color,
                    x: current.dst_x,
                    y: current.dst_y,
                });
            }
            image = current.next;
        }
        changed != 0
    }
}

impl Drop for Ass {
    fn drop(&mut self) {
        // SAFETY: all three were made in `new` and are freed once, the
        // track and renderer before their library.
        unsafe {
            ass_free_track(self.track.as_ptr());
            ass_renderer_done(self.renderer.as_ptr());
            ass_library_done(self.library.as_ptr());
        }
    }
}
