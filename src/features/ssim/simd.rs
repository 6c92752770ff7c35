//! AVX2 versions of the CPU reference's hot loops (x86_64 only): 8 pixels
//! at a time, each pixel's operations the portable code's, in its order —
//! `_mm256_mul_ps`, `_mm256_cvtps_pd`, `_mm256_add_pd`, `_mm256_div_pd`,
//! `_mm256_sqrt_ps` are the IEEE operations of one lane each (AVX2 has no
//! FMA), so the bits are the same. `tests` holds every kernel to its
//! portable twin bit for bit.

use super::tables::WINDOW;
use std::arch::x86_64::*;

/// Whether this CPU runs the AVX2 kernels.
pub fn available() -> bool {
    std::arch::is_x86_feature_detected!("avx2")
}

/// The 8 products `v * tap` widened to f64 and added to `(lo, hi)`.
#[inline]
#[target_feature(enable = "avx2")]
fn add_products(lo: &mut __m256d, hi: &mut __m256d, v: __m256, tap: __m256) {
    let p = _mm256_mul_ps(v, tap);
    *lo = _mm256_add_pd(*lo, _mm256_cvtps_pd(_mm256_castps256_ps128(p)));
    *hi = _mm256_add_pd(*hi, _mm256_cvtps_pd(_mm256_extractf128_ps::<1>(p)));
}

/// Two f64 halves rounded to 8 f32.
#[inline]
#[target_feature(enable = "avx2")]
fn narrow(lo: __m256d, hi: __m256d) -> __m256 {
    _mm256_set_m128(_mm256_cvtpd_ps(hi), _mm256_cvtpd_ps(lo))
}

/// [`super::filter::gaussian_row5`]: the horizontal Gaussian of the five
/// pictures of one row pair, 8 outputs a step; the squares and product are
/// rounded to f32 from the loaded samples, as libvmaf stores them before
/// filtering. Returns the outputs done (a multiple of 8); the caller does
/// the rest.
#[target_feature(enable = "avx2")]
pub fn gaussian_row5(r: &[f32], d: &[f32], taps: &[f32; WINDOW], out: [&mut [f32]; 5]) -> usize {
    let n = out[0].len();
    assert!(r.len() >= n + WINDOW - 1 && d.len() >= n + WINDOW - 1 && out.iter().all(|o| o.len() == n));
    let [o0, o1, o2, o3, o4] = out;
    let mut x = 0;
    while x + 8 <= n {
        let z = _mm256_setzero_pd();
        let mut acc = [z; 10];
        for (t, &tap) in taps.iter().enumerate() {
            let k = _mm256_set1_ps(tap);
            // SAFETY: x + t + 8 <= n + 10 <= r.len(), d.len() (asserted).
            let (a, b) = unsafe { (_mm256_loadu_ps(r.as_ptr().add(x + t)), _mm256_loadu_ps(d.as_ptr().add(x + t))) };
            let [a0, a1, a2, a3, a4, a5, a6, a7, a8, a9] = &mut acc;
            add_products(a0, a1, a, k);
            add_products(a2, a3, b, k);
            add_products(a4, a5, _mm256_mul_ps(a, a), k);
            add_products(a6, a7, _mm256_mul_ps(b, b), k);
            add_products(a8, a9, _mm256_mul_ps(a, b), k);
        }
        for (o, pair) in [&mut *o0, &mut *o1, &mut *o2, &mut *o3, &mut *o4].into_iter().zip(acc.chunks_exact(2)) {
            // SAFETY: x + 8 <= n = o.len().
            unsafe { _mm256_storeu_ps(o.as_mut_ptr().add(x), narrow(pair[0], pair[1])) };
        }
        x += 8;
    }
    x
}

/// [`super::filter::gaussian_column5`]: the vertical Gaussian of the five
/// pictures' horizontal rows (`rows[p][t]`: picture p, row y + t), 8
/// outputs of all five a step (ten independent chains of adds, so their
/// latency overlaps). Returns the outputs done (a multiple of 8).
#[target_feature(enable = "avx2")]
pub fn gaussian_column5(rows: &[[&[f32]; WINDOW]; 5], taps: &[f32; WINDOW], out: [&mut [f32]; 5]) -> usize {
    let n = out[0].len();
    assert!(rows.iter().flatten().all(|r| r.len() >= n) && out.iter().all(|o| o.len() == n));
    let mut x = 0;
    let mut outs = out;
    while x + 8 <= n {
        let z = _mm256_setzero_pd();
        let mut acc = [[z; 2]; 5];
        for (t, &tap) in taps.iter().enumerate() {
            let k = _mm256_set1_ps(tap);
            for (plane, [lo, hi]) in rows.iter().zip(acc.iter_mut()) {
                // SAFETY: x + 8 <= n <= every row's length (asserted).
                let v = unsafe { _mm256_loadu_ps(plane[t].as_ptr().add(x)) };
                add_products(lo, hi, v, k);
            }
        }
        for (o, [lo, hi]) in outs.iter_mut().zip(acc) {
            // SAFETY: x + 8 <= n = o.len().
            unsafe { _mm256_storeu_ps(o.as_mut_ptr().add(x), narrow(lo, hi)) };
        }
        x += 8;
    }
    x
}

