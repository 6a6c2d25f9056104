//! VP9 on a V4L2 stateless decoder: each frame of a packet (superframes
//! split here) is one request carrying the whole frame and its two
//! controls; `show_existing_frame` frames make no request and show the
//! slot's earlier CAPTURE buffer again. Frames of another size than their
//! references (reference scaling) decode into the sequence's CAPTURE
//! buffers when they fit: only a key frame of another size, or a frame
//! larger than the buffers, starts a new sequence.

pub mod controls;

use std::ops::Range;

use tracing::debug;
use v4l2r::bindings as b;
use v4l2r::controls::codec::Vp9Frame;

use super::codec::{
    BitstreamPart, CodecError, OutputPicture, PictureSummary, Request, SequenceChange,
    StatelessCodec, Timestamps,
};
use super::codec::{CodecEntry, CodecOpenError, CodecSetup, Damage, Unsupported};
use super::controls::ExtControl;
use super::discovery::{DecoderInfo, ProfileNeed, StreamRequirements};
use super::formats::coded;
use crate::codec::vp9::header::FrameHeader;
use crate::codec::vp9::refs::References;
use crate::codec::vp9::{self, superframe, Headers, ParsedFrame, PersistentState, Vp9Error};
use crate::media::{Codec, VideoStreamInfo};
use controls::Vp9CompressedHdr;

/// VP9's line in the codec registry.
pub static ENTRY: CodecEntry = CodecEntry {
    codec: Codec::Vp9,
    coded_format: coded::VP9_FRAME,
    required_controls: &[
        b::V4L2_CID_STATELESS_VP9_FRAME,
        b::V4L2_CID_STATELESS_VP9_COMPRESSED_HDR,
    ],
    menus: &[(b::V4L2_CID_MPEG_VIDEO_VP9_PROFILE, "vp9 profile")],
    requirements,
    open,
};

/// Reference slots: every picture one holds stays decodable-from and
/// showable again.
const DPB_PICTURES: usize = 8;
const OUTPUT_BUFFERS: u32 = 4;

/// The container's size, and the profile its pixel layout implies
/// (profile 2 for 10 and 12 bits, 1 and 3 for 4:2:2 and 4:4:4).
fn requirements(stream: &VideoStreamInfo) -> StreamRequirements {
    StreamRequirements::of_container(coded::VP9_FRAME, stream, Some(profile_need(stream)))
}

fn profile_need(stream: &VideoStreamInfo) -> ProfileNeed {
    let layout = stream.pixel_format.as_deref().unwrap_or("yuv420p");
    let chroma_420 = layout.starts_with("yuv420") || layout.starts_with("yuva420");
    let high_depth = stream.bit_depth > 8;
    let profile = match (chroma_420, high_depth) {
        (true, false) => 0,
        (false, false) => 1,
        (true, true) => 2,
        (false, true) => 3,
    };
    let menu = |p: u32| match p {
        0 => b::v4l2_mpeg_video_vp9_profile_V4L2_MPEG_VIDEO_VP9_PROFILE_0,
        1 => b::v4l2_mpeg_video_vp9_profile_V4L2_MPEG_VIDEO_VP9_PROFILE_1,
        2 => b::v4l2_mpeg_video_vp9_profile_V4L2_MPEG_VIDEO_VP9_PROFILE_2,
        _ => b::v4l2_mpeg_video_vp9_profile_V4L2_MPEG_VIDEO_VP9_PROFILE_3,
    };
    // A profile 2 decoder also takes profile 0 streams.
    let accepted = match profile {
        0 => vec![menu(0), menu(2)],
        p => vec![menu(p)],
    };
    ProfileNeed {
        menu: b::V4L2_CID_MPEG_VIDEO_VP9_PROFILE,
        accepted,
        label: format!("VP9 profile {profile} ({layout})"),
    }
}

