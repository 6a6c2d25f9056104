//! The demuxer's input: the file read through an I/O context of reel's own
//! with a small buffer.
//!
//! libavformat reads a packet larger than its I/O buffer straight into the
//! packet (one read(2) of the packet's bytes) and a smaller one through the
//! buffer (read into the buffer, then copied). The file protocol's buffer
//! is 32 KiB, larger than most video packets: every one of them was copied
//! once more than it needs to be. With 4 KiB, a video packet is read into
//! its own memory by the kernel, as GStreamer's demuxers pull it; header
//! parsing and small packets still go through the buffer.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::os::raw::{c_int, c_void};
use std::path::Path;

use ffmpeg_next::ffi;
use nix::libc;

/// Packets larger than this are read straight into their own buffer.
const BUFFER_SIZE: usize = 4096;

/// An open file as libavformat's `AVIOContext`, freed on drop (after the
/// format context using it is closed: `FfmpegDemuxer` drops it last).
pub(super) struct FileIo {
    context: *mut ffi::AVIOContext,
    /// The `opaque` the callbacks read through.
    file: *mut File,
}

// SAFETY: the context and the file are owned by this value alone and used
// only by the one format context it is given to, which moves with it.
unsafe impl Send for FileIo {}

impl FileIo {
    pub fn open(path: &Path) -> std::io::Result<FileIo> {
        let file = Box::into_raw(Box::new(File::open(path)?));
        // SAFETY: av_malloc returns a buffer of BUFFER_SIZE bytes or null;
        // avio_alloc_context takes it over (it may replace it; the one in
        // use is freed in drop) and keeps `file` as the opaque pointer the
        // callbacks get, which lives until drop.
        let context = unsafe {
            let buffer = ffi::av_malloc(BUFFER_SIZE).cast::<u8>();
            if buffer.is_null() {
                drop(Box::from_raw(file));
                return Err(std::io::ErrorKind::OutOfMemory.into());
            }
            let context = ffi::avio_alloc_context(
                buffer,
                BUFFER_SIZE as c_int,
                0,
                file.cast::<c_void>(),
                Some(read_packet),
                None,
                Some(seek),
            );
            if context.is_null() {
                ffi::av_free(buffer.cast());
                drop(Box::from_raw(file));
                return Err(std::io::ErrorKind::OutOfMemory.into());
            }
            context
        };
        Ok(FileIo { context, file })
    }

    /// The context to set as a format context's `pb`.
    pub fn as_ptr(&self) -> *mut ffi::AVIOContext {
        self.context
    }
}

impl Drop for FileIo {
    fn drop(&mut self) {
        // SAFETY: the context and file were made in `open` and are freed
        // once, here; the buffer is the one the context uses now (allocated
        // with av_malloc by us or by libavformat).
        unsafe {
            ffi::av_freep((&raw mut (*self.context).buffer).cast());
            ffi::avio_context_free(&mut self.context);
            drop(Box::from_raw(self.file));
        }
    }
}

/// FFmpeg's error code for an I/O error: the negated errno.
fn averror(error: &std::io::Error) -> c_int {
    -error.raw_os_error().unwrap_or(libc::EIO)
}

/// libavformat's read callback: up to `size` bytes of the file into `buf`.
unsafe extern "C" fn read_packet(opaque: *mut c_void, buf: *mut u8, size: c_int) -> c_int {
    let Ok(size) = usize::try_from(size) else {
        return ffi::AVERROR_EOF;
    };
    // SAFETY: `opaque` is the `File` FileIo owns (alive while the context
    // is), and libavformat hands a writable buffer of `size` bytes.
    let (file, out) = unsafe {
        (
            &mut *opaque.cast::<File>(),
            std::slice::from_raw_parts_mut(buf, size),
        )
    };
    match file.read(out) {
        Ok(0) => ffi::AVERROR_EOF,
        Ok(n) => n as c_int,
        Err(e) => averror(&e),
    }
}

/// libavformat's seek callback (`AVSEEK_SIZE` asks for the file's size).
unsafe extern "C" fn seek(opaque: *mut c_void, offset: i64, whence: c_int) -> i64 {
    // SAFETY: as in `read_packet`.
    let file = unsafe { &mut *opaque.cast::<File>() };
    let whence = whence & !ffi::AVSEEK_FORCE;
    let target = match whence {
        ffi::AVSEEK_SIZE => {
            return match file.metadata() {
                Ok(meta) => i64::try_from(meta.len()).unwrap_or(i64::MAX),
                Err(e) => i64::from(averror(&e)),
            };
        }
        libc::SEEK_SET => match u64::try_from(offset) {
            Ok(at) => SeekFrom::Start(at),
            Err(_) => return i64::from(-libc::EINVAL),
        },
        libc::SEEK_CUR => SeekFrom::Current(offset),
        libc::SEEK_END => SeekFrom::End(offset),
        _ => return i64::from(-libc::EINVAL),
    };
    match file.seek(target) {
        Ok(at) => i64::try_from(at).unwrap_or(i64::MAX),
        Err(e) => i64::from(averror(&e)),
    }
}
