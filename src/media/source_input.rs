//! A libavformat input on a source for readers besides the demuxer (the
//! audio thread's, the cover art's): a URL through `network` under its
//! whitelist, a local path by name behind `file:` under the local one.

use std::ops::{Deref, DerefMut};
use std::path::Path;

use ff::format::context::Input;
use ffmpeg_next as ff;

use super::location::{Location, LOCAL_PROTOCOL_WHITELIST};
use super::network::{self, NetworkInput};
use super::MediaError;

/// An open input, with what its hooks read kept alive beside it.
pub enum SourceInput {
    Local(Input),
    Network(NetworkInput),
}

impl SourceInput {
    /// Opens and probes the source `path` names.
    pub fn open(path: &Path) -> Result<SourceInput, MediaError> {
        super::init_ffmpeg();
        match Location::of(path) {
            Location::Url { url, scheme } => {
                network::open(url, scheme, &network::SourceLink::default()).map(Self::Network)
            }
            Location::Local(path) => open_local(path).map(Self::Local).map_err(|e| {
                MediaError::Open(format!(
                    "{}: cannot open as a media file ({e})",
                    path.display()
                ))
            }),
        }
    }
}

fn open_local(path: &Path) -> Result<Input, ff::Error> {
    // ffmpeg-next takes names as UTF-8 without NUL (and panics on others).
    let name = match path.to_str() {
        Some(text) if !text.contains('\0') => format!("file:{text}"),
        _ => return Err(ff::Error::InvalidData),
    };
    let mut options = ff::Dictionary::new();
    options.set("protocol_whitelist", LOCAL_PROTOCOL_WHITELIST);
    ff::format::input_with_dictionary(&name, options)
}

impl Deref for SourceInput {
    type Target = Input;
    fn deref(&self) -> &Input {
        match self {
            Self::Local(input) => input,
            Self::Network(network) => &network.input,
        }
    }
}

impl DerefMut for SourceInput {
    fn deref_mut(&mut self) -> &mut Input {
        match self {
            Self::Local(input) => input,
            Self::Network(network) => &mut network.input,
        }
    }
}

/// Tells libavformat to drop the packets of every stream but `keep`: a
/// reader of one stream (the video, the sound, a subtitle track) does not
/// pay for the others.
pub fn discard_other_streams(input: &mut Input, keep: usize) {
    // SAFETY: the context is open and ours; we write the `discard` field of
    // its streams, which libavformat reads on each read.
    unsafe {
        let ctx = input.as_mut_ptr();
        for i in 0..(*ctx).nb_streams as usize {
            if i != keep {
                (**(*ctx).streams.add(i)).discard = ff::ffi::AVDiscard::AVDISCARD_ALL;
            }
        }
    }
}
