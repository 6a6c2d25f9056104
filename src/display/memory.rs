//! Shared memory: our buffers (mapped read-write into our address space,
//! handed to the compositor as a wl_shm pool or as a dmabuf), and memory the
//! compositor shares with us read-only.
//!
//! A copied frame goes to the compositor as a real dmabuf where the kernel
//! can make one from ordinary memory: `/dev/udmabuf` (pages of a sealed
//! memfd), else the system dma-heap. GPU compositors import those; a plain
//! memfd offered as a dmabuf only passes with a software renderer.

use std::ffi::CStr;
use std::fmt;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::fs::OpenOptionsExt;
use std::sync::OnceLock;

use memmap2::{Mmap, MmapMut, MmapOptions};
use nix::fcntl::{fcntl, FcntlArg, SealFlag};
use nix::sys::memfd::{memfd_create, MemFdCreateFlag};
use tracing::{debug, info};

use crate::dmabuf_sync::WriteAccess;

/// What a buffer's memory is, as the compositor receives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemoryKind {
    /// Pages of a memfd exported through `/dev/udmabuf`.
    Udmabuf,
    /// A buffer of the system dma-heap.
    DmaHeap,
    /// A plain memfd (wl_shm, or a dmabuf import only software renderers
    /// accept).
    Memfd,
}

impl fmt::Display for MemoryKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Udmabuf => "udmabuf",
            Self::DmaHeap => "dma-heap",
            Self::Memfd => "memfd",
        })
    }
}

pub struct SharedMemory {
    file: File,
    map: MmapMut,
    kind: MemoryKind,
}

impl SharedMemory {
    /// `size` bytes of a memfd (for wl_shm).
    pub fn new(size: usize) -> io::Result<Self> {
        Self::named(size, c"reel-frame")
    }

    /// `size` bytes of a memfd called `name` (as /proc/PID/fd shows it).
    pub fn named(size: usize, name: &CStr) -> io::Result<Self> {
        let file = sealable_memfd(size, name)?;
        // SAFETY: the memfd was created above and is private to this object
        // until its fd is sent to the compositor, which only reads it; the
        // mapping lives no longer than `file` (both are dropped together), and
        // the file's size is fixed at `size` before mapping.
        let map = unsafe { MmapMut::map_mut(&file)? };
        Ok(Self {
            file,
            map,
            kind: MemoryKind::Memfd,
        })
    }

    /// At least `size` bytes as a dmabuf: a udmabuf, else a dma-heap
    /// buffer, else (said once) a memfd.
    pub fn dmabuf(size: usize) -> io::Result<Self> {
        let len = size.div_ceil(page_size()) * page_size();
        let made = match udmabuf(len) {
            Ok(file) => Some((file, MemoryKind::Udmabuf)),
            Err(udmabuf_error) => match dma_heap(len) {
                Ok(file) => Some((file, MemoryKind::DmaHeap)),
                Err(heap_error) => {
                    static SAID: OnceLock<()> = OnceLock::new();
                    SAID.get_or_init(|| {
                        info!(
                            "copied frames go to the compositor as memfds (GPU compositors may \
                             refuse them): /dev/udmabuf: {udmabuf_error}; {SYSTEM_HEAP}: {heap_error}"
                        )
                    });
                    None
                }
            },
        };
        let Some((file, kind)) = made else {
            return Self::new(len);
        };
        // SAFETY: a shared mapping of the `len` bytes of a dmabuf made above
        // and private to this object until its fd is sent to the compositor,
        // which only reads it; the mapping lives no longer than `file`.
        let map = unsafe { MmapOptions::new().len(len).map_mut(&file)? };
        debug!(%kind, bytes = len, "copy buffer allocated");
        Ok(Self { file, map, kind })
    }

    pub fn kind(&self) -> MemoryKind {
        self.kind
    }

    /// The buffer's bytes, for `write` to fill; a dmabuf's writes are
    /// bracketed with DMA_BUF_IOCTL_SYNC, as non-coherent importers need.
    pub fn write<T>(&mut self, write: impl FnOnce(&mut [u8]) -> T) -> T {
        let dmabuf = (self.kind != MemoryKind::Memfd).then(|| self.file.as_fd());
        let _access = WriteAccess::start(dmabuf);
        write(&mut self.map)
    }

    #[cfg(test)]
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.map
    }
}

impl AsFd for SharedMemory {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.file.as_fd()
    }
}

fn page_size() -> usize {
    nix::unistd::sysconf(nix::unistd::SysconfVar::PAGE_SIZE)
        .ok()
        .flatten()
        .and_then(|p| usize::try_from(p).ok())
        .unwrap_or(4096)
}

