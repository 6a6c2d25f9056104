//! OUTPUT (bitstream) and CAPTURE (picture) buffers: MMAP memory allocated
//! with REQBUFS (the count the driver grants is what we use). Each OUTPUT
//! plane is mapped once (the CPU writes every access unit); each CAPTURE
//! plane is exported once as a dmabuf (EXPBUF) and mapped, through that
//! dmabuf, only the first time the CPU reads it: presenting zero-copy or
//! decoding for nothing never maps a picture.

use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;

use memmap2::{Mmap, MmapOptions};
use tracing::{debug, info, warn};
use v4l2r::bindings::{v4l2_create_buffers, v4l2_format};
use v4l2r::ioctl::{
    self, BufferFlags, ExpbufFlags, PlaneMapping, V4l2Buffer, V4l2PlanesWithBacking,
};
use v4l2r::memory::MemoryType;
use v4l2r::{Format, QueueType};

use super::error::SessionError;
use crate::v4l2::codec::Bitstream;

/// One mapped plane of a buffer.
pub struct MappedPlane {
    mapping: PlaneMapping,
}

impl MappedPlane {
    pub fn bytes(&self) -> &[u8] {
        &self.mapping
    }
    pub fn len(&self) -> usize {
        self.mapping.len()
    }
    pub fn is_empty(&self) -> bool {
        self.mapping.is_empty()
    }
}

/// A bitstream buffer; only the session writes it, and only while it is
/// not queued.
pub struct OutputBuffer {
    pub index: u32,
    plane: MappedPlane,
}

impl OutputBuffer {
    pub fn capacity(&self) -> usize {
        self.plane.len()
    }
    /// Copies the bitstream in; returns the bytes written.
    pub(crate) fn write(&mut self, bitstream: &Bitstream<'_>) -> usize {
        bitstream.write_to(&mut self.plane.mapping[..])
    }
}

/// A picture buffer: its dmabuf fds (exported once, kept for the
/// compositor) and their CPU mappings, made when first read.
pub struct CaptureBuffer {
    pub index: u32,
    /// Which allocation this buffer belongs to: unique in the process, so
    /// (generation, index) names the same memory for as long as it exists.
    pub generation: u64,
    dmabufs: Vec<OwnedFd>,
    planes: Vec<LazyPlane>,
    /// Allocated with V4L2_MEMORY_FLAG_NON_COHERENT (granted).
    non_coherent: bool,
    queued_before: AtomicBool,
}

/// A CAPTURE plane's size and its read-only mapping, once made (`None`
/// inside when mapping failed, logged once). Mapping vb2 memory counts all
/// of it in reel's RSS at once (vmalloc'd buffers are remapped whole), so
/// only a CPU read maps it.
struct LazyPlane {
    length: usize,
    mapping: OnceLock<Option<Mmap>>,
}

impl CaptureBuffer {
    /// The bytes of memory plane `plane`, mapped on first use (empty if it
    /// cannot be). Readers bracket their reads with `read_access`.
    pub fn plane(&self, plane: usize) -> &[u8] {
        let (Some(lazy), Some(dmabuf)) = (self.planes.get(plane), self.dmabufs.get(plane)) else {
            return &[];
        };
        let mapping = lazy.mapping.get_or_init(|| {
            // SAFETY: a read-only shared mapping of the `length` bytes the
            // driver reported for this plane's dmabuf; the mapping lives
            // as long as this buffer, which owns the dmabuf, and the
            // driver writes the memory only while the buffer is queued,
            // which the session does not do while a hold (the only way to
            // reach this reader) is alive.
            match unsafe { MmapOptions::new().len(lazy.length).map(dmabuf) } {
                Ok(map) => {
                    debug!(
                        index = self.index,
                        plane, "CAPTURE plane mapped for a CPU read"
                    );
                    Some(map)
                }
                Err(e) => {
                    warn!(index = self.index, plane, "mmap of a CAPTURE dmabuf: {e}");
                    None
                }
            }
        });
        mapping.as_deref().unwrap_or(&[])
    }
    /// The size of memory plane `plane`, without mapping it.
    pub fn plane_len(&self, plane: usize) -> usize {
        self.planes.get(plane).map_or(0, |p| p.length)
    }
    pub fn memory_planes(&self) -> usize {
        self.planes.len()
    }
    /// The dmabuf of each memory plane, exported once at allocation.
    pub fn dmabufs(&self) -> &[OwnedFd] {
        &self.dmabufs
    }
    /// The flags to queue this buffer with, each time it is queued. On
    /// non-coherent memory the first queueing cleans the cache (the
    /// allocation may have left dirty lines, which a later eviction would
    /// write over the decoder's picture); later ones need not, since the
    /// CPU only ever reads the buffer, so no line of it is dirty again.
    pub fn queue_flags(&self) -> BufferFlags {
        let before = self.queued_before.swap(true, Ordering::Relaxed);
        if self.non_coherent && before {
            BufferFlags::NO_CACHE_CLEAN
        } else {
            BufferFlags::empty()
        }
    }
}

