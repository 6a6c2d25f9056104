//! Playback speed for sound: the output's interleaved f32 samples
//! time-stretched by FFmpeg's `atempo` filter (WSOLA: the pitch stays as it
//! is), with the media time of what comes out.
//!
//! libavfilter is loaded the first time a speed other than 1 is asked for,
//! not linked: on Debian it brings some forty libraries of its own (Vulkan,
//! libplacebo, speech synthesis ...), whose loading would cost every start
//! of reel half as much again, for a filter most runs never use.

use std::ffi::{c_char, c_int, c_uint, c_void, CString};
use std::sync::OnceLock;
use std::time::Duration;

use ff::format::sample::Type as SampleType;
use ffmpeg_next as ff;
use libloading::Library;
use tracing::{debug, info};

/// The slowest speed one `atempo` takes; slower is a chain of them.
const ATEMPO_MIN: f64 = 0.5;

#[repr(C)]
struct AvFilterGraph {
    _opaque: [u8; 0],
}
#[repr(C)]
struct AvFilterContext {
    _opaque: [u8; 0],
}
#[repr(C)]
struct AvFilter {
    _opaque: [u8; 0],
}

/// The libavfilter calls a stretch makes (FFmpeg 4 to 7 alike).
struct AvFilterLib {
    graph_alloc: unsafe extern "C" fn() -> *mut AvFilterGraph,
    graph_free: unsafe extern "C" fn(*mut *mut AvFilterGraph),
    get_by_name: unsafe extern "C" fn(*const c_char) -> *const AvFilter,
    create_filter: unsafe extern "C" fn(
        *mut *mut AvFilterContext,
        *const AvFilter,
        *const c_char,
        *const c_char,
        *mut c_void,
        *mut AvFilterGraph,
    ) -> c_int,
    link: unsafe extern "C" fn(*mut AvFilterContext, c_uint, *mut AvFilterContext, c_uint) -> c_int,
    graph_config: unsafe extern "C" fn(*mut AvFilterGraph, *mut c_void) -> c_int,
    add_frame: unsafe extern "C" fn(*mut AvFilterContext, *mut ff::ffi::AVFrame, c_int) -> c_int,
    get_frame: unsafe extern "C" fn(*mut AvFilterContext, *mut ff::ffi::AVFrame) -> c_int,
    /// Kept loaded for the process: the pointers above are into it.
    _library: Library,
}

/// `AV_BUFFERSRC_FLAG_KEEP_REF`: the filter takes its own reference.
const KEEP_REF: c_int = 8;

/// The libavfilter of the libavutil reel runs with (FFmpeg numbers
/// libavfilter's major 49 below libavutil's: 57 and 8 in FFmpeg 5).
fn library_names() -> Vec<String> {
    let avutil_major = ff::util::version() >> 16;
    let mut names = Vec::new();
    if let Some(major) = avutil_major.checked_sub(49) {
        names.push(format!("libavfilter.so.{major}"));
    }
    names.push("libavfilter.so".to_string());
    names
}

