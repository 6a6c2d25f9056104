//! Extended controls as the codec layer hands them to the session: an id
//! and a payload (a plain value or a compound struct such as
//! `v4l2r::bindings::v4l2_ctrl_h264_sps`), turned into the kernel's
//! `v4l2_ext_control` array only for the duration of one ioctl.

use std::ffi::c_void;
use std::fmt;
use std::sync::Arc;

use v4l2r::bindings::{self, v4l2_ext_control};
use v4l2r::controls::ExtControlTrait;

/// A marker type tying a stateless control's id to its kernel struct, for
/// the controls v4l2r has no typed version of:
/// `marker_control!(HevcSps, b::V4L2_CID_STATELESS_HEVC_SPS, b::v4l2_ctrl_hevc_sps);`
macro_rules! marker_control {
    ($name:ident, $id:expr, $payload:ty) => {
        #[doc = concat!("`", stringify!($id), "`.")]
        pub struct $name;
        impl ::v4l2r::controls::ExtControlTrait for $name {
            const ID: u32 = $id;
            type PAYLOAD = $payload;
        }
    };
}
pub(crate) use marker_control;

/// Memory the kernel reads a compound control from. Implemented for every
/// plain-data type; the bytes are never read on the Rust side.
pub trait CompoundPayload: Send + Sync {
    fn as_ptr(&self) -> *const c_void;
    fn size(&self) -> usize;
}

impl<T: Copy + Send + Sync + 'static> CompoundPayload for T {
    fn as_ptr(&self) -> *const c_void {
        (self as *const T).cast()
    }
    fn size(&self) -> usize {
        std::mem::size_of::<T>()
    }
}

/// A dynamic-array control's elements (HEVC slice parameters and entry
/// point offsets, AV1 tile groups): the kernel reads `len` structs.
struct ArrayPayload<T>(Vec<T>);

impl<T: Copy + Send + Sync + 'static> CompoundPayload for ArrayPayload<T> {
    fn as_ptr(&self) -> *const c_void {
        self.0.as_ptr().cast()
    }
    fn size(&self) -> usize {
        std::mem::size_of_val(self.0.as_slice())
    }
}

/// Cloning shares a compound payload (the slices of one picture carry the
/// same parameter sets).
#[derive(Clone)]
pub enum ControlPayload {
    /// A 32-bit (integer, menu, boolean) control.
    Value(i32),
    Value64(i64),
    /// A compound control: one struct (or an array of them).
    Compound(Arc<dyn CompoundPayload>),
}

#[derive(Clone)]
pub struct ExtControl {
    pub id: u32,
    pub payload: ControlPayload,
}

impl ExtControl {
    pub fn value(id: u32, value: i32) -> Self {
        Self {
            id,
            payload: ControlPayload::Value(value),
        }
    }

    /// The compound control `C` (v4l2r's typed controls, or a codec's own
    /// where v4l2r has none), holding one `v4l2_ctrl_*` struct.
    pub fn typed<C>(data: C::PAYLOAD) -> Self
    where
        C: ExtControlTrait,
        C::PAYLOAD: Copy + Send + Sync + 'static,
    {
        Self::compound(C::ID, data)
    }

    /// The dynamic-array control `C` holding `elements` (its size says how
    /// many the kernel reads).
    pub fn array<C>(elements: Vec<C::PAYLOAD>) -> Self
    where
        C: ExtControlTrait,
        C::PAYLOAD: Copy + Send + Sync + 'static,
    {
        Self {
            id: C::ID,
            payload: ControlPayload::Compound(Arc::new(ArrayPayload(elements))),
        }
    }

    /// A compound control holding `data` (a `v4l2_ctrl_*` struct, or a
    /// fixed-size array of them).
    pub fn compound<T: Copy + Send + Sync + 'static>(id: u32, data: T) -> Self {
        Self {
            id,
            payload: ControlPayload::Compound(Arc::new(data)),
        }
    }

    /// The kernel's view, pointing into `self` (valid while `self` lives).
    pub(crate) fn raw(&self) -> v4l2_ext_control {
        let mut raw = v4l2_ext_control {
            id: self.id,
            ..Default::default()
        };
        match &self.payload {
            ControlPayload::Value(v) => raw.__bindgen_anon_1.value = *v,
            ControlPayload::Value64(v) => raw.__bindgen_anon_1.value64 = *v,
            ControlPayload::Compound(data) => {
                let data: &dyn CompoundPayload = data.as_ref();
                raw.size = data.size() as u32;
                // The kernel only reads through this pointer for S_EXT_CTRLS.
                raw.__bindgen_anon_1.ptr = data.as_ptr() as *mut c_void;
            }
        }
        raw
    }
}

impl fmt::Debug for ExtControl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.payload {
            ControlPayload::Value(v) => write!(f, "{}={v}", control_name(self.id)),
            ControlPayload::Value64(v) => write!(f, "{}={v}", control_name(self.id)),
            ControlPayload::Compound(d) => {
                let d: &dyn CompoundPayload = d.as_ref();
                write!(f, "{}[{} bytes]", control_name(self.id), d.size())
            }
        }
    }
}

