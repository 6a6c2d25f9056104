//! HEVC for stateless decoders: picture order count, reference picture
//! sets and the decoded picture buffer.

pub mod dpb;
pub mod refs;
