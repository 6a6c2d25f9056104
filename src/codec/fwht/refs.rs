//! Which frame a P frame predicts from: the frame decoded just before it.
//! After a seek or a damaged frame there is no usable reference, and P
//! frames are skipped until the next I frame.

use super::FrameHeader;

/// What to do with a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision<T> {
    /// An I frame: decode it alone.
    Intra,
    /// A P frame: decode it from `reference`.
    Inter { reference: T },
    /// A P frame without a usable reference: skip it.
    Skip,
}

/// The reference state of one stream; `T` names a decoded picture (the
/// backend's handle for it).
#[derive(Clone, Debug)]
pub struct References<T> {
    /// The last decoded picture and its size.
    last: Option<(T, (u32, u32))>,
}

impl<T: Copy> Default for References<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Copy> References<T> {
    /// A stream start: P frames are skipped until an I frame.
    pub fn new() -> Self {
        Self { last: None }
    }

    /// How to decode the frame of `header`.
    pub fn decide(&self, header: &FrameHeader) -> Decision<T> {
        if header.is_intra() {
            return Decision::Intra;
        }
        match self.last {
            // A P frame predicts pixel for pixel: a reference of another
            // size cannot be its own.
            Some((reference, size)) if size == (header.width, header.height) => {
                Decision::Inter { reference }
            }
            _ => Decision::Skip,
        }
    }

    /// The frame of `header` was decoded as `picture`: the next P frame
    /// predicts from it.
    pub fn decoded(&mut self, header: &FrameHeader, picture: T) {
        self.last = Some((picture, (header.width, header.height)));
    }

    /// Forgets the reference (seek, damaged or failed frame).
    pub fn reset(&mut self) {
        self.last = None;
    }

    /// The picture the next P frame would predict from.
    pub fn reference(&self) -> Option<T> {
        self.last.map(|(picture, _)| picture)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::header_bytes;
    use super::*;

    fn header(intra: bool, width: u32) -> FrameHeader {
        FrameHeader::parse(&header_bytes(width, 360, intra, 0)).unwrap()
    }

    #[test]
    fn p_frames_predict_from_the_previous_frame() {
        let mut refs = References::new();
        assert_eq!(refs.decide(&header(false, 640)), Decision::Skip);
        assert_eq!(refs.decide(&header(true, 640)), Decision::Intra);
        refs.decoded(&header(true, 640), 1);
        assert_eq!(
            refs.decide(&header(false, 640)),
            Decision::Inter { reference: 1 }
        );
        refs.decoded(&header(false, 640), 2);
        assert_eq!(
            refs.decide(&header(false, 640)),
            Decision::Inter { reference: 2 }
        );
        assert_eq!(refs.reference(), Some(2));
    }

    #[test]
    fn after_a_reset_p_frames_wait_for_an_i_frame() {
        let mut refs = References::new();
        refs.decoded(&header(true, 640), 1);
        refs.reset();
        assert_eq!(refs.reference(), None);
        assert_eq!(refs.decide(&header(false, 640)), Decision::Skip);
        assert_eq!(refs.decide(&header(true, 640)), Decision::Intra);
        refs.decoded(&header(true, 640), 3);
        assert_eq!(
            refs.decide(&header(false, 640)),
            Decision::Inter { reference: 3 }
        );
    }

    #[test]
    fn a_p_frame_of_another_size_is_skipped() {
        let mut refs = References::new();
        refs.decoded(&header(true, 640), 1);
        assert_eq!(refs.decide(&header(false, 648)), Decision::Skip);
        assert_eq!(refs.decide(&header(true, 648)), Decision::Intra);
    }
}
