//! The media request pool: requests are allocated from the media node on
//! demand (at most one per OUTPUT buffer) and re-initialised for reuse once
//! their decode completed.

use std::fs::File;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::time::Duration;

use v4l2r::ioctl::Request;
use v4l2r::nix::errno::Errno;
use v4l2r::nix::poll::{poll, PollFd, PollFlags, PollTimeout};

use super::error::SessionError;

pub struct RequestPool {
    media: File,
    idle: Vec<Request>,
    allocated: usize,
    limit: usize,
}

fn request_errno(e: v4l2r::ioctl::RequestError) -> Errno {
    match e {
        v4l2r::ioctl::RequestError::IoctlError(errno) => errno,
        _ => Errno::EINVAL,
    }
}

impl RequestPool {
    pub fn new(media: File, limit: usize) -> Self {
        Self {
            media,
            idle: Vec::new(),
            allocated: 0,
            limit,
        }
    }

    /// An idle request, allocating one if the pool is below its limit.
    pub fn take(&mut self) -> Result<Request, SessionError> {
        if let Some(request) = self.idle.pop() {
            return Ok(request);
        }
        if self.allocated >= self.limit {
            return Err(SessionError::NoFreeRequest { limit: self.limit });
        }
        let request = Request::alloc(&self.media)
            .map_err(|e| SessionError::ioctl("MEDIA_IOC_REQUEST_ALLOC", request_errno(e)))?;
        self.allocated += 1;
        Ok(request)
    }

    /// Returns a completed (or never queued) request: REINIT makes it
    /// reusable; one that cannot be re-initialised is closed instead.
    pub fn give_back(&mut self, request: Request) {
        match request.reinit() {
            Ok(()) => self.idle.push(request),
            Err(e) => {
                tracing::warn!("MEDIA_REQUEST_IOC_REINIT failed ({e}); closing the request");
                self.allocated -= 1;
            }
        }
    }

    /// Forgets a request that is still queued (after a reset): closing it
    /// is safe, the kernel keeps what it needs until completion.
    pub fn discard(&mut self, request: Request) {
        drop(request);
        self.allocated -= 1;
    }

    /// A new bound on requests (one per OUTPUT buffer after reallocation).
    pub fn set_limit(&mut self, limit: usize) {
        self.limit = limit;
        while self.allocated > limit {
            match self.idle.pop() {
                Some(request) => self.discard(request),
                None => break,
            }
        }
    }

    pub fn allocated(&self) -> usize {
        self.allocated
    }
}

/// Queues `request` (MEDIA_REQUEST_IOC_QUEUE).
pub fn queue(request: &Request) -> Result<(), SessionError> {
    request
        .queue()
        .map_err(|e| SessionError::ioctl("MEDIA_REQUEST_IOC_QUEUE", request_errno(e)))
}

/// Waits up to `timeout` for `request` to complete (POLLPRI on its fd).
pub fn wait_complete(request: &Request, timeout: Duration) -> Result<bool, SessionError> {
    // SAFETY: `request` owns the fd and outlives this borrow.
    let fd = unsafe { BorrowedFd::borrow_raw(request.as_raw_fd()) };
    let millis = timeout.as_millis().min(i32::MAX as u128) as i32;
    let timeout = PollTimeout::try_from(millis).unwrap_or(PollTimeout::MAX);
    let mut fds = [PollFd::new(fd, PollFlags::POLLPRI)];
    loop {
        match poll(&mut fds, timeout) {
            Ok(0) => return Ok(false),
            Ok(_) => {
                let revents = fds[0].revents().unwrap_or(PollFlags::empty());
                if revents.intersects(PollFlags::POLLERR | PollFlags::POLLNVAL) {
                    return Err(SessionError::ioctl("poll(request)", Errno::EIO));
                }
                return Ok(revents.contains(PollFlags::POLLPRI));
            }
            Err(Errno::EINTR) => continue,
            Err(e) => return Err(SessionError::ioctl("poll(request)", e)),
        }
    }
}