fn open(_info: &DecoderInfo, stream: &VideoStreamInfo) -> Result<CodecSetup, CodecOpenError> {
    Ok(CodecSetup {
        codec: Box::new(Vp9Codec::new((stream.width, stream.height))),
        initial_controls: Vec::new(),
        dpb_pictures: DPB_PICTURES,
        output_buffers: OUTPUT_BUFFERS,
    })
}

/// The VP9 glue of [`super::decoder::V4l2Decoder`].
pub struct Vp9Codec {
    state: PersistentState,
    refs: References<u64>,
    /// The size the session's CAPTURE buffers hold (the container's at
    /// first).
    capture_size: (u32, u32),
    /// The bit depth of the sequence the buffers were chosen for.
    bit_depth: u8,
    /// Whether a frame was decoded (the first one starts a sequence).
    started: bool,
    /// Pictures due for output, in order: VP9 shows frames as decoded, and
    /// may show one picture twice (`show_existing_frame`), each time with
    /// its own packet's timing.
    due: Vec<OutputPicture>,
}

impl Vp9Codec {
    /// `capture_size`: the size the session was opened with.
    pub fn new(capture_size: (u32, u32)) -> Self {
        Self {
            state: PersistentState::default(),
            refs: References::new(),
            capture_size,
            bit_depth: 8,
            started: false,
            due: Vec::new(),
        }
    }

    fn check(header: &FrameHeader) -> Result<(), CodecError> {
        let color = &header.color;
        if !matches!(header.profile, 0 | 2) || !color.is_420() || color.bit_depth > 10 {
            return Err(Unsupported::Vp9Format {
                profile: header.profile,
                bit_depth: color.bit_depth,
                is_420: color.is_420(),
            }
            .into());
        }
        Ok(())
    }

    /// Forgets the references: frames wait for the next key frame.
    fn lose_references(&mut self, why: Vp9Error) -> CodecError {
        self.refs.clear();
        self.state = PersistentState::default();
        Damage::Vp9(why).into()
    }

    /// A new sequence when the frame needs other CAPTURE buffers: the
    /// first frame, a key frame of another size, or a frame larger than
    /// the buffers. A smaller inter frame (reference scaling) decodes into
    /// the buffers its references are in. A non-key frame larger than the
    /// buffers cannot be decoded: new buffers would lose its references.
    fn sequence_change(
        &mut self,
        header: &FrameHeader,
    ) -> Result<Option<SequenceChange>, CodecError> {
        let size = (header.width, header.height);
        let fits = size.0 <= self.capture_size.0 && size.1 <= self.capture_size.1;
        if self.started && !fits && !header.key_frame {
            return Err(self.lose_references(Vp9Error::MissingReference(format!(
                "CAPTURE buffers of {}x{} for a non-key frame larger than them ({}x{})",
                self.capture_size.0, self.capture_size.1, size.0, size.1
            ))));
        }
        // A key frame of another size or bit depth (profile 0 <-> 2) needs
        // new CAPTURE buffers.
        let depth = header.color.bit_depth;
        let needed = !self.started
            || !fits
            || (header.key_frame && (size != self.capture_size || depth != self.bit_depth));
        self.started = true;
        if !needed {
            return Ok(None);
        }
        self.capture_size = size;
        self.bit_depth = depth;
        Ok(Some(SequenceChange {
            coded_width: size.0,
            coded_height: size.1,
            dpb_pictures: DPB_PICTURES,
            bit_depth: u32::from(depth),
            controls: Vec::new(),
        }))
    }

