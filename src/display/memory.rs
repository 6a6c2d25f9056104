//! Shared memory for buffers: one memfd, mapped read-write into our address
//! space, handed to the compositor as a wl_shm pool or as a dmabuf plane.

use std::ffi::CStr;
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd};

use memmap2::MmapMut;
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
