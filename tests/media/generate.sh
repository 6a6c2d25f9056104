#!/usr/bin/env bash
# Generates the clips reel's tests use, with the ffmpeg CLI and Debian's
# encoders, into $REEL_TEST_MEDIA (default: target/test-media). Re-running is a
# no-op unless this script changed. Clips are small (QVGA, about a second) so
# that every test suite stays fast on two cores.
#
#   tests/media/generate.sh [OUT_DIR]
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=${1:-${REEL_TEST_MEDIA:-$here/../../target/test-media}}
mkdir -p "$out"
out=$(cd "$out" && pwd)

# Test binaries run in parallel and may all ask for the clips at once.
exec 9>"$out/.lock"
flock 9

stamp="$out/.generated"
digest=$(cat "$0" "$here"/*.py | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$digest" ]; then
    exit 0
fi

# Every call ends with its output file: -fflags +bitexact goes just before it,
# as an output option, so that the muxers write no random UIDs (Matroska,
# WebM) or version strings and every run makes the same bytes (the stored
# GStreamer oracles, tests/data/oracles/, name each clip by its digest).
ff() { ffmpeg -nostdin -hide_banner -loglevel error -y "${@:1:$#-1}" -fflags +bitexact "${@:$#}"; }
# A moving pattern whose every frame differs, so a wrong frame is visible.
src() { # size rate seconds
    echo "testsrc2=size=$1:rate=$2:duration=$3"
}
x264() { # extra x264 options...
    echo "-c:v libx264 -preset veryfast -pix_fmt yuv420p $*"
}

cd "$out"
rm -f ./*.mp4 ./*.mkv ./*.webm ./*.ts ./*.mka ./*.bin

# --- H.264 -------------------------------------------------------------------
ff -f lavfi -i "$(src 320x240 30 1)" $(x264 -profile:v baseline -g 15) h264_baseline.mp4
ff -f lavfi -i "$(src 320x240 30 1)" $(x264 -profile:v main -bf 3 -x264-params b-pyramid=normal:keyint=24) h264_main_bframes.mkv
ff -f lavfi -i "$(src 320x240 30 1)" $(x264 -profile:v high -x264-params 8x8dct=1:keyint=30) h264_high.ts
ff -f lavfi -i "$(src 320x240 30 1)" $(x264 -profile:v high -x264-params cqm=jvt) h264_scaling_matrix.mp4
ff -f lavfi -i "$(src 320x240 30 1),fade=in:0:15" $(x264 -profile:v main -bf 2 -x264-params weightp=2:weightb=1) h264_weighted.mp4
ff -f lavfi -i "$(src 320x240 30 1)" $(x264 -profile:v main -x264-params slices=4) h264_slices.mp4
ff -f lavfi -i "$(src 320x240 30 1)" $(x264 -profile:v high -flags +ildct+ilme -x264-params tff=1) h264_mbaff.ts
ff -f lavfi -i "$(src 250x130 30 1)" $(x264 -profile:v high) h264_odd_size.mp4
# 25 fps for 4 s with B-frames: the OSD's frame numbers (2.0 s is frame 50)
# and screenshots of a paused frame.
ff -f lavfi -i "$(src 320x240 25 4)" $(x264 -profile:v main -bf 2 -g 25) h264_25fps.mp4
# Explicit scaling lists sent in the SPS (delta_scale coding) with 4:4:4
# (six 8x8 lists, chroma_format_idc 3), 8x8 transform, custom quantisers.
cqm4=$(seq -s, 16 31); cqm8=$(for i in $(seq 0 63); do printf '%d,' $((16 + i / 4)); done); cqm8=${cqm8%,}
ff -f lavfi -i "$(src 176x144 30 0.5)" -c:v libx264 -preset veryfast -pix_fmt yuv444p -profile:v high444 \
    -x264-params "cqm4=$cqm4:cqm8=$cqm8:keyint=8:bframes=2:ref=3" h264_cqm_444.mp4
# Layouts the stream probe names from an MP4's SPS (4:2:2 10-bit) and one it
# leaves to FFmpeg's probe decoder (full range: yuvj420p).
ff -f lavfi -i "$(src 176x144 30 0.2)" -c:v libx264 -preset veryfast -pix_fmt yuv422p10le -profile:v high422 \
    h264_422_10bit.mp4
ff -f lavfi -i "$(src 176x144 30 0.2)" -c:v libx264 -preset veryfast -pix_fmt yuvj420p h264_full_range.mp4
# High 10, every picture an IDR: bit depth fields, idr_pic_id changes.
ff -f lavfi -i "$(src 176x144 30 0.5)" -c:v libx264 -preset veryfast -pix_fmt yuv420p10le -profile:v high10 \
    -x264-params "keyint=1" h264_high10_intra.mkv

# Mid-stream resolution change: two H.264 segments with their own SPS, joined
# at an IDR inside one MPEG-TS (same PIDs, so a byte concatenation is a valid
# transport stream).
# No B-frames, so both segments start at the muxer's 1.4 s and the second
# follows the first frame for frame once shifted by 1 s.
ff -f lavfi -i "$(src 320x240 30 1)" $(x264 -profile:v main -bf 0 -g 30) seg_a.ts
ff -f lavfi -i "$(src 480x270 30 1)" $(x264 -profile:v main -bf 0 -g 30) -output_ts_offset 1 seg_b.ts
cat seg_a.ts seg_b.ts > h264_resolution_change.ts
rm -f seg_a.ts seg_b.ts

# --- HEVC --------------------------------------------------------------------
x265() { # pix_fmt x265-params
    echo "-c:v libx265 -preset ultrafast -pix_fmt $1 -x265-params log-level=error:$2"
}
ff -f lavfi -i "$(src 320x240 30 1)" $(x265 yuv420p keyint=30) hevc_main.mkv
ff -f lavfi -i "$(src 320x240 30 1)" $(x265 yuv420p10le keyint=30) hevc_main10.mp4
# Wavefront (one entry point per CTB row) with 16x16 CTBs: 14 entry points.
ff -f lavfi -i "$(src 320x240 30 0.5)" $(x265 yuv420p wpp=1:ctu=16:keyint=8) hevc_wpp.mkv
ff -f lavfi -i "$(src 320x240 30 0.5)" $(x265 yuv420p slices=4:keyint=8) hevc_slices.mkv
ff -f lavfi -i "$(src 320x240 30 1)" $(x265 yuv420p bframes=4:b-pyramid=1:keyint=30:ref=3) hevc_bpyramid.mkv
ff -f lavfi -i "$(src 320x240 30 0.5)" $(x265 yuv420p scaling-list=default:keyint=8) hevc_scaling_default.mkv
# Explicit lists in the SPS: coded ones with DC coefficients, copies of
# another list (scaling_list_pred_matrix_id_delta) and defaults.
for size in 4X4:16 8X8:64 16X16:64 32X32:64; do
    n=${size#*:}
    for kind in INTRA INTER; do
        for comp in LUMA CHROMAU CHROMAV; do
            name=$kind${size%:*}_$comp
            echo "$name ="
            for i in $(seq 0 $((n - 1))); do
                case $kind$comp in
                    INTRALUMA | *CHROMAV) printf '%d,' $((16 + i * 3 % 20)) ;;
                    INTERLUMA) printf '%d,' $((20 + i / 4)) ;;
                    *) printf '16,' ;;
                esac
            done
            echo
            case $size in 16X16* | 32X32*) printf '%s_DC =\n20,\n' "$name" ;; esac
        done
    done
done > scaling_lists.txt
ff -f lavfi -i "$(src 320x240 30 0.5)" $(x265 yuv420p scaling-list=scaling_lists.txt:keyint=8) hevc_scaling_explicit.mkv
rm -f scaling_lists.txt
ff -f lavfi -i "$(src 320x240 30 1),fade=in:0:20" $(x265 yuv420p weightp=1:weightb=1:bframes=2:keyint=30) hevc_weighted.mkv
# Open GOP: a CRA at frame 16 whose leading pictures are RASL.
ff -f lavfi -i "$(src 320x240 30 1)" $(x265 yuv420p open-gop=1:keyint=16:min-keyint=16:scenecut=0:bframes=3) hevc_open_gop.ts
# Taller than 32 CTB rows of 32 (ultrafast's CTB): 71 entry points per slice.
ff -f lavfi -i "$(src 128x2304 30 0.1)" $(x265 yuv420p wpp=1) hevc_tall_wpp.mkv
# Mid-stream resolution change, as the H.264 one; 480x270 is coded as
# 480x272 with a conformance window.
ff -f lavfi -i "$(src 320x240 30 1)" $(x265 yuv420p bframes=0:keyint=30) seg_a.ts
ff -f lavfi -i "$(src 480x270 30 1)" $(x265 yuv420p bframes=0:keyint=30) -output_ts_offset 1 seg_b.ts
cat seg_a.ts seg_b.ts > hevc_resolution_change.ts
rm -f seg_a.ts seg_b.ts
# Mid-stream bit depth change: Main, then Main 10 from an IDR at 1 s, same size.
ff -f lavfi -i "$(src 320x240 30 1)" $(x265 yuv420p bframes=0:keyint=30) seg_a.ts
ff -f lavfi -i "$(src 320x240 30 1)" $(x265 yuv420p10le bframes=0:keyint=30) -output_ts_offset 1 seg_b.ts
cat seg_a.ts seg_b.ts > hevc_bit_depth_change.ts
rm -f seg_a.ts seg_b.ts

# --- other codecs ------------------------------------------------------------
# libvpx's VP8 realtime mode picks its speed from how long the last frames
# took to encode when cpu-used is positive (different bytes from run to run);
# a negative cpu-used fixes the speed at its magnitude.
ff -f lavfi -i "$(src 320x240 30 1)" -c:v libvpx -deadline realtime -cpu-used -8 -b:v 400k -g 30 vp8.webm
ff -f lavfi -i "$(src 320x240 30 1)" -c:v libvpx-vp9 -deadline realtime -cpu-used 8 -b:v 400k -g 30 vp9.webm
ff -f lavfi -i "$(src 320x240 30 1)" -c:v libaom-av1 -cpu-used 8 -usage realtime -b:v 400k -g 30 av1.mkv
ff -f lavfi -i "$(src 320x240 30 1)" -c:v mpeg2video -b:v 1M -g 15 -bf 2 mpeg2.ts

# --- MPEG-2 ------------------------------------------------------------------
# B-frames with custom intra and non-intra matrices in the sequence header
# (given in raster order; the stream carries them in zigzag order).
intra=$(for i in $(seq 0 63); do printf '%d,' $((8 + i / 2)); done); intra=${intra%,}
inter=$(for i in $(seq 0 63); do printf '%d,' $((16 + (i % 8) + i / 8)); done); inter=${inter%,}
ff -f lavfi -i "$(src 320x240 30 1)" -c:v mpeg2video -b:v 1M -g 12 -bf 2 \
    -intra_matrix "$intra" -inter_matrix "$inter" mpeg2_matrices.ts
# Interlaced frame pictures: field DCT and field prediction, top field first.
ff -f lavfi -i "$(src 320x240 30 1)" -c:v mpeg2video -b:v 1M -g 12 -bf 2 \
    -flags +ildct+ilme -top 1 mpeg2_interlaced.ts
# Field pictures, two per frame, I/P/B (hand-built: see the script).
python3 "$here/mpeg2_fields.py" mpeg2_fields.m2v
ff -fflags +genpts -r 25 -i mpeg2_fields.m2v -c copy mpeg2_fields.ts
rm -f mpeg2_fields.m2v
# H.264 field pictures (PAFF), I and P field pairs (hand-built: see the script).
python3 "$here/h264_paff.py" h264_paff.264
ff -i h264_paff.264 -c copy h264_paff.ts
rm -f h264_paff.264
# MPEG-1: the stateless interface decodes MPEG-2 only.
ff -f lavfi -i "$(src 320x240 30 0.5)" -c:v mpeg1video -b:v 1M -g 12 -bf 2 mpeg1.mpg
# --- VP8 ---------------------------------------------------------------------
# Hidden altref frames (show_frame = 0) and golden/altref updates: libvpx
# makes altref frames in two-pass encoding only.
vp8_altref="-c:v libvpx -deadline good -cpu-used 4 -b:v 300k -auto-alt-ref 1 -lag-in-frames 16 -g 30 -passlogfile vp8_altref"
ff -f lavfi -i "$(src 320x240 30 1)" $vp8_altref -pass 1 -f null -
ff -f lavfi -i "$(src 320x240 30 1)" $vp8_altref -pass 2 vp8_altref.webm
rm -f vp8_altref-0.log
# Error-resilient realtime encoding: segmentation with map and feature
# updates (cyclic refresh), no entropy refresh; four DCT partitions.
ff -f lavfi -i "$(src 320x240 30 1)" -c:v libvpx -deadline realtime -cpu-used -8 -b:v 300k -error-resilient 1 -static-thresh 100 -slices 4 -g 30 vp8_segmentation.webm
# A size that is not a whole number of macroblocks (testsrc2 makes even
# sizes only), two key frames.
ff -f lavfi -i "$(src 174x142 30 1)" -c:v libvpx -deadline realtime -cpu-used -8 -b:v 200k -g 15 vp8_odd_size.webm
# --- VP9 ---------------------------------------------------------------------
vp9() { # extra libvpx-vp9 options...
    echo "-c:v libvpx-vp9 -deadline realtime -cpu-used 8 $*"
}
# Four tile columns (1024 wide allows log2 2; libvpx codes one tile row), with
# segmentation (cyclic refresh): 9 frames.
ff -f lavfi -i "$(src 1024x576 30 0.3)" $(vp9 -b:v 800k -tile-columns 2 -aq-mode 3) vp9_tiles.webm
# Profile 2, 10-bit; key frames at 0 and 8 (a damaged copy resumes at 8).
ff -f lavfi -i "$(src 320x240 30 0.5)" $(vp9 -pix_fmt yuv420p10le -profile:v 2 -b:v 400k -g 8) vp9_profile2.webm
# Hidden altref frames: two-pass good quality with lag (superframes).
vp9_altref="-c:v libvpx-vp9 -deadline good -cpu-used 4 -b:v 300k -auto-alt-ref 1 -lag-in-frames 25 -g 60"
ff -f lavfi -i "$(src 320x240 30 1)" $vp9_altref -pass 1 -passlogfile vp9_altref -f null -
ff -f lavfi -i "$(src 320x240 30 1)" $vp9_altref -pass 2 -passlogfile vp9_altref vp9_altref.webm
rm -f vp9_altref-*.log
# show_existing_frame: libvpx emits none here, so one-byte frames showing
# slot 0 again are inserted after every fifth frame.
ff -f lavfi -i "$(src 320x240 30 0.5)" $(vp9 -b:v 400k -g 30) -f ivf vp9_plain.ivf
python3 "$here/vp9_show_existing.py" vp9_plain.ivf vp9_show_existing.ivf 5
ff -i vp9_show_existing.ivf -c copy vp9_show_existing.webm
rm -f vp9_plain.ivf vp9_show_existing.ivf
# Reference scaling: 320x240, then 240x180 from an inter frame on (libvpx
# through ctypes: FFmpeg's wrapper cannot change the size mid-stream).
python3 "$here/vp9_resize.py" vp9_resize.ivf 320 240
ff -i vp9_resize.ivf -c copy vp9_resize.webm
rm -f vp9_resize.ivf
# --- AV1 ---------------------------------------------------------------------
aom() { # extra libaom options...
    echo "-c:v libaom-av1 -cpu-used 8 -b:v 400k -g 30 $*"
}
ff -f lavfi -i "$(src 320x240 30 1)" $(aom -usage realtime -pix_fmt yuv420p10le) av1_10bit.mkv
# Two tile columns and two tile rows (log2 1 each): four tiles per frame.
ff -f lavfi -i "$(src 320x240 30 1)" $(aom -usage realtime -tile-columns 1 -tile-rows 1) av1_tiles.mkv
# Film grain: the denoiser's noise model sent as grain parameters.
ff -f lavfi -i "$(src 320x240 30 1)" $(aom -usage realtime -denoise-noise-level 20) av1_film_grain.mkv
# Good-quality mode with look-ahead: hidden altref frames later shown with
# show_existing_frame.
ff -f lavfi -i "$(src 320x240 30 1)" $(aom -lag-in-frames 16 -auto-alt-ref 1) av1_altref.mkv
# Every hidden altref frame shown twice (two show_existing_frame units in a
# row): the same picture must be output again, from the same buffer.
ff -i av1_altref.mkv -c copy altref.ivf
python3 "$here/av1_show_again.py" altref.ivf shown_twice.ivf
ff -i shown_twice.ivf -c copy av1_shown_twice.mkv
rm -f altref.ivf shown_twice.ivf
# Whole-picture motion and variance AQ: segmentation with feature data.
ff -f lavfi -i "testsrc2=size=480x360:rate=30:duration=0.5,crop=320:240:'t*60':'t*30'" \
    -c:v libaom-av1 -cpu-used 5 -lag-in-frames 8 -aq-mode 1 -enable-global-motion 1 -b:v 300k -g 15 av1_segmentation.mkv
# Superres (libaom here does not take its superres options; SVT-AV1 does) at
# a size that is no multiple of 8.
SVT_LOG=1 ff -f lavfi -i "$(src 318x238 30 0.5)" -c:v libsvtav1 -preset 12 -g 15 \
    -svtav1-params superres-mode=1:superres-denom=12:superres-kf-denom=12 av1_superres.mkv
# Screen content: the key frame uses intra block copy (allow_intrabc), so its
# loop filter is off and nothing of it is coded (the deltas as
# setup_past_independence() leaves them).
ff -f lavfi -i "$(src 320x240 30 0.5)" -c:v libaom-av1 -cpu-used 8 -b:v 300k -g 15 -tune-content screen \
    -aom-params enable-intrabc=1 av1_intrabc.mkv
# 4:4:4 (seq_profile 1, High): a Main-only decoder must not be given it.
ff -f lavfi -i "$(src 320x240 30 0.3)" -c:v libaom-av1 -cpu-used 8 -usage realtime -b:v 300k -pix_fmt yuv444p av1_444.mkv
# 640x480: seq_level_idx 4 (level 3.0), above a level-2.1 decoder's menu.
ff -f lavfi -i "$(src 640x480 30 0.3)" $(aom -usage realtime) av1_level3.mkv
# Mid-stream resolution change: two low-overhead OBU streams joined at a key
# frame (each starts with its sequence header), then put in Matroska.
ff -f lavfi -i "$(src 320x240 30 0.5)" $(aom -usage realtime -g 15) seg_a.obu
ff -f lavfi -i "$(src 240x180 30 0.5)" $(aom -usage realtime -g 15) seg_b.obu
cat seg_a.obu seg_b.obu > seg_ab.obu
ff -i seg_ab.obu -c copy av1_resolution_change.mkv
# Each part alone too: GStreamer cannot follow the change on visl, so its
# oracle of the whole is the oracles of the parts.
ff -i seg_a.obu -c copy av1_resolution_change_a.mkv
ff -i seg_b.obu -c copy av1_resolution_change_b.mkv
rm -f seg_a.obu seg_b.obu seg_ab.obu

# --- Mid-stream resolution changes (tests/guest_resolution_change.rs) ---------
# Segments of their own size and DPB needs, joined as a broadcast switch joins
# them: transport streams put together with cat (continuity counters broken at
# each junction; without an offset, the second segment's timestamps start
# again where the first's did). rc_ts OUT OFFSET "SIZE|ENCODER OPTIONS"...:
# OFFSET 1 shifts segment N by N seconds (-output_ts_offset), 0 does not;
# with KEEP_PARTS=1 the segments stay as OUT_partN.ts (MPEG-2: FFmpeg's frame
# list is made from each alone).
rc_ts() {
    local out=$1 offset=$2 n=0 parts=() shift_ts=()
    shift 2
    for seg in "$@"; do
        shift_ts=()
        [ "$offset" = 1 ] && shift_ts=(-output_ts_offset "$n")
        # shellcheck disable=SC2086 # the encoder options are words
        ff -f lavfi -i "$(src "${seg%%|*}" 30 1)" ${seg#*|} "${shift_ts[@]}" "${out%.ts}_part$n.ts"
        parts+=("${out%.ts}_part$n.ts")
        n=$((n + 1))
    done
    cat "${parts[@]}" >"$out"
    [ "${KEEP_PARTS:-0}" = 1 ] || rm -f "${parts[@]}"
}
# H.264: the issue's streams (no offset for the refs 4 -> 1 one) and refs
# 1 -> 4 -> 1 with B-frames off, on, off.
rc_ts rc_h264_up_bf2.ts 1 "288x160|$(x264 -profile:v main -bf 2 -g 30)" "400x224|$(x264 -profile:v main -bf 2 -g 30)"
KEEP_PARTS=1 rc_ts rc_h264_down_refs.ts 0 "480x272|$(x264 -profile:v main -bf 3 -refs 4 -g 30)" "320x176|$(x264 -profile:v main -bf 0 -refs 1 -g 30)"
ff -i rc_h264_down_refs.ts -c copy rc_h264_down_refs.mkv
rc_ts rc_h264_updown.ts 1 "320x176|$(x264 -profile:v main -bf 0 -refs 1 -g 30)" \
    "480x272|$(x264 -profile:v main -bf 3 -refs 4 -g 30)" "320x176|$(x264 -profile:v main -bf 0 -refs 1 -g 30)"
# HEVC: sps_max_dec_pic_buffering changes with bframes and ref per segment.
rc_ts rc_hevc_updown.ts 1 "320x240|$(x265 yuv420p bframes=0:ref=1:keyint=30)" \
    "480x272|$(x265 yuv420p bframes=4:b-pyramid=1:ref=3:keyint=30)" "256x144|$(x265 yuv420p bframes=2:ref=2:keyint=30)"
KEEP_PARTS=1 rc_ts rc_hevc_up.ts 0 "256x144|$(x265 yuv420p bframes=0:ref=1:keyint=30)" "384x216|$(x265 yuv420p bframes=3:ref=3:keyint=30)"
rc_ts rc_hevc_down.ts 1 "480x272|$(x265 yuv420p bframes=4:b-pyramid=1:ref=4:keyint=30)" "320x176|$(x265 yuv420p bframes=0:ref=1:keyint=30)"
# MPEG-2 (B pictures throughout), its segments kept.
KEEP_PARTS=1 rc_ts rc_mpeg2_up.ts 1 "352x288|-c:v mpeg2video -b:v 800k -g 15 -bf 2" "480x320|-c:v mpeg2video -b:v 800k -g 15 -bf 2"
KEEP_PARTS=1 rc_ts rc_mpeg2_down.ts 1 "480x320|-c:v mpeg2video -b:v 800k -g 15 -bf 2" "320x240|-c:v mpeg2video -b:v 800k -g 15 -bf 0"
KEEP_PARTS=1 rc_ts rc_mpeg2_updown.ts 1 "320x240|-c:v mpeg2video -b:v 800k -g 15 -bf 0" \
    "480x320|-c:v mpeg2video -b:v 800k -g 15 -bf 2" "320x240|-c:v mpeg2video -b:v 800k -g 15 -bf 2"
# VP8, VP9, AV1: one Matroska/WebM track whose key frames change size (IVF
# segments joined by the concat demuxer, which carries the timestamps on;
# low-overhead OBU segments joined with cat), then muxed.
rc_track() { # OUT ENCODER-OPTIONS SIZE...
    local out=$1 codec=$2 n=0
    shift 2
    : >rc_list.txt
    : >rc_joined.obu
    for size in "$@"; do
        case $codec in
        *libaom*)
            # shellcheck disable=SC2086 # the encoder options are words
            ff -f lavfi -i "$(src "$size" 30 1)" $codec rc_seg.obu
            cat rc_seg.obu >>rc_joined.obu
            ;;
        *)
            # shellcheck disable=SC2086 # the encoder options are words
            ff -f lavfi -i "$(src "$size" 30 1)" $codec "rc_seg$n.ivf"
            echo "file rc_seg$n.ivf" >>rc_list.txt
            ;;
        esac
        n=$((n + 1))
    done
    case $codec in
    *libaom*) ff -i rc_joined.obu -c copy "$out" ;;
    *) ff -f concat -safe 0 -i rc_list.txt -c copy "$out" ;;
    esac
    rm -f rc_seg* rc_joined.obu rc_list.txt
}
for dir in up:320x176,480x272 down:480x272,320x176 updown:320x176,480x272,256x144; do
    sizes=${dir#*:}
    rc_track "rc_vp8_${dir%%:*}.webm" "-c:v libvpx -deadline realtime -cpu-used -8 -b:v 300k -g 30" ${sizes//,/ }
    rc_track "rc_vp9_${dir%%:*}.webm" "$(vp9 -b:v 300k -g 30)" ${sizes//,/ }
    rc_track "rc_av1_${dir%%:*}.mkv" "$(aom -usage realtime -g 30)" ${sizes//,/ }
done

# --- bad input ---------------------------------------------------------------
ff -f lavfi -i "sine=frequency=440:duration=1" -c:a flac audio_only.mka
ff -f lavfi -i "anoisesrc=seed=7:duration=1" -f s16le garbage.bin
ff -f lavfi -i "$(src 320x240 30 2)" $(x264 -profile:v main -g 15) truncated_source.mkv
head -c $(( $(stat -c %s truncated_source.mkv) * 55 / 100 )) truncated_source.mkv > truncated.mkv
rm -f truncated_source.mkv

echo "$digest" > "$stamp"
echo "test media in $out"
