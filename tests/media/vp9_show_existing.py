#!/usr/bin/env python3
"""Makes a VP9 stream with show_existing_frame from an IVF one: after every
`period`-th frame, a one-byte frame showing reference slot 0 again (the frame
just decoded when it refreshed slot 0), as a packet of its own with the next
timestamp; later packets shift by one. Writes IVF.

    vp9_show_existing.py IN.ivf OUT.ivf [PERIOD]
"""
import sys

import ivf


def main():
    src, dst = sys.argv[1], sys.argv[2]
    period = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    header, frames = ivf.read(src)
    out = []
    # frame_marker 2, profile 0, show_existing_frame 1, frame_to_show_map_idx 0
    show_existing = bytes([0x88])
    for i, (_, frame) in enumerate(frames):
        out.append(frame)
        if i % period == period - 1:
            out.append(show_existing)
    ivf.write(dst, header, out)


main()
