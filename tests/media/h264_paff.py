#!/usr/bin/env python3
"""Writes an H.264 Annex-B elementary stream of field pictures (PAFF; no
Debian encoder makes them: x264 codes MBAFF only): Main profile, level 3.0,
CAVLC, 160x128 interlaced at 25 frames/s, 12 frames each coded as a field
pair, top field first. Frame 0 is an IDR top field and a non-IDR I bottom
field, frames 1-3 are I field pairs, frames 4-11 P field pairs. Every
macroblock is I_PCM (in the P fields after an mb_skip_run of 0), so each
field carries its samples verbatim: a diagonal gradient that changes with
the frame and the field parity, chroma too, so no two frames look alike.
The syntax (ITU-T H.264, 7.3) is real: access unit delimiters, SPS with
VUI timing and bitstream restriction, PPS, field slice headers, reference
marking, emulation prevention.

    h264_paff.py OUT.264
"""
import sys

MB_COLS, FIELD_MB_ROWS = 10, 4  # 160x64 per field, 160x128 per frame
FRAMES, FIRST_P = 12, 4


class Bits:
    def __init__(self):
        self.bits = []

    def put(self, n, value):
        self.bits += [(value >> (n - 1 - i)) & 1 for i in range(n)]

    def ue(self, value):
        n = (value + 1).bit_length()
        self.put(2 * n - 1, value + 1)

    def se(self, value):
        self.ue(2 * value - 1 if value > 0 else -2 * value)

    def align(self):
        self.bits += [0] * (-len(self.bits) % 8)

    def raw(self, data):
        for byte in data:
            self.put(8, byte)

    def nal(self, nal_ref_idc, nal_unit_type):
        """rbsp_trailing_bits, emulation prevention, start code, header."""
        self.bits.append(1)
        self.align()
        rbsp = bytes(
            int("".join(map(str, self.bits[i : i + 8])), 2) for i in range(0, len(self.bits), 8)
        )
        payload, zeros = bytearray(), 0
        for byte in rbsp:
            if zeros >= 2 and byte <= 3:
                payload.append(3)
                zeros = 0
            payload.append(byte)
            zeros = zeros + 1 if byte == 0 else 0
        return b"\x00\x00\x00\x01" + bytes([nal_ref_idc << 5 | nal_unit_type]) + payload


def access_unit_delimiter(primary_pic_type):
    b = Bits()
    b.put(3, primary_pic_type)  # 0: I slices only, 1: I and P
    return b.nal(0, 9)


def sps():
    b = Bits()
    b.put(8, 77)  # profile_idc: Main
    b.put(8, 0)  # constraint_set0..5 flags, reserved_zero_2bits
    b.put(8, 30)  # level_idc
    b.ue(0)  # seq_parameter_set_id
    b.ue(0)  # log2_max_frame_num_minus4: frame_num is 4 bits
    b.ue(0)  # pic_order_cnt_type
    b.ue(4)  # log2_max_pic_order_cnt_lsb_minus4: lsb is 8 bits
    b.ue(1)  # max_num_ref_frames
    b.put(1, 0)  # gaps_in_frame_num_value_allowed_flag
    b.ue(MB_COLS - 1)  # pic_width_in_mbs_minus1
    b.ue(FIELD_MB_ROWS - 1)  # pic_height_in_map_units_minus1
    b.put(1, 0)  # frame_mbs_only_flag: fields allowed
    b.put(1, 0)  # mb_adaptive_frame_field_flag: no MBAFF
    b.put(1, 1)  # direct_8x8_inference_flag
    b.put(1, 0)  # frame_cropping_flag
    b.put(1, 1)  # vui_parameters_present_flag
    # aspect_ratio_info, overscan_info, video_signal_type, chroma_loc_info.
    b.put(4, 0)
    b.put(1, 1)  # timing_info_present_flag
    b.put(32, 1)  # num_units_in_tick
    b.put(32, 50)  # time_scale: 50 fields, 25 frames a second
    b.put(1, 1)  # fixed_frame_rate_flag
    b.put(3, 0)  # nal_hrd, vcl_hrd, pic_struct_present
    # Else FFmpeg guesses a reorder delay from the level and can give the
    # fields of a raw stream no timestamps when muxing it.
    b.put(1, 1)  # bitstream_restriction_flag
    b.put(1, 1)  # motion_vectors_over_pic_boundaries_flag
    b.ue(0)  # max_bytes_per_pic_denom: no limit
    b.ue(0)  # max_bits_per_mb_denom: no limit (I_PCM)
    b.ue(16)  # log2_max_mv_length_horizontal
    b.ue(16)  # log2_max_mv_length_vertical
    b.ue(0)  # max_num_reorder_frames
    b.ue(1)  # max_dec_frame_buffering
    return b.nal(3, 7)


