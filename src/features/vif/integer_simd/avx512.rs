//! [`Lanes`] on AVX-512's 512-bit vectors (32 i16 / 16 i32 lanes), and
//! the per-pixel statistic eight pixels at a time.

use super::super::integer::ScaleSums;
use super::super::tables::SIGMA_NSQ;
use super::{Accumulate, Lanes, binary_ops};
use std::arch::x86_64::*;

/// Whether this CPU runs this build: AVX-512 F and BW for the filters, DQ
/// (i64 <-> f64 conversions) and CD (`vplzcntq`) for the statistic.
pub fn detected() -> bool {
    is_x86_feature_detected!("avx512f")
        && is_x86_feature_detected!("avx512bw")
        && is_x86_feature_detected!("avx512dq")
        && is_x86_feature_detected!("avx512cd")
}

#[derive(Clone, Copy)]
pub struct V512(__m512i);

// SAFETY (every method): the trait's contract; only AVX-512 builds call
// them.
impl Lanes for V512 {
    const L16: usize = 32;
    type Sums = Sums8;

    binary_ops! {
        V512;
        add16 => _mm512_add_epi16,
        add32 => _mm512_add_epi32,
        sub32 => _mm512_sub_epi32,
        max32 => _mm512_max_epi32,
        add64 => _mm512_add_epi64,
        and => _mm512_and_si512,
        xor => _mm512_xor_si512,
        mullo32 => _mm512_mullo_epi32,
        madd16 => _mm512_madd_epi16,
        mul_u32 => _mm512_mul_epu32,
        unpacklo16 => _mm512_unpacklo_epi16,
        unpackhi16 => _mm512_unpackhi_epi16,
        packus32 => _mm512_packus_epi32,
    }

    #[inline(always)]
    unsafe fn zero() -> Self {
        V512(unsafe { _mm512_setzero_si512() })
    }
    #[inline(always)]
    unsafe fn splat16(v: i16) -> Self {
        V512(unsafe { _mm512_set1_epi16(v) })
    }
    #[inline(always)]
    unsafe fn splat32(v: i32) -> Self {
        V512(unsafe { _mm512_set1_epi32(v) })
    }
    #[inline(always)]
    unsafe fn splat64(v: i64) -> Self {
        V512(unsafe { _mm512_set1_epi64(v) })
    }
    #[inline(always)]
    unsafe fn load16(s: &[i16]) -> Self {
        let s = &s[..32];
        V512(unsafe { _mm512_loadu_si512(s.as_ptr().cast()) })
    }
    #[inline(always)]
    unsafe fn load_u8(s: &[u8]) -> Self {
        let s = &s[..32];
        V512(unsafe { _mm512_cvtepu8_epi16(_mm256_loadu_si256(s.as_ptr().cast())) })
    }
    #[inline(always)]
    unsafe fn store16(d: &mut [i16], v: Self) {
        let d = &mut d[..32];
        unsafe { _mm512_storeu_si512(d.as_mut_ptr().cast(), v.0) }
    }
    #[inline(always)]
    unsafe fn store32(d: &mut [i32], v: Self) {
        let d = &mut d[..16];
        unsafe { _mm512_storeu_si512(d.as_mut_ptr().cast(), v.0) }
    }
    #[inline(always)]
    unsafe fn srli32<const N: i32>(a: Self) -> Self {
        // AVX-512's immediates are u32 where AVX2's are i32: the shifts
        // the kernels use, spelled out (the match folds away).
        V512(unsafe {
            match N {
                8 => _mm512_srli_epi32::<8>(a.0),
                16 => _mm512_srli_epi32::<16>(a.0),
                _ => unreachable!("no u32 shift right by {N} here"),
            }
        })
    }
    #[inline(always)]
    unsafe fn slli32<const N: i32>(a: Self) -> Self {
        assert_eq!(N, 16, "no u32 shift left by {N} here");
        V512(unsafe { _mm512_slli_epi32::<16>(a.0) })
    }
    #[inline(always)]
    unsafe fn srli64<const N: i32>(a: Self) -> Self {
        assert_eq!(N, 32, "no u64 shift right by {N} here");
        V512(unsafe { _mm512_srli_epi64::<32>(a.0) })
    }
    #[inline(always)]
    unsafe fn srl32(a: Self, n: __m128i) -> Self {
        V512(unsafe { _mm512_srl_epi32(a.0, n) })
    }
    #[inline(always)]
    unsafe fn sll32(a: Self, n: __m128i) -> Self {
        V512(unsafe { _mm512_sll_epi32(a.0, n) })
    }
    #[inline(always)]
    unsafe fn blend_odd32(even: Self, odd: Self) -> Self {
        V512(unsafe { _mm512_mask_blend_epi32(0xaaaa, even.0, odd.0) })
    }
    #[inline(always)]
    unsafe fn interleave32(even: Self, odd: Self) -> (Self, Self) {
        unsafe {
            let first = _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
            let second = _mm512_set_epi32(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8);
            (
                V512(_mm512_permutex2var_epi32(even.0, first, odd.0)),
                V512(_mm512_permutex2var_epi32(even.0, second, odd.0)),
            )
        }
    }
}

/// The four sums of a scale in eight i64 lanes each: the per-pixel part of
/// vif_statistic_8 / _16 (`integer::accumulate_sigmas`) on eight pixels at
/// once, with the same IEEE double operations in the same order and the
/// same table lookups, so every pixel adds the same integers.
pub struct Sums8 {
    num_log: __m512i,
    den_log: __m512i,
    num_non_log: __m512i,
    den_non_log: __m512i,
}

// SAFETY (the trait's methods): the trait's contract; only AVX-512 builds
// (F, BW, DQ, CD) call them.
impl Accumulate for Sums8 {
    #[inline(always)]
    unsafe fn new() -> Self {
        // SAFETY: see above.
        unsafe { Sums8::zeroed() }
    }

