//! Integer VIF's filter passes on 8 columns at once with AVX2: the same
//! integers as the portable blocks of [`super::integer`] (u32 lanes that
//! wrap as C's u32 does; the u64 sums as two u32 halves, see
//! `integer::join`), written with intrinsics because the compiler's
//! vectoriser splits these loops into a mix of scalar and 4-lane code.
//! Called only from the AVX2 build of `IntegerVif::run`.

use super::integer::{Sample, Vertical};
use std::arch::x86_64::*;

/// Eight u8 samples from `s[..8]`, zero-extended to u32 lanes.
#[inline(always)]
pub fn load8_u8(s: &[u8]) -> __m256i {
    let s = &s[..8];
    // SAFETY: `s` holds 8 bytes; the load is unaligned; only AVX2 builds
    // call it (`Sample::load8`).
    unsafe { _mm256_cvtepu8_epi32(_mm_loadl_epi64(s.as_ptr().cast())) }
}

/// Eight u16 samples from `s[..8]`, zero-extended to u32 lanes.
#[inline(always)]
pub fn load8_u16(s: &[u16]) -> __m256i {
    let s = &s[..8];
    // SAFETY: `s` holds 16 bytes; the load is unaligned; only AVX2 builds
    // call it.
    unsafe { _mm256_cvtepu16_epi32(_mm_loadu_si128(s.as_ptr().cast())) }
}

#[inline(always)]
fn load(s: &[u32]) -> __m256i {
    let s = &s[..8];
    // SAFETY: `s` holds 32 bytes; the load is unaligned; every caller is
    // compiled with AVX2.
    unsafe { _mm256_loadu_si256(s.as_ptr().cast()) }
}

#[inline(always)]
fn store(d: &mut [u32], v: __m256i) {
    let d = &mut d[..8];
    // SAFETY: `d` holds 32 bytes; the store is unaligned.
    unsafe { _mm256_storeu_si256(d.as_mut_ptr().cast(), v) }
}

#[inline(always)]
fn store_i32(d: &mut [i32], v: __m256i) {
    let d = &mut d[..8];
    // SAFETY: `d` holds 32 bytes; the store is unaligned.
    unsafe { _mm256_storeu_si256(d.as_mut_ptr().cast(), v) }
}

/// `join` on 8 lanes: `(h << (16 - shift)) + ((l + add) >> shift)`.
#[inline]
#[target_feature(enable = "avx2")]
fn join8(h: __m256i, l: __m256i, add: __m256i, shift: __m128i, back: __m128i) -> __m256i {
    _mm256_add_epi32(_mm256_sll_epi32(h, back), _mm256_srl_epi32(_mm256_add_epi32(l, add), shift))
}

/// Writes a u32 moment as its 16-bit halves.
#[inline]
#[target_feature(enable = "avx2")]
fn store_halves(hi: &mut [u32], lo: &mut [u32], j: usize, v: __m256i) {
    store(&mut hi[j..], _mm256_srli_epi32(v, 16));
    store(&mut lo[j..], _mm256_and_si256(v, _mm256_set1_epi32(0xffff)));
}

