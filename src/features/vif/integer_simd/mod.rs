//! Integer VIF's statistic (vif_statistic_8 / vif_statistic_16) in vector
//! lanes: the same integers as the portable blocks of [`super::integer`],
//! fewer multiplies. One body, generic over [`Lanes`]: AVX2's 256-bit
//! vectors ([`avx2`]) or AVX-512's 512-bit ones ([`avx512`], which also
//! runs the per-pixel statistic in vectors). Called only from the matching
//! build of `IntegerVif::run`.
//!
//! Every row between the two passes holds values below 2^16 (the rounded
//! means, and the moments as 16-bit halves, see `integer::Rows`), so these
//! builds keep them as i16 biased by 2^15 (`v ^ 0x8000`, that is
//! `v - 32768`) and filter them with `vpmaddwd`, which multiplies 16-bit
//! lanes and adds adjacent pairs: two taps of 8 (AVX2) or 16 (AVX-512)
//! outputs an instruction, where u32 lanes spend two `vpmulld` micro-ops
//! on one tap. The bias costs nothing: the taps sum to 65536, so
//! `Σ c·(v - 32768) = Σ c·v - 2^31`, and adding 2^31 back (modulo 2^32, as
//! C's u32 sums wrap) gives C's sum. libvmaf's own AVX-512 statistic
//! (vif_avx512.c) pairs the vertical taps the same way; its horizontal pass
//! keeps u64 lanes instead.
//!
//! Pixels come out of the horizontal pass as even and odd columns; they are
//! put back in order before the sigmas are stored (the statistic sums
//! integers, so the order of pixels could not change it anyway).

pub mod avx2;
pub mod avx512;

use super::integer::{Sample, ScaleSums, Vertical, pad, vertical_block, window};
use std::arch::x86_64::__m128i;

/// [`Lanes`] methods that are one intrinsic of two vectors, for the
/// implementations: `name => intrinsic` for each, on the wrapper `V`.
macro_rules! binary_ops {
    ($v:ident; $($name:ident => $intrinsic:ident,)*) => {
        $(
            #[inline(always)]
            unsafe fn $name(a: Self, b: Self) -> Self {
                // SAFETY: the trait's contract: the caller's build has the
                // intrinsic's features.
                $v(unsafe { $intrinsic(a.0, b.0) })
            }
        )*
    };
}
use binary_ops;

/// The widest filter (scale 0, 17 taps) has this many taps on each side of
/// its centre.
const MAX_HALF: usize = 8;

/// What the filter passes need of a vector of integer lanes. `L16` 16-bit
/// lanes, `L16 / 2` 32-bit ones. "Within 128 bits" below means the
/// instruction works on each 128-bit part of the vector separately, as
/// x86's unpack and pack instructions do.
///
/// # Safety
/// Every method runs AVX2 (or, for the 512-bit implementation, AVX-512 F
/// and BW) instructions: only functions compiled with those features call
/// them.
pub trait Lanes: Copy {
    /// 16-bit lanes in a vector.
    const L16: usize;
    /// How this build adds up the statistic of a row of sigmas.
    type Sums: Accumulate;

