//! The two filters of libvmaf's iqa code, CPU side: `_iqa_decimate` (a
//! K x K kernel at every f-th pixel, iqa/decimate.c + convolve.c
//! `_iqa_filter_pixel`) and the separable Gaussian of `_iqa_convolve`
//! (convolve.c, `IQA_CONVOLVE_1D`). Both multiply in f32 and add the
//! products in f64, in libvmaf's order for each pixel; they run a block of
//! pixels at a time so the compiler vectorises across pixels, which keeps
//! each pixel's own operations (and so its bits) unchanged.

use super::tables::WINDOW;

/// iqa/convolve.c `KBND_SYMMETRIC`, one reflection: -1 - i before the
/// start, 2n - i - 1 past the end. Clamped afterwards so an index that one
/// reflection does not bring back (only for frames narrower than the
/// decimation factor, which [`decimation_reads_outside`] refuses) stays in
/// bounds here.
pub fn mirror(i: i64, n: usize) -> usize {
    let n = n as i64;
    let m = if i < 0 {
        -1 - i
    } else if i >= n {
        2 * n - i - 1
    } else {
        i
    };
    m.clamp(0, n - 1) as usize
}

/// The size `_iqa_decimate` gives a `w x h` picture at factor `f`:
/// `w / f + (w & 1)` (not a rounding up: 9 at factor 4 gives 3, 10 gives 2).
pub fn decimated_dims(w: usize, h: usize, f: usize) -> (usize, usize) {
    (w / f + (w & 1), h / f + (h & 1))
}

/// Whether `_iqa_decimate` at factor `f` with an f x f kernel reads outside
/// a dimension of `n` samples that has outputs: its one reflection does not
/// bring an index back when the picture is narrower than about the factor
/// (libvmaf then reads outside the row: undefined behaviour).
pub fn decimation_reads_outside(n: usize, f: usize) -> bool {
    let outputs = n / f + (n & 1);
    if outputs == 0 {
        return false;
    }
    let (uc, even) = ((f / 2) as i64, f.is_multiple_of(2) as i64);
    let (n, f) = (n as i64, f as i64);
    let lowest = -uc;
    let highest = (outputs as i64 - 1) * f + uc - even;
    let reflect = |i: i64| {
        if i < 0 {
            -1 - i
        } else if i >= n {
            2 * n - i - 1
        } else {
            i
        }
    };
    [lowest, highest].iter().any(|&i| !(0..n).contains(&reflect(i)))
}

/// Scratch of [`decimate`], kept from frame to frame.
#[derive(Default)]
pub struct DecimateScratch {
    /// The picture split by column phase: for each row, `f` arrays where
    /// entry `i` of phase `p` is column `(i - pad) * f + p` (mirrored).
    phases: Vec<f32>,
}

/// iqa/decimate.c `_iqa_decimate(img, w, h, f, k, result, ...)`: output
/// `(x, y)`, for `x < w / f + (w & 1)` and likewise `y`, is
/// `_iqa_filter_pixel` at `(x * f, y * f)` with scale 1: the `k x k` window
/// `x * f - k / 2 ..` (rows likewise), each sample mirrored by
/// `KBND_SYMMETRIC` (C mirrors only at the picture's edge, where the
/// reflection is needed; inside it is the identity), `sum += (double)(img *
/// tap)` over window rows, then columns, and the result `(float)sum`.
/// `taps` is the kernel, `k * k`, row-major.
///
/// libvmaf's float_ssim decimates in place (`result` NULL); for every
/// geometry that does not read outside the picture no output overwrites a
/// sample a later output reads (checked for every output up to 300 x 300
/// and every factor, and by a unit test on the first rows, where it could
/// happen, up to 200 x 200), so writing elsewhere gives the same bits.
///
/// The samples are first split by column phase, so that the taps of a row
/// of outputs read consecutive floats and 8 outputs are computed at once.
#[allow(clippy::too_many_arguments)]
pub fn decimate(
    src: &[f32],
    w: usize,
    h: usize,
    f: usize,
    k: usize,
    taps: &[f32],
    out: &mut Vec<f32>,
    scratch: &mut DecimateScratch,
) {
    decimate_with(src, w, h, f, k, taps, out, scratch, simd_available())
}

