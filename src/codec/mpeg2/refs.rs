//! MPEG-2 references and display order (6.1.1.11, 7.6): an I or P picture
//! is a reference; a P picture predicts from the last reference, a B
//! picture from the last two. B pictures are shown as soon as they are
//! decoded; a reference is shown when the next reference is decoded (or at
//! the end of the stream).

use super::headers::{picture_coding_type, GroupOfPictures};

/// The references a picture is decoded with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision<T> {
    Decode {
        forward: Option<T>,
        backward: Option<T>,
    },
    /// A reference is missing (after a seek or damage): nothing to decode
    /// the picture from.
    Skip(&'static str),
}

#[derive(Debug, Clone)]
pub struct References<T> {
    /// The older of the two references (a B picture's forward one).
    past: Option<T>,
    /// The newest reference.
    future: Option<T>,
    /// The newest reference, until it is shown.
    waiting: Option<T>,
}

impl<T> Default for References<T> {
    fn default() -> Self {
        Self {
            past: None,
            future: None,
            waiting: None,
        }
    }
}

impl<T: Copy + PartialEq> References<T> {
    pub fn new() -> Self {
        Self::default()
    }

    /// The references of a picture of `coding_type` in the group `gop`. The
    /// leading B pictures of a closed group predict backwards only.
    pub fn decide(&self, coding_type: u8, gop: Option<&GroupOfPictures>) -> Decision<T> {
        match coding_type {
            picture_coding_type::I => Decision::Decode {
                forward: None,
                backward: None,
            },
            picture_coding_type::P => match self.future {
                Some(reference) => Decision::Decode {
                    forward: Some(reference),
                    backward: None,
                },
                None => Decision::Skip("P picture without its reference"),
            },
            _ => match (self.past, self.future) {
                (Some(past), Some(future)) => Decision::Decode {
                    forward: Some(past),
                    backward: Some(future),
                },
                (None, Some(future)) if gop.is_some_and(|g| g.closed_gop) => Decision::Decode {
                    forward: None,
                    backward: Some(future),
                },
                _ => Decision::Skip("B picture without both references"),
            },
        }
    }

    /// A picture was decoded into `picture`; returns the pictures now due
    /// for output, in display order.
    pub fn decoded(&mut self, is_reference: bool, picture: T) -> Vec<T> {
        if is_reference {
            self.past = self.future.replace(picture);
            self.waiting.replace(picture).into_iter().collect()
        } else {
            vec![picture]
        }
    }

    /// The reference still waiting for output (end of stream).
    pub fn flush(&mut self) -> Option<T> {
        self.waiting.take()
    }

    /// The pictures later pictures may predict from or that wait for output.
    pub fn held(&self) -> Vec<T> {
        let mut held: Vec<T> = Vec::with_capacity(3);
        for picture in [self.past, self.future, self.waiting].into_iter().flatten() {
            if !held.contains(&picture) {
                held.push(picture);
            }
        }
        held
    }

    pub fn reset(&mut self) {
        *self = Self::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use picture_coding_type::{B, I, P};

    /// Decodes `types` in order; returns what each picture was decoded with
    /// and the display order.
    fn run(types: &[u8], closed: bool) -> (Vec<Decision<usize>>, Vec<usize>) {
        let gop = GroupOfPictures {
            time_code: 0,
            closed_gop: closed,
            broken_link: false,
        };
        let mut refs = References::new();
        let mut decisions = Vec::new();
        let mut shown = Vec::new();
        for (i, &t) in types.iter().enumerate() {
            let d = refs.decide(t, Some(&gop));
            decisions.push(d);
            if matches!(d, Decision::Decode { .. }) {
                shown.extend(refs.decoded(t != B, i));
            }
        }
        shown.extend(refs.flush());
        (decisions, shown)
    }

    #[test]
    fn b_pictures_between_their_references() {
        // Decoding order I0 P3 B1 B2 P6 B4 B5: display I0 B1 B2 P3 B4 B5 P6.
        let (decisions, shown) = run(&[I, P, B, B, P, B, B], false);
        assert_eq!(shown, vec![0, 2, 3, 1, 5, 6, 4]);
        let both = |f, b| Decision::Decode {
            forward: Some(f),
            backward: Some(b),
        };
        assert_eq!(decisions[2], both(0, 1));
        assert_eq!(decisions[5], both(1, 4));
        assert_eq!(
            decisions[4],
            Decision::Decode {
                forward: Some(1),
                backward: None
            }
        );
    }

    #[test]
    fn missing_references_skip_or_predict_backwards() {
        // After a seek into an open group: the leading B pictures go.
        let (decisions, shown) = run(&[I, B, B, P], false);
        assert!(matches!(decisions[1], Decision::Skip(_)));
        assert_eq!(shown, vec![0, 3]);
        // A closed group's leading B pictures use the I picture only.
        let (decisions, shown) = run(&[I, B, P], true);
        assert_eq!(
            decisions[1],
            Decision::Decode {
                forward: None,
                backward: Some(0)
            }
        );
        assert_eq!(shown, vec![1, 0, 2]);
        // A P picture with nothing before it.
        let (decisions, _) = run(&[P, I], false);
        assert!(matches!(decisions[0], Decision::Skip(_)));
    }
}
