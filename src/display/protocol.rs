//! Wayland event handlers: sctk's window, seat and keyboard callbacks, and
//! the protocol objects sctk does not manage for us (wl_shm, linux-dmabuf,
//! our wl_buffers, viewporter).

use std::fs::File;
use std::time::Instant;

use smithay_client_toolkit::compositor::CompositorHandler;
use smithay_client_toolkit::dispatch2::Dispatch2;
use smithay_client_toolkit::output::{OutputHandler, OutputState};
use smithay_client_toolkit::registry::{ProvidesRegistryState, RegistryState};
use smithay_client_toolkit::seat::keyboard::{
    KeyEvent, KeyboardHandler, Keysym, Modifiers, RawModifiers,
};
use smithay_client_toolkit::seat::pointer::{
    PointerEvent, PointerEventKind, PointerHandler, ThemeSpec,
};
use smithay_client_toolkit::seat::{Capability, SeatHandler, SeatState};
use smithay_client_toolkit::shell::xdg::window::{Window, WindowConfigure, WindowHandler};
use smithay_client_toolkit::shell::WaylandSurface;
use smithay_client_toolkit::{delegate_dispatch2, delegate_registry, registry_handlers};
use tracing::{debug, warn};
use wayland_client::protocol::{
    wl_buffer::{self, WlBuffer},
    wl_keyboard::WlKeyboard,
    wl_output::{Transform, WlOutput},
    wl_pointer::WlPointer,
    wl_seat::WlSeat,
    wl_shm::WlShm,
    wl_shm_pool::WlShmPool,
    wl_surface::WlSurface,
};
use wayland_client::{Connection, Proxy, QueueHandle, WEnum};
use wayland_protocols::wp::idle_inhibit::zv1::client::{
    zwp_idle_inhibit_manager_v1::ZwpIdleInhibitManagerV1, zwp_idle_inhibitor_v1::ZwpIdleInhibitorV1,
};
use wayland_protocols::wp::linux_dmabuf::zv1::client::{
    zwp_linux_buffer_params_v1::{self, ZwpLinuxBufferParamsV1},
    zwp_linux_dmabuf_feedback_v1::{self, TrancheFlags, ZwpLinuxDmabufFeedbackV1},
    zwp_linux_dmabuf_v1::{self, ZwpLinuxDmabufV1},
};
use wayland_protocols::wp::presentation_time::client::{
    wp_presentation::{self, WpPresentation},
    wp_presentation_feedback::{self, WpPresentationFeedback},
};
use wayland_protocols::wp::viewporter::client::{
    wp_viewport::WpViewport, wp_viewporter::WpViewporter,
};

use super::keys::map_keysym;
use super::memory::map_shared_read_only;
use super::state::State;
use super::user_data::{
    BufferData, DmabufGlobal, FeedbackData, NoEvents, ParamsData, PresentationData,
};
use super::DisplayEvent;

/// The largest format table worth mapping: 65536 entries (tranches index
/// it with u16) of 16 bytes.
const MAX_FORMAT_TABLE: usize = 65536 * 16;

/// Globals and objects whose events reel has no use for.
macro_rules! ignore_events {
    ($($interface:ty),* $(,)?) => {$(
        impl Dispatch2<$interface, State> for NoEvents {
            fn event(
                &self,
                _: &mut State,
                _: &$interface,
                _: <$interface as Proxy>::Event,
                _: &Connection,
                _: &QueueHandle<State>,
            ) {
            }
        }
    )*};
}

ignore_events!(
    WlShm,
    WlShmPool,
    WpViewporter,
    WpViewport,
    ZwpIdleInhibitManagerV1,
    ZwpIdleInhibitorV1,
);

impl Dispatch2<WpPresentation, State> for NoEvents {
    fn event(
        &self,
        state: &mut State,
        _: &WpPresentation,
        event: wp_presentation::Event,
        _: &Connection,
        _: &QueueHandle<State>,
    ) {
        if let wp_presentation::Event::ClockId { clk_id } = event {
            state.presentation_clock = Some(clk_id);
        }
    }
}

