//! The Wayland client: connection, window, and presenting frames.

use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

use drm_fourcc::DrmFourcc;
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use smithay_client_toolkit::compositor::FrameCallbackData;
use smithay_client_toolkit::shell::WaylandSurface;
use tracing::{debug, info, warn};
use wayland_client::backend::{ReadEventsGuard, WaylandError};
use wayland_client::globals::registry_queue_init;
use wayland_client::protocol::{wl_buffer::WlBuffer, wl_shm};
use wayland_client::{Connection, EventQueue, Proxy, QueueHandle};
use wayland_protocols::wp::linux_dmabuf::zv1::client::zwp_linux_buffer_params_v1::{
    self, ZwpLinuxBufferParamsV1,
};

use super::aspect::{clamp_i32, display_size};
use super::compositor_formats::CompositorFormats;
use super::copy::copy_frame;
use super::copy_path::Route;
use super::crop::Rect;
use super::dmabuf_formats::{AdvertisedFormats, DmabufChoice, Feedback, FeedbackError};
use super::layout::BufferLayout;
use super::memory::SharedMemory;
use super::pool::{Acquire, PoolKey};
use super::shm_convert::frame_to_xrgb;
use super::state::{FrameBuffer, FrameCopyReason, PresentedPath, State};
use super::user_data::{BufferData, NoEvents, ParamsData, PresentationData};
use super::{DisplayError, DisplayEvent, PresentStats, Presented, WindowOptions, MAX_POOL_BUFFERS};
use crate::fourcc::{fourcc_text, modifier_name, MOD_LINEAR};
use crate::frame::{BufferId, DmabufFrame, Frame, FrameStorage};
use crate::osd::OverlayImage;

/// How long the compositor may take to answer a dmabuf import.
const IMPORT_TIMEOUT: Duration = Duration::from_secs(5);

/// A Wayland window that shows frames. See the module documentation.
pub struct Display {
    conn: Connection,
    queue: EventQueue<State>,
    qh: QueueHandle<State>,
    pub(super) state: State,
}

impl Display {
    /// Connects to the compositor named by `WAYLAND_DISPLAY` and opens the
    /// window (unmapped until the first frame).
    pub fn connect(opts: &WindowOptions) -> Result<Display, DisplayError> {
        let conn = Connection::connect_to_env().map_err(|error| DisplayError::Connect {
            display: std::env::var("WAYLAND_DISPLAY").ok(),
            error,
        })?;
        Self::with_connection(conn, opts)
    }

    /// Connects to the compositor listening on `socket` (an absolute path),
    /// ignoring the environment; for tests running several compositors.
    pub fn connect_to_socket(socket: &Path, opts: &WindowOptions) -> Result<Display, DisplayError> {
        let stream = UnixStream::connect(socket).map_err(|source| DisplayError::ConnectSocket {
            path: socket.to_owned(),
            source,
        })?;
        let conn = Connection::from_socket(stream).map_err(|error| DisplayError::Connect {
            display: Some(socket.display().to_string()),
            error,
        })?;
        Self::with_connection(conn, opts)
    }

    fn with_connection(conn: Connection, opts: &WindowOptions) -> Result<Display, DisplayError> {
        let (globals, queue) = registry_queue_init::<State>(&conn).map_err(|e| match e {
            wayland_client::globals::GlobalError::Backend(e) => DisplayError::Wayland(e),
            wayland_client::globals::GlobalError::InvalidId(_) => {
                DisplayError::MissingGlobal("a usable wl_registry")
            }
        })?;
        let qh = queue.handle();
        let state = State::new(&globals, &qh, opts)?;
        let mut display = Display {
            conn,
            queue,
            qh,
            state,
        };
        // Collect the dmabuf formats and the first configure.
        display.queue.roundtrip(&mut display.state)?;
        display.queue.roundtrip(&mut display.state)?;
        display.log_capabilities();
        Ok(display)
    }

    fn log_capabilities(&self) {
        let s = &self.state;
        info!(
            dmabuf_version = s.dmabuf.as_ref().map(|d| d.version()),
            dmabuf_pairs = s.advertised.len(),
            viewporter = s.viewport.is_some(),
            idle_inhibit = s.idle_inhibit.available(),
            "connected to the Wayland compositor"
        );
        if s.viewport.is_none() {
            warn!("compositor has no wp_viewporter: the window will be the video's pixel size");
        }
    }

