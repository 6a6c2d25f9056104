"""Reading and writing IVF files (a 32-byte header, then each frame as its
size, its pts and its bytes), for the scripts that edit coded streams."""
import struct


def read(path):
    """The header and the frames, as (pts, bytes)."""
    data = open(path, "rb").read()
    frames = []
    pos = 32
    while pos + 12 <= len(data):
        size, pts = struct.unpack_from("<IQ", data, pos)
        frames.append((pts, data[pos + 12 : pos + 12 + size]))
        pos += 12 + size
    return bytearray(data[:32]), frames


def write(path, header, frames):
    """Writes `frames` (bytes each) with pts 0, 1, ... under `header`, its
    frame count updated."""
    header = bytearray(header)
    struct.pack_into("<I", header, 24, len(frames))
    with open(path, "wb") as f:
        f.write(header)
        for pts, frame in enumerate(frames):
            f.write(struct.pack("<IQ", len(frame), pts))
            f.write(frame)
