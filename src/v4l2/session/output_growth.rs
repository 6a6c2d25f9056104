//! OUTPUT buffers as access units outgrow them: larger ones added, the
//! smaller retired as the driver gives them back.

use tracing::info;

use super::{buffers, min_capacity, Session, SessionError};

impl Session {
    /// Adds OUTPUT buffers large enough for `needed` bytes (and some room
    /// to spare, so that a slowly growing stream does not do this often);
    /// the smaller buffers are retired. Nothing is allocated for an access
    /// unit larger than twice the decoded picture (plus 1 MiB): damage or
    /// an absurd stream, not a picture.
    pub(super) fn grow_output(&mut self, needed: usize) -> Result<(), SessionError> {
        let too_large = |capacity| SessionError::BitstreamTooLarge {
            size: needed,
            capacity,
        };
        let picture_bytes: usize = self.layout.planes.iter().map(|p| p.1 as usize).sum();
        if needed > 2 * picture_bytes + (1 << 20) {
            return Err(too_large(self.output_capacity));
        }
        let size = u32::try_from(needed + needed / 4)
            .map_err(|_| too_large(self.output_capacity))?
            .next_multiple_of(4096);
        let count = self
            .output
            .iter()
            .filter(|b| b.capacity() >= self.output_capacity)
            .count()
            .max(1) as u32;
        let added = buffers::create_output(
            &self.video,
            self.output_queue,
            self.output.len() as u32,
            count,
            size,
        )?;
        let capacity = min_capacity(&added);
        if capacity < needed {
            return Err(too_large(capacity));
        }
        info!(
            bytes = needed,
            from = self.output_capacity,
            to = capacity,
            buffers = added.len(),
            "an access unit outgrew the OUTPUT buffers: larger ones added"
        );
        self.output_capacity = capacity;
        let output = &self.output;
        self.free_output
            .retain(|&i| output[i as usize].capacity() >= capacity);
        self.free_output.extend(added.iter().rev().map(|b| b.index));
        self.output.extend(added);
        self.requests.set_limit(self.output.len());
        Ok(())
    }

    /// An OUTPUT buffer the driver gave back: free again unless retired.
    pub(super) fn release_output(&mut self, index: u32) {
        if self
            .output
            .get(index as usize)
            .is_some_and(|b| b.capacity() >= self.output_capacity)
        {
            self.free_output.push(index);
        }
    }
}