    /// The connection's fd: poll it for readability, then call `dispatch`.
    pub fn as_fd(&self) -> BorrowedFd<'_> {
        self.conn.as_fd()
    }

    /// Reads whatever the compositor sent (never blocks) and handles it.
    /// The event loop calls this when the socket is readable, so it reads
    /// at once: the socket's reads never block, and a poll first would be
    /// one more syscall per wake-up.
    pub fn dispatch(&mut self) -> Result<(), DisplayError> {
        self.flush()?;
        if let Some(guard) = self.queue.prepare_read() {
            read_events(guard)?;
        }
        self.queue.dispatch_pending(&mut self.state)?;
        self.flush()
    }

    /// Waits up to `timeout` for something from the compositor, then
    /// dispatches it. For callers without an event loop (tests, tools).
    pub fn dispatch_timeout(&mut self, timeout: Duration) -> Result<(), DisplayError> {
        self.flush()?;
        if let Some(guard) = self.queue.prepare_read() {
            let ms = u16::try_from(timeout.as_millis()).unwrap_or(u16::MAX);
            let mut fds = [PollFd::new(guard.connection_fd(), PollFlags::POLLIN)];
            let ready = match poll(&mut fds, PollTimeout::from(ms)) {
                Ok(n) => n > 0,
                Err(nix::errno::Errno::EINTR) => false,
                Err(e) => return Err(DisplayError::Poll(e.into())),
            };
            if ready {
                read_events(guard)?;
            }
        }
        self.queue.dispatch_pending(&mut self.state)?;
        self.flush()
    }

    /// Dispatches until `done` holds or `timeout` passes.
    fn dispatch_until(
        &mut self,
        timeout: Duration,
        done: impl Fn(&State) -> bool,
    ) -> Result<(), DisplayError> {
        let deadline = Instant::now() + timeout;
        while !done(&self.state) {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(DisplayError::Timeout(timeout));
            }
            self.dispatch_timeout(left)?;
        }
        Ok(())
    }

    /// Sends queued requests. `WouldBlock` (socket full) is not an error:
    /// the rest goes out at the next flush.
    pub fn flush(&mut self) -> Result<(), DisplayError> {
        match self.conn.flush() {
            Ok(()) => Ok(()),
            Err(WaylandError::Io(e)) if e.kind() == io::ErrorKind::WouldBlock => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    pub fn take_events(&mut self) -> Vec<DisplayEvent> {
        std::mem::take(&mut self.state.events)
    }

    /// True once the window is configured and the compositor has shown the
    /// previous commit (its frame callback fired): `present` may commit.
    pub fn ready_for_frame(&self) -> bool {
        self.state.configured && !self.state.frame_pending
    }

    /// Retitles the window (the player passes the new file's name).
    pub fn set_title(&mut self, title: &str) {
        self.state.window.set_title(title.to_owned());
    }

    pub fn set_fullscreen(&mut self, on: bool) {
        if on {
            self.state.window.set_fullscreen(None);
        } else {
            self.state.window.unset_fullscreen();
        }
    }

    /// Keeps the screen from blanking (an idle inhibitor on the video
    /// surface) while `inhibit` holds; the player says so while it plays.
    pub fn set_idle_inhibited(&mut self, inhibit: bool) {
        let surface = self.state.window.wl_surface().clone();
        self.state.idle_inhibit.set(inhibit, &surface, &self.qh);
    }

    /// When the cursor over the window is due to hide: call
    /// [`Display::update_cursor`] then (nothing comes from the compositor).
    pub fn cursor_deadline(&self) -> Option<Instant> {
        self.state.cursor.hide_deadline()
    }

    /// Hides the cursor if it has been still long enough.
    pub fn update_cursor(&mut self) {
        self.state.apply_cursor(&self.conn, Instant::now());
    }

    /// Whether the compositor's last configure said fullscreen.
    pub fn is_fullscreen(&self) -> bool {
        self.state.fullscreen
    }

    pub fn stats(&self) -> PresentStats {
        let mut stats = self.state.stats;
        stats.held_now = self.state.pool.held() + self.state.imported.held();
        stats.live_now = self.state.pool.len() + self.state.imported.len();
        stats.frames_dropped = stats.dropped_no_buffer + stats.dropped_not_ready;
        stats
    }

    /// The zwp_linux_dmabuf_v1 version bound (None: the global is missing).
    pub fn dmabuf_version(&self) -> Option<u32> {
        self.state.dmabuf.as_ref().map(|d| d.version())
    }

    /// The (fourcc, modifier) pairs the compositor advertised for dmabuf.
    pub fn advertised_formats(&self) -> &AdvertisedFormats {
        &self.state.advertised
    }

    /// The last frame the compositor reported as shown (wp_presentation),
    /// for measuring latency and pacing against what really reached the
    /// screen.
    pub fn last_presented(&self) -> Option<Presented> {
        self.state.last_presented
    }

    /// The frames shown since the last call, in order.
    pub fn take_presented(&mut self) -> Vec<Presented> {
        std::mem::take(&mut self.state.presented)
    }

    /// When a frame committed now would reach the screen (the vblank it
    /// can still make) and the refresh period; None without recent
    /// presentation feedback.
    pub fn next_vblank(&self, now: Instant) -> Option<super::vblank::Aim> {
        self.state.vblank.aim(now)
    }

    /// The clock `Presented::shown_at` is on (a `clockid_t`), once known.
    pub fn presentation_clock(&self) -> Option<u32> {
        self.state.presentation_clock
    }

    /// The v4+ dmabuf feedback in effect (the surface's, else the default:
    /// format table and tranches in
    /// preference order); `None` on v3 compositors such as headless weston.
    pub fn dmabuf_feedback(&self) -> Option<&Feedback> {
        self.state.feedback.effective()
    }

    /// What the compositor takes for the surface, for negotiation: the
    /// feedback in effect (or the v3 modifiers), less the pairs it refused
    /// to import.
    pub fn compositor_formats(&self) -> Result<CompositorFormats, FeedbackError> {
        let formats =
            CompositorFormats::from_feedback_or_v3(self.dmabuf_feedback(), &self.state.advertised)?;
        Ok(formats.without(&self.state.refused))
    }

    /// Whether the window can show an OSD (the compositor has subsurfaces).
    pub fn has_overlay(&self) -> bool {
        self.state.overlay.is_some()
    }

    /// The scale the OSD is drawn at.
    pub fn overlay_scale(&self) -> u32 {
        self.state.scale
    }

    /// Shows `image` on the subtitles' subsurface over the whole window
    /// (below the OSD's), or hides it. The video surface is not touched.
    pub fn show_subtitles(&mut self, image: Option<&OverlayImage>) -> Result<(), DisplayError> {
        if let Some(overlay) = self.state.subtitles.as_mut() {
            overlay.set(image, &self.state.shm, &self.qh)?;
            self.flush()?;
        }
        Ok(())
    }

    /// Shows `image` on the OSD's subsurface above the video, or hides it.
    /// The video surface is not touched.
    pub fn show_overlay(&mut self, image: Option<&OverlayImage>) -> Result<(), DisplayError> {
        if let Some(overlay) = self.state.overlay.as_mut() {
            overlay.set(image, &self.state.shm, &self.qh)?;
            self.flush()?;
        }
        Ok(())
    }

    /// The surface size (viewport destination) last committed, if any.
    pub fn surface_size(&self) -> Option<(u32, u32)> {
        self.state.applied_size
    }

    /// Copies `frame` into a free buffer and commits it. If the previous
    /// commit is not shown yet, or every buffer is still held by the
    /// compositor, the frame is dropped and counted (see [`PresentStats`]).
    pub fn present(&mut self, frame: &Frame) -> Result<(), DisplayError> {
        if !self.ready_for_frame() {
            self.state.stats.dropped_not_ready += 1;
            debug!(pts = ?frame.pts, "frame dropped: previous commit not shown yet");
            return Ok(());
        }
        if frame.width == 0 || frame.height == 0 {
            return Err(bad_frame(frame, "zero size"));
        }
        if let FrameStorage::Dmabuf(dmabuf) = &frame.storage {
            if let Some(modifier) = self.zero_copy_modifier(dmabuf) {
                if self.present_zero_copy(frame, dmabuf, modifier)? {
                    return Ok(());
                }
            }
        }
        // A copy is the visible picture alone.
        self.set_source_rect(frame, (frame.width, frame.height));
        let path = self.choose_path(frame);
        self.present_via(frame, path)
    }

    /// The modifier a decoder's dmabuf is presented with as it is, if it
    /// is (`FrameCopyReason::for_dmabuf`: advertised, keeping the stream's
    /// bit depth). The negotiation chose the CAPTURE format for that when
    /// it could; this check covers the frames decoded before a change of
    /// feedback reached the decoder, and pairs the compositor refused to
    /// import.
    fn zero_copy_modifier(&mut self, dmabuf: &DmabufFrame) -> Option<u64> {
        let reason = match FrameCopyReason::for_dmabuf(
            self.state.force_copy,
            self.state.dmabuf.is_some(),
            &self.state.advertised,
            dmabuf,
        ) {
            Ok(modifier) => return Some(modifier),
            Err(reason) => reason,
        };
        if self.state.copy_reason != Some(reason) {
            info!("copying decoded frames instead of presenting their dmabufs: {reason}");
            self.state.copy_reason = Some(reason);
        }
        None
    }

    /// Destroys the wl_buffers imported from decoder buffers of allocation
    /// `generation` and older that no frame (`kept`) and not the
    /// compositor hold, then waits for the compositor to have destroyed
    /// them: its imports keep the decoder's memory alive, which a new
    /// allocation may need (a board's CMA pool).
    pub fn retire_imports_through(
        &mut self,
        generation: u64,
        kept: &[BufferId],
    ) -> Result<(), DisplayError> {
        let retired = self.state.imported.retire_unused(generation, kept);
        if retired.is_empty() {
            return Ok(());
        }
        debug!(
            count = retired.len(),
            generation, "decoder reallocates: its old buffers' wl_buffers destroyed first"
        );
        for old in retired {
            old.destroy();
        }
        self.queue.roundtrip(&mut self.state)?;
        Ok(())
    }

    /// Attaches the decoder's own buffer (imported once per buffer).
    /// `Ok(false)`: the compositor refused the import; copy instead.
    fn present_zero_copy(
        &mut self,
        frame: &Frame,
        dmabuf: &DmabufFrame,
        modifier: u64,
    ) -> Result<bool, DisplayError> {
        let retired = self.state.imported.start_generation(dmabuf.id.generation);
        if !retired.is_empty() {
            debug!(
                count = retired.len(),
                generation = dmabuf.id.generation,
                "decoder reallocated its buffers: older wl_buffers destroyed"
            );
        }
        for old in retired {
            old.destroy();
        }
        if self.state.imported.is_held(dmabuf.id) {
            // The decoder does not reuse a buffer the compositor holds: the
            // same picture is shown again (VP9's and AV1's
            // show_existing_frame), and its wl_buffer is committed again.
            debug!(id = ?dmabuf.id, "picture shown again: its buffer is committed again");
        }
        let wl_buffer = match self.state.imported.get(dmabuf.id) {
            Some(buffer) => buffer.clone(),
            None => match self.import_decoder_buffer(frame, dmabuf, modifier)? {
                Some(buffer) => {
                    self.state.imported.insert(dmabuf.id, buffer.clone());
                    self.state.stats.buffers_zero_copy += 1;
                    buffer
                }
                None => {
                    // Never offered again; the player re-negotiates (another
                    // CAPTURE format may import) and meanwhile frames are copied.
                    self.state.stats.dmabuf_failures += 1;
                    self.state.refuse(dmabuf.fourcc, modifier);
                    self.state.events.push(DisplayEvent::DmabufFormatsChanged);
                    warn!(format = %fourcc_text(dmabuf.fourcc), modifier = %modifier_name(modifier),
                          "the compositor refused the decoder's dmabuf although it advertised it");
                    return Ok(false);
                }
            },
        };
        self.set_source_rect(frame, (dmabuf.coded_width, dmabuf.coded_height));
        self.commit_buffer(frame, &wl_buffer);
        self.state
            .imported
            .mark_held(dmabuf.id, dmabuf.source.clone());
        self.state.stats.frames_zero_copy += 1;
        self.state.last_path = Some(PresentedPath::ZeroCopy {
            fourcc: dmabuf.fourcc,
            modifier,
        });
        debug!(pts = ?frame.pts, path = "zero-copy", format = %fourcc_text(dmabuf.fourcc),
               modifier = %modifier_name(modifier), buffer = ?dmabuf.id, "frame presented");
        self.flush()?;
        Ok(true)
    }

    /// Shows the part of a `buffer` size buffer that is to be seen: the
    /// `--video-crop` rectangle of the picture, else the visible picture
    /// (a decoder's buffer is its coded size).
    fn set_source_rect(&mut self, frame: &Frame, buffer: (u32, u32)) {
        let visible = Rect {
            x: 0,
            y: 0,
            width: frame.width,
            height: frame.height,
        };
        let cropped = self.state.crop.and_then(|crop| {
            let inside = crop.within(frame.width, frame.height);
            let size = (frame.width, frame.height);
            if inside.is_none() && self.state.crop_outside != Some(size) {
                warn!(%crop, width = frame.width, height = frame.height,
                      "the video crop lies outside the picture: shown whole");
                self.state.crop_outside = Some(size);
            }
            inside
        });
        let wanted = cropped.or(((frame.width, frame.height) != buffer).then_some(visible));
        if self.state.source_rect == wanted {
            return;
        }
        match (&self.state.viewport, wanted) {
            (Some(viewport), Some(rect)) => viewport.set_source(
                f64::from(rect.x),
                f64::from(rect.y),
                f64::from(rect.width),
                f64::from(rect.height),
            ),
            (Some(viewport), None) => viewport.set_source(-1.0, -1.0, -1.0, -1.0),
            (None, Some(_)) => {
                warn!("no wp_viewporter: the whole buffer is shown (padding or crop ignored)")
            }
            (None, None) => {}
        }
        self.state.source_rect = wanted;
    }

    /// Makes a wl_buffer from the decoder's dmabuf fds; `None` if refused.
    fn import_decoder_buffer(
        &mut self,
        frame: &Frame,
        dmabuf: &DmabufFrame,
        modifier: u64,
    ) -> Result<Option<WlBuffer>, DisplayError> {
        let Some(global) = self.state.dmabuf.clone() else {
            return Err(bad_frame(frame, "internal: no dmabuf global"));
        };
        let params = global.create_params(&self.qh, ParamsData);
        for (i, plane) in dmabuf.planes.iter().enumerate() {
            let Some(fd) = dmabuf.source.fd(plane.memory_plane) else {
                params.destroy();
                return Err(bad_frame(frame, "dmabuf plane without an fd"));
            };
            params.add(
                fd,
                i as u32,
                plane.offset,
                plane.stride,
                (modifier >> 32) as u32,
                modifier as u32,
            );
        }
        let buffer = self.create_from_params(
            &params,
            dmabuf.coded_width,
            dmabuf.coded_height,
            dmabuf.fourcc,
        )?;
        if buffer.is_some() {
            debug!(format = %fourcc_text(dmabuf.fourcc), modifier = %modifier_name(modifier),
                   width = dmabuf.coded_width, height = dmabuf.coded_height, buffer = ?dmabuf.id,
                   "decoder dmabuf imported");
        }
        Ok(buffer)
    }

    /// params.create, then waits for created/failed; destroys `params`.
    fn create_from_params(
        &mut self,
        params: &ZwpLinuxBufferParamsV1,
        width: u32,
        height: u32,
        fourcc: u32,
    ) -> Result<Option<WlBuffer>, DisplayError> {
        self.state.import_result = None;
        params.create(
            clamp_i32(width),
            clamp_i32(height),
            fourcc,
            zwp_linux_buffer_params_v1::Flags::empty(),
        );
        let waited = self.dispatch_until(IMPORT_TIMEOUT, |s| s.import_result.is_some());
        params.destroy();
        waited?;
        Ok(self.state.import_result.take().flatten())
    }

    fn present_via(&mut self, frame: &Frame, path: Route) -> Result<(), DisplayError> {
        let key = match path {
            Route::Dmabuf(c) => PoolKey {
                dmabuf: true,
                fourcc: c.fourcc as u32,
                modifier: c.modifier,
                width: frame.width,
                height: frame.height,
            },
            Route::Shm => PoolKey {
                dmabuf: false,
                fourcc: DrmFourcc::Xrgb8888 as u32,
                modifier: MOD_LINEAR,
                width: frame.width,
                height: frame.height,
            },
        };
        for old in self.state.pool.set_key(key) {
            old.wl_buffer.destroy();
        }
        let slot = match self.state.pool.acquire() {
            Acquire::Free(slot) => slot,
            Acquire::Grow => {
                let buffer = match path {
                    Route::Dmabuf(choice) => match self.allocate_dmabuf(frame, choice)? {
                        Some(buffer) => buffer,
                        None => {
                            // Refused although advertised: never offer this
                            // pair again, and choose afresh (another
                            // modifier, or wl_shm).
                            self.state.refuse(choice.fourcc as u32, choice.modifier);
                            self.state.stats.dmabuf_failures += 1;
                            let path = self.choose_path(frame);
                            return self.present_via(frame, path);
                        }
                    },
                    Route::Shm => self.allocate_shm(frame)?,
                };
                self.state.stats.buffers_allocated += 1;
                let slot = self.state.pool.push(buffer);
                self.state.stats.pool_peak = self.state.stats.pool_peak.max(self.state.pool.len());
                slot
            }
            Acquire::Exhausted => {
                self.state.stats.dropped_no_buffer += 1;
                debug!(pts = ?frame.pts, "frame dropped: all {} buffers held by the compositor", MAX_POOL_BUFFERS);
                return Ok(());
            }
        };
        let Some(buffer) = self.state.pool.writable(slot) else {
            return Err(bad_frame(frame, "internal: acquired buffer is held"));
        };
        let layout = &buffer.layout;
        match path {
            Route::Dmabuf(_) => buffer
                .memory
                .write(|bytes| copy_frame(frame, layout, bytes))?,
            Route::Shm => {
                let stride = layout.planes[0].stride;
                buffer
                    .memory
                    .write(|bytes| frame_to_xrgb(frame, bytes, stride))?
            }
        }
        let memory = buffer.memory.kind();
        let wl_buffer = buffer.wl_buffer.clone();
        self.commit_buffer(frame, &wl_buffer);
        self.state.pool.mark_held(slot);
        self.state.last_path = Some(PresentedPath::Copied(self.describe_copy(frame, path)));
        match path {
            Route::Dmabuf(c) => {
                self.state.stats.frames_dmabuf += 1;
                debug!(pts = ?frame.pts, path = "dmabuf", format = ?c.fourcc, modifier = %modifier_name(c.modifier),
                       copy = "one CPU copy", %memory, "frame presented");
            }
            Route::Shm => {
                self.state.stats.frames_shm += 1;
                debug!(pts = ?frame.pts, path = "shm", format = "XRGB8888", from = %frame.format,
                       copy = "one CPU conversion into wl_shm", "frame presented");
            }
        }
        self.flush()
    }

    /// Attach, damage, set the viewport, ask for a frame callback, commit.
    fn commit_buffer(&mut self, frame: &Frame, buffer: &WlBuffer) {
        let surface = self.state.window.wl_surface().clone();
        // The window takes the shape of what is shown of the picture.
        let (width, height) = match (&self.state.viewport, self.state.source_rect) {
            (Some(_), Some(rect)) => (rect.width, rect.height),
            _ => (frame.width, frame.height),
        };
        self.state.content = Some(display_size(width, height, frame.sample_aspect));
        self.state.apply_geometry();
        surface.attach(Some(buffer), 0, 0);
        surface.damage_buffer(0, 0, clamp_i32(frame.width), clamp_i32(frame.height));
        surface.frame(&self.qh, FrameCallbackData(surface.clone()));
        let committed = Instant::now();
        match &self.state.presentation {
            Some(presentation) => {
                let data = PresentationData {
                    pts: frame.pts,
                    epoch: frame.epoch,
                    committed,
                };
                presentation.feedback(&surface, &self.qh, data);
            }
            // No feedback: the commit is the best guess of when it shows.
            None => self.state.presented.push(Presented {
                pts: frame.pts,
                epoch: frame.epoch,
                shown_at: Duration::ZERO,
                shown: None,
                committed,
                refresh: Duration::ZERO,
            }),
        }
        surface.commit();
        self.state.has_buffer = true;
        self.state.frame_pending = true;
    }

    /// Makes a dmabuf-backed buffer; `None` if the compositor refused it.
    fn allocate_dmabuf(
        &mut self,
        frame: &Frame,
        choice: DmabufChoice,
    ) -> Result<Option<FrameBuffer>, DisplayError> {
        let Some(dmabuf) = self.state.dmabuf.clone() else {
            return Err(bad_frame(frame, "internal: no dmabuf global"));
        };
        let layout = BufferLayout::new(choice.fourcc, frame.width, frame.height)
            .ok_or_else(|| bad_frame(frame, "no buffer layout for its format"))?;
        let memory =
            SharedMemory::dmabuf(layout.size).map_err(|source| DisplayError::Allocation {
                size: layout.size,
                source,
            })?;
        let params = dmabuf.create_params(&self.qh, ParamsData);
        for (i, plane) in layout.planes.iter().enumerate() {
            params.add(
                memory.as_fd(),
                i as u32,
                plane.offset as u32,
                plane.stride as u32,
                (choice.modifier >> 32) as u32,
                choice.modifier as u32,
            );
        }
        match self.create_from_params(&params, frame.width, frame.height, choice.fourcc as u32)? {
            Some(wl_buffer) => {
                debug!(format = ?choice.fourcc, modifier = %modifier_name(choice.modifier),
                       width = frame.width, height = frame.height, bytes = layout.size,
                       memory = %memory.kind(), "dmabuf buffer created");
                Ok(Some(FrameBuffer {
                    wl_buffer,
                    memory,
                    layout,
                }))
            }
            None => {
                warn!(format = ?choice.fourcc, modifier = %modifier_name(choice.modifier), "dmabuf import failed");
                Ok(None)
            }
        }
    }

    fn allocate_shm(&mut self, frame: &Frame) -> Result<FrameBuffer, DisplayError> {
        let layout = BufferLayout::new(DrmFourcc::Xrgb8888, frame.width, frame.height)
            .ok_or_else(|| bad_frame(frame, "no XRGB8888 layout"))?;
        let size =
            i32::try_from(layout.size).map_err(|_| bad_frame(frame, "too large for wl_shm"))?;
        let memory = SharedMemory::new(layout.size).map_err(|source| DisplayError::Allocation {
            size: layout.size,
            source,
        })?;
        let pool = self
            .state
            .shm
            .create_pool(memory.as_fd(), size, &self.qh, NoEvents);
        let wl_buffer = pool.create_buffer(
            0,
            clamp_i32(frame.width),
            clamp_i32(frame.height),
            clamp_i32(layout.planes[0].stride as u32),
            wl_shm::Format::Xrgb8888,
            &self.qh,
            BufferData::Video,
        );
        // The buffer keeps the memory alive on the compositor side.
        pool.destroy();
        Ok(FrameBuffer {
            wl_buffer,
            memory,
            layout,
        })
    }
}

impl Drop for Display {
    fn drop(&mut self) {
        self.state.overlay = None;
        self.state.subtitles = None;
        for b in self.state.pool.drain_all() {
            b.wl_buffer.destroy();
        }
        for b in self.state.imported.drain_all() {
            b.destroy();
        }
        let _ = self.conn.flush();
    }
}

/// Reads what the socket holds; nothing there (`WouldBlock`) is no error.
fn read_events(guard: ReadEventsGuard) -> Result<(), DisplayError> {
    match guard.read() {
        Ok(_) => Ok(()),
        Err(WaylandError::Io(e)) if e.kind() == io::ErrorKind::WouldBlock => Ok(()),
        Err(e) => Err(e.into()),
    }
}

fn bad_frame(frame: &Frame, reason: &str) -> DisplayError {
    DisplayError::BadFrame {
        width: frame.width,
        height: frame.height,
        reason: reason.to_owned(),
    }
}
