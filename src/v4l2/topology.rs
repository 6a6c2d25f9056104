//! The media controller topology (`MEDIA_IOC_G_TOPOLOGY`), which v4l2r does
//! not wrap: finds the stateless decoder entities of a media device and the
//! video device node that drives each of them.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use thiserror::Error;

/// `MEDIA_ENT_F_PROC_VIDEO_DECODER`.
pub const ENTITY_FUNCTION_VIDEO_DECODER: u32 = 0x4008;
/// `MEDIA_INTF_T_V4L_VIDEO`.
pub const INTERFACE_TYPE_V4L_VIDEO: u32 = 0x200;
/// `MEDIA_LNK_FL_LINK_TYPE` and `MEDIA_LNK_FL_INTERFACE_LINK`.
const LINK_TYPE_MASK: u32 = 0xf << 28;
const LINK_TYPE_INTERFACE: u32 = 1 << 28;
/// `MEDIA_LNK_FL_DATA_LINK`.
const LINK_TYPE_DATA: u32 = 0;
/// More than any real media graph has; bounds what a driver can make us allocate.
const MAX_OBJECTS: u32 = 4096;

#[derive(Debug, Error)]
pub enum TopologyError {
    #[error("cannot open {path}: {source}")]
    Open {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {ioctl} failed: {source}")]
    Ioctl {
        path: PathBuf,
        ioctl: &'static str,
        source: nix::Error,
    },
    #[error("{path}: the topology changed while it was read; try again")]
    Changed { path: PathBuf },
    #[error("{path}: implausible topology ({count} objects)")]
    TooLarge { path: PathBuf, count: u32 },
}

#[repr(C)]
#[derive(Clone, Copy)]
struct MediaDeviceInfo {
    driver: [u8; 16],
    model: [u8; 32],
    serial: [u8; 40],
    bus_info: [u8; 32],
    media_version: u32,
    hw_revision: u32,
    driver_version: u32,
    reserved: [u32; 31],
}

#[repr(C, packed)]
#[derive(Clone, Copy)]
struct RawEntity {
    id: u32,
    name: [u8; 64],
    function: u32,
    flags: u32,
    reserved: [u32; 5],
}

#[repr(C, packed)]
#[derive(Clone, Copy, Default)]
struct RawInterface {
    id: u32,
    intf_type: u32,
    flags: u32,
    reserved: [u32; 9],
    /// The union's `devnode { major, minor }` is its first two words.
    raw: [u32; 16],
}

#[repr(C, packed)]
#[derive(Clone, Copy, Default)]
struct RawPad {
    id: u32,
    entity_id: u32,
    flags: u32,
    index: u32,
    reserved: [u32; 4],
}

#[repr(C, packed)]
#[derive(Clone, Copy, Default)]
struct RawLink {
    id: u32,
    source_id: u32,
    sink_id: u32,
    flags: u32,
    reserved: [u32; 6],
}

#[repr(C, packed)]
#[derive(Clone, Copy, Default)]
struct RawTopology {
    topology_version: u64,
    num_entities: u32,
    reserved1: u32,
    ptr_entities: u64,
    num_interfaces: u32,
    reserved2: u32,
    ptr_interfaces: u64,
    num_pads: u32,
    reserved3: u32,
    ptr_pads: u64,
    num_links: u32,
    reserved4: u32,
    ptr_links: u64,
}

nix::ioctl_readwrite!(media_ioc_device_info, b'|', 0x00, MediaDeviceInfo);
nix::ioctl_readwrite!(media_ioc_g_topology, b'|', 0x04, RawTopology);

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entity {
    pub id: u32,
    pub name: String,
    pub function: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interface {
    pub id: u32,
    pub kind: u32,
    pub major: u32,
    pub minor: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pad {
    pub id: u32,
    pub entity: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Link {
    pub source: u32,
    pub sink: u32,
    pub flags: u32,
}

/// One media device's graph, as far as decoder discovery needs it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Topology {
    pub driver: String,
    pub model: String,
    pub bus_info: String,
    pub entities: Vec<Entity>,
    pub interfaces: Vec<Interface>,
    pub pads: Vec<Pad>,
    pub links: Vec<Link>,
}

/// A decoder entity and the character device (major, minor) of the video
/// interface linked to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecoderEntity {
    pub entity: String,
    pub devnode: (u32, u32),
}

impl Topology {
    /// The decoder entities and their video interfaces. An interface link
    /// joins an interface (source) to an entity (sink). Drivers built on
    /// v4l2-mem2mem (visl, hantro, cedrus, ...) link the video interface to
    /// the I/O entities on either side of the decoder, not to the decoder
    /// itself, so the entities one data link away count too.
    pub fn decoders(&self) -> Vec<DecoderEntity> {
        let mut found: Vec<DecoderEntity> = Vec::new();
        for entity in self
            .entities
            .iter()
            .filter(|e| e.function == ENTITY_FUNCTION_VIDEO_DECODER)
        {
            let mut candidates = vec![entity.id];
            candidates.extend(self.data_neighbours(entity.id));
            for link in &self.links {
                if link.flags & LINK_TYPE_MASK != LINK_TYPE_INTERFACE
                    || !candidates.contains(&link.sink)
                {
                    continue;
                }
                let interface = self
                    .interfaces
                    .iter()
                    .find(|i| i.id == link.source && i.kind == INTERFACE_TYPE_V4L_VIDEO);
                if let Some(interface) = interface {
                    let decoder = DecoderEntity {
                        entity: entity.name.clone(),
                        devnode: (interface.major, interface.minor),
                    };
                    if !found.contains(&decoder) {
                        found.push(decoder);
                    }
                }
            }
        }
        found
    }

    /// Entities joined to `entity` by a data link (pad to pad).
    fn data_neighbours(&self, entity: u32) -> Vec<u32> {
        let entity_of = |pad: u32| self.pads.iter().find(|p| p.id == pad).map(|p| p.entity);
        self.links
            .iter()
            .filter(|l| l.flags & LINK_TYPE_MASK == LINK_TYPE_DATA)
            .filter_map(|l| match (entity_of(l.source), entity_of(l.sink)) {
                (Some(a), Some(b)) if a == entity => Some(b),
                (Some(a), Some(b)) if b == entity => Some(a),
                _ => None,
            })
            .collect()
    }
}

fn c_string(bytes: &[u8]) -> String {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

/// Reads the topology of the media device at `path` (e.g. `/dev/media0`).
pub fn read_topology(path: &Path) -> Result<Topology, TopologyError> {
    let file = File::open(path).map_err(|source| TopologyError::Open {
        path: path.to_path_buf(),
        source,
    })?;
    let fd = file.as_raw_fd();
    let ioctl_error = |ioctl, source| TopologyError::Ioctl {
        path: path.to_path_buf(),
        ioctl,
        source,
    };

    // SAFETY: MediaDeviceInfo is plain data; all-zero is a valid value.
    let mut info: MediaDeviceInfo = unsafe { std::mem::zeroed() };
    // SAFETY: `info` is a live, correctly sized MEDIA_IOC_DEVICE_INFO argument.
    unsafe { media_ioc_device_info(fd, &mut info) }
        .map_err(|e| ioctl_error("MEDIA_IOC_DEVICE_INFO", e))?;

    // First call: the counts. Second: the arrays, sized from the counts;
    // a changed topology_version between the two means a hot-plug raced us.
    let mut counts = RawTopology::default();
    // SAFETY: all pointers are null, so the kernel only fills in the counts.
    unsafe { media_ioc_g_topology(fd, &mut counts) }
        .map_err(|e| ioctl_error("MEDIA_IOC_G_TOPOLOGY", e))?;
    let total = counts
        .num_entities
        .saturating_add(counts.num_interfaces)
        .saturating_add(counts.num_pads)
        .saturating_add(counts.num_links);
    if total > MAX_OBJECTS {
        return Err(TopologyError::TooLarge {
            path: path.to_path_buf(),
            count: total,
        });
    }
    let zero_entity = RawEntity {
        id: 0,
        name: [0; 64],
        function: 0,
        flags: 0,
        reserved: [0; 5],
    };
    let mut entities = vec![zero_entity; counts.num_entities as usize];
    let mut interfaces = vec![RawInterface::default(); counts.num_interfaces as usize];
    let mut pads = vec![RawPad::default(); counts.num_pads as usize];
    let mut links = vec![RawLink::default(); counts.num_links as usize];
    let mut full = RawTopology {
        num_entities: counts.num_entities,
        ptr_entities: entities.as_mut_ptr() as u64,
        num_interfaces: counts.num_interfaces,
        ptr_interfaces: interfaces.as_mut_ptr() as u64,
        num_pads: counts.num_pads,
        ptr_pads: pads.as_mut_ptr() as u64,
        num_links: counts.num_links,
        ptr_links: links.as_mut_ptr() as u64,
        ..RawTopology::default()
    };
    // SAFETY: each pointer addresses a live Vec of exactly `num_*` elements of
    // the layout the kernel writes; the kernel writes at most that many.
    unsafe { media_ioc_g_topology(fd, &mut full) }
        .map_err(|e| ioctl_error("MEDIA_IOC_G_TOPOLOGY", e))?;
    let (version_before, version_after) = (counts.topology_version, full.topology_version);
    if version_before != version_after
        || full.num_entities != counts.num_entities
        || full.num_interfaces != counts.num_interfaces
        || full.num_links != counts.num_links
    {
        return Err(TopologyError::Changed {
            path: path.to_path_buf(),
        });
    }

    Ok(Topology {
        driver: c_string(&info.driver),
        model: c_string(&info.model),
        bus_info: c_string(&info.bus_info),
        entities: entities
            .iter()
            .map(|e| Entity {
                id: e.id,
                name: c_string(&{ e.name }),
                function: e.function,
            })
            .collect(),
        interfaces: interfaces
            .iter()
            .map(|i| {
                let raw = i.raw;
                Interface {
                    id: i.id,
                    kind: i.intf_type,
                    major: raw[0],
                    minor: raw[1],
                }
            })
            .collect(),
        pads: pads
            .iter()
            .map(|p| Pad {
                id: p.id,
                entity: p.entity_id,
            })
            .collect(),
        links: links
            .iter()
            .map(|l| Link {
                source: l.source_id,
                sink: l.sink_id,
                flags: l.flags,
            })
            .collect(),
    })
}

/// The `/dev` path of character device (major, minor), from sysfs.
pub fn devnode_path(major: u32, minor: u32) -> Option<PathBuf> {
    let uevent = std::fs::read_to_string(format!("/sys/dev/char/{major}:{minor}/uevent")).ok()?;
    uevent
        .lines()
        .find_map(|line| line.strip_prefix("DEVNAME="))
        .map(|name| Path::new("/dev").join(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// visl's graph as the guest's `media-ctl -p` shows it: source -> proc
    /// (decoder) -> sink; the video interface is linked to source and sink
    /// only (v4l2-mem2mem's media controller helpers).
    fn visl_like() -> Topology {
        Topology {
            driver: "visl".into(),
            entities: vec![
                Entity {
                    id: 1,
                    name: "visl-source".into(),
                    function: 0x10001,
                },
                Entity {
                    id: 3,
                    name: "visl-proc".into(),
                    function: ENTITY_FUNCTION_VIDEO_DECODER,
                },
                Entity {
                    id: 6,
                    name: "visl-sink".into(),
                    function: 0x10002,
                },
            ],
            interfaces: vec![Interface {
                id: 12,
                kind: INTERFACE_TYPE_V4L_VIDEO,
                major: 81,
                minor: 0,
            }],
            pads: vec![
                Pad { id: 2, entity: 1 },
                Pad { id: 4, entity: 3 },
                Pad { id: 5, entity: 3 },
                Pad { id: 7, entity: 6 },
            ],
            links: vec![
                Link {
                    source: 2,
                    sink: 4,
                    flags: 3,
                },
                Link {
                    source: 5,
                    sink: 7,
                    flags: 3,
                },
                Link {
                    source: 12,
                    sink: 1,
                    flags: LINK_TYPE_INTERFACE | 3,
                },
                Link {
                    source: 12,
                    sink: 6,
                    flags: LINK_TYPE_INTERFACE | 3,
                },
            ],
            ..Topology::default()
        }
    }

    #[test]
    fn finds_the_decoder_and_its_video_node() {
        let decoders = visl_like().decoders();
        assert_eq!(
            decoders,
            vec![DecoderEntity {
                entity: "visl-proc".into(),
                devnode: (81, 0)
            }]
        );
    }

    /// visl's topology with its interface links replaced by one link of
    /// `flags` from the video interface to the decoder entity.
    fn linked_only_by(flags: u32) -> Topology {
        let mut topology = visl_like();
        topology
            .links
            .retain(|l| l.flags & LINK_TYPE_MASK != LINK_TYPE_INTERFACE);
        topology.links.push(Link {
            source: 12,
            sink: 3,
            flags,
        });
        topology
    }

    #[test]
    fn ignores_data_links_and_non_video_interfaces() {
        // A data link from a pad to the decoder is not an interface link.
        assert!(linked_only_by(3).decoders().is_empty());

        let mut topology = visl_like();
        topology.interfaces[0].kind = 0x201; // a VBI node
        assert!(topology.decoders().is_empty());
    }

    #[test]
    fn direct_interface_link_to_the_decoder_counts() {
        assert_eq!(linked_only_by(LINK_TYPE_INTERFACE | 3).decoders().len(), 1);
    }

    #[test]
    fn interface_on_an_unconnected_entity_does_not_count() {
        let mut topology = visl_like();
        topology
            .links
            .retain(|l| l.flags & LINK_TYPE_MASK == LINK_TYPE_INTERFACE);
        assert!(topology.decoders().is_empty());
    }

    #[test]
    fn no_decoder_entity_no_decoder() {
        let mut topology = visl_like();
        topology.entities[1].function = 0x4007; // an encoder
        assert!(topology.decoders().is_empty());
    }
}
