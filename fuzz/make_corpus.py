#!/usr/bin/env python3
"""Seeds the H.264 and HEVC fuzz corpora from the Annex-B streams the
header tests write (target/h264-tests/headers/*.h264 and
target/h264-tests/hevc-headers/*.hevc; run `cargo test --test host h264_headers::`
and `cargo test --test host hevc_headers::` first): the first access units of each
clip, every NAL cut to its first bytes (headers live there; slice data would
only slow the fuzzer). The HEVC parameter set target gets each clip's SPS,
PPS and first slice RBSPs back to back, NAL headers removed. And the FWHT
corpus from vicodec's streams (target/fwht-media/*.fwht, written by
`cargo test --test guest_fwht`), when there: the first frames of each, their
payloads cut to 64 bytes and their headers saying so. The MPEG-2 corpora
from the streams `cargo test --test host mpeg2_headers::` writes, when there. The
VP8 corpus from the VP8 clips of tests/media/generate.sh (target/test-media),
when there: the first frames of each, whole, each after its 2-byte length.
The VP9 corpus from the VP9 clips (target/test-media/vp9*.webm): their first
packets, as FFmpeg demuxes them, cut to 400 bytes, each with its 16-bit
length. And the AV1 corpus from the OBUs `cargo test --test host av1_headers::`
writes."""
import pathlib
import re
import struct
import subprocess
import sys

root = pathlib.Path(__file__).resolve().parent

fwht = sorted((root.parent / "target" / "fwht-media").glob("*.fwht"))
for stream in fwht:
    out = root / "corpus" / "fwht_frames"
    out.mkdir(parents=True, exist_ok=True)
    data, offset, seed = stream.read_bytes(), 0, b""
    for k in range(6):
        if offset + 44 > len(data):
            break
        (size,) = struct.unpack(">I", data[offset + 40 : offset + 44])
        cut = min(size, 64)
        seed += data[offset : offset + 40] + struct.pack(">I", cut) + data[offset + 44 : offset + 44 + cut]
        (out / f"{stream.stem}-{k}").write_bytes(seed)
        offset += 44 + size
# MPEG-2 (target/h264-tests/mpeg2-headers/*.mpeg2video, written by `cargo
# test --test host mpeg2_headers::`), when there: the first pictures of each
# clip, slices cut to 16 bytes.
mpeg2 = sorted((root.parent / "target" / "h264-tests" / "mpeg2-headers").glob("*.mpeg2video"))
for stream in mpeg2:
    units = [u for u in re.split(b"\x00\x00\x01", stream.read_bytes()) if u]
    pictures = [i for i, u in enumerate(units) if u[0] == 0]
    for target in ("mpeg2_headers", "mpeg2_pictures"):
        out = root / "corpus" / target
        out.mkdir(parents=True, exist_ok=True)
        for k, start in enumerate(pictures[:5]):
            end = pictures[k + 1] if k + 1 < len(pictures) else len(units)
            seed = b"".join(
                b"\x00\x00\x01" + (u[:16] if 1 <= u[0] <= 0xAF else u) for u in units[:end]
            )
            (out / f"{stream.stem}-{k}").write_bytes(seed)
for clip in sorted((root.parent / "target" / "test-media").glob("vp8*.webm")):
    out = root / "corpus" / "vp8_frames"
    out.mkdir(parents=True, exist_ok=True)
    ivf = subprocess.run(
        ["ffmpeg", "-nostdin", "-v", "error", "-i", str(clip), "-c", "copy", "-f", "ivf", "-"],
        check=True, capture_output=True,
    ).stdout
    (offset,) = struct.unpack("<H", ivf[6:8])
    seed = b""
    for k in range(4):
        if offset + 12 > len(ivf):
            break
        (size,) = struct.unpack("<I", ivf[offset : offset + 4])
        frame = ivf[offset + 12 : offset + 12 + size]
        seed += struct.pack("<H", min(size, 0xFFFF)) + frame[:0xFFFF]
        (out / f"{clip.stem}-{k}").write_bytes(seed)
        offset += 12 + size
