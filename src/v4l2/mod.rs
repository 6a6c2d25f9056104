//! V4L2 stateless decoders: discovery, queues, requests, buffers.
pub mod topology;
