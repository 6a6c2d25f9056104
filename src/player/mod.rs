//! The player: one context ([`Player`]) over the event loop, and its jobs in
//! rooms of their own, as mpv's `player/` lays them out:
//! - `mod.rs`: the wiring (the window, the loop's sources, the compositor's
//!   events, failing and quitting);
//! - `playlist.rs`: the files, opening one, going on to the next, idling;
//!   `entry.rs`: opening an entry; `next_entry.rs`: the next one opened
//!   ahead (gapless playback);
//! - `transport.rs`: the playback state machine (playing, paused,
//!   seeking, stepping, ended) and its moves;
//! - `pacing.rs`: frames from the decoder to the screen on the clock;
//! - `av_sync.rs`: the clock following the sound, the A/V offset, volume;
//! - `commands.rs`: what keys, the control socket and the IPC ask, done;
//! - `report.rs`: one reading of the counters ([`report::Tally`]) that the
//!   `status` reply, `--stats` and the OSD's stats page each format;
//!   `ipc_target.rs`: the same state as mpv's properties.

mod av_sync;
mod chapters;
pub mod clock;
pub mod commands;
mod connection;
pub mod control;
pub mod decoder_choice;
mod entry;
pub mod frame_decoder;
pub mod headless;
pub mod ipc;
mod ipc_target;
pub mod negotiator;
mod next_entry;
pub mod osd_feed;
mod pacing;
pub mod pipeline;
mod playlist;
mod report;
pub mod schedule;
pub mod screen;
pub mod screenshot;
pub mod socket_file;
pub mod source;
pub mod speed;
pub mod still;
pub mod subtitles;
mod synced;
mod tracks;
mod transport;
pub mod watch_later;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context, Result};
use calloop::generic::Generic;
use calloop::ping::{make_ping, Ping};
use calloop::signals::{Signal, Signals};
use calloop::{EventLoop, Interest, LoopHandle, LoopSignal, Mode, PostAction, RegistrationToken};
use tracing::{error, info, warn};

use crate::audio::volume::Volume;
use crate::audio::{Audio, AudioOptions};
use crate::display::{Display, DisplayError, DisplayEvent, WindowOptions};
use crate::exit::{Exit, Fatal, Outcome};
use crate::frame::{DecoderKind, Frame};
use crate::import_retirement::ImportRetirement;
use crate::osd::OsdLevel;
use frame_decoder::DamageCounters;
use ipc::events::EndReason;
use screen::{NullScreen, Screen};

use clock::{AvOffset, MediaClock};
use commands::key_command;
use negotiator::Negotiator;
use pacing::COMPOSITOR_QUIET_FOR;
use playlist::Playlist;
use report::Counters;
use source::Source;
use transport::Transport;

/// What the user asked for on the command line, for interactive playback.
#[derive(Debug, Clone)]
pub struct PlayerOptions {
    pub files: Vec<PathBuf>,
    pub fullscreen: bool,
    pub looping: bool,
    /// Open the next entry ahead of its turn (`--gapless`).
    pub gapless: bool,
    /// Play the playlist on the schedule that started then (`--sync-epoch`,
    /// time since 1970), looping.
    pub sync_epoch: Option<Duration>,
    pub start: Option<Duration>,
    pub paused: bool,
    pub force_shm: bool,
    /// Copy decoded frames even when their dmabuf could be presented as is.
    pub force_copy: bool,
    /// Show only this rectangle of the picture (`--video-crop`).
    pub video_crop: Option<crate::display::crop::Rect>,
    /// The playback speed to start at (`--speed`).
    pub speed: f64,
    pub subtitles: subtitles::SubtitleOptions,
    /// Save the position at quit to resume from (`--save-position-on-quit`).
    pub save_position_on_quit: bool,
    /// Start where a saved position says (`--resume-playback`).
    pub resume_playback: bool,
    pub control: Option<PathBuf>,
    /// mpv's JSON IPC socket.
    pub ipc: Option<PathBuf>,
    /// With nothing (left) to play, wait for `loadfile` rather than exit.
    pub idle: bool,
    /// No window: frames go nowhere, in real time (`--output null`).
    pub headless: bool,
    pub stats: bool,
    /// What the OSD shows unasked (`--osd-level`).
    pub osd_level: OsdLevel,
    pub threads: usize,
    pub decoder: decoder_choice::DecoderChoice,
    pub audio: AudioOptions,
    /// Start volume, percent.
    pub volume: f64,
}

