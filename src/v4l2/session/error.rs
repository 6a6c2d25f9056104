//! What can go wrong in a session, and which of it the stream survives.

use std::time::Duration;

use v4l2r::nix::errno::Errno;
use v4l2r::QueueType;

use crate::v4l2::controls::control_name;
use crate::v4l2::node::NodeError;

#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error(transparent)]
    Node(#[from] NodeError),
    #[error("{ioctl} failed: {errno}")]
    Ioctl { ioctl: &'static str, errno: Errno },
    #[error("{queue:?} buffers: {reason}")]
    Buffers { queue: QueueType, reason: String },
    #[error("coded format {0} refused by the driver")]
    CodedFormat(String),
    #[error("no CAPTURE format reel can use among {0}")]
    NoCaptureFormat(String),
    #[error(
        "S_EXT_CTRLS refused {}: {errno} (error_idx {error_idx} of {count})",
        failing_control.map(control_name).unwrap_or_else(|| "the control set (no single control named)".into())
    )]
    Controls {
        errno: Errno,
        error_idx: u32,
        count: u32,
        /// The control at `error_idx`, when the kernel named one.
        failing_control: Option<u32>,
    },
    #[error("request lacks required control {}", control_name(*.0))]
    MissingControl(u32),
    #[error("bitstream of {size} bytes does not fit an OUTPUT buffer of {capacity} bytes")]
    BitstreamTooLarge { size: usize, capacity: usize },
    #[error("empty bitstream")]
    EmptyBitstream,
    #[error("the player is closing: no new CAPTURE buffers are allocated")]
    PresenterClosed,
    #[error("timestamp {0} ns is not a whole number of microseconds (V4L2 keeps a timeval)")]
    TimestampPrecision(u64),
    #[error("timestamp {0} ns is already used by a picture in flight or held")]
    DuplicateTimestamp(u64),
    #[error("no free CAPTURE buffer: all {count} are held by frames or references")]
    NoCaptureBuffer { count: usize },
    #[error("all {limit} requests are in flight")]
    NoFreeRequest { limit: usize },
    #[error("decode request with timestamp {timestamp_ns} ns did not complete within {waited:?}")]
    RequestTimeout { timestamp_ns: u64, waited: Duration },
    #[error(
        "out of CAPTURE memory: the driver granted {granted} buffers, decoding needs {needed}"
    )]
    OutOfCaptureMemory { granted: u32, needed: u32 },
}

impl SessionError {
    /// EBUSY from `path`, naming the processes that hold it.
    pub(crate) fn busy(path: &std::path::Path) -> Self {
        NodeError::busy(path).into()
    }

    pub(crate) fn ioctl(ioctl: &'static str, errno: Errno) -> Self {
        Self::Ioctl { ioctl, errno }
    }

    /// Whether the device itself is gone: its node unregistered (driver
    /// unbound or unloaded, a USB or PCIe decoder removed: ENODEV, ENXIO).
    /// No later request can succeed; nothing is worth retrying.
    pub fn is_device_lost(&self) -> bool {
        const LOST: [Errno; 2] = [Errno::ENODEV, Errno::ENXIO];
        match self {
            Self::Ioctl { errno, .. } | Self::Controls { errno, .. } => LOST.contains(errno),
            Self::Node(NodeError::Open { source, .. }) => source
                .raw_os_error()
                .is_some_and(|e| LOST.contains(&Errno::from_raw(e)) || e == Errno::EIO as i32),
            _ => false,
        }
    }

    /// Whether the device lacks the memory for this stream's buffers
    /// (ENOMEM allocating them, or fewer granted than decoding needs): on a
    /// board, its CMA pool is too small for them. Another decoder may
    /// decode the stream.
    pub fn is_out_of_memory(&self) -> bool {
        matches!(
            self,
            Self::OutOfCaptureMemory { .. }
                | Self::Ioctl {
                    errno: Errno::ENOMEM,
                    ..
                }
        )
    }

    /// Whether the device failed one operation mid-stream but may work
    /// again once the session is reset: EIO (the error state vb2 enters on
    /// a hardware fault, which STREAMOFF clears; POLLERR on a request) or
    /// EBUSY from a queue or request ioctl. The decoder resets and resumes
    /// at the next key frame; several in a row make the device count as
    /// failed.
    pub fn is_transient_fault(&self) -> bool {
        matches!(
            self,
            Self::Ioctl {
                errno: Errno::EIO | Errno::EBUSY,
                ..
            }
        )
    }

    /// Whether later requests can still succeed, decoding resuming at the
    /// next keyframe: these concern one picture rather than the device
    /// (its controls or bitstream refused, empty or too large, no free
    /// CAPTURE buffer for it, its timestamp already in use, or the driver
    /// not finishing it in time, after which the session is reset) and cost
    /// that picture only. The others (opening, formats, buffers, a failed
    /// ioctl on the queues, a reallocation with frames alive) say that the
    /// device or the session cannot go on, which ends the stream. Callers
    /// decide from this rather than from the variants.
    pub fn is_recoverable(&self) -> bool {
        matches!(
            self,
            Self::Controls { .. }
                | Self::MissingControl(_)
                | Self::BitstreamTooLarge { .. }
                | Self::EmptyBitstream
                | Self::RequestTimeout { .. }
                | Self::NoCaptureBuffer { .. }
                | Self::DuplicateTimestamp(_)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_vanished_node_is_lost_a_faulting_queue_is_reset() {
        let ioctl = |errno| SessionError::ioctl("MEDIA_REQUEST_IOC_QUEUE", errno);
        for errno in [Errno::ENODEV, Errno::ENXIO] {
            assert!(ioctl(errno).is_device_lost(), "{errno}");
            assert!(!ioctl(errno).is_transient_fault(), "{errno}");
        }
        for errno in [Errno::EIO, Errno::EBUSY] {
            assert!(!ioctl(errno).is_device_lost(), "{errno}");
            assert!(ioctl(errno).is_transient_fault(), "{errno}");
        }
        // A request refused for its content is the picture's, not the
        // device's.
        assert!(!ioctl(Errno::EINVAL).is_transient_fault());
        assert!(!ioctl(Errno::EINVAL).is_device_lost());
        let timeout = SessionError::RequestTimeout {
            timestamp_ns: 1000,
            waited: Duration::from_secs(1),
        };
        assert!(!timeout.is_transient_fault() && !timeout.is_device_lost());
    }
}
