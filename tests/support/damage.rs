//! Damaged copies of a clip for robustness runs, and what decoding each must
//! still give.
//!
//! The damage is deterministic (from a seed) and lies inside the video
//! packets' bytes only: packet data is found in the file through FFmpeg's
//! packet positions and overwritten in place, so the container stays
//! parseable and the demuxer hands the damaged data to the decoder. Four
//! kinds, in turn: bit flips, a zeroed run, dropped packets (overwritten
//! with data the codec ignores, keeping their size) and truncation (the
//! file cut inside a packet). The source must store each packet's bytes in
//! one piece (Matroska/WebM, MP4, IVF; not MPEG-TS).
//!
//! After damage that ends before a key frame, decoding must recover there:
//! every picture from that key frame on in decode order, except pictures
//! shown before it (leading pictures), must be output. The expectation is
//! given as the pts FFmpeg's framemd5 prints for those pictures.
//!
//! [`SOURCES`] defines each codec's source clip and damage once, for two
//! users: the codec guest suite (tests/guest_codecs/) runs the first
//! [`GUEST_COPIES`] copies through reel's V4L2 path on visl, and
//! tests/damage_software.rs runs [`HOST_COPIES`] copies (the guest's among
//! them: copy N is the same file for both) through reel's software path on
//! the host. Both check every run with the same code
//! ([`DamageRuns::assert_runs`]), reading the runs' saved outputs
//! ([`RunOutputs`]) and expecting their own decoder ([`Decoder`]).

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::ops::Range;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::Duration;

use super::reel_runs;
use super::vm::{GuestResult, ScriptCall};

/// README: a file whose data ends more than 100 ms (or 3 frames) before
/// the end its header declares is reported as truncated; with a frame of
/// margin for the header's rounding.
const REPORTED_TRUNCATION: Duration = Duration::from_millis(150);
/// Seconds one damaged copy may take (an undamaged one: about one in the
/// guest, a tenth of that on the host).
pub const RUN_LIMIT_SECS: u32 = 30;
/// How many damaged copies of its source the codec guest suite runs for
/// each codec through visl: the first of [`HOST_COPIES`], six of each [`Kind`]. Under
/// TCG a run takes 0.5-2.5 s, so these are for the V4L2 path's error
/// handling; the bulk runs on the host.
pub const GUEST_COPIES: usize = 24;
/// How many damaged copies of each source tests/damage_software.rs runs
/// through the software path on the host (a tenth of a second each).
pub const HOST_COPIES: usize = 200;
/// The guest's result directory of a codec's damaged copies' runs (one
/// boot runs every codec's).
fn guest_results(label: &str) -> String {
    format!("damage-{label}")
}

/// One codec's source of damaged copies.
pub struct DamageSource {
    /// The codec, as the suites name it (its guest copies are in
    /// target/guest-codecs/damaged-LABEL).
    pub label: &'static str,
    /// The source's file name under target/damage-sources (its extension
    /// picks the container).
    pub file: &'static str,
    /// [`encoded_source`]'s codec and options, key frame interval included.
    pub video_args: &'static [&'static str],
    /// Copy N is damaged from `seed + N`.
    pub seed: u64,
    /// How a packet is dropped for this codec ([`Plan::blank`]).
    pub blank: fn(&mut [u8]),
}