/// The player's context: every room works on it.
struct Player {
    options: PlayerOptions,
    playlist: Playlist,
    transport: Transport,
    /// Errors to print at the end, and the exit status.
    outcome: Outcome,
    display: Box<dyn Screen>,
    /// The Wayland connection's place in the event loop (None: headless).
    compositor: Option<CompositorWatch>,
    ipc: Option<ipc::Server>,
    /// The loaded file's duration and frame rate, as its container says.
    file_duration: Option<Duration>,
    file_frame_rate: Option<f64>,
    /// The loaded file's video codec and container, in mpv's words.
    file_video_codec: Option<String>,
    file_format: Option<String>,
    /// The loaded file's tracks and the audio one playing.
    tracks: tracks::Tracks,
    /// The compositor side of the V4L2 CAPTURE format negotiation (None
    /// when frames are always copied: `--copy`, `--shm`).
    negotiator: Option<Negotiator>,
    /// The decoder's requests to drop imports of its old CAPTURE buffers
    /// (zero-copy presentation only).
    import_retirement: Option<Arc<ImportRetirement>>,
    source: Option<Source>,
    /// The entry due next, made ready ahead (gapless playback).
    next_entry: Option<next_entry::NextEntry>,
    /// The entry about to play, being opened on a thread of its own (a
    /// network source connecting).
    opening: Option<next_entry::NextEntry>,
    /// The source's lost connection is on the OSD (`connection.rs`).
    reconnecting_shown: bool,
    /// The last file's decoder and sound, let go once the file after it shows.
    retired: Option<playlist::Retired>,
    /// `--sync-epoch`: the playlist's schedule, and the loaded entry's turn.
    schedule: Option<schedule::Schedule>,
    slot: Option<schedule::Slot>,
    /// The loaded file's sound (None: `--no-audio`); its position is the
    /// media clock while it plays.
    audio: Option<Audio>,
    volume: Volume,
    av_offset: AvOffset,
    subtitles: subtitles::SubtitleState,
    /// Frames committed before this (a seek, pause or resume since) say
    /// nothing of how well picture and sound agree.
    sync_since: Instant,
    /// The first frame of a silent start (epoch, pts), until the
    /// compositor says when it was shown: the clock starts there.
    start_on_feedback: Option<(u64, Duration)>,
    start_time: Duration,
    wake: Ping,
    handle: LoopHandle<'static, Player>,
    signal: LoopSignal,
    /// The deadline of the armed frame timer.
    timer: Option<Instant>,
    /// A wake-up to hide a still cursor is armed.
    cursor_timer: bool,
    clock: MediaClock,
    counters: Counters,
    /// Damaged pictures over the run (the decode threads add to it).
    damage: Arc<DamageCounters>,
    quitting: bool,
    osd: osd_feed::Osd,
    /// The frame on screen, for screenshots (the compositor holds its
    /// buffer anyway while it shows it).
    on_screen: Option<Frame>,
    /// The loaded file's decoder, as opened, and its codec in words.
    decoder_opened: Option<(DecoderKind, String)>,
    codec_summary: String,
    /// When the last second of presented frames began, and how many.
    frame_time_window: (Instant, u64),
    frame_time: Option<Duration>,
}

/// The Wayland connection's source in the event loop, and whether its
/// readiness wakes the loop (see [`COMPOSITOR_QUIET_FOR`]).
struct CompositorWatch {
    token: RegistrationToken,
    watched: bool,
}

