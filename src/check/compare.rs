//! Comparing a pair of pictures, one line per frame, and the tally of a
//! run. Pure.

use std::fmt;

use super::picture::Picture;
use super::psnr::{format_db, psnr};

/// How one frame of the two sides compares.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    Equal,
    /// Different pixels: the PSNR of each plane (Y, U, V), the V4L2 side's
    /// against the software side's.
    Differ {
        psnr: Vec<f64>,
    },
    /// Not the same size or layout.
    Shape {
        v4l2: String,
        software: String,
    },
    /// A side's picture could not be read in full.
    Unreadable,
    /// The other side has no frame with this index.
    OnlyV4l2,
    OnlySoftware,
}

impl Verdict {
    pub fn is_equal(&self) -> bool {
        *self == Self::Equal
    }
}

/// Compares the `index`-th pictures of both sides (either may be missing).
pub fn compare(v4l2: Option<&Picture>, software: Option<&Picture>) -> Verdict {
    let (a, b) = match (v4l2, software) {
        (Some(a), Some(b)) => (a, b),
        (Some(_), None) => return Verdict::OnlyV4l2,
        (None, _) => return Verdict::OnlySoftware,
    };
    if !a.same_shape(b) {
        let shape = |p: &Picture| format!("{}x{} {}", p.width, p.height, p.format);
        return Verdict::Shape {
            v4l2: shape(a),
            software: shape(b),
        };
    }
    if !a.is_complete() || !b.is_complete() {
        return Verdict::Unreadable;
    }
    if a.data == b.data {
        return Verdict::Equal;
    }
    let psnr = (0..a.format.plane_count())
        .map(|p| psnr(b.plane(p), a.plane(p), a.samples()))
        .collect();
    Verdict::Differ { psnr }
}

/// One frame's line of the report.
pub struct FrameLine<'a> {
    pub index: u64,
    pub pts: Option<i64>,
    pub verdict: &'a Verdict,
}

const PLANE_NAMES: [&str; 3] = ["y", "u", "v"];

impl fmt::Display for FrameLine<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "frame={}", self.index)?;
        match self.pts {
            Some(pts) => write!(f, " pts={pts}")?,
            None => write!(f, " pts=-")?,
        }
        match self.verdict {
            Verdict::Equal => write!(f, " equal"),
            Verdict::Differ { psnr } => {
                write!(f, " differ")?;
                for (name, db) in PLANE_NAMES.iter().zip(psnr) {
                    write!(f, " psnr_{name}={}", format_db(*db))?;
                }
                Ok(())
            }
            Verdict::Shape { v4l2, software } => {
                write!(f, " differ shape v4l2={v4l2:?} software={software:?}")
            }
            Verdict::Unreadable => write!(f, " differ unreadable"),
            Verdict::OnlyV4l2 => write!(f, " differ only_v4l2"),
            Verdict::OnlySoftware => write!(f, " differ only_software"),
        }
    }
}

/// What the run found, frame by frame.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub v4l2_frames: u64,
    pub software_frames: u64,
    /// Frames both sides gave, compared.
    pub compared: u64,
    /// Of them, those not equal.
    pub differing: u64,
    /// The first frame not equal, a missing frame included.
    pub first_differing: Option<u64>,
}

impl Tally {
    /// Counts frame `index`'s verdict.
    pub fn add(&mut self, index: u64, verdict: &Verdict) {
        match verdict {
            Verdict::OnlyV4l2 => self.v4l2_frames += 1,
            Verdict::OnlySoftware => self.software_frames += 1,
            _ => {
                self.v4l2_frames += 1;
                self.software_frames += 1;
                self.compared += 1;
                if !verdict.is_equal() {
                    self.differing += 1;
                }
            }
        }
        if !verdict.is_equal() && self.first_differing.is_none() {
            self.first_differing = Some(index);
        }
    }

    pub fn counts_differ(&self) -> bool {
        self.v4l2_frames != self.software_frames
    }