/// Every codec's source: a second of 320x240 with a key frame (IRAP, I
/// picture) every 6 frames, so that damage before each has one to recover
/// at.
pub static SOURCES: [DamageSource; 5] = [
    // libvpx.
    DamageSource {
        label: "vp8",
        file: "vp8.webm",
        video_args: &[
            "-c:v",
            "libvpx",
            "-g",
            "6",
            "-keyint_min",
            "6",
            "-auto-alt-ref",
            "0",
            "-lag-in-frames",
            "0",
            "-deadline",
            "realtime",
            "-b:v",
            "400k",
        ],
        seed: 0x5650_3800_0000,
        blank: zero_fill,
    },
    // Profile 0, libvpx-vp9.
    DamageSource {
        label: "vp9",
        file: "vp9.webm",
        video_args: &[
            "-c:v",
            "libvpx-vp9",
            "-g",
            "6",
            "-keyint_min",
            "6",
            "-auto-alt-ref",
            "0",
            "-lag-in-frames",
            "0",
            "-deadline",
            "realtime",
            "-cpu-used",
            "8",
            "-b:v",
            "400k",
        ],
        seed: 0x5650_3900_0000,
        blank: zero_fill,
    },
    // Two slices per picture, CRAs with leading pictures (x265's open GOP).
    DamageSource {
        label: "hevc",
        file: "hevc.mkv",
        video_args: &[
            "-c:v",
            "libx265",
            "-preset",
            "ultrafast",
            "-x265-params",
            "log-level=error:keyint=6:min-keyint=6:scenecut=0:slices=2",
        ],
        seed: 0x4845_5643_0000,
        blank: hevc_filler,
    },
    // B pictures in open GOPs (the B pictures after an I picture are
    // leading), in Matroska, whose blocks keep a packet's bytes in one
    // piece, unlike MPEG-TS.
    DamageSource {
        label: "mpeg2",
        file: "mpeg2.mkv",
        video_args: &["-c:v", "mpeg2video", "-g", "6", "-bf", "2", "-b:v", "800k"],
        seed: 0x4d50_4732_0000,
        blank: zero_fill,
    },
    // libaom.
    DamageSource {
        label: "av1",
        file: "av1.mkv",
        video_args: &[
            "-c:v",
            "libaom-av1",
            "-cpu-used",
            "8",
            "-usage",
            "realtime",
            "-b:v",
            "300k",
            "-g",
            "6",
            "-keyint_min",
            "6",
        ],
        seed: 0x4156_3100_0000,
        blank: av1_padding,
    },
];

/// The entry of [`SOURCES`] labelled `label`; panics when there is none.
pub fn source(label: &str) -> &'static DamageSource {
    SOURCES
        .iter()
        .find(|s| s.label == label)
        .unwrap_or_else(|| panic!("no damage source labelled {label}"))
}

/// The decoder every run must have used, as its `-v` log names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decoder {
    /// `--hwdec v4l2`: "decoder: V4L2 stateless", logged when the V4L2
    /// decoder opens.
    V4l2Stateless,
    /// `--hwdec no`: the `opened` line (the file's decoder chosen) says
    /// `decoder=software`, and no V4L2 decoder was opened.
    Software,
}

impl Decoder {
    fn used_in(self, log: &str) -> bool {
        let v4l2 = log.contains("decoder: V4L2 stateless");
        match self {
            Self::V4l2Stateless => v4l2,
            Self::Software => {
                !v4l2
                    && log
                        .lines()
                        .any(|l| l.contains(" opened ") && l.contains(" decoder=software"))
            }
        }
    }
}

/// Where a set of runs left what each did, as tests/vm/guest/damage-runs.sh
/// saves it: `FILE.rc` (exit status; 124 when killed at the time limit),
/// `FILE.out` (stdout), `FILE.log` (stderr) for each copy's file name.
pub trait RunOutputs {
    /// The saved file `name`, None when there is none.
    fn read(&self, name: &str) -> Option<String>;
    /// What to show with a run that left no exit status.
    fn report(&self) -> String;
}

/// The runs of [`DamageRuns::guest_call`] in a guest's results.
struct GuestRuns<'a> {
    result: &'a GuestResult,
    label: &'a str,
}

impl RunOutputs for GuestRuns<'_> {
    fn read(&self, name: &str) -> Option<String> {
        let path = format!("{}/{name}", guest_results(self.label));
        self.result.read_result(&path).ok()
    }

    fn report(&self) -> String {
        self.result.report()
    }
}

/// The runs of [`DamageRuns::run_on_host`]: their files in `dir`.
pub struct HostRuns {
    pub dir: PathBuf,
}

impl RunOutputs for HostRuns {
    fn read(&self, name: &str) -> Option<String> {
        std::fs::read_to_string(self.dir.join(name)).ok()
    }

    fn report(&self) -> String {
        format!("(the runs' files are in {})", self.dir.display())
    }
}

/// One video packet of the source, in decode order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet {
    /// Where its bytes start in the file.
    pub offset: usize,
    pub size: usize,
    /// In the stream's time base.
    pub pts: i64,
    pub duration: i64,
    pub key: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    BitFlips,
    ZeroedRun,
    DroppedPackets,
    Truncation,
}

