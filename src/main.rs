//! reel's command line. Temporary headless front end (`--output framemd5|null`)
//! until the player is wired in.

use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{anyhow, bail, Context as _};
use clap::{Parser, ValueEnum};

use reel::display::framemd5::Framemd5Writer;
use reel::media::{Demuxer, MediaError};
use reel::sw::{decode_file, DecodeError, SwOptions};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Output {
    Wayland,
    Framemd5,
    Null,
}

#[derive(Debug, Parser)]
#[command(name = "reel", version, about = "A Wayland video player")]
struct Args {
    /// Where decoded frames go.
    #[arg(long, value_enum, default_value = "wayland")]
    output: Output,
    /// Hardware decoding: `no` forces the software decoder.
    #[arg(long, default_value = "auto")]
    hwdec: String,
    /// Software decoding threads (0 = one per core).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// More logging (-v info, -vv debug); RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count)]
    verbose: u8,
    #[arg(required = true)]
    files: Vec<PathBuf>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    init_logging(args.verbose);
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("reel: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn init_logging(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        _ => "debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(io::stderr)
        .with_ansi(io::stderr().is_terminal())
        .init();
}

fn run(args: &Args) -> anyhow::Result<()> {
    if args.output == Output::Wayland {
        bail!("--output wayland is not available in this build yet; use --output framemd5 or null");
    }
    let opts = SwOptions {
        threads: args.threads,
        for_display: false,
    };
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    for path in &args.files {
        let mut demuxer = Demuxer::open(path).map_err(|e| match e {
            MediaError::UnsupportedCodec(_) => anyhow!("{}: {e}", path.display()),
            e => e.into(),
        })?;
        // Media errors name the file already; decoder and output ones do not.
        let with_path = |e: DecodeError| match e {
            DecodeError::Media(e) => anyhow::Error::from(e),
            e => anyhow!("{}: {e}", path.display()),
        };
        let stats = match args.output {
            Output::Framemd5 => {
                let mut writer = Framemd5Writer::new(&mut out, demuxer.stream());
                let stats = decode_file(&mut demuxer, opts, |frame| {
                    writer.write_frame(&frame).context("writing framemd5")
                })
                .map_err(with_path)?;
                writer.finish()?;
                stats
            }
            _ => decode_file(&mut demuxer, opts, |_| Ok(())).map_err(with_path)?,
        };
        if stats.frames == 0 {
            bail!("{}: no frame could be decoded", path.display());
        }
        if stats.decode_errors > 0 {
            bail!(
                "{}: {} decode errors ({} of {} packets skipped)",
                path.display(),
                stats.decode_errors,
                stats.skipped_packets,
                stats.packets
            );
        }
    }
    out.flush().context("writing output")?;
    Ok(())
}
