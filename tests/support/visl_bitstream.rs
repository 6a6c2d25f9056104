//! The OUTPUT buffers visl kept for one run (tests/vm/guest/visl-bitstream.sh
//! saves them as `NAME.bitstream/bitstreamN`, N the order visl decoded
//! them in), and how two runs' buffers are compared byte for byte.

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

/// Every buffer of `ours` that differs from the same buffer of `theirs`
/// (size and first differing byte), and a difference in their number; empty
/// when the two runs sent the same bytes.
pub fn differences(name: &str, ours: &[Vec<u8>], theirs: &[Vec<u8>]) -> Vec<String> {
    let mut found = Vec::new();
    if ours.len() != theirs.len() {
        found.push(format!(
            "{name}: {} OUTPUT buffers, the oracle {}",
            ours.len(),
            theirs.len()
        ));
    }
    for (i, (a, b)) in ours.iter().zip(theirs).enumerate() {
        if a != b {
            let first = a.iter().zip(b).position(|(x, y)| x != y);
            found.push(format!(
                "{name}: OUTPUT buffer {i}: {} bytes vs the oracle's {}, first difference at {first:?}",
                a.len(),
                b.len()
            ));
        }
    }
    found
}
