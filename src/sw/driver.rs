//! Decoding a whole stream headlessly (for `--output framemd5|null` and
//! benchmarks): demux, decode, hand every frame to a sink.

use anyhow::Context as _;
use thiserror::Error;

use super::{SwDecoder, SwError, SwOptions};
use crate::frame::Frame;
use crate::media::{Demuxer, MediaError};

/// What a full decode went through.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DecodeStats {
    pub packets: u64,
    pub frames: u64,
    /// Recoverable decode errors (corrupt packets); each was logged.
    pub decode_errors: u64,
    /// Packets dropped while waiting for a keyframe after an error.
    pub skipped_packets: u64,
    /// Frames dropped after an error because they may reference the
    /// picture that failed.
    pub discarded_frames: u64,
    /// Packets the container flagged corrupt or whose NAL framing was
    /// damaged; decoded anyway (as ffmpeg does) and logged.
    pub corrupt_packets: u64,
}

#[derive(Debug, Error)]
pub enum DecodeError {
    #[error(transparent)]
    Media(#[from] MediaError),
    #[error(transparent)]
    Decoder(#[from] SwError),
    #[error("writing output: {0:#}")]
    Sink(anyhow::Error),
}

/// Decodes every packet of `demuxer` from where it stands to the end and
/// gives each frame to `sink`, in presentation order. Corrupt packets are
/// counted in `decode_errors` and skipped; a read error ends the decode
/// (after the frames already buffered are delivered) and is returned.
pub fn decode_file(
    demuxer: &mut Demuxer,
    opts: SwOptions,
    mut sink: impl FnMut(Frame) -> anyhow::Result<()>,
) -> Result<DecodeStats, DecodeError> {
    let started = std::time::Instant::now();
    let mut decoder = SwDecoder::new(demuxer.stream(), opts)?;
    let mut stats = DecodeStats::default();
    let mut deliver = |decoder: &mut SwDecoder, stats: &mut DecodeStats| loop {
        match decoder.receive() {
            Ok(Some(frame)) => {
                stats.frames += 1;
                sink(frame).map_err(DecodeError::Sink)?;
            }
            Ok(None) => return Ok::<(), DecodeError>(()),
            Err(e) if e.is_recoverable() => {
                stats.decode_errors += 1;
                tracing::warn!("{e}");
            }
            Err(e) => return Err(e.into()),
        }
    };
    let read_error = loop {
        let packet = match demuxer.next_packet() {
            Ok(Some(p)) => p,
            Ok(None) => break None,
            Err(e) => break Some(e),
        };
        stats.packets += 1;
        if packet.corrupt {
            stats.corrupt_packets += 1;
            tracing::warn!("packet at pts {:?} is marked corrupt", packet.pts);
        }
        match decoder.send(&packet) {
            Ok(()) => {}
            Err(e) if e.is_recoverable() => {
                stats.decode_errors += 1;
                tracing::warn!("{e}");
            }
            Err(e) => return Err(e.into()),
        }
        deliver(&mut decoder, &mut stats)?;
    };
    if let Err(e) = decoder.send_eof() {
        stats.decode_errors += 1;
        tracing::warn!("{e}");
    }
    deliver(&mut decoder, &mut stats)?;
    stats.skipped_packets = decoder.skipped_packets();
    stats.discarded_frames = decoder.discarded_frames();
    let elapsed = started.elapsed().as_secs_f64();
    tracing::info!(
        "decoded {} frames in {elapsed:.3} s ({:.1} fps) from {} packets ({} decode errors, {} packets skipped, {} corrupt)",
        stats.frames,
        stats.frames as f64 / elapsed.max(1e-9),
        stats.packets,
        stats.decode_errors,
        stats.skipped_packets,
        stats.corrupt_packets
    );
    match read_error {
        Some(e) => Err(e.into()),
        None => Ok(stats),
    }
}

/// Decodes a file and discards the frames, as fast as possible.
pub fn decode_to_null(demuxer: &mut Demuxer, opts: SwOptions) -> anyhow::Result<DecodeStats> {
    decode_file(demuxer, opts, |_| Ok(())).context("decoding")
}
