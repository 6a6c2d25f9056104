//! The headers between MPEG-2 start codes (ISO/IEC 13818-2, 6.2), each read
//! from its start code value on (the byte after `00 00 01`), as FFmpeg's
//! `trace_headers` reads them.

use crate::codec::bitstream::BitReader;

use super::{start_code, Mpeg2Error};

/// A quantiser matrix in the order the stream carries it (zigzag scan).
pub type Matrix = [u8; 64];

fn matrix(r: &mut BitReader, name: &'static str) -> Result<Matrix, Mpeg2Error> {
    let mut m = [0u8; 64];
    for value in &mut m {
        *value = r.u(8, name)? as u8;
        if *value == 0 {
            return Err(Mpeg2Error::Invalid(format!("{name} holds a 0")));
        }
    }
    Ok(m)
}

fn optional_matrix(
    r: &mut BitReader,
    load: &'static str,
    name: &'static str,
) -> Result<Option<Matrix>, Mpeg2Error> {
    if r.flag(load)? {
        Ok(Some(matrix(r, name)?))
    } else {
        Ok(None)
    }
}

fn marker_bit(r: &mut BitReader) -> Result<(), Mpeg2Error> {
    if r.flag("marker_bit")? {
        Ok(())
    } else {
        Err(Mpeg2Error::Invalid("marker_bit is 0".into()))
    }
}

fn start_code_value(r: &mut BitReader, name: &'static str, expected: u8) -> Result<(), Mpeg2Error> {
    let code = r.u(8, name)? as u8;
    if code == expected {
        Ok(())
    } else {
        Err(Mpeg2Error::Invalid(format!(
            "{name} {code:#04x}, expected {expected:#04x}"
        )))
    }
}

/// `extra_bit_*` / `extra_information_*` pairs (6.2.3.4, 6.2.4): the
/// information bytes are reserved and skipped.
fn extra_information(
    r: &mut BitReader,
    marker: &'static str,
    name: &'static str,
) -> Result<(), Mpeg2Error> {
    while r.flag(marker)? {
        r.u(8, name)?;
    }
    Ok(())
}

/// sequence_header() (6.2.2.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SequenceHeader {
    pub horizontal_size_value: u16,
    pub vertical_size_value: u16,
    pub aspect_ratio_information: u8,
    pub frame_rate_code: u8,
    pub bit_rate_value: u32,
    pub vbv_buffer_size_value: u16,
    pub constrained_parameters_flag: bool,
    pub intra_quantiser_matrix: Option<Matrix>,
    pub non_intra_quantiser_matrix: Option<Matrix>,
}

impl SequenceHeader {
    pub fn parse(r: &mut BitReader) -> Result<Self, Mpeg2Error> {
        start_code_value(r, "sequence_header_code", start_code::SEQUENCE_HEADER)?;
        let horizontal_size_value = r.u(12, "horizontal_size_value")? as u16;
        let vertical_size_value = r.u(12, "vertical_size_value")? as u16;
        let aspect_ratio_information = r.u(4, "aspect_ratio_information")? as u8;
        let frame_rate_code = r.u(4, "frame_rate_code")? as u8;
        let bit_rate_value = r.u(18, "bit_rate_value")?;
        marker_bit(r)?;
        let vbv_buffer_size_value = r.u(10, "vbv_buffer_size_value")? as u16;
        let constrained_parameters_flag = r.flag("constrained_parameters_flag")?;
        let intra_quantiser_matrix =
            optional_matrix(r, "load_intra_quantiser_matrix", "intra_quantiser_matrix")?;
        let non_intra_quantiser_matrix = optional_matrix(
            r,
            "load_non_intra_quantiser_matrix",
            "non_intra_quantiser_matrix",
        )?;
        if horizontal_size_value == 0 || vertical_size_value == 0 {
            return Err(Mpeg2Error::Invalid(format!(
                "sequence of {horizontal_size_value}x{vertical_size_value}"
            )));
        }
        Ok(Self {
            horizontal_size_value,
            vertical_size_value,
            aspect_ratio_information,
            frame_rate_code,
            bit_rate_value,
            vbv_buffer_size_value,
            constrained_parameters_flag,
            intra_quantiser_matrix,
            non_intra_quantiser_matrix,
        })
    }
}