    unsafe fn zero() -> Self;
    unsafe fn splat16(v: i16) -> Self;
    unsafe fn splat32(v: i32) -> Self;
    unsafe fn splat64(v: i64) -> Self;
    /// `L16` i16 from `s[..L16]`.
    unsafe fn load16(s: &[i16]) -> Self;
    /// `L16` u8 from `s[..L16]`, zero-extended to 16-bit lanes.
    unsafe fn load_u8(s: &[u8]) -> Self;
    unsafe fn store16(d: &mut [i16], v: Self);
    /// `L16 / 2` i32 to `d[..L16 / 2]`.
    unsafe fn store32(d: &mut [i32], v: Self);
    unsafe fn add16(a: Self, b: Self) -> Self;
    unsafe fn add32(a: Self, b: Self) -> Self;
    unsafe fn sub32(a: Self, b: Self) -> Self;
    unsafe fn max32(a: Self, b: Self) -> Self;
    unsafe fn add64(a: Self, b: Self) -> Self;
    unsafe fn and(a: Self, b: Self) -> Self;
    unsafe fn xor(a: Self, b: Self) -> Self;
    unsafe fn mullo32(a: Self, b: Self) -> Self;
    /// `vpmaddwd`: `a[2i]·b[2i] + a[2i+1]·b[2i+1]` of i16 lanes, as i32.
    unsafe fn madd16(a: Self, b: Self) -> Self;
    /// `vpmuludq`: the low u32 halves of the u64 lanes, multiplied to u64.
    unsafe fn mul_u32(a: Self, b: Self) -> Self;
    unsafe fn srli32<const N: i32>(a: Self) -> Self;
    unsafe fn slli32<const N: i32>(a: Self) -> Self;
    unsafe fn srli64<const N: i32>(a: Self) -> Self;
    /// u32 shifts by the count in the low 64 bits of `n`.
    unsafe fn srl32(a: Self, n: __m128i) -> Self;
    unsafe fn sll32(a: Self, n: __m128i) -> Self;
    /// 16-bit lanes of `a` and `b` alternating, from the low (`unpacklo`)
    /// or high (`unpackhi`) half of each 128 bits.
    unsafe fn unpacklo16(a: Self, b: Self) -> Self;
    unsafe fn unpackhi16(a: Self, b: Self) -> Self;
    /// i32 to u16 with saturation, within 128 bits: `a`'s lanes then `b`'s
    /// (the inverse of the unpacks above).
    unsafe fn packus32(a: Self, b: Self) -> Self;
    /// The even u32 lanes of `even` and the odd ones of `odd`.
    unsafe fn blend_odd32(even: Self, odd: Self) -> Self;
    /// u32 lanes `e0 o0 e1 o1 ...` of `even` and `odd`, in two vectors.
    unsafe fn interleave32(even: Self, odd: Self) -> (Self, Self);
}

/// The four sums of a scale, added a row of sigmas at a time.
///
/// # Safety
/// As [`Lanes`]: only from functions compiled with the build's features.
pub trait Accumulate {
    unsafe fn new() -> Self;
    /// Columns `0 .. w` of sigma1_sq, sigma2_sq (at least 0) and sigma12;
    /// the rows are longer, rounded up to whole vectors.
    unsafe fn add_row(&mut self, sigma: &[Vec<i32>; 3], w: usize, table: &[u16], gain_limit: f64);
    unsafe fn total(&self) -> ScaleSums;
}

/// The per-pixel statistic one pixel at a time (`integer::accumulate_sigmas`).
pub struct ScalarSums(ScaleSums);

impl Accumulate for ScalarSums {
    unsafe fn new() -> Self {
        ScalarSums(ScaleSums::default())
    }

    // Not inlined: inside the statistic's loop the sums lived on the stack
    // (a store and a load a pixel); alone, they stay in registers.
    #[inline(never)]
    unsafe fn add_row(&mut self, [s1, s2, s12]: &[Vec<i32>; 3], w: usize, table: &[u16], gain_limit: f64) {
        let mut sums = self.0;
        for j in 0..w {
            super::integer::accumulate_sigmas(s1[j], s2[j], s12[j], table, gain_limit, &mut sums);
        }
        self.0 = sums;
    }

    unsafe fn total(&self) -> ScaleSums {
        self.0
    }
}

/// Scratch rows of these builds, kept from frame to frame.
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
    fn prepare(&mut self, w: usize, r: usize, block: usize) {
        let blocks = w.div_ceil(block) * block;
        for v in self.tmp.iter_mut() {
            v.clear();
            // The horizontal pass reads `block` lanes from up to column
            // `blocks - block + 2r + 1` of the padded row.
            v.resize(blocks + 2 * r + 2, 0);
        }
        for v in self.sigma.iter_mut() {
            v.clear();
            v.resize(blocks, 0);
        }
    }
}

