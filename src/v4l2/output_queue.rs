//! What a codec's glue keeps between decoding a picture and showing it:
//! the packet whose timing it is shown with, its visible size and aspect
//! (both change with the sequence), and the display order its DPB decided.

use std::collections::{HashMap, HashSet, VecDeque};

use super::codec::OutputPicture;

#[derive(Clone, Copy, Debug)]
struct PictureInfo {
    packet: u64,
    visible: (u32, u32),
    sample_aspect: (u32, u32),
}

#[derive(Debug)]
pub struct OutputQueue {
    /// Pictures due for output, in display order.
    due: VecDeque<u64>,
    /// Pictures decoded and not yet shown.
    pictures: HashMap<u64, PictureInfo>,
    /// The last picture recorded: what a picture the codec never recorded
    /// (damage) is shown with.
    last: PictureInfo,
    /// Pictures left undecoded (non-references before a seek target):
    /// never put out.
    left_out: HashSet<u64>,
}

impl Default for OutputQueue {
    fn default() -> Self {
        Self::new()
    }
}

impl OutputQueue {
    pub fn new() -> Self {
        Self {
            due: VecDeque::new(),
            pictures: HashMap::new(),
            last: PictureInfo {
                packet: 0,
                visible: (0, 0),
                sample_aspect: (1, 1),
            },
            left_out: HashSet::new(),
        }
    }

    /// A picture not decoded: dropped when its output is due.
    pub fn leave_out(&mut self, timestamp_ns: u64) {
        self.left_out.insert(timestamp_ns);
    }

    /// A picture decoded into `timestamp_ns` from `packet`. A picture
    /// recorded before (an H.264 second field in its own packet) keeps its
    /// first packet's timing.
    pub fn record(
        &mut self,
        timestamp_ns: u64,
        packet: u64,
        visible: (u32, u32),
        sample_aspect: Option<(u32, u32)>,
    ) {
        let packet = self
            .pictures
            .get(&timestamp_ns)
            .map_or(packet, |p| p.packet);
        self.last = PictureInfo {
            packet,
            visible,
            sample_aspect: sample_aspect.unwrap_or((1, 1)),
        };
        self.pictures.insert(timestamp_ns, self.last);
    }

    /// Pictures the DPB put out, in display order.
    pub fn push_due(&mut self, timestamps: impl IntoIterator<Item = u64>) {
        self.due.extend(timestamps);
    }

    /// Every picture due, with what it is shown with.
    pub fn take(&mut self) -> Vec<OutputPicture> {
        let due: Vec<u64> = self.due.drain(..).collect();
        due.into_iter()
            .filter(|timestamp_ns| !self.left_out.remove(timestamp_ns))
            .map(|timestamp_ns| {
                let info = self.pictures.remove(&timestamp_ns).unwrap_or(self.last);
                OutputPicture {
                    timestamp_ns,
                    packet: info.packet,
                    visible: info.visible,
                    sample_aspect: info.sample_aspect,
                }
            })
            .collect()
    }

    pub fn clear(&mut self) {
        self.due.clear();
        self.pictures.clear();
        self.left_out.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pictures_keep_their_packet_size_and_aspect_until_shown() {
        let mut q = OutputQueue::new();
        q.record(1000, 1, (320, 240), None);
        q.record(2000, 2, (480, 270), Some((4, 3)));
        // A second field of the first picture, in packet 3.
        q.record(1000, 3, (320, 240), None);
        q.push_due([2000, 1000]);
        let out = q.take();
        assert_eq!(
            out.iter()
                .map(|p| (p.timestamp_ns, p.packet, p.visible, p.sample_aspect))
                .collect::<Vec<_>>(),
            vec![(2000, 2, (480, 270), (4, 3)), (1000, 1, (320, 240), (1, 1))]
        );
        assert!(q.take().is_empty());
    }

    #[test]
    fn pictures_left_out_are_never_put_out() {
        let mut q = OutputQueue::new();
        q.record(1000, 1, (320, 240), None);
        q.leave_out(2000);
        q.record(3000, 3, (320, 240), None);
        q.push_due([1000, 2000, 3000]);
        let shown: Vec<u64> = q.take().iter().map(|p| p.timestamp_ns).collect();
        assert_eq!(shown, [1000, 3000]);
    }
}