const KINDS: [Kind; 4] = [
    Kind::BitFlips,
    Kind::ZeroedRun,
    Kind::DroppedPackets,
    Kind::Truncation,
];

/// One damaged copy of the source.
#[derive(Debug, Clone)]
pub struct DamagedCopy {
    pub path: PathBuf,
    pub seed: u64,
    pub kind: Kind,
    /// The packets (decode order) whose bytes were changed or cut.
    pub packets: Range<usize>,
    /// What was done, for failure messages.
    pub description: String,
}

/// How to damage: how many copies, from which seed, and how a packet is
/// dropped for this codec.
pub struct Plan {
    pub copies: usize,
    pub seed: u64,
    /// Overwrites a whole packet with data of the same size that the codec
    /// skips (a dropped packet without rewriting the container) or, for a
    /// codec with no filler (VP8, VP9), rejects as a whole.
    pub blank: fn(&mut [u8]),
}

/// A second of 320x240 `testsrc2` at 30 fps encoded with `video_args`
/// (codec and its options, key frame interval included) into `path`, made
/// once with FFmpeg; the container follows the extension. The guest suite
/// and the host test may make the same source at once: each encodes into
/// a file of its own and the first to link it at `path` wins, so the file
/// never changes once there (libvpx's VP8 packets differ from one encode
/// to the next, Matroska's header always does).
pub fn encoded_source(path: &Path, video_args: &[&str]) -> Result<PathBuf, String> {
    if path.exists() {
        return Ok(path.to_path_buf());
    }
    let io = |e: std::io::Error| format!("{}: {e}", path.display());
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let extension = path.extension().and_then(|e| e.to_str()).unwrap_or("mkv");
    let partial = path.with_extension(format!("partial-{}.{extension}", std::process::id()));
    run(Command::new("ffmpeg")
        .args(["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i"])
        .arg("testsrc2=size=320x240:rate=30:duration=1")
        .args(video_args)
        .args(["-pix_fmt", "yuv420p"])
        .arg(&partial))?;
    let linked = match std::fs::hard_link(&partial, path) {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        other => other,
    };
    std::fs::remove_file(&partial).map_err(io)?;
    linked.map_err(io)?;
    Ok(path.to_path_buf())
}

/// A codec's damaged copies and their checks: no panic, no hang, the
/// exit status README documents, every picture from the first key frame
/// after the damage on output. The runs go through reel's V4L2 path in the
/// codec guest suite's boot ([`Self::guest_call`], [`Self::assert_recovered`])
/// or through its software path on the host ([`Self::run_on_host`],
/// [`Self::assert_runs`]).
pub struct DamageRuns {
    pub label: &'static str,
    pub source: Source,
    pub copies: Vec<DamagedCopy>,
}

impl DamageRuns {
    /// `copies` damaged copies of `spec`'s source (made once, in
    /// target/damage-sources) in `dir`.
    pub fn new(spec: &'static DamageSource, copies: usize, dir: &Path) -> Result<Self, String> {
        let path = super::target_dir().join("damage-sources").join(spec.file);
        let source = Source::open(&encoded_source(&path, spec.video_args)?)?;
        let plan = Plan {
            copies,
            seed: spec.seed,
            blank: spec.blank,
        };
        let copies = source.damaged_copies(&plan, dir)?;
        Ok(Self {
            label: spec.label,
            source,
            copies,
        })
    }

    /// The damaged copies the codec guest suite runs for `spec`:
    /// [`GUEST_COPIES`] of them, in target/guest-codecs/damaged-LABEL (the
    /// guest sees them there too); panics (failing the suite) when they
    /// cannot be made.
    pub fn for_guest(spec: &'static DamageSource) -> Self {
        let dir = super::target_dir()
            .join("guest-codecs")
            .join(format!("damaged-{}", spec.label));
        Self::new(spec, GUEST_COPIES, &dir).unwrap_or_else(|e| panic!("{e}"))
    }

    fn dir(&self) -> PathBuf {
        self.copies
            .first()
            .and_then(|c| c.path.parent())
            .map(Path::to_path_buf)
            .unwrap_or_default()
    }

