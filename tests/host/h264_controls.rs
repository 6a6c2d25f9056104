//! The V4L2 controls of every slice carry the bit sizes and header values
//! FFmpeg's trace_headers shows for the same bytes: header_bit_size (where
//! slice_data() starts), pic_order_cnt_bit_size, dec_ref_pic_marking_bit_size,
//! and the per-slice / per-picture syntax elements.

use crate::support;

use reel::codec::h264::H264Decoder;
use reel::v4l2::h264::controls::{PictureControls, SliceControls};
use support::h264::{access_units, annex_b_with_trace, work_dir, H264_CLIPS};
use support::media;
use v4l2r::bindings as b;

/// Expected values from one slice's trace.
#[derive(Debug, Default)]
struct Expected {
    header_bit_size: u32,
    pic_order_cnt_bit_size: u32,
    dec_ref_pic_marking_bit_size: u32,
    first_mb_in_slice: i64,
    slice_qp_delta: i64,
    frame_num: i64,
    pic_order_cnt_lsb: i64,
    nal_ref_idc: i64,
    idr: bool,
}

fn expected(elements: &[(usize, String, i64)], lengths: &[usize]) -> Expected {
    let mut e = Expected::default();
    let mut in_marking = false;
    for ((pos, name, value), &len) in elements.iter().zip(lengths) {
        let len32 = len as u32;
        match name.as_str() {
            "cabac_alignment_one_bit" => continue,
            "pic_order_cnt_lsb" | "delta_pic_order_cnt_bottom" | "delta_pic_order_cnt" => {
                e.pic_order_cnt_bit_size += len32;
            }
            "no_output_of_prior_pics_flag" | "adaptive_ref_pic_marking_mode_flag" => {
                in_marking = true
            }
            "cabac_init_idc" | "slice_qp_delta" => in_marking = false,
            _ => {}
        }
        if in_marking {
            e.dec_ref_pic_marking_bit_size += len32;
        }
        match name.as_str() {
            "first_mb_in_slice" => e.first_mb_in_slice = *value,
            "slice_qp_delta" => e.slice_qp_delta = *value,
            "frame_num" => e.frame_num = *value,
            "pic_order_cnt_lsb" => e.pic_order_cnt_lsb = *value,
            "nal_ref_idc" => e.nal_ref_idc = *value,
            "nal_unit_type" => e.idr = *value == 5,
            _ => {}
        }
        e.header_bit_size = (*pos + len) as u32;
    }
    e
}

#[test]
fn slice_controls_match_ffmpeg_trace() {
    for clip in H264_CLIPS {
        let annexb = annex_b_with_trace(&media::dir().join(clip), &work_dir("controls"));
        let mut slices = annexb
            .trace
            .iter()
            .zip(&annexb.bit_lengths)
            .filter(|(t, _)| matches!(t.get(2), Some((_, _, 1 | 5))));
        let mut decoder = H264Decoder::new();
        let mut checked = 0;
        for (i, unit) in access_units(&annexb.stream).iter().enumerate() {
            for job in decoder.decode_access_unit(unit, i as u64).expect("decodes") {
                let dp = &PictureControls::of(&job).decode_params;
                for (k, s) in job.slices.iter().enumerate() {
                    let s = SliceControls::of(s);
                    let (t, lengths) = slices.next().expect("a traced slice per slice job");
                    let e = expected(t, lengths);
                    let what = format!("{clip}: picture {i} slice {k}");
                    assert_eq!(
                        s.params.header_bit_size, e.header_bit_size,
                        "{what}: header_bit_size"
                    );
                    assert_eq!(
                        i64::from(s.params.first_mb_in_slice),
                        e.first_mb_in_slice,
                        "{what}"
                    );
                    assert_eq!(
                        i64::from(s.params.slice_qp_delta),
                        e.slice_qp_delta,
                        "{what}"
                    );
                    if k == 0 {
                        assert_eq!(
                            dp.pic_order_cnt_bit_size, e.pic_order_cnt_bit_size,
                            "{what}: poc bits"
                        );
                        assert_eq!(
                            dp.dec_ref_pic_marking_bit_size, e.dec_ref_pic_marking_bit_size,
                            "{what}: marking bits"
                        );
                        assert_eq!(i64::from(dp.frame_num), e.frame_num, "{what}");
                        assert_eq!(
                            i64::from(dp.pic_order_cnt_lsb),
                            e.pic_order_cnt_lsb,
                            "{what}"
                        );
                        assert_eq!(i64::from(dp.nal_ref_idc), e.nal_ref_idc, "{what}");
                        assert_eq!(
                            dp.flags & b::V4L2_H264_DECODE_PARAM_FLAG_IDR_PIC != 0,
                            e.idr,
                            "{what}"
                        );
                    }
                    checked += 1;
                }
            }
        }
        assert!(slices.next().is_none(), "{clip}: traced slices left over");
        eprintln!("{clip}: {checked} slices' controls match");
        assert!(checked >= 15);
    }
}

/// x264 takes `cqm4` / `cqm8` in raster order and writes them in zig-zag
/// order (with "same as previous" fall-backs): the V4L2 scaling matrix,
/// which is in raster order, must give back exactly the lists
/// tests/media/generate.sh passed to x264 for h264_cqm_444.mp4.
#[test]
fn scaling_matrix_control_gives_back_the_encoder_lists() {
    let annexb = annex_b_with_trace(&media::dir().join("h264_cqm_444.mp4"), &work_dir("cqm"));
    let mut decoder = H264Decoder::new();
    let units = access_units(&annexb.stream);
    let job = decoder
        .decode_access_unit(&units[0], 0)
        .expect("decodes")
        .pop()
        .expect("a picture");
    let cqm4: Vec<u8> = (16..32).collect();
    let cqm8: Vec<u8> = (0..64).map(|i| 16 + i / 4).collect();
    let job = PictureControls::of(&job);
    for list in &job.scaling_matrix.scaling_list_4x4 {
        assert_eq!(list.to_vec(), cqm4);
    }
    for list in &job.scaling_matrix.scaling_list_8x8 {
        assert_eq!(list.to_vec(), cqm8);
    }
    assert!(job.pps.flags & v4l2r::bindings::V4L2_H264_PPS_FLAG_SCALING_MATRIX_PRESENT as u16 != 0);
    assert_eq!(job.sps.chroma_format_idc, 3);
}