fn load() -> Result<AvFilterLib, String> {
    let mut failures = Vec::new();
    for name in library_names() {
        // SAFETY: libavfilter's initialisers only register its filters;
        // loading it runs nothing else.
        let library = match unsafe { Library::new(&name) } {
            Ok(library) => library,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        // SAFETY: each symbol is looked up with the C signature FFmpeg's
        // headers give it; the copies stay valid while `library` is
        // loaded, which the struct keeps for the process.
        let lib = unsafe {
            AvFilterLib {
                graph_alloc: symbol(&library, b"avfilter_graph_alloc\0")?,
                graph_free: symbol(&library, b"avfilter_graph_free\0")?,
                get_by_name: symbol(&library, b"avfilter_get_by_name\0")?,
                create_filter: symbol(&library, b"avfilter_graph_create_filter\0")?,
                link: symbol(&library, b"avfilter_link\0")?,
                graph_config: symbol(&library, b"avfilter_graph_config\0")?,
                add_frame: symbol(&library, b"av_buffersrc_add_frame_flags\0")?,
                get_frame: symbol(&library, b"av_buffersink_get_frame\0")?,
                _library: library,
            }
        };
        info!(library = %name, "libavfilter loaded for the audio time-stretch");
        return Ok(lib);
    }
    Err(format!("libavfilter not found ({})", failures.join("; ")))
}

/// The function `name` (NUL-terminated) of `library`.
///
/// # Safety
/// `T` must be the C signature of that function; the copy is valid while
/// `library` stays loaded.
unsafe fn symbol<T: Copy>(library: &Library, name: &[u8]) -> Result<T, String> {
    // SAFETY: the caller gives the symbol's type (see above).
    unsafe { library.get::<T>(name) }
        .map(|symbol| *symbol)
        .map_err(|e| {
            format!(
                "{}: {e}",
                String::from_utf8_lossy(name).trim_end_matches('\0')
            )
        })
}

fn avfilter() -> Result<&'static AvFilterLib, String> {
    static LIB: OnceLock<Result<AvFilterLib, String>> = OnceLock::new();
    LIB.get_or_init(load).as_ref().map_err(Clone::clone)
}

#[derive(Debug, thiserror::Error)]
pub enum TempoError {
    #[error("{0}")]
    Library(String),
    #[error("libavfilter: {what} failed ({code})")]
    Filter { what: &'static str, code: c_int },
}

fn check(what: &'static str, code: c_int) -> Result<(), TempoError> {
    if code < 0 {
        Err(TempoError::Filter { what, code })
    } else {
        Ok(())
    }
}

/// One speed's filter graph: abuffer, atempo (one or a chain),
/// abuffersink.
pub struct Tempo {
    lib: &'static AvFilterLib,
    graph: *mut AvFilterGraph,
    source: *mut AvFilterContext,
    sink: *mut AvFilterContext,
    speed: f64,
    channels: u16,
    rate: u32,
    /// Media time of the next sample out.
    out_pts: Option<Duration>,
    /// Samples fed in, as the input's pts counter.
    fed: i64,
}

impl Tempo {
    /// A stretch to `speed` (0.25..=4, not 1: 1 needs none) of sound in
    /// `channels` at `rate`.
    pub fn new(speed: f64, channels: u16, rate: u32) -> Result<Self, TempoError> {
        let lib = avfilter().map_err(TempoError::Library)?;
        // SAFETY: a plain constructor; null is checked.
        let graph = unsafe { (lib.graph_alloc)() };
        if graph.is_null() {
            return Err(TempoError::Filter {
                what: "graph",
                code: -12,
            });
        }
        let mut tempo = Self {
            lib,
            graph,
            source: std::ptr::null_mut(),
            sink: std::ptr::null_mut(),
            speed,
            channels,
            rate,
            out_pts: None,
            fed: 0,
        };
        let layout = ff::ChannelLayout::default(i32::from(channels));
        let source_args = format!(
            "time_base=1/{rate}:sample_rate={rate}:sample_fmt=flt:channel_layout=0x{:x}",
            layout.bits()
        );
        tempo.source = tempo.add("abuffer", "in", &source_args)?;
        let mut last = tempo.source;
        for (i, factor) in atempo_chain(speed).into_iter().enumerate() {
            let stage = tempo.add("atempo", &format!("tempo{i}"), &format!("tempo={factor}"))?;
            tempo.link(last, stage)?;
            last = stage;
        }
        tempo.sink = tempo.add("abuffersink", "out", "")?;
        tempo.link(last, tempo.sink)?;
        // SAFETY: the graph is live and its filters linked.
        check("configuring the graph", unsafe {
            (lib.graph_config)(graph, std::ptr::null_mut())
        })?;
        debug!(speed, "audio time-stretch");
        Ok(tempo)
    }

