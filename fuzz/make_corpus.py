#!/usr/bin/env python3
"""Seeds the H.264 fuzz corpora from the Annex-B streams the H.264 tests
write (target/h264-tests/*/*.h264; run `cargo test --test h264_headers`
first): the first access units of each clip, every NAL cut to its first
bytes (headers live there; slice data would only slow the fuzzer)."""
import pathlib
import re
import sys

root = pathlib.Path(__file__).resolve().parent
streams = sorted((root.parent / "target" / "h264-tests" / "headers").glob("*.h264"))
if not streams:
    sys.exit("no Annex-B streams: run `cargo test --test h264_headers` first")
for target in ("h264_headers", "h264_access_units"):
    out = root / "corpus" / target
    out.mkdir(parents=True, exist_ok=True)
    for stream in streams:
        nals = [n for n in re.split(b"\x00\x00\x01", stream.read_bytes()) if n]
        aud = [i for i, n in enumerate(nals) if n[0] & 0x1F == 9]
        for k, start in enumerate(aud[:6]):
            end = aud[k + 1] if k + 1 < len(aud) else len(nals)
            # Parameter sets and the first k + 1 access units.
            seed = b"".join(b"\x00\x00\x00\x01" + n.rstrip(b"\x00")[:48] for n in nals[:end])
            (out / f"{stream.stem}-{k}").write_bytes(seed)
print("corpora written under", root / "corpus")