    /// The guest call decoding every copy with `--hwdec v4l2 --output
    /// framemd5 -v`, each under [`RUN_LIMIT_SECS`].
    pub fn guest_call(&self) -> ScriptCall {
        ScriptCall::new("damage-runs.sh")
            .arg(guest_results(self.label))
            .arg(self.dir())
            .arg(RUN_LIMIT_SECS.to_string())
            .arg(env!("CARGO_BIN_EXE_reel"))
            .args(["--hwdec", "v4l2", "--output", "framemd5", "-v"])
    }

    /// Seconds the guest may need for these runs.
    pub fn guest_seconds(&self) -> u64 {
        5 * self.copies.len() as u64
    }

    /// Checks every copy's run in the guest's results (the V4L2 decoder
    /// used); see [`Self::assert_runs`].
    pub fn assert_recovered(&self, result: &GuestResult) {
        let runs = GuestRuns {
            result,
            label: self.label,
        };
        self.assert_runs(&runs, Decoder::V4l2Stateless);
    }

    /// Runs `reel ARGS... FILE` on every copy as damage-runs.sh does in
    /// the guest: each under `timeout -k 5` [`RUN_LIMIT_SECS`], its
    /// outputs saved in `dir` (emptied first); [`host_jobs`] runs at a time
    /// across the whole test binary.
    pub fn run_on_host(&self, dir: &Path, args: &[&str]) -> Result<HostRuns, String> {
        let io = |e: std::io::Error| format!("{}: {e}", dir.display());
        if dir.exists() {
            std::fs::remove_dir_all(dir).map_err(io)?;
        }
        std::fs::create_dir_all(dir).map_err(io)?;
        let next = AtomicUsize::new(0);
        let first_error = Mutex::new(None);
        std::thread::scope(|scope| {
            for _ in 0..host_jobs() {
                scope.spawn(|| {
                    while let Some(copy) = self.copies.get(next.fetch_add(1, Ordering::Relaxed)) {
                        let _slot = HostSlot::take();
                        if let Err(e) = host_run(&copy.path, dir, args) {
                            first_error
                                .lock()
                                .unwrap_or_else(|e| e.into_inner())
                                .get_or_insert(e);
                        }
                    }
                });
            }
        });
        match first_error.into_inner().unwrap_or_else(|e| e.into_inner()) {
            Some(e) => Err(e),
            None => Ok(HostRuns {
                dir: dir.to_path_buf(),
            }),
        }
    }

    /// Checks every copy's run in `outputs`, which must have used
    /// `decoder`; panics with the first failures, else prints how many
    /// were recoverable and how many reported an error.
    pub fn assert_runs(&self, outputs: &dyn RunOutputs, decoder: Decoder) {
        let failures: Vec<String> = self
            .copies
            .iter()
            .filter_map(|copy| self.failure(copy, outputs, decoder))
            .collect();
        assert!(
            failures.is_empty(),
            "{}: {} of {} damaged copies failed:\n{}",
            self.label,
            failures.len(),
            self.copies.len(),
            failures[..failures.len().min(10)].join("\n")
        );
        let reported = self
            .copies
            .iter()
            .filter(|c| read(outputs, c, "rc").is_some_and(|rc| rc.trim() == "1"))
            .count();
        let recoverable = self
            .copies
            .iter()
            .filter(|c| self.source.recovered_output(c).is_some())
            .count();
        eprintln!(
            "{} damaged copies of {} ({decoder:?}): {recoverable} with a key frame after the damage, all recovered; {reported} exited 1",
            self.copies.len(),
            self.source.path.display()
        );
    }

