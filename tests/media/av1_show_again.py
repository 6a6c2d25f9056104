#!/usr/bin/env python3
"""Makes an AV1 stream that shows a picture twice from an IVF one: every
temporal unit that only shows a frame again (a frame header OBU with
show_existing_frame, as libaom shows its hidden altref frames) is repeated
right after itself, with the next timestamp; later units shift by one. A
non-key frame may be shown again any number of times, so a decoder must
output the same picture twice. Writes IVF.

    av1_show_again.py IN.ivf OUT.ivf
"""
import sys

import ivf

OBU_TEMPORAL_DELIMITER = 2
OBU_FRAME_HEADER = 3


def leb128(data, pos):
    value = 0
    for i in range(8):
        byte = data[pos + i]
        value |= (byte & 0x7F) << (7 * i)
        if not byte & 0x80:
            return value, pos + i + 1
    raise ValueError("leb128 longer than 8 bytes")


def obus(unit):
    """(type, payload) of each OBU of a temporal unit (low-overhead format)."""
    pos = 0
    while pos < len(unit):
        header = unit[pos]
        kind = (header >> 3) & 0xF
        pos += 2 if header & 0x04 else 1
        if header & 0x02:
            size, pos = leb128(unit, pos)
        else:
            size = len(unit) - pos
        yield kind, unit[pos : pos + size]
        pos += size


def shows_again(unit):
    rest = [(k, p) for k, p in obus(unit) if k != OBU_TEMPORAL_DELIMITER]
    return len(rest) == 1 and rest[0][0] == OBU_FRAME_HEADER and rest[0][1][0] & 0x80


def main():
    src, dst = sys.argv[1], sys.argv[2]
    header, frames = ivf.read(src)
    out = []
    repeated = 0
    for _, unit in frames:
        out.append(unit)
        if shows_again(unit):
            out.append(unit)
            repeated += 1
    if not repeated:
        sys.exit(f"{src}: no temporal unit only shows a frame again")
    ivf.write(dst, header, out)


main()