/// extension_start_code_identifier values (Table 6-2).
pub mod extension_id {
    pub const SEQUENCE: u8 = 1;
    pub const SEQUENCE_DISPLAY: u8 = 2;
    pub const QUANT_MATRIX: u8 = 3;
    pub const SEQUENCE_SCALABLE: u8 = 5;
    pub const PICTURE_DISPLAY: u8 = 7;
    pub const PICTURE_CODING: u8 = 8;
}

/// sequence_extension() (6.2.2.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SequenceExtension {
    pub profile_and_level_indication: u8,
    pub progressive_sequence: bool,
    pub chroma_format: u8,
    pub horizontal_size_extension: u8,
    pub vertical_size_extension: u8,
    pub bit_rate_extension: u16,
    pub vbv_buffer_size_extension: u8,
    pub low_delay: bool,
    pub frame_rate_extension_n: u8,
    pub frame_rate_extension_d: u8,
}

impl SequenceExtension {
    fn parse(r: &mut BitReader) -> Result<Self, Mpeg2Error> {
        let profile_and_level_indication = r.u(8, "profile_and_level_indication")? as u8;
        let progressive_sequence = r.flag("progressive_sequence")?;
        let chroma_format = r.u(2, "chroma_format")? as u8;
        let horizontal_size_extension = r.u(2, "horizontal_size_extension")? as u8;
        let vertical_size_extension = r.u(2, "vertical_size_extension")? as u8;
        let bit_rate_extension = r.u(12, "bit_rate_extension")? as u16;
        marker_bit(r)?;
        let vbv_buffer_size_extension = r.u(8, "vbv_buffer_size_extension")? as u8;
        let low_delay = r.flag("low_delay")?;
        let frame_rate_extension_n = r.u(2, "frame_rate_extension_n")? as u8;
        let frame_rate_extension_d = r.u(5, "frame_rate_extension_d")? as u8;
        if chroma_format == 0 {
            return Err(Mpeg2Error::Invalid("chroma_format 0 is reserved".into()));
        }
        Ok(Self {
            profile_and_level_indication,
            progressive_sequence,
            chroma_format,
            horizontal_size_extension,
            vertical_size_extension,
            bit_rate_extension,
            vbv_buffer_size_extension,
            low_delay,
            frame_rate_extension_n,
            frame_rate_extension_d,
        })
    }
}

/// sequence_display_extension() (6.2.2.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SequenceDisplayExtension {
    pub video_format: u8,
    /// colour_primaries, transfer_characteristics, matrix_coefficients.
    pub colour_description: Option<(u8, u8, u8)>,
    pub display_horizontal_size: u16,
    pub display_vertical_size: u16,
}

impl SequenceDisplayExtension {
    fn parse(r: &mut BitReader) -> Result<Self, Mpeg2Error> {
        let video_format = r.u(3, "video_format")? as u8;
        let colour_description = if r.flag("colour_description")? {
            Some((
                r.u(8, "colour_primaries")? as u8,
                r.u(8, "transfer_characteristics")? as u8,
                r.u(8, "matrix_coefficients")? as u8,
            ))
        } else {
            None
        };
        let display_horizontal_size = r.u(14, "display_horizontal_size")? as u16;
        marker_bit(r)?;
        let display_vertical_size = r.u(14, "display_vertical_size")? as u16;
        Ok(Self {
            video_format,
            colour_description,
            display_horizontal_size,
            display_vertical_size,
        })
    }
}

/// quant_matrix_extension() (6.2.3.2): the matrices it loads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QuantMatrixExtension {
    pub intra_quantiser_matrix: Option<Matrix>,
    pub non_intra_quantiser_matrix: Option<Matrix>,
    pub chroma_intra_quantiser_matrix: Option<Matrix>,
    pub chroma_non_intra_quantiser_matrix: Option<Matrix>,
}

