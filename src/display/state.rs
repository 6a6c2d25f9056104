//! The client's state: every Wayland object we hold and what the event
//! handlers (protocol.rs) record for `Display` (wayland.rs) to act on.

use super::crop::Rect;
use smithay_client_toolkit::compositor::CompositorState;
use smithay_client_toolkit::output::OutputState;
use smithay_client_toolkit::registry::RegistryState;
use smithay_client_toolkit::seat::pointer::{CursorIcon, ThemedPointer};
use smithay_client_toolkit::seat::SeatState;
use smithay_client_toolkit::shell::xdg::window::{DecorationMode, Window, WindowDecorations};
use smithay_client_toolkit::shell::xdg::{XdgShell, XdgSurface};
use smithay_client_toolkit::shell::WaylandSurface;
use smithay_client_toolkit::subcompositor::SubcompositorState;
use tracing::{debug, info};
use wayland_client::globals::GlobalList;
use wayland_client::protocol::{wl_buffer::WlBuffer, wl_keyboard::WlKeyboard, wl_shm};
use wayland_client::{Connection, Proxy, QueueHandle};
use wayland_protocols::wp::linux_dmabuf::zv1::client::{
    zwp_linux_dmabuf_feedback_v1::ZwpLinuxDmabufFeedbackV1, zwp_linux_dmabuf_v1::ZwpLinuxDmabufV1,
};
use wayland_protocols::wp::presentation_time::client::wp_presentation::WpPresentation;
use wayland_protocols::wp::viewporter::client::{
    wp_viewport::WpViewport, wp_viewporter::WpViewporter,
};

use super::aspect::{clamp_i32, surface_size};
use super::compositor_formats::CopyFormats;
use super::cursor::{CursorPolicy, CursorRequest};
use super::decorations;
use super::dmabuf_formats::{device_name, AdvertisedFormats};
use super::feedback::{FeedbackKind, FeedbackTracker, FeedbackUpdate};
use super::idle_inhibit::IdleInhibit;
use super::imported::{ImportRelease, ImportedBuffers};
use super::layout::BufferLayout;
use super::memory::SharedMemory;
use super::overlay::{Overlay, OVERLAY_MARGIN};
use super::pool::{BufferPool, Released};
use super::user_data::BufferData;
use super::user_data::{DmabufGlobal, FeedbackData, NoEvents};
use super::{DisplayError, DisplayEvent, PresentStats, Presented, WindowOptions, MAX_POOL_BUFFERS};
use crate::fourcc::{fourcc_text, import_modifier, modifier_name};
use crate::frame::DmabufFrame;

/// One wl_buffer of the copy paths and the memory behind it.
pub(super) struct FrameBuffer {
    pub(super) wl_buffer: WlBuffer,
    pub(super) memory: SharedMemory,
    pub(super) layout: BufferLayout,
}

/// Why a decoder's dmabuf frame is copied rather than presented as it is
/// (decided per frame by `Display::present`; the negotiation's own reason
/// for choosing the copy path is `negotiation::NoSharedFormat`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum FrameCopyReason {
    Forced,
    NoDmabuf,
    /// (fourcc, modifier) of the decoder's buffers.
    NotAdvertised(u32, u64),
    /// The decoder's buffer has fewer bits per sample than the stream.
    BitDepth {
        stream: u32,
        buffer: u32,
    },
}

impl FrameCopyReason {
    /// The modifier `dmabuf` is presented with as it is (its own, or the
    /// implicit one for a linear buffer of a fourcc the compositor lists only
    /// implicitly: `fourcc::import_modifier`), or why it is copied.
    pub(super) fn for_dmabuf(
        force_copy: bool,
        has_dmabuf: bool,
        advertised: &AdvertisedFormats,
        dmabuf: &DmabufFrame,
    ) -> Result<u64, Self> {
        if force_copy {
            Err(Self::Forced)
        } else if !has_dmabuf {
            Err(Self::NoDmabuf)
        } else if dmabuf.bit_depth < dmabuf.stream_bit_depth {
            Err(Self::BitDepth {
                stream: dmabuf.stream_bit_depth,
                buffer: dmabuf.bit_depth,
            })
        } else {
            import_modifier(
                |f, m| advertised.contains(f, m),
                dmabuf.fourcc,
                dmabuf.modifier,
            )
            .ok_or(Self::NotAdvertised(dmabuf.fourcc, dmabuf.modifier))
        }
    }
}

