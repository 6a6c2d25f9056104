//! Finding stateless decoders: media topology first (decoder entities and
//! their video nodes), then what each node can do (coded formats and sizes,
//! request support, codec menus). Also chooses one for a stream and prints
//! the report `reel probe` shows.

use std::collections::BTreeMap;
use std::fmt;
use std::fs::File;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use tracing::{debug, warn};
use v4l2r::bindings::{self, v4l2_frmsizeenum, v4l2_queryctrl, v4l2_querymenu};
use v4l2r::ioctl::{self, Capabilities, Capability, FmtDesc, QueryCtrlFlags};
use v4l2r::memory::MemoryType;
use v4l2r::nix::errno::Errno;
use v4l2r::{Format, QueueType};

use super::node::{self, NodeError};
use super::topology::{self, read_topology};
use crate::fourcc::fourcc_text;
use crate::media::VideoStreamInfo;

/// Why a device cannot be used; every variant names the device.
#[derive(Debug, thiserror::Error)]
pub enum DiscoveryError {
    #[error(transparent)]
    Node(#[from] NodeError),
    #[error("{path}: {ioctl} failed: {errno}")]
    Ioctl {
        path: PathBuf,
        ioctl: &'static str,
        errno: Errno,
    },
    #[error("{path}: not a memory-to-memory video device")]
    NotM2m { path: PathBuf },
    #[error("{path}: no media controller node: the request API needs one")]
    NoMediaNode { path: PathBuf },
    #[error("{path}: the OUTPUT queue does not support requests (V4L2_BUF_CAP_SUPPORTS_REQUESTS)")]
    NoRequests { path: PathBuf },
    #[error("{path}: no stateless coded format {format}")]
    UnsupportedFormat { path: PathBuf, format: String },
    #[error("{path}: {width}x{height} is outside the decoder's sizes {range}")]
    UnsupportedSize {
        path: PathBuf,
        width: u32,
        height: u32,
        range: SizeRange,
    },
    #[error("{path}: {profile} is not among the decoder's profiles")]
    UnsupportedProfile { path: PathBuf, profile: String },
    #[error("no V4L2 stateless decoder found{}", reasons_text(.reasons))]
    NoDecoder { reasons: Vec<String> },
}

fn reasons_text(reasons: &[String]) -> String {
    if reasons.is_empty() {
        String::new()
    } else {
        format!(": {}", reasons.join("; "))
    }
}

/// Sizes the decoder accepts for a coded format (`VIDIOC_ENUM_FRAMESIZES`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SizeRange {
    pub min_width: u32,
    pub max_width: u32,
    pub step_width: u32,
    pub min_height: u32,
    pub max_height: u32,
    pub step_height: u32,
}

impl SizeRange {
    pub fn contains(&self, width: u32, height: u32) -> bool {
        let on_step = |v: u32, min: u32, step: u32| step <= 1 || (v - min) % step == 0;
        (self.min_width..=self.max_width).contains(&width)
            && (self.min_height..=self.max_height).contains(&height)
            && on_step(width, self.min_width, self.step_width)
            && on_step(height, self.min_height, self.step_height)
    }
}

impl fmt::Display for SizeRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}x{}..{}x{} (step {}x{})",
            self.min_width,
            self.min_height,
            self.max_width,
            self.max_height,
            self.step_width,
            self.step_height
        )
    }
}

/// One OUTPUT (coded) format.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodedFormat {
    pub fourcc: u32,
    pub description: String,
    /// `None` when the driver does not enumerate sizes.
    pub sizes: Option<SizeRange>,
    /// `V4L2_BUF_CAP_SUPPORTS_M2M_HOLD_CAPTURE_BUF` once the OUTPUT format
    /// is this one: drivers decide it per coded format (cedrus sets it for
    /// H.264 and HEVC only, at S_FMT), some never (hantro, rkvdec).
    pub holds_capture: bool,
}

/// A menu control's range and the items the driver offers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MenuControl {
    pub id: u32,
    pub minimum: i32,
    pub maximum: i32,
    pub default: i32,
    /// (value, name) of each offered item (skipped items are absent).
    pub items: Vec<(u32, String)>,
}

impl MenuControl {
    pub fn offers(&self, value: u32) -> bool {
        self.items.iter().any(|(v, _)| *v == value)
    }
}

