use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

use reel::check::request_log::RequestLog;
use reel::check::CheckOptions;

use reel::audio::{AudioOptions, Track};
use reel::cli::{CheckArgs, Command, Hwdec, LogArgs, Output, PlayArgs};
use reel::exit::{Exit, Fatal, Outcome};
use reel::osd::OsdLevel;
use reel::player::decoder_choice::DecoderChoice;
use reel::player::{self, headless, PlayerOptions};

fn main() -> ExitCode {
    let cli = match reel::config::command_line() {
        Ok(cli) => cli,
        Err(error) => {
            eprintln!("reel: error: {error}");
            return Exit::Usage.code();
        }
    };
    let requests = RequestLog::default();
    match &cli.command {
        Some(Command::Probe(args)) => init_logging(&args.log, None),
        Some(Command::Check(args)) => init_logging(&args.log, Some(&requests)),
        None => init_logging(&cli.play.log, None),
    }
    let network = match &cli.command {
        Some(Command::Probe(args)) => args.network.options(),
        Some(Command::Check(args)) => args.network.options(),
        None => cli.play.network.options(),
    };
    reel::media::network::configure(network);
    let result = match cli.command {
        Some(Command::Probe(args)) => {
            reel::probe::run(args.file.as_deref()).map(Outcome::from_failures)
        }
        Some(Command::Check(args)) => check(args, &requests),
        None => play(cli.play),
    };
    match result {
        Ok(outcome) => {
            for failure in &outcome.failures {
                eprintln!("reel: error: {failure}");
            }
            outcome.exit.code()
        }
        Err(error) => {
            eprintln!("reel: error: {}", reel::message::causes(&error));
            Exit::of(&error).code()
        }
    }
}

/// The log on stderr as `-v` or RUST_LOG says; for `reel check`, the
/// V4L2 side's request log captured as well (`requests`), whatever they say.
fn init_logging(args: &LogArgs, requests: Option<&RequestLog>) {
    let default = match args.verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_ansi(std::io::stderr().is_terminal())
        .with_filter(filter);
    tracing_subscriber::registry()
        .with(stderr)
        .with(requests.map(|r| r.layer()))
        .init();
}

/// `reel check`: one line per frame and the summary on stdout.
fn check(args: CheckArgs, requests: &RequestLog) -> anyhow::Result<Outcome> {
    let options = CheckOptions {
        file: args.file,
        device: args.device,
        threads: args.threads,
        dump_dir: args.dump_dir,
        dump_count: args.dump_count,
        verbose: args.log.verbose > 0,
    };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let outcome = reel::check::run(&options, requests, &mut out);
    out.flush()?;
    outcome
}

