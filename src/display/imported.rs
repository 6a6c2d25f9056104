//! wl_buffers imported from a decoder's own dmabufs (the zero-copy path):
//! one per decoder buffer, created once and found again by its `BufferId`.
//!
//! While the compositor holds a buffer (attached, not yet released) the
//! entry keeps the frame's hold token, so the decoder cannot queue that
//! buffer again: it goes back to the decoder only when the compositor has
//! released it AND no frame or reference holds it. Entries of an older
//! allocation generation are destroyed as soon as the compositor lets go.

use std::collections::HashMap;
use std::sync::Arc;

use crate::frame::{BufferId, DmabufSource};

/// One imported buffer. `B` is the wl_buffer (generic for unit tests).
struct Entry<B> {
    buffer: B,
    /// The decoder's hold token while the compositor uses the buffer.
    held: Option<Arc<dyn DmabufSource>>,
    /// Its generation is gone: destroy on release.
    retired: bool,
}

/// What a release meant.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum ImportRelease<B> {
    /// Released; the buffer stays cached for the next frame in it.
    Kept,
    /// Released and retired: destroy it.
    Destroy(B),
    /// Not one of ours.
    Unknown,
}

pub(super) struct ImportedBuffers<B> {
    entries: HashMap<BufferId, Entry<B>>,
    /// The newest generation seen.
    generation: u64,
}

impl<B: Clone + PartialEq> ImportedBuffers<B> {
    pub(super) fn new() -> Self {
        Self {
            entries: HashMap::new(),
            generation: 0,
        }
    }

    /// The cached buffer for `id`, if it was imported before.
    pub(super) fn get(&self, id: BufferId) -> Option<&B> {
        self.entries.get(&id).map(|e| &e.buffer)
    }

    /// Whether the compositor still holds the buffer of `id`.
    pub(super) fn is_held(&self, id: BufferId) -> bool {
        self.entries.get(&id).is_some_and(|e| e.held.is_some())
    }

    /// Notes a frame of `generation`; when it is newer than any before,
    /// returns the buffers of older generations to destroy now (those the
    /// compositor still holds are destroyed at their release).
    pub(super) fn start_generation(&mut self, generation: u64) -> Vec<B> {
        if generation <= self.generation {
            return Vec::new();
        }
        self.generation = generation;
        let old: Vec<BufferId> = self
            .entries
            .keys()
            .filter(|id| id.generation < generation)
            .copied()
            .collect();
        let mut destroy = Vec::new();
        for id in old {
            let Some(entry) = self.entries.get_mut(&id) else {
                continue;
            };
            if entry.held.is_some() {
                entry.retired = true;
            } else if let Some(entry) = self.entries.remove(&id) {
                destroy.push(entry.buffer);
            }
        }
        destroy
    }

    /// Removes the buffers of allocation `through` and older that neither
    /// the compositor holds nor `kept` names (buffers frames still hold,
    /// which may be shown yet), and returns them to destroy; the decoder
    /// is about to replace that allocation. What is left goes as
    /// `start_generation` and `release` say.
    pub(super) fn retire_unused(&mut self, through: u64, kept: &[BufferId]) -> Vec<B> {
        let unused: Vec<BufferId> = self
            .entries
            .iter()
            .filter(|(id, e)| id.generation <= through && e.held.is_none() && !kept.contains(id))
            .map(|(id, _)| *id)
            .collect();
        unused
            .into_iter()
            .filter_map(|id| self.entries.remove(&id))
            .map(|e| e.buffer)
            .collect()
    }

    pub(super) fn insert(&mut self, id: BufferId, buffer: B) {
        self.entries.insert(
            id,
            Entry {
                buffer,
                held: None,
                retired: id.generation < self.generation,
            },
        );
    }

    /// The buffer of `id` is attached: keep `token` until its release.
    pub(super) fn mark_held(&mut self, id: BufferId, token: Arc<dyn DmabufSource>) {
        // Held already: the same picture committed again (shown again);
        // either token keeps the buffer from the decoder.
        if let Some(entry) = self.entries.get_mut(&id) {
            entry.held = Some(token);
        }
    }