/// What one decoder node offers.
#[derive(Clone, Debug)]
pub struct DecoderInfo {
    pub video_node: PathBuf,
    pub media_node: Option<PathBuf>,
    /// The media entity (function `MEDIA_ENT_F_PROC_VIDEO_DECODER`).
    pub entity: Option<String>,
    pub driver: String,
    pub card: String,
    pub bus_info: String,
    pub multiplanar: bool,
    pub coded_formats: Vec<CodedFormat>,
    pub supports_requests: bool,
    /// Every menu control the node has (decode mode, start code, profile,
    /// level, ...), by control id.
    pub menus: BTreeMap<u32, MenuControl>,
}

/// What a stream needs from a decoder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamRequirements {
    /// OUTPUT fourcc, e.g. `formats::coded::H264_SLICE`.
    pub coded_format: u32,
    pub width: u32,
    pub height: u32,
    /// The stream's profile, when known and the codec has a profile menu.
    pub profile: Option<ProfileNeed>,
}

impl StreamRequirements {
    /// The container's size, and the profile it needs.
    pub fn of_container(
        coded_format: u32,
        stream: &VideoStreamInfo,
        profile: Option<ProfileNeed>,
    ) -> Self {
        Self {
            coded_format,
            width: stream.width,
            height: stream.height,
            profile,
        }
    }

    /// The container's size, in whole 16x16 blocks (VP8's macroblocks,
    /// FWHT's coded size), with no profile menu to match.
    pub fn in_blocks_of_16(coded_format: u32, stream: &VideoStreamInfo) -> Self {
        let (width, height) = in_blocks_of_16(stream.width, stream.height);
        Self {
            coded_format,
            width,
            height,
            profile: None,
        }
    }
}

/// A size rounded up to whole 16x16 blocks.
pub fn in_blocks_of_16(width: u32, height: u32) -> (u32, u32) {
    (width.div_ceil(16) * 16, height.div_ceil(16) * 16)
}

/// A profile the stream needs, as a profile menu (e.g.
/// `V4L2_CID_MPEG_VIDEO_H264_PROFILE`) would offer it. A decoder without
/// the menu is let try.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileNeed {
    pub menu: u32,
    /// Menu values any one of which takes the stream.
    pub accepted: Vec<u32>,
    /// What the stream says, for messages (e.g. "H.264 profile_idc 100").
    pub label: String,
}

impl DecoderInfo {
    /// The menu control `id`, when the node has it.
    pub fn menu(&self, id: u32) -> Option<&MenuControl> {
        self.menus.get(&id)
    }

    /// A node with no formats or menus (unit tests fill in the rest).
    #[cfg(test)]
    pub(crate) fn for_tests(video_node: &str) -> Self {
        Self {
            video_node: video_node.into(),
            media_node: Some("/dev/media9".into()),
            entity: None,
            driver: "test".into(),
            card: "test".into(),
            bus_info: String::new(),
            multiplanar: true,
            coded_formats: Vec::new(),
            supports_requests: true,
            menus: BTreeMap::new(),
        }
    }

    pub fn coded_format(&self, fourcc: u32) -> Option<&CodedFormat> {
        self.coded_formats.iter().find(|f| f.fourcc == fourcc)
    }

    /// Whether the driver keeps a CAPTURE buffer across requests
    /// (`V4L2_BUF_FLAG_M2M_HOLD_CAPTURE_BUF`) when decoding `fourcc`.
    pub fn holds_capture(&self, fourcc: u32) -> bool {
        self.coded_format(fourcc).is_some_and(|f| f.holds_capture)
    }

    /// Whether this decoder can take the stream; the error says why not.
    pub fn check(&self, needs: &StreamRequirements) -> Result<(), DiscoveryError> {
        let path = || self.video_node.clone();
        if self.media_node.is_none() {
            return Err(DiscoveryError::NoMediaNode { path: path() });
        }
        if !self.supports_requests {
            return Err(DiscoveryError::NoRequests { path: path() });
        }
        let format = self.coded_format(needs.coded_format).ok_or_else(|| {
            DiscoveryError::UnsupportedFormat {
                path: path(),
                format: fourcc_text(needs.coded_format),
            }
        })?;
        if let Some(range) = format.sizes {
            if !range.contains(needs.width, needs.height) {
                return Err(DiscoveryError::UnsupportedSize {
                    path: path(),
                    width: needs.width,
                    height: needs.height,
                    range,
                });
            }
        }
        if let Some(need) = &needs.profile {
            if let Some(profiles) = self.menu(need.menu) {
                if !need.accepted.iter().any(|&v| profiles.offers(v)) {
                    return Err(DiscoveryError::UnsupportedProfile {
                        path: path(),
                        profile: need.label.clone(),
                    });
                }
            }
        }
        Ok(())
    }
}

