//! V4L2 stateless decoders: discovery, queues, requests, buffers.
pub mod buffers;
pub mod controls;
pub mod decoder;
pub mod discovery;
pub mod formats;
pub mod h264;
pub mod requests;
pub mod session;
pub mod topology;
