//! Integer VIF's statistic (vif_statistic_8 / vif_statistic_16) with
//! AVX-512 (F, BW, DQ, CD): the same integers as [`super::integer`], fewer
//! multiplies, and the per-pixel statistic eight pixels at a time. Called
//! only from the AVX-512 build of `IntegerVif::run`.
//!
//! Every row between the two passes holds values below 2^16 (the rounded
//! means, and the moments as 16-bit halves, see `integer::Rows`), so this
//! build keeps them as i16 biased by 2^15 (`v ^ 0x8000`, that is
//! `v - 32768`) and filters them with `vpmaddwd`, which multiplies 16-bit
//! lanes and adds adjacent pairs: two taps of 16 outputs per instruction,
//! where the AVX2 build spends two `vpmulld` micro-ops on one tap of 8.
//! The bias costs nothing: the taps sum to 65536, so
//! `Σ c·(v - 32768) = Σ c·v - 2^31`, and adding 2^31 back (modulo 2^32,
//! as C's u32 sums wrap) gives C's sum. libvmaf's own AVX-512 statistic
//! (vif_avx512.c) pairs the vertical taps the same way; its horizontal pass
//! keeps u64 lanes instead.
//!
//! Pixels come out of the horizontal pass as even and odd columns; they are
//! put back in order before the sigmas are stored, and the statistic sums
//! integers, so the order of pixels could not change it anyway.

use super::integer::{Sample, ScaleSums, Vertical, pad, vertical_block, window};
use super::tables::SIGMA_NSQ;
use std::arch::x86_64::*;

/// Whether this CPU runs this build: AVX-512 F and BW for the filters, DQ
/// (i64 <-> f64 conversions) and CD (`vplzcntq`) for the statistic.
pub fn detected() -> bool {
    is_x86_feature_detected!("avx512f")
        && is_x86_feature_detected!("avx512bw")
        && is_x86_feature_detected!("avx512dq")
        && is_x86_feature_detected!("avx512cd")
}

/// Columns of one vertical block of 8-bit samples (16-bit lanes) and of one
/// horizontal block.
const WIDE: usize = 32;
/// Columns of one vertical block in 32-bit lanes (`Vertical::Sixteen`).
const NARROW: usize = 16;
/// The widest filter (scale 0, 17 taps) has this many taps on each side of
/// its centre.
const MAX_HALF: usize = 8;

/// Scratch rows of the AVX-512 build, kept from frame to frame.
#[derive(Default)]
pub struct Rows16 {
    /// mu1, mu2, then the hi and lo halves of ref², dis², ref·dis, each
    /// biased to i16, with `r` columns of mirror padding on each side and
    /// room for the last block's reads beyond it.
    tmp: [Vec<i16>; 8],
    /// sigma1_sq, sigma2_sq (at least 0), sigma12; the last block's columns
    /// past the picture are computed and never read.
    sigma: [Vec<i32>; 3],
}

impl Rows16 {
    fn prepare(&mut self, w: usize, r: usize) {
        let blocks = w.div_ceil(WIDE) * WIDE;
        for v in self.tmp.iter_mut() {
            v.clear();
            // The horizontal pass reads `WIDE` lanes from up to column
            // `blocks - WIDE + 2r + 1` of the padded row.
            v.resize(blocks + 2 * r + 2, 0);
        }
        for v in self.sigma.iter_mut() {
            v.clear();
            v.resize(blocks, 0);
        }
    }
}

/// vif_statistic_8 / vif_statistic_16 at one scale, as `integer::statistic`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512cd")]
#[allow(clippy::too_many_arguments)]
pub(super) fn statistic<T: Sample, const F: usize>(
    taps: &[u16; F],
    (reference, distorted): (&[T], &[T]),
    (w, h): (usize, usize),
    mode: Vertical,
    table: &[u16],
    gain_limit: f64,
    rows: &mut Rows16,
) -> ScaleSums {
    const { assert!(F % 2 == 1 && F / 2 <= MAX_HALF) };
    let r = F / 2;
    let c = taps.map(u32::from);
    let pairs = horizontal_pairs(&c);
    rows.prepare(w, r);
    let mut sums8 = Sums8::new();
    for i in 0..h {
        let window = (window::<T, F>(reference, w, h, i), window::<T, F>(distorted, w, h, i));
        vertical_row(&c, (&window.0, &window.1), w, mode, &mut rows.tmp);
        for t in rows.tmp.iter_mut() {
            pad(t, w, r);
        }
        for j in (0..w).step_by(WIDE) {
            horizontal32::<F>(&pairs, &rows.tmp, j, &mut rows.sigma);
        }
        sums8.add_row(&rows.sigma, w, table, gain_limit);
    }
    sums8.total()
}