    /// wl_buffer.release for `buffer`: drops the hold token.
    pub(super) fn release(&mut self, buffer: &B) -> ImportRelease<B> {
        let Some((&id, entry)) = self.entries.iter_mut().find(|(_, e)| e.buffer == *buffer) else {
            return ImportRelease::Unknown;
        };
        entry.held = None;
        if !entry.retired {
            return ImportRelease::Kept;
        }
        match self.entries.remove(&id) {
            Some(entry) => ImportRelease::Destroy(entry.buffer),
            None => ImportRelease::Unknown,
        }
    }

    /// Buffers the compositor holds now.
    pub(super) fn held(&self) -> usize {
        self.entries.values().filter(|e| e.held.is_some()).count()
    }

    /// Buffers imported and not destroyed yet.
    pub(super) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Every buffer, for destruction at shutdown.
    pub(super) fn drain_all(&mut self) -> Vec<B> {
        self.entries.drain().map(|(_, e)| e.buffer).collect()
    }
}

#[cfg(test)]
mod tests {
    use std::os::fd::BorrowedFd;

    use super::*;

    struct Token;
    impl DmabufSource for Token {
        fn fd(&self, _: usize) -> Option<BorrowedFd<'_>> {
            None
        }
    }

    fn id(generation: u64, index: u32) -> BufferId {
        BufferId { generation, index }
    }

    #[test]
    fn hold_token_lives_until_release() {
        let mut cache = ImportedBuffers::new();
        cache.start_generation(1);
        cache.insert(id(1, 0), 10u32);
        let token: Arc<dyn DmabufSource> = Arc::new(Token);
        cache.mark_held(id(1, 0), token.clone());
        assert_eq!(Arc::strong_count(&token), 2);
        assert!(cache.is_held(id(1, 0)));
        assert_eq!(cache.release(&10), ImportRelease::Kept);
        assert_eq!(Arc::strong_count(&token), 1);
        assert_eq!(cache.get(id(1, 0)), Some(&10));
        assert_eq!(cache.release(&99), ImportRelease::Unknown);
    }

    #[test]
    fn retiring_keeps_what_the_compositor_or_a_frame_holds() {
        let mut cache = ImportedBuffers::new();
        cache.start_generation(1);
        for index in 0..4u32 {
            cache.insert(id(1, index), index);
        }
        cache.mark_held(id(1, 0), Arc::new(Token));
        let mut destroyed = cache.retire_unused(1, &[id(1, 1)]);
        destroyed.sort_unstable();
        assert_eq!(destroyed, vec![2, 3]);
        // The frame's buffer is still found; the held one goes at release
        // once the new generation is shown.
        assert_eq!(cache.get(id(1, 1)), Some(&1));
        assert!(cache.start_generation(2).contains(&1));
        assert_eq!(cache.release(&0), ImportRelease::Destroy(0));
        assert_eq!(cache.len(), 0);
    }

    #[test]
    fn new_generation_destroys_old_buffers_once_released() {
        let mut cache = ImportedBuffers::new();
        cache.start_generation(1);
        cache.insert(id(1, 0), 10u32);
        cache.insert(id(1, 1), 11u32);
        cache.mark_held(id(1, 1), Arc::new(Token));
        let destroyed = cache.start_generation(2);
        assert_eq!(destroyed, vec![10]);
        assert_eq!(cache.get(id(1, 0)), None);
        assert_eq!(cache.held(), 1);
        assert_eq!(cache.release(&11), ImportRelease::Destroy(11));
        assert_eq!(cache.held(), 0);
        assert!(cache.start_generation(2).is_empty());
    }

    #[test]
    fn a_picture_shown_again_stays_held_until_its_release() {
        let mut cache = ImportedBuffers::new();
        cache.insert(id(1, 0), 10u32);
        cache.mark_held(id(1, 0), Arc::new(Token));
        // VP9's show_existing_frame: the same buffer committed again.
        cache.mark_held(id(1, 0), Arc::new(Token));
        assert!(cache.is_held(id(1, 0)));
        assert_eq!(cache.held(), 1);
        assert_eq!(cache.release(&10), ImportRelease::Kept);
        assert!(!cache.is_held(id(1, 0)));
    }
}
