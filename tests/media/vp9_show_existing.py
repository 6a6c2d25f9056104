#!/usr/bin/env python3
"""Makes a VP9 stream with show_existing_frame from an IVF one: after every
`period`-th frame, a one-byte frame showing reference slot 0 again (the frame
just decoded when it refreshed slot 0), as a packet of its own with the next
timestamp; later packets shift by one. Writes IVF.

    vp9_show_existing.py IN.ivf OUT.ivf [PERIOD]
"""
import struct
import sys


def frames(data):
    pos = 32
    while pos + 12 <= len(data):
        size, pts = struct.unpack_from("<IQ", data, pos)
        yield pts, data[pos + 12 : pos + 12 + size]
        pos += 12 + size


def main():
    src, dst = sys.argv[1], sys.argv[2]
    period = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    data = open(src, "rb").read()
    header = bytearray(data[:32])
    out = []
    # frame_marker 2, profile 0, show_existing_frame 1, frame_to_show_map_idx 0
    show_existing = bytes([0x88])
    for i, (_, frame) in enumerate(frames(data)):
        out.append(frame)
        if i % period == period - 1:
            out.append(show_existing)
    struct.pack_into("<I", header, 24, len(out))
    with open(dst, "wb") as f:
        f.write(header)
        for pts, frame in enumerate(out):
            f.write(struct.pack("<IQ", len(frame), pts))
            f.write(frame)


main()