    /// What one copy's run did wrong, if anything.
    fn failure(
        &self,
        copy: &DamagedCopy,
        outputs: &dyn RunOutputs,
        decoder: Decoder,
    ) -> Option<String> {
        let file = copy.path.file_name()?.to_string_lossy().into_owned();
        let what = format!("{file} ({}, seed {:#x})", copy.description, copy.seed);
        let Some(rc) = read(outputs, copy, "rc").and_then(|rc| rc.trim().parse::<i32>().ok())
        else {
            return Some(format!("{what}: no exit status\n{}", outputs.report()));
        };
        let log = read(outputs, copy, "log").unwrap_or_default();
        let out = read(outputs, copy, "out").unwrap_or_default();
        if rc == 124 {
            return Some(format!("{what}: still running after {RUN_LIMIT_SECS} s"));
        }
        if log.contains("panicked") {
            return Some(format!("{what}: panicked:\n{log}"));
        }
        if !decoder.used_in(&log) {
            return Some(format!("{what}: not decoded by {decoder:?}:\n{log}"));
        }
        // README: 0 when every file played whole, 1 (with one error line
        // naming the file) when it had errors.
        let errors: Vec<&str> = log
            .lines()
            .filter(|l| l.starts_with("reel: error: "))
            .collect();
        let status_ok = match rc {
            0 => errors.is_empty(),
            1 => errors.len() == 1 && errors[0].contains(&file),
            _ => false,
        };
        if !status_ok {
            return Some(format!(
                "{what}: exit status {rc}, error lines {errors:?}:\n{log}"
            ));
        }
        if let Some(lost) = self.source.time_cut_off(copy) {
            if lost > REPORTED_TRUNCATION && rc != 1 {
                return Some(format!("{what}: {lost:?} cut off, not reported:\n{log}"));
            }
        }
        let shown: BTreeSet<i64> = reel_runs::framemd5_lines(&out)
            .iter()
            .map(|l| l.0)
            .collect();
        let expected = self.source.recovered_output(copy)?;
        let missing: Vec<i64> = expected
            .into_iter()
            .filter(|p| !shown.contains(p))
            .collect();
        (!missing.is_empty()).then(|| {
            format!(
                "{what}: not recovered at the next key frame: pts {missing:?} missing from\n{out}\n{log}"
            )
        })
    }
}

/// A copy's saved output `ext` (rc, out, log).
fn read(outputs: &dyn RunOutputs, copy: &DamagedCopy, ext: &str) -> Option<String> {
    let file = copy.path.file_name()?.to_string_lossy();
    outputs.read(&format!("{file}.{ext}"))
}

/// Reel runs at once on the host: `REEL_DAMAGE_JOBS` (as in the guest),
/// else one per CPU.
pub fn host_jobs() -> usize {
    std::env::var("REEL_DAMAGE_JOBS")
        .ok()
        .and_then(|j| j.parse().ok())
        .filter(|&j| j > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
}

/// One of [`host_jobs`] places for a reel run, shared by every test of
/// the binary (the test threads run several codecs' copies at once).
struct HostSlot;

impl HostSlot {
    fn slots() -> &'static (Mutex<usize>, Condvar) {
        static SLOTS: OnceLock<(Mutex<usize>, Condvar)> = OnceLock::new();
        SLOTS.get_or_init(|| (Mutex::new(host_jobs()), Condvar::new()))
    }

    fn take() -> Self {
        let (free, freed) = Self::slots();
        let mut free = free.lock().unwrap_or_else(|e| e.into_inner());
        while *free == 0 {
            free = freed.wait(free).unwrap_or_else(|e| e.into_inner());
        }
        *free -= 1;
        Self
    }
}

impl Drop for HostSlot {
    fn drop(&mut self) {
        let (free, freed) = Self::slots();
        *free.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        freed.notify_one();
    }
}

/// One time-limited run of `reel ARGS... FILE`, saved as damage-runs.sh
/// saves it: `dir/FILE.out`, `.log`, `.rc` (124: killed at the limit).
fn host_run(file: &Path, dir: &Path, args: &[&str]) -> Result<(), String> {
    let name = file
        .file_name()
        .ok_or_else(|| format!("{}: no file name", file.display()))?
        .to_string_lossy();
    let saved = |ext: &str| dir.join(format!("{name}.{ext}"));
    let create = |ext: &str| File::create(saved(ext)).map_err(|e| format!("{ext}: {e}"));
    let mut command = Command::new("timeout");
    command
        .args(["-k", "5", &RUN_LIMIT_SECS.to_string()])
        .arg(env!("CARGO_BIN_EXE_reel"))
        .args(args)
        .arg(file)
        .stdout(create("out")?)
        .stderr(create("log")?);
    let status = command.status().map_err(|e| format!("{command:?}: {e}"))?;
    // Killed by a signal: 128 + N, as the guest's shell records it.
    let rc = status
        .code()
        .or_else(|| status.signal().map(|n| 128 + n))
        .unwrap_or(-1);
    std::fs::write(saved("rc"), format!("{rc}\n")).map_err(|e| format!("{name}.rc: {e}"))
}

