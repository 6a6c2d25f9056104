#!/usr/bin/env python3
"""Makes a VP9 stream whose frame size changes on an inter frame (reference
scaling), with libvpx through ctypes: ten frames at WxH, then the encoder's
size is lowered (vpx_codec_enc_config_set, one pass, no lag: libvpx codes
the next frame as an inter frame predicting from the larger references) for
ten frames at 3/4 of it. Writes IVF.

    vp9_resize.py OUT.ivf [W H]
"""
import ctypes
import struct
import sys

VPX_IMG_FMT_I420 = 0x102
VPX_DL_REALTIME = 1
VPX_CODEC_CX_FRAME_PKT = 0
# struct vpx_codec_enc_cfg: g_w, g_h, g_timebase, g_lag_in_frames.
CFG_W, CFG_H, CFG_TB_NUM, CFG_TB_DEN, CFG_LAG = 12, 16, 28, 32, 44
# struct vpx_image: planes[3] pointers, then stride[4] ints.
IMG_PLANES, IMG_STRIDES = 48, 80


def main():
    out = sys.argv[1]
    width, height = (int(sys.argv[2]), int(sys.argv[3])) if len(sys.argv) > 3 else (320, 240)
    vpx = ctypes.CDLL("libvpx.so.7")
    vpx.vpx_codec_vp9_cx.restype = ctypes.c_void_p
    vpx.vpx_img_alloc.restype = ctypes.c_void_p
    vpx.vpx_codec_get_cx_data.restype = ctypes.c_void_p
    vpx.vpx_codec_encode.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                                     ctypes.c_ulong, ctypes.c_long, ctypes.c_ulong]
    iface = ctypes.c_void_p(vpx.vpx_codec_vp9_cx())
    cfg = ctypes.create_string_buffer(16384)
    if vpx.vpx_codec_enc_config_default(iface, cfg, 0) != 0:
        sys.exit("vpx_codec_enc_config_default failed")
    struct.pack_into("<II", cfg, CFG_W, width, height)
    struct.pack_into("<ii", cfg, CFG_TB_NUM, 1, 30)
    struct.pack_into("<I", cfg, CFG_LAG, 0)
    ctx = ctypes.create_string_buffer(4096)
    # The encoder ABI version is not exported: the library refuses versions
    # newer than its own, so the newest it takes is its own.
    for abi in range(63, 0, -1):
        if vpx.vpx_codec_enc_init_ver(ctx, iface, cfg, 0, abi) == 0:
            break
    else:
        sys.exit("no encoder ABI version libvpx takes")

    packets = []

    def encode(w, h, n):
        img = vpx.vpx_img_alloc(None, VPX_IMG_FMT_I420, w, h, 16)
        planes = struct.unpack_from("<QQQ", ctypes.string_at(img + IMG_PLANES, 24))
        strides = struct.unpack_from("<iii", ctypes.string_at(img + IMG_STRIDES, 12))
        for plane, (ptr, stride) in enumerate(zip(planes, strides)):
            pw, ph = (w, h) if plane == 0 else ((w + 1) // 2, (h + 1) // 2)
            for y in range(ph):
                row = bytes(((x * 3 + y * 2 + n * 5 + plane * 60) & 0xFF) for x in range(pw))
                ctypes.memmove(ptr + y * stride, row, pw)
        if vpx.vpx_codec_encode(ctx, img, n, 1, 0, VPX_DL_REALTIME) != 0:
            sys.exit(f"vpx_codec_encode failed at frame {n}")
        vpx.vpx_img_free(ctypes.c_void_p(img))
        drain()

    def drain():
        it = ctypes.c_void_p(0)
        while True:
            pkt = vpx.vpx_codec_get_cx_data(ctx, ctypes.byref(it))
            if not pkt:
                return
            kind = struct.unpack_from("<i", ctypes.string_at(pkt, 4))[0]
            if kind == VPX_CODEC_CX_FRAME_PKT:
                buf, size, pts = struct.unpack_from("<QQq", ctypes.string_at(pkt + 8, 24))
                packets.append((pts, ctypes.string_at(buf, size)))

    for n in range(10):
        encode(width, height, n)
    small = (width * 3 // 4, height * 3 // 4)
    struct.pack_into("<II", cfg, CFG_W, *small)
    if vpx.vpx_codec_enc_config_set(ctx, cfg) != 0:
        sys.exit("vpx_codec_enc_config_set refused the new size")
    for n in range(10, 20):
        encode(small[0], small[1], n)
    vpx.vpx_codec_encode(ctx, None, -1, 1, 0, VPX_DL_REALTIME)
    drain()
    vpx.vpx_codec_destroy(ctx)

    with open(out, "wb") as f:
        f.write(b"DKIF" + struct.pack("<HHIHHIIII", 0, 32, 0x30395056, width, height, 30, 1, len(packets), 0))
        for pts, data in packets:
            f.write(struct.pack("<IQ", len(data), pts))
            f.write(data)


main()