    fn add(
        &mut self,
        filter: &str,
        name: &str,
        args: &str,
    ) -> Result<*mut AvFilterContext, TempoError> {
        let missing = || TempoError::Library(format!("libavfilter has no {filter}"));
        let filter_name = CString::new(filter).map_err(|_| missing())?;
        let name = CString::new(name).map_err(|_| missing())?;
        let args = CString::new(args).map_err(|_| missing())?;
        // SAFETY: a NUL-terminated name; the filter is static in libavfilter.
        let found = unsafe { (self.lib.get_by_name)(filter_name.as_ptr()) };
        if found.is_null() {
            return Err(missing());
        }
        let mut context = std::ptr::null_mut();
        // SAFETY: the graph is live; the strings are NUL-terminated and
        // copied; the context made belongs to the graph.
        let code = unsafe {
            (self.lib.create_filter)(
                &mut context,
                found,
                name.as_ptr(),
                args.as_ptr(),
                std::ptr::null_mut(),
                self.graph,
            )
        };
        check("creating a filter", code)?;
        Ok(context)
    }

    fn link(
        &mut self,
        from: *mut AvFilterContext,
        to: *mut AvFilterContext,
    ) -> Result<(), TempoError> {
        // SAFETY: both filters belong to this live graph.
        check("linking filters", unsafe {
            (self.lib.link)(from, 0, to, 0)
        })
    }

    /// Feeds `samples` (interleaved), the first at media time `pts`, and
    /// appends what comes out to `out`; returns the media time of the first
    /// sample appended (None when nothing came out yet).
    pub fn process(
        &mut self,
        pts: Duration,
        samples: &[f32],
        out: &mut Vec<f32>,
    ) -> Result<Option<Duration>, TempoError> {
        let channels = usize::from(self.channels);
        let frames = samples.len() / channels;
        if frames == 0 {
            return Ok(None);
        }
        // The stretch starts where its first input does: what comes out
        // is then counted on from there at the speed.
        self.out_pts.get_or_insert(pts);
        let layout = ff::ChannelLayout::default(i32::from(self.channels));
        let mut frame =
            ff::frame::Audio::new(ff::format::Sample::F32(SampleType::Packed), frames, layout);
        frame.set_rate(self.rate);
        frame.set_pts(Some(self.fed));
        self.fed += frames as i64;
        for (slot, sample) in frame.data_mut(0).chunks_exact_mut(4).zip(samples) {
            slot.copy_from_slice(&sample.to_ne_bytes());
        }
        // SAFETY: the source filter is live; the frame is a valid audio
        // frame the filter references (KEEP_REF) without taking it.
        check("feeding the filter", unsafe {
            (self.lib.add_frame)(self.source, frame.as_mut_ptr(), KEEP_REF)
        })?;
        self.drain(out)
    }

    /// The input ended: appends what the filter still holds.
    pub fn finish(&mut self, out: &mut Vec<f32>) -> Result<Option<Duration>, TempoError> {
        // SAFETY: the source filter is live; a null frame marks the end.
        check("ending the input", unsafe {
            (self.lib.add_frame)(self.source, std::ptr::null_mut(), 0)
        })?;
        self.drain(out)
    }

