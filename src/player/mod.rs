//! The player: the event loop, the playback state machine (playing, paused,
//! seeking, stepping, ended), the clock that paces frames, keyboard and
//! control-socket commands, and the playlist.

pub mod clock;
pub mod commands;
pub mod control;
pub mod decoder_choice;
pub mod frame_decoder;
pub mod headless;
pub mod ipc;
mod ipc_target;
pub mod negotiator;
pub mod osd_feed;
pub mod pipeline;
pub mod screen;
pub mod screenshot;
pub mod socket_file;
pub mod source;
pub mod still;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context, Result};
use calloop::generic::Generic;
use calloop::ping::{make_ping, Ping};
use calloop::signals::{Signal, Signals};
use calloop::timer::{TimeoutAction, Timer};
use calloop::{EventLoop, Interest, LoopHandle, LoopSignal, Mode, PostAction, RegistrationToken};
use tracing::{debug, error, info, warn};

use crate::audio::volume::{self, Volume};
use crate::audio::{Audio, AudioOptions};
use crate::display::vblank::Aim;
use crate::display::{Display, DisplayError, DisplayEvent, Key, WindowOptions};
use crate::exit::{Exit, Fatal, Outcome};
use crate::frame::{DecoderKind, Frame, PixelFormat};
use crate::import_retirement::ImportRetirement;
use crate::media::MediaError;
use crate::message::causes;
use crate::osd::text::{Playback, Stats};
use crate::osd::OsdLevel;
use frame_decoder::DamageCounters;
use ipc::events::{EndReason, PlayerEvent};
use ipc::IpcTarget;
use screen::{NullScreen, Screen};

use clock::{AvOffset, MediaClock};
use commands::{parse_command, Command, SeekTarget, VolumeChange};
use negotiator::{Negotiator, Renegotiated};
use pipeline::{Pipeline, PipelineOptions};
use source::{Frames, Request, Source, SourceEvent};
use still::StillPicture;

/// A frame this close to its deadline is shown now rather than after
/// another timer round trip.
const EARLY_SLACK: Duration = Duration::from_millis(2);
/// How long after a vblank's commit deadline a frame for the next one is
/// committed: room for the deadline being a little later than learned.
const COMMIT_MARGIN: Duration = Duration::from_millis(1);
/// A frame later than this is dropped when a later frame is already
/// decoded and due too: a slow compositor then costs frames, never the
/// clock (the picture stays on media time), while a slow decoder, with
/// nothing decoded behind its late frame, still shows every frame.
const LATE_DROP: Duration = Duration::from_millis(80);
/// Step back by this much when the frame's duration is unknown.
const FALLBACK_FRAME_DURATION: Duration = Duration::from_millis(40);
/// While the next wake-up is a timer at most this far away, the
/// compositor's events wait for it: the last frame's release, frame
/// callback and presentation feedback come in two bursts a frame, and
/// reading them with the next frame's commit makes one wake-up of three.
/// Keys are then answered within this.
const COMPOSITOR_QUIET_FOR: Duration = Duration::from_millis(50);

