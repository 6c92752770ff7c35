//! [`super::color::linear_rgb`]'s row loop in AVX2: eight pixels at a time,
//! the same f32 operations in the same order as `YuvToRgb::nonlinear` and
//! `srgb_eotf` (AVX2 brings no FMA), so the same bits. The EOTF table is
//! read with gathers, which the compiler would not vectorise on its own
//! (the scalar loop was a quarter of the CPU reference's time).

use super::color::{C_OFF, EOTF_LUT_SIZE, YuvToRgb};
use std::arch::x86_64::*;

/// Linear R, G, B of pixels `0..n8` of a row (`n8`, returned, is the
/// largest multiple of 8 not above the row's length), from the row's
/// samples as f32: luma `y`, and the chroma sample under each pixel, `u`
/// and `v`. The caller does the rest with the scalar code.
///
/// # Safety
/// The CPU must have AVX2.
#[target_feature(enable = "avx2")]
pub unsafe fn rgb_row(
    conv: &YuvToRgb,
    lut: &[f32; EOTF_LUT_SIZE],
    [y, u, v]: [&[f32]; 3],
    [r, g, b]: [&mut [f32]; 3],
) -> usize {
    let n = y.len().min(u.len()).min(v.len()).min(r.len()).min(g.len()).min(b.len());
    let n8 = n / 8 * 8;
    let c = |x: f32| _mm256_set1_ps(x);
    let (inv, y_off, y_scale, c_scale) = (c(conv.inv_peak), c(conv.y_off), c(conv.y_scale), c(conv.c_scale));
    let (cr_r, cb_g, cr_g, cb_b, c_off) = (c(conv.cr_r), c(conv.cb_g), c(conv.cr_g), c(conv.cb_b), c(C_OFF));
    for i in (0..n8).step_by(8) {
        // SAFETY: i + 8 <= n8 <= every slice's length.
        let (ys, us, vs) = unsafe {
            (_mm256_loadu_ps(y.as_ptr().add(i)), _mm256_loadu_ps(u.as_ptr().add(i)), _mm256_loadu_ps(v.as_ptr().add(i)))
        };
        // nonlinear: (s * inv_peak - offset) * scale, then the matrix.
        let yn = _mm256_mul_ps(_mm256_sub_ps(_mm256_mul_ps(ys, inv), y_off), y_scale);
        let un = _mm256_mul_ps(_mm256_sub_ps(_mm256_mul_ps(us, inv), c_off), c_scale);
        let vn = _mm256_mul_ps(_mm256_sub_ps(_mm256_mul_ps(vs, inv), c_off), c_scale);
        let rn = _mm256_add_ps(yn, _mm256_mul_ps(cr_r, vn));
        let gn = _mm256_add_ps(_mm256_add_ps(yn, _mm256_mul_ps(cb_g, un)), _mm256_mul_ps(cr_g, vn));
        let bn = _mm256_add_ps(yn, _mm256_mul_ps(cb_b, un));
        // SAFETY: as above.
        unsafe {
            _mm256_storeu_ps(r.as_mut_ptr().add(i), eotf(clamp01(rn), lut));
            _mm256_storeu_ps(g.as_mut_ptr().add(i), eotf(clamp01(gn), lut));
            _mm256_storeu_ps(b.as_mut_ptr().add(i), eotf(clamp01(bn), lut));
        }
    }
    n8
}

/// `clampf(v, 0, 1)`. Unlike the scalar clamp it maps -0.0 to +0.0; the
/// EOTF that follows sends both to +0.0.
#[target_feature(enable = "avx2")]
#[inline]
fn clamp01(v: __m256) -> __m256 {
    _mm256_min_ps(_mm256_max_ps(v, _mm256_setzero_ps()), _mm256_set1_ps(1.0))
}

/// `vmaf_ss2_srgb_eotf` of eight values in [0, 1]: the table at
/// i = (int)(x * 1023) and i + 1, interpolated as `a + (b - a) * frac`; 0
/// at or below 0 and 1 at or above 1, where the index is clamped only to
/// keep the gathers inside the table (those lanes take 0 or 1).
#[target_feature(enable = "avx2")]
#[inline]
fn eotf(x: __m256, lut: &[f32; EOTF_LUT_SIZE]) -> __m256 {
    let idx = _mm256_mul_ps(x, _mm256_set1_ps((EOTF_LUT_SIZE - 1) as f32));
    let i = _mm256_cvttps_epi32(idx);
    let i = _mm256_min_epi32(_mm256_max_epi32(i, _mm256_setzero_si256()), _mm256_set1_epi32(EOTF_LUT_SIZE as i32 - 2));
    let frac = _mm256_sub_ps(idx, _mm256_cvtepi32_ps(i));
    // SAFETY: every gathered index lies in 0..=EOTF_LUT_SIZE - 2, so it
    // and its successor are in the table.
    let (a, b) =
        unsafe { (_mm256_i32gather_ps::<4>(lut.as_ptr(), i), _mm256_i32gather_ps::<4>(lut.as_ptr().add(1), i)) };
    let inner = _mm256_add_ps(a, _mm256_mul_ps(_mm256_sub_ps(b, a), frac));
    let zero = _mm256_cmp_ps::<_CMP_LE_OQ>(x, _mm256_setzero_ps());
    let one = _mm256_cmp_ps::<_CMP_GE_OQ>(x, _mm256_set1_ps(1.0));
    let out = _mm256_blendv_ps(inner, _mm256_setzero_ps(), zero);
    _mm256_blendv_ps(out, _mm256_set1_ps(1.0), one)
}