impl Dispatch2<WpPresentationFeedback, State> for PresentationData {
    fn event(
        &self,
        state: &mut State,
        _: &WpPresentationFeedback,
        event: wp_presentation_feedback::Event,
        _: &Connection,
        _: &QueueHandle<State>,
    ) {
        match event {
            wp_presentation_feedback::Event::Presented {
                tv_sec_hi,
                tv_sec_lo,
                tv_nsec,
                refresh,
                ..
            } => {
                let secs = (u64::from(tv_sec_hi) << 32) | u64::from(tv_sec_lo);
                let shown_at = std::time::Duration::new(secs, tv_nsec.min(999_999_999));
                let refresh = std::time::Duration::from_nanos(u64::from(refresh));
                let shown = state
                    .presentation_clock
                    .and_then(|clock| super::vblank::instant_of(clock, shown_at));
                if let Some(shown) = shown {
                    state.vblank.observe(self.committed, shown, refresh);
                }
                state.stats.frames_shown += 1;
                let presented = super::Presented {
                    pts: self.pts,
                    epoch: self.epoch,
                    shown_at,
                    shown,
                    committed: self.committed,
                    refresh,
                };
                // Numbers only: tests read when each frame was shown here.
                debug!(
                    epoch = self.epoch,
                    pts_us = self.pts.as_micros() as u64,
                    shown_ns = shown_at.as_nanos() as u64,
                    clock = state.presentation_clock.map_or(-1, i64::from),
                    refresh_ns = refresh.as_nanos() as u64,
                    after_commit_us = shown.map_or(0, |s| {
                        s.saturating_duration_since(self.committed).as_micros() as u64
                    }),
                    "frame on screen"
                );
                state.last_presented = Some(presented);
                state.presented.push(presented);
            }
            wp_presentation_feedback::Event::Discarded => state.stats.frames_discarded += 1,
            _ => {}
        }
    }
}

impl Dispatch2<ZwpLinuxDmabufV1, State> for DmabufGlobal {
    fn event(
        &self,
        state: &mut State,
        proxy: &ZwpLinuxDmabufV1,
        event: zwp_linux_dmabuf_v1::Event,
        _: &Connection,
        _: &QueueHandle<State>,
    ) {
        // `format` repeats what `modifier` says since v3; v4+ uses feedback.
        if let zwp_linux_dmabuf_v1::Event::Modifier {
            format,
            modifier_hi,
            modifier_lo,
        } = event
        {
            if proxy.version() < 4 {
                state
                    .advertised
                    .add_v3_modifier(format, modifier_hi, modifier_lo);
                state.refresh_copy_formats();
            }
        }
    }
}

impl Dispatch2<ZwpLinuxDmabufFeedbackV1, State> for FeedbackData {
    fn event(
        &self,
        state: &mut State,
        proxy: &ZwpLinuxDmabufFeedbackV1,
        event: zwp_linux_dmabuf_feedback_v1::Event,
        _: &Connection,
        _: &QueueHandle<State>,
    ) {
        use zwp_linux_dmabuf_feedback_v1::Event;
        let kind = self.0;
        let fb = state.feedback.builder(kind);
        let step = match event {
            Event::FormatTable { fd, size } => {
                // Indices are u16: a larger table cannot be referenced.
                let size = size as usize;
                if size > MAX_FORMAT_TABLE {
                    warn!(
                        "ignoring a {size}-byte dmabuf format table (at most {MAX_FORMAT_TABLE})"
                    );
                    Ok(())
                } else {
                    match map_shared_read_only(&File::from(fd), size) {
                        Ok(table) => fb.format_table(&table),
                        Err(e) => {
                            warn!("cannot map the dmabuf format table: {e}");
                            Ok(())
                        }
                    }
                }
            }
            Event::MainDevice { device } => {
                fb.main_device(&device);
                Ok(())
            }
            Event::TrancheTargetDevice { device } => {
                fb.tranche_target_device(&device);
                Ok(())
            }
            Event::TrancheFormats { indices } => fb.tranche_formats(&indices),
            Event::TrancheFlags { flags } => {
                fb.tranche_flags(
                    matches!(flags, WEnum::Value(f) if f.contains(TrancheFlags::Scanout)),
                );
                Ok(())
            }
            Event::TrancheDone => {
                fb.tranche_done();
                Ok(())
            }
            Event::Done => state
                .feedback
                .done(kind)
                .map(|update| state.feedback_done(kind, proxy.version(), update)),
            _ => Ok(()),
        };
        if let Err(e) = step {
            warn!("ignoring malformed dmabuf feedback: {e}");
        }
    }
}