/// (mem_offset, length) of each memory plane of an MMAP buffer.
fn mmap_planes(buffer: &V4l2Buffer, queue: QueueType) -> Result<Vec<(u32, u32)>, SessionError> {
    let V4l2PlanesWithBacking::Mmap(planes) = buffer.planes_with_backing_iter() else {
        return Err(SessionError::Buffers {
            queue,
            reason: "driver reports a non-MMAP buffer".into(),
        });
    };
    Ok(planes.map(|p| (p.mem_offset(), *p.length)).collect())
}

fn map_planes(
    video: &impl std::os::fd::AsFd,
    buffer: &V4l2Buffer,
    queue: QueueType,
) -> Result<Vec<MappedPlane>, SessionError> {
    mmap_planes(buffer, queue)?
        .into_iter()
        .map(|(offset, length)| {
            let mapping =
                ioctl::mmap(video, offset, length).map_err(|e| SessionError::Buffers {
                    queue,
                    reason: format!("mmap of buffer {}: {e}", buffer.index()),
                })?;
            Ok(MappedPlane { mapping })
        })
        .collect()
}

/// REQBUFS(count) MMAP on `queue`; returns the count granted.
pub(crate) fn request_buffers(
    video: &impl std::os::fd::AsRawFd,
    queue: QueueType,
    count: u32,
) -> Result<u32, SessionError> {
    request_buffers_with(video, queue, count, ioctl::MemoryConsistency::empty())
        .map(|granted| granted.count)
}

fn request_buffers_with(
    video: &impl std::os::fd::AsRawFd,
    queue: QueueType,
    count: u32,
    consistency: ioctl::MemoryConsistency,
) -> Result<ioctl::RequestBuffers, SessionError> {
    ioctl::reqbufs(video, queue, MemoryType::Mmap, count, consistency)
        .map_err(|e| SessionError::ioctl("VIDIOC_REQBUFS", e.into()))
}

/// CAPTURE memory the CPU reads is asked for non-coherent: on the
/// non-coherent ARM SoCs these decoders sit on, coherent memory is mapped
/// uncached, and copying or detiling a picture from it is many times
/// slower. vb2 then cleans the cache when a buffer is queued and
/// invalidates it when the buffer is dequeued; only the clean may be
/// skipped (`CaptureBuffer::queue_flags`). The invalidate may not: the
/// CPU's reads go through the exported dmabuf, and vb2-dma-contig's
/// DMA_BUF_IOCTL_SYNC does no cache maintenance at all. Drivers that do
/// not allow cache hints clear the flag: the memory stays coherent.
fn capture_consistency(cpu_reads: bool) -> ioctl::MemoryConsistency {
    if cpu_reads {
        ioctl::MemoryConsistency::MEMORY_FLAG_NON_COHERENT
    } else {
        ioctl::MemoryConsistency::empty()
    }
}

fn query(
    video: &impl std::os::fd::AsRawFd,
    queue: QueueType,
    index: u32,
) -> Result<V4l2Buffer, SessionError> {
    ioctl::querybuf::<V4l2Buffer>(video, queue, index as usize).map_err(|e| SessionError::Buffers {
        queue,
        reason: format!("VIDIOC_QUERYBUF {index}: {e}"),
    })
}