fn sealable_memfd(size: usize, name: &CStr) -> io::Result<File> {
    let fd = memfd_create(
        name,
        MemFdCreateFlag::MFD_CLOEXEC | MemFdCreateFlag::MFD_ALLOW_SEALING,
    )
    .map_err(io::Error::from)?;
    let file = File::from(fd);
    file.set_len(size as u64)?;
    Ok(file)
}

/// `struct udmabuf_create` of `linux/udmabuf.h`.
#[repr(C)]
struct UdmabufCreate {
    memfd: u32,
    flags: u32,
    offset: u64,
    size: u64,
}

const UDMABUF_FLAGS_CLOEXEC: u32 = 0x01;

nix::ioctl_write_ptr!(udmabuf_create, b'u', 0x42, UdmabufCreate);

/// `len` bytes (whole pages) of a sealed memfd as a udmabuf; the memfd is
/// closed again, the dmabuf keeps its pages.
fn udmabuf(len: usize) -> io::Result<File> {
    let device = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(nix::libc::O_CLOEXEC)
        .open("/dev/udmabuf")?;
    let memfd = sealable_memfd(len, c"reel-frame")?;
    // udmabuf takes only memfds that cannot shrink under it.
    fcntl(
        memfd.as_raw_fd(),
        FcntlArg::F_ADD_SEALS(SealFlag::F_SEAL_SHRINK),
    )
    .map_err(io::Error::from)?;
    let arg = UdmabufCreate {
        memfd: memfd.as_raw_fd() as u32,
        flags: UDMABUF_FLAGS_CLOEXEC,
        offset: 0,
        size: len as u64,
    };
    // SAFETY: `device` and `memfd` are open for the call's duration and
    // `arg` a live struct udmabuf_create the kernel only reads.
    let fd = unsafe { udmabuf_create(device.as_raw_fd(), &arg) }.map_err(io::Error::from)?;
    // SAFETY: UDMABUF_CREATE returned a new descriptor that nothing else owns.
    Ok(File::from(unsafe { OwnedFd::from_raw_fd(fd) }))
}

const SYSTEM_HEAP: &str = "/dev/dma_heap/system";

/// `struct dma_heap_allocation_data` of `linux/dma-heap.h`.
#[repr(C)]
struct DmaHeapAllocation {
    len: u64,
    fd: u32,
    fd_flags: u32,
    heap_flags: u64,
}

nix::ioctl_readwrite!(dma_heap_alloc, b'H', 0x0, DmaHeapAllocation);

/// `len` bytes of the system dma-heap.
fn dma_heap(len: usize) -> io::Result<File> {
    let heap = OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_CLOEXEC)
        .open(SYSTEM_HEAP)?;
    let mut arg = DmaHeapAllocation {
        len: len as u64,
        fd: 0,
        fd_flags: (nix::libc::O_RDWR | nix::libc::O_CLOEXEC) as u32,
        heap_flags: 0,
    };
    // SAFETY: `heap` is open for the call's duration and `arg` a live struct
    // dma_heap_allocation_data the kernel reads and fills.
    unsafe { dma_heap_alloc(heap.as_raw_fd(), &mut arg) }.map_err(io::Error::from)?;
    // SAFETY: the kernel put a new descriptor that nothing else owns in `fd`.
    Ok(File::from(unsafe { OwnedFd::from_raw_fd(arg.fd as i32) }))
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

    #[test]
    fn the_request_codes_are_the_kernels() {
        // _IOW('u', 0x42, struct udmabuf_create) in linux/udmabuf.h.
        assert_eq!(
            nix::request_code_write!(b'u', 0x42, std::mem::size_of::<UdmabufCreate>()),
            0x4018_7542
        );
        // _IOWR('H', 0x0, struct dma_heap_allocation_data) in linux/dma-heap.h.
        assert_eq!(
            nix::request_code_readwrite!(b'H', 0x0, std::mem::size_of::<DmaHeapAllocation>()),
            0xc018_4800
        );
    }

    #[test]
    fn a_dmabuf_is_whole_pages_and_takes_writes() {
        // Whatever this machine offers (a memfd when it has neither
        // /dev/udmabuf nor a dma-heap).
        let mut memory = SharedMemory::dmabuf(100).unwrap();
        memory.write(|bytes| {
            assert_eq!(bytes.len() % page_size(), 0);
            assert!(bytes.len() >= 100);
            bytes[99] = 7;
        });
        assert_eq!(memory.write(|bytes| bytes[99]), 7);
    }
}
