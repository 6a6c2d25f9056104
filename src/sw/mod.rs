//! Software decoding with libavcodec into frames the display can show.
