//! H.264, HEVC, VP8, VP9, MPEG-2 and AV1 through reel's V4L2 stateless
//! path, in the QEMU guest with visl, in one guest boot (boot.rs) and one
//! table (rows.rs: a row per clip, the checks that apply to it).
//!
//! The same checks for every row (oracle_checks.rs, playback_checks.rs),
//! failures collected over the rows and reported at once, each naming its
//! clip (failures.rs):
//! - the normalised visl traces equal those of GStreamer's `v4l2sl*dec`
//!   on the same clips and the same visl settings (the oracle stored by
//!   `support::oracle`: 1.22 on bookworm for H.264, VP8, VP9 and MPEG-2,
//!   1.26 on trixie for HEVC and AV1), frame by frame, slice by slice, and
//!   so do the OUTPUT buffers' bytes (size and sha256 of each); a clip
//!   GStreamer cannot decode whole on visl against its parts;
//! - H.264 and HEVC forced frame-based with Annex-B start codes: one
//!   request per picture carrying every slice;
//! - `--output framemd5` twice: FFmpeg's frame count, increasing pts, the
//!   same output twice;
//! - an exact seek lands on the first frame at or after the target (mpv's
//!   rule);
//! - in weston 14 headless every presented frame is visl's own CAPTURE
//!   buffer (zero-copy), looping and paused after a seek;
//! - 24 damaged copies per codec (support::damage; all 200 go through the
//!   software path in tests/damage_software.rs): no panic, no hang, the
//!   exit status README documents, every picture from the next key frame
//!   on output;
//! - the per-request log lines (`-vv`) name the timestamps, references
//!   and picture order visl received (request_log.rs);
//! - `reel probe` names the decoder; every guest call exits 0.
//!
//! Each codec's own checks are in its module (h264.rs, vp8.rs, vp9.rs,
//! mpeg2.rs, av1.rs), its guest calls part of the same boot. If the guest
//! cannot start, every test fails with the reason.

#[path = "../support/mod.rs"]
mod support;

mod boot;
mod failures;
mod oracle_checks;
mod playback_checks;
mod request_log;
mod row_runs;
mod rows;

mod av1;
mod h264;
mod mpeg2;
mod vp8;
mod vp9;
