//! Small ioctl helpers shared by set-up and the request path: opening a
//! node, S_EXT_CTRLS with the refused control named, and the timestamps a
//! V4L2 buffer carries.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::Path;

use v4l2r::bindings::{self, v4l2_ext_control};
use v4l2r::ioctl::{self, CtrlWhich, Request};
use v4l2r::nix::errno::Errno;

use super::error::SessionError;
use crate::v4l2::controls::ExtControl;
use crate::v4l2::node;

pub(super) fn open_node(path: &Path) -> Result<File, SessionError> {
    Ok(node::open(path)?)
}

pub(super) fn errno_of(e: impl ioctl::IntoErrno) -> Errno {
    Errno::from_raw(e.into_errno())
}

pub(super) fn timeval_of(ns: u64) -> (i64, i64) {
    (
        (ns / 1_000_000_000) as i64,
        ((ns % 1_000_000_000) / 1000) as i64,
    )
}

pub(super) fn ns_of(tv: bindings::timeval) -> u64 {
    (tv.tv_sec as u64) * 1_000_000_000 + (tv.tv_usec as u64) * 1000
}

/// S_EXT_CTRLS of `controls` (`request` = None: current values).
pub(super) fn set_controls(
    video: &File,
    request: Option<&Request>,
    controls: &[ExtControl],
) -> Result<(), SessionError> {
    if controls.is_empty() {
        return Ok(());
    }
    let mut raw: Vec<v4l2_ext_control> = controls.iter().map(ExtControl::raw).collect();
    let which = match request {
        Some(r) => CtrlWhich::Request(r.as_raw_fd()),
        None => CtrlWhich::Current,
    };
    ioctl::s_ext_ctrls(video, which, raw.as_mut_slice()).map_err(|e| {
        let ioctl::ExtControlErrorType::IoctlError(errno) = e.error;
        let count = controls.len() as u32;
        // error_idx == count: the kernel did not say which control (it does
        // so for request controls it cannot find); TRY each one alone.
        let failing_control = match controls.get(e.error_idx as usize) {
            Some(c) => Some(c.id),
            None => controls
                .iter()
                .find(|c| !try_control(video, c))
                .map(|c| c.id),
        };
        SessionError::Controls {
            errno,
            error_idx: e.error_idx,
            count,
            failing_control,
        }
    })
}

/// Whether the driver accepts `control` alone (VIDIOC_TRY_EXT_CTRLS).
fn try_control(video: &File, control: &ExtControl) -> bool {
    let mut raw = [control.raw()];
    ioctl::try_ext_ctrls(video, CtrlWhich::Current, raw.as_mut_slice()).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_round_trip_through_timeval() {
        for ns in [0u64, 1000, 33_366_000, 1_000_000_000, 3_600_123_456_000] {
            let (sec, usec) = timeval_of(ns);
            let tv = bindings::timeval {
                tv_sec: sec,
                tv_usec: usec,
            };
            assert_eq!(ns_of(tv), ns);
        }
    }
}