/// Every decoder found, and the devices that were skipped with why.
#[derive(Debug, Default)]
pub struct Discovery {
    pub decoders: Vec<DecoderInfo>,
    pub problems: Vec<DiscoveryError>,
}

impl Discovery {
    /// The first decoder that takes the stream, or an error listing why each
    /// candidate was refused.
    pub fn choose(&self, needs: &StreamRequirements) -> Result<&DecoderInfo, DiscoveryError> {
        let mut reasons: Vec<String> = self.problems.iter().map(ToString::to_string).collect();
        for decoder in &self.decoders {
            match decoder.check(needs) {
                Ok(()) => return Ok(decoder),
                Err(e) => reasons.push(e.to_string()),
            }
        }
        Err(DiscoveryError::NoDecoder { reasons })
    }
}

/// Walks `/dev/media*` and probes each decoder entity's video node.
pub fn discover() -> Discovery {
    discover_in(Path::new("/dev"))
}

/// The media nodes (`media*`) in `dev`, sorted: what [`discover`] walks.
pub fn media_nodes(dev: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dev) else {
        return Vec::new();
    };
    let mut nodes: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("media"))
        .map(|e| e.path())
        .collect();
    nodes.sort();
    nodes
}

fn discover_in(dev: &Path) -> Discovery {
    let mut found = Discovery::default();
    for media in media_nodes(dev) {
        let topology = match read_topology(&media) {
            Ok(t) => t,
            Err(e) => {
                debug!("skipping {}: {e}", media.display());
                continue;
            }
        };
        for decoder in topology.decoders() {
            let (major, minor) = decoder.devnode;
            let Some(video) = topology::devnode_path(major, minor) else {
                warn!("{}: no /dev node for {major}:{minor}", media.display());
                continue;
            };
            match probe_video_node(&video, Some(media.clone()), Some(decoder.entity.clone())) {
                Ok(info) => found.decoders.push(info),
                Err(e) => {
                    warn!("{e}");
                    found.problems.push(e);
                }
            }
        }
    }
    found
}

/// Probes a video node named by the user (`--device /dev/videoN`); its
/// media node is found by matching device numbers in every topology.
pub fn probe_device(video: &Path) -> Result<DecoderInfo, DiscoveryError> {
    let meta = std::fs::metadata(video).map_err(|source| NodeError::Open {
        path: video.to_path_buf(),
        source,
    })?;
    if !meta.file_type().is_char_device() {
        return Err(NodeError::Open {
            path: video.to_path_buf(),
            source: std::io::Error::other("not a character device"),
        }
        .into());
    }
    let rdev = meta.rdev();
    let (major, minor) = (
        v4l2r::nix::sys::stat::major(rdev) as u32,
        v4l2r::nix::sys::stat::minor(rdev) as u32,
    );
    let mut media_match = None;
    for media in media_nodes(Path::new("/dev")) {
        let Ok(topology) = read_topology(&media) else {
            continue;
        };
        if let Some(d) = topology
            .decoders()
            .into_iter()
            .find(|d| d.devnode == (major, minor))
        {
            media_match = Some((media, d.entity));
            break;
        }
    }
    let (media, entity) = media_match.unzip();
    probe_video_node(video, media, entity)
}

/// Whether the node has the control `id` (compound ones included, which
/// the menu walk does not list); false when the node cannot be opened.
pub fn has_control(video_node: &Path, id: u32) -> bool {
    let Ok(file) = open_video(video_node) else {
        return false;
    };
    let Ok(ctrl_id) = ioctl::CtrlId::new(id) else {
        return false;
    };
    ioctl::query_ext_ctrl::<bindings::v4l2_query_ext_ctrl>(&file, ctrl_id, QueryCtrlFlags::empty())
        .is_ok_and(|q| q.flags & bindings::V4L2_CTRL_FLAG_DISABLED == 0)
}

