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

/// Elements the histograms are padded with at the end: the AVX2 row reads
/// a u16 count through a 32-bit gather, 2 bytes past it.
const HIST_PAD: usize = 16;

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
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        unsafe { c_values_avx2(image, mask, w, h, pad, contrast, lut, scratch, out) };
        return;
    }
    c_values_impl::<false>(image, mask, w, h, pad, contrast, lut, scratch, out);
}

/// [`c_values_impl`] compiled for AVX2: the histogram updates and the
/// levels 16 lanes wide, the c-values 8 pixels at a time (x86 module).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[allow(clippy::too_many_arguments)]
fn c_values_avx2(
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
    c_values_impl::<true>(image, mask, w, h, pad, contrast, lut, scratch, out);
}

#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn c_values_impl<const AVX2: bool>(
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
    // Every value is written below: no zeroing of what the last frame left.
    if out.len() < w * h {
        out.resize(w * h, 0.0);
    }
    let out = &mut out[..w * h];
    let levels = &mut scratch.levels;
    levels.clear();
    let (base, size) = (contrast.band_base, contrast.band_size);
    levels.extend(image.iter().zip(mask).map(|(&v, &m)| {
        let l = v.wrapping_sub(base);
        // `&` rather than `&&`: no branch, so the loop vectorizes.
        if (m != 0) & (l < size) { l } else { NOT_COUNTED }
    }));
    let hist = &mut scratch.hist;
    hist.clear();
    hist.resize(usize::from(size) * w + HIST_PAD, 0);
    let tables = RowTables::new(contrast);
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
        let (row, out_row) = (&levels[i * w..(i + 1) * w], &mut out[i * w..(i + 1) * w]);
        #[cfg(target_arch = "x86_64")]
        if AVX2 {
            // SAFETY: only instantiated inside `c_values_avx2`, on a CPU with
            // AVX2; the histograms carry HIST_PAD elements past their end.
            unsafe { x86::c_values_row(hist, row, w, &tables, lut, out_row) };
            continue;
        }
        c_values_row(hist, row, 0, w, &tables, lut, out_row);
    }
}

/// libvmaf's `increment_range` / `decrement_range` over the columns whose
/// window holds column `j`.
#[inline(always)]
fn range(hist: &mut [u16], level: u16, j: usize, w: usize, pad: usize, add: bool) {
    let row = &mut hist[usize::from(level) * w..(usize::from(level) + 1) * w];
    let cells = &mut row[j.saturating_sub(pad)..(j + pad + 1).min(w)];
    let delta = if add { 1u16 } else { u16::MAX };
    // Whole 16-lane blocks, then the rest (a 33-wide range: 2 + 1).
    let mut blocks = cells.chunks_exact_mut(16);
    for block in &mut blocks {
        block.iter_mut().for_each(|c| *c = c.wrapping_add(delta));
    }
    blocks.into_remainder().iter_mut().for_each(|c| *c = c.wrapping_add(delta));
}

#[inline(always)]
fn update_row(hist: &mut [u16], row: &[u16], w: usize, pad: usize, add: bool) {
    for (j, &l) in row.iter().enumerate() {
        if l != NOT_COUNTED {
            range(hist, l, j, w, pad, add);
        }
    }
}

#[inline(always)]
fn slide(hist: &mut [u16], leaving: &[u16], entering: &[u16], w: usize, pad: usize) {
    const CHUNK: usize = 16;
    for (c, (out_chunk, in_chunk)) in leaving.chunks(CHUNK).zip(entering.chunks(CHUNK)).enumerate() {
        // Whole chunks where nothing changes (flat areas, or nothing
        // counted) are skipped at once.
        if out_chunk.iter().zip(in_chunk).fold(0u16, |acc, (&a, &b)| acc | (a ^ b)) == 0 {
            continue;
        }
        for (k, (&out, &inn)) in out_chunk.iter().zip(in_chunk).enumerate() {
            if out == inn {
                continue;
            }
            let j = c * CHUNK + k;
            if out != NOT_COUNTED {
                range(hist, out, j, w, pad, false);
            }
            if inn != NOT_COUNTED {
                range(hist, inn, j, w, pad, true);
            }
        }
    }
}

/// `c_value_pixel`'s per-contrast constants.
struct RowTables {
    num_diffs: usize,
    /// `band_base + num_diffs`: a level's `value` in libvmaf's shifted space.
    offset: i32,
    tvi: Vec<i32>,
    vlt_luma: i32,
    weights: Vec<i32>,
    band_size: usize,
}

impl RowTables {
    fn new(c: &Contrast) -> Self {
        RowTables {
            num_diffs: usize::from(c.num_diffs),
            offset: i32::from(c.band_base) + i32::from(c.num_diffs),
            tvi: c.tvi.iter().map(|&t| i32::from(t)).collect(),
            vlt_luma: i32::from(c.vlt_luma),
            weights: c.weights.clone(),
            band_size: usize::from(c.band_size),
        }
    }
}