/// A clip to damage: its packets and FFmpeg's output pts of each picture.
pub struct Source {
    pub path: PathBuf,
    pub packets: Vec<Packet>,
    /// The video stream's time base (numerator, denominator).
    pub time_base: (u64, u64),
    /// Packet pts (stream time base) -> the pts FFmpeg's framemd5 gives
    /// that picture.
    output_pts: BTreeMap<i64, i64>,
}

impl Source {
    pub fn open(path: &Path) -> Result<Self, String> {
        let data = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let packets = locate_packets(path, &data)?;
        let mut by_pts: Vec<i64> = packets.iter().map(|p| p.pts).collect();
        by_pts.sort_unstable();
        let shown = ffmpeg_framemd5_pts(path)?;
        if shown.len() != by_pts.len() {
            return Err(format!(
                "{}: {} packets but FFmpeg outputs {} frames",
                path.display(),
                by_pts.len(),
                shown.len()
            ));
        }
        Ok(Self {
            path: path.to_path_buf(),
            time_base: time_base(path)?,
            packets,
            output_pts: by_pts.into_iter().zip(shown).collect(),
        })
    }

    /// Writes `plan.copies` damaged copies into `dir` (emptied first).
    pub fn damaged_copies(&self, plan: &Plan, dir: &Path) -> Result<Vec<DamagedCopy>, String> {
        let io = |e: std::io::Error| format!("{}: {e}", dir.display());
        if dir.exists() {
            std::fs::remove_dir_all(dir).map_err(io)?;
        }
        std::fs::create_dir_all(dir).map_err(io)?;
        let data =
            std::fs::read(&self.path).map_err(|e| format!("{}: {e}", self.path.display()))?;
        // Damage other than truncation ends before the last key frame, so
        // that there is one to recover at.
        let last_key = self
            .packets
            .iter()
            .rposition(|p| p.key)
            .filter(|&k| k > 0)
            .ok_or_else(|| format!("{}: fewer than two key frames", self.path.display()))?;
        let extension = self
            .path
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or("bin");
        let mut copies = Vec::with_capacity(plan.copies);
        for i in 0..plan.copies {
            let seed = plan.seed.wrapping_add(i as u64);
            let mut rng = Rng::new(seed);
            let kind = KINDS[i % KINDS.len()];
            let mut bytes = data.clone();
            let (packets, description) = match kind {
                Kind::Truncation => self.truncate(&mut bytes, &mut rng),
                _ => self.overwrite(&mut bytes, kind, last_key, plan.blank, &mut rng),
            };
            let path = dir.join(format!("{i:03}-{kind:?}.{extension}"));
            std::fs::write(&path, &bytes).map_err(|e| format!("{}: {e}", path.display()))?;
            copies.push(DamagedCopy {
                path,
                seed,
                kind,
                packets,
                description,
            });
        }
        Ok(copies)
    }

    /// The framemd5 pts of the pictures decoding must output after the
    /// damage: from the first key frame after it on, leading pictures
    /// excepted. None when no key frame follows the damage.
    pub fn recovered_output(&self, copy: &DamagedCopy) -> Option<Vec<i64>> {
        if copy.kind == Kind::Truncation {
            return None;
        }
        let key = (copy.packets.end..self.packets.len()).find(|&i| self.packets[i].key)?;
        let key_pts = self.packets[key].pts;
        let mut expected: Vec<i64> = self.packets[key..]
            .iter()
            .filter(|p| p.pts >= key_pts)
            .map(|p| self.output_pts[&p.pts])
            .collect();
        expected.sort_unstable();
        Some(expected)
    }

    /// For a truncated copy: how much of the stream's time the cut took
    /// away, from the end of the last whole packet before the cut (the
    /// furthest pts + duration) to the end of the source's.
    pub fn time_cut_off(&self, copy: &DamagedCopy) -> Option<Duration> {
        if copy.kind != Kind::Truncation {
            return None;
        }
        let end = |packets: &[Packet]| packets.iter().map(|p| p.pts + p.duration).max();
        let full = end(&self.packets)?;
        let kept = end(&self.packets[..copy.packets.start]).unwrap_or(0);
        let (num, den) = self.time_base;
        let lost = full.saturating_sub(kept).max(0) as u64;
        Some(Duration::from_nanos(lost * num * 1_000_000_000 / den))
    }