    #[inline(always)]
    unsafe fn add_row(&mut self, sigma: &[Vec<i32>; 3], w: usize, table: &[u16], gain_limit: f64) {
        // SAFETY: see above.
        unsafe { self.add_columns(sigma, w, table, gain_limit) }
    }

    #[inline(always)]
    unsafe fn total(&self) -> ScaleSums {
        // SAFETY: see above.
        unsafe { self.reduce() }
    }
}

impl Sums8 {
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512cd")]
    fn zeroed() -> Self {
        let zero = _mm512_setzero_si512();
        Sums8 { num_log: zero, den_log: zero, num_non_log: zero, den_non_log: zero }
    }

    /// Adds columns `0 .. w` of a row of sigmas.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512cd")]
    fn add_columns(&mut self, [s1, s2, s12]: &[Vec<i32>; 3], w: usize, table: &[u16], gain_limit: f64) {
        // Eight columns at a time; the mask leaves out those past `w`.
        for j in (0..w).step_by(8) {
            let valid: __mmask8 = if w - j >= 8 { 0xff } else { (1u8 << (w - j)) - 1 };
            let load = |s: &[i32]| {
                let s = &s[j..j + 8];
                // SAFETY: `s` holds 32 bytes; the load is unaligned (the
                // rows have room for the last block's eight lanes).
                _mm512_cvtepi32_epi64(unsafe { _mm256_loadu_si256(s.as_ptr().cast()) })
            };
            self.add8((load(s1), load(s2), load(s12)), valid, table, gain_limit);
        }
    }

    /// `accumulate_sigmas` of the `valid` lanes of sigma1_sq, sigma2_sq (at
    /// least 0) and sigma12, sign-extended to i64.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512cd")]
    fn add8(&mut self, (s1, s2, s12): (__m512i, __m512i, __m512i), valid: __mmask8, table: &[u16], gain_limit: f64) {
        const EPS: f64 = 65536.0 * 1.0e-10;
        let zero = _mm512_setzero_si512();
        let nsq = _mm512_set1_epi64(i64::from(SIGMA_NSQ));
        let log = _mm512_mask_cmpge_epi64_mask(valid, s1, nsq);
        let non_log = valid & !log;
        let num = log & _mm512_cmpgt_epi64_mask(s12, zero) & _mm512_cmpgt_epi64_mask(s2, zero);
        // den_log: log2_32(sigma_nsq + sigma1_sq) - 2048 * 17.
        let den = _mm512_sub_epi64(log2(table, _mm512_add_epi64(nsq, s1)), _mm512_set1_epi64(2048 * 17));
        self.den_log = _mm512_mask_add_epi64(self.den_log, log, self.den_log, den);
        // num_log, lanes with sigma12 > 0 and sigma2_sq > 0 (the rest
        // compute values nobody adds; no operation here can fault).
        let (d1, d2, d12) = (_mm512_cvtepi64_pd(s1), _mm512_cvtepi64_pd(s2), _mm512_cvtepi64_pd(s12));
        let g = _mm512_div_pd(d12, _mm512_add_pd(d1, _mm512_set1_pd(EPS)));
        let sv_sq = _mm512_max_epi64(_mm512_cvttpd_epi64(_mm512_sub_pd(d2, _mm512_mul_pd(g, d12))), zero);
        let g = _mm512_min_pd(g, _mm512_set1_pd(gain_limit));
        let numer1 = _mm512_add_epi64(sv_sq, nsq);
        let numer1_tmp = _mm512_add_epi64(_mm512_cvttpd_epi64(_mm512_mul_pd(_mm512_mul_pd(g, g), d1)), numer1);
        let num_val = _mm512_sub_epi64(log2(table, numer1_tmp), log2(table, numer1));
        self.num_log = _mm512_mask_add_epi64(self.num_log, num, self.num_log, num_val);
        self.num_non_log = _mm512_mask_add_epi64(self.num_non_log, non_log, self.num_non_log, s2);
        self.den_non_log = _mm512_mask_add_epi64(self.den_non_log, non_log, self.den_non_log, _mm512_set1_epi64(1));
    }

    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512cd")]
    fn reduce(&self) -> ScaleSums {
        ScaleSums {
            num_log: _mm512_reduce_add_epi64(self.num_log),
            den_log: _mm512_reduce_add_epi64(self.den_log),
            num_non_log: _mm512_reduce_add_epi64(self.num_non_log),
            den_non_log: _mm512_reduce_add_epi64(self.den_non_log),
        }
    }
}

/// `log2_64` (integer_vif.h) of eight i64 lanes: the table entry of the
/// value's 16 leading bits plus 2048 times the shift. Any lane value gives
/// an index below 2^16, so the gather stays inside the table.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512cd")]
fn log2(table: &[u16], x: __m512i) -> __m512i {
    let k = _mm512_sub_epi64(_mm512_set1_epi64(48), _mm512_lzcnt_epi64(x));
    // A negative shift reads as a count of 2^64 - |k|: the index is 0.
    let index = _mm512_srlv_epi64(x, k);
    assert!(table.len() >= 65537, "the gather reads 4 bytes at entries up to 65535");
    // SAFETY: every index is below 2^16 and the gather reads 4 bytes at
    // byte 2 · index, inside the table's 65537 u16 entries.
    let entries = unsafe { _mm512_i64gather_epi32::<2>(index, table.as_ptr().cast()) };
    let entries = _mm512_and_si512(_mm512_cvtepu32_epi64(entries), _mm512_set1_epi64(0xffff));
    _mm512_add_epi64(entries, _mm512_slli_epi64(k, 11))
}
