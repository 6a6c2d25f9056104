//! Probing an opened file's streams (avformat_find_stream_info) without
//! two costs of libavformat's defaults that buy reel nothing:
//!
//! - **The parser over every packet.** For MP4 and Matroska, libavformat
//!   runs libavcodec's parser over each H.264/HEVC/... packet to read
//!   headers for timestamps and key flags the container already carries;
//!   the H.264 parser allocates and zeroes a packet-sized buffer each time
//!   (about a fifth of a 720p frame's instructions on the V4L2 path).
//!   `AVFMT_FLAG_NOPARSE` turns it off there: the video packets stay the
//!   same, bytes, timestamps and flags (tests/host/demux.rs holds them against
//!   ffprobe's). Only audio packets without a Matroska block duration lose
//!   the duration a parser would have guessed; reel's sound reads through
//!   its own context. MPEG-TS and elementary streams need the parser to
//!   find frame boundaries, so keep it.
//! - **A picture decoded in software at start.** find_stream_info decodes
//!   an H.264/HEVC stream's first picture to learn its pixel layout (and
//!   H.264's reordering delay): about 23 million instructions at 720p and
//!   44 million at 1080p, a quarter to two fifths of reel's start-up. In an
//!   MP4 the avcC/hvcC record carries the SPS that decides the layout, the
//!   profile and the level: reel reads them there, fills them in, and has
//!   the probe decoder skip pictures. MP4 only: its packets carry decode
//!   timestamps, where Matroska's are guessed from the delay that decoding
//!   learns. Layouts whose name FFmpeg derives from more than the SPS's
//!   chroma format and bit depth (full range, RGB, monochrome, separate
//!   planes, 9- or 14-bit) are left to the probe decoder.

use ff::ffi;
use ff::format::context::Input;
use ffmpeg_next as ff;

use super::avcc::AnnexBConverter;
use super::NalCodec;
use crate::codec::{h264, hevc};

/// What find_stream_info would otherwise decode a picture to learn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SequenceFacts {
    pub pixel_format: ffi::AVPixelFormat,
    /// In libavcodec's numbering (`AVCodecParameters.profile`).
    pub profile: i32,
    pub level: i32,
}

