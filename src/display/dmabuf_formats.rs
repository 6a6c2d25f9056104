//! What the compositor advertised through `zwp_linux_dmabuf_v1`, as
//! (fourcc, modifier) pairs.
//!
//! Version 3 sends one `modifier` event per pair; version 4+ sends a format
//! table (an array of 16-byte entries) plus tranches of indices into it. Both
//! end up in [`AdvertisedFormats`], so the rest of the display does not care
//! which version the compositor speaks.

use std::collections::BTreeSet;

use drm_fourcc::DrmFourcc;

/// The (fourcc, modifier) pairs a compositor accepts, in no particular order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AdvertisedFormats {
    pairs: BTreeSet<(u32, u64)>,
}

impl AdvertisedFormats {
    pub fn new() -> Self {
        Self::default()
    }

    /// Records one v3 `modifier` event (or any single pair).
    pub fn add(&mut self, fourcc: u32, modifier: u64) {
        self.pairs.insert((fourcc, modifier));
    }

    /// Records a v3 `modifier` event as it arrives on the wire.
    pub fn add_v3_modifier(&mut self, fourcc: u32, modifier_hi: u32, modifier_lo: u32) {
        self.add(
            fourcc,
            (u64::from(modifier_hi) << 32) | u64::from(modifier_lo),
        );
    }

    /// Forgets a pair (the compositor refused to import it after all).
    pub fn remove(&mut self, fourcc: u32, modifier: u64) {
        self.pairs.remove(&(fourcc, modifier));
    }

    pub fn remove_all(&mut self, pairs: &[(u32, u64)]) {
        for &(fourcc, modifier) in pairs {
            self.remove(fourcc, modifier);
        }
    }

    pub fn contains(&self, fourcc: u32, modifier: u64) -> bool {
        self.pairs.contains(&(fourcc, modifier))
    }

    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    pub fn pairs(&self) -> impl Iterator<Item = (u32, u64)> + '_ {
        self.pairs.iter().copied()
    }

    /// Builds the set from v4+ feedback: every pair any tranche references.
    pub fn from_feedback(table: &FormatTable, tranches: &[Tranche]) -> Result<Self, FeedbackError> {
        let mut out = Self::new();
        for tranche in tranches {
            for &index in &tranche.indices {
                let (fourcc, modifier) =
                    table.get(index).ok_or(FeedbackError::IndexOutOfRange {
                        index,
                        table_len: table.len(),
                    })?;
                out.add(fourcc, modifier);
            }
        }
        Ok(out)
    }
}

/// The v4+ format table: what the compositor's `format_table` fd holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FormatTable {
    entries: Vec<(u32, u64)>,
}

/// One v4+ tranche: indices into the format table, in preference order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tranche {
    pub target_device: Option<u64>,
    pub scanout: bool,
    pub indices: Vec<u16>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FeedbackError {
    #[error("dmabuf format table is {0} bytes, not a whole number of 16-byte entries")]
    TableSize(usize),
    #[error("dmabuf tranche_formats array is {0} bytes, not a whole number of u16 indices")]
    IndicesSize(usize),
    #[error("dmabuf tranche references format table index {index}, table has {table_len} entries")]
    IndexOutOfRange { index: u16, table_len: usize },
}

impl FormatTable {
    /// Parses the table's bytes: per entry a u32 fourcc, 4 bytes of padding,
    /// a u64 modifier, all native-endian.
    pub fn parse(bytes: &[u8]) -> Result<Self, FeedbackError> {
        if bytes.len() % 16 != 0 {
            return Err(FeedbackError::TableSize(bytes.len()));
        }
        let entries = bytes
            .chunks_exact(16)
            .map(|e| {
                let mut fourcc = [0u8; 4];
                let mut modifier = [0u8; 8];
                fourcc.copy_from_slice(&e[0..4]);
                modifier.copy_from_slice(&e[8..16]);
                (u32::from_ne_bytes(fourcc), u64::from_ne_bytes(modifier))
            })
            .collect();
        Ok(Self { entries })
    }

