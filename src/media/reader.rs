//! The demuxer a file gets: FFmpeg's for containers and elementary streams,
//! reel's own for formats FFmpeg cannot read (raw FWHT).

use std::io::Read;
use std::path::Path;
use std::time::Duration;

use super::demuxer::FfmpegDemuxer;
use super::fwht::{self, FwhtReader};
use super::{MediaError, Packet, StreamSummary, VideoStreamInfo};

#[derive(Debug)]
enum Backend {
    Ffmpeg(Box<FfmpegDemuxer>),
    Fwht(Box<FwhtReader>),
}

/// The demuxer of one file, yielding the packets of its best video stream
/// and of any other stream enabled (audio, for one).
#[derive(Debug)]
pub struct Demuxer(Backend);

impl Demuxer {
    pub fn open(path: &Path) -> Result<Demuxer, MediaError> {
        if starts_fwht(path) {
            return FwhtReader::open(path).map(|r| Self(Backend::Fwht(Box::new(r))));
        }
        FfmpegDemuxer::open(path).map(|d| Self(Backend::Ffmpeg(Box::new(d))))
    }

    pub fn stream(&self) -> &VideoStreamInfo {
        match &self.0 {
            Backend::Ffmpeg(d) => d.stream(),
            Backend::Fwht(r) => r.stream(),
        }
    }

    /// What abandons the source's network connects, reads and waits from
    /// another thread (a local file's is never looked at).
    pub fn canceller(&self) -> super::network::SourceLink {
        match &self.0 {
            Backend::Ffmpeg(d) => d.canceller(),
            Backend::Fwht(_) => super::network::SourceLink::default(),
        }
    }

    pub fn path(&self) -> &Path {
        match &self.0 {
            Backend::Ffmpeg(d) => d.path(),
            Backend::Fwht(r) => r.path(),
        }
    }

    /// The container's tracks and chapters (a FWHT file's: none listed).
    pub fn contents(&self) -> Option<super::tracks::Contents> {
        match &self.0 {
            Backend::Ffmpeg(d) => Some(d.contents()),
            Backend::Fwht(_) => None,
        }
    }

    /// Every stream of the container.
    pub fn streams(&self) -> Vec<StreamSummary> {
        match &self.0 {
            Backend::Ffmpeg(d) => d.streams(),
            Backend::Fwht(r) => r.streams(),
        }
    }

    /// Hands out the packets of stream `index` too (from the next packet
    /// read), unconverted, with their own stream index and time base.
    pub fn enable_stream(&mut self, index: usize) -> Result<(), MediaError> {
        match &mut self.0 {
            Backend::Ffmpeg(d) => d.enable_stream(index),
            Backend::Fwht(r) => Err(MediaError::NoSuchStream {
                path: r.path().to_owned(),
                index,
                reason: if index == 0 {
                    "it is the video stream played"
                } else {
                    "the file has no such stream"
                },
            }),
        }
    }

    /// The next packet; `None` at the end of the file.
    pub fn next_packet(&mut self) -> Result<Option<Packet>, MediaError> {
        match &mut self.0 {
            Backend::Ffmpeg(d) => d.next_packet(),
            Backend::Fwht(r) => r.next_packet(),
        }
    }

    /// Moves to the keyframe at or before `target`, on the same clock as
    /// `Frame::pts`: the next packet is that keyframe.
    /// See `FfmpegDemuxer::indexed_keyframe_at_or_before` (raw FWHT
    /// streams have no index).
    pub fn indexed_keyframe_at_or_before(&self, target: Duration) -> Option<i64> {
        match &self.0 {
            Backend::Ffmpeg(d) => d.indexed_keyframe_at_or_before(target),
            Backend::Fwht(_) => None,
        }
    }

    pub fn seek(&mut self, target: Duration) -> Result<(), MediaError> {
        match &mut self.0 {
            Backend::Ffmpeg(d) => d.seek(target),
            Backend::Fwht(r) => r.seek(target),
        }
    }
}

/// Whether the file starts with an FWHT frame magic (errors are left to
/// the FFmpeg demuxer, which reports them).
fn starts_fwht(path: &Path) -> bool {
    let mut prefix = [0; 8];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut prefix))
        .is_ok_and(|()| fwht::is_fwht(&prefix))
}