impl std::fmt::Display for FrameCopyReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Self::Forced => f.write_str("forced by option"),
            Self::NoDmabuf => f.write_str("the compositor has no zwp_linux_dmabuf_v1"),
            Self::NotAdvertised(fourcc, modifier) => write!(
                f,
                "the compositor does not advertise {} with modifier {}",
                fourcc_text(fourcc),
                modifier_name(modifier)
            ),
            Self::BitDepth { stream, buffer } => write!(
                f,
                "the stream is {stream}-bit, the decoder's buffers {buffer}-bit"
            ),
        }
    }
}

/// Everything the Wayland event handlers touch.
pub(super) struct State {
    pub(super) registry: RegistryState,
    pub(super) seat: SeatState,
    pub(super) outputs: OutputState,
    pub(super) compositor: CompositorState,
    pub(super) _xdg: XdgShell,
    pub(super) window: Window,
    pub(super) viewport: Option<WpViewport>,
    pub(super) _viewporter: Option<WpViewporter>,
    pub(super) shm: wl_shm::WlShm,
    pub(super) presentation: Option<WpPresentation>,
    pub(super) presentation_clock: Option<u32>,
    pub(super) last_presented: Option<Presented>,
    /// Presentations the player has not yet taken.
    pub(super) presented: Vec<Presented>,
    pub(super) vblank: super::vblank::VblankPredictor,
    pub(super) dmabuf: Option<ZwpLinuxDmabufV1>,
    /// What dmabuf imports may use: the feedback in effect (or the v3
    /// modifiers) less the pairs the compositor refused.
    pub(super) advertised: AdvertisedFormats,
    /// Pairs the compositor refused to import although it advertised them.
    pub(super) refused: Vec<(u32, u64)>,
    /// v4+: the default and per-surface feedback objects and their batches.
    pub(super) _feedback_objects: Vec<ZwpLinuxDmabufFeedbackV1>,
    pub(super) feedback: FeedbackTracker,
    /// What a copied frame's target is chosen from: the above resolved,
    /// refreshed whenever they change.
    pub(super) copy_formats: CopyFormats,
    pub(super) keyboard: Option<WlKeyboard>,
    /// The pointer, with the cursor surface it shows over the window.
    pub(super) pointer: Option<ThemedPointer>,
    pub(super) cursor: CursorPolicy,
    pub(super) idle_inhibit: IdleInhibit,
    /// The decoration mode last asked for.
    pub(super) decoration: Option<DecorationMode>,
    pub(super) events: Vec<DisplayEvent>,
    pub(super) configured: bool,
    pub(super) configured_size: Option<(u32, u32)>,
    pub(super) fullscreen: bool,
    pub(super) frame_pending: bool,
    /// The display size of the last frame shown, for aspect fitting.
    pub(super) content: Option<(u32, u32)>,
    /// The viewport destination last set.
    pub(super) applied_size: Option<(u32, u32)>,
    pub(super) has_buffer: bool,
    pub(super) pool: BufferPool<FrameBuffer>,
    pub(super) stats: PresentStats,
    /// Outcome of the last dmabuf import: `Some(Some(buffer))` created,
    /// `Some(None)` failed.
    pub(super) import_result: Option<Option<WlBuffer>>,
    pub(super) force_shm: bool,
    /// Never present decoder dmabufs as they are (`--copy`).
    pub(super) force_copy: bool,
    /// Why dmabuf is not used, once we know (logged once).
    pub(super) shm_reason: Option<String>,
    /// 10-bit frames are copied into an 8-bit format (logged once).
    pub(super) depth_reduced: bool,
    /// Why a decoder dmabuf frame is copied, once we know (logged once).
    pub(super) copy_reason: Option<FrameCopyReason>,
    /// wl_buffers imported from decoder dmabufs (zero-copy path).
    pub(super) imported: ImportedBuffers<WlBuffer>,
    /// The viewport source rectangle last set (`None`: the whole buffer).
    pub(super) source_rect: Option<Rect>,
    /// The rectangle of each picture shown (`--video-crop`).
    pub(super) crop: Option<Rect>,
    /// The crop lies outside the picture, which is then shown whole (said
    /// once per picture size).
    pub(super) crop_outside: Option<(u32, u32)>,
    /// The OSD's subsurface (None: the compositor has no wl_subcompositor).
    pub(super) overlay: Option<Overlay>,
    /// The subtitles' surface, below the OSD's.
    pub(super) subtitles: Option<Overlay>,
    /// The window surface's integer scale (the OSD is drawn at it).
    pub(super) scale: u32,
    /// How the last frame was presented.
    pub(super) last_path: Option<PresentedPath>,
}