/// A readable name for the stateless control ids, for error messages.
pub fn control_name(id: u32) -> String {
    let name = match id {
        bindings::V4L2_CID_STATELESS_H264_DECODE_MODE => "H264_DECODE_MODE",
        bindings::V4L2_CID_STATELESS_H264_START_CODE => "H264_START_CODE",
        bindings::V4L2_CID_STATELESS_H264_SPS => "H264_SPS",
        bindings::V4L2_CID_STATELESS_H264_PPS => "H264_PPS",
        bindings::V4L2_CID_STATELESS_H264_SCALING_MATRIX => "H264_SCALING_MATRIX",
        bindings::V4L2_CID_STATELESS_H264_PRED_WEIGHTS => "H264_PRED_WEIGHTS",
        bindings::V4L2_CID_STATELESS_H264_SLICE_PARAMS => "H264_SLICE_PARAMS",
        bindings::V4L2_CID_STATELESS_H264_DECODE_PARAMS => "H264_DECODE_PARAMS",
        bindings::V4L2_CID_STATELESS_HEVC_SPS => "HEVC_SPS",
        bindings::V4L2_CID_STATELESS_HEVC_PPS => "HEVC_PPS",
        bindings::V4L2_CID_STATELESS_HEVC_SLICE_PARAMS => "HEVC_SLICE_PARAMS",
        bindings::V4L2_CID_STATELESS_HEVC_DECODE_PARAMS => "HEVC_DECODE_PARAMS",
        bindings::V4L2_CID_STATELESS_HEVC_SCALING_MATRIX => "HEVC_SCALING_MATRIX",
        bindings::V4L2_CID_STATELESS_HEVC_DECODE_MODE => "HEVC_DECODE_MODE",
        bindings::V4L2_CID_STATELESS_HEVC_START_CODE => "HEVC_START_CODE",
        bindings::V4L2_CID_STATELESS_HEVC_ENTRY_POINT_OFFSETS => "HEVC_ENTRY_POINT_OFFSETS",
        bindings::V4L2_CID_STATELESS_VP9_COMPRESSED_HDR => "VP9_COMPRESSED_HDR",
        bindings::V4L2_CID_STATELESS_MPEG2_QUANTISATION => "MPEG2_QUANTISATION",
        bindings::V4L2_CID_STATELESS_AV1_TILE_GROUP_ENTRY => "AV1_TILE_GROUP_ENTRY",
        bindings::V4L2_CID_STATELESS_AV1_FILM_GRAIN => "AV1_FILM_GRAIN",
        bindings::V4L2_CID_STATELESS_FWHT_PARAMS => "FWHT_PARAMS",
        bindings::V4L2_CID_STATELESS_VP8_FRAME => "VP8_FRAME",
        bindings::V4L2_CID_STATELESS_VP9_FRAME => "VP9_FRAME",
        bindings::V4L2_CID_STATELESS_MPEG2_SEQUENCE => "MPEG2_SEQUENCE",
        bindings::V4L2_CID_STATELESS_MPEG2_PICTURE => "MPEG2_PICTURE",
        bindings::V4L2_CID_STATELESS_AV1_SEQUENCE => "AV1_SEQUENCE",
        bindings::V4L2_CID_STATELESS_AV1_FRAME => "AV1_FRAME",
        _ => return format!("control {id:#010x}"),
    };
    format!("{name} ({id:#010x})")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_controls_point_at_their_payload() {
        let sps = bindings::v4l2_ctrl_h264_sps {
            level_idc: 31,
            ..Default::default()
        };
        let control = ExtControl::compound(bindings::V4L2_CID_STATELESS_H264_SPS, sps);
        let raw = control.raw();
        assert_eq!({ raw.id }, bindings::V4L2_CID_STATELESS_H264_SPS);
        assert_eq!(
            { raw.size } as usize,
            std::mem::size_of::<bindings::v4l2_ctrl_h264_sps>()
        );
        // SAFETY: `raw.ptr` was set from the payload of `control`, alive here.
        let payload = raw.__bindgen_anon_1;
        // SAFETY: as above.
        let seen = unsafe { *(payload.ptr as *const bindings::v4l2_ctrl_h264_sps) };
        assert_eq!(seen.level_idc, 31);

        let mode = ExtControl::value(bindings::V4L2_CID_STATELESS_H264_DECODE_MODE, 1);
        let raw = mode.raw();
        assert_eq!({ raw.size }, 0);
        // SAFETY: `value` is the member written for a plain control.
        let payload = raw.__bindgen_anon_1;
        // SAFETY: `value` is the member written for a plain control.
        assert_eq!(unsafe { payload.value }, 1);
    }

    #[test]
    fn arrays_carry_every_element() {
        struct Offsets;
        impl ExtControlTrait for Offsets {
            const ID: u32 = bindings::V4L2_CID_STATELESS_HEVC_ENTRY_POINT_OFFSETS;
            type PAYLOAD = u32;
        }
        let control = ExtControl::array::<Offsets>(vec![7, 8, 9]);
        let raw = control.raw();
        assert_eq!({ raw.size }, 12);
        let payload = raw.__bindgen_anon_1;
        // SAFETY: `ptr` points at the 3 elements `control` holds, alive here.
        let seen = unsafe { std::slice::from_raw_parts(payload.ptr as *const u32, 3) };
        assert_eq!(seen, &[7, 8, 9]);
        let typed =
            ExtControl::typed::<v4l2r::controls::codec::H264Sps>(bindings::v4l2_ctrl_h264_sps {
                level_idc: 40,
                ..Default::default()
            });
        assert_eq!(typed.id, bindings::V4L2_CID_STATELESS_H264_SPS);
    }

    #[test]
    fn names_say_which_control() {
        assert_eq!(
            control_name(bindings::V4L2_CID_STATELESS_H264_DECODE_PARAMS),
            "H264_DECODE_PARAMS (0x00a40907)"
        );
        assert_eq!(control_name(0x1234), "control 0x00001234");
    }
}