/// [`decimate`], with the AVX2 kernel or without.
#[allow(clippy::too_many_arguments)]
fn decimate_with(
    src: &[f32],
    w: usize,
    h: usize,
    f: usize,
    k: usize,
    taps: &[f32],
    out: &mut Vec<f32>,
    scratch: &mut DecimateScratch,
    simd: bool,
) {
    let (sw, sh) = decimated_dims(w, h, f);
    // Every element is written below: resize only when the size changes
    // (no clearing of the whole buffer every frame).
    if out.len() != sw * sh {
        out.clear();
        out.resize(sw * sh, 0.0);
    }
    if sw == 0 || sh == 0 {
        return;
    }
    let uc = (k / 2) as i64;
    // Tap u reads column x * f + (u - uc) = (x + q) * f + p.
    let pos: Vec<(usize, i64)> =
        (0..k as i64).map(|u| ((u - uc).rem_euclid(f as i64) as usize, (u - uc).div_euclid(f as i64))).collect();
    let pad = pos.iter().map(|&(_, q)| -q).max().unwrap_or(0).max(0) as usize;
    let len = sw + pad + pos.iter().map(|&(_, q)| q).max().unwrap_or(0).max(0) as usize;
    let phases = &mut scratch.phases;
    if phases.len() != h * f * len {
        phases.clear();
        phases.resize(h * f * len, 0.0);
    }
    for (row, dst) in src.chunks_exact(w).zip(phases.chunks_exact_mut(f * len)) {
        for (p, phase) in dst.chunks_exact_mut(len).enumerate() {
            // Entry i is column (i - pad) * f + p: mirrored only where
            // that falls outside the row.
            let column = |i: usize| (i as i64 - pad as i64) * f as i64 + p as i64;
            let first = (pad * f).saturating_sub(p).div_ceil(f).min(len);
            let end = ((w + pad * f).saturating_sub(p)).div_ceil(f).clamp(first, len);
            for (i, v) in phase.iter_mut().enumerate().take(first) {
                *v = row[mirror(column(i), w)];
            }
            if end > first {
                let start = ((first as i64 - pad as i64) * f as i64 + p as i64) as usize;
                for (v, &s) in phase[first..end].iter_mut().zip(row[start..].iter().step_by(f)) {
                    *v = s;
                }
            }
            for (i, v) in phase.iter_mut().enumerate().skip(end) {
                *v = row[mirror(column(i), w)];
            }
        }
    }
    let mut reads: Vec<(&[f32], f32)> = Vec::with_capacity(k * k);
    for (y, out_row) in out.chunks_exact_mut(sw).enumerate() {
        reads.clear();
        for v in 0..k {
            let r = mirror((y * f) as i64 + v as i64 - uc, h);
            let row = &phases[r * f * len..(r + 1) * f * len];
            for (u, &(p, q)) in pos.iter().enumerate() {
                let at = p * len + (pad as i64 + q) as usize;
                reads.push((&row[at..at + sw], taps[v * k + u]));
            }
        }
        let done = if simd { decimate_row_simd(&reads, out_row) } else { 0 };
        for (x, o) in out_row.iter_mut().enumerate().skip(done) {
            let mut sum = 0f64;
            for &(row, tap) in &reads {
                sum += f64::from(row[x] * tap);
            }
            *o = sum as f32;
        }
    }
}

/// Whether the AVX2 kernels run here (x86_64 with AVX2).
pub fn simd_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    return super::simd::available();
    #[cfg(not(target_arch = "x86_64"))]
    false
}