fn open_video(path: &Path) -> Result<File, DiscoveryError> {
    Ok(node::open(path)?)
}

/// The OUTPUT and CAPTURE queue types of an m2m node.
pub(crate) fn queue_types(multiplanar: bool) -> (QueueType, QueueType) {
    if multiplanar {
        (QueueType::VideoOutputMplane, QueueType::VideoCaptureMplane)
    } else {
        (QueueType::VideoOutput, QueueType::VideoCapture)
    }
}

/// Probes one video node.
pub fn probe_video_node(
    path: &Path,
    media_node: Option<PathBuf>,
    entity: Option<String>,
) -> Result<DecoderInfo, DiscoveryError> {
    let mut file = open_video(path)?;
    let ioctl_err = |ioctl, errno| match errno {
        Errno::EBUSY => NodeError::busy(path).into(),
        errno => DiscoveryError::Ioctl {
            path: path.to_path_buf(),
            ioctl,
            errno,
        },
    };
    let caps: Capability =
        ioctl::querycap(&file).map_err(|e| ioctl_err("VIDIOC_QUERYCAP", e.into()))?;
    let device_caps = caps.device_caps();
    let multiplanar = if device_caps.contains(Capabilities::VIDEO_M2M_MPLANE) {
        true
    } else if device_caps.contains(Capabilities::VIDEO_M2M) {
        false
    } else {
        return Err(DiscoveryError::NotM2m {
            path: path.to_path_buf(),
        });
    };
    let (output, _) = queue_types(multiplanar);

    let descriptions: Vec<FmtDesc> = ioctl::FormatIterator::new(&file, output).collect();
    let caps_before_format =
        queue_capabilities(&file, output).map_err(|e| ioctl_err("VIDIOC_REQBUFS", e.into()))?;
    let mut coded_formats = Vec::new();
    for desc in descriptions {
        let fourcc: u32 = desc.pixelformat.into();
        coded_formats.push(CodedFormat {
            fourcc,
            description: desc.description.clone(),
            sizes: frame_sizes(&file, fourcc),
            holds_capture: holds_capture_for(&mut file, output, fourcc).unwrap_or(false),
        });
    }

    let menus = menu_controls(&file);

    Ok(DecoderInfo {
        video_node: path.to_path_buf(),
        media_node,
        entity,
        driver: caps.driver,
        card: caps.card,
        bus_info: caps.bus_info,
        multiplanar,
        coded_formats,
        supports_requests: caps_before_format
            .contains(ioctl::BufferCapabilities::SUPPORTS_REQUESTS),
        menus,
    })
}

/// Sets the OUTPUT format to `fourcc` on this (probing) file handle and
/// reads the queue's capabilities: the hold flag is only meaningful then.
/// `None` when the driver refuses the format or the query.
fn holds_capture_for(file: &mut File, output: QueueType, fourcc: u32) -> Option<bool> {
    let mut format: Format = ioctl::g_fmt(file, output).ok()?;
    format.pixelformat = fourcc.into();
    let set: Format = ioctl::s_fmt(&mut *file, (output, &format)).ok()?;
    if u32::from(set.pixelformat) != fourcc {
        return None;
    }
    let caps = queue_capabilities(file, output).ok()?;
    Some(caps.contains(ioctl::BufferCapabilities::SUPPORTS_M2M_HOLD_CAPTURE_BUF))
}

/// REQBUFS(0) frees nothing (no buffers yet) and reports the queue's
/// capabilities; EBUSY means another file handle owns the queue.
fn queue_capabilities(
    file: &File,
    queue: QueueType,
) -> Result<ioctl::BufferCapabilities, ioctl::ReqbufsError> {
    ioctl::reqbufs(
        file,
        queue,
        MemoryType::Mmap,
        0,
        ioctl::MemoryConsistency::empty(),
    )
}

fn frame_sizes(file: &File, fourcc: u32) -> Option<SizeRange> {
    let size: v4l2_frmsizeenum = ioctl::enum_frame_sizes(file, 0, fourcc.into()).ok()?;
    match size.size()? {
        ioctl::FrmSizeTypes::Discrete(d) => Some(SizeRange {
            min_width: d.width,
            max_width: d.width,
            step_width: 1,
            min_height: d.height,
            max_height: d.height,
            step_height: 1,
        }),
        ioctl::FrmSizeTypes::StepWise(s) => Some(SizeRange {
            min_width: s.min_width,
            max_width: s.max_width,
            step_width: s.step_width,
            min_height: s.min_height,
            max_height: s.max_height,
            step_height: s.step_height,
        }),
    }
}