/// Plays `options.files` in a Wayland window until the end, `q`, or a
/// fatal error. Returns the per-file errors that did not stop playback and
/// the exit status.
pub fn run(options: PlayerOptions) -> Result<Outcome> {
    if options.files.is_empty() && !options.idle {
        return Err(anyhow!("no file to play"));
    }
    let title = options
        .files
        .first()
        .map_or_else(|| "reel".to_string(), |first| window_title(first));
    let display: Option<Display> = if options.headless {
        None
    } else {
        Some(
            Display::connect(&WindowOptions {
                title,
                app_id: "reel".into(),
                fullscreen: options.fullscreen,
                force_shm: options.force_shm,
                force_copy: options.force_copy,
                crop: options.video_crop,
            })
            .map_err(|e| Fatal::new(Exit::NoCompositor, e.to_string()))?,
        )
    };
    let mut options = options;
    let subtitles = subtitles::SubtitleState::new(&options.subtitles);
    // A schedule loops the playlist forever.
    let schedule = match options.sync_epoch {
        Some(epoch) => {
            options.looping = true;
            Some(synced::schedule_of(&options.files, epoch)?)
        }
        None => None,
    };
    let negotiator = match &display {
        Some(display) if !options.force_copy && !options.force_shm => negotiator(display),
        _ => None,
    };
    options.decoder.capture.chooser = negotiator.as_ref().map(Negotiator::chooser);

    let mut event_loop: EventLoop<'static, Player> =
        EventLoop::try_new().context("cannot create the event loop")?;
    let handle = event_loop.handle();
    let (wake, wake_source) = make_ping().context("cannot create the decode wake-up")?;
    let import_retirement = negotiator.as_ref().map(|_| {
        let wake = wake.clone();
        Arc::new(ImportRetirement::new(move || wake.ping()))
    });
    options.decoder.capture.import_retirement = import_retirement.clone();
    handle
        // The loop pumps after each dispatch: waking it is all a ping does.
        .insert_source(wake_source, |_, _, player: &mut Player| {
            player.counters.woken_by_decoder += 1;
        })
        .map_err(|e| anyhow!("cannot watch the decode thread: {e}"))?;
    let (display, compositor): (Box<dyn Screen>, _) = match display {
        Some(display) => {
            let wayland_fd = display
                .as_fd()
                .try_clone_to_owned()
                .context("cannot duplicate the Wayland connection fd")?;
            let token = handle
                .insert_source(
                    Generic::new(wayland_fd, Interest::READ, Mode::Level),
                    |_, _, player| {
                        player.counters.woken_by_compositor += 1;
                        player.read_compositor();
                        Ok(PostAction::Continue)
                    },
                )
                .map_err(|e| anyhow!("cannot watch the Wayland connection: {e}"))?;
            let watch = CompositorWatch {
                token,
                watched: true,
            };
            (Box::new(display), Some(watch))
        }
        None => (Box::new(NullScreen::default()), None),
    };
    let signals =
        Signals::new(&[Signal::SIGINT, Signal::SIGTERM]).context("cannot watch signals")?;
    handle
        .insert_source(signals, |event, _, player| {
            info!("{:?}: quitting", event.signal());
            player.quit();
        })
        .map_err(|e| anyhow!("cannot watch signals: {e}"))?;
    let _control = match &options.control {
        Some(path) => Some(control::listen(path, &handle)?),
        None => None,
    };
    let ipc = match &options.ipc {
        Some(path) => Some(ipc::listen(path, &handle)?),
        None => None,
    };
    // IPC observers see time pass while nothing else wakes the loop.
    let tick = ipc.as_ref().map(|_| Duration::from_millis(50));
    let options_osd_level = options.osd_level;

    let now = Instant::now();
    let volume = Volume::new(options.volume);
    let mut player = Player {
        playlist: Playlist::new(std::mem::take(&mut options.files)),
        transport: Transport::new(options.paused),
        options,
        outcome: Outcome::default(),
        display,
        compositor,
        ipc,
        file_duration: None,
        file_frame_rate: None,
        file_video_codec: None,
        file_format: None,
        tracks: tracks::Tracks::default(),
        negotiator,
        import_retirement,
        source: None,
        next_entry: None,
        opening: None,
        reconnecting_shown: false,
        retired: None,
        schedule,
        slot: None,
        audio: None,
        volume,
        av_offset: AvOffset::default(),
        subtitles,
        sync_since: Instant::now(),
        start_on_feedback: None,
        start_time: Duration::ZERO,
        wake,
        handle,
        signal: event_loop.get_signal(),
        timer: None,
        cursor_timer: false,
        clock: MediaClock::new(Duration::ZERO, now),
        counters: Counters::default(),
        damage: Arc::default(),
        quitting: false,
        osd: osd_feed::Osd::new(options_osd_level),
        on_screen: None,
        decoder_opened: None,
        codec_summary: String::new(),
        frame_time_window: (now, 0),
        frame_time: None,
    };

    if player.options.speed != 1.0 {
        if player.schedule.is_some() {
            warn!("--speed is ignored on a schedule (--sync-epoch): the wall plays at 1x");
        } else {
            player.clock.set_rate(player.options.speed, now);
        }
    }
    let start = player.options.start;
    if player.playlist.is_empty() {
        player.go_idle();
    } else if player.schedule.is_some() {
        player.join_schedule();
    } else {
        player.open_file(0, start, EndReason::Stop);
    }

    // A playlist of files that cannot be played ends before the loop runs
    // (its stop would be lost on it).
    if !player.quitting {
        event_loop
            .run(tick, &mut player, |player| {
                player.counters.wakeups += 1;
                player.pump();
                if let Err(e) = player.display.flush() {
                    player.compositor_lost(&e);
                }
                player.flush_ipc();
                player.watch_compositor_as_needed();
            })
            .context("event loop failed")?;
    }

    // Ending within a second matters more than a tidy decoder.
    if player.outcome.exit == Exit::CompositorLost {
        if let Some(source) = player.source.take() {
            source.abandon();
        }
    }
    player.close_file(EndReason::Quit);
    player.flush_ipc();
    if player.options.stats {
        player.print_stats();
    }
    Ok(player.outcome)
}

