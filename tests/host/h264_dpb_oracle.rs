//! POC and reference marking against libavcodec's own decoder, picture by
//! picture: `ffmpeg -debug pict+mmco` prints each picture's type, frame_num
//! and field POCs, and its short- and long-term reference lists after
//! marking. reel's decode params and DPB must agree for every clip.

use crate::support;

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

use reel::codec::h264::dpb::Reference;
use reel::codec::h264::slice::SliceType;
use reel::codec::h264::H264Decoder;
use support::h264::{access_units, annex_b_with_trace, work_dir, H264_CLIPS};
use support::media;

#[derive(Debug, Default, Clone)]
struct Picture {
    kind: char,
    idr: bool,
    frame_num: u32,
    poc: (i64, i64),
    short_term: BTreeSet<(u32, i64)>,
    long_term: BTreeSet<(u32, i64)>,
    /// libavcodec prints the lists after marking, so only for references.
    marked: bool,
}

fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    line.split_whitespace().find_map(|w| w.strip_prefix(key))
}

/// libavcodec's view of every picture, from its debug log.
fn libavcodec_pictures(stream: &std::path::Path) -> Vec<Picture> {
    let out = Command::new("ffmpeg")
        .args([
            "-nostdin",
            "-nostats",
            "-hide_banner",
            "-threads",
            "1",
            "-debug",
            "pict+mmco",
        ])
        .args(["-f", "h264", "-i"])
        .arg(stream)
        .args(["-f", "null", "-"])
        .output()
        .expect("ffmpeg must be installed");
    assert!(out.status.success(), "ffmpeg failed");
    let log = String::from_utf8_lossy(&out.stderr);
    // Probing runs a decoder of its own: keep the instance that saw most.
    let mut by_instance: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for line in log.lines() {
        let Some(at) = line.find("[h264 @ ") else {
            continue;
        };
        let rest = &line[at + 8..];
        let Some(close) = rest.find("] ") else {
            continue;
        };
        by_instance
            .entry(&rest[..close])
            .or_default()
            .push(&rest[close + 2..]);
    }
    let lines = by_instance
        .into_values()
        .max_by_key(|l| l.iter().filter(|l| l.starts_with("slice:")).count())
        .unwrap_or_default();

    let mut pictures: Vec<Picture> = Vec::new();
    // 0: nothing, 1: picture started, 4: marking done (want the short-term
    // list), 2: in it, 3: in the long-term list.
    let mut state = 0;
    for line in lines {
        // A picture's (a frame's or a field's) first slice is numbered 1.
        if line.starts_with("slice:1 ") {
            let words: Vec<&str> = line.split_whitespace().collect();
            let poc = field(line, "poc:").expect("poc");
            let (top, bottom) = poc.split_once('/').expect("top/bottom");
            pictures.push(Picture {
                kind: words[3].chars().next().unwrap_or('?'),
                idr: words.contains(&"IDR"),
                frame_num: field(line, "frame:").expect("frame").parse().unwrap(),
                poc: (top.parse().unwrap(), bottom.parse().unwrap()),
                ..Picture::default()
            });
            state = 1;
        } else if state == 1 && (line.starts_with("no mmco here") || line.starts_with("mmco:")) {
            state = 4;
            if let Some(p) = pictures.last_mut() {
                p.marked = true;
            }
        } else if line.starts_with("short term list:") && state == 4 {
            state = 2;
        } else if line.starts_with("long term list:") && state == 2 {
            state = 3;
        } else if state >= 2 && field(line, "fn:").is_some() {
            let entry = (
                field(line, "fn:").unwrap().parse().unwrap(),
                field(line, "poc:").unwrap().parse().unwrap(),
            );
            let p = pictures.last_mut().unwrap();
            if state == 2 {
                p.short_term.insert(entry);
            } else {
                p.long_term.insert(entry);
            }
        } else if state == 3 {
            state = 0;
        }
    }
    pictures
}

fn check_clip(clip: &str) -> usize {
    let work = work_dir("dpb-oracle");
    let annexb = annex_b_with_trace(&media::dir().join(clip), &work);
    let es = work.join(format!("{clip}.h264"));
    std::fs::write(&es, &annexb.stream).unwrap();
    let theirs = libavcodec_pictures(&es);

    let mut decoder = H264Decoder::new();
    let mut ours = Vec::new();
    for (i, unit) in access_units(&annexb.stream).iter().enumerate() {
        for job in decoder.decode_access_unit(unit, i as u64).expect("decodes") {
            let h = &job.slices[0].header;
            let set = |r: Reference| -> BTreeSet<(u32, i64)> {
                decoder
                    .dpb()
                    .pictures()
                    .iter()
                    // libavcodec lists a frame once either field is marked.
                    .filter(|p| p.has_field_marked(r))
                    .map(|p| (p.frame_num, i64::from(p.output_poc())))
                    .collect()
            };
            ours.push(Picture {
                kind: match h.slice_type {
                    SliceType::I | SliceType::Si => 'I',
                    SliceType::P | SliceType::Sp => 'P',
                    SliceType::B => 'B',
                },
                idr: h.idr,
                frame_num: h.frame_num,
                poc: (
                    i64::from(job.top_field_order_cnt),
                    i64::from(job.bottom_field_order_cnt),
                ),
                short_term: set(Reference::ShortTerm),
                long_term: set(Reference::LongTerm),
                marked: h.nal_ref_idc != 0,
            });
        }
    }
    assert_eq!(ours.len(), theirs.len(), "{clip}: picture count");
    // libavcodec starts POC at an offset at each IDR (2^16 for type 0).
    let mut offset = 0;
    // A first field's other parity: INT_MAX in libavcodec's log, 0 in reel.
    let decoded = |o: (i64, i64), t: (i64, i64)| -> Vec<(i64, i64)> {
        [(o.0, t.0), (o.1, t.1)]
            .into_iter()
            .filter(|&(_, t)| t != i64::from(i32::MAX))
            .collect()
    };
    let mut marked = 0;
    for (i, (o, t)) in ours.iter().zip(&theirs).enumerate() {
        let counts = decoded(o.poc, t.poc);
        if t.idr {
            let (ours, theirs) = counts[0];
            offset = theirs - ours;
        }
        let shift = |s: &BTreeSet<(u32, i64)>| -> BTreeSet<(u32, i64)> {
            s.iter().map(|&(f, p)| (f, p - offset)).collect()
        };
        let what = format!("{clip}: picture {i}");
        assert_eq!(
            (o.kind, o.idr, o.frame_num),
            (t.kind, t.idr, t.frame_num),
            "{what}"
        );
        for (ours, theirs) in counts {
            assert_eq!(
                ours,
                theirs - offset,
                "{what}: POC {:?} vs {:?}",
                o.poc,
                t.poc
            );
        }
        assert_eq!(o.marked, t.marked, "{what}: reference or not");
        if t.marked {
            marked += 1;
            assert_eq!(
                o.short_term,
                shift(&t.short_term),
                "{what}: short-term references"
            );
            assert_eq!(
                o.long_term,
                shift(&t.long_term),
                "{what}: long-term references"
            );
        }
    }
    assert!(marked > 0, "{clip}: no reference picture compared");
    ours.len()
}

#[test]
fn poc_and_marking_match_libavcodec() {
    for clip in H264_CLIPS {
        let n = check_clip(clip);
        eprintln!("{clip}: {n} pictures: POC and reference sets equal libavcodec's");
    }
}
