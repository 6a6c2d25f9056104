//! Raw FWHT streams (vicodec's encoder output: frames back to back, each
//! with its header), which FFmpeg cannot demux. The file is indexed once
//! when opened by walking the headers; packets are then read frame by frame
//! and seeks land exactly on the I frame at or before the target.
//!
//! The stream has no timing: frame `n` is shown at `n / FRAME_RATE`.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{
    duration_to_ts, Codec, CodecParameters, MediaError, Packet, StreamKind, StreamSummary,
    VideoStreamInfo,
};
use crate::codec::fwht::{find_magic, FrameHeader, HEADER_LEN, MAGIC};

/// Frames per second of a raw FWHT stream (vicodec's own streams carry none).
pub const FRAME_RATE: i32 = 25;
const TIME_BASE: (i32, i32) = (1, FRAME_RATE);
/// Bytes read at a time when looking for the next frame after damage.
const RESYNC_CHUNK: usize = 64 * 1024;

/// Whether `prefix` (a file's first bytes) starts an FWHT stream.
pub fn is_fwht(prefix: &[u8]) -> bool {
    prefix.starts_with(&MAGIC)
}

/// One frame of the file.
#[derive(Clone, Copy, Debug)]
struct Entry {
    offset: u64,
    len: usize,
    intra: bool,
}

/// The reader of one raw FWHT file.
pub struct FwhtReader {
    file: File,
    path: PathBuf,
    info: VideoStreamInfo,
    frames: Vec<Entry>,
    next: usize,
}

impl std::fmt::Debug for FwhtReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FwhtReader")
            .field("path", &self.path)
            .field("frames", &self.frames.len())
            .finish()
    }
}

impl FwhtReader {
    pub fn open(path: &Path) -> Result<Self, MediaError> {
        let read_error = |e: std::io::Error| MediaError::Read(format!("{}: {e}", path.display()));
        let mut file = File::open(path).map_err(read_error)?;
        let len = file.metadata().map_err(read_error)?.len();
        let frames = index(&mut file, len, path).map_err(read_error)?;
        let Some(first) = frames.first() else {
            return Err(MediaError::Open(format!(
                "{}: no complete FWHT frame",
                path.display()
            )));
        };
        let header = read_header(&mut file, first.offset).map_err(read_error)?;
        let header = FrameHeader::parse(&header)
            .map_err(|e| MediaError::Open(format!("{}: {e}", path.display())))?;
        let count = frames.len() as i64;
        let info = VideoStreamInfo {
            index: 0,
            codec: Codec::Fwht,
            width: header.width,
            height: header.height,
            time_base: TIME_BASE,
            frame_rate: Some((FRAME_RATE, 1)),
            duration: Some(super::ts_to_duration(count, TIME_BASE)),
            start_time: Duration::ZERO,
            start_pts: 0,
            container_start_us: 0,
            sample_aspect: (1, 1),
            bit_depth: 8,
            pixel_format: header.is_yuv420().then(|| "yuv420p".to_owned()),
            profile: None,
            level: None,
            parameter_sets: Vec::new(),
            container_format: None,
            parameters: CodecParameters::new(ffmpeg_next::codec::Parameters::new()),
        };
        tracing::info!(
            "{}: raw FWHT {}x{}, {} frames ({} I), {FRAME_RATE} fps assumed",
            path.display(),
            header.width,
            header.height,
            frames.len(),
            frames.iter().filter(|f| f.intra).count()
        );
        Ok(Self {
            file,
            path: path.to_owned(),
            info,
            frames,
            next: 0,
        })
    }

