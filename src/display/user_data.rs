//! The user data our Wayland objects carry: it says which handler in
//! `protocol.rs` gets their events. Apart from the handlers so that the
//! state that creates the objects and the handlers that act on them do not
//! import each other.

use super::feedback::FeedbackKind;

/// User data of objects whose events we ignore or that have none.
pub(super) struct NoEvents;
/// User data of the zwp_linux_dmabuf_v1 global.
pub(super) struct DmabufGlobal;
/// User data of a zwp_linux_dmabuf_feedback_v1 (v4+): which one it is.
pub(super) struct FeedbackData(pub(super) FeedbackKind);
/// User data of a zwp_linux_buffer_params_v1.
pub(super) struct ParamsData;
/// User data of our wl_buffers: whose they are, told their release.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum BufferData {
    /// The video surface's (shm and dmabuf alike).
    Video,
    /// The OSD overlay's.
    Overlay,
    /// The subtitles' overlay's.
    Subtitles,
}
/// User data of a wp_presentation_feedback: the pts of the frame committed,
/// and when it was committed.
pub(super) struct PresentationData {
    pub(super) pts: std::time::Duration,
    /// The frame's epoch: which file (or seek) it belongs to.
    pub(super) epoch: u64,
    pub(super) committed: std::time::Instant,
}
