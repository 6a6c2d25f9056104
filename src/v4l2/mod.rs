//! V4L2 stateless decoders: discovery, queues, requests, buffers.
pub mod codec;
pub mod controls;
pub mod decoder;
pub mod detile;
pub mod detiled_view;
pub mod discovery;
pub mod formats;
pub mod fwht;
pub mod h264;
pub mod hevc;
pub mod output_queue;
pub mod registry;
pub mod session;
pub mod slice_mode;
pub mod topology;
pub mod vp9;
