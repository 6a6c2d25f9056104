//! Where a source is: a local file, or a URL of a protocol reel plays, and
//! which of FFmpeg's protocols each may use.
//!
//! An argument is a URL when it starts with `scheme://` and the scheme is
//! one reel knows ([`Scheme`]); anything else — `C:foo`, `a:b.mkv`, a
//! scheme reel does not play — is a local path, opened through reel's own
//! file I/O as before. What a source may open is its protocol whitelist
//! (FFmpeg's `protocol_whitelist`): a playlist or manifest fetched from the
//! network can name only its own protocol family, never `file`, and a local
//! file never reaches the network.

use std::path::Path;

/// The protocols reel opens sources of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheme {
    Http,
    Https,
    Rtsp,
    Rtsps,
    Udp,
    Rtp,
    Srt,
}

impl Scheme {
    pub const ALL: [Scheme; 7] = [
        Self::Http,
        Self::Https,
        Self::Rtsp,
        Self::Rtsps,
        Self::Udp,
        Self::Rtp,
        Self::Srt,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Self::Http => "http",
            Self::Https => "https",
            Self::Rtsp => "rtsp",
            Self::Rtsps => "rtsps",
            Self::Udp => "udp",
            Self::Rtp => "rtp",
            Self::Srt => "srt",
        }
    }

    fn from_name(name: &str) -> Option<Scheme> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }

    /// FFmpeg's protocols a source of this scheme may open, itself and
    /// whatever its playlists, manifests and redirects name included.
    ///
    /// - http: `http,tcp`, and `crypto` for AES-128 HLS segments; `https`
    ///   and `tls` too, since HLS CDNs and redirects move from http to
    ///   https (never the other way round is a concern: both are network);
    /// - https: the same minus plain `http` (a secure source stays secure);
    /// - rtsp(s): the RTSP demuxer's own connections (`tcp`, `tls` for
    ///   rtsps), the media's (`rtp`, `udp`), and `http` for RTSP tunnelled
    ///   in HTTP (`--rtsp-transport http`; not for rtsps, which stays
    ///   secure);
    /// - udp, rtp: the datagram protocols only;
    /// - srt: `srt` only.
    ///
    /// `file`, `pipe`, `data` and every other protocol are never listed.
    pub fn protocol_whitelist(self) -> &'static str {
        match self {
            Self::Http => "http,https,tcp,tls,crypto,httpproxy",
            Self::Https => "https,tls,tcp,crypto,httpproxy",
            Self::Rtsp => "rtsp,rtp,srtp,udp,tcp,http",
            Self::Rtsps => "rtsps,rtsp,rtp,srtp,udp,tcp,tls",
            Self::Udp => "udp",
            Self::Rtp => "rtp,udp",
            Self::Srt => "srt",
        }
    }

    /// Whether the source is a stream of its own (no file behind it) that
    /// libavformat opens without an I/O context: RTSP's demuxer.
    pub fn is_rtsp(self) -> bool {
        matches!(self, Self::Rtsp | Self::Rtsps)
    }
}

/// What a local source may open: the file itself (through reel's I/O) and,
/// for a local HLS playlist or concat list, other local files and
/// decryption; never the network, which the user did not name.
pub const LOCAL_PROTOCOL_WHITELIST: &str = "file,crypto";

/// A source as the user named it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location<'a> {
    Local(&'a Path),
    Url { url: &'a str, scheme: Scheme },
}

impl<'a> Location<'a> {
    /// Where `argument` points: a URL of a known scheme, else a local path.
    pub fn of(argument: &'a Path) -> Location<'a> {
        let Some(text) = argument.to_str() else {
            return Self::Local(argument);
        };
        match url_scheme(text).and_then(Scheme::from_name) {
            Some(scheme) => Self::Url { url: text, scheme },
            None => Self::Local(argument),
        }
    }

    pub fn is_url(&self) -> bool {
        matches!(self, Self::Url { .. })
    }
}

/// The scheme of a `scheme://...` text (lower-cased letters, digits, `+`,
/// `-`, `.`, starting with a letter, as RFC 3986 spells it), if it is one.
pub fn url_scheme(text: &str) -> Option<&str> {
    let (scheme, _) = text.split_once("://")?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    let valid = first.is_ascii_lowercase()
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "+-.".contains(c));
    valid.then_some(scheme)
}

/// The schemes reel plays, for error messages.
pub fn known_schemes() -> String {
    Scheme::ALL.map(Scheme::name).join(", ")
}

/// Whether `protocol` is one of the comma-separated `whitelist`.
pub fn whitelist_allows(whitelist: &str, protocol: &str) -> bool {
    whitelist.split(',').any(|p| p == protocol)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_of_known_schemes_and_local_paths() {
        let url = |s: &'static str| Location::of(Path::new(s));
        assert_eq!(
            url("http://127.0.0.1:8000/clip.mp4"),
            Location::Url {
                url: "http://127.0.0.1:8000/clip.mp4",
                scheme: Scheme::Http
            }
        );
        assert!(url("https://host/live.m3u8").is_url());
        assert!(url("rtsp://host:8554/cam").is_url());
        assert!(url("udp://239.0.0.1:1234").is_url());
        for local in [
            "clip.mp4",
            "C:foo",
            "a:b.mkv",
            "/media/x:y.ts",
            "./http://host/x",
            "HTTP://host/x",
            "gopher://host/x",
            "file:///etc/passwd",
            "1http://x",
        ] {
            assert!(!url(local).is_url(), "{local} taken for a URL");
        }
        assert_eq!(url_scheme("gopher://host/x"), Some("gopher"));
        assert_eq!(url_scheme("svn+ssh://host"), Some("svn+ssh"));
        assert_eq!(url_scheme("a:b.mkv"), None);
    }

    #[test]
    fn whitelists_never_name_local_protocols() {
        for scheme in Scheme::ALL {
            let list = scheme.protocol_whitelist();
            for local in ["file", "pipe", "data", "fd", "subfile", "concat", "unix"] {
                assert!(!whitelist_allows(list, local), "{scheme:?} allows {local}");
            }
        }
        assert!(!whitelist_allows(
            Scheme::Https.protocol_whitelist(),
            "http"
        ));
        assert!(whitelist_allows(Scheme::Http.protocol_whitelist(), "tcp"));
        for network in ["http", "https", "tcp", "tls", "udp", "rtp"] {
            assert!(!whitelist_allows(LOCAL_PROTOCOL_WHITELIST, network));
        }
    }
}
