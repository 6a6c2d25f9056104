//! The buffer pool: which buffers the compositor still holds, which are free
//! to write, and when a new one may be made. Generic over the buffer type so
//! the bookkeeping is tested without a compositor.
//!
//! Rules: a buffer is written only when free (never attached, or released
//! since its last attach); the pool grows up to `max` buffers; a change of
//! size or format (the key) retires every buffer: free ones are handed back
//! to be destroyed at once, held ones when the compositor releases them.

/// What makes buffers interchangeable: the path, format, modifier and size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolKey {
    pub dmabuf: bool,
    pub fourcc: u32,
    pub modifier: u64,
    pub width: u32,
    pub height: u32,
}

struct Slot<B> {
    buffer: B,
    held: bool,
}

pub struct BufferPool<B> {
    key: Option<PoolKey>,
    slots: Vec<Slot<B>>,
    /// Buffers of an older key the compositor still holds.
    retired: Vec<B>,
    max: usize,
}

/// The answer to "where do I write the next frame?".
#[derive(Debug, PartialEq, Eq)]
pub enum Acquire {
    /// This slot is free: write into it.
    Free(usize),
    /// None is free but the pool may grow: make a buffer and `push` it.
    Grow,
    /// Every buffer is held by the compositor and the pool is full.
    Exhausted,
}

/// What a `wl_buffer.release` meant.
#[derive(Debug, PartialEq, Eq)]
pub enum Released<B> {
    /// A pool buffer is free again.
    Reusable,
    /// A retired buffer: destroy it now.
    Destroy(B),
    /// Not a buffer of ours (or released twice): ignore.
    Unknown,
}

impl<B> BufferPool<B> {
    pub fn new(max: usize) -> Self {
        Self {
            key: None,
            slots: Vec::new(),
            retired: Vec::new(),
            max: max.max(1),
        }
    }

    pub fn key(&self) -> Option<PoolKey> {
        self.key
    }

    /// Switches to `key`; returns the buffers to destroy now (free buffers of
    /// the previous key). Held ones are kept until released.
    #[must_use]
    pub fn set_key(&mut self, key: PoolKey) -> Vec<B> {
        if self.key == Some(key) {
            return Vec::new();
        }
        self.key = Some(key);
        let mut destroy = Vec::new();
        for slot in self.slots.drain(..) {
            if slot.held {
                self.retired.push(slot.buffer);
            } else {
                destroy.push(slot.buffer);
            }
        }
        destroy
    }

    pub fn acquire(&self) -> Acquire {
        match self.slots.iter().position(|s| !s.held) {
            Some(i) => Acquire::Free(i),
            None if self.slots.len() < self.max => Acquire::Grow,
            None => Acquire::Exhausted,
        }
    }

    /// Adds a newly made (free) buffer; returns its slot.
    pub fn push(&mut self, buffer: B) -> usize {
        self.slots.push(Slot {
            buffer,
            held: false,
        });
        self.slots.len() - 1
    }

    /// The buffer of a free slot, to write into. `None` if the slot is held:
    /// writing into a buffer the compositor may be reading is never allowed.
    pub fn writable(&mut self, slot: usize) -> Option<&mut B> {
        self.slots
            .get_mut(slot)
            .filter(|s| !s.held)
            .map(|s| &mut s.buffer)
    }

    /// Marks a slot as attached and committed: held until released.
    pub fn mark_held(&mut self, slot: usize) {
        if let Some(s) = self.slots.get_mut(slot) {
            s.held = true;
        }
    }

    /// Handles a release of the buffer matching `is_it`.
    pub fn release(&mut self, is_it: impl Fn(&B) -> bool) -> Released<B> {
        if let Some(s) = self.slots.iter_mut().find(|s| is_it(&s.buffer)) {
            if !s.held {
                return Released::Unknown;
            }
            s.held = false;
            return Released::Reusable;
        }
        match self.retired.iter().position(is_it) {
            Some(i) => Released::Destroy(self.retired.swap_remove(i)),
            None => Released::Unknown,
        }
    }

    /// Buffers in the current pool.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Buffers the compositor holds, current and retired.
    pub fn held(&self) -> usize {
        self.slots.iter().filter(|s| s.held).count() + self.retired.len()
    }

    /// Every buffer, to destroy on shutdown.
    pub fn drain_all(&mut self) -> Vec<B> {
        let mut all: Vec<B> = self.slots.drain(..).map(|s| s.buffer).collect();
        all.append(&mut self.retired);
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(width: u32) -> PoolKey {
        PoolKey {
            dmabuf: true,
            fourcc: 1,
            modifier: 0,
            width,
            height: 10,
        }
    }

    /// Simulates the display: write into a free slot, attach, commit.
    fn present(pool: &mut BufferPool<u32>, next_id: &mut u32) -> Option<u32> {
        let slot = match pool.acquire() {
            Acquire::Free(i) => i,
            Acquire::Grow => {
                *next_id += 1;
                pool.push(*next_id)
            }
            Acquire::Exhausted => return None,
        };
        let id = *pool.writable(slot)?;
        pool.mark_held(slot);
        Some(id)
    }

    #[test]
    fn grows_to_bound_then_exhausts() {
        let mut pool = BufferPool::new(3);
        assert!(pool.set_key(key(10)).is_empty());
        let mut n = 0;
        let ids: Vec<_> = (0..4).map(|_| present(&mut pool, &mut n)).collect();
        assert_eq!(ids, vec![Some(1), Some(2), Some(3), None]);
        assert_eq!(pool.len(), 3);
        assert_eq!(pool.release(|&b| b == 2), Released::Reusable);
        assert_eq!(present(&mut pool, &mut n), Some(2));
    }

    #[test]
    fn held_buffers_are_not_writable() {
        let mut pool = BufferPool::new(2);
        let _ = pool.set_key(key(10));
        let slot = pool.push(7);
        pool.mark_held(slot);
        assert!(pool.writable(slot).is_none());
        assert_eq!(pool.release(|&b| b == 7), Released::Reusable);
        assert_eq!(pool.writable(slot), Some(&mut 7));
    }

    #[test]
    fn double_or_foreign_release_is_ignored() {
        let mut pool = BufferPool::new(2);
        let _ = pool.set_key(key(10));
        let slot = pool.push(7);
        pool.mark_held(slot);
        assert_eq!(pool.release(|&b| b == 7), Released::Reusable);
        assert_eq!(pool.release(|&b| b == 7), Released::Unknown);
        assert_eq!(pool.release(|&b| b == 8), Released::Unknown);
    }

    #[test]
    fn key_change_retires_held_and_destroys_free() {
        let mut pool = BufferPool::new(3);
        let _ = pool.set_key(key(10));
        let mut n = 0;
        present(&mut pool, &mut n); // 1 held
        present(&mut pool, &mut n); // 2 held
        assert_eq!(pool.release(|&b| b == 1), Released::Reusable);
        let destroy = pool.set_key(key(20));
        assert_eq!(destroy, vec![1]);
        assert_eq!(pool.len(), 0);
        assert_eq!(pool.held(), 1);
        assert_eq!(pool.release(|&b| b == 2), Released::Destroy(2));
        assert_eq!(pool.held(), 0);
        // Same key again changes nothing.
        assert!(pool.set_key(key(20)).is_empty());
    }
}