impl Dispatch2<ZwpLinuxBufferParamsV1, State> for ParamsData {
    fn event(
        &self,
        state: &mut State,
        _: &ZwpLinuxBufferParamsV1,
        event: zwp_linux_buffer_params_v1::Event,
        _: &Connection,
        _: &QueueHandle<State>,
    ) {
        match event {
            zwp_linux_buffer_params_v1::Event::Created { buffer } => {
                state.import_result = Some(Some(buffer))
            }
            zwp_linux_buffer_params_v1::Event::Failed => state.import_result = Some(None),
            _ => {}
        }
    }

    wayland_client::event_created_child!(State, ZwpLinuxBufferParamsV1, [
        zwp_linux_buffer_params_v1::EVT_CREATED_OPCODE => (WlBuffer, BufferData::Video)
    ]);
}

impl Dispatch2<WlBuffer, State> for BufferData {
    fn event(
        &self,
        state: &mut State,
        proxy: &WlBuffer,
        event: wl_buffer::Event,
        _: &Connection,
        _: &QueueHandle<State>,
    ) {
        if let wl_buffer::Event::Release = event {
            match self {
                BufferData::Video => state.buffer_released(proxy),
                BufferData::Overlay => {
                    if let Some(overlay) = state.overlay.as_mut() {
                        overlay.released(proxy);
                    }
                }
                BufferData::Subtitles => {
                    if let Some(overlay) = state.subtitles.as_mut() {
                        overlay.released(proxy);
                    }
                }
            }
        }
    }
}

impl CompositorHandler for State {
    fn scale_factor_changed(
        &mut self,
        _: &Connection,
        _: &QueueHandle<Self>,
        surface: &WlSurface,
        factor: i32,
    ) {
        // The OSD is drawn at the window's scale (the video surface's
        // size is the viewport's, whatever the scale).
        if surface == self.window.wl_surface() {
            self.scale = u32::try_from(factor).unwrap_or(1).max(1);
        }
    }

    fn transform_changed(
        &mut self,
        _: &Connection,
        _: &QueueHandle<Self>,
        _: &WlSurface,
        _: Transform,
    ) {
    }

    fn frame(&mut self, _: &Connection, _: &QueueHandle<Self>, surface: &WlSurface, _: u32) {
        // The cursor's surface is sctk's too; only the video's callbacks pace frames.
        if surface == self.window.wl_surface() {
            self.frame_pending = false;
        }
    }

    fn surface_enter(
        &mut self,
        _: &Connection,
        _: &QueueHandle<Self>,
        _: &WlSurface,
        _: &WlOutput,
    ) {
    }

    fn surface_leave(
        &mut self,
        _: &Connection,
        _: &QueueHandle<Self>,
        _: &WlSurface,
        _: &WlOutput,
    ) {
    }
}

impl OutputHandler for State {
    fn output_state(&mut self) -> &mut OutputState {
        &mut self.outputs
    }
    fn new_output(&mut self, _: &Connection, _: &QueueHandle<Self>, _: WlOutput) {}
    fn update_output(&mut self, _: &Connection, _: &QueueHandle<Self>, _: WlOutput) {}
    fn output_destroyed(&mut self, _: &Connection, _: &QueueHandle<Self>, _: WlOutput) {}
}

impl WindowHandler for State {
    fn request_close(&mut self, _: &Connection, _: &QueueHandle<Self>, _: &Window) {
        self.events.push(DisplayEvent::CloseRequested);
    }

    fn configure(
        &mut self,
        conn: &Connection,
        _: &QueueHandle<Self>,
        window: &Window,
        configure: WindowConfigure,
        _: u32,
    ) {
        self.configured = true;
        if configure.is_fullscreen() != self.fullscreen {
            self.fullscreen_changed(conn, configure.is_fullscreen());
        }
        let size = match configure.new_size {
            (Some(w), Some(h)) => Some((w.get(), h.get())),
            _ => None,
        };
        debug!(?size, fullscreen = self.fullscreen, "configure");
        if size != self.configured_size {
            self.configured_size = size;
            if let Some((width, height)) = size {
                self.events.push(DisplayEvent::Resized { width, height });
            }
        }
        self.apply_geometry();
        if self.has_buffer {
            // Apply the new size now, without waiting for the next frame.
            window.commit();
        }
    }
}