    /// Takes what the filter has ready.
    fn drain(&mut self, out: &mut Vec<f32>) -> Result<Option<Duration>, TempoError> {
        let channels = usize::from(self.channels);
        let first = self.out_pts;
        let mut any = false;
        let mut stretched = ff::frame::Audio::empty();
        loop {
            // SAFETY: the sink filter is live; the frame is an empty one
            // the sink fills with a reference of its own.
            let code = unsafe { (self.lib.get_frame)(self.sink, stretched.as_mut_ptr()) };
            if code == -(nix::errno::Errno::EAGAIN as c_int) || code == ff::ffi::AVERROR_EOF {
                break;
            }
            check("taking from the filter", code)?;
            let values = stretched.samples() * channels;
            let bytes = &stretched.data(0)[..values * 4];
            out.extend(
                bytes
                    .chunks_exact(4)
                    .map(|b| f32::from_ne_bytes([b[0], b[1], b[2], b[3]])),
            );
            let wall = Duration::from_secs_f64(stretched.samples() as f64 / f64::from(self.rate));
            if let Some(pts) = &mut self.out_pts {
                *pts += wall.mul_f64(self.speed);
            }
            // SAFETY: the frame holds the sink's reference, let go here.
            unsafe { ff::ffi::av_frame_unref(stretched.as_mut_ptr()) };
            any = true;
        }
        Ok(first.filter(|_| any))
    }
}

impl Drop for Tempo {
    fn drop(&mut self) {
        // SAFETY: the graph (with its filters) was made in `new` and is
        // freed once.
        unsafe { (self.lib.graph_free)(&mut self.graph) };
    }
}

/// `atempo` factors whose product is `speed`: each takes 0.5 at the least.
fn atempo_chain(speed: f64) -> Vec<f64> {
    let mut left = speed;
    let mut factors = Vec::new();
    while left < ATEMPO_MIN {
        factors.push(ATEMPO_MIN);
        left /= ATEMPO_MIN;
    }
    factors.push(left);
    factors
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speeds_below_half_are_a_chain() {
        assert_eq!(atempo_chain(2.0), [2.0]);
        assert_eq!(atempo_chain(0.5), [0.5]);
        assert_eq!(atempo_chain(0.25), [0.5, 0.5]);
        assert_eq!(atempo_chain(0.3), [0.5, 0.6]);
    }

    #[test]
    fn libavfilter_is_the_one_of_reels_ffmpeg() {
        let names = library_names();
        assert_eq!(names.last().map(String::as_str), Some("libavfilter.so"));
        assert!(names[0].starts_with("libavfilter.so."), "{names:?}");
    }

    /// A tone stretched to `speed`: how many samples came out of one
    /// second, and the tone's frequency in them (zero crossings).
    fn stretch_tone(speed: f64) -> (usize, f64) {
        let rate = 48_000u32;
        let mut tempo = Tempo::new(speed, 2, rate).expect("atempo");
        let mut out = Vec::new();
        let mut first = None;
        for block in 0..50u32 {
            let samples: Vec<f32> = (0..960)
                .flat_map(|i| {
                    let t = f64::from(block * 960 + i) / f64::from(rate);
                    let v = (2.0 * std::f64::consts::PI * 440.0 * t).sin() as f32;
                    [v, v]
                })
                .collect();
            let pts = Duration::from_millis(u64::from(block) * 20);
            let at = tempo.process(pts, &samples, &mut out).expect("process");
            first = first.or(at);
        }
        tempo.finish(&mut out).expect("finish");
        assert_eq!(first, Some(Duration::ZERO));
        let left: Vec<f32> = out.iter().step_by(2).copied().collect();
        // The middle, away from the filter's start.
        let middle = &left[left.len() / 4..left.len() * 3 / 4];
        let crossings = middle
            .windows(2)
            .filter(|w| (w[0] < 0.0) != (w[1] < 0.0))
            .count();
        let seconds = middle.len() as f64 / f64::from(rate);
        (left.len(), crossings as f64 / 2.0 / seconds)
    }

    #[test]
    fn twice_the_speed_is_half_the_samples_at_the_same_pitch() {
        let (frames, pitch) = stretch_tone(2.0);
        // One second in, half a second out.
        assert!((23_000..=25_000).contains(&frames), "{frames} frames");
        assert!((pitch - 440.0).abs() < 4.4, "{pitch} Hz");
    }

    #[test]
    fn a_quarter_of_the_speed_is_four_times_the_samples_at_the_same_pitch() {
        let (frames, pitch) = stretch_tone(0.25);
        assert!((188_000..=196_000).contains(&frames), "{frames} frames");
        assert!((pitch - 440.0).abs() < 4.4, "{pitch} Hz");
    }
}
