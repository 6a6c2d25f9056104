use super::*;
use crate::codec::av1::decoder::tests::{
    hidden_key_frame, sequence_header, sequence_header_at_level, show_existing,
};
use crate::codec::av1::decoder::TileGroupData;
use crate::codec::av1::tile_group::{TileEntry, TileGroup};
use crate::v4l2::discovery::MenuControl;

fn group(
    obu: std::ops::Range<usize>,
    payload_offset: usize,
    tiles: &[(usize, usize)],
) -> TileGroupData {
    TileGroupData {
        obu,
        payload_offset,
        group: TileGroup {
            tiles: tiles
                .iter()
                .enumerate()
                .map(|(i, &(offset, size))| TileEntry {
                    offset,
                    size,
                    row: 0,
                    col: i as u32,
                })
                .collect(),
            ..TileGroup::default()
        },
    }
}

#[test]
fn tile_offsets_are_inside_the_buffer_of_payloads() {
    // Two tile group OBUs: 3 header bytes then 20 of payload (tiles at 5
    // and 15 of the OBU), and 2 header bytes then 10 (a tile at 4).
    let groups = [
        group(100..123, 3, &[(5, 10), (15, 8)]),
        group(123..135, 2, &[(4, 8)]),
    ];
    let entries = controls::tile_group_entries(&groups);
    let offsets: Vec<(u32, u32)> = entries
        .iter()
        .map(|e| (e.tile_offset, e.tile_size))
        .collect();
    // The second payload starts at 20 in the buffer.
    assert_eq!(offsets, vec![(2, 10), (12, 8), (22, 8)]);
    assert_eq!(entries[1].tile_col, 1);
}

#[test]
fn one_request_per_frame_and_a_hidden_frame_shown_from_its_buffer() {
    let mut codec = Av1Codec::new((16, 16), true);
    let mut timestamps = Timestamps::new();
    timestamps.start_packet();
    let mut tu = sequence_header();
    let key = hidden_key_frame();
    tu.extend(&key);
    let requests = codec.decode(&tu, &mut timestamps).unwrap();
    let [request] = &requests[..] else {
        panic!("one request: {}", requests.len());
    };
    let ids: Vec<u32> = request.controls.iter().map(|c| c.id).collect();
    assert_eq!(
        ids,
        [
            b::V4L2_CID_STATELESS_AV1_SEQUENCE,
            b::V4L2_CID_STATELESS_AV1_FRAME,
            b::V4L2_CID_STATELESS_AV1_TILE_GROUP_ENTRY,
            b::V4L2_CID_STATELESS_AV1_FILM_GRAIN,
        ]
    );
    // The OBU_FRAME's payload: the temporal unit after the sequence header
    // OBU and the frame OBU's two header bytes.
    let start = tu.len() - key.len() + 2;
    assert_eq!(
        request.bitstream,
        vec![BitstreamPart::Packet(start..tu.len())]
    );
    let sequence = request
        .sequence
        .as_ref()
        .expect("the first frame starts a sequence");
    assert_eq!(
        (
            sequence.coded_width,
            sequence.coded_height,
            sequence.bit_depth
        ),
        (16, 16, 8)
    );
    // Hidden: nothing due yet, but its buffer is kept.
    assert!(codec.take_output(false).is_empty());
    assert_eq!(codec.references(), vec![request.timestamp_ns]);

    timestamps.start_packet();
    let again = codec.decode(&show_existing(0), &mut timestamps).unwrap();
    assert!(again.is_empty(), "show_existing_frame makes no request");
    let shown = codec.take_output(false);
    assert_eq!(
        shown,
        vec![OutputPicture {
            timestamp_ns: request.timestamp_ns,
            packet: 2,
            visible: (16, 16),
            sample_aspect: (1, 1),
        }]
    );
}

#[test]
fn without_the_film_grain_control_requests_leave_it_out() {
    let mut codec = Av1Codec::new((16, 16), false);
    let mut timestamps = Timestamps::new();
    timestamps.start_packet();
    let mut tu = sequence_header();
    tu.extend(hidden_key_frame());
    let requests = codec.decode(&tu, &mut timestamps).unwrap();
    assert!(requests[0]
        .controls
        .iter()
        .all(|c| c.id != b::V4L2_CID_STATELESS_AV1_FILM_GRAIN));
    assert!(codec.describe().contains("not applied"));
}

#[test]
fn damage_is_a_bitstream_error_and_decoding_waits_for_a_key_frame() {
    let mut codec = Av1Codec::new((16, 16), true);
    let mut timestamps = Timestamps::new();
    timestamps.start_packet();
    let mut tu = sequence_header();
    tu.extend(hidden_key_frame());
    codec.decode(&tu, &mut timestamps).unwrap();
    timestamps.start_packet();
    // An OBU whose size runs past the packet.
    let Err(err) = codec.decode(&[0x32, 0x7f, 0x00], &mut timestamps) else {
        panic!("a damaged OBU was taken");
    };
    assert!(err.is_recoverable(), "{err}");
    assert!(codec.references().is_empty());
    // Showing a slot the damage emptied is skipped.
    timestamps.start_packet();
    assert!(codec
        .decode(&show_existing(0), &mut timestamps)
        .unwrap()
        .is_empty());
    assert!(codec.take_output(false).is_empty());
}

#[test]
fn a_level_above_the_drivers_is_warned_once_and_tried() {
    // seq_level_idx 9 is level 4.1; 8 is 4.0.
    for (max, warned) in [(Some(9), false), (Some(8), true), (None, false)] {
        let menu = max.map(|max: u32| MenuControl {
            id: b::V4L2_CID_MPEG_VIDEO_AV1_LEVEL,
            minimum: 0,
            maximum: max as i32,
            default: 0,
            items: (0..=max).map(|v| (v, format!("level {v}"))).collect(),
        });
        let levels = LevelCheck::new(menu.as_ref());
        let mut codec = Av1Codec::new((16, 16), true).with_levels(levels);
        let mut timestamps = Timestamps::new();
        timestamps.start_packet();
        let mut tu = sequence_header_at_level(9);
        tu.extend(hidden_key_frame());
        let requests = codec.decode(&tu, &mut timestamps).map(|r| r.len());
        assert_eq!(requests.ok(), Some(1), "{max:?}");
        assert_eq!(codec.levels.warned(), warned, "{max:?}");
    }
}