/// Every enabled menu control of the node, walking the control list with
/// `V4L2_CTRL_FLAG_NEXT_CTRL` (compound controls are not listed that way).
fn menu_controls(file: &File) -> BTreeMap<u32, MenuControl> {
    // More controls than any driver has: a guard against a driver that
    // never ends the list.
    const MAX_CONTROLS: usize = 4096;
    let mut menus = BTreeMap::new();
    let mut id = 0;
    for _ in 0..MAX_CONTROLS {
        let Ok(ctrl_id) = ioctl::CtrlId::new(id) else {
            break;
        };
        let Ok(query) = ioctl::queryctrl::<v4l2_queryctrl>(file, ctrl_id, QueryCtrlFlags::NEXT)
        else {
            break;
        };
        if query.id <= id {
            break;
        }
        id = query.id;
        if let Some(menu) = menu_control(file, id) {
            menus.insert(id, menu);
        }
    }
    menus
}

fn menu_control(file: &File, id: u32) -> Option<MenuControl> {
    let ctrl_id = ioctl::CtrlId::new(id).ok()?;
    let query: v4l2_queryctrl = ioctl::queryctrl(file, ctrl_id, QueryCtrlFlags::empty()).ok()?;
    if query.type_ != bindings::v4l2_ctrl_type_V4L2_CTRL_TYPE_MENU
        || query.flags & bindings::V4L2_CTRL_FLAG_DISABLED != 0
    {
        return None;
    }
    let mut items = Vec::new();
    for index in query.minimum.max(0)..=query.maximum.max(0) {
        // Items the driver skips answer EINVAL.
        if let Ok(menu) = ioctl::querymenu::<v4l2_querymenu>(file, id, index as u32) {
            // SAFETY: for a MENU (not INTEGER_MENU) control the kernel fills `name`.
            let name = unsafe { menu.__bindgen_anon_1.name };
            let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
            items.push((
                index as u32,
                String::from_utf8_lossy(&name[..end]).into_owned(),
            ));
        }
    }
    Some(MenuControl {
        id,
        minimum: query.minimum,
        maximum: query.maximum,
        default: query.default_value,
        items,
    })
}

impl fmt::Display for DecoderInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{}: driver {}, card {}, bus {}",
            self.video_node.display(),
            self.driver,
            self.card,
            self.bus_info
        )?;
        match (&self.media_node, &self.entity) {
            (Some(m), Some(e)) => writeln!(f, "  media node {} (entity {e})", m.display())?,
            (Some(m), None) => writeln!(f, "  media node {}", m.display())?,
            _ => writeln!(f, "  no media node")?,
        }
        writeln!(
            f,
            "  {} m2m, requests: {}",
            if self.multiplanar {
                "multi-planar"
            } else {
                "single-planar"
            },
            yes_no(self.supports_requests),
        )?;
        writeln!(f, "  coded formats:")?;
        for c in &self.coded_formats {
            let hold = if c.holds_capture {
                ", hold capture buffer"
            } else {
                ""
            };
            match c.sizes {
                Some(s) => writeln!(
                    f,
                    "    {} ({}): {s}{hold}",
                    fourcc_text(c.fourcc),
                    c.description
                )?,
                None => writeln!(f, "    {} ({}){hold}", fourcc_text(c.fourcc), c.description)?,
            }
        }
        Ok(())
    }
}

fn yes_no(v: bool) -> &'static str {
    if v {
        "yes"
    } else {
        "no"
    }
}

