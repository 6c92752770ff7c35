//! cambi.c `calculate_c_values`: for every pixel in the mask whose level is
//! in the counted band, the strongest visible contrast step in the window
//! around it (`c_value_pixel`), from histograms of the window's levels.
//!
//! libvmaf keeps `histograms[level][column]`: the count of masked, in-band
//! pixels of that level in the window around each column of the current
//! row, updated as the row band slides down (a pixel entering or leaving
//! adds or subtracts 1 over the columns whose window holds it). This port
//! keeps the same histograms and updates them the same way; the counts are
//! integers, so whatever order the updates come in, each row's c-values see
//! the very counts libvmaf's do, and `c_value_pixel`'s float arithmetic is
//! libvmaf's, operation for operation.

use super::params::Contrast;

/// A pixel that is not counted: outside the mask or the band.
pub const NOT_COUNTED: u16 = u16::MAX;

/// Scratch buffers kept from frame to frame.
#[derive(Default)]
pub struct CValueScratch {
    levels: Vec<u16>,
    hist: Vec<u16>,
}

/// The c-values of a `w` x `h` picture (after the mode filter) and its mask,
/// for a window of `2 * pad + 1` pixels, into `out`.
#[allow(clippy::too_many_arguments)]
pub fn c_values(
    image: &[u16],
    mask: &[u8],
    w: usize,
    h: usize,
    pad: usize,
    contrast: &Contrast,
    lut: &[f32],
    scratch: &mut CValueScratch,
    out: &mut Vec<f32>,
) {
    out.clear();
    out.resize(w * h, 0.0);
    let levels = &mut scratch.levels;
    levels.clear();
    levels.extend(
        image.iter().zip(mask).map(|(&v, &m)| if m != 0 { contrast.level(v) } else { None }.unwrap_or(NOT_COUNTED)),
    );
    let hist = &mut scratch.hist;
    hist.clear();
    hist.resize(usize::from(contrast.band_size) * w, 0);
    if contrast.band_size == 0 {
        return;
    }
    // The rows [lo, hi) are in the histograms.
    let (mut lo, mut hi) = (0usize, 0usize);
    for i in 0..h {
        let (want_lo, want_hi) = (i.saturating_sub(pad), (i + pad + 1).min(h));
        // A row leaving and one entering at once: libvmaf's `uh_slide`,
        // which skips columns where both carry the same level.
        while lo < want_lo && hi < want_hi {
            slide(hist, &levels[lo * w..(lo + 1) * w], &levels[hi * w..(hi + 1) * w], w, pad);
            lo += 1;
            hi += 1;
        }
        while hi < want_hi {
            update_row(hist, &levels[hi * w..(hi + 1) * w], w, pad, true);
            hi += 1;
        }
        while lo < want_lo {
            update_row(hist, &levels[lo * w..(lo + 1) * w], w, pad, false);
            lo += 1;
        }
        c_values_row(hist, &levels[i * w..(i + 1) * w], w, contrast, lut, &mut out[i * w..(i + 1) * w]);
    }
}

/// libvmaf's `increment_range` / `decrement_range` over the columns whose
/// window holds column `j`.
#[inline(always)]
fn range(hist: &mut [u16], level: u16, j: usize, w: usize, pad: usize, add: bool) {
    let row = &mut hist[usize::from(level) * w..(usize::from(level) + 1) * w];
    let cells = &mut row[j.saturating_sub(pad)..(j + pad + 1).min(w)];
    if add {
        cells.iter_mut().for_each(|c| *c = c.wrapping_add(1));
    } else {
        cells.iter_mut().for_each(|c| *c = c.wrapping_sub(1));
    }
}

fn update_row(hist: &mut [u16], row: &[u16], w: usize, pad: usize, add: bool) {
    for (j, &l) in row.iter().enumerate() {
        if l != NOT_COUNTED {
            range(hist, l, j, w, pad, add);
        }
    }
}

fn slide(hist: &mut [u16], leaving: &[u16], entering: &[u16], w: usize, pad: usize) {
    for (j, (&out, &inn)) in leaving.iter().zip(entering).enumerate() {
        if out == inn {
            continue;
        }
        if out != NOT_COUNTED {
            range(hist, out, j, w, pad, false);
        }
        if inn != NOT_COUNTED {
            range(hist, inn, j, w, pad, true);
        }
    }
}