    /// Every frame equal and as many on both sides (and at least one).
    pub fn all_equal(&self) -> bool {
        self.first_differing.is_none() && self.compared > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::picture::test_picture;
    use crate::frame::PixelFormat;

    fn yuv(data: Vec<u8>) -> Picture {
        test_picture(PixelFormat::Yuv420, 4, 2, data)
    }

    #[test]
    fn equal_pictures_are_equal() {
        let a = yuv((0..12).collect());
        assert_eq!(compare(Some(&a), Some(&a.clone())), Verdict::Equal);
        let line = FrameLine {
            index: 3,
            pts: Some(3),
            verdict: &Verdict::Equal,
        };
        assert_eq!(line.to_string(), "frame=3 pts=3 equal");
    }

    #[test]
    fn a_different_plane_has_a_finite_psnr_and_the_others_inf() {
        let a = yuv(vec![100; 12]);
        let mut b = a.clone();
        b.data[9] = 101; // the U plane
        let verdict = compare(Some(&a), Some(&b));
        let Verdict::Differ { psnr } = &verdict else {
            panic!("{verdict:?}");
        };
        assert_eq!(psnr.len(), 3);
        assert!(psnr[0].is_infinite() && psnr[2].is_infinite());
        assert!(psnr[1].is_finite() && psnr[1] > 40.0);
        let line = FrameLine {
            index: 0,
            pts: None,
            verdict: &verdict,
        };
        assert_eq!(
            line.to_string(),
            "frame=0 pts=- differ psnr_y=inf psnr_u=51.14 psnr_v=inf"
        );
    }

    #[test]
    fn shapes_and_short_pictures_differ() {
        let a = yuv(vec![0; 12]);
        let b = test_picture(PixelFormat::Yuv420, 2, 2, vec![0; 6]);
        assert!(matches!(compare(Some(&a), Some(&b)), Verdict::Shape { .. }));
        let short = yuv(vec![0; 11]);
        assert_eq!(compare(Some(&a), Some(&short)), Verdict::Unreadable);
        assert_eq!(compare(Some(&a), None), Verdict::OnlyV4l2);
        assert_eq!(compare(None, Some(&a)), Verdict::OnlySoftware);
    }

    #[test]
    fn the_tally_keeps_the_first_difference_and_the_counts() {
        let mut tally = Tally::default();
        tally.add(0, &Verdict::Equal);
        assert!(tally.all_equal());
        tally.add(1, &Verdict::Differ { psnr: vec![30.0] });
        tally.add(2, &Verdict::Unreadable);
        assert_eq!(
            (tally.compared, tally.differing, tally.first_differing),
            (3, 2, Some(1))
        );
        assert!(!tally.all_equal() && !tally.counts_differ());
        let mut short = Tally::default();
        short.add(0, &Verdict::Equal);
        short.add(1, &Verdict::OnlySoftware);
        assert_eq!((short.v4l2_frames, short.software_frames), (1, 2));
        assert_eq!((short.compared, short.differing), (1, 0));
        assert_eq!(short.first_differing, Some(1));
        assert!(short.counts_differ() && !short.all_equal());
        assert!(!Tally::default().all_equal());
    }
}

/// Which pictures of the two sides make a frame of the report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// The two next pictures, compared.
    Pair,
    /// Only the V4L2 side's next picture: the software side has none at
    /// its time (or has ended).
    V4l2Only,
    SoftwareOnly,
}

/// Pairs the pictures of the two sides in output order. A side that drops
/// a picture (a driver reporting a decode error) would shift every later
/// pair: while the two sides' timestamps agree, a picture whose timestamp
/// the other side's next picture has passed is reported alone, and the
/// rest stay paired. Sides whose timestamps disagree from the start (an
/// elementary stream with no timing, each decoder making up its own) are
/// paired by order alone.
#[derive(Debug, Default)]
pub struct Aligner {
    /// Whether the timestamps told the pairs apart so far: decided at the
    /// first pair.
    by_pts: Option<bool>,
}

impl Aligner {
    /// What to take next, given the pts of each side's next picture (none
    /// when the side has ended).
    pub fn step(&mut self, v4l2: Option<i64>, software: Option<i64>) -> Step {
        match (v4l2, software) {
            (Some(a), Some(b)) => {
                let by_pts = *self.by_pts.get_or_insert(a == b);
                if !by_pts || a == b {
                    Step::Pair
                } else if a < b {
                    Step::V4l2Only
                } else {
                    Step::SoftwareOnly
                }
            }
            (Some(_), None) => Step::V4l2Only,
            _ => Step::SoftwareOnly,
        }
    }
}

#[cfg(test)]
mod aligner_tests {
    use super::*;

    /// The steps for two sides' pts sequences.
    fn steps(v4l2: &[i64], software: &[i64]) -> Vec<Step> {
        let (mut a, mut b) = (v4l2.iter().peekable(), software.iter().peekable());
        let mut aligner = Aligner::default();
        let mut out = Vec::new();
        while a.peek().is_some() || b.peek().is_some() {
            let step = aligner.step(a.peek().copied().copied(), b.peek().copied().copied());
            match step {
                Step::Pair => {
                    a.next();
                    b.next();
                }
                Step::V4l2Only => {
                    a.next();
                }
                Step::SoftwareOnly => {
                    b.next();
                }
            }
            out.push(step);
        }
        out
    }

    #[test]
    fn a_picture_one_side_dropped_is_reported_alone() {
        use Step::*;
        assert_eq!(
            steps(&[0, 1, 3], &[0, 1, 2, 3]),
            [Pair, Pair, SoftwareOnly, Pair]
        );
        assert_eq!(
            steps(&[0, 1, 2, 3], &[0, 2, 3]),
            [Pair, V4l2Only, Pair, Pair]
        );
        assert_eq!(steps(&[0, 1], &[0, 1, 2]), [Pair, Pair, SoftwareOnly]);
        assert_eq!(steps(&[0, 1, 2], &[0]), [Pair, V4l2Only, V4l2Only]);
    }

    #[test]
    fn sides_whose_timing_disagrees_are_paired_by_order() {
        use Step::*;
        assert_eq!(steps(&[0, 1, 2], &[5, 6, 7]), [Pair, Pair, Pair]);
        assert_eq!(steps(&[0, 1], &[5, 6, 7]), [Pair, Pair, SoftwareOnly]);
    }
}
