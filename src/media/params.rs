//! libavcodec codec parameters of the selected stream, owned and shareable,
//! with the extradata replaced by what `Demuxer` hands out.

use std::fmt;

use ffmpeg_next::codec::Parameters;
use ffmpeg_next::ffi;

/// An owned copy of a stream's `AVCodecParameters`.
#[derive(Clone)]
pub struct CodecParameters(Parameters);

// SAFETY: `AVCodecParameters` is plain data with no interior mutability or
// thread affinity; through `&CodecParameters` it is only read (copied into a
// decoder context), so shared access from several threads is sound.
unsafe impl Sync for CodecParameters {}

impl CodecParameters {
    pub(crate) fn new(params: Parameters) -> Self {
        Self(params)
    }

    pub(crate) fn get(&self) -> &Parameters {
        &self.0
    }

    /// The codec extradata as stored.
    pub(crate) fn extradata(&self) -> &[u8] {
        // SAFETY: the pointer comes from an owned, valid AVCodecParameters;
        // `extradata` is either null or `extradata_size` readable bytes.
        unsafe {
            let p = self.0.as_ptr();
            let size = (*p).extradata_size;
            if (*p).extradata.is_null() || size <= 0 {
                return &[];
            }
            std::slice::from_raw_parts((*p).extradata, size as usize)
        }
    }

    /// Replaces the extradata (empty slice: none).
    pub(crate) fn set_extradata(&mut self, data: &[u8]) {
        // SAFETY: we own the parameters; the old buffer was allocated by
        // libavcodec with av_malloc and is freed with av_freep. The new buffer
        // has the input padding libavcodec requires, zeroed.
        unsafe {
            let p = self.0.as_mut_ptr();
            ffi::av_freep(std::ptr::addr_of_mut!((*p).extradata).cast());
            (*p).extradata_size = 0;
            if data.is_empty() {
                return;
            }
            let padded = data.len() + ffi::AV_INPUT_BUFFER_PADDING_SIZE as usize;
            let buf = ffi::av_mallocz(padded) as *mut u8;
            if buf.is_null() {
                tracing::error!("out of memory copying {} bytes of extradata", data.len());
                return;
            }
            std::ptr::copy_nonoverlapping(data.as_ptr(), buf, data.len());
            (*p).extradata = buf;
            (*p).extradata_size = data.len() as i32;
        }
    }
}

impl fmt::Debug for CodecParameters {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CodecParameters")
            .field("id", &self.0.id())
            .field("extradata_len", &self.extradata().len())
            .finish()
    }
}