streams = sorted((root.parent / "target" / "h264-tests" / "headers").glob("*.h264"))
if not streams:
    sys.exit("no Annex-B streams: run `cargo test --test host h264_headers::` first")
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

def unescape(nal):
    return re.sub(b"\x00\x00\x03", b"\x00\x00", nal)


hevc = sorted((root.parent / "target" / "h264-tests" / "hevc-headers").glob("*.hevc"))
if not hevc:
    sys.exit("no HEVC Annex-B streams: run `cargo test --test host hevc_headers::` first")
for stream in hevc:
    nals = [n.rstrip(b"\x00") for n in re.split(b"\x00\x00\x01", stream.read_bytes()) if n]
    nals = [n for n in nals if len(n) > 2]
    kind = lambda n: (n[0] >> 1) & 0x3F
    aud = [i for i, n in enumerate(nals) if kind(n) == 35]
    out = root / "corpus" / "hevc_headers"
    out.mkdir(parents=True, exist_ok=True)
    for k, start in enumerate(aud[:6]):
        end = aud[k + 1] if k + 1 < len(aud) else len(nals)
        seed = b"".join(b"\x00\x00\x00\x01" + n[:64] for n in nals[:end])
        (out / f"{stream.stem}-{k}").write_bytes(seed)
    out = root / "corpus" / "hevc_parameter_sets"
    out.mkdir(parents=True, exist_ok=True)
    sps = [n for n in nals if kind(n) == 33]
    pps = [n for n in nals if kind(n) == 34]
    slices = [n for n in nals if kind(n) <= 21 and kind(n) not in range(10, 16)]
    if sps and pps and slices:
        seed = b"".join(unescape(n)[2:][:64] for n in (sps[0], pps[0], slices[1 if len(slices) > 1 else 0]))
        (out / stream.stem).write_bytes(seed)
for clip in sorted((root.parent / "target" / "test-media").glob("vp9*.webm")):
    run = subprocess.run(
        ["ffmpeg", "-nostdin", "-v", "error", "-i", str(clip), "-map", "0:v:0", "-c", "copy",
         "-bsf:v", "trace_headers", "-f", "data", "-"],
        capture_output=True, check=True)
    sizes = [int(line.split("Packet: ")[1].split()[0])
             for line in run.stderr.decode().splitlines() if "Packet: " in line]
    packets, pos = [], 0
    for size in sizes:
        packets.append(run.stdout[pos:pos + size])
        pos += size
    out = root / "corpus" / "vp9_frames"
    out.mkdir(parents=True, exist_ok=True)
    for n in (1, 4):
        seed = b"".join(struct.pack("<H", min(len(p), 400)) + p[:400] for p in packets[:n])
        (out / f"{clip.stem}-{n}").write_bytes(seed)


def leb128(n):
    out = b""
    while True:
        byte, n = n & 0x7F, n >> 7
        out += bytes([byte | (0x80 if n else 0)])
        if not n:
            return out


def av1_obus(data):
    """(header bytes, payload) of every OBU (all have size fields here)."""
    offset = 0
    while offset < len(data):
        head = 1 + ((data[offset] >> 2) & 1)
        size, shift, pos = 0, 0, offset + head
        while True:
            byte = data[pos]
            pos += 1
            size |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                break
        yield data[offset : offset + head], data[pos : pos + size]
        offset = pos + size


# AV1: the OBUs the header test wrote (target/h264-tests/av1-headers/*.data;
# run `cargo test --test host av1_headers::` first), the first frames of each, each
# OBU's payload cut to 64 bytes (the tile data after the headers) and its
# size field saying so.
av1 = sorted((root.parent / "target" / "h264-tests" / "av1-headers").glob("*.data"))
if not av1:
    sys.exit("no AV1 streams: run `cargo test --test host av1_headers::` first")
out = root / "corpus" / "av1_obus"
out.mkdir(parents=True, exist_ok=True)
for stream in av1:
    seed = b""
    for k, (head, payload) in enumerate(av1_obus(stream.read_bytes())):
        if k >= 12:
            break
        payload = payload[:64]
        seed += head + leb128(len(payload)) + payload
        (out / f"{stream.stem}-{k}").write_bytes(seed)
print("corpora written under", root / "corpus")
