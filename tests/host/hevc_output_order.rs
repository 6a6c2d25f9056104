//! The HEVC decoding process against libavcodec's on every generated HEVC
//! clip, picture by picture: the POC of each decoded picture in decoding
//! order (libavcodec's debug log, one thread) and the output order
//! (ffprobe's decoded frames, by pts), with the same picture counts. This
//! covers hevc_open_gop's RASL pictures (skipped after the first CRA by
//! both), hevc_bpyramid's reordering and the resolution change's second
//! sequence.

use crate::support;

use std::collections::HashSet;
use std::process::Command;

use reel::codec::hevc::decoder::HevcDecoder;
use support::h264::HEVC_CLIPS;
use support::media;

/// libavcodec's "Decoded frame with POC N." lines, in decoding order. The
/// stream probe decodes some pictures with another decoder instance first:
/// only the lines of the instance that decoded the last picture count.
fn libavcodec_pocs(clip: &str) -> Vec<i32> {
    const MARK: &str = "Decoded frame with POC ";
    let output = Command::new("ffmpeg")
        .args(["-nostdin", "-threads", "1", "-loglevel", "debug", "-i"])
        .arg(media::dir().join(clip))
        .args(["-map", "0:v:0", "-f", "null", "-"])
        .output()
        .expect("ffmpeg must be installed (packaging/install-deps.sh)");
    assert!(output.status.success(), "ffmpeg failed on {clip}");
    let log = String::from_utf8_lossy(&output.stderr);
    // "[hevc @ 0x55f809c3c600] Decoded frame with POC 3."
    let lines: Vec<(&str, &str)> = log
        .lines()
        .filter_map(|l| {
            let (context, poc) = l.split_once(MARK)?;
            Some((context, poc))
        })
        .collect();
    let decoder = lines.last().map(|(context, _)| *context);
    lines
        .iter()
        .filter(|(context, _)| Some(*context) == decoder)
        .map(|(_, poc)| {
            poc.trim_end_matches('.')
                .parse()
                .unwrap_or_else(|_| panic!("{clip}: bad POC line {poc:?}"))
        })
        .collect()
}

/// reel's POCs in decoding order and the pts of its output pictures in
/// output order, from the demuxer's packets.
fn reel_pocs_and_output(clip: &str) -> (Vec<i32>, Vec<i64>) {
    let mut demuxer =
        reel::media::Demuxer::open(&media::dir().join(clip)).unwrap_or_else(|e| panic!("{e}"));
    let mut decoder = HevcDecoder::new();
    let mut packet_pts = Vec::new();
    let mut pocs = Vec::new();
    let mut shown: Vec<u64> = Vec::new();
    while let Some(packet) = demuxer.next_packet().unwrap_or_else(|e| panic!("{e}")) {
        let index = packet_pts.len() as u64;
        packet_pts.push(packet.pts.expect("packets have a pts"));
        let jobs = decoder
            .decode_access_unit(&packet.data, index)
            .unwrap_or_else(|e| panic!("{clip}: packet {index}: {e}"));
        for job in jobs {
            pocs.push(job.poc);
            shown.extend(&job.output);
        }
    }
    shown.extend(decoder.flush().output);
    let unique: HashSet<u64> = shown.iter().copied().collect();
    assert_eq!(unique.len(), shown.len(), "{clip}: a picture output twice");
    let shown_pts = shown.iter().map(|&i| packet_pts[i as usize]).collect();
    (pocs, shown_pts)
}

#[test]
fn pocs_and_output_order_match_libavcodec() {
    for clip in HEVC_CLIPS {
        let (pocs, shown) = reel_pocs_and_output(clip);
        assert_eq!(
            pocs,
            libavcodec_pocs(clip),
            "{clip}: POCs in decoding order"
        );
        let frame_pts = media::ffprobe::<i64>(&media::dir().join(clip), "frame=pts");
        assert_eq!(shown, frame_pts, "{clip}: output order");
        eprintln!(
            "{clip}: {} pictures decoded, {} output, as libavcodec",
            pocs.len(),
            shown.len()
        );
    }
}

/// Starting at a CRA in mid-stream (a seek): the RASL pictures after it,
/// which refer to pictures before it, are not output; everything shown from
/// the CRA on is, as libavcodec shows it from a whole decode.
#[test]
fn rasl_pictures_are_skipped_when_starting_at_a_cra() {
    const CRA_NUT: u8 = 21;
    const RASL_N: u8 = 8;
    const RASL_R: u8 = 9;
    let clip = "hevc_open_gop.ts";
    let path = media::dir().join(clip);
    let mut demuxer = reel::media::Demuxer::open(&path).unwrap_or_else(|e| panic!("{e}"));
    let mut packets = Vec::new();
    while let Some(packet) = demuxer.next_packet().unwrap_or_else(|e| panic!("{e}")) {
        packets.push(packet);
    }
    let nal_types = |data: &[u8]| -> Vec<u8> {
        reel::codec::bitstream::annexb::nal_units(data)
            .map(|nal| (nal[0] >> 1) & 0x3f)
            .collect()
    };
    let cra = (1..packets.len())
        .find(|&i| nal_types(&packets[i].data).contains(&CRA_NUT))
        .expect("a CRA after the first picture");
    let rasl = packets[cra + 1..]
        .iter()
        .filter(|p| {
            nal_types(&p.data)
                .iter()
                .any(|t| matches!(*t, RASL_N | RASL_R))
        })
        .count();
    assert!(rasl > 0, "{clip}: no RASL pictures after the CRA");

    let mut decoder = HevcDecoder::new();
    for (i, packet) in packets.iter().enumerate().take(cra) {
        decoder
            .decode_access_unit(&packet.data, i as u64)
            .unwrap_or_else(|e| panic!("{clip}: packet {i}: {e}"));
    }
    decoder.reset();
    let mut shown: Vec<u64> = Vec::new();
    for (i, packet) in packets.iter().enumerate().skip(cra) {
        let jobs = decoder
            .decode_access_unit(&packet.data, i as u64)
            .unwrap_or_else(|e| panic!("{clip}: packet {i}: {e}"));
        for job in jobs {
            assert!(
                !job.missing_references,
                "{clip}: packet {i} decoded without its references"
            );
            shown.extend(job.output);
        }
    }
    shown.extend(decoder.flush().output);
    let ours: Vec<i64> = shown
        .iter()
        .map(|&i| packets[i as usize].pts.expect("pts"))
        .collect();
    let cra_pts = packets[cra].pts.expect("pts");
    let expected: Vec<i64> = media::ffprobe::<i64>(&path, "frame=pts")
        .into_iter()
        .filter(|&p| p >= cra_pts)
        .collect();
    assert_eq!(ours, expected, "{clip}: output after starting at the CRA");
    eprintln!(
        "{clip}: started at a CRA with {rasl} RASL pictures after it: {} pictures output",
        ours.len()
    );
}
