//! The tests that need no guest, as one test binary: the shared support
//! code (tests/support) is compiled once for all of them instead of once
//! per file. Each file is a module named as the binary it was before
//! (`cargo test --test host demux::` runs the demuxer's tests).

#[path = "../support/mod.rs"]
mod support;

mod av1_headers;
mod av1_output_order;
mod bad_input;
mod check;
mod config_file;
mod demux;
mod demux_fwht;
mod detile_gstreamer;
mod display_convert;
mod display_harness;
mod display_weston;
mod fluster;
mod framemd5;
mod h264_controls;
mod h264_dpb_oracle;
mod h264_headers;
mod h264_output_order;
mod h264_robustness;
mod hevc_entry_points;
mod hevc_headers;
mod hevc_output_order;
mod ipc_mpv;
mod kiosk_sway;
mod library_scope;
mod mpeg2_headers;
mod network;
mod osd_weston;
mod player_weston;
mod raw_output;
mod seek_exact;
mod subtitles_weston;
mod visl_trace_normaliser;
mod vp8_headers;
mod vp9_headers;
