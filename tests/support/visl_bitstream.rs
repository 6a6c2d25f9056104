//! The OUTPUT buffers visl kept for one run (tests/vm/guest/visl-bitstream.sh
//! saves them as `NAME.bitstream/bitstreamN`, N the order visl decoded
//! them in), their digests (size and sha256, as the stored GStreamer
//! oracles keep them: `NAME.buffers`), and how a run's buffers are compared
//! with an oracle's digests.

use std::path::Path;

/// The buffers of one dump directory, in order; an error unless every
/// number from 0 on is there once.
pub fn read_dump(dir: &Path) -> Result<Vec<Vec<u8>>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut numbered = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        let n: u32 = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_prefix("bitstream"))
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| format!("unexpected dump {}", path.display()))?;
        let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        numbered.push((n, bytes));
    }
    numbered.sort_by_key(|(n, _)| *n);
    if let Some(gap) = numbered
        .iter()
        .enumerate()
        .find(|(i, (n, _))| *n as usize != *i)
    {
        return Err(format!(
            "{}: OUTPUT buffer {} missing or dumped twice ({} dumps)",
            dir.display(),
            gap.0,
            numbered.len()
        ));
    }
    Ok(numbered.into_iter().map(|(_, bytes)| bytes).collect())
}

/// sha256 of some bytes, in hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// What a stored oracle keeps of one OUTPUT buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BufferDigest {
    pub size: usize,
    /// In hex.
    pub sha256: String,
}

impl BufferDigest {
    pub fn of(bytes: &[u8]) -> Self {
        Self {
            size: bytes.len(),
            sha256: sha256_hex(bytes),
        }
    }
}

/// A `NAME.buffers` file: `header` as a comment, then one line per buffer,
/// `INDEX SIZE SHA256`.
pub fn render_digests(header: &str, digests: &[BufferDigest]) -> String {
    let mut text = format!("# {header}\n# index size sha256\n");
    for (i, d) in digests.iter().enumerate() {
        text.push_str(&format!("{i} {} {}\n", d.size, d.sha256));
    }
    text
}

/// The digests of a `NAME.buffers` file, in order; an error unless the
/// lines are numbered from 0 on without a gap.
pub fn parse_digests(text: &str) -> Result<Vec<BufferDigest>, String> {
    let mut digests = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let bad = || format!("line {}: not INDEX SIZE SHA256: {line}", n + 1);
        let columns: Vec<&str> = line.split_whitespace().collect();
        let [index, size, sha256] = columns[..] else {
            return Err(bad());
        };
        if index.parse::<usize>().ok() != Some(digests.len()) {
            return Err(format!(
                "line {}: buffer {index} where buffer {} belongs",
                n + 1,
                digests.len()
            ));
        }
        let size = size.parse().map_err(|_| bad())?;
        if sha256.len() != 64 || !sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(bad());
        }
        digests.push(BufferDigest {
            size,
            sha256: sha256.to_ascii_lowercase(),
        });
    }
    Ok(digests)
}

/// Every buffer of `ours` whose size or sha256 differs from the oracle's
/// digest of the same buffer (`theirs`: GStreamer's, stored), and a
/// difference in their number; empty when the run sent the bytes GStreamer
/// sent.
pub fn differences(name: &str, ours: &[Vec<u8>], theirs: &[BufferDigest]) -> Vec<String> {
    let mut found = Vec::new();
    if ours.len() != theirs.len() {
        found.push(format!(
            "{name}: {} OUTPUT buffers, the oracle {}",
            ours.len(),
            theirs.len()
        ));
    }
    for (i, (a, b)) in ours.iter().zip(theirs).enumerate() {
        let a = BufferDigest::of(a);
        if a != *b {
            let how = if a.size == b.size {
                "the same size, other bytes"
            } else {
                "other sizes"
            };
            found.push(format!(
                "{name}: OUTPUT buffer {i}: {} bytes vs the oracle's {} ({how}: sha256 {} vs {})",
                a.size,
                b.size,
                &a.sha256[..16],
                &b.sha256[..b.sha256.len().min(16)]
            ));
        }
    }
    found
}