/// cambi.c `calculate_c_values_row` and `c_value_pixel` for columns
/// `from..w` of one row (levels and output are the whole row).
#[inline(always)]
fn c_values_row(hist: &[u16], levels: &[u16], from: usize, w: usize, t: &RowTables, lut: &[f32], out: &mut [f32]) {
    for j in from..w {
        let l = levels[j];
        if l == NOT_COUNTED {
            out[j] = 0.0;
            continue;
        }
        let l = usize::from(l);
        // `value` is the level in libvmaf's shifted space: sample + num_diffs.
        let value = l as i32 + t.offset;
        let p0 = i32::from(hist[l * w + j]);
        let mut c = 0.0f32;
        for d in 0..t.num_diffs {
            if value <= t.tvi[d] && value + d as i32 + 1 > t.vlt_luma {
                let p1 = hist[(l + d + 1) * w + j];
                let p2 = if l > d { hist[(l - d - 1) * w + j] } else { 0 };
                let p = i32::from(if p1 > p2 { p1 } else { p2 });
                let val = (t.weights[d] * p0 * p) as f32 * lut[(p + p0) as usize];
                if val > c {
                    c = val;
                }
            }
        }
        out[j] = c;
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{NOT_COUNTED, RowTables};
    use std::arch::x86_64::*;

    /// [`super::c_values_row`] 8 pixels at a time: the same integer counts
    /// (gathered from the histograms), the same float conversion and
    /// multiply per pixel, and the maximum over the steps taken in step
    /// order (`maxps` keeps the larger; equal values are the same bits).
    ///
    /// # Safety
    /// The CPU must have AVX2, and `hist` must hold 2 bytes past the last
    /// count any lane reads (the caller pads it).
    #[target_feature(enable = "avx2")]
    pub unsafe fn c_values_row(hist: &[u16], levels: &[u16], w: usize, t: &RowTables, lut: &[f32], out: &mut [f32]) {
        let top = t.band_size as i32 - 1;
        let lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        let width = _mm256_set1_epi32(w as i32);
        let low16 = _mm256_set1_epi32(0xFFFF);
        let mut j = 0;
        while j + 8 <= w {
            // SAFETY: j + 8 <= w = levels.len(): 16 bytes in bounds.
            let packed = unsafe { _mm_loadu_si128(levels.as_ptr().add(j).cast()) };
            let l = _mm256_cvtepu16_epi32(packed);
            let active = _mm256_cmpgt_epi32(_mm256_set1_epi32(i32::from(NOT_COUNTED)), l);
            if _mm256_testz_si256(active, active) != 0 {
                // SAFETY: j + 8 <= w = out.len().
                unsafe { _mm256_storeu_ps(out.as_mut_ptr().add(j), _mm256_setzero_ps()) };
                j += 8;
                continue;
            }
            let l = _mm256_min_epi32(l, _mm256_set1_epi32(top));
            // Flat areas: 8 pixels of one level read 8 neighbouring counts
            // of each histogram row, one load each instead of a gather.
            let first = _mm256_permutevar8x32_epi32(l, _mm256_setzero_si256());
            let same = _mm256_and_si256(active, _mm256_cmpeq_epi32(l, first));
            if _mm256_movemask_epi8(same) == -1 {
                let level = _mm256_extract_epi32::<0>(l) as usize;
                // SAFETY: AVX2; the level is in the band and j + 8 <= w.
                let c = unsafe { one_level(hist, level, j, w, t, lut) };
                // SAFETY: j + 8 <= w = out.len().
                unsafe { _mm256_storeu_ps(out.as_mut_ptr().add(j), c) };
                j += 8;
                continue;
            }
            let col = _mm256_add_epi32(_mm256_set1_epi32(j as i32), lanes);
            // SAFETY (every gather): masked to active lanes, whose levels
            // are in the band, so each index is a cell of the histograms.
            let gather = |level: __m256i, m: __m256i| unsafe {
                let at = _mm256_add_epi32(_mm256_mullo_epi32(level, width), col);
                let v = _mm256_mask_i32gather_epi32::<2>(_mm256_setzero_si256(), hist.as_ptr().cast(), at, m);
                _mm256_and_si256(v, low16)
            };
            let p0 = gather(l, active);
            let value = _mm256_add_epi32(l, _mm256_set1_epi32(t.offset));
            let mut c = _mm256_setzero_ps();
            for d in 0..t.num_diffs {
                let step = d as i32 + 1;
                let visible = _mm256_andnot_si256(
                    _mm256_cmpgt_epi32(value, _mm256_set1_epi32(t.tvi[d])),
                    _mm256_cmpgt_epi32(_mm256_add_epi32(value, _mm256_set1_epi32(step)), _mm256_set1_epi32(t.vlt_luma)),
                );
                let take = _mm256_and_si256(visible, active);
                if _mm256_testz_si256(take, take) != 0 {
                    continue;
                }
                // The level `step` above is in the band wherever `take` is
                // (value <= tvi[d]); the one below only if >= 0.
                let up = _mm256_add_epi32(l, _mm256_set1_epi32(step));
                let below = _mm256_sub_epi32(l, _mm256_set1_epi32(step));
                let has_below = _mm256_and_si256(take, _mm256_cmpgt_epi32(below, _mm256_set1_epi32(-1)));
                let p1 = gather(up, take);
                let p2 = gather(below, has_below);
                let p = _mm256_max_epi32(p1, p2);
                let num = _mm256_mullo_epi32(_mm256_set1_epi32(t.weights[d]), _mm256_mullo_epi32(p0, p));
                let sum = _mm256_add_epi32(p, p0);
                // SAFETY: p + p0 counts distinct pixels of one window, at
                // most window² < RECIPROCAL_LUT_SIZE = lut.len().
                let r = unsafe {
                    _mm256_mask_i32gather_ps::<4>(_mm256_setzero_ps(), lut.as_ptr(), sum, _mm256_castsi256_ps(take))
                };
                let val = _mm256_and_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(num), r), _mm256_castsi256_ps(take));
                c = _mm256_max_ps(c, val);
            }
            // SAFETY: j + 8 <= w = out.len().
            unsafe { _mm256_storeu_ps(out.as_mut_ptr().add(j), c) };
            j += 8;
        }
        super::c_values_row(hist, levels, j, w, t, lut, out);
    }

    /// The c-values of columns j..j + 8, all at histogram row `level`: the
    /// per-lane arithmetic of [`c_values_row`], with contiguous loads.
    ///
    /// # Safety
    /// AVX2; `level < band_size` and `j + 8 <= w`.
    #[target_feature(enable = "avx2")]
    unsafe fn one_level(hist: &[u16], level: usize, j: usize, w: usize, t: &RowTables, lut: &[f32]) -> __m256 {
        let counts = |row: usize| {
            let cells = &hist[row * w + j..row * w + j + 8];
            // SAFETY: `cells` holds the 16 bytes read.
            _mm256_cvtepu16_epi32(unsafe { _mm_loadu_si128(cells.as_ptr().cast()) })
        };
        let p0 = counts(level);
        let value = level as i32 + t.offset;
        let mut c = _mm256_setzero_ps();
        for d in 0..t.num_diffs {
            if !(value <= t.tvi[d] && value + d as i32 + 1 > t.vlt_luma) {
                continue;
            }
            let p1 = counts(level + d + 1);
            let p = if level > d { _mm256_max_epi32(p1, counts(level - d - 1)) } else { p1 };
            let num = _mm256_mullo_epi32(_mm256_set1_epi32(t.weights[d]), _mm256_mullo_epi32(p0, p));
            // SAFETY: p + p0 counts distinct pixels of one window: < lut.len().
            let r = unsafe { _mm256_i32gather_ps::<4>(lut.as_ptr(), _mm256_add_epi32(p, p0)) };
            c = _mm256_max_ps(c, _mm256_mul_ps(_mm256_cvtepi32_ps(num), r));
        }
        c
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
            for (w, h, pad, band) in [(37, 23, 3, 3), (9, 30, 4, 3), (12, 5, 2, 3), (31, 8, 7, 3), (70, 40, 6, 13)] {
                // Banded ramps with noise: neighbouring levels in most
                // windows; wide bands give runs of 8 equal levels too.
                let image: Vec<u16> = (0..w * h)
                    .map(|k| (200 + (k % w) / band + (k / w) / 4 + (k * 31 % 97 == 0) as usize * 2) as u16)
                    .collect();
                let mask: Vec<u8> = (0..w * h).map(|k| u8::from(k * 13 % 50 != 0)).collect();
                let want = c_values_by_definition(&image, &mask, w, h, pad, &contrast);
                assert!(want.iter().any(|&v| v > 0.0), "the test picture has contrast");
                // What this CPU runs (AVX2 where it has it), and the portable code.
                let (mut ours, mut portable) = (Vec::new(), Vec::new());
                c_values(&image, &mask, w, h, pad, &contrast, &lut, &mut CValueScratch::default(), &mut ours);
                let mut scratch = CValueScratch::default();
                c_values_impl::<false>(&image, &mask, w, h, pad, &contrast, &lut, &mut scratch, &mut portable);
                for got in [&ours, &portable] {
                    assert!(got.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()), "{w}x{h} pad {pad}");
                }
            }
        }
    }
}