impl QuantMatrixExtension {
    fn parse(r: &mut BitReader) -> Result<Self, Mpeg2Error> {
        Ok(Self {
            intra_quantiser_matrix: optional_matrix(
                r,
                "load_intra_quantiser_matrix",
                "intra_quantiser_matrix",
            )?,
            non_intra_quantiser_matrix: optional_matrix(
                r,
                "load_non_intra_quantiser_matrix",
                "non_intra_quantiser_matrix",
            )?,
            chroma_intra_quantiser_matrix: optional_matrix(
                r,
                "load_chroma_intra_quantiser_matrix",
                "chroma_intra_quantiser_matrix",
            )?,
            chroma_non_intra_quantiser_matrix: optional_matrix(
                r,
                "load_chroma_non_intra_quantiser_matrix",
                "chroma_non_intra_quantiser_matrix",
            )?,
        })
    }
}

/// picture_display_extension() (6.2.3.3): the frame centre offsets.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PictureDisplayExtension {
    pub frame_centre_offsets: Vec<(i32, i32)>,
}

impl PictureDisplayExtension {
    fn parse(r: &mut BitReader, count: usize) -> Result<Self, Mpeg2Error> {
        let mut frame_centre_offsets = Vec::with_capacity(count);
        for _ in 0..count {
            let horizontal = r.su(16, "frame_centre_horizontal_offset")?;
            marker_bit(r)?;
            let vertical = r.su(16, "frame_centre_vertical_offset")?;
            marker_bit(r)?;
            frame_centre_offsets.push((horizontal, vertical));
        }
        Ok(Self {
            frame_centre_offsets,
        })
    }
}

/// picture_structure values (Table 6-14).
pub mod picture_structure {
    pub const TOP_FIELD: u8 = 1;
    pub const BOTTOM_FIELD: u8 = 2;
    pub const FRAME: u8 = 3;
}

/// picture_coding_extension() (6.2.3.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PictureCodingExtension {
    /// `[forward, backward][horizontal, vertical]`.
    pub f_code: [[u8; 2]; 2],
    pub intra_dc_precision: u8,
    pub picture_structure: u8,
    pub top_field_first: bool,
    pub frame_pred_frame_dct: bool,
    pub concealment_motion_vectors: bool,
    pub q_scale_type: bool,
    pub intra_vlc_format: bool,
    pub alternate_scan: bool,
    pub repeat_first_field: bool,
    pub chroma_420_type: bool,
    pub progressive_frame: bool,
    pub composite_display_flag: bool,
}

impl PictureCodingExtension {
    fn parse(r: &mut BitReader) -> Result<Self, Mpeg2Error> {
        let mut f_code = [[0u8; 2]; 2];
        for row in &mut f_code {
            for code in row.iter_mut() {
                *code = r.u(4, "f_code")? as u8;
                if *code == 0 {
                    return Err(Mpeg2Error::Invalid("f_code 0 is forbidden".into()));
                }
            }
        }
        let intra_dc_precision = r.u(2, "intra_dc_precision")? as u8;
        let picture_structure = r.u(2, "picture_structure")? as u8;
        if picture_structure == 0 {
            return Err(Mpeg2Error::Invalid(
                "picture_structure 0 is reserved".into(),
            ));
        }
        let ext = Self {
            f_code,
            intra_dc_precision,
            picture_structure,
            top_field_first: r.flag("top_field_first")?,
            frame_pred_frame_dct: r.flag("frame_pred_frame_dct")?,
            concealment_motion_vectors: r.flag("concealment_motion_vectors")?,
            q_scale_type: r.flag("q_scale_type")?,
            intra_vlc_format: r.flag("intra_vlc_format")?,
            alternate_scan: r.flag("alternate_scan")?,
            repeat_first_field: r.flag("repeat_first_field")?,
            chroma_420_type: r.flag("chroma_420_type")?,
            progressive_frame: r.flag("progressive_frame")?,
            composite_display_flag: r.flag("composite_display_flag")?,
        };
        if ext.composite_display_flag {
            r.u(1, "v_axis")?;
            r.u(3, "field_sequence")?;
            r.u(1, "sub_carrier")?;
            r.u(7, "burst_amplitude")?;
            r.u(8, "sub_carrier_phase")?;
        }
        Ok(ext)
    }