/// How a frame reached the screen: worded only when asked (the OSD's
/// stats page), not per frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum PresentedPath {
    /// The decoder's own buffer: its format and modifier.
    ZeroCopy { fourcc: u32, modifier: u64 },
    /// Copied, and why, in words.
    Copied(String),
}

impl State {
    pub(super) fn new(
        globals: &GlobalList,
        qh: &QueueHandle<State>,
        opts: &WindowOptions,
    ) -> Result<Self, DisplayError> {
        let compositor = CompositorState::bind(globals, qh)
            .map_err(|_| DisplayError::MissingGlobal("wl_compositor"))?;
        let xdg =
            XdgShell::bind(globals, qh).map_err(|_| DisplayError::MissingGlobal("xdg_wm_base"))?;
        let shm: wl_shm::WlShm = globals
            .bind(qh, 1..=1, NoEvents)
            .map_err(|_| DisplayError::MissingGlobal("wl_shm"))?;
        // The highest version offered: v3 sends modifier events; v4+ sends
        // feedback instead (v5 only adds an error for mixed modifiers, which
        // reel never sends; v6 drops main_device and adds the sampling flag).
        let dmabuf: Option<ZwpLinuxDmabufV1> = globals.bind(qh, 3..=6, DmabufGlobal).ok();
        let viewporter: Option<WpViewporter> = globals.bind(qh, 1..=1, NoEvents).ok();
        let presentation: Option<WpPresentation> = globals.bind(qh, 1..=1, NoEvents).ok();
        let surface = compositor.create_surface(qh);
        // The surface's own feedback follows it (fullscreen, another output);
        // the default one covers the time before the surface's arrives.
        let feedback_objects = match dmabuf.as_ref().filter(|d| d.version() >= 4) {
            Some(d) => vec![
                d.get_default_feedback(qh, FeedbackData(FeedbackKind::Default)),
                d.get_surface_feedback(&surface, qh, FeedbackData(FeedbackKind::Surface)),
            ],
            None => Vec::new(),
        };
        let viewport = viewporter
            .as_ref()
            .map(|v| v.get_viewport(&surface, qh, NoEvents));
        // Made before the window's first commit, so the subsurface is in
        // place from the first frame on (its placement applies when the
        // parent commits, and a paused video does not).
        // The subtitles' first: the OSD's, made after, stacks above them.
        let (subtitles, overlay) =
            match SubcompositorState::bind(compositor.wl_compositor().clone(), globals, qh) {
                Ok(subcompositor) => {
                    let overlay = |at: ((i32, i32), BufferData)| {
                        Some(Overlay::new(&subcompositor, &compositor, &surface, at, qh))
                    };
                    let margin = OVERLAY_MARGIN as i32;
                    (
                        overlay(((0, 0), BufferData::Subtitles)),
                        overlay(((margin, margin), BufferData::Overlay)),
                    )
                }
                Err(_) => {
                    info!("the compositor has no wl_subcompositor: no OSD, no subtitles");
                    (None, None)
                }
            };
        let window = xdg.create_window(surface, WindowDecorations::ServerDefault, qh);
        window.set_title(opts.title.clone());
        window.set_app_id(opts.app_id.clone());
        if opts.fullscreen {
            window.set_fullscreen(None);
        }
        let mut decoration = None;
        decorations::request(&window, &mut decoration, opts.fullscreen);
        let mut cursor = CursorPolicy::default();
        cursor.set_fullscreen(opts.fullscreen);
        // The initial commit without a buffer asks for the first configure.
        window.commit();
        Ok(State {
            registry: RegistryState::new(globals),
            seat: SeatState::new(globals, qh),
            outputs: OutputState::new(globals, qh),
            compositor,
            _xdg: xdg,
            window,
            viewport,
            _viewporter: viewporter,
            shm,
            presentation,
            presentation_clock: None,
            last_presented: None,
            presented: Vec::new(),
            vblank: Default::default(),
            dmabuf,
            advertised: AdvertisedFormats::new(),
            refused: Vec::new(),
            _feedback_objects: feedback_objects,
            feedback: FeedbackTracker::default(),
            copy_formats: CopyFormats::default(),
            keyboard: None,
            pointer: None,
            cursor,
            idle_inhibit: IdleInhibit::bind(globals, qh),
            decoration,
            events: Vec::new(),
            configured: false,
            configured_size: None,
            fullscreen: false,
            frame_pending: false,
            content: None,
            applied_size: None,
            has_buffer: false,
            pool: BufferPool::new(MAX_POOL_BUFFERS),
            stats: PresentStats::default(),
            import_result: None,
            force_shm: opts.force_shm,
            force_copy: opts.force_copy,
            shm_reason: None,
            depth_reduced: false,
            copy_reason: None,
            imported: ImportedBuffers::new(),
            source_rect: None,
            crop: opts.crop,
            crop_outside: None,
            overlay,
            subtitles,
            scale: 1,
            last_path: None,
        })
    }

