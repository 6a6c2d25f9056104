//! Shared memory: our buffers (one memfd, mapped read-write into our
//! address space, handed to the compositor as a wl_shm pool or as a dmabuf
//! plane), and memory the compositor shares with us read-only.

use std::ffi::CStr;
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd};

use memmap2::{Mmap, MmapMut, MmapOptions};
use nix::sys::memfd::{memfd_create, MemFdCreateFlag};

pub struct SharedMemory {
    file: File,
    map: MmapMut,
}

impl SharedMemory {
    pub fn new(size: usize) -> io::Result<Self> {
        let name: &CStr = c"reel-frame";
        let fd = memfd_create(
            name,
            MemFdCreateFlag::MFD_CLOEXEC | MemFdCreateFlag::MFD_ALLOW_SEALING,
        )
        .map_err(io::Error::from)?;
        let file = File::from(fd);
        file.set_len(size as u64)?;
        // SAFETY: the memfd was created above and is private to this object
        // until its fd is sent to the compositor, which only reads it; the
        // mapping lives no longer than `file` (both are dropped together), and
        // the file's size is fixed at `size` before mapping.
        let map = unsafe { MmapMut::map_mut(&file)? };
        Ok(Self { file, map })
    }

    pub fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.map
    }
}

impl AsFd for SharedMemory {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.file.as_fd()
    }
}

/// Maps the first `len` bytes of a file the compositor sent (the dmabuf
/// feedback's format table) privately and read-only, as the protocol asks:
/// the compositor may share one file with every client.
pub fn map_shared_read_only(file: &File, len: usize) -> io::Result<Mmap> {
    let file_len = file.metadata()?.len();
    if (len as u64) > file_len {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{len} bytes announced, the file has {file_len}"),
        ));
    }
    // SAFETY: a private read-only mapping of `len` bytes, checked above to
    // lie within the file; the protocol forbids the compositor to change
    // the table after sending it, and the mapping does not outlive the
    // parse of it (the caller drops it right after).
    unsafe { MmapOptions::new().len(len).map_copy_read_only(file) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_shared_table_is_mapped_and_a_short_file_refused() {
        let mut memory = SharedMemory::new(32).unwrap();
        memory.bytes_mut()[..4].copy_from_slice(b"NV12");
        let file = File::from(memory.as_fd().try_clone_to_owned().unwrap());
        let map = map_shared_read_only(&file, 32).unwrap();
        assert_eq!(&map[..4], b"NV12");
        assert!(map_shared_read_only(&file, 33).is_err());
        let mut other = memfd();
        other.write_all(&[1; 16]).unwrap();
        assert_eq!(map_shared_read_only(&other, 16).unwrap()[15], 1);
    }

    fn memfd() -> File {
        let fd = memfd_create(c"reel-test", MemFdCreateFlag::MFD_CLOEXEC).unwrap();
        File::from(fd)
    }
}
