//! Filling the kernel's MPEG-2 stateless control structs
//! (`V4L2_CID_STATELESS_MPEG2_*`) from the codec layer's headers. v4l2r
//! has no typed MPEG-2 controls: the marker types here tie each control id
//! to its bindings struct.

use crate::v4l2::controls::marker_control;
use v4l2r::bindings as b;

use crate::codec::mpeg2::picture::{Picture, Sequence};

marker_control!(
    Mpeg2Sequence,
    b::V4L2_CID_STATELESS_MPEG2_SEQUENCE,
    b::v4l2_ctrl_mpeg2_sequence
);
marker_control!(
    Mpeg2Picture,
    b::V4L2_CID_STATELESS_MPEG2_PICTURE,
    b::v4l2_ctrl_mpeg2_picture
);
marker_control!(
    Mpeg2Quantisation,
    b::V4L2_CID_STATELESS_MPEG2_QUANTISATION,
    b::v4l2_ctrl_mpeg2_quantisation
);

/// A reference the picture does not use.
pub const NO_REFERENCE: u64 = u64::MAX;

/// The sequence control: the syntax elements as the uAPI defines them
/// (`vbv_buffer_size` in units of 16 kbit, `profile_and_level_indication`
/// as the 8-bit syntax element).
pub fn sequence_control(sequence: &Sequence) -> b::v4l2_ctrl_mpeg2_sequence {
    b::v4l2_ctrl_mpeg2_sequence {
        horizontal_size: sequence.horizontal_size() as u16,
        vertical_size: sequence.vertical_size() as u16,
        vbv_buffer_size: sequence.vbv_buffer_size(),
        profile_and_level_indication: u16::from(sequence.extension.profile_and_level_indication),
        chroma_format: sequence.extension.chroma_format,
        flags: if sequence.extension.progressive_sequence {
            b::V4L2_MPEG2_SEQ_FLAG_PROGRESSIVE as u8
        } else {
            0
        },
    }
}

/// The picture control, with the device timestamps of its references
/// ([`NO_REFERENCE`] for none).
pub fn picture_control(
    picture: &Picture,
    forward_ref_ts: u64,
    backward_ref_ts: u64,
) -> b::v4l2_ctrl_mpeg2_picture {
    let c = &picture.coding;
    let flags = [
        (c.top_field_first, b::V4L2_MPEG2_PIC_FLAG_TOP_FIELD_FIRST),
        (
            c.frame_pred_frame_dct,
            b::V4L2_MPEG2_PIC_FLAG_FRAME_PRED_DCT,
        ),
        (
            c.concealment_motion_vectors,
            b::V4L2_MPEG2_PIC_FLAG_CONCEALMENT_MV,
        ),
        (c.q_scale_type, b::V4L2_MPEG2_PIC_FLAG_Q_SCALE_TYPE),
        (c.intra_vlc_format, b::V4L2_MPEG2_PIC_FLAG_INTRA_VLC),
        (c.alternate_scan, b::V4L2_MPEG2_PIC_FLAG_ALT_SCAN),
        (c.repeat_first_field, b::V4L2_MPEG2_PIC_FLAG_REPEAT_FIRST),
        (c.progressive_frame, b::V4L2_MPEG2_PIC_FLAG_PROGRESSIVE),
    ]
    .iter()
    .filter(|(on, _)| *on)
    .fold(0, |acc, (_, flag)| acc | flag);
    b::v4l2_ctrl_mpeg2_picture {
        backward_ref_ts,
        forward_ref_ts,
        flags,
        f_code: c.f_code,
        picture_coding_type: picture.header.picture_coding_type,
        picture_structure: c.picture_structure,
        intra_dc_precision: c.intra_dc_precision,
        reserved: [0; 5],
    }
}

/// The matrices in force, in zigzag order as the uAPI wants them.
pub fn quantisation_control(picture: &Picture) -> b::v4l2_ctrl_mpeg2_quantisation {
    let q = &picture.quant;
    b::v4l2_ctrl_mpeg2_quantisation {
        intra_quantiser_matrix: q.intra,
        non_intra_quantiser_matrix: q.non_intra,
        chroma_intra_quantiser_matrix: q.chroma_intra,
        chroma_non_intra_quantiser_matrix: q.chroma_non_intra,
    }
}
