use super::header::{parse_frame, FrameTag, StreamState, Vp8Error};
use super::refs::References;
use super::tables::{COEFF_UPDATE_PROBS, DEFAULT_COEFF_PROBS};

fn ivf_frames(data: &[u8]) -> Vec<Vec<u8>> {
    let mut p = u16::from_le_bytes([data[6], data[7]]) as usize;
    let mut out = Vec::new();
    while p + 12 <= data.len() {
        let sz = u32::from_le_bytes(data[p..p + 4].try_into().unwrap()) as usize;
        out.push(data[p + 12..p + 12 + sz].to_vec());
        p += 12 + sz;
    }
    out
}

#[test]
fn scratch() {
    let Ok(path) = std::env::var("VP8_SCRATCH") else {
        return;
    };
    let data = std::fs::read(path).unwrap();
    let mut st = StreamState::default();
    for f in ivf_frames(&data) {
        let h = parse_frame(&f, &mut st).unwrap();
        println!("F key={} show={} seg={}/{}/{} abs={} q={:?} lf={:?} probs={:?} parts={} refresh={:?} sb={}/{} rep={} bits={}", h.tag.key_frame, h.tag.show_frame, h.segmentation.enabled, h.segmentation.update_map, h.segmentation.update_data, h.segmentation.absolute, h.segmentation.quant, h.segmentation.lf, h.segmentation.tree_probs, h.dct_partitions, h.refresh, h.sign_bias_golden, h.sign_bias_altref, h.refresh_entropy_probs, h.header_bits);
    }
}
