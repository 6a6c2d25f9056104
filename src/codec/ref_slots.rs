//! Reference slots: the numbered places a frame-based codec keeps decoded
//! pictures in (VP8's last, golden and altref; VP9's and AV1's eight). A
//! frame names the slots it predicts from and the slots it refreshes; a
//! picture leaves the codec's references only when no slot holds it.
//!
//! Generic over what a slot keeps, so that a codec stores the picture's
//! device timestamp together with the state later frames inherit from it
//! (frame size, VP9's loop filter deltas and segmentation, AV1's order
//! hints, global motion and film grain).

/// `N` reference slots, each empty or holding one picture's `T`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefSlots<T, const N: usize> {
    slots: [Option<T>; N],
}

impl<T, const N: usize> Default for RefSlots<T, N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T, const N: usize> RefSlots<T, N> {
    pub fn new() -> Self {
        Self {
            slots: std::array::from_fn(|_| None),
        }
    }

    /// What slot `index` holds; `None` for an empty slot or an index past `N`.
    pub fn get(&self, index: usize) -> Option<&T> {
        self.slots.get(index).and_then(Option::as_ref)
    }

    /// Whether every slot in `indices` holds a picture (a frame predicting
    /// from an empty slot follows damage or a seek: it cannot be decoded).
    pub fn all_filled(&self, indices: impl IntoIterator<Item = usize>) -> bool {
        indices.into_iter().all(|i| self.get(i).is_some())
    }

    /// Puts `value` in slot `index` (ignored past `N`).
    pub fn set(&mut self, index: usize, value: T) {
        if let Some(slot) = self.slots.get_mut(index) {
            *slot = Some(value);
        }
    }

    /// Empties every slot (a key frame's reset, a seek, damage).
    pub fn clear(&mut self) {
        self.slots.iter_mut().for_each(|s| *s = None);
    }

    /// Every filled slot, with its index.
    pub fn iter(&self) -> impl Iterator<Item = (usize, &T)> {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.as_ref().map(|v| (i, v)))
    }
}

impl<T: Clone, const N: usize> RefSlots<T, N> {
    /// Puts `value` in every slot whose bit is set in `mask` (bit `i` for
    /// slot `i`): VP9's and AV1's `refresh_frame_flags`.
    pub fn refresh(&mut self, mask: u32, value: &T) {
        for (i, slot) in self.slots.iter_mut().enumerate() {
            if i < 32 && mask & (1 << i) != 0 {
                *slot = Some(value.clone());
            }
        }
    }

    /// Copies slot `from` into slot `to` (VP8's `copy_buffer_to_golden` /
    /// `_to_alternate`); an empty `from` empties `to`.
    pub fn copy(&mut self, from: usize, to: usize) {
        if to < N {
            self.slots[to] = self.get(from).cloned();
        }
    }
}

impl<T: Copy + Ord, const N: usize> RefSlots<T, N> {
    /// The distinct values held, sorted (one picture may fill several slots).
    pub fn distinct(&self) -> Vec<T> {
        let mut values: Vec<T> = self.slots.iter().flatten().copied().collect();
        values.sort_unstable();
        values.dedup();
        values
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refresh_copy_and_clear() {
        let mut slots: RefSlots<u64, 8> = RefSlots::new();
        assert!(slots.get(0).is_none());
        assert!(!slots.all_filled([0]));
        slots.refresh(0xff, &1000);
        assert!(slots.all_filled(0..8));
        assert_eq!(slots.distinct(), vec![1000]);
        slots.refresh(0b0000_0101, &2000);
        assert_eq!(slots.get(0), Some(&2000));
        assert_eq!(slots.get(1), Some(&1000));
        assert_eq!(slots.get(2), Some(&2000));
        assert_eq!(slots.distinct(), vec![1000, 2000]);
        slots.copy(0, 7);
        assert_eq!(slots.get(7), Some(&2000));
        assert_eq!(slots.get(8), None, "past the last slot");
        slots.set(9, 5);
        slots.copy(0, 9);
        assert_eq!(slots.iter().count(), 8);
        slots.clear();
        assert_eq!(slots.iter().count(), 0);
        assert!(slots.distinct().is_empty());
    }

    #[test]
    fn copying_an_empty_slot_empties_the_target() {
        let mut slots: RefSlots<u64, 3> = RefSlots::new();
        slots.set(1, 7);
        slots.copy(0, 1);
        assert_eq!(slots.get(1), None);
    }
}