/// [`super::core::pixel_terms`] for 8 pixels a step: the filtered rows in,
/// l, c, s (f64) out, and `lcs[x] = l * c * s` when `lcs` is given.
/// Returns the pixels done (a multiple of 8).
#[target_feature(enable = "avx2")]
pub fn terms(
    filtered: [&[f32]; 5],
    consts: (f32, f32, f32),
    l: &mut [f64],
    c: &mut [f64],
    s: &mut [f64],
    mut lcs: Option<&mut [f64]>,
) -> usize {
    let n = l.len();
    assert!(filtered.iter().all(|f| f.len() >= n) && c.len() == n && s.len() == n);
    assert!(lcs.as_ref().is_none_or(|p| p.len() == n));
    let (c1, c2, c3) = (_mm256_set1_ps(consts.0), _mm256_set1_ps(consts.1), _mm256_set1_ps(consts.2));
    let (c1d, c2d) = (_mm256_set1_pd(f64::from(consts.0)), _mm256_set1_pd(f64::from(consts.1)));
    let (zero, two) = (_mm256_setzero_ps(), _mm256_set1_pd(2.0));
    let mut x = 0;
    while x + 8 <= n {
        // SAFETY: x + 8 <= n <= every input's length (asserted).
        let [mu1, mu2, xx, yy, xy] = filtered.map(|f| unsafe { _mm256_loadu_ps(f.as_ptr().add(x)) });
        let s11 = _mm256_sub_ps(xx, _mm256_mul_ps(mu1, mu1));
        let s22 = _mm256_sub_ps(yy, _mm256_mul_ps(mu2, mu2));
        // MAX(0.0, v): 0 where 0 > v (an ordered compare: NaN stays).
        let s11 = _mm256_blendv_ps(s11, zero, _mm256_cmp_ps::<_CMP_GT_OQ>(zero, s11));
        let s22 = _mm256_blendv_ps(s22, zero, _mm256_cmp_ps::<_CMP_GT_OQ>(zero, s22));
        let s12 = _mm256_sub_ps(xy, _mm256_mul_ps(mu1, mu2));
        let srsc = _mm256_sqrt_ps(_mm256_mul_ps(s11, s22));
        let l_den = _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(mu1, mu1), _mm256_mul_ps(mu2, mu2)), c1);
        let c_den = _mm256_add_ps(_mm256_add_ps(s11, s22), c2);
        let flat = _mm256_and_ps(_mm256_cmp_ps::<_CMP_LT_OQ>(s12, zero), _mm256_cmp_ps::<_CMP_LE_OQ>(srsc, zero));
        let clamped = _mm256_blendv_ps(s12, zero, flat);
        let s_f = _mm256_div_ps(_mm256_add_ps(clamped, c3), _mm256_add_ps(srsc, c3));
        for (half, at) in [(false, x), (true, x + 4)] {
            let [mu1, mu2, l_den, srsc, c_den, sv] = [mu1, mu2, l_den, srsc, c_den, s_f].map(|v| {
                let v = if half { _mm256_extractf128_ps::<1>(v) } else { _mm256_castps256_ps128(v) };
                _mm256_cvtps_pd(v)
            });
            let l_num = _mm256_add_pd(_mm256_mul_pd(_mm256_mul_pd(two, mu1), mu2), c1d);
            let lv = _mm256_div_pd(l_num, l_den);
            let c_num = _mm256_add_pd(_mm256_mul_pd(two, srsc), c2d);
            let cv = _mm256_div_pd(c_num, c_den);
            // SAFETY: at + 4 <= n = the outputs' lengths (asserted).
            unsafe {
                _mm256_storeu_pd(l.as_mut_ptr().add(at), lv);
                _mm256_storeu_pd(c.as_mut_ptr().add(at), cv);
                _mm256_storeu_pd(s.as_mut_ptr().add(at), sv);
                if let Some(p) = lcs.as_deref_mut() {
                    _mm256_storeu_pd(p.as_mut_ptr().add(at), _mm256_mul_pd(_mm256_mul_pd(lv, cv), sv));
                }
            }
        }
        x += 8;
    }
    x
}

/// [`super::filter::decimate`]'s inner loop over a row of outputs: output
/// `x` is `(float)Σ (double)(row[x] * tap)` over `reads` in order, each
/// `row` already shifted to the tap's first sample; 8 outputs a step.
/// Returns the outputs done (a multiple of 8).
#[target_feature(enable = "avx2")]
pub fn decimate_row(reads: &[(&[f32], f32)], out: &mut [f32]) -> usize {
    let n = out.len();
    assert!(reads.iter().all(|(row, _)| row.len() >= n));
    let mut x = 0;
    while x + 8 <= n {
        let (mut lo, mut hi) = (_mm256_setzero_pd(), _mm256_setzero_pd());
        for &(row, tap) in reads {
            // SAFETY: x + 8 <= n <= row.len() (asserted).
            let v = unsafe { _mm256_loadu_ps(row.as_ptr().add(x)) };
            add_products(&mut lo, &mut hi, v, _mm256_set1_ps(tap));
        }
        // SAFETY: x + 8 <= n = out.len().
        unsafe { _mm256_storeu_ps(out.as_mut_ptr().add(x), narrow(lo, hi)) };
        x += 8;
    }
    x
}