/// `message` about `path`, naming the file once (errors from the demuxer
/// name it already).
pub fn about_file(path: &std::path::Path, message: &str) -> String {
    let name = path.display().to_string();
    if message.starts_with(&name) {
        message.to_string()
    } else {
        format!("{name}: {message}")
    }
}

/// The negotiation between the V4L2 decoder's CAPTURE formats (offered
/// once the sequence controls are set) and what the compositor takes.
fn negotiator(display: &Display) -> Option<Negotiator> {
    match display.compositor_formats() {
        Ok(formats) => Some(Negotiator::new(formats)),
        Err(e) => {
            warn!("compositor dmabuf feedback unusable, no negotiation: {e}");
            None
        }
    }
}

fn window_title(path: &std::path::Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

impl Player {
    /// Reads and handles what the compositor sent (nothing waits: the
    /// socket is read without blocking).
    fn read_compositor(&mut self) {
        if let Err(e) = self.display.dispatch() {
            self.compositor_lost(&e);
            return;
        }
        for event in self.display.take_events() {
            match event {
                DisplayEvent::Key(key) => {
                    if let Some(command) = key_command(key) {
                        self.execute(command);
                    }
                }
                DisplayEvent::CloseRequested => self.quit(),
                DisplayEvent::Resized { .. } => {}
                DisplayEvent::DmabufFormatsChanged => self.renegotiate(),
            }
        }
    }

    /// Lets the compositor's events wake the loop, unless a timer will
    /// within [`COMPOSITOR_QUIET_FOR`] (frames paced by the clock): then
    /// they are read at that wake-up, before its frame is committed.
    fn watch_compositor_as_needed(&mut self) {
        let Some(watch) = &mut self.compositor else {
            return;
        };
        let timer_soon = self
            .timer
            .is_some_and(|at| at <= Instant::now() + COMPOSITOR_QUIET_FOR);
        let watched = self.quitting || !timer_soon;
        if watch.watched == watched {
            return;
        }
        let changed = if watched {
            self.handle.enable(&watch.token)
        } else {
            self.handle.disable(&watch.token)
        };
        match changed {
            Ok(()) => watch.watched = watched,
            // Unwatched, nothing would read the compositor without a timer.
            Err(e) if watched => self.fail(format!("cannot watch the Wayland connection: {e}")),
            // Left watched, the loop only wakes more often.
            Err(e) => warn!("cannot stop watching the Wayland connection: {e}"),
        }
    }

    /// Drops the compositor's imports of CAPTURE buffers the decoder is
    /// about to replace, when it asked: it waits for this before it
    /// allocates new ones.
    fn retire_imports(&mut self) {
        let Some(retirement) = &self.import_retirement else {
            return;
        };
        let Some((generation, kept)) = retirement.pending() else {
            return;
        };
        if let Err(e) = self.display.retire_imports_through(generation, &kept) {
            warn!("dropping the imports of old decoder buffers: {e}");
        }
        retirement.done(generation);
    }

    fn fail(&mut self, message: String) {
        self.fail_with(Exit::Failed, message);
    }

    fn fail_with(&mut self, exit: Exit, message: String) {
        error!("{message}");
        self.outcome.fail(exit, message);
        self.quit();
    }

    /// The Wayland connection broke (the compositor crashed or restarted):
    /// said once, whichever call noticed first, and reel ends.
    fn compositor_lost(&mut self, error: &DisplayError) {
        if self.outcome.exit != Exit::CompositorLost {
            info!("the compositor went away: quitting");
            // Printed once at exit, which is now.
            self.outcome.fail(
                Exit::CompositorLost,
                format!("the Wayland compositor went away: {error}"),
            );
            self.quit();
        }
    }

    fn quit(&mut self) {
        if self.options.save_position_on_quit && !self.quitting {
            self.save_position();
        }
        self.quitting = true;
        // No network connect or read may hold the way out, nor a decoder
        // waiting to allocate a new sequence's buffers.
        crate::media::network::abandon();
        if let Some(retirement) = &self.import_retirement {
            retirement.close();
        }
        self.cancel_timer();
        self.signal.stop();
    }
}
