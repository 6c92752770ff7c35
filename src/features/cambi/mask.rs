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
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        unsafe { spatial_mask_avx2(image, w, h, mask_index, out, scratch) };
        return;
    }
    spatial_mask_impl(image, w, h, mask_index, out, scratch);
}

/// [`spatial_mask_impl`] compiled for AVX2: integer lanes, same counts.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn spatial_mask_avx2(image: &[u16], w: usize, h: usize, mask_index: u16, out: &mut Vec<u8>, scratch: &mut Vec<u16>) {
    spatial_mask_impl(image, w, h, mask_index, out, scratch);
}

#[inline(always)]
fn spatial_mask_impl(image: &[u16], w: usize, h: usize, mask_index: u16, out: &mut Vec<u8>, scratch: &mut Vec<u16>) {
    let pad = usize::from(MASK_FILTER_SIZE >> 1);
    out.resize(w * h, 0);
    // Zero derivatives of every row, the vertical 7-sums per column, and
    // one row of horizontal sums.
    scratch.resize(w * h + 2 * w, 0);
    let (zero, rest) = scratch.split_at_mut(w * h);
    let (col_sum, row_sum) = rest.split_at_mut(w);
    for i in 0..h {
        let row = &image[i * w..(i + 1) * w];
        let z = &mut zero[i * w..(i + 1) * w];
        // Equal to the right neighbour (the last column counts as equal) ...
        for ((z, &a), &b) in z.iter_mut().zip(row).zip(&row[1..]) {
            *z = u16::from(a == b);
        }
        z[w - 1] = 1;
        // ... and to the one below (the last row counts as equal).
        if i + 1 < h {
            for ((z, &a), &b) in z.iter_mut().zip(row).zip(&image[(i + 1) * w..(i + 2) * w]) {
                *z &= u16::from(a == b);
            }
        }
    }
    // Rows [0, pad) start in the column sums; each output row then adds the
    // row pad below it and drops the one pad + 1 above.
    col_sum.fill(0);
    for r in 0..h.min(pad) {
        add_row(col_sum, &zero[r * w..(r + 1) * w], true);
    }
    let threshold = mask_index;
    for i in 0..h {
        if i + pad < h {
            add_row(col_sum, &zero[(i + pad) * w..(i + pad + 1) * w], true);
        }
        if i > pad {
            add_row(col_sum, &zero[(i - pad - 1) * w..(i - pad) * w], false);
        }
        horizontal_sums(col_sum, row_sum, pad);
        for (o, &s) in out[i * w..(i + 1) * w].iter_mut().zip(row_sum.iter()) {
            *o = u8::from(s > threshold);
        }
    }
}

#[inline(always)]
fn add_row(col_sum: &mut [u16], row: &[u16], add: bool) {
    if add {
        col_sum.iter_mut().zip(row).for_each(|(s, &z)| *s += z);
    } else {
        col_sum.iter_mut().zip(row).for_each(|(s, &z)| *s -= z);
    }
}

/// `sums[j]` = the sum of `values[j - pad ..= j + pad]`, clipped to the row.
#[inline(always)]
fn horizontal_sums(values: &[u16], sums: &mut [u16], pad: usize) {
    let w = values.len();
    let direct = |j: usize| -> u16 { values[j.saturating_sub(pad)..(j + pad + 1).min(w)].iter().sum() };
    if w < 2 * pad + 1 {
        for (j, s) in sums.iter_mut().enumerate() {
            *s = direct(j);
        }
        return;
    }
    // Interior: every window whole, added as shifted slices.
    let n = w - 2 * pad;
    let inner = &mut sums[pad..w - pad];
    inner.copy_from_slice(&values[..n]);
    for k in 1..=2 * pad {
        for (s, &v) in inner.iter_mut().zip(&values[k..k + n]) {
            *s += v;
        }
    }
    for j in (0..pad).chain(w - pad..w) {
        sums[j] = direct(j);
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
