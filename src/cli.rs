//! Command-line interface: what the user can ask of reel.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Parser, Debug)]
#[command(
    name = "reel",
    version,
    about = "A Wayland video player: V4L2 stateless decoding, zero-copy dmabuf presentation",
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    // The configuration file's options come first: the command line's win.
    args_override_self = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub play: PlayArgs,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Report the decoders, the compositor's formats and which path reel would take.
    Probe(ProbeArgs),
    /// Decode FILE through the V4L2 decoder and the software decoder side
    /// by side and compare every picture (exit 0: all equal, 1: a difference).
    Check(CheckArgs),
}

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// The file (or elementary stream) to check.
    pub file: PathBuf,
    /// Use this V4L2 decoder's video node instead of discovering one.
    #[arg(long, value_name = "PATH")]
    pub device: Option<PathBuf>,
    /// Write both pictures of the first differing frames here as PNG.
    #[arg(long, value_name = "DIR")]
    pub dump_dir: Option<PathBuf>,
    /// How many differing frames `--dump-dir` writes.
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub dump_count: usize,
    /// Software decoder threads (0: one per core).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    #[command(flatten)]
    pub log: LogArgs,
    #[command(flatten)]
    pub network: NetworkArgs,
}

#[derive(Args, Debug)]
pub struct ProbeArgs {
    /// Also say how this file (or URL) would be played.
    pub file: Option<PathBuf>,
    #[command(flatten)]
    pub log: LogArgs,
    #[command(flatten)]
    pub network: NetworkArgs,
}

/// How network sources are opened (see README: Network sources).
#[derive(Args, Debug, Clone)]
pub struct NetworkArgs {
    /// Verify the TLS certificates of https (and other TLS) sources against
    /// the system's trust store: yes or no.
    #[arg(long, value_name = "yes|no", default_value = "yes", value_parser = parse_yes_no, action = clap::ArgAction::Set)]
    pub tls_verify: bool,

    /// Give up on a network source that does not answer (connect or read)
    /// for this many seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0, value_parser = parse_timeout)]
    pub network_timeout: f64,

    /// How an rtsp:// source's media comes: interleaved in the RTSP
    /// connection (tcp, mpv's default: through firewalls and NAT, no
    /// loss), as RTP over udp or udp_multicast, tunnelled in http, or as
    /// FFmpeg chooses (lavf: UDP, then TCP when nothing arrives).
    #[arg(long, value_name = "tcp|udp|udp_multicast|http|lavf", default_value = "tcp",
          value_parser = crate::media::network::RtspTransport::parse)]
    pub rtsp_transport: crate::media::network::RtspTransport,
}

impl NetworkArgs {
    pub fn options(&self) -> crate::media::network::NetworkOptions {
        crate::media::network::NetworkOptions {
            tls_verify: self.tls_verify,
            timeout: Duration::from_secs_f64(self.network_timeout),
            rtsp_transport: self.rtsp_transport,
        }
    }
}

fn parse_yes_no(text: &str) -> Result<bool, String> {
    match text {
        "yes" => Ok(true),
        "no" => Ok(false),
        _ => Err(format!("expected yes or no, got '{text}'")),
    }
}

fn parse_timeout(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(s) if s > 0.0 && s <= 86_400.0 => Ok(s),
        _ => Err(format!(
            "'{text}' is not a number of seconds from 0 to 86400"
        )),
    }
}

#[derive(Args, Debug, Clone)]
pub struct LogArgs {
    /// More log output (-v info, -vv debug: every frame's path, -vvv trace).
    /// RUST_LOG, when set, takes precedence.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,
}

#[derive(Args, Debug, Clone)]
pub struct PlayArgs {
    /// Files or URLs to play, in order (a playlist).
    #[arg(required_unless_present = "idle", value_name = "FILE")]
    pub files: Vec<PathBuf>,

    /// Where decoded frames go.
    #[arg(long, value_enum, default_value_t = Output::Wayland)]
    pub output: Output,

    /// Write `--output framemd5` or `raw` to this file instead of stdout.
    #[arg(long, value_name = "PATH")]
    pub output_file: Option<PathBuf>,

    /// `--output raw` in this layout (FFmpeg's name: rgb24, nv12,
    /// yuv420p10le, ...) instead of the stream's own.
    #[arg(long, value_name = "NAME")]
    pub pix_fmt: Option<String>,

    /// Start in fullscreen.
    #[arg(long)]
    pub fullscreen: bool,

    /// Show only this rectangle of the picture, in the video's pixels
    /// (mpv's spelling): a video wall's tile, e.g. 960x540+960+0.
    #[arg(long, value_name = "WxH+X+Y")]
    pub video_crop: Option<crate::display::crop::Rect>,

    /// Play the playlist again from the start at its end, forever.
    #[arg(long = "loop")]
    pub looping: bool,