/// `integer::vertical_block` for columns `j .. j + 8`.
#[inline]
#[target_feature(enable = "avx2")]
pub fn vertical8<T: Sample, const F: usize>(
    c: &[u32; F],
    (rows_ref, rows_dis): (&[&[T]; F], &[&[T]; F]),
    j: usize,
    mode: Vertical,
    out: &mut [&mut [u32]; 8],
) {
    let zero = _mm256_setzero_si256();
    match mode {
        Vertical::Eight => {
            let [mut mu1, mut mu2, mut xx, mut yy, mut xy] = [zero; 5];
            for fi in 0..F {
                let (a, b) = (T::load8(&rows_ref[fi][j..]), T::load8(&rows_dis[fi][j..]));
                let cf = _mm256_set1_epi32(c[fi] as i32);
                let (ca, cb) = (_mm256_mullo_epi32(cf, a), _mm256_mullo_epi32(cf, b));
                mu1 = _mm256_add_epi32(mu1, ca);
                mu2 = _mm256_add_epi32(mu2, cb);
                xx = _mm256_add_epi32(xx, _mm256_mullo_epi32(ca, a));
                yy = _mm256_add_epi32(yy, _mm256_mullo_epi32(cb, b));
                xy = _mm256_add_epi32(xy, _mm256_mullo_epi32(ca, b));
            }
            let round = _mm256_set1_epi32(128);
            store(&mut out[0][j..], _mm256_srli_epi32(_mm256_add_epi32(mu1, round), 8));
            store(&mut out[1][j..], _mm256_srli_epi32(_mm256_add_epi32(mu2, round), 8));
            let [_, _, xx_h, xx_l, yy_h, yy_l, xy_h, xy_l] = out;
            store_halves(xx_h, xx_l, j, xx);
            store_halves(yy_h, yy_l, j, yy);
            store_halves(xy_h, xy_l, j, xy);
        }
        Vertical::Sixteen { mu: (mu_add, mu_shift), sq: (sq_add, sq_shift) } => {
            let low = _mm256_set1_epi32(0xffff);
            let [mut mu1, mut mu2, mut xx_h, mut xx_l, mut yy_h, mut yy_l, mut xy_h, mut xy_l] = [zero; 8];
            for fi in 0..F {
                let (a, b) = (T::load8(&rows_ref[fi][j..]), T::load8(&rows_dis[fi][j..]));
                let cf = _mm256_set1_epi32(c[fi] as i32);
                mu1 = _mm256_add_epi32(mu1, _mm256_mullo_epi32(cf, a));
                mu2 = _mm256_add_epi32(mu2, _mm256_mullo_epi32(cf, b));
                // Samples are at most 16 bits: their products fit u32.
                let (aa, bb, ab) = (_mm256_mullo_epi32(a, a), _mm256_mullo_epi32(b, b), _mm256_mullo_epi32(a, b));
                xx_h = _mm256_add_epi32(xx_h, _mm256_mullo_epi32(cf, _mm256_srli_epi32(aa, 16)));
                xx_l = _mm256_add_epi32(xx_l, _mm256_mullo_epi32(cf, _mm256_and_si256(aa, low)));
                yy_h = _mm256_add_epi32(yy_h, _mm256_mullo_epi32(cf, _mm256_srli_epi32(bb, 16)));
                yy_l = _mm256_add_epi32(yy_l, _mm256_mullo_epi32(cf, _mm256_and_si256(bb, low)));
                xy_h = _mm256_add_epi32(xy_h, _mm256_mullo_epi32(cf, _mm256_srli_epi32(ab, 16)));
                xy_l = _mm256_add_epi32(xy_l, _mm256_mullo_epi32(cf, _mm256_and_si256(ab, low)));
            }
            let (add, shift) = (_mm256_set1_epi32(mu_add as i32), _mm_cvtsi32_si128(mu_shift as i32));
            store(&mut out[0][j..], _mm256_and_si256(_mm256_srl_epi32(_mm256_add_epi32(mu1, add), shift), low));
            store(&mut out[1][j..], _mm256_and_si256(_mm256_srl_epi32(_mm256_add_epi32(mu2, add), shift), low));
            let (add, shift) = (_mm256_set1_epi32(sq_add as i32), _mm_cvtsi32_si128(sq_shift as i32));
            let back = _mm_cvtsi32_si128(16 - sq_shift as i32);
            let [_, _, o_xx_h, o_xx_l, o_yy_h, o_yy_l, o_xy_h, o_xy_l] = out;
            store_halves(o_xx_h, o_xx_l, j, join8(xx_h, xx_l, add, shift, back));
            store_halves(o_yy_h, o_yy_l, j, join8(yy_h, yy_l, add, shift, back));
            store_halves(o_xy_h, o_xy_l, j, join8(xy_h, xy_l, add, shift, back));
        }
    }
}

/// `integer::filter_block` for columns `j .. j + 8`.
#[inline]
#[target_feature(enable = "avx2")]
fn filter8<const F: usize>(c: &[u32; F], row: &[u32], j: usize) -> __m256i {
    let r = F / 2;
    let mut acc = _mm256_mullo_epi32(_mm256_set1_epi32(c[r] as i32), load(&row[j + r..]));
    for k in 0..r {
        let pair = _mm256_add_epi32(load(&row[j + k..]), load(&row[j + F - 1 - k..]));
        acc = _mm256_add_epi32(acc, _mm256_mullo_epi32(_mm256_set1_epi32(c[k] as i32), pair));
    }
    acc
}

/// `(a · b + 2^31) >> 32` of u32 lanes, as u32 lanes.
#[inline]
#[target_feature(enable = "avx2")]
fn round32(a: __m256i, b: __m256i) -> __m256i {
    let half = _mm256_set1_epi64x(1 << 31);
    let even = _mm256_srli_epi64(_mm256_add_epi64(_mm256_mul_epu32(a, b), half), 32);
    let odd = _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(a, 32), _mm256_srli_epi64(b, 32)), half);
    _mm256_blend_epi32(even, odd, 0b1010_1010)
}

/// `integer::horizontal_block` for columns `j .. j + 8`.
#[inline]
#[target_feature(enable = "avx2")]
pub fn horizontal8<const F: usize>(c: &[u32; F], tmp: &[Vec<u32>; 8], j: usize, sigma: &mut [&mut [i32]; 3]) {
    let (mu1, mu2) = (filter8(c, &tmp[0], j), filter8(c, &tmp[1], j));
    let (add, shift, back) = (_mm256_set1_epi32(32768), _mm_cvtsi32_si128(16), _mm_cvtsi32_si128(0));
    let xx = join8(filter8(c, &tmp[2], j), filter8(c, &tmp[3], j), add, shift, back);
    let yy = join8(filter8(c, &tmp[4], j), filter8(c, &tmp[5], j), add, shift, back);
    let xy = join8(filter8(c, &tmp[6], j), filter8(c, &tmp[7], j), add, shift, back);
    let s1 = _mm256_sub_epi32(xx, round32(mu1, mu1));
    let s2 = _mm256_max_epi32(_mm256_sub_epi32(yy, round32(mu2, mu2)), _mm256_setzero_si256());
    let s12 = _mm256_sub_epi32(xy, round32(mu1, mu2));
    store_i32(&mut sigma[0][j..], s1);
    store_i32(&mut sigma[1][j..], s2);
    store_i32(&mut sigma[2][j..], s12);
}
