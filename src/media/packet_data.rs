//! A packet's bytes, kept in the buffer libavformat read them into where
//! they need no rewriting that grows them: the AVCC-to-Annex-B rewrite of a
//! frame with 4-byte length fields, and VP8/VP9/AV1/MPEG-2 packets, skip a
//! copy of the access unit on its way to the decoder.

use std::ops::Deref;

use ff::ffi;
use ff::packet::{Mut, Ref};
use ffmpeg_next as ff;

/// The bitstream of one packet (read as bytes through `Deref`).
pub struct PacketData(Storage);

enum Storage {
    Built(Vec<u8>),
    /// A packet from av_read_frame, its buffer reel's alone (made writable
    /// before any rewrite) and not empty.
    Read(ff::Packet),
}

impl PacketData {
    /// The bytes of `packet` as libavformat read them (or as rewritten in
    /// place since); `None` for a packet without data.
    pub(crate) fn read(packet: ff::Packet) -> Option<PacketData> {
        packet.data().filter(|d| !d.is_empty())?;
        Some(PacketData(Storage::Read(packet)))
    }

    /// The bytes, to change: a packet as read is copied out first.
    pub fn to_mut(&mut self) -> &mut Vec<u8> {
        if let Storage::Read(_) = self.0 {
            self.0 = Storage::Built(self.to_vec());
        }
        match &mut self.0 {
            Storage::Built(bytes) => bytes,
            Storage::Read(_) => unreachable!("replaced just above"),
        }
    }

    /// A libavcodec packet of these bytes, and no more of the container's
    /// packet (timestamps and side data are the caller's to set): a new
    /// reference to the buffer as read, or a copy of bytes built.
    pub(crate) fn to_av_packet(&self) -> ff::Packet {
        match &self.0 {
            Storage::Built(bytes) => ff::Packet::copy(bytes),
            Storage::Read(read) => {
                let mut packet = ff::Packet::empty();
                // SAFETY: both are valid AVPackets; av_packet_ref adds a
                // reference to `read`'s counted buffer (or copies, for an
                // uncounted one) into the empty `packet`, which owns it
                // from then on. The side data it copied is dropped, as a
                // copy of the bytes would not carry it.
                let ret = unsafe {
                    let ret = ffi::av_packet_ref(packet.as_mut_ptr(), read.as_ptr());
                    ffi::av_packet_free_side_data(packet.as_mut_ptr());
                    ret
                };
                if ret < 0 {
                    // Out of memory for a reference: copy instead.
                    return ff::Packet::copy(self);
                }
                // The bytes only, as a copy would be.
                packet.set_pts(None);
                packet.set_dts(None);
                packet.set_duration(0);
                packet.set_position(-1);
                packet.set_stream(0);
                packet.set_flags(ff::packet::Flags::empty());
                packet
            }
        }
    }
}

impl Deref for PacketData {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match &self.0 {
            Storage::Built(bytes) => bytes,
            Storage::Read(packet) => packet.data().unwrap_or(&[]),
        }
    }
}

impl From<Vec<u8>> for PacketData {
    fn from(bytes: Vec<u8>) -> PacketData {
        PacketData(Storage::Built(bytes))
    }
}

impl Default for PacketData {
    fn default() -> PacketData {
        Vec::new().into()
    }
}

impl Clone for PacketData {
    fn clone(&self) -> PacketData {
        self.to_vec().into()
    }
}

impl PartialEq for PacketData {
    fn eq(&self, other: &PacketData) -> bool {
        **self == **other
    }
}

impl Eq for PacketData {}

impl PartialEq<Vec<u8>> for PacketData {
    fn eq(&self, other: &Vec<u8>) -> bool {
        **self == other[..]
    }
}

impl std::fmt::Debug for PacketData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&**self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_and_built_bytes_are_the_same_bytes() {
        let bytes = vec![0u8, 0, 0, 1, 0x65, 0x88, 7];
        let mut as_read = ff::Packet::copy(&bytes);
        as_read.set_pts(Some(3));
        as_read.set_flags(ff::packet::Flags::KEY | ff::packet::Flags::CORRUPT);
        let read = PacketData::read(as_read).expect("not empty");
        let built = PacketData::from(bytes.clone());
        assert_eq!(&*read, &bytes[..]);
        assert_eq!(read, built);
        assert_eq!(read.clone(), built);
        let av = read.to_av_packet();
        assert_eq!(av.data(), Some(&bytes[..]));
        assert_eq!(
            (av.pts(), av.dts(), av.flags()),
            (None, None, ff::packet::Flags::empty())
        );
        assert_eq!(built.to_av_packet().data(), Some(&bytes[..]));
        assert!(PacketData::read(ff::Packet::empty()).is_none());
    }

    #[test]
    fn changing_a_packet_as_read_changes_a_copy() {
        let av = ff::Packet::copy(&[1, 2, 3]);
        let mut read = PacketData::read(av).expect("not empty");
        let reference = read.to_av_packet();
        read.to_mut()[0] = 9;
        assert_eq!(&*read, &[9, 2, 3]);
        assert_eq!(reference.data(), Some(&[1u8, 2, 3][..]));
    }
}