    /// Open the next file of the playlist while the current one plays, so
    /// that its first frame follows the last one's at the next refresh
    /// (no gap, no black frame) and its sound the last one's last sample
    /// on the same output: yes or no (each file opened at its turn).
    #[arg(long, value_name = "yes|no", default_value = "yes", value_parser = parse_yes_no, action = clap::ArgAction::Set)]
    pub gapless: bool,

    /// Play the playlist as if it had started at TIME and looped ever since
    /// (Unix seconds, or RFC 3339 such as 2026-11-29T08:00:00Z): players
    /// given one TIME, on machines whose clocks agree (chrony, linuxptp),
    /// show the same frame at the same moment. Seeks and steps are ignored.
    #[arg(long, value_name = "TIME", value_parser = crate::player::schedule::parse_epoch)]
    pub sync_epoch: Option<Duration>,

    /// Play at this speed, 0.25 to 4 (sound time-stretched, its pitch
    /// kept); `[`/`]`, `{`/`}` and backspace change it while playing.
    #[arg(long, value_name = "FACTOR", default_value_t = 1.0, value_parser = crate::player::speed::parse_speed)]
    pub speed: f64,

    /// The subtitle track to show: its id (from 1, the file's own tracks
    /// first, then subtitle files), no, or auto (a subtitle file given or
    /// found beside the video, else the file's default track).
    #[arg(long, value_name = "ID|no|auto", default_value = "auto", value_parser = crate::player::subtitles::parse_sid)]
    pub sid: crate::player::subtitles::SubtitleChoice,

    /// No subtitles at the start (`--sid no`).
    #[arg(long)]
    pub no_sub: bool,

    /// A subtitle file (SubRip, ASS, WebVTT) to offer with every file;
    /// repeatable. `film.srt` (`.ass`, `.ssa`, `.vtt`) beside `film.mkv`
    /// is offered without it.
    #[arg(long = "sub-file", value_name = "FILE")]
    pub sub_files: Vec<PathBuf>,

    /// Show subtitles this many seconds later (negative: earlier).
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 0.0,
        allow_hyphen_values = true
    )]
    pub sub_delay: f64,

    /// Show subtitles (yes) or hide them (no; `v` toggles).
    #[arg(long, value_name = "yes|no", default_value = "yes", value_parser = parse_yes_no, action = clap::ArgAction::Set)]
    pub sub_visibility: bool,

    /// At quit, save the position in the file playing, so that opening it
    /// again resumes there (`Q` saves whatever this says).
    #[arg(long)]
    pub save_position_on_quit: bool,

    /// Resume a file where a saved position says: yes or no.
    #[arg(long, value_name = "yes|no", default_value = "yes", value_parser = parse_yes_no, action = clap::ArgAction::Set)]
    pub resume_playback: bool,

    /// Start at this position: seconds (`12.5`) or `[[HH:]MM:]SS[.frac]`.
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    pub start: Option<Duration>,

    /// Start paused on the first frame (mpv's spelling; `--paused` too).
    #[arg(long = "pause", visible_alias = "paused")]
    pub paused: bool,

    /// Decoder choice: auto (V4L2 if a decoder handles the stream, else
    /// software), no (software only), v4l2 (V4L2 only, no fallback).
    #[arg(long, value_enum, default_value_t = Hwdec::Auto)]
    pub hwdec: Hwdec,

    /// Use this V4L2 decoder's video node instead of discovering one.
    #[arg(long, value_name = "PATH")]
    pub device: Option<PathBuf>,

    /// Present through wl_shm even when the compositor accepts dmabufs.
    #[arg(long)]
    pub shm: bool,

    /// Copy decoded frames even when the compositor could show the
    /// decoder's own buffers (zero-copy).
    #[arg(long)]
    pub copy: bool,

    /// Listen for commands on this Unix socket (see README: Remote control).
    #[arg(long, value_name = "PATH")]
    pub control: Option<PathBuf>,

    /// Read no configuration file (see README: Configuration file).
    #[arg(long)]
    pub no_config: bool,

    /// Serve mpv's JSON IPC on this Unix socket (see README: JSON IPC).
    #[arg(long, value_name = "PATH")]
    pub input_ipc_server: Option<PathBuf>,

    /// With nothing (left) to play, stay open and wait for `loadfile`.
    #[arg(long)]
    pub idle: bool,

    /// Play the file's Nth audio stream (from 1) instead of its default one.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub aid: Option<u32>,

    /// Play no sound.
    #[arg(long, conflicts_with = "aid")]
    pub no_audio: bool,

    /// Play sound on this output device (`reel probe` lists them; default:
    /// the system's default, i.e. the sound server).
    #[arg(long, value_name = "NAME")]
    pub audio_device: Option<String>,

    /// Start volume in percent, 0..100 (on mpv's cubic curve: 50 is -18 dB).
    #[arg(long, value_name = "PERCENT", default_value_t = 100.0, value_parser = parse_volume)]
    pub volume: f64,

    /// Print presentation statistics at exit.
    #[arg(long)]
    pub stats: bool,

    /// What the on-screen display shows unasked: 0 nothing, 1 position and
    /// state for a second after a seek, pause, step or file change, 3 the
    /// position, frame and pts all the time (`o` toggles 3, `i` the stats
    /// page).
    #[arg(long, value_name = "0|1|3", default_value_t = 1, value_parser = parse_osd_level)]
    pub osd_level: i64,

    /// Software decoder threads (0: one per core).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,

    #[command(flatten)]
    pub network: NetworkArgs,

    #[command(flatten)]
    pub log: LogArgs,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// A window on the Wayland compositor.
    Wayland,
    /// Per-frame MD5s in the format of `ffmpeg -f framemd5`, on stdout.
    Framemd5,
    /// Every decoded picture in output order, planes packed in the
    /// stream's own planar layout (yuv420p, yuv420p10le, ...), byte for
    /// byte what `ffmpeg -f rawvideo` writes, on stdout (or --output-file).
    /// Changes of size or layout are logged.
    Raw,
    /// Decode as fast as possible and discard (benchmarks); under remote
    /// control (`--input-ipc-server`, `--control`, `--idle`) play in real
    /// time and discard, as mpv's `--vo=null` does.
    Null,
}