    pub fn stream(&self) -> &VideoStreamInfo {
        &self.info
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's only stream.
    pub fn streams(&self) -> Vec<StreamSummary> {
        vec![StreamSummary {
            index: 0,
            kind: StreamKind::Video,
            codec: "fwht".into(),
            time_base: TIME_BASE,
            enabled: true,
        }]
    }

    /// The next frame; `None` at the end of the file.
    pub fn next_packet(&mut self) -> Result<Option<Packet>, MediaError> {
        let Some(&entry) = self.frames.get(self.next) else {
            return Ok(None);
        };
        let pts = self.next as i64;
        self.next += 1;
        let mut data = vec![0; entry.len];
        self.file
            .seek(SeekFrom::Start(entry.offset))
            .and_then(|_| self.file.read_exact(&mut data))
            .map_err(|e| MediaError::Read(format!("{}: {e}", self.path.display())))?;
        Ok(Some(frame_packet(data, pts, entry.intra)))
    }

    /// Moves to the I frame at or before `target`: the next packet is it.
    pub fn seek(&mut self, target: Duration) -> Result<(), MediaError> {
        let wanted = usize::try_from(duration_to_ts(target, TIME_BASE))
            .unwrap_or(usize::MAX)
            .min(self.frames.len().saturating_sub(1));
        // The index starts with an I frame (P frames before it were dropped).
        self.next = self.frames[..=wanted]
            .iter()
            .rposition(|f| f.intra)
            .unwrap_or(0);
        Ok(())
    }
}

fn read_header(file: &mut File, offset: u64) -> std::io::Result<[u8; HEADER_LEN]> {
    let mut header = [0; HEADER_LEN];
    file.seek(SeekFrom::Start(offset))?;
    file.read_exact(&mut header)?;
    Ok(header)
}

/// Every decodable frame of the file, by walking the headers. Damage (a
/// bad header, garbage between frames) is skipped to the next magic, and
/// the P frames after it up to the next I frame are left out: they would
/// predict from a frame that is not theirs. So are P frames before the
/// first I frame; a frame cut short by the end of the file ends the index.
fn index(file: &mut File, len: u64, path: &Path) -> std::io::Result<Vec<Entry>> {
    let mut frames = Vec::new();
    let mut offset = 0;
    let mut need_intra = true;
    let (mut damaged, mut dropped) = (0usize, 0usize);
    while offset + HEADER_LEN as u64 <= len {
        let header = FrameHeader::parse(&read_header(file, offset)?);
        match header {
            Ok(h) if offset + h.frame_len() as u64 <= len => {
                need_intra &= !h.is_intra();
                if need_intra {
                    dropped += 1;
                } else {
                    frames.push(Entry {
                        offset,
                        len: h.frame_len(),
                        intra: h.is_intra(),
                    });
                }
                offset += h.frame_len() as u64;
            }
            Ok(h) => {
                tracing::warn!(
                    "{}: the last FWHT frame is cut short ({} of {} bytes)",
                    path.display(),
                    len - offset,
                    h.frame_len()
                );
                return Ok(frames);
            }
            Err(e) => {
                damaged += 1;
                tracing::debug!("{}: at byte {offset}: {e}", path.display());
                need_intra = true;
                match next_magic(file, offset + 1, len)? {
                    Some(next) => offset = next,
                    None => break,
                }
            }
        }
    }
    if damaged + dropped > 0 {
        tracing::warn!(
            "{}: {damaged} damaged places skipped, {dropped} P frames without their reference left out",
            path.display()
        );
    }
    Ok(frames)
}

/// The offset of the next frame magic at or after `from`.
fn next_magic(file: &mut File, from: u64, len: u64) -> std::io::Result<Option<u64>> {
    let mut chunk = vec![0; RESYNC_CHUNK];
    let mut at = from;
    while at < len {
        let n = usize::try_from(len - at).map_or(RESYNC_CHUNK, |left| left.min(RESYNC_CHUNK));
        file.seek(SeekFrom::Start(at))?;
        file.read_exact(&mut chunk[..n])?;
        if let Some(found) = find_magic(&chunk[..n], 0) {
            return Ok(Some(at + found as u64));
        }
        if n < MAGIC.len() || at + (n as u64) >= len {
            break;
        }
        // A magic may straddle two chunks.
        at += (n - (MAGIC.len() - 1)) as u64;
    }
    Ok(None)
}

/// Frame number `index` of a raw FWHT stream as a packet (one frame a
/// packet, timed at the stream's nominal rate).
pub fn frame_packet(data: Vec<u8>, index: i64, intra: bool) -> Packet {
    Packet {
        stream_index: 0,
        data: data.into(),
        nal_units: None,
        pts: Some(index),
        dts: Some(index),
        duration: 1,
        keyframe: intra,
        corrupt: false,
        time_base: TIME_BASE,
    }
}
