//! The sound output through cpal: which device and layout, and the stream
//! whose callback takes samples from the queue.
//!
//! cpal's Linux host is ALSA: the `default` device reaches PipeWire or
//! PulseAudio through their ALSA plugins, and plain ALSA hardware where no
//! server runs.

use std::str::FromStr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use cpal::traits::{DeviceTrait, HostTrait, StreamTrait};
use cpal::{FromSample, SampleFormat, SizedSample};
use thiserror::Error;
use tracing::{debug, warn};

use super::Shared;

#[derive(Debug, Error)]
pub enum OutputError {
    #[error("no audio output device")]
    NoDevice,
    #[error("no audio output device named {0:?} (reel probe lists them)")]
    NotFound(String),
    #[error("{0}: no usable output format")]
    NoFormat(String),
    #[error("{device}: {message}")]
    Device { device: String, message: String },
}

/// A sample format the callback can write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    F32,
    I16,
    I32,
}

/// One of the layouts a device offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Offer {
    pub channels: u16,
    pub min_rate: u32,
    pub max_rate: u32,
    pub kind: Kind,
}

/// The layout reel plays in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    pub channels: u16,
    pub rate: u32,
    pub kind: Kind,
}

/// PipeWire's default graph rate and most hardware's native one: asking
/// for it means one resampling (libswresample's), not two.
const PREFERRED_RATE: u32 = 48_000;

/// Stereo (5.1 is downmixed, mono spread to both sides as FFmpeg's `-ac 2`
/// does) where the device takes it, else its first channel count; 48 kHz
/// where offered, else the stream's rate, else the nearest offered; float
/// before 16 then 32-bit integers.
pub fn choose(offers: &[Offer], stream_rate: u32) -> Option<Layout> {
    let channels = if offers.iter().any(|o| o.channels == 2) {
        2
    } else {
        offers.first()?.channels
    };
    let rank = |kind: Kind| match kind {
        Kind::F32 => 0,
        Kind::I16 => 1,
        Kind::I32 => 2,
    };
    let offer = offers
        .iter()
        .filter(|o| o.channels == channels)
        .min_by_key(|o| {
            let has = |rate: u32| o.min_rate <= rate && rate <= o.max_rate;
            (!has(PREFERRED_RATE), !has(stream_rate), rank(o.kind))
        })?;
    let rate = [PREFERRED_RATE, stream_rate]
        .into_iter()
        .find(|&rate| offer.min_rate <= rate && rate <= offer.max_rate)
        .unwrap_or_else(|| PREFERRED_RATE.clamp(offer.min_rate, offer.max_rate));
    Some(Layout {
        channels,
        rate,
        kind: offer.kind,
    })
}

/// The names of the output devices, each with whether it is the default.
pub fn list() -> Result<Vec<(String, bool)>, OutputError> {
    let host = cpal::default_host();
    let default = host.default_output_device().and_then(|d| device_name(&d));
    let mut names: Vec<(String, bool)> = default.iter().map(|n| (n.clone(), true)).collect();
    let devices = host.output_devices().map_err(|e| OutputError::Device {
        device: host.id().name().to_string(),
        message: e.to_string(),
    })?;
    for name in devices.filter_map(|d| device_name(&d)) {
        if default.as_ref() != Some(&name) {
            names.push((name, false));
        }
    }
    Ok(names)
}

/// What a device is called on the command line and in `reel probe`: its
/// ALSA PCM name (`default`, `pipewire`, `hw:CARD=...`).
fn device_name(device: &cpal::Device) -> Option<String> {
    device.id().ok().map(|id| id.id().to_string())
}

fn find(name: Option<&str>) -> Result<cpal::Device, OutputError> {
    let host = cpal::default_host();
    let Some(name) = name else {
        return host.default_output_device().ok_or(OutputError::NoDevice);
    };
    let devices = host.output_devices().map_err(|e| OutputError::Device {
        device: name.to_string(),
        message: e.to_string(),
    })?;
    if let Some(device) = devices
        .into_iter()
        .find(|d| device_name(d).is_some_and(|n| n == name))
    {
        return Ok(device);
    }
    // Other spellings of a card's PCM (`hw:0`, `plughw:0,0` for
    // `plughw:CARD=0,DEV=0`), as ALSA itself takes them.
    cpal::DeviceId::from_str(&format!("{}:{name}", host.id()))
        .ok()
        .and_then(|id| host.device_by_id(&id))
        .ok_or_else(|| OutputError::NotFound(name.to_string()))
}

fn offers(device: &cpal::Device, name: &str) -> Result<Vec<Offer>, OutputError> {
    let configs = device
        .supported_output_configs()
        .map_err(|e| OutputError::Device {
            device: name.to_string(),
            message: e.to_string(),
        })?;
    Ok(configs
        .filter_map(|c| {
            let kind = match c.sample_format() {
                SampleFormat::F32 => Kind::F32,
                SampleFormat::I16 => Kind::I16,
                SampleFormat::I32 => Kind::I32,
                _ => return None,
            };
            Some(Offer {
                channels: c.channels(),
                min_rate: c.min_sample_rate(),
                max_rate: c.max_sample_rate(),
                kind,
            })
        })
        .collect())
}