/// Allocates and maps the OUTPUT buffers.
pub fn allocate_output<F: std::os::fd::AsRawFd + std::os::fd::AsFd>(
    video: &F,
    queue: QueueType,
    count: u32,
) -> Result<Vec<OutputBuffer>, SessionError> {
    let granted = request_buffers(video, queue, count)?;
    (0..granted)
        .map(|index| map_output(video, queue, index))
        .collect()
}

/// Adds `count` OUTPUT buffers of at least `size` bytes with CREATE_BUFS,
/// which works while the queue streams: an access unit larger than the
/// buffers allocated so far gets larger ones without stopping decoding
/// (its references live in CAPTURE buffers). They follow the `existing`
/// ones.
pub fn create_output<F: std::os::fd::AsRawFd + std::os::fd::AsFd>(
    video: &F,
    queue: QueueType,
    existing: u32,
    count: u32,
    size: u32,
) -> Result<Vec<OutputBuffer>, SessionError> {
    let mut format: Format = ioctl::g_fmt(video, queue)
        .map_err(|e| SessionError::ioctl("VIDIOC_G_FMT(OUTPUT)", e.into()))?;
    if let Some(plane) = format.plane_fmt.first_mut() {
        plane.sizeimage = size;
    }
    let format = v4l2_format::try_from((queue, &format)).map_err(|_| SessionError::Buffers {
        queue,
        reason: "the OUTPUT format cannot be expressed for CREATE_BUFS".into(),
    })?;
    let created: v4l2_create_buffers =
        ioctl::create_bufs(video, count, MemoryType::Mmap, format)
            .map_err(|e| SessionError::ioctl("VIDIOC_CREATE_BUFS(OUTPUT)", e.into()))?;
    if created.index != existing || created.count == 0 {
        return Err(SessionError::Buffers {
            queue,
            reason: format!(
                "CREATE_BUFS gave {} buffers from index {}, expected some from {existing}",
                created.count, created.index
            ),
        });
    }
    (created.index..created.index + created.count)
        .map(|index| map_output(video, queue, index))
        .collect()
}

fn map_output(
    video: &(impl std::os::fd::AsRawFd + std::os::fd::AsFd),
    queue: QueueType,
    index: u32,
) -> Result<OutputBuffer, SessionError> {
    let buffer = query(video, queue, index)?;
    let plane = map_planes(video, &buffer, queue)?
        .into_iter()
        .next()
        .ok_or_else(|| SessionError::Buffers {
            queue,
            reason: "OUTPUT buffer without planes".into(),
        })?;
    Ok(OutputBuffer { index, plane })
}

/// When REQBUFS granted fewer than `wanted`, asks for the rest with
/// CREATE_BUFS (same format); returns how many were added (0 on failure:
/// decoding goes on with fewer, as the session warns).
fn grow_capture(
    video: &impl std::os::fd::AsRawFd,
    queue: QueueType,
    granted: u32,
    wanted: u32,
    consistency: ioctl::MemoryConsistency,
) -> u32 {
    if granted == 0 || granted >= wanted {
        return 0;
    }
    let format: v4l2_format = match ioctl::g_fmt(video, queue) {
        Ok(f) => f,
        Err(e) => {
            warn!("VIDIOC_G_FMT before CREATE_BUFS: {e}");
            return 0;
        }
    };
    match create_bufs_with(video, wanted - granted, format, consistency) {
        // New buffers follow the existing ones: indices granted.. .
        Ok(created) if created.index == granted => {
            debug!(
                added = created.count,
                "CAPTURE buffers grown with CREATE_BUFS"
            );
            created.count
        }
        Ok(created) => {
            warn!(
                index = created.index,
                "CREATE_BUFS gave unexpected indices: not used"
            );
            0
        }
        Err(e) => {
            warn!("VIDIOC_CREATE_BUFS: {e}");
            0
        }
    }
}

nix::ioctl_readwrite!(vidioc_create_bufs, b'V', 92, v4l2_create_buffers);