    fn decode_frame(
        &mut self,
        frame: Range<usize>,
        headers: &Headers,
        timestamps: &mut Timestamps,
    ) -> Result<Option<Request>, CodecError> {
        let header = &headers.header;
        Self::check(header)?;
        let refs = if header.is_intra() {
            [0; 3]
        } else {
            match self.refs.for_frame(header) {
                Ok(refs) => refs.map(|r| r.picture),
                Err(e) => {
                    debug!("VP9 frame skipped: {e}");
                    return Ok(None);
                }
            }
        };
        let timestamp_ns = timestamps.next_picture();
        // Before the size is taken: a frame decoded later brings a change
        // of size itself.
        if timestamps.leaves_out(timestamp_ns, header.is_reference()) {
            return Ok(None);
        }
        let sequence = self.sequence_change(header)?;
        self.refs.decoded(header, timestamp_ns);
        debug!(
            timestamp_ns,
            key = header.key_frame,
            intra_only = header.intra_only,
            show = header.show_frame,
            width = header.width,
            height = header.height,
            refresh = header.refresh_frame_flags,
            "VP9 frame"
        );
        if header.show_frame {
            self.show(
                timestamp_ns,
                timestamps.packet(),
                header.width,
                header.height,
            );
        }
        Ok(Some(Request {
            timestamp_ns,
            controls: vec![
                ExtControl::typed::<Vp9Frame>(controls::frame(header, &headers.compressed, refs)),
                ExtControl::typed::<Vp9CompressedHdr>(controls::compressed_hdr(
                    &headers.compressed,
                )),
            ],
            bitstream: vec![BitstreamPart::Packet(frame)],
            hold_capture: false,
            sequence,
            summary: PictureSummary {
                kind: if header.key_frame {
                    "key"
                } else if header.intra_only {
                    "intra-only"
                } else {
                    "inter"
                },
                order: None,
                references: if header.is_intra() {
                    Vec::new()
                } else {
                    refs.to_vec()
                },
                slices: 1,
            },
        }))
    }

    fn decode_packet(
        &mut self,
        packet: &[u8],
        timestamps: &mut Timestamps,
    ) -> Result<Vec<Request>, CodecError> {
        let frames = superframe::frames(packet).map_err(|e| self.lose_references(e))?;
        let mut requests = Vec::new();
        for frame in frames {
            let refs = &self.refs;
            let parsed = vp9::parse_frame(&packet[frame.clone()], &mut self.state, |slot| {
                refs.size(slot)
            });
            match parsed {
                Ok(ParsedFrame::Decode(headers)) => {
                    requests.extend(self.decode_frame(frame, &headers, timestamps)?);
                }
                Ok(ParsedFrame::ShowExisting { slot }) => {
                    match self.refs.get(usize::from(slot)).copied() {
                        Some(r) => {
                            debug!(timestamp_ns = r.picture, slot, "VP9 frame shown again");
                            self.show(r.picture, timestamps.packet(), r.width, r.height);
                        }
                        None => debug!(slot, "VP9 frame to show again is missing: skipped"),
                    }
                }
                Err(e @ Vp9Error::MissingReference(_)) => {
                    debug!("VP9 frame skipped: {e}");
                }
                Err(e) => return Err(self.lose_references(e)),
            }
        }
        Ok(requests)
    }

    fn show(&mut self, timestamp_ns: u64, packet: u64, width: u32, height: u32) {
        self.due.push(OutputPicture {
            timestamp_ns,
            packet,
            visible: (width, height),
            sample_aspect: (1, 1),
        });
    }
}

impl StatelessCodec for Vp9Codec {
    fn decode(
        &mut self,
        packet: &[u8],
        timestamps: &mut Timestamps,
    ) -> Result<Vec<Request>, CodecError> {
        let result = self.decode_packet(packet, timestamps);
        if result.is_err() {
            // None of the packet's requests is sent: nothing of it is shown.
            let current = timestamps.packet();
            self.due.retain(|p| p.packet != current);
        }
        result
    }

    fn references(&self) -> Vec<u64> {
        self.refs.pictures()
    }

    fn take_output(&mut self, _end_of_stream: bool) -> Vec<OutputPicture> {
        std::mem::take(&mut self.due)
    }

    fn reset(&mut self) {
        self.refs.clear();
        self.state = PersistentState::default();
        self.due.clear();
    }

    fn describe(&self) -> String {
        "VP9, one request per frame".into()
    }
}

#[cfg(test)]
mod tests;
