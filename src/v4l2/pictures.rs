//! The generic decoder's pictures between the device and the player: a
//! decoded picture keeps its CAPTURE buffer here until it is put out, or
//! while the codec may show it again (VP9/AV1 `show_existing_frame`), and
//! the pictures due for output wait here in display order until theirs
//! come back. Pure: the picture held is a type parameter (the session's
//! `DecodedFrame` in [`super::decoder`]), so the rules are tested without
//! a device.

use std::collections::{HashMap, HashSet, VecDeque};

use super::codec::{DeviceTimestamp, OutputPicture};

#[derive(Debug)]
pub struct Pictures<P> {
    /// Decoded pictures by device timestamp, each holding its buffer.
    decoded: HashMap<DeviceTimestamp, P>,
    /// Pictures in `decoded` already put out, kept while still referenced
    /// (the codec may show them again).
    shown: HashSet<DeviceTimestamp>,
    /// Pictures due for output, in display order; their pictures may not
    /// have come back yet.
    due: VecDeque<OutputPicture>,
}

impl<P> Default for Pictures<P> {
    fn default() -> Self {
        Self {
            decoded: HashMap::new(),
            shown: HashSet::new(),
            due: VecDeque::new(),
        }
    }
}

impl<P: Clone> Pictures<P> {
    pub fn new() -> Self {
        Self::default()
    }

    /// A picture the device gave back.
    pub fn store(&mut self, timestamp: DeviceTimestamp, picture: P) {
        self.decoded.insert(timestamp, picture);
    }

    /// Pictures the codec made due, in display order, after those due
    /// already.
    pub fn make_due(&mut self, pictures: impl IntoIterator<Item = OutputPicture>) {
        self.due.extend(pictures);
    }

    pub fn has_due(&self) -> bool {
        !self.due.is_empty()
    }

    /// Whether pictures put out are kept because they are referenced.
    pub fn has_shown(&self) -> bool {
        !self.shown.is_empty()
    }

    /// The next picture in display order, once it came back. One still
    /// among `references` keeps its buffer here after it is put out.
    pub fn next_out(&mut self, references: &[DeviceTimestamp]) -> Option<(OutputPicture, P)> {
        let picture = *self.due.front()?;
        let timestamp = picture.timestamp_ns;
        let decoded = if references.contains(&timestamp) {
            let decoded = self.decoded.get(&timestamp).cloned()?;
            self.shown.insert(timestamp);
            decoded
        } else {
            let decoded = self.decoded.remove(&timestamp)?;
            self.shown.remove(&timestamp);
            decoded
        };
        self.due.pop_front();
        Some((picture, decoded))
    }

    /// Lets go of the pictures put out that are no longer referenced nor
    /// due again, before their buffers are needed for the next requests.
    pub fn forget_unreferenced_shown(&mut self, references: &[DeviceTimestamp]) {
        if self.shown.is_empty() {
            return;
        }
        let (due, decoded) = (&self.due, &mut self.decoded);
        self.shown.retain(|ts| {
            let kept = references.contains(ts) || due.iter().any(|p| p.timestamp_ns == *ts);
            if !kept {
                decoded.remove(ts);
            }
            kept
        });
    }

    /// Whether `timestamp` is decoded and kept, or due.
    pub fn is_live(&self, timestamp: DeviceTimestamp) -> bool {
        self.decoded.contains_key(&timestamp)
            || self.due.iter().any(|p| p.timestamp_ns == timestamp)
    }

    /// The sequence ends: its buffers are about to be replaced by the new
    /// sequence's, and once the device gave back every picture of it
    /// (drained), no picture but those due will ever be put out.
    /// `made_due` is what the codec made due with the packet that starts
    /// the new sequence: the old sequence's last pictures in display
    /// order, which the new sequence's first picture bumped out of the
    /// codec's DPB. They are due before anything of the old sequence is
    /// let go. Returns the pictures now put out, in display order (as
    /// [`Self::next_out`] would); every other decoded picture of the old
    /// sequence is let go with its buffer, so that none of them holds on
    /// to the output behind it, and with it to the new sequence's buffers.
    pub fn end_sequence(
        &mut self,
        made_due: impl IntoIterator<Item = OutputPicture>,
        references: &[DeviceTimestamp],
    ) -> Vec<(OutputPicture, P)> {
        self.make_due(made_due);
        let mut out = Vec::new();
        while let Some(ready) = self.next_out(references) {
            out.push(ready);
        }
        let due = &self.due;
        self.decoded
            .retain(|ts, _| due.iter().any(|p| p.timestamp_ns == *ts));
        let decoded = &self.decoded;
        self.shown.retain(|ts| decoded.contains_key(ts));
        out
    }

    /// Forgets every picture (a seek, or recovery after a fault).
    pub fn clear(&mut self) {
        self.decoded.clear();
        self.shown.clear();
        self.due.clear();
    }