    /// Sets the viewport destination so the picture keeps its aspect ratio
    /// inside the configured size (or shows at its display size).
    pub(super) fn apply_geometry(&mut self) {
        let Some(content) = self.content else { return };
        let size = surface_size(content, self.configured_size);
        if self.applied_size == Some(size) {
            return;
        }
        if let Some(viewport) = &self.viewport {
            viewport.set_destination(clamp_i32(size.0), clamp_i32(size.1));
        }
        // The window is the video surface alone: left to itself the
        // compositor would count the OSD's subsurface in, and a window
        // wider than its fullscreen size is a protocol error.
        self.window
            .set_window_geometry(0, 0, size.0.max(1), size.1.max(1));
        debug!(width = size.0, height = size.1, "surface size");
        self.applied_size = Some(size);
    }

    /// The compositor's configure said `fullscreen`: decorations and the
    /// cursor follow.
    pub(super) fn fullscreen_changed(&mut self, conn: &Connection, fullscreen: bool) {
        self.fullscreen = fullscreen;
        decorations::request(&self.window, &mut self.decoration, fullscreen);
        self.cursor.set_fullscreen(fullscreen);
        self.apply_cursor(conn, std::time::Instant::now());
    }

    /// Shows or hides the cursor over the window as [`CursorPolicy`] says.
    pub(super) fn apply_cursor(&mut self, conn: &Connection, now: std::time::Instant) {
        let Some(pointer) = &self.pointer else { return };
        let Some(request) = self.cursor.update(now) else {
            return;
        };
        let sent = match request {
            CursorRequest::Hide => pointer.hide_cursor(),
            CursorRequest::Show => pointer.set_cursor(conn, CursorIcon::Default),
        };
        match sent {
            Ok(()) => debug!(?request, "cursor"),
            Err(e) => debug!(?request, "cursor not set: {e}"),
        }
    }

    /// A complete feedback batch was taken in: imports follow the feedback
    /// in effect, and the player hears of a change (to re-negotiate).
    pub(super) fn feedback_done(
        &mut self,
        kind: FeedbackKind,
        version: u32,
        update: FeedbackUpdate,
    ) {
        let Some(feedback) = self.feedback.effective() else {
            return;
        };
        debug!(
            surface = kind == FeedbackKind::Surface,
            version,
            tranches = feedback.tranches.len(),
            scanout_tranches = feedback.tranches.iter().filter(|t| t.scanout).count(),
            table = feedback.table.len(),
            main_device = feedback.main_device.map_or("none".into(), device_name),
            ?update,
            "dmabuf feedback"
        );
        if update == FeedbackUpdate::Unchanged {
            return;
        }
        match feedback.advertised() {
            Ok(mut formats) => {
                formats.remove_all(&self.refused);
                self.advertised = formats;
            }
            Err(e) => debug!("feedback in effect unusable: {e}"),
        }
        if update == FeedbackUpdate::Changed {
            info!(
                surface = kind == FeedbackKind::Surface,
                pairs = self.advertised.len(),
                tranches = feedback.tranches.len(),
                "dmabuf feedback changed"
            );
            self.events.push(DisplayEvent::DmabufFormatsChanged);
        }
        self.refresh_copy_formats();
    }

    /// The compositor refused to import `fourcc:modifier` although it
    /// advertised it: never offered again, whatever feedback comes.
    pub(super) fn refuse(&mut self, fourcc: u32, modifier: u64) {
        self.refused.push((fourcc, modifier));
        self.advertised.remove(fourcc, modifier);
        self.refresh_copy_formats();
    }

    /// Resolves what a copied frame's target is chosen from again, after
    /// the feedback, the v3 modifiers or the refused pairs changed.
    pub(super) fn refresh_copy_formats(&mut self) {
        self.copy_formats
            .refresh(self.feedback.effective(), &self.advertised, &self.refused);
    }