fn decimate_row_simd(reads: &[(&[f32], f32)], out: &mut [f32]) -> usize {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: only called when simd_available() said AVX2 is there.
    return unsafe { super::simd::decimate_row(reads, out) };
    #[cfg(not(target_arch = "x86_64"))]
    0
}

/// `_iqa_convolve`'s horizontal pass over one row of the five pictures
/// `_iqa_ssim` filters (reference, distorted, their squares and their
/// product, each rounded to f32 as C stores them): `out[p][x] =
/// (float)Σ_t (double)(pic_p[x + t] * taps[t])`, t = 0..11 in order, for
/// `x < out[p].len()` (= the row's width - 10: where the window fits).
/// Outputs before `from` are left alone (the AVX2 kernel did them).
pub fn gaussian_row5(r: &[f32], d: &[f32], taps: &[f32; WINDOW], out: [&mut [f32]; 5], from: usize) {
    let n = out[0].len();
    let [o0, o1, o2, o3, o4] = out;
    for x in from..n {
        let mut sum = [0f64; 5];
        for (t, &tap) in taps.iter().enumerate() {
            let (a, b) = (r[x + t], d[x + t]);
            for (acc, v) in sum.iter_mut().zip([a, b, a * a, b * b, a * b]) {
                *acc += f64::from(v * tap);
            }
        }
        (o0[x], o1[x], o2[x], o3[x], o4[x]) =
            (sum[0] as f32, sum[1] as f32, sum[2] as f32, sum[3] as f32, sum[4] as f32);
    }
}

/// `_iqa_convolve`'s vertical pass over one map row of the five pictures:
/// `out[p][x] = (float)Σ_t (double)(rows[p][t][x] * taps[t])`, t = 0..11 in
/// order (`rows[p][t]` is picture p's horizontal row y + t). Outputs
/// before `from` are left alone.
pub fn gaussian_column5(rows: &[[&[f32]; WINDOW]; 5], taps: &[f32; WINDOW], out: [&mut [f32]; 5], from: usize) {
    for (plane, o) in rows.iter().zip(out) {
        for (x, v) in o.iter_mut().enumerate().skip(from) {
            let mut sum = 0f64;
            for (row, &tap) in plane.iter().zip(taps) {
                sum += f64::from(row[x] * tap);
            }
            *v = sum as f32;
        }
    }
}

/// [`gaussian_row5`], the AVX2 kernel first where there is one.
pub fn gaussian_row5_fast(r: &[f32], d: &[f32], taps: &[f32; WINDOW], out: [&mut [f32]; 5], simd: bool) {
    let [o0, o1, o2, o3, o4] = out;
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if simd {
        // SAFETY: the caller checked simd_available().
        done = unsafe { super::simd::gaussian_row5(r, d, taps, [&mut *o0, &mut *o1, &mut *o2, &mut *o3, &mut *o4]) };
    }
    let _ = simd;
    gaussian_row5(r, d, taps, [o0, o1, o2, o3, o4], done);
}

