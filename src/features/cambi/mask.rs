//! cambi.c `get_spatial_mask`: a pixel is in the mask when more than
//! `mask_index` pixels of the 7x7 square around it have a zero derivative,
//! i.e. equal their right and lower neighbours (the last column and row
//! count as equal); the square is clipped to the picture.
//!
//! libvmaf sums the squares with a cyclic summed-area table
//! (`compute_dp_row`, `compute_mask_row`); the sums are integers, so this
//! port's running column and row sums give the same counts.

use super::params::MASK_FILTER_SIZE;

/// `mask[i * w + j]` = 1 where the picture is flat enough, else 0.
/// `scratch` is kept from frame to frame.
pub fn spatial_mask(image: &[u16], w: usize, h: usize, mask_index: u16, out: &mut Vec<u8>, scratch: &mut Vec<u16>) {
    let pad = usize::from(MASK_FILTER_SIZE >> 1);
    out.clear();
    out.resize(w * h, 0);
    // Zero derivatives per row, then the vertical sums of 7 rows per column.
    scratch.clear();
    scratch.resize(w * h + w, 0);
    let (zero, col_sum) = scratch.split_at_mut(w * h);
    for i in 0..h {
        let row = &image[i * w..(i + 1) * w];
        let below = if i + 1 < h { Some(&image[(i + 1) * w..(i + 2) * w]) } else { None };
        let z = &mut zero[i * w..(i + 1) * w];
        for j in 0..w {
            let right = j + 1 == w || row[j] == row[j + 1];
            let down = below.is_none_or(|b| row[j] == b[j]);
            z[j] = u16::from(right && down);
        }
    }
    // Rows [0, pad] start in the column sums; each output row then adds the
    // row pad below it and drops the one pad + 1 above.
    for r in 0..h.min(pad) {
        add_row(col_sum, &zero[r * w..(r + 1) * w], true);
    }
    for i in 0..h {
        if i + pad < h {
            add_row(col_sum, &zero[(i + pad) * w..(i + pad + 1) * w], true);
        }
        if i > pad {
            add_row(col_sum, &zero[(i - pad - 1) * w..(i - pad) * w], false);
        }
        // The horizontal 7-sum of the column sums, clipped at both edges.
        let mut sum: u32 = col_sum[..w.min(pad)].iter().map(|&v| u32::from(v)).sum();
        let o = &mut out[i * w..(i + 1) * w];
        for j in 0..w {
            if j + pad < w {
                sum += u32::from(col_sum[j + pad]);
            }
            if j > pad {
                sum -= u32::from(col_sum[j - pad - 1]);
            }
            o[j] = u8::from(sum > u32::from(mask_index));
        }
    }
}

fn add_row(col_sum: &mut [u16], row: &[u16], add: bool) {
    if add {
        col_sum.iter_mut().zip(row).for_each(|(s, &z)| *s += z);
    } else {
        col_sum.iter_mut().zip(row).for_each(|(s, &z)| *s -= z);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition: a clipped 7x7 count of zero derivatives.
    fn mask_by_definition(image: &[u16], w: usize, h: usize, mask_index: u16) -> Vec<u8> {
        let zero = |r: usize, c: usize| {
            let v = image[r * w + c];
            (c + 1 == w || v == image[r * w + c + 1]) && (r + 1 == h || v == image[(r + 1) * w + c])
        };
        let mut out = vec![0; w * h];
        for i in 0..h {
            for j in 0..w {
                let mut n = 0;
                for r in i.saturating_sub(3)..(i + 4).min(h) {
                    for c in j.saturating_sub(3)..(j + 4).min(w) {
                        n += u16::from(zero(r, c));
                    }
                }
                out[i * w + j] = u8::from(n > mask_index);
            }
        }
        out
    }

    /// libvmaf's cyclic summed-area table, as get_spatial_mask_for_index
    /// runs it, to show the definition above is what it computes.
    fn mask_by_libvmaf_dp(image: &[u16], w: usize, h: usize, mask_index: u16) -> Vec<u8> {
        let pad = 3usize;
        let dp_w = w + 2 * pad + 1;
        let dp_h = 2 * pad + 2;
        let mut dp = vec![0u32; dp_w * dp_h];
        let mut deriv = vec![0u32; w];
        let mut out = vec![0u8; w * h];
        let derive = |row: usize, deriv: &mut Vec<u32>| {
            for (col, d) in deriv.iter_mut().enumerate() {
                let v = image[row * w + col];
                let hz = col == w - 1 || v == image[row * w + col + 1];
                let vt = row == h - 1 || v == image[(row + 1) * w + col];
                *d = u32::from(hz && vt);
            }
        };
        let dp_row = |dp: &mut Vec<u32>, curr: usize, prev: usize, deriv: &[u32], valid: bool| {
            let mut prefix = 0u32;
            let off = pad + 1;
            let n = if valid { w } else { 0 };
            for j in 0..w + pad {
                if j < n {
                    prefix += deriv[j];
                }
                dp[curr * dp_w + off + j] = dp[prev * dp_w + off + j].wrapping_add(prefix);
            }
        };
        for i in 0..pad {
            let valid = i < h;
            if valid {
                derive(i, &mut deriv);
            }
            let curr = i + pad + 1;
            dp_row(&mut dp, curr, curr - 1, &deriv, valid);
        }
        let (mut prev, mut curr) = (dp_h - 2, dp_h - 1);
        let mut bottom = (pad + 1 + pad) % dp_h;
        let mut top = (pad + 1 + dp_h - pad - 1) % dp_h;
        for i in pad..h + pad {
            let valid = i < h;
            if valid {
                derive(i, &mut deriv);
            }
            dp_row(&mut dp, curr, prev, &deriv, valid);
            prev = curr;
            curr = if curr + 1 == dp_h { 0 } else { curr + 1 };
            let delta = 2 * pad + 1;
            for j in 0..w {
                let r = dp[bottom * dp_w + j + delta]
                    .wrapping_add(dp[top * dp_w + j])
                    .wrapping_sub(dp[bottom * dp_w + j])
                    .wrapping_sub(dp[top * dp_w + j + delta]);
                out[(i - pad) * w + j] = u8::from(r > u32::from(mask_index));
            }
            bottom = if bottom + 1 == dp_h { 0 } else { bottom + 1 };
            top = if top + 1 == dp_h { 0 } else { top + 1 };
        }
        out
    }

    #[test]
    fn running_sums_equal_libvmafs_summed_area_table() {
        for (w, h) in [(23, 19), (7, 7), (1, 9), (9, 1), (2, 3), (40, 5)] {
            // Flat patches with steps, so counts straddle the threshold.
            let image: Vec<u16> =
                (0..w * h).map(|k| (((k % w) / 5 + (k / w) / 3) as u16 * 4) + (k % 7 == 0) as u16).collect();
            for mask_index in [0, 7, 13, 21, 48] {
                let mut ours = Vec::new();
                spatial_mask(&image, w, h, mask_index, &mut ours, &mut Vec::new());
                assert_eq!(ours, mask_by_definition(&image, w, h, mask_index), "{w}x{h} {mask_index}");
                assert_eq!(ours, mask_by_libvmaf_dp(&image, w, h, mask_index), "{w}x{h} {mask_index}");
            }
        }
    }
}