    /// A wl_buffer.release for one of ours.
    pub(super) fn buffer_released(&mut self, buffer: &WlBuffer) {
        match self.pool.release(|b| b.wl_buffer == *buffer) {
            Released::Reusable => self.stats.buffers_released += 1,
            Released::Destroy(old) => {
                self.stats.buffers_released += 1;
                old.wl_buffer.destroy();
            }
            Released::Unknown => match self.imported.release(buffer) {
                ImportRelease::Kept => self.stats.buffers_released += 1,
                ImportRelease::Destroy(old) => {
                    self.stats.buffers_released += 1;
                    old.destroy();
                }
                ImportRelease::Unknown => {
                    debug!(buffer = %buffer.id(), "release of a buffer not in the pool")
                }
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::display::testutil::described_dmabuf;
    use crate::fourcc::{fourcc, MOD_INVALID, MOD_LINEAR};

    const NV12: u32 = fourcc(b"NV12");
    const P010: u32 = fourcc(b"P010");

    fn advertised(pairs: &[(u32, u64)]) -> AdvertisedFormats {
        let mut formats = AdvertisedFormats::new();
        for &(fourcc, modifier) in pairs {
            formats.add(fourcc, modifier);
        }
        formats
    }

    #[test]
    fn an_advertised_buffer_at_the_streams_depth_is_presented_as_it_is() {
        let both = advertised(&[(NV12, MOD_LINEAR), (P010, MOD_LINEAR)]);
        let nv12 = described_dmabuf(NV12, MOD_LINEAR, 8, 8);
        let p010 = described_dmabuf(P010, MOD_LINEAR, 10, 10);
        assert_eq!(
            FrameCopyReason::for_dmabuf(false, true, &both, &nv12),
            Ok(MOD_LINEAR)
        );
        assert_eq!(
            FrameCopyReason::for_dmabuf(false, true, &both, &p010),
            Ok(MOD_LINEAR)
        );
        // A deeper buffer than the stream loses nothing.
        let deep = described_dmabuf(P010, MOD_LINEAR, 10, 8);
        assert_eq!(
            FrameCopyReason::for_dmabuf(false, true, &both, &deep),
            Ok(MOD_LINEAR)
        );
    }

    #[test]
    fn an_eight_bit_buffer_of_a_ten_bit_stream_is_never_presented_as_it_is() {
        // A decoder that offers only 8-bit CAPTURE formats for a Main 10
        // stream (visl): the negotiation chose the copy path, and the
        // compositor's taking NV12 does not override that.
        let both = advertised(&[(NV12, MOD_LINEAR), (P010, MOD_LINEAR)]);
        let truncated = described_dmabuf(NV12, MOD_LINEAR, 8, 10);
        let reason = FrameCopyReason::for_dmabuf(false, true, &both, &truncated);
        assert_eq!(
            reason,
            Err(FrameCopyReason::BitDepth {
                stream: 10,
                buffer: 8
            })
        );
        let text = reason.err().map(|r| r.to_string()).unwrap_or_default();
        assert_eq!(text, "the stream is 10-bit, the decoder's buffers 8-bit");
    }

    #[test]
    fn forced_copy_and_missing_dmabuf_come_first() {
        let nv12 = advertised(&[(NV12, MOD_LINEAR)]);
        let frame = described_dmabuf(NV12, MOD_LINEAR, 8, 10);
        assert_eq!(
            FrameCopyReason::for_dmabuf(true, true, &nv12, &frame),
            Err(FrameCopyReason::Forced)
        );
        assert_eq!(
            FrameCopyReason::for_dmabuf(false, false, &nv12, &frame),
            Err(FrameCopyReason::NoDmabuf)
        );
        let unadvertised = described_dmabuf(P010, MOD_LINEAR, 10, 10);
        assert_eq!(
            FrameCopyReason::for_dmabuf(false, true, &nv12, &unadvertised),
            Err(FrameCopyReason::NotAdvertised(P010, MOD_LINEAR))
        );
        // A linear buffer of a fourcc listed only implicitly imports so.
        let implicit = advertised(&[(NV12, MOD_INVALID)]);
        let linear = described_dmabuf(NV12, MOD_LINEAR, 8, 8);
        assert_eq!(
            FrameCopyReason::for_dmabuf(false, true, &implicit, &linear),
            Ok(MOD_INVALID)
        );
    }
}