/// Plays the files; returns the errors of files that could not be played
/// (playback went on with the others) and the exit status.
fn play(args: PlayArgs) -> anyhow::Result<Outcome> {
    let mut decoder = DecoderChoice {
        hwdec: args.hwdec,
        device: args.device.clone(),
        ..DecoderChoice::default()
    };
    // On screen, the negotiation's chooser says whether the pictures go
    // zero-copy; without one (wl_shm, --copy) they are copied.
    decoder.capture.cpu_reads_pictures = matches!(
        args.output,
        Output::Wayland | Output::Framemd5 | Output::Raw
    );
    if decoder.hwdec == Hwdec::No && decoder.device.is_some() {
        return Err(Fatal::new(
            Exit::Usage,
            "--device names a V4L2 decoder, but --hwdec=no forbids V4L2",
        )
        .into());
    }
    let remote = args.input_ipc_server.is_some() || args.control.is_some() || args.idle;
    if args.output_file.is_some() && !matches!(args.output, Output::Framemd5 | Output::Raw) {
        return Err(Fatal::new(Exit::Usage, "--output-file needs --output framemd5 or raw").into());
    }
    let raw_layout = match (&args.pix_fmt, args.output) {
        (None, _) => None,
        (Some(name), Output::Raw) => {
            reel::media::init_ffmpeg();
            Some(reel::sw::pixel_by_name(name).ok_or_else(|| {
                Fatal::new(
                    Exit::Usage,
                    format!("--pix-fmt {name}: FFmpeg knows no such pixel format (ffmpeg -pix_fmts lists them)"),
                )
            })?)
        }
        (Some(_), _) => return Err(Fatal::new(Exit::Usage, "--pix-fmt needs --output raw").into()),
    };
    match args.output {
        Output::Wayland => player::run(player_options(args, decoder, false)),
        Output::Null if remote => player::run(player_options(args, decoder, true)),
        Output::Framemd5 | Output::Raw if remote => Err(Fatal::new(
            Exit::Usage,
            "--input-ipc-server, --control and --idle need --output wayland or null",
        )
        .into()),
        Output::Framemd5 | Output::Raw | Output::Null => {
            let sink = match args.output {
                Output::Framemd5 => headless::Sink::Framemd5,
                Output::Raw => headless::Sink::Raw(raw_layout),
                _ => headless::Sink::Null,
            };
            let mut out = headless_output(args.output_file.as_deref())?;
            let mut outcome = Outcome::default();
            for (i, file) in args.files.iter().enumerate() {
                let start = if i == 0 { args.start } else { None };
                match headless::run_file(file, start, args.threads, &decoder, sink, &mut out) {
                    Ok(report) => {
                        if args.stats {
                            eprintln!(
                                "reel: stats: {}: frames={} seconds={:.3} decoder={} \
                                 decode_errors={} frames_skipped={}",
                                file.display(),
                                report.frames,
                                report.elapsed.as_secs_f64(),
                                report.decoder,
                                report.damage.decode_errors,
                                report.damage.frames_skipped,
                            );
                        }
                        if let Some(summary) = report.failure() {
                            outcome.fail(Exit::Failed, player::about_file(file, &summary));
                        }
                    }
                    Err(e) => outcome.fail(
                        Exit::of(&e),
                        player::about_file(file, &reel::message::causes(&e)),
                    ),
                }
            }
            out.flush()?;
            Ok(outcome)
        }
    }
}

/// Where a headless run writes: `--output-file`, else stdout.
fn headless_output(
    file: Option<&std::path::Path>,
) -> anyhow::Result<std::io::BufWriter<Box<dyn Write>>> {
    let out: Box<dyn Write> = match file {
        Some(path) => Box::new(std::fs::File::create(path).map_err(|e| {
            Fatal::new(
                Exit::Usage,
                format!("--output-file {}: {e}", path.display()),
            )
        })?),
        None => Box::new(std::io::stdout().lock()),
    };
    Ok(std::io::BufWriter::new(out))
}

/// Interactive playback: in a window, or paced but shown nowhere (`headless`).
fn player_options(args: PlayArgs, decoder: DecoderChoice, headless: bool) -> PlayerOptions {
    PlayerOptions {
        files: args.files,
        fullscreen: args.fullscreen,
        looping: args.looping,
        gapless: args.gapless,
        sync_epoch: args.sync_epoch,
        start: args.start,
        paused: args.paused,
        force_shm: args.shm,
        force_copy: args.copy,
        video_crop: args.video_crop,
        speed: args.speed,
        save_position_on_quit: args.save_position_on_quit,
        resume_playback: args.resume_playback,
        subtitles: reel::player::subtitles::SubtitleOptions {
            choice: if args.no_sub {
                reel::player::subtitles::SubtitleChoice::None
            } else {
                args.sid
            },
            files: args.sub_files,
            delay: args.sub_delay,
            visible: args.sub_visibility,
        },
        control: args.control,
        ipc: args.input_ipc_server,
        idle: args.idle,
        headless,
        stats: args.stats,
        osd_level: OsdLevel::from_number(args.osd_level).unwrap_or_default(),
        threads: args.threads,
        decoder,
        audio: AudioOptions {
            track: match (args.no_audio, args.aid) {
                (true, _) => None,
                (false, Some(n)) => Some(Track::Number(n as usize)),
                (false, None) => Some(Track::Default),
            },
            device: args.audio_device,
        },
        volume: args.volume,
    }
}