/// Runs avformat_find_stream_info on a freshly opened input, parser and
/// probe decoding cut to what the container leaves unsaid.
pub(super) fn find_stream_info(input: &mut Input) -> Result<(), ff::Error> {
    // SAFETY: `ctx` is the open context `input` owns; its input format and
    // stream array are valid for reading, and the fields written (flags,
    // a stream's codecpar format/profile/level) are plain integers
    // libavformat reads in the call below. Each options entry is a
    // dictionary pointer (null or allocated by av_dict_set) that is freed
    // after the call, which only reads them.
    unsafe {
        let ctx = input.as_mut_ptr();
        let container = container_kind(ctx);
        if container != Container::Other {
            (*ctx).flags |= ffi::AVFMT_FLAG_NOPARSE;
        }
        let streams = (*ctx).nb_streams as usize;
        let mut options: Vec<*mut ffi::AVDictionary> = vec![std::ptr::null_mut(); streams];
        if container == Container::Mp4 {
            for (index, dict) in options.iter_mut().enumerate() {
                let par = (**(*ctx).streams.add(index)).codecpar;
                let Some(facts) = facts_from_record(par) else {
                    continue;
                };
                tracing::debug!(
                    "stream {index}: {facts:?} from the SPS in its record; the probe decodes no picture"
                );
                (*par).format = facts.pixel_format as i32;
                (*par).profile = facts.profile;
                (*par).level = facts.level;
                ffi::av_dict_set(dict, c"skip_frame".as_ptr(), c"all".as_ptr(), 0);
            }
        }
        let ret = ffi::avformat_find_stream_info(ctx, options.as_mut_ptr());
        for dict in &mut options {
            ffi::av_dict_free(dict);
        }
        if ret < 0 {
            return Err(ff::Error::from(ret));
        }
    }
    Ok(())
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Container {
    Mp4,
    Matroska,
    Other,
}

/// # Safety
/// `ctx` is an open input context.
unsafe fn container_kind(ctx: *const ffi::AVFormatContext) -> Container {
    // SAFETY: an open input context has an input format whose name is a
    // static C string.
    let name = unsafe {
        let format = (*ctx).iformat;
        if format.is_null() || (*format).name.is_null() {
            return Container::Other;
        }
        std::ffi::CStr::from_ptr((*format).name).to_bytes()
    };
    match name {
        b"mov,mp4,m4a,3gp,3g2,mj2" => Container::Mp4,
        b"matroska,webm" => Container::Matroska,
        _ => Container::Other,
    }
}

/// The facts of an H.264/HEVC video stream whose codec record carries an
/// SPS reel can name the layout of.
///
/// # Safety
/// `par` is a stream's valid AVCodecParameters.
unsafe fn facts_from_record(par: *const ffi::AVCodecParameters) -> Option<SequenceFacts> {
    // SAFETY: reading plain fields; extradata, when not null, holds
    // extradata_size bytes.
    let (codec_id, record) = unsafe {
        let p = &*par;
        if p.codec_type != ffi::AVMediaType::AVMEDIA_TYPE_VIDEO
            || p.extradata.is_null()
            || p.extradata_size <= 0
        {
            return None;
        }
        let size = usize::try_from(p.extradata_size).ok()?;
        (p.codec_id, std::slice::from_raw_parts(p.extradata, size))
    };
    match codec_id {
        ffi::AVCodecID::AV_CODEC_ID_H264 => {
            let sets = AnnexBConverter::new(NalCodec::H264, record).ok()?;
            h264_facts(&h264::sps::first_sps(sets.parameter_sets())?)
        }
        ffi::AVCodecID::AV_CODEC_ID_HEVC => {
            let sets = AnnexBConverter::new(NalCodec::Hevc, record).ok()?;
            hevc_facts(&hevc::parse::first_sps(sets.parameter_sets())?)
        }
        _ => None,
    }
}

/// The planar YUV layout libavcodec's H.264 and HEVC decoders name for a
/// chroma format (1 4:2:0, 2 4:2:2, 3 4:4:4) and bit depth, limited-range
/// and not RGB. Little-endian, as the decoders output on the hosts reel
/// runs on.
fn planar_layout(chroma_format_idc: u8, bit_depth: u8) -> Option<ffi::AVPixelFormat> {
    use ffi::AVPixelFormat::*;
    Some(match (chroma_format_idc, bit_depth) {
        (1, 8) => AV_PIX_FMT_YUV420P,
        (2, 8) => AV_PIX_FMT_YUV422P,
        (3, 8) => AV_PIX_FMT_YUV444P,
        (1, 10) => AV_PIX_FMT_YUV420P10LE,
        (2, 10) => AV_PIX_FMT_YUV422P10LE,
        (3, 10) => AV_PIX_FMT_YUV444P10LE,
        (1, 12) => AV_PIX_FMT_YUV420P12LE,
        (2, 12) => AV_PIX_FMT_YUV422P12LE,
        (3, 12) => AV_PIX_FMT_YUV444P12LE,
        _ => return None,
    })
}

/// As libavcodec's H.264 decoder would report them (h264_slice.c's choice
/// of format, ff_h264_get_profile).
pub(crate) fn h264_facts(sps: &h264::sps::Sps) -> Option<SequenceFacts> {
    let depth = sps.bit_depth_luma_minus8 + 8;
    let full_range_or_rgb = sps
        .vui
        .as_ref()
        .is_some_and(|v| v.video_full_range_flag || v.matrix_coefficients == 0);
    if sps.separate_colour_plane_flag
        || sps.bit_depth_chroma_minus8 != sps.bit_depth_luma_minus8
        || full_range_or_rgb
        || !matches!(depth, 8 | 10)
    {
        return None;
    }
    let constraint_set = |n: u8| sps.constraint_set_flags & (1 << n) != 0;
    let mut profile = i32::from(sps.profile_idc);
    match sps.profile_idc {
        66 if constraint_set(1) => profile |= ffi::FF_PROFILE_H264_CONSTRAINED,
        110 | 122 | 244 if constraint_set(3) => profile |= ffi::FF_PROFILE_H264_INTRA,
        _ => {}
    }
    Some(SequenceFacts {
        pixel_format: planar_layout(sps.chroma_format_idc, depth)?,
        profile,
        level: i32::from(sps.level_idc),
    })
}

/// As libavcodec's HEVC decoder would report them (hevc_ps.c's
/// map_pixel_format and the general profile and level).
pub(crate) fn hevc_facts(sps: &hevc::Sps) -> Option<SequenceFacts> {
    let general = &sps.profile_tier_level;
    if sps.separate_colour_plane_flag
        || sps.bit_depth_chroma() != sps.bit_depth_luma()
        || sps.vui.video_full_range_flag
        || sps.vui.matrix_coeffs == 0
        || general.general.profile_idc == 0
    {
        return None;
    }
    Some(SequenceFacts {
        pixel_format: planar_layout(sps.chroma_format_idc, sps.bit_depth_luma())?,
        profile: i32::from(general.general.profile_idc),
        level: i32::from(general.general_level_idc),
    })
}
