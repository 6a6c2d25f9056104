//! Keeping the screen awake while video plays: a `zwp_idle_inhibitor_v1`
//! on the video surface exists exactly while the player says so (playing),
//! and is destroyed when it pauses or stops, as mpv does. Compositors
//! without `zwp_idle_inhibit_manager_v1` (weston) blank as they like.

use tracing::debug;
use wayland_client::globals::GlobalList;
use wayland_client::protocol::wl_surface::WlSurface;
use wayland_client::{Dispatch, QueueHandle};
use wayland_protocols::wp::idle_inhibit::zv1::client::{
    zwp_idle_inhibit_manager_v1::ZwpIdleInhibitManagerV1, zwp_idle_inhibitor_v1::ZwpIdleInhibitorV1,
};

use super::user_data::NoEvents;

pub(super) struct IdleInhibit {
    manager: Option<ZwpIdleInhibitManagerV1>,
    inhibitor: Option<ZwpIdleInhibitorV1>,
}

impl IdleInhibit {
    pub(super) fn bind<D>(globals: &GlobalList, qh: &QueueHandle<D>) -> Self
    where
        D: Dispatch<ZwpIdleInhibitManagerV1, NoEvents> + 'static,
    {
        Self {
            manager: globals.bind(qh, 1..=1, NoEvents).ok(),
            inhibitor: None,
        }
    }

    pub(super) fn available(&self) -> bool {
        self.manager.is_some()
    }

    /// Creates or destroys the inhibitor on `surface` so that one exists
    /// exactly when `inhibit` holds; nothing is sent when that is already so.
    pub(super) fn set<D>(&mut self, inhibit: bool, surface: &WlSurface, qh: &QueueHandle<D>)
    where
        D: Dispatch<ZwpIdleInhibitorV1, NoEvents> + 'static,
    {
        let Some(manager) = &self.manager else {
            return;
        };
        match (inhibit, self.inhibitor.take()) {
            (true, None) => {
                debug!("idle inhibited while playing");
                self.inhibitor = Some(manager.create_inhibitor(surface, qh, NoEvents));
            }
            (false, Some(inhibitor)) => {
                debug!("idle no longer inhibited");
                inhibitor.destroy();
            }
            (_, kept) => self.inhibitor = kept,
        }
    }
}