/// cambi.c `calculate_c_values_row` and `c_value_pixel`.
fn c_values_row(hist: &[u16], levels: &[u16], w: usize, contrast: &Contrast, lut: &[f32], out: &mut [f32]) {
    let nd = usize::from(contrast.num_diffs);
    let offset = i32::from(contrast.band_base) + i32::from(contrast.num_diffs);
    for (j, (&l, c_out)) in levels.iter().zip(out.iter_mut()).enumerate() {
        if l == NOT_COUNTED {
            continue;
        }
        let l = usize::from(l);
        // `value` is the level in libvmaf's shifted space: sample + num_diffs.
        let value = l as i32 + offset;
        let p0 = i32::from(hist[l * w + j]);
        let mut c = 0.0f32;
        for d in 0..nd {
            if value <= i32::from(contrast.tvi[d]) && value + d as i32 + 1 > i32::from(contrast.vlt_luma) {
                let p1 = hist[(l + d + 1) * w + j];
                let p2 = if l > d { hist[(l - d - 1) * w + j] } else { 0 };
                let p = i32::from(if p1 > p2 { p1 } else { p2 });
                let val = (contrast.weights[d] * p0 * p) as f32 * lut[(p + p0) as usize];
                if val > c {
                    c = val;
                }
            }
        }
        *c_out = c;
    }
}

#[cfg(test)]
mod tests {
    use super::super::params::{Settings, plan};
    use super::super::tables::reciprocal_lut;
    use super::*;
    use crate::features::Options;

    /// c_value_pixel over a literal window count, no histograms at all.
    fn c_values_by_definition(image: &[u16], mask: &[u8], w: usize, h: usize, pad: usize, c: &Contrast) -> Vec<f32> {
        let lut = reciprocal_lut();
        let mut out = vec![0.0f32; w * h];
        let count = |i: usize, j: usize, level: i32| -> i32 {
            let mut n = 0;
            for r in i.saturating_sub(pad)..(i + pad + 1).min(h) {
                for cc in j.saturating_sub(pad)..(j + pad + 1).min(w) {
                    let k = r * w + cc;
                    if mask[k] != 0 && c.level(image[k]).is_some() && i32::from(image[k]) == level {
                        n += 1;
                    }
                }
            }
            n
        };
        for i in 0..h {
            for j in 0..w {
                let k = i * w + j;
                if mask[k] == 0 || c.level(image[k]).is_none() {
                    continue;
                }
                let v = i32::from(image[k]);
                let value = v + i32::from(c.num_diffs);
                let p0 = count(i, j, v);
                let mut best = 0.0f32;
                for d in 0..i32::from(c.num_diffs) {
                    if value <= i32::from(c.tvi[d as usize]) && value + d + 1 > i32::from(c.vlt_luma) {
                        let p1 = count(i, j, v + d + 1);
                        let p2 = if v - d > i32::from(c.band_base) { count(i, j, v - d - 1) } else { 0 };
                        let p = p1.max(p2);
                        let val = (c.weights[d as usize] * p0 * p) as f32 * lut[(p + p0) as usize];
                        best = best.max(val);
                    }
                }
                out[k] = best;
            }
        }
        out
    }

    #[test]
    fn sliding_histograms_give_the_window_counts() {
        let lut = reciprocal_lut();
        let geometry =
            crate::fixture::Geometry { width: 320, height: 240, bit_depth: 10, chroma: crate::fixture::Chroma::Yuv420 };
        for options in [serde_json::json!({}), serde_json::json!({"mlc": 4, "vlt": 2.0})] {
            let options: Options = serde_json::from_value(options).unwrap();
            let _ = Settings::new(&options).unwrap();
            let contrast = plan(&geometry, &options).unwrap().contrast;
            for (w, h, pad) in [(37, 23, 3), (9, 30, 4), (12, 5, 2), (31, 8, 7)] {
                // Banded ramps with noise: neighbouring levels in most windows.
                let image: Vec<u16> = (0..w * h)
                    .map(|k| (200 + (k % w) / 3 + (k / w) / 4 + (k * 31 % 7 == 0) as usize * 2) as u16)
                    .collect();
                let mask: Vec<u8> = (0..w * h).map(|k| u8::from(k * 13 % 10 != 0)).collect();
                let mut ours = Vec::new();
                c_values(&image, &mask, w, h, pad, &contrast, &lut, &mut CValueScratch::default(), &mut ours);
                let want = c_values_by_definition(&image, &mask, w, h, pad, &contrast);
                assert!(ours.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()), "{w}x{h} pad {pad}");
                assert!(ours.iter().any(|&v| v > 0.0), "the test picture has contrast");
            }
        }
    }
}