pub use crate::player::commands::parse_time;

fn parse_volume(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(v) if (0.0..=100.0).contains(&v) => Ok(v),
        _ => Err(format!("'{text}' is not a volume from 0 to 100")),
    }
}
pub use crate::player::decoder_choice::Hwdec;

/// `--osd-level`: mpv's 0, 1 or 3.
fn parse_osd_level(text: &str) -> Result<i64, String> {
    text.parse::<i64>()
        .ok()
        .filter(|&n| crate::osd::OsdLevel::from_number(n).is_some())
        .ok_or_else(|| format!("expected 0, 1 or 3, got '{text}'"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_times() {
        assert_eq!(parse_time("12.5"), Ok(Duration::from_millis(12_500)));
        assert_eq!(parse_time("1:02.5"), Ok(Duration::from_millis(62_500)));
        assert_eq!(parse_time("1:00:02"), Ok(Duration::from_secs(3602)));
        assert_eq!(parse_time("0"), Ok(Duration::ZERO));
        for bad in ["", "-1", "1:60", "a", "1:2:3:4", "nan", "inf", "1e400"] {
            assert!(parse_time(bad).is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn the_rtsp_transport_is_tcp_unless_told() {
        use crate::media::network::RtspTransport;
        let transport = |args: &[&str]| {
            Cli::try_parse_from([&["reel"], args, &["rtsp://cam/x"]].concat())
                .map(|cli| cli.play.network.options().rtsp_transport)
        };
        assert_eq!(transport(&[]).ok(), Some(RtspTransport::Tcp));
        assert_eq!(
            transport(&["--rtsp-transport", "udp"]).ok(),
            Some(RtspTransport::Udp)
        );
        assert_eq!(
            transport(&["--rtsp-transport", "lavf"]).ok(),
            Some(RtspTransport::Lavf)
        );
        assert!(transport(&["--rtsp-transport", "sctp"]).is_err());
    }

    #[test]
    fn probe_and_files_do_not_mix() {
        let cli = Cli::try_parse_from(["reel", "probe"]).expect("probe parses");
        assert!(matches!(cli.command, Some(Command::Probe(_))));
        let cli = Cli::try_parse_from(["reel", "check", "-v", "--dump-dir", "d", "a.264"])
            .expect("check parses");
        let Some(Command::Check(check)) = cli.command else {
            panic!("not check");
        };
        assert_eq!((check.dump_count, check.log.verbose), (4, 1));
        assert!(Cli::try_parse_from(["reel", "check"]).is_err());
        let cli = Cli::try_parse_from(["reel", "--loop", "a.mp4", "b.mkv"]).expect("files parse");
        assert!(cli.command.is_none());
        assert_eq!(cli.play.files.len(), 2);
        assert!(cli.play.looping);
        assert!(Cli::try_parse_from(["reel"]).is_err());
        let cli = Cli::try_parse_from(["reel", "--volume", "50", "--aid", "2", "a.mkv"])
            .expect("audio options parse");
        assert_eq!((cli.play.volume, cli.play.aid), (50.0, Some(2)));
        for bad in [
            &["--volume", "101"][..],
            &["--aid", "0"],
            &["--aid", "1", "--no-audio"],
        ] {
            let args = ["reel"].iter().chain(bad).chain(&["a.mkv"]);
            assert!(Cli::try_parse_from(args).is_err(), "{bad:?} accepted");
        }
        let cli = Cli::try_parse_from(["reel", "--idle", "--input-ipc-server", "/tmp/s"])
            .expect("--idle needs no file");
        assert!(cli.play.files.is_empty());
    }
}