    /// Bit flips, a zeroed run or dropped packets, in packets before
    /// `last_key`.
    fn overwrite(
        &self,
        bytes: &mut [u8],
        kind: Kind,
        last_key: usize,
        blank: fn(&mut [u8]),
        rng: &mut Rng,
    ) -> (Range<usize>, String) {
        let first = rng.below(last_key);
        match kind {
            Kind::BitFlips => {
                // Up to 8 flips in one or two neighbouring packets.
                let end = (first + 1 + rng.below(2)).min(last_key);
                let flips = 1 + rng.below(8);
                let mut at = Vec::new();
                for _ in 0..flips {
                    let p = &self.packets[first + rng.below(end - first)];
                    let byte = p.offset + rng.below(p.size);
                    let bit = rng.below(8);
                    bytes[byte] ^= 1 << bit;
                    at.push(format!("{byte}.{bit}"));
                }
                (first..end, format!("bits flipped at {}", at.join(" ")))
            }
            Kind::ZeroedRun => {
                let p = &self.packets[first];
                let start = rng.below(p.size);
                let len = (1 + rng.below(64)).min(p.size - start);
                bytes[p.offset + start..p.offset + start + len].fill(0);
                (
                    first..first + 1,
                    format!("{len} bytes zeroed at {}", p.offset + start),
                )
            }
            Kind::DroppedPackets => {
                let end = (first + 1 + rng.below(3)).min(last_key);
                for p in &self.packets[first..end] {
                    blank(&mut bytes[p.offset..p.offset + p.size]);
                }
                (first..end, format!("packets {first}..{end} dropped"))
            }
            Kind::Truncation => unreachable!("truncation cuts, it does not overwrite"),
        }
    }

    /// The file cut inside a packet's bytes.
    fn truncate(&self, bytes: &mut Vec<u8>, rng: &mut Rng) -> (Range<usize>, String) {
        let index = rng.below(self.packets.len());
        let p = &self.packets[index];
        let cut = p.offset + rng.below(p.size);
        bytes.truncate(cut);
        (
            index..self.packets.len(),
            format!("cut at byte {cut}, in packet {index}"),
        )
    }
}

/// A dropped HEVC packet of a length-prefixed stream (Matroska, MP4:
/// 4-byte NAL lengths): one filler-data NAL unit (type 38) as long as the
/// packet, which decoders skip.
pub fn hevc_filler(packet: &mut [u8]) {
    const FD_NUT: u8 = 38;
    if packet.len() < 7 {
        packet.fill(0);
        return;
    }
    let nal_len = (packet.len() - 4) as u32;
    packet[..4].copy_from_slice(&nal_len.to_be_bytes());
    packet[4] = FD_NUT << 1;
    packet[5] = 1;
    packet[6..].fill(0xff);
    // rbsp_trailing_bits
    if let Some(last) = packet.last_mut() {
        *last = 0x80;
    }
}

/// A packet of zeros: for MPEG-2 zero bytes before a start code are
/// stuffing, so the packet is skipped; VP8 and VP9 have no filler, and a
/// frame of zeros is rejected whole (VP9: frame_marker is not 2; VP8: a
/// key frame without its start code), which is the nearest to a dropped
/// packet without rewriting the container.
pub fn zero_fill(packet: &mut [u8]) {
    packet.fill(0);
}

/// A dropped AV1 packet (a temporal unit of OBUs with size fields): one
/// padding OBU (type 15) as long as the packet, which decoders skip.
pub fn av1_padding(packet: &mut [u8]) {
    const OBU_PADDING: u8 = 15;
    // Header byte, then obu_size in as few LEB128 bytes as it takes.
    let Some(mut payload) = packet.len().checked_sub(2) else {
        packet.fill(0);
        return;
    };
    let leb_len = |n: usize| (1..=8).find(|&k| n < 1 << (7 * k)).unwrap_or(8);
    while 1 + leb_len(payload) + payload > packet.len() {
        payload -= 1;
    }
    let size_len = packet.len() - 1 - payload;
    packet[0] = (OBU_PADDING << 3) | 0b10;
    for i in 0..size_len {
        let more = if i + 1 < size_len { 0x80 } else { 0 };
        // A LEB128 may carry more bytes than it needs (continuation bits on
        // zero groups): the size field fills the room exactly.
        packet[1 + i] = ((payload >> (7 * i)) & 0x7f) as u8 | more;
    }
    packet[1 + size_len..].fill(0);
}