/// What the user asked for on the command line, for interactive playback.
#[derive(Debug, Clone)]
pub struct PlayerOptions {
    pub files: Vec<PathBuf>,
    pub fullscreen: bool,
    pub looping: bool,
    pub start: Option<Duration>,
    pub paused: bool,
    pub force_shm: bool,
    /// Copy decoded frames even when their dmabuf could be presented as is.
    pub force_copy: bool,
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

/// The frame on screen.
#[derive(Debug, Clone, Copy)]
struct Shown {
    position: Duration,
    duration: Duration,
    width: u32,
    height: u32,
    format: PixelFormat,
    decoder: DecoderKind,
    sample_aspect: (u32, u32),
}

#[derive(Debug, Default, Clone, Copy)]
struct Counters {
    presented: u64,
    dropped_late: u64,
    /// Turns of the event loop: how often the main thread woke.
    wakeups: u64,
    /// What woke it: the frame timer, the compositor's events, the decode
    /// thread (one turn may have several).
    woken_by_timer: u64,
    woken_by_compositor: u64,
    woken_by_decoder: u64,
}

struct Player {
    options: PlayerOptions,
    file_index: usize,
    /// Files that failed to open in a row (stops a playlist of bad files).
    failed_in_a_row: usize,
    /// Errors to print at the end, and the exit status.
    outcome: Outcome,
    display: Box<dyn Screen>,
    /// The Wayland connection's place in the event loop (None: headless).
    compositor: Option<CompositorWatch>,
    /// The playlist entry ids the IPC names files by, one per file.
    entry_ids: Vec<u64>,
    next_entry_id: u64,
    /// The id of the file loaded (None: idle).
    loaded: Option<u64>,
    /// A `playback-restart` is due when the next preroll ends.
    announce_restart: bool,
    ipc: Option<ipc::Server>,
    /// The loaded file's duration and frame rate, as its container says.
    file_duration: Option<Duration>,
    file_frame_rate: Option<f64>,
    /// The compositor side of the V4L2 CAPTURE format negotiation (None
    /// when frames are always copied: `--copy`, `--shm`).
    negotiator: Option<Negotiator>,
    /// The decoder's requests to drop imports of its old CAPTURE buffers
    /// (zero-copy presentation only).
    import_retirement: Option<Arc<ImportRetirement>>,
    source: Option<Source>,
    /// The loaded file's sound (None: `--no-audio`); its position is the
    /// media clock while it plays.
    audio: Option<Audio>,
    volume: Volume,
    av_offset: AvOffset,
    /// Frames committed before this (a seek, pause or resume since) say
    /// nothing of how well picture and sound agree.
    sync_since: Instant,
    start_time: Duration,
    wake: Ping,
    handle: LoopHandle<'static, Player>,
    signal: LoopSignal,
    /// The deadline of the armed frame timer.
    timer: Option<Instant>,
    /// A wake-up to hide a still cursor is armed.
    cursor_timer: bool,
    /// Bumped at each seek or file change; older frames are dropped.
    epoch: u64,
    clock: MediaClock,
    paused: bool,
    /// The next frame is shown as soon as the display can take it (start,
    /// seek, step), and sets the clock.
    preroll: bool,
    seek_target: Option<Duration>,
    /// Frame steps asked for while a seek or step was still in flight.
    pending_steps: u32,
    next: Option<Frame>,
    shown: Option<Shown>,
    /// The source delivered every frame of the current epoch.
    ended: bool,
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

/// A file opened for playing: where its frames come from and what it is.
struct Opened {
    frames: Frames,
    decoder: (DecoderKind, String),
    codec: String,
    start_time: Duration,
    duration: Option<Duration>,
    frame_rate: Option<f64>,
    has_audio: bool,
}

/// The file could not be played for want of a video stream.
fn has_no_video(error: &anyhow::Error) -> bool {
    error
        .chain()
        .any(|cause| matches!(cause.downcast_ref(), Some(MediaError::NoVideoStream(_))))
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
            })
            .map_err(|e| Fatal::new(Exit::NoCompositor, e.to_string()))?,
        )
    };
    let mut options = options;
    let negotiator = match &display {
        Some(display) if !options.force_copy && !options.force_shm => negotiator(display),
        _ => None,
    };
    options.decoder.capture_chooser = negotiator.as_ref().map(Negotiator::chooser);

    let mut event_loop: EventLoop<'static, Player> =
        EventLoop::try_new().context("cannot create the event loop")?;
    let handle = event_loop.handle();
    let (wake, wake_source) = make_ping().context("cannot create the decode wake-up")?;
    let import_retirement = negotiator.as_ref().map(|_| {
        let wake = wake.clone();
        Arc::new(ImportRetirement::new(move || wake.ping()))
    });
    options.decoder.import_retirement = import_retirement.clone();
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
    let file_count = options.files.len() as u64;
    let options_osd_level = options.osd_level;

    let now = Instant::now();
    let volume = Volume::new(options.volume);
    let mut player = Player {
        paused: options.paused,
        options,
        file_index: 0,
        failed_in_a_row: 0,
        outcome: Outcome::default(),
        display,
        compositor,
        entry_ids: (1..=file_count).collect(),
        next_entry_id: file_count + 1,
        loaded: None,
        announce_restart: false,
        ipc,
        file_duration: None,
        file_frame_rate: None,
        negotiator,
        import_retirement,
        source: None,
        audio: None,
        volume,
        av_offset: AvOffset::default(),
        sync_since: Instant::now(),
        start_time: Duration::ZERO,
        wake,
        handle,
        signal: event_loop.get_signal(),
        timer: None,
        cursor_timer: false,
        epoch: 0,
        clock: MediaClock::new(Duration::ZERO, now),
        preroll: true,
        seek_target: None,
        pending_steps: 0,
        next: None,
        shown: None,
        ended: false,
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
    let start = player.options.start;
    if player.options.files.is_empty() {
        player.go_idle();
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
    /// A file with sound and no picture, played over its cover art or
    /// black frames; None when it has no sound either (the caller's error
    /// stands).
    fn audio_only(&self, path: &std::path::Path) -> Option<Result<Opened>> {
        let still = match StillPicture::for_audio_only(path) {
            Ok(Some(still)) => still,
            Ok(None) => return None,
            Err(e) => return Some(Err(e)),
        };
        let picture = if still.is_cover() {
            "cover art"
        } else {
            "black"
        };
        info!(file = %path.display(), "no video stream: the sound over {picture}");
        Some(Ok(Opened {
            decoder: (
                DecoderKind::Software,
                format!("none (no video stream: {picture})"),
            ),
            codec: "no video (sound only)".into(),
            start_time: still.start_time(),
            duration: Some(still.duration()),
            frame_rate: Some(still.frame_rate()),
            has_audio: true,
            frames: Frames::Still(still),
        }))
    }

    /// Opens playlist entry `index` and starts decoding it; a file that
    /// cannot be opened is reported and skipped.
    /// The file playing before ends with `reason` (IPC `end-file`).
    fn open_file(&mut self, index: usize, start: Option<Duration>, reason: EndReason) {
        self.close_file(reason);
        let count = self.options.files.len();
        let mut index = index;
        loop {
            let path = self.options.files[index].clone();
            let entry = self.entry_ids[index];
            self.emit(PlayerEvent::StartFile { entry });
            let options = PipelineOptions {
                for_display: !self.options.headless,
                threads: self.options.threads,
                decoder: self.options.decoder.clone(),
            };
            let opened = Pipeline::open(&path, &options).map(|mut pipeline| {
                pipeline.count_damage_in(self.damage.clone());
                let stream = pipeline.stream();
                Opened {
                    decoder: (pipeline.decoder_kind(), pipeline.describe_decoder()),
                    codec: stream.codec_summary(),
                    start_time: stream.start_time,
                    duration: stream.duration,
                    frame_rate: stream
                        .frame_rate
                        .filter(|&(_, den)| den != 0)
                        .map(|(num, den)| f64::from(num) / f64::from(den)),
                    has_audio: pipeline.has_audio(),
                    frames: Frames::Decoded(Box::new(pipeline)),
                }
            });
            let opened = match opened {
                Err(e) if self.options.audio.track.is_some() && has_no_video(&e) => {
                    self.audio_only(&path).unwrap_or(Err(e))
                }
                opened => opened,
            };
            match opened {
                Ok(opened) => {
                    self.failed_in_a_row = 0;
                    self.file_index = index;
                    self.decoder_opened = Some(opened.decoder);
                    self.codec_summary = opened.codec;
                    self.start_time = opened.start_time;
                    self.file_duration = opened.duration;
                    self.file_frame_rate = opened.frame_rate;
                    self.epoch += 1;
                    self.next = None;
                    self.ended = false;
                    self.preroll = true;
                    self.seek_target = start;
                    self.cancel_timer();
                    self.display.set_title(&window_title(&path));
                    self.source = Some(Source::spawn(
                        opened.frames,
                        start,
                        self.epoch,
                        self.wake.clone(),
                    ));
                    self.audio = opened
                        .has_audio
                        .then(|| {
                            Audio::start(
                                &path,
                                &self.options.audio,
                                start.map(|start| self.start_time + start),
                                self.volume.gain(),
                            )
                        })
                        .flatten();
                    self.loaded = Some(entry);
                    self.osd.event(Instant::now(), true);
                    self.announce_restart = true;
                    self.emit(PlayerEvent::FileLoaded);
                    return;
                }
                Err(e) => {
                    let message = about_file(&path, &causes(&e));
                    error!("{message}");
                    self.outcome.fail(Exit::Failed, message);
                    self.emit(PlayerEvent::EndFile {
                        entry,
                        reason: EndReason::Error,
                    });
                    self.failed_in_a_row += 1;
                    let next = index + 1;
                    if self.failed_in_a_row >= count || (next >= count && !self.options.looping) {
                        self.failed_in_a_row = 0;
                        self.end_of_playlist();
                        return;
                    }
                    index = next % count;
                }
            }
        }
    }

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

    /// Moves frames from the decoder to the screen as far as time, the
    /// display and the state allow; arms a timer for the next deadline.
    fn pump(&mut self) {
        if self.quitting {
            return;
        }
        if self.compositor.as_ref().is_some_and(|watch| !watch.watched) {
            self.read_compositor();
            if self.quitting {
                return;
            }
        }
        self.retire_imports();
        self.update_screen();
        self.measure_sync(Instant::now());
        loop {
            if self.next.is_none() && !self.fetch() {
                break;
            }
            let now = Instant::now();
            self.follow_audio(now);
            let Some(frame) = self.next.as_ref() else {
                break;
            };
            if !self.preroll {
                if self.paused {
                    break;
                }
                let Some(deadline) = self.clock.deadline(frame.pts, now) else {
                    self.want_source_events();
                    break;
                };
                if let Some(wake) = too_early(deadline, now, self.display.next_vblank(now)) {
                    self.arm_timer(wake);
                    break;
                }
                let media_now = self.clock.now(now);
                let late = media_now.saturating_sub(frame.pts);
                if late > LATE_DROP && self.superseded(frame.pts, media_now) {
                    self.counters.dropped_late += 1;
                    debug!(pts = ?frame.pts, ?late, "dropped late frame");
                    self.next = None;
                    continue;
                }
            }
            if !self.display.ready_for_frame() {
                // The frame callback wakes us; so does each frame decoded
                // meanwhile, which may make this one superseded (dropped
                // now, so that the decoder goes on at the clock's pace).
                self.want_source_events();
                break;
            }
            if let Some(frame) = self.next.take() {
                self.present(frame, now);
            }
        }
        if self.next.is_none() && self.ended && !self.preroll && !self.paused {
            self.finish_file_when_due();
        }
        self.update_osd();
    }

    /// The decode thread's next event wakes the loop, although the player
    /// holds a frame (it wakes it only when the player found none).
    fn want_source_events(&self) {
        if let Some(source) = &self.source {
            source.want_events();
        }
    }

    /// A frame later than `pts` is already decoded and due at `media_now`.
    fn superseded(&self, pts: Duration, media_now: Duration) -> bool {
        self.source
            .as_ref()
            .and_then(|source| source.newest_frame(self.epoch))
            .is_some_and(|newest| newest > pts && newest <= media_now)
    }

    /// Takes the next event from the decode thread; true when a frame of
    /// the current epoch is ready.
    fn fetch(&mut self) -> bool {
        let Some(source) = self.source.as_ref() else {
            return false;
        };
        let mut restart_without_frame = false;
        while let Some(event) = source.try_event() {
            match event {
                SourceEvent::Frame(frame) if frame.epoch == self.epoch => {
                    self.next = Some(frame);
                    return true;
                }
                SourceEvent::EndOfStream { epoch, errors } if epoch == self.epoch => {
                    debug!(epoch, ?errors, "source ended");
                    self.ended = true;
                    if let Some(errors) = errors {
                        let message = about_file(&self.options.files[self.file_index], &errors);
                        if !self.outcome.failures.contains(&message) {
                            self.outcome.fail(Exit::Failed, message);
                        }
                    }
                    // A seek that found nothing to show ends its preroll here.
                    self.preroll = false;
                    restart_without_frame = std::mem::take(&mut self.announce_restart);
                    self.pending_steps = 0;
                    self.seek_target = None;
                }
                SourceEvent::Failed {
                    epoch,
                    message,
                    exit,
                } if epoch == self.epoch => {
                    let message = about_file(&self.options.files[self.file_index], &message);
                    error!("{message}");
                    self.outcome.fail(exit, message);
                    self.ended = true;
                    self.preroll = false;
                    self.seek_target = None;
                }
                _ => {} // from before a seek
            }
        }
        if restart_without_frame {
            self.emit(PlayerEvent::PlaybackRestart);
        }
        false
    }

    fn present(&mut self, frame: Frame, now: Instant) {
        // Where this commit lands: a prerolled frame starts the clock (and
        // the sound) there.
        let shows_at = self.display.next_vblank(now).map_or(now, |aim| aim.vblank);
        if let Err(e) = self.display.present(&frame) {
            // A malformed frame costs that frame; a broken connection ends playback.
            if matches!(e, DisplayError::BadFrame { .. } | DisplayError::Copy(_)) {
                warn!("frame at {:?} not shown: {e}", frame.pts);
                return;
            }
            // The compositor gone: said once, as when dispatch notices it.
            if matches!(e, DisplayError::Wayland(_) | DisplayError::Dispatch(_)) {
                self.compositor_lost(&e);
                return;
            }
            self.fail(format!("cannot present a frame: {e}"));
            return;
        }
        let position = frame.pts.saturating_sub(self.start_time);
        debug!(
            position = ?position,
            decoder = %frame.decoder,
            format = %frame.format,
            width = frame.width,
            height = frame.height,
            "frame shown"
        );
        if self.preroll {
            self.preroll = false;
            self.seek_target = None;
            self.osd.landed(now);
            self.clock.set(frame.pts, now);
            if !self.paused {
                // The clock stands at the frame until it is on screen and
                // its sound can be heard.
                let start = self.playback_start(shows_at, now);
                self.clock.resume(now);
                self.clock.set(frame.pts, start);
                if let Some(audio) = &self.audio {
                    audio.play_from(frame.pts, start);
                    self.sync_since = now;
                }
            }
            if self.pending_steps > 0 {
                self.pending_steps -= 1;
                self.preroll = true;
            }
        }
        self.counters.presented += 1;
        self.shown = Some(Shown {
            position,
            duration: frame.duration,
            width: frame.width,
            height: frame.height,
            format: frame.format,
            decoder: frame.decoder,
            sample_aspect: frame.sample_aspect,
        });
        self.measure_frame_time(now);
        self.on_screen = Some(frame);
        if !self.preroll && std::mem::take(&mut self.announce_restart) {
            self.emit(PlayerEvent::PlaybackRestart);
        }
    }

    /// At the end of the current file, once the last frame has had its time
    /// on screen: the next file, a loop, or the end.
    fn finish_file_when_due(&mut self) {
        let now = Instant::now();
        if let Some(shown) = self.shown {
            let end = self.start_time + shown.position + shown.duration;
            if let Some(deadline) = self.clock.deadline(end, now) {
                if deadline > now + EARLY_SLACK {
                    self.arm_timer(deadline);
                    return;
                }
            }
        }
        let count = self.options.files.len();
        let next = self.file_index + 1;
        if next < count {
            self.open_file(next, None, EndReason::Eof);
        } else if self.options.looping {
            if count == 1 {
                info!("looping");
                self.seek_to(Duration::ZERO);
            } else {
                self.open_file(0, None, EndReason::Eof);
            }
        } else {
            self.close_file(EndReason::Eof);
            self.end_of_playlist();
        }
    }

    /// Nothing left to play: wait for `loadfile` with `--idle`, else end.
    fn end_of_playlist(&mut self) {
        if self.options.idle {
            self.go_idle();
        } else {
            info!("end of playlist");
            self.quit();
        }
    }

    fn go_idle(&mut self) {
        info!("idle: waiting for a file to play");
        self.close_file(EndReason::Stop);
        self.emit(PlayerEvent::Idle);
    }

    /// Stops the file loaded, if any, announcing why.
    fn close_file(&mut self, reason: EndReason) {
        self.source = None;
        self.audio = None;
        self.epoch += 1;
        self.next = None;
        self.shown = None;
        self.on_screen = None;
        self.ended = false;
        self.preroll = false;
        self.seek_target = None;
        self.pending_steps = 0;
        self.announce_restart = false;
        self.cancel_timer();
        if let Some(entry) = self.loaded.take() {
            self.emit(PlayerEvent::EndFile { entry, reason });
        }
    }

    /// Queues `event` for the IPC clients. mpv reports a property's change
    /// before the event it leads to, except that a file's end and the next
    /// one's start come first.
    fn emit(&mut self, event: PlayerEvent) {
        let changes_first = !matches!(
            event,
            PlayerEvent::EndFile { .. } | PlayerEvent::StartFile { .. }
        );
        if self.ipc.is_some() {
            let snapshot = changes_first.then(|| self.snapshot());
            if let Some(ipc) = self.ipc.as_mut() {
                ipc.broadcast(snapshot.as_ref(), &event);
            }
        }
    }

    fn flush_ipc(&mut self) {
        if self.ipc.is_some() {
            let snapshot = self.snapshot();
            if let Some(ipc) = self.ipc.as_mut() {
                ipc.publish_changes(&snapshot);
                ipc.flush();
            }
        }
    }

    fn seek_to(&mut self, position: Duration) {
        self.restart_at(position, false);
    }

    /// Drops what was decoded and prerolls from `position`, reopening the
    /// decoder first if asked.
    fn restart_at(&mut self, position: Duration, reopen_decoder: bool) {
        self.sync_since = Instant::now();
        self.pending_steps = 0;
        self.epoch += 1;
        self.next = None;
        self.ended = false;
        self.preroll = true;
        self.seek_target = Some(position);
        self.cancel_timer();
        // A reopened decoder goes on from where the picture is: the sound
        // plays on.
        if let (Some(audio), false) = (&self.audio, reopen_decoder) {
            audio.seek(self.start_time + position);
        }
        if let Some(source) = &self.source {
            source.request(Request::Seek {
                position,
                epoch: self.epoch,
                reopen_decoder,
            });
        }
    }

    /// The compositor's formats changed: when the decoder should now
    /// decode into another CAPTURE format, it is reopened and playback goes
    /// on from the frame due next (the one on screen, when paused).
    fn renegotiate(&mut self) {
        let Some(negotiator) = &self.negotiator else {
            return;
        };
        let formats = match self.display.compositor_formats() {
            None => return,
            Some(Ok(formats)) => formats,
            Some(Err(e)) => {
                warn!("new dmabuf feedback unusable, keeping the negotiation: {e}");
                return;
            }
        };
        match negotiator.compositor_changed(formats) {
            Renegotiated::NotStarted | Renegotiated::Unchanged => {}
            Renegotiated::SameFormat(outcome) => {
                debug!(%outcome, "negotiation changed, CAPTURE format kept")
            }
            Renegotiated::Reallocate(_) => {
                let position = self.resume_position();
                info!(
                    ?position,
                    "reopening the decoder for the new CAPTURE format"
                );
                self.restart_at(position, true);
            }
        }
    }

    /// Where playback would go on from: a seek in flight's target, else the
    /// frame waiting to be shown, else the one on screen (paused) or the
    /// one after it.
    fn resume_position(&self) -> Duration {
        if let Some(target) = self.seek_target {
            return target;
        }
        if let Some(next) = &self.next {
            return next.pts.saturating_sub(self.start_time);
        }
        match self.shown {
            Some(shown) if self.paused || self.ended => shown.position,
            Some(shown) => shown.position + shown.duration,
            None => Duration::ZERO,
        }
    }

    fn position(&self) -> Duration {
        self.shown.map(|s| s.position).unwrap_or(Duration::ZERO)
    }

    fn set_paused(&mut self, paused: bool) {
        let now = Instant::now();
        self.sync_since = now;
        self.paused = paused;
        if paused {
            self.clock.pause(now);
            self.cancel_timer();
        } else {
            let media = self.clock.now(now);
            self.clock.resume(now);
            // A seek in flight starts the sound when its frame is shown.
            if !self.preroll {
                let start = self.playback_start(now, now);
                self.clock.set(media, start);
                if let Some(audio) = &self.audio {
                    audio.play_from(media, start);
                }
                return;
            }
        }
        if let Some(audio) = &self.audio {
            audio.set_playing(false);
        }
    }

    /// When playback (re)starting now with a frame shown at `shown` begins:
    /// once that frame is on screen and sound queued now can be heard.
    fn playback_start(&self, shown: Instant, now: Instant) -> Instant {
        match self.audio.as_ref().and_then(Audio::soonest) {
            Some(soonest) => shown.max(now + soonest),
            None => shown,
        }
    }

    /// How far each frame shown since the last call was from the sound:
    /// its pts against what was heard when it reached the screen.
    fn measure_sync(&mut self, now: Instant) {
        let presented = self.display.take_presented();
        if self.paused || self.preroll {
            return;
        }
        let Some(heard_now) = self.audio.as_ref().and_then(|audio| audio.position(now)) else {
            return;
        };
        for frame in presented {
            if frame.committed < self.sync_since {
                continue;
            }
            // Nothing restarted the sound since: it flowed at its pace.
            let shown = frame.shown.unwrap_or(frame.committed);
            let heard = match now.checked_duration_since(shown) {
                Some(ago) => heard_now.saturating_sub(ago),
                None => heard_now + (shown - now),
            };
            self.av_offset.add(frame.pts, heard);
        }
    }

    /// While sound plays, the clock reads what is being heard.
    fn follow_audio(&mut self, now: Instant) {
        if self.paused || self.preroll || !self.clock.is_running() {
            return;
        }
        if let Some(heard) = self.audio.as_ref().and_then(|audio| audio.position(now)) {
            self.clock.set(heard, now);
        }
    }

    fn change_volume(&mut self, change: Option<VolumeChange>, mute: Option<Option<bool>>) {
        match change {
            Some(VolumeChange::To(percent)) => self.volume.set(percent),
            Some(VolumeChange::By(delta)) => self.volume.add(delta),
            None => {}
        }
        match mute {
            Some(Some(muted)) => self.volume.muted = muted,
            Some(None) => self.volume.muted = !self.volume.muted,
            None => {}
        }
        info!(
            volume = self.volume.percent,
            muted = self.volume.muted,
            "volume"
        );
        if let Some(audio) = &self.audio {
            audio.set_gain(self.volume.gain());
        }
    }

    fn execute(&mut self, command: Command) {
        debug!(?command, "command");
        let shows_on_osd = matches!(
            command,
            Command::TogglePause
                | Command::Pause
                | Command::Resume
                | Command::Seek(_)
                | Command::StepForward
                | Command::StepBackward
        );
        if shows_on_osd && self.loaded.is_some() {
            self.osd.event(Instant::now(), false);
        }
        match command {
            Command::TogglePause => self.set_paused(!self.paused),
            Command::Pause => self.set_paused(true),
            Command::Resume => self.set_paused(false),
            Command::Seek(target) => {
                // From a seek in flight, relative seeks count from its target.
                let from = self.seek_target.unwrap_or_else(|| self.position());
                self.seek_to(target.resolve(from));
                self.announce_seek();
            }
            Command::StepForward => {
                self.set_paused(true);
                if self.preroll {
                    self.pending_steps += 1;
                } else if self.next.is_some() || !self.ended {
                    self.preroll = true;
                }
            }
            Command::StepBackward => {
                self.set_paused(true);
                if let Some(shown) = self.shown {
                    let step = if shown.duration.is_zero() {
                        FALLBACK_FRAME_DURATION
                    } else {
                        shown.duration
                    };
                    self.seek_to(SeekTarget::Backward(step).resolve(shown.position));
                    self.announce_seek();
                }
            }
            Command::ToggleFullscreen => {
                let on = !self.display.is_fullscreen();
                self.display.set_fullscreen(on);
            }
            Command::SetFullscreen(on) => self.display.set_fullscreen(on),
            Command::NextFile | Command::PreviousFile if self.options.files.is_empty() => {}
            Command::NextFile => {
                let next = (self.file_index + 1) % self.options.files.len();
                self.open_file(next, None, EndReason::Stop);
            }
            Command::PreviousFile => {
                let count = self.options.files.len();
                self.open_file((self.file_index + count - 1) % count, None, EndReason::Stop);
            }
            Command::ToggleOsdStatus => self.osd.toggle_status(),
            Command::ToggleStats => self.osd.toggle_stats(),
            Command::SetOsdLevel(level) => self.osd.set_level(level),
            Command::Screenshot => {
                if let Err(e) = self.screenshot(None) {
                    warn!("screenshot: {e:#}");
                }
            }
            Command::Volume(change) => self.change_volume(Some(change), None),
            Command::Mute(mute) => self.change_volume(None, Some(mute)),
            Command::Status => {}
            Command::Quit => self.quit(),
        }
        self.pump();
    }

    /// A seek was asked for: `seek` now, `playback-restart` when it lands.
    fn announce_seek(&mut self) {
        if self.source.is_some() {
            self.announce_restart = true;
            self.emit(PlayerEvent::Seek);
        }
    }

    fn status(&self) -> String {
        let state = if self.quitting {
            "quitting"
        } else if self.loaded.is_none() {
            "idle"
        } else if self.seek_target.is_some() {
            "seeking"
        } else if self.ended && self.next.is_none() {
            "ended"
        } else if self.paused {
            "paused"
        } else {
            "playing"
        };
        let stats = self.display.stats();
        let damage = self.damage.get();
        let file = match self.loaded {
            Some(_) => window_title(&self.options.files[self.file_index]),
            None => "none".to_string(),
        };
        let mut reply = format!(
            "state={state} position={:.6} file={file} index={}/{} epoch={} presented={} dropped={} \
             decode_errors={} frames_skipped={}",
            self.position().as_secs_f64(),
            self.file_index + 1,
            self.options.files.len(),
            self.epoch,
            self.counters.presented,
            self.counters.dropped_late,
            damage.decode_errors,
            damage.frames_skipped,
        );
        if let Some(shown) = self.shown {
            reply.push_str(&format!(
                " width={} height={} format={} decoder={}",
                shown.width, shown.height, shown.format, shown.decoder
            ));
        }
        reply.push_str(&format!(
            " osd_level={} osd_redraws={}",
            self.osd.level().number(),
            self.osd.redraws()
        ));
        reply.push_str(&format!(
            " zero_copy_frames={} copy_frames={} dmabuf_frames={} shm_frames={} \
             zero_copy_buffers={} copy_buffers={} wl_buffers={} wl_buffers_held={} fullscreen={} \
             volume={} mute={} {}",
            stats.frames_zero_copy,
            stats.frames_dmabuf + stats.frames_shm,
            stats.frames_dmabuf,
            stats.frames_shm,
            stats.buffers_zero_copy,
            stats.buffers_allocated,
            stats.live_now,
            stats.held_now,
            self.display.is_fullscreen(),
            self.volume.percent,
            if self.volume.muted { "yes" } else { "no" },
            self.av_offset,
        ));
        reply
    }

    /// Wakes the loop at `deadline`. Timers are never removed (removing one
    /// whose expiry is already queued makes calloop warn); a stale timer
    /// only causes an extra, harmless pump.
    fn arm_timer(&mut self, deadline: Instant) {
        if self.timer.is_some_and(|armed| armed <= deadline) {
            return; // an earlier wake-up re-evaluates anyway
        }
        let inserted =
            self.handle
                .insert_source(Timer::from_deadline(deadline), move |_, _, player| {
                    // The loop pumps after each dispatch.
                    player.counters.woken_by_timer += 1;
                    if player.timer == Some(deadline) {
                        player.timer = None;
                    }
                    TimeoutAction::Drop
                });
        match inserted {
            Ok(_) => self.timer = Some(deadline),
            Err(e) => self.fail(format!("cannot arm the frame timer: {e}")),
        }
    }

    /// The screen besides the frames: kept awake while playing (not when
    /// paused or with nothing to play), and a wake-up armed to hide a
    /// still cursor (one at a time; it re-arms while the pointer moves).
    fn update_screen(&mut self) {
        let playing = !self.paused && self.source.is_some();
        self.display.set_idle_inhibited(playing);
        let Some(deadline) = self.display.cursor_deadline() else {
            return;
        };
        if self.cursor_timer {
            return;
        }
        let inserted = self
            .handle
            .insert_source(Timer::from_deadline(deadline), |_, _, player| {
                player.cursor_timer = false;
                player.display.update_cursor();
                player.update_screen();
                TimeoutAction::Drop
            });
        match inserted {
            Ok(_) => self.cursor_timer = true,
            Err(e) => warn!("cannot arm the cursor timer: {e}"),
        }
    }

    /// Where playback stands, for the OSD (None: nothing loaded).
    fn playback(&self) -> Option<Playback> {
        self.loaded?;
        let path = &self.options.files[self.file_index];
        Some(Playback {
            position: self.seek_target.unwrap_or_else(|| self.position()),
            duration: self.file_duration,
            paused: self.paused,
            frame_rate: self.file_frame_rate,
            pts: self.on_screen.as_ref().map(|f| f.pts),
            file_name: window_title(path),
            index: self.file_index + 1,
            count: self.options.files.len(),
        })
    }

    /// The stats page's facts.
    fn osd_stats(&self) -> Stats {
        let stats = self.display.stats();
        let damage = self.damage.get();
        let frame = self.on_screen.as_ref();
        let decoder = match (&self.decoder_opened, frame.map(|f| f.decoder)) {
            (Some((kind, text)), Some(now)) if *kind != now => {
                format!("{now} (took over from {text})")
            }
            (Some((_, text)), _) => text.clone(),
            (None, _) => "none".into(),
        };
        let coded = frame.map(|f| match &f.storage {
            crate::frame::FrameStorage::Dmabuf(d) => (d.coded_width, d.coded_height),
            crate::frame::FrameStorage::Cpu(_) => (f.width, f.height),
        });
        Stats {
            decoder,
            codec: self.codec_summary.clone(),
            visible: frame.map(|f| (f.width, f.height)),
            coded,
            path: self
                .display
                .presentation_path()
                .unwrap_or_else(|| "none yet".into()),
            negotiated: self
                .negotiator
                .as_ref()
                .and_then(Negotiator::current)
                .map(|n| n.to_string()),
            presented: self.counters.presented,
            dropped: self.counters.dropped_late + stats.frames_dropped,
            decode_errors: damage.decode_errors,
            frame_time: self.frame_time,
            av_offset: self
                .audio
                .as_ref()
                .and(self.av_offset.mean())
                .map(|mean| (mean, self.av_offset.max())),
        }
    }

    /// Frames presented per second, measured over whole seconds.
    fn measure_frame_time(&mut self, now: Instant) {
        let (since, count) = self.frame_time_window;
        let count = count + 1;
        let elapsed = now.duration_since(since);
        if elapsed >= Duration::from_secs(1) {
            self.frame_time = Some(elapsed / count.max(1) as u32);
            self.frame_time_window = (now, 0);
        } else {
            self.frame_time_window = (since, count);
        }
    }

    /// Draws what the OSD says now, and wakes the loop when an event's
    /// text is due to go.
    fn update_osd(&mut self) {
        let now = Instant::now();
        let playback = self.osd.wants_text(now).then(|| self.playback()).flatten();
        let fresh = self
            .osd
            .stats_due(now, self.paused)
            .then(|| self.osd_stats());
        let lines = self.osd.lines(now, playback.as_ref(), fresh);
        if let Err(e) = self.osd.draw(self.display.as_mut(), lines) {
            if matches!(e, DisplayError::Wayland(_) | DisplayError::Dispatch(_)) {
                self.compositor_lost(&e);
                return;
            }
            warn!("OSD not shown: {e}");
        }
        if let Some(deadline) = self.osd.deadline(now) {
            self.arm_timer(deadline);
        }
    }

    /// Writes the frame on screen as a PNG to `out`, or to the next free
    /// `reel-shot-NNNN.png` in the pictures directory.
    fn screenshot(&self, out: Option<PathBuf>) -> Result<PathBuf> {
        let frame = self
            .on_screen
            .as_ref()
            .ok_or_else(|| anyhow!("no frame on screen"))?;
        let out = match out {
            Some(out) => out,
            None => screenshot::next_path(&screenshot::directory())?,
        };
        screenshot::write_png(frame, &out)?;
        info!(
            path = %out.display(),
            pts = frame.pts.as_secs_f64(),
            decoder = %frame.decoder,
            // The decoder's bytes, as `--output framemd5` hashes them.
            md5 = %crate::display::framemd5::frame_md5(frame),
            "screenshot written"
        );
        Ok(out)
    }

    fn cancel_timer(&mut self) {
        self.timer = None;
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
        self.quitting = true;
        self.cancel_timer();
        self.signal.stop();
    }

    fn print_stats(&self) {
        let stats = self.display.stats();
        let damage = self.damage.get();
        eprintln!(
            "reel: stats: presented={} dropped_late={} wakeups={} woken_by_timer={} woken_by_compositor={} \
             woken_by_decoder={} zero_copy_frames={} copy_frames={} zero_copy_buffers={} \
             dmabuf_frames={} shm_frames={} shown={} discarded={} \
             buffers_allocated={} buffers_released={} dropped_no_buffer={} \
             decode_errors={} frames_skipped={} decoder={} {}",
            self.counters.presented,
            self.counters.dropped_late,
            self.counters.wakeups,
            self.counters.woken_by_timer,
            self.counters.woken_by_compositor,
            self.counters.woken_by_decoder,
            stats.frames_zero_copy,
            stats.frames_dmabuf + stats.frames_shm,
            stats.buffers_zero_copy,
            stats.frames_dmabuf,
            stats.frames_shm,
            stats.frames_shown,
            stats.frames_discarded,
            stats.buffers_allocated,
            stats.buffers_released,
            stats.frames_dropped,
            damage.decode_errors,
            damage.frames_skipped,
            // The decoder of the last frame shown (the last file's).
            self.shown
                .map_or("none".to_owned(), |shown| shown.decoder.to_string()),
            self.av_offset,
        );
    }
}

impl control::CommandTarget for Player {
    fn control(&mut self, line: &str) -> String {
        match parse_command(line) {
            Ok(Command::Status) => self.status(),
            Ok(Command::Screenshot) => match self.screenshot(None) {
                Ok(path) => format!("ok {}", path.display()),
                Err(e) => {
                    warn!("screenshot: {e:#}");
                    format!("error: {e:#}")
                }
            },
            Ok(command) => {
                self.execute(command);
                "ok".to_string()
            }
            Err(e) => {
                warn!("control: {e}");
                format!("error: {e}")
            }
        }
    }
}

/// The keys, as the README lists them.
/// When a frame due at `deadline` is too early to commit now: the moment
/// to look again. With presentation feedback a frame goes to the vblank
/// nearest its time (a commit now is shown at `aim.vblank`); without, it
/// is committed when due.
fn too_early(deadline: Instant, now: Instant, aim: Option<Aim>) -> Option<Instant> {
    let Some(aim) = aim else {
        return (deadline > now + EARLY_SLACK).then_some(deadline);
    };
    if deadline <= aim.vblank + aim.slack {
        return None;
    }
    // Due at a later vblank: not before a commit misses this one.
    Some((now + (deadline - aim.vblank - aim.slack)).max(aim.commit_by + COMMIT_MARGIN))
}

fn key_command(key: Key) -> Option<Command> {
    let five = Duration::from_secs(5);
    let minute = Duration::from_secs(60);
    Some(match key {
        Key::Space => Command::TogglePause,
        Key::Left => Command::Seek(SeekTarget::Backward(five)),
        Key::Right => Command::Seek(SeekTarget::Forward(five)),
        Key::Up => Command::Seek(SeekTarget::Backward(minute)),
        Key::Down => Command::Seek(SeekTarget::Forward(minute)),
        Key::PageUp => Command::PreviousFile,
        Key::PageDown => Command::NextFile,
        Key::Escape | Key::Char('q') => Command::Quit,
        Key::Char('f') => Command::ToggleFullscreen,
        Key::Char('.') => Command::StepForward,
        Key::Char(',') => Command::StepBackward,
        Key::Char('o') => Command::ToggleOsdStatus,
        Key::Char('i') => Command::ToggleStats,
        Key::Char('s') => Command::Screenshot,
        Key::Char('9') => Command::Volume(VolumeChange::By(-volume::KEY_STEP)),
        Key::Char('0') => Command::Volume(VolumeChange::By(volume::KEY_STEP)),
        Key::Char('m') => Command::Mute(None),
        Key::Char(_) => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_aimed_at_the_vblank_nearest_their_time() {
        let now = Instant::now();
        let ms = Duration::from_millis;
        // No feedback: committed when due.
        assert_eq!(too_early(now + ms(1), now, None), None);
        assert_eq!(too_early(now + ms(30), now, None), Some(now + ms(30)));
        // A commit now shows in 10 ms, at 60 Hz; its deadline is in 3 ms.
        let aim = Aim {
            vblank: now + ms(10),
            slack: ms(8),
            commit_by: now + ms(3),
        };
        // Due up to half a period after that vblank: it is the nearest.
        assert_eq!(too_early(now + ms(18), now, Some(aim)), None);
        assert_eq!(too_early(now, now, Some(aim)), None);
        // Nearer the next one: wait until a commit misses this vblank.
        assert_eq!(
            too_early(now + ms(19), now, Some(aim)),
            Some(now + ms(3) + COMMIT_MARGIN)
        );
        // Further still: until it is due for the vblank it is nearest.
        assert_eq!(too_early(now + ms(60), now, Some(aim)), Some(now + ms(42)));
    }

    #[test]
    fn volume_keys_as_mpv() {
        assert_eq!(
            key_command(Key::Char('9')),
            Some(Command::Volume(VolumeChange::By(-2.0)))
        );
        assert_eq!(
            key_command(Key::Char('0')),
            Some(Command::Volume(VolumeChange::By(2.0)))
        );
        assert_eq!(key_command(Key::Char('m')), Some(Command::Mute(None)));
    }
}