/// The four sums of a scale in eight i64 lanes each: the per-pixel part of
/// vif_statistic_8 / _16 (`integer::accumulate_sigmas`) on eight pixels at
/// once, with the same IEEE double operations in the same order and the
/// same table lookups, so every pixel adds the same integers.
struct Sums8 {
    num_log: __m512i,
    den_log: __m512i,
    num_non_log: __m512i,
    den_non_log: __m512i,
}

impl Sums8 {
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512cd")]
    fn new() -> Self {
        let zero = _mm512_setzero_si512();
        Sums8 { num_log: zero, den_log: zero, num_non_log: zero, den_non_log: zero }
    }

    /// Adds columns `0 .. w` of a row of sigmas.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512cd")]
    fn add_row(&mut self, [s1, s2, s12]: &[Vec<i32>; 3], w: usize, table: &[u16], gain_limit: f64) {
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
    fn total(&self) -> ScaleSums {
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

/// The vertical pass of one output row into the biased rows (interior at
/// offset `F / 2`).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512cd")]
fn vertical_row<T: Sample, const F: usize>(
    c: &[u32; F],
    rows: (&[&[T]; F], &[&[T]; F]),
    w: usize,
    mode: Vertical,
    tmp: &mut [Vec<i16>; 8],
) {
    let r = F / 2;
    let mut out = tmp.each_mut().map(|v| &mut v[r..r + w]);
    let block = if matches!(mode, Vertical::Eight) { WIDE } else { NARROW };
    let full = w - w % block;
    for j in (0..full).step_by(block) {
        match mode {
            Vertical::Eight => vertical_eight32(c, rows, j, &mut out),
            Vertical::Sixteen { .. } => vertical_sixteen16(c, rows, j, mode, &mut out),
        }
    }
    // The last columns one at a time, through the portable block.
    for j in full..w {
        let mut one = [[0u32; 1]; 8];
        let mut one_out = one.each_mut().map(|v| &mut v[..]);
        let at = (rows.0.map(|row| &row[j..]), rows.1.map(|row| &row[j..]));
        vertical_block::<T, F, 1>(c, (&at.0, &at.1), 0, mode, &mut one_out);
        for (q, v) in one.iter().enumerate() {
            out[q][j] = bias(v[0]);
        }
    }
}

/// A value below 2^16 as the biased i16 the filters read.
#[inline(always)]
fn bias(v: u32) -> i16 {
    (v as u16 ^ 0x8000) as i16
}

#[inline(always)]
fn store32_i16(d: &mut [i16], v: __m512i) {
    let d = &mut d[..32];
    // SAFETY: `d` holds 64 bytes; the store is unaligned.
    unsafe { _mm512_storeu_si512(d.as_mut_ptr().cast(), v) }
}

#[inline(always)]
fn store16_i16(d: &mut [i16], v: __m256i) {
    let d = &mut d[..16];
    // SAFETY: `d` holds 32 bytes; the store is unaligned.
    unsafe { _mm256_storeu_si256(d.as_mut_ptr().cast(), v) }
}

#[inline(always)]
fn load32_i16(s: &[i16]) -> __m512i {
    let s = &s[..32];
    // SAFETY: `s` holds 64 bytes; the load is unaligned.
    unsafe { _mm512_loadu_si512(s.as_ptr().cast()) }
}

/// vif_statistic_8's vertical pass of columns `j .. j + 32` (8-bit
/// samples): C's `Σ_fi c·a` (then `(+ 128) >> 8`), `Σ c·a·a`, `Σ c·b·b`,
/// `Σ c·a·b` in u32. The filter is symmetric, so rows `k` and `F - 1 - k`
/// share a tap: the means sum `a_k + a_{F-1-k}` and take two taps per
/// `vpmaddwd`; the moments take `a_k² + a_{F-1-k}²` (one `vpmaddwd` of the
/// interleaved rows) times `c_k`. The same sums modulo 2^32, which is what
/// C's u32 keeps (they never reach 2^32 for 8-bit samples).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512cd")]
fn vertical_eight32<T: Sample, const F: usize>(
    c: &[u32; F],
    (rows_ref, rows_dis): (&[&[T]; F], &[&[T]; F]),
    j: usize,
    out: &mut [&mut [i16]; 8],
) {
    let r = F / 2;
    let zero = _mm512_setzero_si512();
    // Per tap k <= r: the two planes' row sums (the centre row alone).
    let mut sum_ref = [zero; MAX_HALF + 1];
    let mut sum_dis = [zero; MAX_HALF + 1];
    // [xx, yy, xy] x [lo, hi]: unpacklo / unpackhi order within each
    // 128-bit lane, undone by `packus` at the end.
    let mut moments = [[zero; 2]; 3];
    for k in 0..=r {
        let a = T::load32_w16(&rows_ref[k][j..]);
        let b = T::load32_w16(&rows_dis[k][j..]);
        let (a2, b2) = if k < r {
            (T::load32_w16(&rows_ref[F - 1 - k][j..]), T::load32_w16(&rows_dis[F - 1 - k][j..]))
        } else {
            (zero, zero)
        };
        sum_ref[k] = _mm512_add_epi16(a, a2);
        sum_dis[k] = _mm512_add_epi16(b, b2);
        let ck = _mm512_set1_epi32(c[k] as i32);
        let ua = [_mm512_unpacklo_epi16(a, a2), _mm512_unpackhi_epi16(a, a2)];
        let ub = [_mm512_unpacklo_epi16(b, b2), _mm512_unpackhi_epi16(b, b2)];
        for half in 0..2 {
            let products = [
                _mm512_madd_epi16(ua[half], ua[half]),
                _mm512_madd_epi16(ub[half], ub[half]),
                _mm512_madd_epi16(ua[half], ub[half]),
            ];
            for (m, p) in products.into_iter().enumerate() {
                moments[m][half] = _mm512_add_epi32(moments[m][half], _mm512_mullo_epi32(p, ck));
            }
        }
    }
    // The means: taps k and k + 1 in one `vpmaddwd` (the last alone).
    let mut means = [[zero; 2]; 2];
    for k in (0..=r).step_by(2) {
        let next = if k < r { c[k + 1] } else { 0 };
        let pair = _mm512_set1_epi32((c[k] | next << 16) as i32);
        for (plane, sums) in [&sum_ref, &sum_dis].into_iter().enumerate() {
            let following = if k < r { sums[k + 1] } else { zero };
            let lanes = [_mm512_unpacklo_epi16(sums[k], following), _mm512_unpackhi_epi16(sums[k], following)];
            for half in 0..2 {
                means[plane][half] = _mm512_add_epi32(means[plane][half], _mm512_madd_epi16(lanes[half], pair));
            }
        }
    }
    let flip = _mm512_set1_epi16(i16::MIN);
    let round = _mm512_set1_epi32(128);
    for (plane, m) in means.into_iter().enumerate() {
        let [lo, hi] = m.map(|v| _mm512_srli_epi32(_mm512_add_epi32(v, round), 8));
        store32_i16(&mut out[plane][j..], _mm512_xor_si512(_mm512_packus_epi32(lo, hi), flip));
    }
    let low = _mm512_set1_epi32(0xffff);
    for (m, [lo, hi]) in moments.into_iter().enumerate() {
        let high_halves = _mm512_packus_epi32(_mm512_srli_epi32(lo, 16), _mm512_srli_epi32(hi, 16));
        let low_halves = _mm512_packus_epi32(_mm512_and_si512(lo, low), _mm512_and_si512(hi, low));
        store32_i16(&mut out[2 + 2 * m][j..], _mm512_xor_si512(high_halves, flip));
        store32_i16(&mut out[3 + 2 * m][j..], _mm512_xor_si512(low_halves, flip));
    }
}

/// `join` on 16 lanes: `(h << (16 - shift)) + ((l + add) >> shift)`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512cd")]
fn join16(h: __m512i, l: __m512i, add: __m512i, shift: __m128i, back: __m128i) -> __m512i {
    _mm512_add_epi32(_mm512_sll_epi32(h, back), _mm512_srl_epi32(_mm512_add_epi32(l, add), shift))
}

/// vif_statistic_16's vertical pass of columns `j .. j + 16`, as
/// `integer::vertical_block` (the u64 sums as 16-bit halves' u32 sums),
/// 16 columns in u32 lanes; results stored biased.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512cd")]
fn vertical_sixteen16<T: Sample, const F: usize>(
    c: &[u32; F],
    (rows_ref, rows_dis): (&[&[T]; F], &[&[T]; F]),
    j: usize,
    mode: Vertical,
    out: &mut [&mut [i16]; 8],
) {
    let Vertical::Sixteen { mu: (mu_add, mu_shift), sq: (sq_add, sq_shift) } = mode else {
        unreachable!("vertical_eight32 takes Vertical::Eight")
    };
    let zero = _mm512_setzero_si512();
    let low = _mm512_set1_epi32(0xffff);
    // mu1, mu2, then the hi and lo halves' sums of r·r, d·d, r·d.
    let mut acc = [zero; 8];
    for fi in 0..F {
        let (a, b) = (T::load16_w32(&rows_ref[fi][j..]), T::load16_w32(&rows_dis[fi][j..]));
        let cf = _mm512_set1_epi32(c[fi] as i32);
        acc[0] = _mm512_add_epi32(acc[0], _mm512_mullo_epi32(cf, a));
        acc[1] = _mm512_add_epi32(acc[1], _mm512_mullo_epi32(cf, b));
        // Samples are at most 16 bits: their products fit u32.
        let products = [_mm512_mullo_epi32(a, a), _mm512_mullo_epi32(b, b), _mm512_mullo_epi32(a, b)];
        for (q, p) in products.into_iter().enumerate() {
            acc[2 + 2 * q] = _mm512_add_epi32(acc[2 + 2 * q], _mm512_mullo_epi32(cf, _mm512_srli_epi32(p, 16)));
            acc[3 + 2 * q] = _mm512_add_epi32(acc[3 + 2 * q], _mm512_mullo_epi32(cf, _mm512_and_si512(p, low)));
        }
    }
    let flip = _mm256_set1_epi16(i16::MIN);
    let narrow = |v: __m512i| _mm256_xor_si256(_mm512_cvtepi32_epi16(v), flip);
    let (add, shift) = (_mm512_set1_epi32(mu_add as i32), _mm_cvtsi32_si128(mu_shift as i32));
    for plane in 0..2 {
        let mu = _mm512_srl_epi32(_mm512_add_epi32(acc[plane], add), shift);
        // `cvtepi32_epi16` truncates to the low 16 bits, as C's u16 does.
        store16_i16(&mut out[plane][j..], narrow(mu));
    }
    let (add, shift) = (_mm512_set1_epi32(sq_add as i32), _mm_cvtsi32_si128(sq_shift as i32));
    let back = _mm_cvtsi32_si128(16 - sq_shift as i32);
    for q in 0..3 {
        let v = join16(acc[2 + 2 * q], acc[3 + 2 * q], add, shift, back);
        store16_i16(&mut out[2 + 2 * q][j..], narrow(_mm512_srli_epi32(v, 16)));
        store16_i16(&mut out[3 + 2 * q][j..], narrow(_mm512_and_si512(v, low)));
    }
}

/// The horizontal filter's taps in adjacent pairs, `c[2p] | c[2p+1] << 16`
/// (a zero tap past the end), for `vpmaddwd`. A tap of 2^15 or more reads
/// as negative there (scale 3's centre, 43728): [`horizontal32`] adds the
/// missing `2^16 · v` back, with `wide` telling which half of the pair.
struct TapPairs {
    pairs: [__m512i; MAX_HALF + 1],
    /// The wide taps, as (pair, whether it is the pair's second tap).
    wide: Vec<(usize, bool)>,
}

#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512cd")]
fn horizontal_pairs<const F: usize>(c: &[u32; F]) -> TapPairs {
    let tap = |k: usize| if k < F { c[k] } else { 0 };
    TapPairs {
        pairs: std::array::from_fn(|p| _mm512_set1_epi32((tap(2 * p) | tap(2 * p + 1) << 16) as i32)),
        wide: (0..F).filter(|&k| c[k] >= 1 << 15).map(|k| (k / 2, k % 2 == 1)).collect(),
    }
}

/// `Σ_k c_k · row[j + k + 2m]` of the unbiased row for the 16 outputs
/// `m = 0 .. 16`, modulo 2^32.
///
/// # Safety
/// Only for AVX-512 F and BW builds.
#[inline(always)]
unsafe fn filter16<const F: usize>(taps: &TapPairs, row: &[i16], j: usize) -> __m512i {
    let row = &row[j..j + 2 * (F / 2) + 32];
    // SAFETY: the caller's build has AVX-512 F and BW.
    unsafe {
        let mut acc = _mm512_set1_epi32(i32::MIN);
        for p in 0..=F / 2 {
            acc = _mm512_add_epi32(acc, _mm512_madd_epi16(load32_i16(&row[2 * p..]), taps.pairs[p]));
        }
        // vpmaddwd took a wide tap as c - 2^16: add 2^16 · v (mod 2^32).
        for &(p, second) in &taps.wide {
            let v = load32_i16(&row[2 * p..]);
            let high = if second { _mm512_and_si512(v, _mm512_set1_epi32(-65536)) } else { _mm512_slli_epi32(v, 16) };
            acc = _mm512_add_epi32(acc, high);
        }
        acc
    }
}

/// `(a · b + 2^31) >> 32` of u32 lanes, as u32 lanes.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512cd")]
fn round32(a: __m512i, b: __m512i) -> __m512i {
    let half = _mm512_set1_epi64(1 << 31);
    let even = _mm512_srli_epi64(_mm512_add_epi64(_mm512_mul_epu32(a, b), half), 32);
    let odd = _mm512_add_epi64(_mm512_mul_epu32(_mm512_srli_epi64(a, 32), _mm512_srli_epi64(b, 32)), half);
    _mm512_mask_blend_epi32(0xaaaa, even, odd)
}

/// `integer::horizontal_block` for columns `j .. j + 32`: the filtered
/// means and moments, then sigma1_sq, sigma2_sq (at least 0), sigma12.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512cd")]
fn horizontal32<const F: usize>(taps: &TapPairs, tmp: &[Vec<i16>; 8], j: usize, sigma: &mut [Vec<i32>; 3]) {
    let (add, shift, back) = (_mm512_set1_epi32(32768), _mm_cvtsi32_si128(16), _mm_cvtsi32_si128(0));
    // Even output columns, then odd ones.
    let mut parity = [[_mm512_setzero_si512(); 3]; 2];
    for (offset, sigmas) in parity.iter_mut().enumerate() {
        let mut f = [_mm512_setzero_si512(); 8];
        for (q, f) in f.iter_mut().enumerate() {
            // SAFETY: this build has AVX-512 F and BW.
            *f = unsafe { filter16::<F>(taps, &tmp[q], j + offset) };
        }
        let (mu1, mu2) = (f[0], f[1]);
        let xx = join16(f[2], f[3], add, shift, back);
        let yy = join16(f[4], f[5], add, shift, back);
        let xy = join16(f[6], f[7], add, shift, back);
        *sigmas = [
            _mm512_sub_epi32(xx, round32(mu1, mu1)),
            _mm512_max_epi32(_mm512_sub_epi32(yy, round32(mu2, mu2)), _mm512_setzero_si512()),
            _mm512_sub_epi32(xy, round32(mu1, mu2)),
        ];
    }
    // Interleave the even and odd columns back into picture order.
    let first = _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
    let second = _mm512_set_epi32(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8);
    for (s, out) in sigma.iter_mut().enumerate() {
        let (even, odd) = (parity[0][s], parity[1][s]);
        let out = &mut out[j..j + 32];
        // SAFETY: `out` holds 32 i32 (two unaligned 64-byte stores).
        unsafe {
            _mm512_storeu_si512(out.as_mut_ptr().cast(), _mm512_permutex2var_epi32(even, first, odd));
            _mm512_storeu_si512(out[16..].as_mut_ptr().cast(), _mm512_permutex2var_epi32(even, second, odd));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `filter16` against `Σ c·v` in u32 for filters whose taps of 2^15 or
    /// more sit at even and at odd positions (libvmaf's scale 3 has one at
    /// an odd position only).
    #[test]
    fn wide_taps_at_either_position_filter_exactly() {
        if !detected() {
            eprintln!("no AVX-512 on this CPU: filter16 is not checked here");
            return;
        }
        let row: Vec<u16> = (0..80u32).map(|i| (i * 40503 + 977) as u16).collect();
        let biased: Vec<i16> = row.iter().map(|&v| bias(u32::from(v))).collect();
        for taps in [[10904u32, 43728, 10904], [43728, 10904, 10904], [40000, 20000, 5536]] {
            // SAFETY: the CPU has AVX-512 F, BW, DQ and CD (checked above).
            let (pairs, lanes) = unsafe {
                let pairs = horizontal_pairs(&taps);
                let even = filter16::<3>(&pairs, &biased, 4);
                let odd = filter16::<3>(&pairs, &biased, 5);
                (pairs.wide.len(), [even, odd].map(|v| std::mem::transmute::<__m512i, [u32; 16]>(v)))
            };
            assert!(pairs > 0);
            for (parity, got) in lanes.iter().enumerate() {
                for (lane, &g) in got.iter().enumerate() {
                    let at = 4 + parity + 2 * lane;
                    let want = (0..3).fold(0u32, |s, k| s.wrapping_add(taps[k] * u32::from(row[at + k])));
                    assert_eq!(g, want, "taps {taps:?}, column {at}");
                }
            }
        }
    }
}
