//! How a copied frame reaches the screen, as the display carries it out:
//! where the negotiation says (`negotiation::copy_target`), a dmabuf of
//! that format or wl_shm, and the words the OSD's stats page shows for it.

use drm_fourcc::DrmFourcc;
use tracing::info;

use super::dmabuf_formats::DmabufChoice;
use super::state::PresentedPath;
use super::Display;
use crate::fourcc::{fourcc_text, modifier_name};
use crate::frame::{Frame, FrameStorage};
use crate::negotiation::{copy_target, CopyTarget};

/// Where a frame goes: a dmabuf of the chosen format, or XRGB8888 wl_shm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Route {
    Dmabuf(DmabufChoice),
    Shm,
}

impl Display {
    pub(super) fn choose_path(&mut self, frame: &Frame) -> Route {
        if self.state.force_shm {
            self.note_shm("forced by option".to_owned());
            return Route::Shm;
        }
        if self.state.dmabuf.is_none() {
            self.note_shm("the compositor has no zwp_linux_dmabuf_v1".to_owned());
            return Route::Shm;
        }
        // Where the negotiation says a copied frame goes, from what the
        // compositor takes now (less the pairs it refused).
        match copy_target(frame.format, self.state.copy_formats.get()) {
            CopyTarget::Dmabuf {
                drm_fourcc,
                modifier,
                bit_depth,
                ..
            } => {
                let Ok(fourcc) = DrmFourcc::try_from(drm_fourcc) else {
                    self.note_shm(format!("no DRM format {}", fourcc_text(drm_fourcc)));
                    return Route::Shm;
                };
                if bit_depth < frame.format.bit_depth() && !self.state.depth_reduced {
                    info!(
                        "showing {} frames as 8-bit {:?}: the compositor takes no 10-bit format",
                        frame.format, fourcc
                    );
                    self.state.depth_reduced = true;
                }
                Route::Dmabuf(DmabufChoice { fourcc, modifier })
            }
            CopyTarget::Shm => {
                self.note_shm(format!(
                    "the compositor takes no linear {} dmabuf",
                    frame.format
                ));
                Route::Shm
            }
        }
    }

    /// Logs once why frames go through wl_shm.
    fn note_shm(&mut self, reason: String) {
        if self.state.shm_reason.as_deref() != Some(reason.as_str()) {
            info!("presenting through wl_shm (XRGB8888): {reason}");
            self.state.shm_reason = Some(reason);
        }
    }

    /// How a copied frame reached the screen, and why it was copied.
    pub(super) fn describe_copy(&self, frame: &Frame, path: Route) -> String {
        let (source, why) = match &frame.storage {
            FrameStorage::Dmabuf(d) => (
                format!("{}:{}", fourcc_text(d.fourcc), modifier_name(d.modifier)),
                self.state.copy_reason.map(|r| r.to_string()),
            ),
            FrameStorage::Cpu(_) => (
                frame.format.to_string(),
                Some("decoded into memory".to_owned()),
            ),
        };
        let into = match path {
            Route::Dmabuf(c) => format!(
                "a {}:{} dmabuf",
                fourcc_text(c.fourcc as u32),
                modifier_name(c.modifier)
            ),
            Route::Shm => "XRGB8888 wl_shm".to_owned(),
        };
        let why = match path {
            Route::Shm => self.state.shm_reason.clone().or(why),
            Route::Dmabuf(_) => why,
        };
        match why {
            Some(why) => format!("{source} copied into {into} ({why})"),
            None => format!("{source} copied into {into}"),
        }
    }

    /// How the last frame reached the screen (format, modifier, zero-copy
    /// or copied and why), for the OSD's stats page.
    pub fn presentation_path(&self) -> Option<String> {
        self.state.last_path.as_ref().map(|path| match path {
            PresentedPath::ZeroCopy { fourcc, modifier } => {
                format!(
                    "{}:{} zero-copy",
                    fourcc_text(*fourcc),
                    modifier_name(*modifier)
                )
            }
            PresentedPath::Copied(words) => words.clone(),
        })
    }
}