/// [`gaussian_column5`], the AVX2 kernel first where there is one.
pub fn gaussian_column5_fast(rows: &[[&[f32]; WINDOW]; 5], taps: &[f32; WINDOW], out: [&mut [f32]; 5], simd: bool) {
    let [o0, o1, o2, o3, o4] = out;
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if simd {
        // SAFETY: the caller checked simd_available().
        done = unsafe { super::simd::gaussian_column5(rows, taps, [&mut *o0, &mut *o1, &mut *o2, &mut *o3, &mut *o4]) };
    }
    let _ = simd;
    gaussian_column5(rows, taps, [o0, o1, o2, o3, o4], done);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// convolve.c `_iqa_filter_pixel` with KBND_SYMMETRIC, pixel at a time,
    /// as written in C: the oracle for [`decimate`].
    fn filter_pixel(img: &[f32], w: usize, h: usize, x: i64, y: i64, k: usize, taps: &[f32]) -> f32 {
        let (uc, even) = ((k / 2) as i64, k.is_multiple_of(2) as i64);
        let edge = x < uc || y < uc || x >= w as i64 - uc || y >= h as i64 - uc;
        let mut sum = 0f64;
        let mut t = 0;
        for v in -uc..=uc - even {
            for u in -uc..=uc - even {
                let (r, c) =
                    if edge { (mirror(y + v, h), mirror(x + u, w)) } else { ((y + v) as usize, (x + u) as usize) };
                sum += f64::from(img[r * w + c] * taps[t]);
                t += 1;
            }
        }
        sum as f32
    }

    /// decimate.c, in place as float_ssim calls it: each output overwrites
    /// the picture's start while later outputs still read it.
    fn decimate_in_place(img: &mut [f32], w: usize, h: usize, f: usize, k: usize, taps: &[f32]) -> Vec<f32> {
        let (sw, sh) = decimated_dims(w, h, f);
        for y in 0..sh {
            for x in 0..sw {
                img[y * sw + x] = filter_pixel(img, w, h, (x * f) as i64, (y * f) as i64, k, taps);
            }
        }
        img[..sw * sh].to_vec()
    }

    fn picture(w: usize, h: usize, seed: usize) -> Vec<f32> {
        (0..w * h).map(|i| ((i * 7919 + seed * 104729) % 1021) as f32 / 4.0).collect()
    }

    #[test]
    fn decimation_is_libvmafs_in_place_loop_bit_for_bit() {
        let lpf: Vec<f32> = super::super::tables::LPF.iter().flatten().copied().collect();
        for (w, h) in [(37, 23), (20, 20), (9, 11), (16, 5), (3, 3), (64, 30)] {
            for f in 2..=10 {
                if decimation_reads_outside(w, f) || decimation_reads_outside(h, f) {
                    continue;
                }
                let taps = vec![1.0f32 / (f * f) as f32; f * f];
                let mut img = picture(w, h, f);
                let (mut out, mut scratch) = (Vec::new(), DecimateScratch::default());
                let want = decimate_in_place(&mut img.clone(), w, h, f, f, &taps);
                for simd in [false, simd_available()] {
                    decimate_with(&img, w, h, f, f, &taps, &mut out, &mut scratch, simd);
                    assert!(out.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()), "{w}x{h} f={f}");
                }
                img.clear();
            }
            if w >= 5 && h >= 5 {
                let img = picture(w, h, 1);
                let (mut out, mut scratch) = (Vec::new(), DecimateScratch::default());
                // ms_ssim decimates into the next level's buffer.
                let (sw, sh) = decimated_dims(w, h, 2);
                let want: Vec<f32> = (0..sw * sh)
                    .map(|i| filter_pixel(&img, w, h, (i % sw * 2) as i64, (i / sw * 2) as i64, 9, &lpf))
                    .collect();
                for simd in [false, simd_available()] {
                    decimate_with(&img, w, h, 2, 9, &lpf, &mut out, &mut scratch, simd);
                    assert!(out.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()), "{w}x{h} lpf");
                }
            }
        }
    }

    #[test]
    fn in_place_decimation_never_reads_what_it_overwrote() {
        // float_ssim's _iqa_decimate writes over its input: check every
        // geometry up to 200 x 200 and factor that the outputs written so
        // far lie before every sample the next output reads (so decimating
        // into another buffer, as here and on GPUs, is the same). Only the
        // first rows can come close: from row 3 on, an output's window
        // starts at least 2.5 factors of rows below the written outputs.
        for f in 2..=10i64 {
            let (uc, even) = (f / 2, (f as u64).is_multiple_of(2) as i64);
            for w in 1..=200i64 {
                if decimation_reads_outside(w as usize, f as usize) {
                    continue;
                }
                let sw = w / f + (w & 1);
                for h in 1..=200i64 {
                    if decimation_reads_outside(h as usize, f as usize) {
                        continue;
                    }
                    let sh = h / f + (h & 1);
                    // The smallest index each output reads is its first
                    // window row's smallest column; rows only grow with y.
                    for y in 0..sh.min(3) {
                        for x in 0..sw {
                            let rows = (-uc..=uc - even).map(|v| mirror(y * f + v, h as usize) as i64);
                            let cols = (-uc..=uc - even).map(|u| mirror(x * f + u, w as usize) as i64);
                            let lowest = rows.min().unwrap() * w + cols.min().unwrap();
                            assert!(lowest >= y * sw + x, "{w}x{h} f={f} at ({x}, {y})");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn one_reflection_reaches_back_unless_the_picture_is_narrower_than_the_factor() {
        assert!(!decimation_reads_outside(1920, 4));
        assert!(!decimation_reads_outside(3, 4));
        assert!(decimation_reads_outside(1, 4)); // window -2..1, -2 reflects to 1
        assert!(!decimation_reads_outside(2, 4)); // no outputs at all
        assert_eq!(decimated_dims(9, 10, 4), (3, 2));
        // Exhaustively against a tap-by-tap walk.
        for f in 2..=10usize {
            for n in 1..=40usize {
                let outputs = (n / f + (n & 1)) as i64;
                let (uc, even) = ((f / 2) as i64, f.is_multiple_of(2) as i64);
                let reflect = |i: i64| {
                    if i < 0 {
                        -1 - i
                    } else if i >= n as i64 {
                        2 * n as i64 - i - 1
                    } else {
                        i
                    }
                };
                let outside = (0..outputs)
                    .flat_map(|x| (-uc..=uc - even).map(move |u| x * f as i64 + u))
                    .any(|i| !(0..n as i64).contains(&reflect(i)));
                assert_eq!(decimation_reads_outside(n, f), outside, "n={n} f={f}");
            }
        }
    }

    #[test]
    fn gaussian_rows_and_columns_match_the_scalar_sums_with_and_without_avx2() {
        let taps = super::super::tables::GAUSSIAN;
        let (r, d) = (picture(37, 1, 3), picture(37, 1, 4));
        for simd in [false, simd_available()] {
            let mut out = vec![vec![0f32; 27]; 5];
            let [o0, o1, o2, o3, o4] = &mut out[..] else { unreachable!() };
            gaussian_row5_fast(&r, &d, &taps, [o0, o1, o2, o3, o4], simd);
            for x in 0..27 {
                let pics = [
                    r[x..].to_vec(),
                    d[x..].to_vec(),
                    r[x..].iter().map(|v| v * v).collect(),
                    d[x..].iter().map(|v| v * v).collect(),
                    r[x..].iter().zip(&d[x..]).map(|(a, b)| a * b).collect::<Vec<f32>>(),
                ];
                for (p, pic) in pics.iter().enumerate() {
                    let mut sum = 0f64;
                    for t in 0..WINDOW {
                        sum += f64::from(pic[t] * taps[t]);
                    }
                    assert_eq!(out[p][x].to_bits(), (sum as f32).to_bits(), "simd {simd} plane {p} x {x}");
                }
            }
            let img = picture(19, 11, 5);
            let rows: [&[f32]; WINDOW] = std::array::from_fn(|t| &img[t * 19..(t + 1) * 19]);
            let mut col = vec![vec![0f32; 19]; 5];
            let [c0, c1, c2, c3, c4] = &mut col[..] else { unreachable!() };
            gaussian_column5_fast(&[rows; 5], &taps, [c0, c1, c2, c3, c4], simd);
            for x in 0..19 {
                let mut sum = 0f64;
                for t in 0..WINDOW {
                    sum += f64::from(img[t * 19 + x] * taps[t]);
                }
                assert!(col.iter().all(|c| c[x].to_bits() == (sum as f32).to_bits()), "simd {simd} x {x}");
            }
        }
    }
}