    pub fn is_field(&self) -> bool {
        self.picture_structure != picture_structure::FRAME
    }

    /// number_of_frame_centre_offsets (6.3.12).
    fn frame_centre_offsets(&self, progressive_sequence: bool) -> usize {
        match (progressive_sequence, self.repeat_first_field) {
            (true, true) if self.top_field_first => 3,
            (true, true) => 2,
            (true, false) => 1,
            (false, _) if self.is_field() => 1,
            (false, true) => 3,
            (false, false) => 2,
        }
    }
}

/// What an extension's syntax depends on: the sequence's progressive flag
/// and the picture's coding extension (for the picture display extension).
#[derive(Debug, Clone, Copy, Default)]
pub struct ExtensionContext {
    pub progressive_sequence: bool,
    pub picture_coding: Option<PictureCodingExtension>,
}

/// One extension_data() unit (6.2.2.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Extension {
    Sequence(SequenceExtension),
    SequenceDisplay(SequenceDisplayExtension),
    QuantMatrix(Box<QuantMatrixExtension>),
    PictureDisplay(PictureDisplayExtension),
    PictureCoding(PictureCodingExtension),
    /// Copyright, camera parameters, ITU-T extensions: nothing a decoder
    /// needs; read no further than the identifier.
    Other(u8),
}

impl Extension {
    pub fn parse(r: &mut BitReader, context: &ExtensionContext) -> Result<Self, Mpeg2Error> {
        start_code_value(r, "extension_start_code", start_code::EXTENSION)?;
        let id = r.u(4, "extension_start_code_identifier")? as u8;
        Ok(match id {
            extension_id::SEQUENCE => Self::Sequence(SequenceExtension::parse(r)?),
            extension_id::SEQUENCE_DISPLAY => {
                Self::SequenceDisplay(SequenceDisplayExtension::parse(r)?)
            }
            extension_id::QUANT_MATRIX => {
                Self::QuantMatrix(Box::new(QuantMatrixExtension::parse(r)?))
            }
            extension_id::PICTURE_DISPLAY => {
                let coding = context.picture_coding.ok_or_else(|| {
                    Mpeg2Error::Invalid(
                        "picture display extension before the picture coding extension".into(),
                    )
                })?;
                let count = coding.frame_centre_offsets(context.progressive_sequence);
                Self::PictureDisplay(PictureDisplayExtension::parse(r, count)?)
            }
            extension_id::PICTURE_CODING => Self::PictureCoding(PictureCodingExtension::parse(r)?),
            extension_id::SEQUENCE_SCALABLE => {
                return Err(Mpeg2Error::Unsupported(
                    "scalable MPEG-2 (sequence_scalable_extension)".into(),
                ))
            }
            other => Self::Other(other),
        })
    }
}

/// group_of_pictures_header() (6.2.2.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupOfPictures {
    pub time_code: u32,
    pub closed_gop: bool,
    pub broken_link: bool,
}

impl GroupOfPictures {
    pub fn parse(r: &mut BitReader) -> Result<Self, Mpeg2Error> {
        start_code_value(r, "group_start_code", start_code::GROUP)?;
        Ok(Self {
            time_code: r.u(25, "time_code")?,
            closed_gop: r.flag("closed_gop")?,
            broken_link: r.flag("broken_link")?,
        })
    }
}

/// picture_coding_type values (Table 6-12).
pub mod picture_coding_type {
    pub const I: u8 = 1;
    pub const P: u8 = 2;
    pub const B: u8 = 3;
    /// MPEG-1 only.
    pub const D: u8 = 4;