/// vif_statistic_8 / vif_statistic_16 at one scale, as `integer::statistic`.
///
/// # Safety
/// As [`Lanes`]: only from functions compiled with `W`'s features.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn statistic<T: Sample, const F: usize, W: Lanes>(
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
    // SAFETY (every call below): the caller's build has W's features.
    unsafe {
        let pairs = TapPairs::<W>::new(&c);
        rows.prepare(w, r, W::L16);
        let mut sums = W::Sums::new();
        for i in 0..h {
            let window = (window::<T, F>(reference, w, h, i), window::<T, F>(distorted, w, h, i));
            vertical_row::<T, F, W>(&c, (&window.0, &window.1), w, mode, &mut rows.tmp);
            for t in rows.tmp.iter_mut() {
                pad(t, w, r);
            }
            for j in (0..w).step_by(W::L16) {
                horizontal::<F, W>(&pairs, &rows.tmp, j, &mut rows.sigma);
            }
            sums.add_row(&rows.sigma, w, table, gain_limit);
        }
        sums.total()
    }
}

/// The vertical pass of one output row into the biased rows (interior at
/// offset `F / 2`), `W::L16` columns at a time, the last ones through the
/// portable block.
#[inline(always)]
unsafe fn vertical_row<T: Sample, const F: usize, W: Lanes>(
    c: &[u32; F],
    rows: (&[&[T]; F], &[&[T]; F]),
    w: usize,
    mode: Vertical,
    tmp: &mut [Vec<i16>; 8],
) {
    let r = F / 2;
    let mut out = tmp.each_mut().map(|v| &mut v[r..r + w]);
    let full = w - w % W::L16;
    for j in (0..full).step_by(W::L16) {
        // SAFETY: the caller's build has W's features.
        unsafe {
            match mode {
                Vertical::Eight => vertical_eight::<T, F, W>(c, rows, j, &mut out),
                Vertical::Sixteen { .. } => vertical_sixteen::<T, F, W>(c, rows, j, mode, &mut out),
            }
        }
    }
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

/// The means and moments of `L16` columns in 32-bit lanes, as two vectors
/// in unpacklo / unpackhi order, narrowed (`packus32`, which undoes that
/// order), biased and stored at column `j` of their rows.
#[inline(always)]
unsafe fn store_rows<W: Lanes>(means: [[W; 2]; 2], moments: [[W; 2]; 3], j: usize, out: &mut [&mut [i16]; 8]) {
    // SAFETY: the caller's build has W's features.
    unsafe {
        let flip = W::splat16(i16::MIN);
        for (plane, [lo, hi]) in means.into_iter().enumerate() {
            W::store16(&mut out[plane][j..], W::xor(W::packus32(lo, hi), flip));
        }
        let low = W::splat32(0xffff);
        for (m, [lo, hi]) in moments.into_iter().enumerate() {
            let high_halves = W::packus32(W::srli32::<16>(lo), W::srli32::<16>(hi));
            let low_halves = W::packus32(W::and(lo, low), W::and(hi, low));
            W::store16(&mut out[2 + 2 * m][j..], W::xor(high_halves, flip));
            W::store16(&mut out[3 + 2 * m][j..], W::xor(low_halves, flip));
        }
    }
}

/// vif_statistic_8's vertical pass of columns `j .. j + L16` (8-bit
/// samples): C's `Σ_fi c·a` (then `(+ 128) >> 8`), `Σ c·a·a`, `Σ c·b·b`,
/// `Σ c·a·b` in u32. The filter is symmetric, so rows `k` and `F - 1 - k`
/// share a tap: the means sum `a_k + a_{F-1-k}` and take two taps per
/// `vpmaddwd`; the moments take `a_k² + a_{F-1-k}²` (one `vpmaddwd` of the
/// interleaved rows) times `c_k`. The same sums modulo 2^32, which is what
/// C's u32 keeps (they never reach 2^32 for 8-bit samples).
#[inline(always)]
unsafe fn vertical_eight<T: Sample, const F: usize, W: Lanes>(
    c: &[u32; F],
    (rows_ref, rows_dis): (&[&[T]; F], &[&[T]; F]),
    j: usize,
    out: &mut [&mut [i16]; 8],
) {
    let r = F / 2;
    // SAFETY: the caller's build has W's features.
    unsafe {
        let zero = W::zero();
        // Per tap k <= r: the two planes' row sums (the centre row alone).
        let mut sum_ref = [zero; MAX_HALF + 1];
        let mut sum_dis = [zero; MAX_HALF + 1];
        // [xx, yy, xy] x [unpacklo, unpackhi order].
        let mut moments = [[zero; 2]; 3];
        for k in 0..r + 1 {
            let a = T::load_w16::<W>(&rows_ref[k][j..]);
            let b = T::load_w16::<W>(&rows_dis[k][j..]);
            let (a2, b2) = if k < r {
                (T::load_w16::<W>(&rows_ref[F - 1 - k][j..]), T::load_w16::<W>(&rows_dis[F - 1 - k][j..]))
            } else {
                (zero, zero)
            };
            sum_ref[k] = W::add16(a, a2);
            sum_dis[k] = W::add16(b, b2);
            let ck = W::splat32(c[k] as i32);
            let ua = [W::unpacklo16(a, a2), W::unpackhi16(a, a2)];
            let ub = [W::unpacklo16(b, b2), W::unpackhi16(b, b2)];
            for half in 0..2 {
                let products =
                    [W::madd16(ua[half], ua[half]), W::madd16(ub[half], ub[half]), W::madd16(ua[half], ub[half])];
                for (m, p) in products.into_iter().enumerate() {
                    moments[m][half] = W::add32(moments[m][half], W::mullo32(p, ck));
                }
            }
        }
        // The means: taps k and k + 1 in one `vpmaddwd` (the last alone).
        let mut means = [[zero; 2]; 2];
        for k in (0..r + 1).step_by(2) {
            let next = if k < r { c[k + 1] } else { 0 };
            let pair = W::splat32((c[k] | next << 16) as i32);
            for (plane, sums) in [&sum_ref, &sum_dis].into_iter().enumerate() {
                let following = if k < r { sums[k + 1] } else { zero };
                let lanes = [W::unpacklo16(sums[k], following), W::unpackhi16(sums[k], following)];
                for half in 0..2 {
                    means[plane][half] = W::add32(means[plane][half], W::madd16(lanes[half], pair));
                }
            }
        }
        // (No closures here or below: they would not be compiled with the
        // caller's target features, and every intrinsic in them would be a
        // call.)
        let round = W::splat32(128);
        for v in means.iter_mut().flatten() {
            *v = W::srli32::<8>(W::add32(*v, round));
        }
        store_rows(means, moments, j, out);
    }
}

/// `join` on u32 lanes: `(h << (16 - shift)) + ((l + add) >> shift)`.
#[inline(always)]
unsafe fn join<W: Lanes>(h: W, l: W, add: W, shift: __m128i, back: __m128i) -> W {
    // SAFETY: the caller's build has W's features.
    unsafe { W::add32(W::sll32(h, back), W::srl32(W::add32(l, add), shift)) }
}

/// vif_statistic_16's vertical pass of columns `j .. j + L16`, as
/// `integer::vertical_block` (the u64 sums as 16-bit halves' u32 sums), in
/// u32 lanes: each vector of samples widened by unpacking with zero, so
/// `store_rows` puts the columns back in order.
#[inline(always)]
unsafe fn vertical_sixteen<T: Sample, const F: usize, W: Lanes>(
    c: &[u32; F],
    (rows_ref, rows_dis): (&[&[T]; F], &[&[T]; F]),
    j: usize,
    mode: Vertical,
    out: &mut [&mut [i16]; 8],
) {
    let Vertical::Sixteen { mu: (mu_add, mu_shift), sq: (sq_add, sq_shift) } = mode else {
        unreachable!("vertical_eight takes Vertical::Eight")
    };
    // SAFETY: the caller's build has W's features.
    unsafe {
        let zero = W::zero();
        let low = W::splat32(0xffff);
        // [mu1, mu2, then the hi and lo halves' sums of r·r, d·d, r·d] x
        // [unpacklo, unpackhi order].
        let mut acc = [[zero; 2]; 8];
        for fi in 0..F {
            let (a, b) = (T::load_w16::<W>(&rows_ref[fi][j..]), T::load_w16::<W>(&rows_dis[fi][j..]));
            let cf = W::splat32(c[fi] as i32);
            for (half, (a, b)) in
                [(W::unpacklo16(a, zero), W::unpacklo16(b, zero)), (W::unpackhi16(a, zero), W::unpackhi16(b, zero))]
                    .into_iter()
                    .enumerate()
            {
                acc[0][half] = W::add32(acc[0][half], W::mullo32(cf, a));
                acc[1][half] = W::add32(acc[1][half], W::mullo32(cf, b));
                // Samples are at most 16 bits: their products fit u32.
                let products = [W::mullo32(a, a), W::mullo32(b, b), W::mullo32(a, b)];
                for (q, p) in products.into_iter().enumerate() {
                    acc[2 + 2 * q][half] = W::add32(acc[2 + 2 * q][half], W::mullo32(cf, W::srli32::<16>(p)));
                    acc[3 + 2 * q][half] = W::add32(acc[3 + 2 * q][half], W::mullo32(cf, W::and(p, low)));
                }
            }
        }
        let (add, shift) = (W::splat32(mu_add as i32), std::arch::x86_64::_mm_cvtsi32_si128(mu_shift as i32));
        let mut means = [[zero; 2]; 2];
        for (plane, mean) in means.iter_mut().enumerate() {
            for half in 0..2 {
                // `& 0xffff`: C truncates the shifted mean to u16.
                mean[half] = W::and(W::srl32(W::add32(acc[plane][half], add), shift), low);
            }
        }
        let (add, shift) = (W::splat32(sq_add as i32), std::arch::x86_64::_mm_cvtsi32_si128(sq_shift as i32));
        let back = std::arch::x86_64::_mm_cvtsi32_si128(16 - sq_shift as i32);
        // The joined u32 moments, split again into halves by store_rows.
        let mut moments = [[zero; 2]; 3];
        for (q, moment) in moments.iter_mut().enumerate() {
            for half in 0..2 {
                moment[half] = join(acc[2 + 2 * q][half], acc[3 + 2 * q][half], add, shift, back);
            }
        }
        store_rows(means, moments, j, out);
    }
}

/// The horizontal filter's taps in adjacent pairs, `c[2p] | c[2p+1] << 16`
/// (a zero tap past the end), for `vpmaddwd`. A tap of 2^15 or more reads
/// as negative there (scale 3's centre, 43728): [`filter`] adds the missing
/// `2^16 · v` back.
struct TapPairs<W> {
    pairs: [W; MAX_HALF + 1],
    /// The wide taps, as (pair, whether it is the pair's second tap).
    wide: Vec<(usize, bool)>,
}

impl<W: Lanes> TapPairs<W> {
    #[inline(always)]
    unsafe fn new<const F: usize>(c: &[u32; F]) -> Self {
        let tap = |k: usize| if k < F { c[k] } else { 0 };
        // SAFETY: the caller's build has W's features.
        let mut pairs = [unsafe { W::zero() }; MAX_HALF + 1];
        for (p, pair) in pairs.iter_mut().enumerate() {
            // SAFETY: as above.
            *pair = unsafe { W::splat32((tap(2 * p) | tap(2 * p + 1) << 16) as i32) };
        }
        TapPairs { pairs, wide: (0..F).filter(|&k| c[k] >= 1 << 15).map(|k| (k / 2, k % 2 == 1)).collect() }
    }
}

/// `Σ_k c_k · row[j + k + 2m]` of the unbiased row for the `L16 / 2`
/// outputs `m`, modulo 2^32.
#[inline(always)]
unsafe fn filter<const F: usize, W: Lanes>(taps: &TapPairs<W>, row: &[i16], j: usize) -> W {
    let row = &row[j..j + 2 * (F / 2) + W::L16];
    // SAFETY: the caller's build has W's features.
    unsafe {
        let mut acc = W::splat32(i32::MIN);
        // `0..n + 1` rather than `0..=n` (here and in the vertical pass):
        // LLVM unrolls the half-open range, not the inclusive one.
        for p in 0..F / 2 + 1 {
            acc = W::add32(acc, W::madd16(W::load16(&row[2 * p..]), taps.pairs[p]));
        }
        // vpmaddwd took a wide tap as c - 2^16: add 2^16 · v (mod 2^32).
        for &(p, second) in &taps.wide {
            let v = W::load16(&row[2 * p..]);
            let high = if second { W::and(v, W::splat32(-65536)) } else { W::slli32::<16>(v) };
            acc = W::add32(acc, high);
        }
        acc
    }
}

/// `(a · b + 2^31) >> 32` of u32 lanes, as u32 lanes.
#[inline(always)]
unsafe fn round32<W: Lanes>(a: W, b: W) -> W {
    // SAFETY: the caller's build has W's features.
    unsafe {
        let half = W::splat64(1 << 31);
        let even = W::srli64::<32>(W::add64(W::mul_u32(a, b), half));
        let odd = W::add64(W::mul_u32(W::srli64::<32>(a), W::srli64::<32>(b)), half);
        W::blend_odd32(even, odd)
    }
}

/// `integer::horizontal_block` for columns `j .. j + L16`: the filtered
/// means and moments, then sigma1_sq, sigma2_sq (at least 0), sigma12.
#[inline(always)]
unsafe fn horizontal<const F: usize, W: Lanes>(
    taps: &TapPairs<W>,
    tmp: &[Vec<i16>; 8],
    j: usize,
    sigma: &mut [Vec<i32>; 3],
) {
    // SAFETY: the caller's build has W's features.
    unsafe {
        let (add, shift, back) =
            (W::splat32(32768), std::arch::x86_64::_mm_cvtsi32_si128(16), std::arch::x86_64::_mm_cvtsi32_si128(0));
        // Even output columns, then odd ones.
        let mut parity = [[W::zero(); 3]; 2];
        for (offset, sigmas) in parity.iter_mut().enumerate() {
            let mut f = [W::zero(); 8];
            for (q, f) in f.iter_mut().enumerate() {
                *f = filter::<F, W>(taps, &tmp[q], j + offset);
            }
            let (mu1, mu2) = (f[0], f[1]);
            let xx = join(f[2], f[3], add, shift, back);
            let yy = join(f[4], f[5], add, shift, back);
            let xy = join(f[6], f[7], add, shift, back);
            *sigmas = [
                W::sub32(xx, round32(mu1, mu1)),
                W::max32(W::sub32(yy, round32(mu2, mu2)), W::zero()),
                W::sub32(xy, round32(mu1, mu2)),
            ];
        }
        // Interleave the even and odd columns back into picture order.
        for (s, out) in sigma.iter_mut().enumerate() {
            let (first, second) = W::interleave32(parity[0][s], parity[1][s]);
            W::store32(&mut out[j..], first);
            W::store32(&mut out[j + W::L16 / 2..], second);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `filter` against `Σ c·v` in u32 for filters whose taps of 2^15 or
    /// more sit at even and at odd positions (libvmaf's scale 3 has one at
    /// an odd position only), in both builds this CPU has.
    #[test]
    fn wide_taps_at_either_position_filter_exactly() {
        if is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2.
            unsafe { check_wide_taps::<avx2::V256>() };
        } else {
            eprintln!("no AVX2 on this CPU: its filter is not checked here");
        }
        if avx512::detected() {
            // SAFETY: the CPU has AVX-512 F, BW, DQ and CD.
            unsafe { check_wide_taps::<avx512::V512>() };
        } else {
            eprintln!("no AVX-512 on this CPU: its filter is not checked here");
        }
    }

    unsafe fn check_wide_taps<W: Lanes>() {
        let row: Vec<u16> = (0..80u32).map(|i| (i * 40503 + 977) as u16).collect();
        let biased: Vec<i16> = row.iter().map(|&v| bias(u32::from(v))).collect();
        for taps in [[10904u32, 43728, 10904], [43728, 10904, 10904], [40000, 20000, 5536]] {
            // SAFETY: the caller checked W's features.
            let (wide, lanes) = unsafe {
                let pairs = TapPairs::<W>::new(&taps);
                let mut lanes = [[0i32; 16]; 2];
                for (parity, out) in lanes.iter_mut().enumerate() {
                    W::store32(out, filter::<3, W>(&pairs, &biased, 4 + parity));
                }
                (pairs.wide.len(), lanes)
            };
            assert!(wide > 0);
            for (parity, got) in lanes.iter().enumerate() {
                for (lane, &g) in got[..W::L16 / 2].iter().enumerate() {
                    let at = 4 + parity + 2 * lane;
                    let want = (0..3).fold(0u32, |s, k| s.wrapping_add(taps[k] * u32::from(row[at + k])));
                    assert_eq!(g as u32, want, "{} lanes, taps {taps:?}, column {at}", W::L16);
                }
            }
        }
    }
}