    #[cfg(test)]
    fn held(&self) -> usize {
        self.decoded.len()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    /// A picture of `timestamp` due with packet `timestamp / 1000`.
    fn picture(timestamp: DeviceTimestamp) -> OutputPicture {
        OutputPicture {
            timestamp_ns: timestamp,
            packet: timestamp / 1000,
            visible: (320, 240),
            sample_aspect: (1, 1),
        }
    }

    fn pictures(timestamps: &[DeviceTimestamp]) -> Vec<OutputPicture> {
        timestamps.iter().map(|&t| picture(t)).collect()
    }

    /// CAPTURE buffers as the session keeps them: one free when nobody
    /// but the allocation holds it.
    struct Allocation(Vec<Arc<usize>>);

    impl Allocation {
        fn new(count: usize) -> Self {
            Self((0..count).map(Arc::new).collect())
        }

        fn free_buffer(&self) -> Option<Arc<usize>> {
            self.0.iter().find(|b| Arc::strong_count(b) == 1).cloned()
        }
    }

    /// Puts out what is ready; the frames are dropped at once, as a
    /// headless run hashes them.
    fn put_out(
        queue: &mut Pictures<Arc<usize>>,
        references: &[DeviceTimestamp],
        out: &mut Vec<DeviceTimestamp>,
    ) {
        while let Some((picture, _buffer)) = queue.next_out(references) {
            out.push(picture.timestamp_ns);
        }
    }

    #[test]
    fn the_old_sequences_last_pictures_are_put_out_and_let_go_at_a_new_sequence() {
        // Old sequence with B pictures: I1 P2 B3 in decode order, shown
        // I1 B3 P2; P2 waits in the codec's DPB until the new sequence's
        // IDR (4) bumps it out.
        let old = Allocation::new(5);
        let mut queue = Pictures::new();
        let mut out = Vec::new();
        for (timestamp, made_due, references) in [
            (1000, vec![], vec![1000]),
            (2000, vec![1000], vec![1000, 2000]),
            (3000, vec![3000], vec![1000, 2000]),
        ] {
            let buffer = old.free_buffer().expect("a free buffer");
            queue.store(timestamp, buffer);
            queue.make_due(pictures(&made_due));
            queue.forget_unreferenced_shown(&references);
            put_out(&mut queue, &references, &mut out);
        }
        assert_eq!(out, vec![1000, 3000]);

        // Packet 4 starts the new sequence: the codec made P2 due with it,
        // and references nothing of the old sequence any more.
        let ended = queue.end_sequence(pictures(&[2000]), &[]);
        out.extend(ended.iter().map(|(p, _)| p.timestamp_ns));
        drop(ended);
        assert_eq!(queue.held(), 0, "nothing of the old sequence kept");
        drop(old);

        // The new sequence's allocation: its pictures (IDR 4, then P
        // pictures shown as decoded, each referring to the one before)
        // must always find a free buffer.
        let new = Allocation::new(3);
        for timestamp in (4..=20).map(|n| n * 1000) {
            let references = [timestamp];
            let buffer = new.free_buffer().unwrap_or_else(|| {
                panic!("picture {timestamp}: every buffer of the new sequence is held")
            });
            queue.store(timestamp, buffer);
            queue.make_due([picture(timestamp)]);
            queue.forget_unreferenced_shown(&references);
            put_out(&mut queue, &references, &mut out);
        }
        let expected: Vec<u64> = [1000, 3000, 2000]
            .into_iter()
            .chain((4..=20).map(|n| n * 1000))
            .collect();
        assert_eq!(out, expected);
        assert_eq!(queue.held(), 1, "the last reference only");
    }

    #[test]
    fn a_new_sequence_lets_go_of_old_pictures_never_due() {
        let mut queue = Pictures::new();
        // 1: put out, still referenced; 2: a reference never shown (its
        // sequence ends before it is); 3: due, decoded.
        queue.store(1000, "one");
        queue.store(2000, "two");
        queue.store(3000, "three");
        queue.make_due(pictures(&[1000]));
        assert_eq!(
            queue
                .next_out(&[1000, 2000])
                .map(|(p, v)| (p.timestamp_ns, v)),
            Some((1000, "one"))
        );
        assert_eq!(queue.held(), 3, "a shown reference stays");
        let ended = queue.end_sequence(pictures(&[3000]), &[1000, 2000]);
        assert_eq!(
            ended
                .iter()
                .map(|(p, v)| (p.timestamp_ns, *v))
                .collect::<Vec<_>>(),
            vec![(3000, "three")]
        );
        assert_eq!(queue.held(), 0);
        assert!(!queue.is_live(1000) && !queue.is_live(2000));
    }

    #[test]
    fn a_new_sequence_keeps_its_first_picture_due_before_it_comes_back() {
        // Without reordering the IDR is due with its own packet: it is due
        // before it is decoded, and put out once it comes back.
        let mut queue = Pictures::new();
        queue.store(1000, 1);
        let ended = queue.end_sequence(pictures(&[1000, 2000]), &[1000]);
        assert_eq!(ended.len(), 1);
        assert!(queue.has_due() && queue.is_live(2000));
        assert!(queue.next_out(&[2000]).is_none());
        queue.store(2000, 2);
        assert_eq!(queue.next_out(&[2000]).map(|(_, v)| v), Some(2));
        assert!(!queue.has_due());
    }

    #[test]
    fn a_shown_picture_is_kept_while_referenced_or_due_again() {
        let mut queue = Pictures::new();
        queue.store(1000, 1);
        queue.make_due(pictures(&[1000]));
        assert!(queue.next_out(&[1000]).is_some());
        queue.forget_unreferenced_shown(&[1000]);
        assert_eq!(queue.held(), 1);
        // Shown again (show_existing_frame), then no longer referenced.
        queue.make_due([OutputPicture {
            packet: 5,
            ..picture(1000)
        }]);
        queue.forget_unreferenced_shown(&[]);
        assert_eq!(queue.held(), 1, "due again");
        assert_eq!(queue.next_out(&[]).map(|(p, _)| p.packet), Some(5));
        assert_eq!(queue.held(), 0);
    }
}