/// The source's video packets with their bytes found in the file: FFmpeg
/// lists each packet's position and size, `-f data` gives its bytes, which
/// must appear whole at or shortly after that position.
fn locate_packets(path: &Path, file: &[u8]) -> Result<Vec<Packet>, String> {
    let listing = run(Command::new("ffprobe")
        .args(["-v", "error", "-select_streams", "v:0", "-show_entries"])
        .args(["packet=pts,duration,size,pos,flags", "-of", "compact=p=0"])
        .arg(path))?;
    let payloads = run(Command::new("ffmpeg")
        .args(["-nostdin", "-v", "error", "-i"])
        .arg(path)
        .args(["-map", "0:v:0", "-c", "copy", "-f", "data", "-"]))?;
    let mut packets = Vec::new();
    let mut consumed = 0;
    for line in String::from_utf8_lossy(&listing).lines() {
        let fields: BTreeMap<&str, &str> =
            line.split('|').filter_map(|f| f.split_once('=')).collect();
        let number = |key: &str| -> Result<i64, String> {
            fields
                .get(key)
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| format!("{}: ffprobe line without {key}: {line}", path.display()))
        };
        let size = number("size")? as usize;
        let position = number("pos")? as usize;
        let payload = payloads.get(consumed..consumed + size).ok_or_else(|| {
            format!(
                "{}: FFmpeg gave fewer packet bytes than listed",
                path.display()
            )
        })?;
        consumed += size;
        // A container's per-packet header (a Matroska block's) sits between
        // the listed position and the bytes.
        const HEADER_ROOM: usize = 32;
        let window = file
            .get(position..(position + HEADER_ROOM + size).min(file.len()))
            .unwrap_or_default();
        let at = window
            .windows(size.max(1))
            .position(|w| w == payload)
            .ok_or_else(|| {
                format!(
                    "{}: packet {} is not stored in one piece at {position}",
                    path.display(),
                    packets.len()
                )
            })?;
        packets.push(Packet {
            offset: position + at,
            size,
            pts: number("pts")?,
            duration: number("duration")?,
            key: fields.get("flags").is_some_and(|f| f.starts_with('K')),
        });
    }
    if packets.is_empty() {
        return Err(format!("{}: no video packets", path.display()));
    }
    Ok(packets)
}

/// The video stream's time base, by ffprobe.
fn time_base(path: &Path) -> Result<(u64, u64), String> {
    let out = run(Command::new("ffprobe")
        .args(["-v", "error", "-select_streams", "v:0", "-show_entries"])
        .args(["stream=time_base", "-of", "csv=p=0"])
        .arg(path))?;
    let text = String::from_utf8_lossy(&out);
    text.lines()
        .next()
        .and_then(|l| l.split(',').next())
        .and_then(|l| l.trim().split_once('/'))
        .and_then(|(n, d)| Some((n.parse().ok()?, d.parse().ok()?)))
        .filter(|&(_, d)| d > 0)
        .ok_or_else(|| format!("{}: no time base in {text:?}", path.display()))
}

/// The pts of FFmpeg's framemd5 of the file, in output order.
fn ffmpeg_framemd5_pts(path: &Path) -> Result<Vec<i64>, String> {
    let out = run(Command::new("ffmpeg")
        .args(["-nostdin", "-v", "error", "-i"])
        .arg(path)
        .args(["-map", "0:v:0", "-f", "framemd5", "-"]))?;
    String::from_utf8_lossy(&out)
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            l.split(',')
                .nth(2)
                .and_then(|pts| pts.trim().parse().ok())
                .ok_or_else(|| format!("framemd5 line without pts: {l}"))
        })
        .collect()
}

fn run(command: &mut Command) -> Result<Vec<u8>, String> {
    let output = command.output().map_err(|e| format!("{command:?}: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "{command:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(output.stdout)
}

/// xorshift64*: the same damage from the same seed on every machine.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        // Never zero (xorshift's fixed point); nearby seeds spread apart.
        Self(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform enough in 0..n (n > 0).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}
