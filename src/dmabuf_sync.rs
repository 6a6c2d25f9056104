//! CPU access to memory a device writes, bracketed with
//! `DMA_BUF_IOCTL_SYNC`: on SoCs whose caches are not coherent with the
//! decoder (most ARM boards), the CPU would otherwise read stale cache
//! lines. A [`ReadAccess`] starts the access on each dmabuf of a buffer and
//! ends it when dropped; frames the compositor imports as they are never
//! take one. A [`WriteAccess`] does the same for the CPU writing a copied
//! frame into a dmabuf the compositor then reads.

use std::os::fd::{AsRawFd, BorrowedFd};
use std::sync::atomic::{AtomicBool, Ordering};

use tracing::warn;

/// `struct dma_buf_sync` of `linux/dma-buf.h`.
#[repr(C)]
struct DmaBufSync {
    flags: u64,
}

const DMA_BUF_SYNC_READ: u64 = 1;
const DMA_BUF_SYNC_WRITE: u64 = 2;
const DMA_BUF_SYNC_START: u64 = 0;
const DMA_BUF_SYNC_END: u64 = 4;

nix::ioctl_write_ptr!(dma_buf_ioctl_sync, b'b', 0, DmaBufSync);

/// The CPU reading a set of dmabufs, from creation to drop.
pub struct ReadAccess<'a> {
    fds: Vec<BorrowedFd<'a>>,
}

/// A failed sync is said once: the access goes on (coherent memory, or a
/// kernel without the ioctl, needs none).
static WARNED: AtomicBool = AtomicBool::new(false);

fn sync(fd: BorrowedFd<'_>, flags: u64) {
    let arg = DmaBufSync { flags };
    // SAFETY: `fd` is a valid open descriptor for the call's duration and
    // `arg` a live struct dma_buf_sync the kernel only reads.
    let result = unsafe { dma_buf_ioctl_sync(fd.as_raw_fd(), &arg) };
    if let Err(e) = result {
        if !WARNED.swap(true, Ordering::Relaxed) {
            warn!("DMA_BUF_IOCTL_SYNC: {e} (accessing the buffer without it)");
        }
    }
}

impl<'a> ReadAccess<'a> {
    /// Starts reading `fds` (DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ).
    pub fn start(fds: impl IntoIterator<Item = BorrowedFd<'a>>) -> Self {
        let fds: Vec<BorrowedFd<'a>> = fds.into_iter().collect();
        for &fd in &fds {
            sync(fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
        }
        Self { fds }
    }

    /// Memory the CPU owns: nothing to bracket.
    pub fn none() -> Self {
        Self { fds: Vec::new() }
    }
}

impl Drop for ReadAccess<'_> {
    fn drop(&mut self) {
        for &fd in &self.fds {
            sync(fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
        }
    }
}

/// The CPU writing one dmabuf, from creation to drop.
pub struct WriteAccess<'a> {
    fd: Option<BorrowedFd<'a>>,
}

impl<'a> WriteAccess<'a> {
    /// Starts writing `fd` (DMA_BUF_SYNC_START | DMA_BUF_SYNC_WRITE); None:
    /// memory that is no dmabuf, nothing to bracket.
    pub fn start(fd: Option<BorrowedFd<'a>>) -> Self {
        if let Some(fd) = fd {
            sync(fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_WRITE);
        }
        Self { fd }
    }
}

impl Drop for WriteAccess<'_> {
    fn drop(&mut self) {
        if let Some(fd) = self.fd {
            sync(fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_WRITE);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    #[test]
    fn a_descriptor_that_is_no_dmabuf_is_read_anyway() {
        let file = std::fs::File::open("/dev/null").unwrap();
        let access = ReadAccess::start([file.as_fd()]);
        assert_eq!(access.fds.len(), 1);
        drop(access);
        assert!(WARNED.load(Ordering::Relaxed), "the failure is said once");
        assert!(ReadAccess::none().fds.is_empty());
    }

    #[test]
    fn the_request_code_is_the_kernels() {
        // _IOW('b', 0, struct dma_buf_sync) in linux/dma-buf.h.
        assert_eq!(
            nix::request_code_write!(b'b', 0, std::mem::size_of::<DmaBufSync>()),
            0x4008_6200
        );
    }
}
