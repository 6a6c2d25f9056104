//! Demuxing with FFmpeg: stream selection, AVCC/HVCC to Annex-B, container seek.
