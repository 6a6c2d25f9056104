//! Playback speed for sound: the output's interleaved f32 samples
//! time-stretched by FFmpeg's `atempo` filter (WSOLA: the pitch stays as it
//! is), with the media time of what comes out.

use std::time::Duration;

use ff::format::sample::Type as SampleType;
use ffmpeg_next as ff;
use tracing::debug;

/// The slowest speed one `atempo` takes; slower is a chain of them.
const ATEMPO_MIN: f64 = 0.5;

/// One speed's filter graph.
pub struct Tempo {
    speed: f64,
    channels: u16,
    rate: u32,
    graph: ff::filter::Graph,
    /// Media time of the next sample out.
    out_pts: Option<Duration>,
    /// Samples fed in, as the input's pts counter.
    fed: i64,
}

impl Tempo {
    /// A stretch to `speed` (0.25..=4, not 1: 1 needs none) of sound in
    /// `channels` at `rate`.
    pub fn new(speed: f64, channels: u16, rate: u32) -> Result<Self, ff::Error> {
        let mut graph = ff::filter::Graph::new();
        let layout = ff::ChannelLayout::default(i32::from(channels));
        let args = format!(
            "time_base=1/{rate}:sample_rate={rate}:sample_fmt=flt:channel_layout=0x{:x}",
            layout.bits()
        );
        let abuffer = ff::filter::find("abuffer").ok_or(ff::Error::FilterNotFound)?;
        let sink = ff::filter::find("abuffersink").ok_or(ff::Error::FilterNotFound)?;
        graph.add(&abuffer, "in", &args)?;
        graph.add(&sink, "out", "")?;
        let chain = atempo_chain(speed);
        debug!(speed, %chain, "audio time-stretch");
        graph.output("in", 0)?.input("out", 0)?.parse(&chain)?;
        graph.validate()?;
        Ok(Self {
            speed,
            channels,
            rate,
            graph,
            out_pts: None,
            fed: 0,
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
    ) -> Result<Option<Duration>, ff::Error> {
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
        let mut input = self.graph.get("in").ok_or(ff::Error::Bug)?;
        input.source().add(&frame)?;
        self.drain(out)
    }

    /// The input ended: appends what the filter still holds.
    pub fn finish(&mut self, out: &mut Vec<f32>) -> Result<Option<Duration>, ff::Error> {
        let mut input = self.graph.get("in").ok_or(ff::Error::Bug)?;
        input.source().flush()?;
        self.drain(out)
    }

    /// Takes what the filter has ready.
    fn drain(&mut self, out: &mut Vec<f32>) -> Result<Option<Duration>, ff::Error> {
        let channels = usize::from(self.channels);
        let first = self.out_pts;
        let mut any = false;
        let mut output = self.graph.get("out").ok_or(ff::Error::Bug)?;
        let mut stretched = ff::frame::Audio::empty();
        loop {
            match output.sink().frame(&mut stretched) {
                Ok(()) => {}
                Err(ff::Error::Eof) => break,
                Err(ff::Error::Other { errno }) if errno == ff::util::error::EAGAIN => break,
                Err(e) => return Err(e),
            }
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
            any = true;
        }
        Ok(first.filter(|_| any))
    }
}

/// `atempo` filters whose product is `speed`: each takes 0.5 at the least.
fn atempo_chain(speed: f64) -> String {
    let mut left = speed;
    let mut filters = Vec::new();
    while left < ATEMPO_MIN {
        filters.push(format!("atempo={ATEMPO_MIN}"));
        left /= ATEMPO_MIN;
    }
    filters.push(format!("atempo={left}"));
    filters.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speeds_below_half_are_a_chain() {
        assert_eq!(atempo_chain(2.0), "atempo=2");
        assert_eq!(atempo_chain(0.5), "atempo=0.5");
        assert_eq!(atempo_chain(0.25), "atempo=0.5,atempo=0.5");
        assert_eq!(atempo_chain(0.3), "atempo=0.5,atempo=0.6");
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
        // One second in, about half a second out (less what the filter
        // still holds).
        assert!((20_000..=24_000).contains(&frames), "{frames} frames");
        assert!((pitch - 440.0).abs() < 4.4, "{pitch} Hz");
    }

    #[test]
    fn a_quarter_of_the_speed_is_four_times_the_samples_at_the_same_pitch() {
        let (frames, pitch) = stretch_tone(0.25);
        assert!((180_000..=192_000).contains(&frames), "{frames} frames");
        assert!((pitch - 440.0).abs() < 4.4, "{pitch} Hz");
    }
}