    /// The letter a picture type goes by; `?` for a forbidden value.
    pub fn name(coding_type: u8) -> &'static str {
        match coding_type {
            I => "I",
            P => "P",
            B => "B",
            D => "D",
            _ => "?",
        }
    }
}

/// picture_header() (6.2.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PictureHeader {
    pub temporal_reference: u16,
    pub picture_coding_type: u8,
    pub vbv_delay: u16,
    pub full_pel_forward_vector: bool,
    pub forward_f_code: u8,
    pub full_pel_backward_vector: bool,
    pub backward_f_code: u8,
}

impl PictureHeader {
    pub fn parse(r: &mut BitReader) -> Result<Self, Mpeg2Error> {
        start_code_value(r, "picture_start_code", start_code::PICTURE)?;
        let temporal_reference = r.u(10, "temporal_reference")? as u16;
        let picture_coding_type = r.u(3, "picture_coding_type")? as u8;
        if !(picture_coding_type::I..=picture_coding_type::D).contains(&picture_coding_type) {
            return Err(Mpeg2Error::Invalid(format!(
                "picture_coding_type {picture_coding_type} is reserved"
            )));
        }
        let vbv_delay = r.u(16, "vbv_delay")? as u16;
        let mut header = Self {
            temporal_reference,
            picture_coding_type,
            vbv_delay,
            full_pel_forward_vector: false,
            forward_f_code: 0,
            full_pel_backward_vector: false,
            backward_f_code: 0,
        };
        if matches!(
            picture_coding_type,
            picture_coding_type::P | picture_coding_type::B
        ) {
            header.full_pel_forward_vector = r.flag("full_pel_forward_vector")?;
            header.forward_f_code = r.u(3, "forward_f_code")? as u8;
        }
        if picture_coding_type == picture_coding_type::B {
            header.full_pel_backward_vector = r.flag("full_pel_backward_vector")?;
            header.backward_f_code = r.u(3, "backward_f_code")? as u8;
        }
        extra_information(r, "extra_bit_picture", "extra_information_picture")?;
        Ok(header)
    }

    pub fn is_reference(&self) -> bool {
        self.picture_coding_type != picture_coding_type::B
    }
}

/// slice() header fields (6.2.4), up to the first macroblock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SliceHeader {
    pub slice_vertical_position: u8,
    pub slice_vertical_position_extension: Option<u8>,
    pub quantiser_scale_code: u8,
    /// intra_slice, slice_picture_id_enable, slice_picture_id.
    pub slice_extension: Option<(bool, bool, u8)>,
}

impl SliceHeader {
    /// `vertical_size` is the sequence's: above 2800 lines a slice carries
    /// the extension of its row number.
    pub fn parse(r: &mut BitReader, vertical_size: u32) -> Result<Self, Mpeg2Error> {
        let slice_vertical_position = r.u(8, "slice_vertical_position")? as u8;
        if !start_code::is_slice(slice_vertical_position) {
            return Err(Mpeg2Error::Invalid(format!(
                "start code {slice_vertical_position:#04x} is no slice"
            )));
        }
        let slice_vertical_position_extension = if vertical_size > 2800 {
            Some(r.u(3, "slice_vertical_position_extension")? as u8)
        } else {
            None
        };
        let quantiser_scale_code = r.u(5, "quantiser_scale_code")? as u8;
        let slice_extension = if peek_bit(r)? {
            r.u(1, "slice_extension_flag")?;
            Some((
                r.flag("intra_slice")?,
                r.flag("slice_picture_id_enable")?,
                r.u(6, "slice_picture_id")? as u8,
            ))
        } else {
            None
        };
        extra_information(r, "extra_bit_slice", "extra_information_slice")?;
        Ok(Self {
            slice_vertical_position,
            slice_vertical_position_extension,
            quantiser_scale_code,
            slice_extension,
        })
    }
}

/// The next bit, not consumed: slice_extension_flag is only there when 1
/// (a 0 is the first extra_bit_slice).
fn peek_bit(r: &mut BitReader) -> Result<bool, Mpeg2Error> {
    Ok(r.peek(1, "slice_extension_flag")? == 1)
}
