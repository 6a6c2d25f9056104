//! reel's exit statuses, so that a supervisor (systemd, a kiosk script)
//! can tell why it ended: documented in README.

use std::process::ExitCode;

use crate::v4l2::decoder::DecoderError;

/// Why reel ended; the more serious wins when several apply.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Exit {
    /// Every file played through.
    #[default]
    Success = 0,
    /// A file could not be played, or its data was damaged.
    Failed = 1,
    /// A bad command line.
    Usage = 2,
    /// No Wayland compositor to connect to.
    NoCompositor = 3,
    /// The compositor went away during playback.
    CompositorLost = 4,
    /// The V4L2 decoder failed (gone, stuck) and `--hwdec v4l2` forbade
    /// the software fallback.
    DeviceFailure = 5,
}

impl Exit {
    pub const ALL: [Exit; 6] = [
        Self::Success,
        Self::Failed,
        Self::Usage,
        Self::NoCompositor,
        Self::CompositorLost,
        Self::DeviceFailure,
    ];

    /// What the status tells a supervisor, in one line (the man page's
    /// EXIT STATUS; README's table says more).
    pub fn meaning(self) -> &'static str {
        match self {
            Self::Success => "every file played through without an error",
            Self::Failed => "a file could not be played, or its data was damaged",
            Self::Usage => "a bad command line or configuration file",
            Self::NoCompositor => "no Wayland compositor to connect to",
            Self::CompositorLost => "the compositor went away during playback",
            Self::DeviceFailure => {
                "the V4L2 decoder failed and --hwdec v4l2 forbids the software fallback"
            }
        }
    }

    pub fn code(self) -> ExitCode {
        ExitCode::from(self as u8)
    }

    /// The status an error ends reel with: its own when it carries one
    /// ([`Fatal`]), a device failure when a V4L2 decoder failed, else
    /// [`Exit::Failed`].
    pub fn of(error: &anyhow::Error) -> Self {
        for cause in error.chain() {
            if let Some(fatal) = cause.downcast_ref::<Fatal>() {
                return fatal.exit;
            }
            if cause
                .downcast_ref::<DecoderError>()
                .is_some_and(DecoderError::is_device_failure)
            {
                return Self::DeviceFailure;
            }
        }
        Self::Failed
    }
}

/// What a run ends with: the errors to print at the end (files that could
/// not be played; playback went on with the others) and the status.
#[derive(Debug, Default)]
pub struct Outcome {
    pub failures: Vec<String>,
    pub exit: Exit,
}

impl Outcome {
    pub fn fail(&mut self, exit: Exit, message: String) {
        self.failures.push(message);
        self.exit = self.exit.max(exit);
    }

    /// Failures of the ordinary kind ([`Exit::Failed`]).
    pub fn from_failures(failures: Vec<String>) -> Self {
        let exit = if failures.is_empty() {
            Exit::Success
        } else {
            Exit::Failed
        };
        Self { failures, exit }
    }
}

/// An error that ends reel with a given status.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct Fatal {
    pub exit: Exit,
    pub message: String,
}

impl Fatal {
    pub fn new(exit: Exit, message: impl Into<String>) -> Self {
        Self {
            exit,
            message: message.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::v4l2::session::SessionError;
    use v4l2r::nix::errno::Errno;

    #[test]
    fn errors_map_to_their_status() {
        let lost = anyhow::Error::new(Fatal::new(Exit::CompositorLost, "gone"));
        assert_eq!(Exit::of(&lost.context("playing")), Exit::CompositorLost);
        let device: anyhow::Error = DecoderError::Session(SessionError::Ioctl {
            ioctl: "VIDIOC_QBUF(OUTPUT)",
            errno: Errno::ENODEV,
        })
        .into();
        assert_eq!(Exit::of(&device), Exit::DeviceFailure);
        let damaged: anyhow::Error = DecoderError::Session(SessionError::EmptyBitstream).into();
        assert_eq!(Exit::of(&damaged), Exit::Failed);
        assert!(Exit::DeviceFailure > Exit::Failed);
        assert_eq!(Exit::NoCompositor as u8, 3);
        let codes: Vec<u8> = Exit::ALL.iter().map(|&e| e as u8).collect();
        assert_eq!(codes, [0, 1, 2, 3, 4, 5]);
    }

    #[test]
    fn what_the_device_cannot_decode_is_handed_over_but_is_no_device_failure() {
        use crate::v4l2::codec::{CodecError, Damage, SeveralRequests, Unsupported};
        let fields = DecoderError::Codec(CodecError::Unsupported(Unsupported::HoldCapture(
            SeveralRequests::FieldPair,
        )));
        assert!(fields.needs_another_decoder());
        assert!(!fields.is_device_failure());
        assert_eq!(Exit::of(&fields.into()), Exit::Failed);
        let damaged = DecoderError::Codec(CodecError::Bitstream(Damage::Vp8Version(4)));
        assert!(!damaged.needs_another_decoder());
        let lost = DecoderError::Session(SessionError::Ioctl {
            ioctl: "VIDIOC_DQBUF(CAPTURE)",
            errno: Errno::ENODEV,
        });
        assert!(lost.needs_another_decoder());
        for short in [
            SessionError::OutOfCaptureMemory {
                granted: 2,
                needed: 6,
            },
            SessionError::Ioctl {
                ioctl: "VIDIOC_REQBUFS",
                errno: Errno::ENOMEM,
            },
        ] {
            let short = DecoderError::Session(short);
            assert!(short.needs_another_decoder() && !short.is_device_failure());
        }
    }
}
