#!/usr/bin/env python3
"""Writes an MPEG-2 elementary stream of field pictures (no Debian encoder
makes them: FFmpeg's codes frame pictures only, mjpegtools' mpeg2enc
crashes in its per-field mode): 320x256, interlaced, in field pairs
I/P P/P B/B B/B P/P B/B B/B, every macroblock of an I field intra with flat
DC, every macroblock of a P or B field predicted with zero motion and no
residual. The syntax (ISO/IEC 13818-2, 6.2) is real: headers, slices,
macroblock types, field motion vectors; the picture is grey.

    mpeg2_fields.py OUT.m2v
"""
import sys

WIDTH, HEIGHT = 320, 256
MB_COLS, FIELD_MB_ROWS = WIDTH // 16, HEIGHT // 32


class Bits:
    def __init__(self):
        self.bits = []

    def put(self, n, value):
        self.bits += [(value >> (n - 1 - i)) & 1 for i in range(n)]

    def code(self, text):
        self.bits += [int(c) for c in text]

    def unit(self, start_code):
        """The bytes so far behind a start code, zero-padded to a byte."""
        self.bits += [0] * (-len(self.bits) % 8)
        data = bytes(
            int("".join(map(str, self.bits[i : i + 8])), 2) for i in range(0, len(self.bits), 8)
        )
        return b"\x00\x00\x01" + bytes([start_code]) + data


def sequence():
    b = Bits()
    b.put(12, WIDTH)
    b.put(12, HEIGHT)
    b.put(4, 2)  # 4:3
    b.put(4, 3)  # 25 fps
    b.put(18, 5000)
    b.put(1, 1)
    b.put(10, 112)
    b.put(1, 0)
    b.put(1, 0)  # default intra matrix
    b.put(1, 0)  # default non-intra matrix
    out = b.unit(0xB3)
    b = Bits()
    b.put(4, 1)  # sequence extension
    b.put(8, 0x48)  # Main profile, Main level
    b.put(1, 0)  # interlaced
    b.put(2, 1)  # 4:2:0
    b.put(2, 0)
    b.put(2, 0)
    b.put(12, 0)
    b.put(1, 1)
    b.put(8, 0)
    b.put(1, 0)
    b.put(2, 0)
    b.put(5, 0)
    return out + b.unit(0xB5)


def gop(closed):
    b = Bits()
    b.put(25, 1 << 12)
    b.put(1, closed)
    b.put(1, 0)
    return b.unit(0xB8)


def field(kind, temporal_reference, structure):
    """One field picture: header, coding extension, one slice per row."""
    b = Bits()
    b.put(10, temporal_reference)
    b.put(3, {"I": 1, "P": 2, "B": 3}[kind])
    b.put(16, 0xFFFF)
    if kind in "PB":
        b.code("0111")  # full_pel_forward_vector 0, forward_f_code 7
    if kind == "B":
        b.code("0111")
    b.put(1, 0)
    out = b.unit(0x00)
    b = Bits()
    b.put(4, 8)  # picture coding extension
    forward = 1 if kind in "PB" else 15
    backward = 1 if kind == "B" else 15
    for f in (forward, forward, backward, backward):
        b.put(4, f)
    b.put(2, 0)  # intra_dc_precision
    b.put(2, structure)
    # top_field_first, frame_pred_frame_dct, concealment_motion_vectors,
    # q_scale_type, intra_vlc_format, alternate_scan, repeat_first_field,
    # chroma_420_type, progressive_frame, composite_display_flag.
    b.code("0000000000")
    out += b.unit(0xB5)
    for row in range(FIELD_MB_ROWS):
        b = Bits()
        b.put(5, 8)  # quantiser_scale_code
        b.put(1, 0)  # extra_bit_slice
        for _ in range(MB_COLS):
            b.code("1")  # macroblock_address_increment 1
            if kind == "I":
                b.code("1")  # intra
                for _ in range(4):
                    b.code("100" + "10")  # luma DC size 0, end of block
                for _ in range(2):
                    b.code("00" + "10")  # chroma DC size 0, end of block
            else:
                # P: motion compensated, not coded; B: interpolated, not
                # coded. Field motion, zero vectors from the top field.
                b.code("001" if kind == "P" else "10")
                b.code("01")
                for _ in range(1 if kind == "P" else 2):
                    b.code("0" + "1" + "1")
        out += b.unit(row + 1)
    return out


def main():
    top, bottom = 1, 2
    stream = sequence() + gop(1)
    # Decoding order; temporal references give display order.
    frames = [("I", "P", 0), ("P", "P", 3), ("B", "B", 1), ("B", "B", 2),
              ("P", "P", 6), ("B", "B", 4), ("B", "B", 5)]
    for first, second, temporal_reference in frames:
        stream += field(first, temporal_reference, top)
        stream += field(second, temporal_reference, bottom)
    stream += b"\x00\x00\x01\xb7"
    with open(sys.argv[1], "wb") as out:
        out.write(stream)


main()