impl fmt::Display for Discovery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.decoders.is_empty() {
            writeln!(f, "no V4L2 stateless decoder")?;
        }
        for d in &self.decoders {
            write!(f, "{d}")?;
        }
        for p in &self.problems {
            writeln!(f, "skipped: {p}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::v4l2::formats::coded;

    fn visl_like() -> DecoderInfo {
        DecoderInfo {
            video_node: "/dev/video0".into(),
            media_node: Some("/dev/media0".into()),
            entity: Some("visl-proc".into()),
            driver: "visl".into(),
            card: "visl".into(),
            bus_info: "platform:visl".into(),
            multiplanar: true,
            coded_formats: vec![CodedFormat {
                fourcc: coded::H264_SLICE,
                description: "H.264 Parsed Slice Data".into(),
                sizes: Some(SizeRange {
                    min_width: 64,
                    max_width: 4096,
                    step_width: 16,
                    min_height: 64,
                    max_height: 2304,
                    step_height: 16,
                }),
                holds_capture: true,
            }],
            supports_requests: true,
            menus: BTreeMap::new(),
        }
    }

    fn needs(width: u32, height: u32) -> StreamRequirements {
        StreamRequirements {
            coded_format: coded::H264_SLICE,
            width,
            height,
            profile: None,
        }
    }

    #[test]
    fn accepts_a_stream_in_range() {
        assert!(visl_like().check(&needs(1920, 1088)).is_ok());
    }

    #[test]
    fn size_errors_name_the_device_and_range() {
        let err = visl_like().check(&needs(8192, 1080)).unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, DiscoveryError::UnsupportedSize { .. }));
        assert!(
            text.contains("/dev/video0") && text.contains("8192x1080"),
            "{text}"
        );
        // Off the 16-pixel step.
        assert!(visl_like().check(&needs(1921, 1088)).is_err());
    }

    #[test]
    fn missing_requests_or_media_node_refuse() {
        let mut d = visl_like();
        d.supports_requests = false;
        assert!(matches!(
            d.check(&needs(640, 480)),
            Err(DiscoveryError::NoRequests { .. })
        ));
        let mut d = visl_like();
        d.media_node = None;
        assert!(matches!(
            d.check(&needs(640, 480)),
            Err(DiscoveryError::NoMediaNode { .. })
        ));
        let d = visl_like();
        let vp9 = StreamRequirements {
            coded_format: coded::VP9_FRAME,
            ..needs(640, 480)
        };
        let err = d.check(&vp9).unwrap_err().to_string();
        assert!(err.contains("VP9F"), "{err}");
    }

    #[test]
    fn profile_menu_filters_when_present() {
        let mut d = visl_like();
        let profile = MenuControl {
            id: bindings::V4L2_CID_MPEG_VIDEO_H264_PROFILE,
            minimum: 0,
            maximum: 2,
            default: 2,
            items: vec![
                (0, "Baseline".into()),
                (1, "Constrained Baseline".into()),
                (2, "Main".into()),
            ],
        };
        let need = |accepted: Vec<u32>| StreamRequirements {
            profile: Some(ProfileNeed {
                menu: bindings::V4L2_CID_MPEG_VIDEO_H264_PROFILE,
                accepted,
                label: "H.264 profile_idc 100".into(),
            }),
            ..needs(640, 480)
        };
        // No menu: the decoder is let try.
        assert!(d.check(&need(vec![4])).is_ok());
        d.menus.insert(profile.id, profile);
        let err = d.check(&need(vec![4])).unwrap_err();
        assert!(
            matches!(&err, DiscoveryError::UnsupportedProfile { profile, .. } if profile == "H.264 profile_idc 100"),
            "{err}"
        );
        assert!(d.check(&need(vec![2])).is_ok());
    }

    #[test]
    fn choose_lists_every_reason() {
        let mut small = visl_like();
        small.video_node = "/dev/video1".into();
        small.coded_formats[0].sizes = Some(SizeRange {
            min_width: 16,
            max_width: 320,
            step_width: 1,
            min_height: 16,
            max_height: 240,
            step_height: 1,
        });
        let discovery = Discovery {
            decoders: vec![small, visl_like()],
            problems: vec![DiscoveryError::Node(NodeError::Busy {
                path: "/dev/video2".into(),
                holders: "held by sleep (pid 812)".into(),
            })],
        };
        let chosen = discovery.choose(&needs(640, 480)).unwrap();
        assert_eq!(chosen.video_node, PathBuf::from("/dev/video0"));
        let err = discovery
            .choose(&needs(8192, 8192))
            .unwrap_err()
            .to_string();
        for dev in [
            "/dev/video0",
            "/dev/video1",
            "/dev/video2: device busy, held by sleep (pid 812)",
        ] {
            assert!(err.contains(dev), "{err}");
        }
    }
}
