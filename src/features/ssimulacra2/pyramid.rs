//! The scale pyramid: ssimulacra2.c `downsample_2x2`, a 2x2 box average of
//! the linear RGB planes, the last row and column repeated where a side is
//! odd.

/// `downsample_2x2` of three `iw` x `ih` planes (one after the other in
/// `input`) into three `(iw + 1) / 2` x `(ih + 1) / 2` planes in `out`:
/// per output pixel, in f32, `0 + (x, y) + (x + 1, y) + (x, y + 1) + (x +
/// 1, y + 1)` (coordinates clamped into the plane) times 0.25.
pub fn downsample_2x2(input: &[f32], iw: usize, ih: usize, out: &mut [f32]) -> (usize, usize) {
    let (ow, oh) = (iw.div_ceil(2), ih.div_ceil(2));
    for c in 0..3 {
        let ip = &input[c * iw * ih..(c + 1) * iw * ih];
        let op = &mut out[c * ow * oh..(c + 1) * ow * oh];
        for oy in 0..oh {
            let r0 = &ip[(2 * oy) * iw..][..iw];
            let r1 = &ip[(2 * oy + 1).min(ih - 1) * iw..][..iw];
            let orow = &mut op[oy * ow..(oy + 1) * ow];
            for (ox, o) in orow.iter_mut().enumerate() {
                let (x0, x1) = (2 * ox, (2 * ox + 1).min(iw - 1));
                *o = (0.0 + r0[x0] + r0[x1] + r1[x0] + r1[x1]) * 0.25;
            }
        }
    }
    (ow, oh)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn averages_two_by_two_and_repeats_the_odd_edge() {
        // One 3x3 plane per channel: 1..9, then 10 times and 100 times that.
        let base: Vec<f32> = (1..=9).map(|v| v as f32).collect();
        let input: Vec<f32> = [1.0, 10.0, 100.0].iter().flat_map(|s| base.iter().map(move |v| v * s)).collect();
        let mut out = vec![0.0; 12];
        assert_eq!(downsample_2x2(&input, 3, 3, &mut out), (2, 2));
        // (1+2+4+5)/4, (3+3+6+6)/4, (7+8+7+8)/4, (9+9+9+9)/4.
        assert_eq!(out[..4], [3.0, 4.5, 7.5, 9.0]);
        assert_eq!(out[4..8], [30.0, 45.0, 75.0, 90.0]);
        assert_eq!(out[8..], [300.0, 450.0, 750.0, 900.0]);
        let mut one = vec![0.0; 3];
        assert_eq!(downsample_2x2(&[2.0, 4.0, 8.0], 1, 1, &mut one), (1, 1));
        assert_eq!(one, [2.0, 4.0, 8.0]);
    }
}
