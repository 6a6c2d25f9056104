//! libswresample: decoded frames of any layout, rate and sample format to
//! the output's interleaved f32 at its rate and channel count.

use ff::format::sample::Type as SampleType;
use ff::software::resampling;
use ffmpeg_next as ff;
use tracing::debug;

/// What a resampler was set up for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Input {
    format: ff::format::Sample,
    layout: u64,
    rate: u32,
}

pub struct Converter {
    channels: u16,
    rate: u32,
    resampler: Option<(Input, resampling::Context)>,
}

impl Converter {
    pub fn new(channels: u16, rate: u32) -> Self {
        Self {
            channels,
            rate,
            resampler: None,
        }
    }

    /// Appends `frame` converted to `out`; a frame whose layout differs
    /// from the last one's gets a new resampler.
    pub fn convert(
        &mut self,
        frame: &mut ff::frame::Audio,
        out: &mut Vec<f32>,
    ) -> Result<(), ff::Error> {
        let layout = input_layout(frame);
        let input = Input {
            format: frame.format(),
            layout: layout.bits(),
            rate: frame.rate(),
        };
        let out_layout = ff::ChannelLayout::default(i32::from(self.channels));
        let resampler = match &mut self.resampler {
            Some((current, resampler)) if *current == input => resampler,
            slot => {
                debug!(
                    ?input,
                    channels = self.channels,
                    rate = self.rate,
                    "audio resampler"
                );
                let resampler = resampling::Context::get(
                    input.format,
                    layout,
                    input.rate,
                    ff::format::Sample::F32(SampleType::Packed),
                    out_layout,
                    self.rate,
                )?;
                &mut slot.insert((input, resampler)).1
            }
        };
        let in_rate = u64::from(input.rate.max(1));
        let capacity = frame.samples() as u64 * u64::from(self.rate) / in_rate + 256;
        let mut converted = ff::frame::Audio::new(
            ff::format::Sample::F32(SampleType::Packed),
            capacity as usize,
            out_layout,
        );
        converted.set_rate(self.rate);
        // A frame whose layout is unspecified is labelled with the one the
        // resampler was set up for, else libswresample refuses it.
        frame.set_channel_layout(layout);
        resampler.run(frame, &mut converted)?;
        self.append(&converted, out);
        Ok(())
    }

    /// Appends what the resampler still holds, the end of the stream's
    /// sound, to `out`, and lets it go: a stream that follows (the next
    /// file's) starts afresh.
    pub fn finish(&mut self, out: &mut Vec<f32>) -> Result<(), ff::Error> {
        let Some((_, mut resampler)) = self.resampler.take() else {
            return Ok(());
        };
        let held = resampler
            .delay()
            .map_or(0, |delay| usize::try_from(delay.output).unwrap_or(0));
        let mut converted = ff::frame::Audio::new(
            ff::format::Sample::F32(SampleType::Packed),
            held + 256,
            ff::ChannelLayout::default(i32::from(self.channels)),
        );
        converted.set_rate(self.rate);
        resampler.flush(&mut converted)?;
        self.append(&converted, out);
        Ok(())
    }

    fn append(&self, converted: &ff::frame::Audio, out: &mut Vec<f32>) {
        let values = converted.samples() * usize::from(self.channels);
        let bytes = &converted.data(0)[..values * 4];
        out.extend(
            bytes
                .chunks_exact(4)
                .map(|b| f32::from_ne_bytes([b[0], b[1], b[2], b[3]])),
        );
    }
}

/// The frame's channel layout; FFmpeg's default for its channel count when
/// the stream leaves it unspecified.
fn input_layout(frame: &ff::frame::Audio) -> ff::ChannelLayout {
    let layout = frame.channel_layout();
    if layout.is_empty() || layout.channels() != i32::from(frame.channels()) {
        ff::ChannelLayout::default(i32::from(frame.channels()))
    } else {
        layout
    }
}