/// Opens `name` (None: the default device) and starts a stream taking
/// samples from `shared`'s queue.
pub fn open(
    name: Option<&str>,
    stream_rate: u32,
    shared: &Arc<Shared>,
) -> Result<(cpal::Stream, Layout, String), OutputError> {
    let device = find(name)?;
    let device_name = device_name(&device).unwrap_or_else(|| "audio device".into());
    let offers = offers(&device, &device_name)?;
    debug!(device = %device_name, offers = offers.len(), "audio output layouts offered");
    let layout = choose(&offers, stream_rate).ok_or(OutputError::NoFormat(device_name.clone()))?;
    // Periods of 40 ms, two in the buffer: sound that survives a busy
    // moment on a small board (the device's default through PipeWire is
    // 2 x 10 ms). The latency is measured, so its size costs no sync. A
    // device that cannot take it chooses.
    let config = cpal::StreamConfig {
        channels: layout.channels,
        sample_rate: layout.rate,
        buffer_size: cpal::BufferSize::Fixed(layout.rate / 25),
    };
    let stream = build_as(layout.kind, &device, &config, shared)
        .or_else(|message| {
            debug!(%message, "audio output: a 40 ms period refused, the device's own");
            let config = cpal::StreamConfig {
                buffer_size: cpal::BufferSize::Default,
                ..config
            };
            build_as(layout.kind, &device, &config, shared)
        })
        .map_err(|message| OutputError::Device {
            device: device_name.clone(),
            message,
        })?;
    stream.play().map_err(|e| OutputError::Device {
        device: device_name.clone(),
        message: e.to_string(),
    })?;
    Ok((stream, layout, device_name))
}

fn build_as(
    kind: Kind,
    device: &cpal::Device,
    config: &cpal::StreamConfig,
    shared: &Arc<Shared>,
) -> Result<cpal::Stream, String> {
    match kind {
        Kind::F32 => build::<f32>(device, config, shared),
        Kind::I16 => build::<i16>(device, config, shared),
        Kind::I32 => build::<i32>(device, config, shared),
    }
}

fn build<T>(
    device: &cpal::Device,
    config: &cpal::StreamConfig,
    shared: &Arc<Shared>,
) -> Result<cpal::Stream, String>
where
    T: SizedSample + FromSample<f32>,
{
    let data_shared = shared.clone();
    let error_shared = shared.clone();
    let mut scratch: Vec<f32> = Vec::new();
    device
        .build_output_stream(
            *config,
            move |data: &mut [T], info: &cpal::OutputCallbackInfo| {
                let at = Instant::now();
                let stamp = info.timestamp();
                let delay = stamp.playback.duration_since(stamp.callback);
                scratch.resize(data.len(), 0.0);
                data_shared.fill(&mut scratch, at, delay);
                for (slot, &sample) in data.iter_mut().zip(&scratch) {
                    *slot = T::from_sample(sample);
                }
            },
            move |error: cpal::Error| {
                // An underrun is a gap the stream recovers from (cpal
                // prepares the device again): the clock goes on with it.
                if error.kind() == cpal::ErrorKind::Xrun {
                    error_shared.xruns.fetch_add(1, Ordering::Relaxed);
                    return;
                }
                // Said once, whether the stall or the error is noticed first.
                let first = !error_shared.failed.swap(true, Ordering::Relaxed);
                if first && !error_shared.stall_warned.swap(true, Ordering::Relaxed) {
                    warn!("audio output failed, video goes on by its own clock: {error}");
                }
            },
            None,
        )
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offer(channels: u16, min_rate: u32, max_rate: u32, kind: Kind) -> Offer {
        Offer {
            channels,
            min_rate,
            max_rate,
            kind,
        }
    }

    #[test]
    fn stereo_float_at_48k_from_a_sound_server() {
        let offers = [
            offer(1, 1, 384_000, Kind::F32),
            offer(2, 1, 384_000, Kind::I16),
            offer(2, 1, 384_000, Kind::F32),
            offer(6, 1, 384_000, Kind::F32),
        ];
        for rate in [8_000, 44_100, 96_000] {
            assert_eq!(
                choose(&offers, rate),
                Some(Layout {
                    channels: 2,
                    rate: 48_000,
                    kind: Kind::F32
                })
            );
        }
    }

    #[test]
    fn hardware_without_48k_takes_the_stream_rate_or_the_nearest() {
        let offers = [offer(2, 44_100, 44_100, Kind::I16)];
        assert_eq!(choose(&offers, 44_100).map(|l| l.rate), Some(44_100));
        assert_eq!(choose(&offers, 8_000).map(|l| l.rate), Some(44_100));
        let offers = [offer(1, 8_000, 32_000, Kind::I32)];
        let layout = choose(&offers, 96_000).expect("a layout");
        assert_eq!((layout.channels, layout.rate), (1, 32_000));
    }

    #[test]
    fn nothing_offered_nothing_chosen() {
        assert_eq!(choose(&[], 48_000), None);
    }
}
