//! [`Lanes`] on AVX2's 256-bit vectors (16 i16 / 8 i32 lanes); the
//! per-pixel statistic stays scalar here (AVX2 has no 64-bit `lzcnt`,
//! i64 <-> f64 conversions or lane masks).

use super::{Lanes, ScalarSums, binary_ops};
use std::arch::x86_64::*;

#[derive(Clone, Copy)]
pub struct V256(__m256i);

// SAFETY (every method): the trait's contract; only AVX2 builds call them.
impl Lanes for V256 {
    const L16: usize = 16;
    type Sums = ScalarSums;

    binary_ops! {
        V256;
        add16 => _mm256_add_epi16,
        add32 => _mm256_add_epi32,
        sub32 => _mm256_sub_epi32,
        max32 => _mm256_max_epi32,
        add64 => _mm256_add_epi64,
        and => _mm256_and_si256,
        xor => _mm256_xor_si256,
        mullo32 => _mm256_mullo_epi32,
        madd16 => _mm256_madd_epi16,
        mul_u32 => _mm256_mul_epu32,
        unpacklo16 => _mm256_unpacklo_epi16,
        unpackhi16 => _mm256_unpackhi_epi16,
        packus32 => _mm256_packus_epi32,
    }

    #[inline(always)]
    unsafe fn zero() -> Self {
        V256(unsafe { _mm256_setzero_si256() })
    }
    #[inline(always)]
    unsafe fn splat16(v: i16) -> Self {
        V256(unsafe { _mm256_set1_epi16(v) })
    }
    #[inline(always)]
    unsafe fn splat32(v: i32) -> Self {
        V256(unsafe { _mm256_set1_epi32(v) })
    }
    #[inline(always)]
    unsafe fn splat64(v: i64) -> Self {
        V256(unsafe { _mm256_set1_epi64x(v) })
    }
    #[inline(always)]
    unsafe fn load16(s: &[i16]) -> Self {
        let s = &s[..16];
        V256(unsafe { _mm256_loadu_si256(s.as_ptr().cast()) })
    }
    #[inline(always)]
    unsafe fn load_u8(s: &[u8]) -> Self {
        let s = &s[..16];
        V256(unsafe { _mm256_cvtepu8_epi16(_mm_loadu_si128(s.as_ptr().cast())) })
    }
    #[inline(always)]
    unsafe fn store16(d: &mut [i16], v: Self) {
        let d = &mut d[..16];
        unsafe { _mm256_storeu_si256(d.as_mut_ptr().cast(), v.0) }
    }
    #[inline(always)]
    unsafe fn store32(d: &mut [i32], v: Self) {
        let d = &mut d[..8];
        unsafe { _mm256_storeu_si256(d.as_mut_ptr().cast(), v.0) }
    }
    #[inline(always)]
    unsafe fn srli32<const N: i32>(a: Self) -> Self {
        V256(unsafe { _mm256_srli_epi32::<N>(a.0) })
    }
    #[inline(always)]
    unsafe fn slli32<const N: i32>(a: Self) -> Self {
        V256(unsafe { _mm256_slli_epi32::<N>(a.0) })
    }
    #[inline(always)]
    unsafe fn srli64<const N: i32>(a: Self) -> Self {
        V256(unsafe { _mm256_srli_epi64::<N>(a.0) })
    }
    #[inline(always)]
    unsafe fn srl32(a: Self, n: __m128i) -> Self {
        V256(unsafe { _mm256_srl_epi32(a.0, n) })
    }
    #[inline(always)]
    unsafe fn sll32(a: Self, n: __m128i) -> Self {
        V256(unsafe { _mm256_sll_epi32(a.0, n) })
    }
    #[inline(always)]
    unsafe fn blend_odd32(even: Self, odd: Self) -> Self {
        V256(unsafe { _mm256_blend_epi32::<0b1010_1010>(even.0, odd.0) })
    }
    #[inline(always)]
    unsafe fn interleave32(even: Self, odd: Self) -> (Self, Self) {
        // Within 128 bits: e0 o0 e1 o1 | e4 o4 e5 o5 and e2 o2 e3 o3 | e6 o6 e7 o7.
        let (lo, hi) = unsafe { (_mm256_unpacklo_epi32(even.0, odd.0), _mm256_unpackhi_epi32(even.0, odd.0)) };
        unsafe { (V256(_mm256_permute2x128_si256::<0x20>(lo, hi)), V256(_mm256_permute2x128_si256::<0x31>(lo, hi))) }
    }
}