impl SeatHandler for State {
    fn seat_state(&mut self) -> &mut SeatState {
        &mut self.seat
    }

    fn new_seat(&mut self, _: &Connection, _: &QueueHandle<Self>, _: WlSeat) {}

    fn new_capability(
        &mut self,
        _: &Connection,
        qh: &QueueHandle<Self>,
        seat: WlSeat,
        capability: Capability,
    ) {
        if capability == Capability::Keyboard && self.keyboard.is_none() {
            match self.seat.get_keyboard(qh, &seat, None) {
                Ok(keyboard) => self.keyboard = Some(keyboard),
                Err(e) => warn!("no keyboard input: {e}"),
            }
        }
        if capability == Capability::Pointer && self.pointer.is_none() {
            let cursor_surface = self.compositor.create_surface(qh);
            match self.seat.get_pointer_with_theme::<_, ()>(
                qh,
                &seat,
                &self.shm,
                cursor_surface,
                ThemeSpec::System,
            ) {
                Ok(pointer) => self.pointer = Some(pointer),
                Err(e) => warn!("no pointer: the cursor cannot be hidden: {e}"),
            }
        }
    }

    fn remove_capability(
        &mut self,
        _: &Connection,
        _: &QueueHandle<Self>,
        _: WlSeat,
        capability: Capability,
    ) {
        if capability == Capability::Keyboard {
            if let Some(keyboard) = self.keyboard.take() {
                keyboard.release();
            }
        }
        if capability == Capability::Pointer {
            // Dropping it releases the wl_pointer and its cursor surface.
            self.pointer = None;
            self.cursor.left();
        }
    }

    fn remove_seat(&mut self, _: &Connection, _: &QueueHandle<Self>, _: WlSeat) {}
}

impl KeyboardHandler for State {
    fn enter(
        &mut self,
        _: &Connection,
        _: &QueueHandle<Self>,
        _: &WlKeyboard,
        _: &WlSurface,
        _: u32,
        _: &[u32],
        _: &[Keysym],
    ) {
    }

    fn leave(
        &mut self,
        _: &Connection,
        _: &QueueHandle<Self>,
        _: &WlKeyboard,
        _: &WlSurface,
        _: u32,
    ) {
    }

    fn press_key(
        &mut self,
        _: &Connection,
        _: &QueueHandle<Self>,
        _: &WlKeyboard,
        _: u32,
        event: KeyEvent,
    ) {
        if let Some(key) = map_keysym(event.keysym, event.utf8.as_deref()) {
            self.events.push(DisplayEvent::Key(key));
        }
    }

    fn repeat_key(
        &mut self,
        _: &Connection,
        _: &QueueHandle<Self>,
        _: &WlKeyboard,
        _: u32,
        _: KeyEvent,
    ) {
    }

    fn release_key(
        &mut self,
        _: &Connection,
        _: &QueueHandle<Self>,
        _: &WlKeyboard,
        _: u32,
        _: KeyEvent,
    ) {
    }

    fn update_modifiers(
        &mut self,
        _: &Connection,
        _: &QueueHandle<Self>,
        _: &WlKeyboard,
        _: u32,
        _: Modifiers,
        _: RawModifiers,
        _: u32,
    ) {
    }
}

impl PointerHandler for State {
    fn pointer_frame(
        &mut self,
        conn: &Connection,
        _: &QueueHandle<Self>,
        _: &WlPointer,
        events: &[PointerEvent],
    ) {
        let now = Instant::now();
        for event in events {
            if &event.surface != self.window.wl_surface() {
                continue;
            }
            match event.kind {
                PointerEventKind::Enter { .. } => self.cursor.entered(now),
                PointerEventKind::Leave { .. } => self.cursor.left(),
                _ => self.cursor.moved(now),
            }
        }
        self.apply_cursor(conn, now);
    }
}

impl ProvidesRegistryState for State {
    fn registry(&mut self) -> &mut RegistryState {
        &mut self.registry
    }
    registry_handlers![OutputState, SeatState];
}

delegate_registry!(State);
delegate_dispatch2!(State);