    pub fn get(&self, index: u16) -> Option<(u32, u64)> {
        self.entries.get(usize::from(index)).copied()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// Parses a `tranche_formats` array (native-endian u16 indices).
pub fn parse_tranche_indices(bytes: &[u8]) -> Result<Vec<u16>, FeedbackError> {
    if bytes.len() % 2 != 0 {
        return Err(FeedbackError::IndicesSize(bytes.len()));
    }
    Ok(bytes
        .chunks_exact(2)
        .map(|c| u16::from_ne_bytes([c[0], c[1]]))
        .collect())
}

/// A `dev_t` as `major:minor` (Linux's encoding), for logs.
pub fn device_name(dev: u64) -> String {
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    format!("{major}:{minor}")
}

/// Reads a `dev_t` as the protocol sends it (native-endian bytes).
fn parse_dev(bytes: &[u8]) -> Option<u64> {
    <[u8; 8]>::try_from(bytes).ok().map(u64::from_ne_bytes)
}

/// One complete v4+ feedback batch (everything up to a `done` event).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Feedback {
    pub main_device: Option<u64>,
    pub table: FormatTable,
    /// In the compositor's order of preference.
    pub tranches: Vec<Tranche>,
}

impl Feedback {
    /// Every (fourcc, modifier) pair of every tranche.
    pub fn advertised(&self) -> Result<AdvertisedFormats, FeedbackError> {
        AdvertisedFormats::from_feedback(&self.table, &self.tranches)
    }
}

/// Collects v4+ feedback events. The format table persists across batches
/// (the compositor resends it only when it changes); tranches do not.
#[derive(Debug, Default)]
pub struct FeedbackBuilder {
    table: FormatTable,
    main_device: Option<u64>,
    tranches: Vec<Tranche>,
    current: Tranche,
}

impl FeedbackBuilder {
    pub fn format_table(&mut self, bytes: &[u8]) -> Result<(), FeedbackError> {
        self.table = FormatTable::parse(bytes)?;
        Ok(())
    }

    pub fn main_device(&mut self, dev: &[u8]) {
        self.main_device = parse_dev(dev);
    }

    pub fn tranche_target_device(&mut self, dev: &[u8]) {
        self.current.target_device = parse_dev(dev);
    }

    /// Indices may come in several events for one tranche: they add up.
    pub fn tranche_formats(&mut self, indices: &[u8]) -> Result<(), FeedbackError> {
        self.current.indices.extend(parse_tranche_indices(indices)?);
        Ok(())
    }

    pub fn tranche_flags(&mut self, scanout: bool) {
        self.current.scanout = scanout;
    }

    pub fn tranche_done(&mut self) {
        self.tranches.push(std::mem::take(&mut self.current));
    }

    /// Ends the batch; checks every index against the table.
    pub fn done(&mut self) -> Result<Feedback, FeedbackError> {
        let feedback = Feedback {
            main_device: self.main_device,
            table: self.table.clone(),
            tranches: std::mem::take(&mut self.tranches),
        };
        self.current = Tranche::default();
        feedback.advertised()?;
        Ok(feedback)
    }
}

/// A buffer layout the compositor accepts for a copied frame (chosen by
/// `negotiation::copy_target`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DmabufChoice {
    pub fourcc: DrmFourcc,
    pub modifier: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fourcc::{MOD_INVALID, MOD_LINEAR};

    const NV12: u32 = DrmFourcc::Nv12 as u32;
    const YUV420: u32 = DrmFourcc::Yuv420 as u32;
    const P010: u32 = DrmFourcc::P010 as u32;
    // AMD-style tiled modifier: something we cannot write with the CPU.
    const TILED: u64 = 0x0200_0000_0000_0001;

    use crate::display::testutil::format_table_bytes as table_bytes;

    #[test]
    fn device_numbers_read_as_major_minor() {
        // /dev/dri/renderD128 is 226:128; a large minor uses the high bits.
        assert_eq!(device_name(0xe280), "226:128");
        assert_eq!(
            device_name((0x12345 << 12 & !0xfffff) | 0x45 | (7 << 8)),
            "7:74565"
        );
    }

    #[test]
    fn fourcc_codes_match_drm_fourcc_h() {
        // drm_fourcc.h: fourcc_code('N','V','1','2') etc., little-endian packing.
        assert_eq!(NV12, u32::from_le_bytes(*b"NV12"));
        assert_eq!(YUV420, u32::from_le_bytes(*b"YU12"));
        assert_eq!(P010, u32::from_le_bytes(*b"P010"));
    }