def pps():
    b = Bits()
    b.ue(0)  # pic_parameter_set_id
    b.ue(0)  # seq_parameter_set_id
    b.put(1, 0)  # entropy_coding_mode_flag: CAVLC
    b.put(1, 0)  # bottom_field_pic_order_in_frame_present_flag
    b.ue(0)  # num_slice_groups_minus1
    b.ue(0)  # num_ref_idx_l0_default_active_minus1
    b.ue(0)  # num_ref_idx_l1_default_active_minus1
    b.put(1, 0)  # weighted_pred_flag
    b.put(2, 0)  # weighted_bipred_idc
    b.se(0)  # pic_init_qp_minus26
    b.se(0)  # pic_init_qs_minus26
    b.se(0)  # chroma_qp_index_offset
    b.put(1, 1)  # deblocking_filter_control_present_flag
    b.put(1, 0)  # constrained_intra_pred_flag
    b.put(1, 0)  # redundant_pic_cnt_present_flag
    return b.nal(3, 8)


def pcm_samples(frame, bottom, mb_x, mb_y):
    """The 256 luma, 64 Cb and 64 Cr samples of one field macroblock,
    all in 1..254."""
    luma, cb, cr = [], [], []
    for y in range(16):
        for x in range(16):
            fx, fy = mb_x * 16 + x, mb_y * 16 + y
            luma.append(8 + (fx + 2 * fy) // 2 % 64 + 12 * frame + 32 * bottom)
    for y in range(8):
        for x in range(8):
            cx, cy = mb_x * 8 + x, mb_y * 8 + y
            cb.append(40 + cx + 4 * frame + 10 * bottom)
            cr.append(200 - 2 * cy - 4 * frame - 10 * bottom)
    return bytes(luma + cb + cr)


def field(frame, bottom):
    """One field as one slice of I_PCM macroblocks, an I or a P slice."""
    idr = frame == 0 and not bottom
    p = frame >= FIRST_P
    b = Bits()
    b.ue(0)  # first_mb_in_slice
    b.ue(5 if p else 7)  # slice_type: all slices of the picture P or I
    b.ue(0)  # pic_parameter_set_id
    b.put(4, frame % 16)  # frame_num
    b.put(1, 1)  # field_pic_flag
    b.put(1, bottom)  # bottom_field_flag
    if idr:
        b.ue(0)  # idr_pic_id
    b.put(8, (4 * frame + bottom) % 256)  # pic_order_cnt_lsb
    if p:
        b.put(1, 0)  # num_ref_idx_active_override_flag
        b.put(1, 0)  # ref_pic_list_modification_flag_l0
    if idr:
        b.put(1, 0)  # no_output_of_prior_pics_flag
        b.put(1, 0)  # long_term_reference_flag
    else:
        b.put(1, 0)  # adaptive_ref_pic_marking_mode_flag: sliding window
    b.se(0)  # slice_qp_delta
    b.ue(1)  # disable_deblocking_filter_idc: off
    for mb_y in range(FIELD_MB_ROWS):
        for mb_x in range(MB_COLS):
            if p:
                b.ue(0)  # mb_skip_run
                b.ue(5 + 25)  # mb_type: I_PCM in a P slice
            else:
                b.ue(25)  # mb_type: I_PCM
            b.align()  # pcm_alignment_zero_bits
            b.raw(pcm_samples(frame, bottom, mb_x, mb_y))
    return b.nal(3, 5 if idr else 1)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.rstrip().rsplit("\n", 1)[1].strip())
    stream = b""
    for frame in range(FRAMES):
        for bottom in (0, 1):
            # Each field is an access unit; parameter sets only before the IDR.
            stream += access_unit_delimiter(1 if frame >= FIRST_P else 0)
            if frame == 0 and not bottom:
                stream += sps() + pps()
            stream += field(frame, bottom)
    with open(sys.argv[1], "wb") as out:
        out.write(stream)


main()