/// CREATE_BUFS of MMAP buffers with memory flags, which vb2 requires to
/// match the queue's (v4l2r's `create_bufs` sends none).
fn create_bufs_with(
    video: &impl std::os::fd::AsRawFd,
    count: u32,
    format: v4l2_format,
    consistency: ioctl::MemoryConsistency,
) -> Result<v4l2_create_buffers, nix::Error> {
    let mut create = v4l2_create_buffers {
        count,
        memory: MemoryType::Mmap as u32,
        format,
        flags: u32::from(consistency.bits()),
        ..Default::default()
    };
    // SAFETY: VIDIOC_CREATE_BUFS reads and writes exactly one
    // v4l2_create_buffers, which lives on this stack frame for the call.
    unsafe { vidioc_create_bufs(video.as_raw_fd(), &mut create) }?;
    Ok(create)
}

/// The last CAPTURE allocation's generation (0: none yet).
static CAPTURE_GENERATION: AtomicU64 = AtomicU64::new(0);

/// Allocates, maps and exports the CAPTURE buffers.
pub fn allocate_capture<F: std::os::fd::AsRawFd + std::os::fd::AsFd>(
    video: &F,
    queue: QueueType,
    count: u32,
    cpu_reads: bool,
) -> Result<Vec<CaptureBuffer>, SessionError> {
    let asked = capture_consistency(cpu_reads);
    let granted = request_buffers_with(video, queue, count, asked)?;
    // The driver clears the flag when it does not allow cache hints.
    let consistency = granted.flags & asked;
    let non_coherent = !consistency.is_empty();
    let granted = granted.count;
    let granted = granted + grow_capture(video, queue, granted, count, consistency);
    if cpu_reads {
        info!(
            buffers = granted,
            "CAPTURE memory for CPU reads: {}",
            if non_coherent {
                "non-coherent (read through the CPU's cache)"
            } else {
                "coherent (the driver allows no cache hints)"
            }
        );
    }
    let generation = CAPTURE_GENERATION.fetch_add(1, Ordering::Relaxed) + 1;
    (0..granted)
        .map(|index| {
            let buffer = query(video, queue, index)?;
            let planes: Vec<LazyPlane> = mmap_planes(&buffer, queue)?
                .into_iter()
                .map(|(_, length)| LazyPlane {
                    length: length as usize,
                    mapping: OnceLock::new(),
                })
                .collect();
            let dmabufs = (0..planes.len())
                .map(|plane| {
                    ioctl::expbuf::<OwnedFd>(
                        video,
                        queue,
                        index as usize,
                        plane,
                        ExpbufFlags::CLOEXEC | ExpbufFlags::RDWR,
                    )
                    .map_err(|e| SessionError::ioctl("VIDIOC_EXPBUF", e.into()))
                })
                .collect::<Result<Vec<_>, _>>()?;
            Ok(CaptureBuffer {
                index,
                generation,
                dmabufs,
                planes,
                non_coherent,
                queued_before: AtomicBool::new(false),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buffer(non_coherent: bool) -> CaptureBuffer {
        CaptureBuffer {
            index: 0,
            generation: 0,
            dmabufs: Vec::new(),
            planes: Vec::new(),
            non_coherent,
            queued_before: AtomicBool::new(false),
        }
    }

    #[test]
    fn only_non_coherent_buffers_skip_the_clean_and_never_on_their_first_queueing() {
        let bits = |buffer: &CaptureBuffer| buffer.queue_flags().bits();
        let clean = BufferFlags::NO_CACHE_CLEAN.bits();
        let cached = buffer(true);
        assert_eq!(
            [bits(&cached), bits(&cached), bits(&cached)],
            [0, clean, clean]
        );
        let coherent = buffer(false);
        assert_eq!([bits(&coherent), bits(&coherent)], [0, 0]);
    }

    #[test]
    fn non_coherent_memory_is_asked_for_only_when_the_cpu_reads() {
        assert!(
            capture_consistency(true).contains(ioctl::MemoryConsistency::MEMORY_FLAG_NON_COHERENT)
        );
        assert!(capture_consistency(false).is_empty());
    }
}