    #[test]
    fn v3_modifier_events_join_hi_and_lo() {
        let mut a = AdvertisedFormats::new();
        a.add_v3_modifier(NV12, 0x00ff_ffff, 0xffff_ffff);
        a.add_v3_modifier(NV12, 0, 0);
        assert!(a.contains(NV12, MOD_INVALID));
        assert!(a.contains(NV12, MOD_LINEAR));
        assert_eq!(a.len(), 2);
    }

    #[test]
    fn v4_table_and_tranches_become_pairs() {
        let bytes = table_bytes(&[(NV12, TILED), (NV12, MOD_LINEAR), (YUV420, MOD_INVALID)]);
        let table = FormatTable::parse(&bytes).unwrap();
        assert_eq!(table.len(), 3);
        let idx = parse_tranche_indices(&[1, 0, 2, 0]).unwrap();
        assert_eq!(idx, vec![1, 2]);
        let tranches = [
            Tranche {
                target_device: Some(0xe280),
                scanout: true,
                indices: vec![0],
            },
            Tranche {
                target_device: Some(0xe280),
                scanout: false,
                indices: idx,
            },
        ];
        let a = AdvertisedFormats::from_feedback(&table, &tranches).unwrap();
        assert_eq!(a.pairs().collect::<Vec<_>>(), {
            let mut v = vec![(NV12, TILED), (NV12, MOD_LINEAR), (YUV420, MOD_INVALID)];
            v.sort();
            v
        });
    }

    #[test]
    fn feedback_events_build_tranches_in_order() {
        let dev = 0xe280u64.to_ne_bytes();
        let mut b = FeedbackBuilder::default();
        b.format_table(&table_bytes(&[
            (NV12, TILED),
            (NV12, MOD_LINEAR),
            (P010, MOD_LINEAR),
        ]))
        .unwrap();
        b.main_device(&dev);
        b.tranche_target_device(&dev);
        b.tranche_flags(true);
        b.tranche_formats(&[0, 0]).unwrap();
        b.tranche_done();
        b.tranche_target_device(&dev);
        b.tranche_formats(&[1, 0]).unwrap();
        b.tranche_formats(&[2, 0]).unwrap();
        b.tranche_done();
        let fb = b.done().unwrap();
        assert_eq!(fb.main_device, Some(0xe280));
        assert_eq!(fb.tranches.len(), 2);
        assert!(fb.tranches[0].scanout && !fb.tranches[1].scanout);
        assert_eq!(fb.tranches[1].indices, vec![1, 2]);
        let a = fb.advertised().unwrap();
        assert!(a.contains(P010, MOD_LINEAR) && a.contains(NV12, TILED));

        // A second batch without a table reuses the first table.
        b.tranche_formats(&[2, 0]).unwrap();
        b.tranche_done();
        let fb2 = b.done().unwrap();
        assert_eq!(
            fb2.advertised().unwrap().pairs().collect::<Vec<_>>(),
            vec![(P010, MOD_LINEAR)]
        );
    }

    #[test]
    fn feedback_with_a_bad_index_is_refused_at_done() {
        let mut b = FeedbackBuilder::default();
        b.format_table(&table_bytes(&[(NV12, MOD_LINEAR)])).unwrap();
        b.tranche_formats(&[9, 0]).unwrap();
        b.tranche_done();
        assert!(b.done().is_err());
        // The builder is usable again afterwards.
        b.tranche_formats(&[0, 0]).unwrap();
        b.tranche_done();
        assert!(b.done().is_ok());
    }

    #[test]
    fn malformed_feedback_is_an_error_not_a_panic() {
        assert_eq!(
            FormatTable::parse(&[0; 17]),
            Err(FeedbackError::TableSize(17))
        );
        assert_eq!(
            parse_tranche_indices(&[1, 2, 3]),
            Err(FeedbackError::IndicesSize(3))
        );
        let table = FormatTable::parse(&table_bytes(&[(NV12, MOD_LINEAR)])).unwrap();
        let t = [Tranche {
            indices: vec![5],
            ..Default::default()
        }];
        assert_eq!(
            AdvertisedFormats::from_feedback(&table, &t),
            Err(FeedbackError::IndexOutOfRange {
                index: 5,
                table_len: 1
            })
        );
    }
}
