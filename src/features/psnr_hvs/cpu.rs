//! The CPU reference of `psnr_hvs`: libvmaf third_party/xiph/psnr_hvs.c,
//! operation for operation (f32 arithmetic in its order, Daala's integer
//! DCT, one f32 sum over the whole plane in block and coefficient order).

use super::tables::{PlaneTables, plane_tables};
use super::{METRICS, blocks};
use crate::features::Extractor;
use crate::fixture::{Frame, PlaneRef};
use crate::scores::Scores;
use anyhow::Result;

/// psnr_hvs.c `OD_DCT_RSHIFT` (`OD_UNBIASED_RSHIFT32`): `a >> b` rounded
/// towards zero, in 32-bit two's complement as the C computes it.
#[inline(always)]
fn unbiased_rshift(a: i32, b: u32) -> i32 {
    (((a as u32) >> (32 - b)).wrapping_add(a as u32) as i32) >> b
}

/// `(a * c + round) >> shift` in 32-bit two's complement: each lifting step
/// of od_bin_fdct8.
#[inline(always)]
fn lift(a: i32, c: i32, round: i32, shift: u32) -> i32 {
    a.wrapping_mul(c).wrapping_add(round) >> shift
}

/// `L` lanes of `i32`: the same coefficient of `L` blocks. Every operation
/// below works lane by lane, which the compiler turns into vector
/// instructions; lane arithmetic is exactly the scalar C's.
type Lanes<const L: usize> = [i32; L];

#[inline(always)]
fn map2<const L: usize>(a: Lanes<L>, b: Lanes<L>, f: impl Fn(i32, i32) -> i32) -> Lanes<L> {
    std::array::from_fn(|l| f(a[l], b[l]))
}

#[inline(always)]
fn map1<const L: usize>(a: Lanes<L>, f: impl Fn(i32) -> i32) -> Lanes<L> {
    std::array::from_fn(|l| f(a[l]))
}

/// psnr_hvs.c `od_bin_fdct8` on `L` lanes: `x[k]` is input `k` of every
/// lane, the result's `[k]` output `k`.
#[inline(always)]
fn fdct8<const L: usize>(x: [Lanes<L>; 8]) -> [Lanes<L>; 8] {
    let add = |a: Lanes<L>, b: Lanes<L>| map2(a, b, i32::wrapping_add);
    let sub = |a: Lanes<L>, b: Lanes<L>| map2(a, b, i32::wrapping_sub);
    let rsh = |a: Lanes<L>| map1(a, |v| unbiased_rshift(v, 1));
    let lift = |a: Lanes<L>, c: i32, round: i32, shift: u32| map1(a, |v| lift(v, c, round, shift));
    // Initial permutation.
    let mut t0 = x[0];
    let mut t4 = x[1];
    let mut t2 = x[2];
    let mut t6 = x[3];
    let mut t7 = x[4];
    let mut t3 = x[5];
    let mut t5 = x[6];
    let mut t1 = x[7];
    // +1/-1 butterflies.
    t1 = sub(t0, t1);
    let t1h = rsh(t1);
    t0 = sub(t0, t1h);
    t4 = add(t4, t5);
    let t4h = rsh(t4);
    t5 = sub(t5, t4h);
    t3 = sub(t2, t3);
    t2 = sub(t2, rsh(t3));
    t6 = add(t6, t7);
    let t6h = rsh(t6);
    t7 = sub(t6h, t7);
    // Embedded 4-point type-II DCT.
    t0 = add(t0, t6h);
    t6 = sub(t0, t6);
    t2 = sub(t4h, t2);
    t4 = sub(t2, t4);
    // Embedded 2-point type-II DCT.
    t0 = sub(t0, lift(t4, 13573, 16384, 15));
    t4 = add(t4, lift(t0, 11585, 8192, 14));
    t0 = sub(t0, lift(t4, 13573, 16384, 15));
    // Embedded 2-point type-IV DST.
    t6 = sub(t6, lift(t2, 21895, 16384, 15));
    t2 = add(t2, lift(t6, 15137, 8192, 14));
    t6 = sub(t6, lift(t2, 21895, 16384, 15));
    // Embedded 4-point type-IV DST.
    t3 = add(t3, lift(t5, 19195, 16384, 15));
    t5 = add(t5, lift(t3, 11585, 8192, 14));
    t3 = sub(t3, lift(t5, 7489, 4096, 13));
    t7 = sub(rsh(t5), t7);
    t5 = sub(t5, t7);
    t3 = sub(t1h, t3);
    t1 = sub(t1, t3);
    t7 = add(t7, lift(t1, 3227, 16384, 15));
    t1 = sub(t1, lift(t7, 6393, 16384, 15));
    t7 = add(t7, lift(t1, 3227, 16384, 15));
    t5 = add(t5, lift(t3, 2485, 4096, 13));
    t3 = sub(t3, lift(t5, 18205, 16384, 15));
    t5 = add(t5, lift(t3, 2485, 4096, 13));
    [t0, t1, t2, t3, t4, t5, t6, t7]
}

/// psnr_hvs.c `od_bin_fdct8x8` of `L` row-major 8x8 blocks at once
/// (`b[i * 8 + j]`: coefficient (i, j) of every lane): a 1-D DCT down every
/// column into the rows of a scratch block, then down every column of that.
#[inline(always)]
pub fn fdct8x8<const L: usize>(b: &[Lanes<L>; 64]) -> [Lanes<L>; 64] {
    let mut z = [[0; L]; 64];
    for i in 0..8 {
        let out = fdct8(std::array::from_fn(|k| b[k * 8 + i]));
        z[8 * i..8 * i + 8].copy_from_slice(&out);
    }
    let mut y = [[0; L]; 64];
    for i in 0..8 {
        let out = fdct8(std::array::from_fn(|k| z[k * 8 + i]));
        y[8 * i..8 * i + 8].copy_from_slice(&out);
    }
    y
}

/// `L` lanes of f32, one per block.
type Floats<const L: usize> = [f32; L];

#[inline(always)]
fn f2<const L: usize>(a: Floats<L>, b: Floats<L>, f: impl Fn(f32, f32) -> f32) -> Floats<L> {
    std::array::from_fn(|l| f(a[l], b[l]))
}

/// calc_psnrhvs's means and variances of `L` blocks: the quadrants'
/// variances over the whole block's (`gvar`, left as is when not positive).
#[inline(always)]
fn variance_ratio<const L: usize>(v: &[Lanes<L>; 64]) -> Floats<L> {
    let sub = |i: usize, j: usize| ((i & 12) >> 2) + ((j & 12) >> 1);
    let mut gmean = [0.0f32; L];
    let mut means = [[0.0f32; L]; 4];
    for i in 0..8 {
        for j in 0..8 {
            let x: Floats<L> = v[i * 8 + j].map(|s| s as f32);
            gmean = f2(gmean, x, |a, b| a + b);
            means[sub(i, j)] = f2(means[sub(i, j)], x, |a, b| a + b);
        }
    }
    gmean = gmean.map(|m| m / 64.0);
    means = means.map(|m| m.map(|v| v / 16.0));
    let mut gvar = [0.0f32; L];
    let mut vars = [[0.0f32; L]; 4];
    for i in 0..8 {
        for j in 0..8 {
            let q = sub(i, j);
            let x: Floats<L> = v[i * 8 + j].map(|s| s as f32);
            gvar = std::array::from_fn(|l| gvar[l] + (x[l] - gmean[l]) * (x[l] - gmean[l]));
            vars[q] = std::array::from_fn(|l| vars[q][l] + (x[l] - means[q][l]) * (x[l] - means[q][l]));
        }
    }
    // `1 / 63.f * 64` and `1 / 15.f * 16`: float constants.
    gvar = gvar.map(|g| g * (1.0f32 / 63.0 * 64.0));
    vars = vars.map(|q| q.map(|v| v * (1.0f32 / 15.0 * 16.0)));
    std::array::from_fn(|l| {
        if gvar[l] > 0.0 { (vars[0][l] + vars[1][l] + vars[2][l] + vars[3][l]) / gvar[l] } else { gvar[l] }
    })
}

/// calc_psnrhvs's masking of `L` blocks: sqrt(Σ (float)(c * c) * mask over
/// the AC coefficients in order, times gvar) / 32 — in C a double square
/// root of a float, rounded to float: the float square root; /32 is exact.
#[inline(always)]
fn masking<const L: usize>(c: &[Lanes<L>; 64], mask: &[f32; 64], gvar: Floats<L>) -> Floats<L> {
    let mut m = [0.0f32; L];
    for k in 1..64 {
        // `dct * dct * mask`: an int product, then converted to float.
        m = std::array::from_fn(|l| m[l] + c[k][l].wrapping_mul(c[k][l]) as f32 * mask[k]);
    }
    std::array::from_fn(|l| (m[l] * gvar[l]).sqrt() / 32.0)
}

/// The 64 values calc_psnrhvs adds to its sum for `L` pairs of 8x8 blocks
/// (`src`, `dst`: samples, coefficient-major: `[i * 8 + j][lane]`), in its
/// order: `(err * csf[i][j]) * (err * csf[i][j])` for each coefficient,
/// `err` the coefficient difference less the contrast-masking threshold
/// (except the DC term). Each lane is one block, computed exactly as the C
/// computes it; the lanes only let the compiler use vector instructions.
pub fn block_terms<const L: usize>(
    src: &[Lanes<L>; 64],
    dst: &[Lanes<L>; 64],
    t: &PlaneTables,
    out: &mut [Floats<L>; 64],
) {
    let s_gvar = variance_ratio(src);
    let d_gvar = variance_ratio(dst);
    let dct_s = fdct8x8(src);
    let dct_d = fdct8x8(dst);
    let s_mask = masking(&dct_s, &t.mask, s_gvar);
    let d_mask = masking(&dct_d, &t.mask, d_gvar);
    let s_mask: Floats<L> = std::array::from_fn(|l| if d_mask[l] > s_mask[l] { d_mask[l] } else { s_mask[l] });
    for k in 0..64 {
        out[k] = std::array::from_fn(|l| {
            let mut err = dct_s[k][l].wrapping_sub(dct_d[k][l]).wrapping_abs() as f32;
            if k != 0 {
                let threshold = s_mask[l] / t.mask[k];
                err = if err < threshold { 0.0 } else { err - threshold };
            }
            (err * t.csf[k]) * (err * t.csf[k])
        });
    }
}

/// Blocks computed at once by [`plane_sum`].
const LANES: usize = 8;

/// calc_psnrhvs's sum for one plane, before its divisions: every block's
/// terms added in f32, blocks in raster order (8x8 blocks every 7 pixels),
/// coefficients in row-major order. Also returns the number of terms
/// (calc_psnrhvs's `pixels`).
pub fn plane_sum(reference: PlaneRef<'_>, distorted: PlaneRef<'_>, tables: &PlaneTables) -> (f32, usize) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        return unsafe { plane_sum_avx2(reference, distorted, tables) };
    }
    plane_sum_lanes(reference, distorted, tables)
}

/// [`plane_sum_lanes`] compiled for AVX2: eight lanes of f32 or i32 per
/// instruction, the same IEEE operations (no FMA), so the same bits.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn plane_sum_avx2(reference: PlaneRef<'_>, distorted: PlaneRef<'_>, tables: &PlaneTables) -> (f32, usize) {
    plane_sum_lanes(reference, distorted, tables)
}

#[inline(always)]
fn plane_sum_lanes(reference: PlaneRef<'_>, distorted: PlaneRef<'_>, tables: &PlaneTables) -> (f32, usize) {
    let (w, h) = (reference.width(), reference.height());
    let (bx, by) = (blocks(w), blocks(h));
    let n = bx * by;
    let mut ret = 0.0f32;
    let (mut src, mut dst, mut terms) = ([[0i32; LANES]; 64], [[0i32; LANES]; 64], [[0.0f32; LANES]; 64]);
    for first in (0..n).step_by(LANES) {
        let count = LANES.min(n - first);
        for l in 0..count {
            let b = first + l;
            load_block(reference, 7 * (b % bx), 7 * (b / bx), &mut src, l);
            load_block(distorted, 7 * (b % bx), 7 * (b / bx), &mut dst, l);
        }
        block_terms(&src, &dst, tables, &mut terms);
        // The sum, in block order, then coefficient order.
        for l in 0..count {
            for term in &terms {
                ret += term[l];
            }
        }
    }
    (ret, 64 * n)
}

/// The 8x8 block of `plane` whose top-left sample is (`x`, `y`), into lane
/// `l` of `out`.
pub fn load_block<const L: usize>(plane: PlaneRef<'_>, x: usize, y: usize, out: &mut [Lanes<L>; 64], l: usize) {
    let w = plane.width();
    match plane {
        PlaneRef::U8 { data, .. } => {
            for i in 0..8 {
                let row = &data[(y + i) * w + x..][..8];
                for j in 0..8 {
                    out[i * 8 + j][l] = i32::from(row[j]);
                }
            }
        }
        PlaneRef::U16 { data, .. } => {
            for i in 0..8 {
                let row = &data[(y + i) * w + x..][..8];
                for j in 0..8 {
                    out[i * 8 + j][l] = i32::from(row[j]);
                }
            }
        }
    }
}

/// calc_psnrhvs's result from its sum: `ret / pixels / (samplemax²)`, in f32.
pub fn plane_score(ret: f32, pixels: usize, bit_depth: u8) -> f64 {
    let samplemax = (1i32 << bit_depth) - 1;
    let ret = ret / pixels as f32;
    f64::from(ret / (samplemax * samplemax) as f32)
}

/// psnr_hvs.c `convert_score_db` with weight 1: `10 * (-1 * log10(1.0 *
/// score))`; multiplying by 1 and by -1 is exact, so this is the same value.
pub fn score_db(score: f64) -> f64 {
    10.0 * -score.log10()
}

/// psnr_hvs.c `extract`'s scores from the three planes' calc_psnrhvs
/// results: psnr_hvs_y, _cb, _cr, and psnr_hvs from `0.8 y + 0.1 (cb + cr)`.
pub fn record(scores: [f64; 3], index: usize, out: &mut Scores) {
    for (p, &s) in scores.iter().enumerate() {
        out.record(METRICS[p], index, score_db(s));
    }
    out.record(METRICS[3], index, score_db(scores[0] * 0.8 + 0.1 * (scores[1] + scores[2])));
}

pub struct PsnrHvsCpu {
    tables: [PlaneTables; 3],
}

impl PsnrHvsCpu {
    pub fn new() -> Self {
        PsnrHvsCpu { tables: [plane_tables(0), plane_tables(1), plane_tables(2)] }
    }
}

impl Default for PsnrHvsCpu {
    fn default() -> Self {
        Self::new()
    }
}

impl Extractor for PsnrHvsCpu {
    fn extract(&mut self, index: usize, reference: &Frame, distorted: &Frame, out: &mut Scores) -> Result<()> {
        let bit_depth = reference.geometry.bit_depth;
        let scores: [f64; 3] = std::array::from_fn(|p| {
            let (ret, pixels) = plane_sum(reference.plane(p), distorted.plane(p), &self.tables[p]);
            plane_score(ret, pixels, bit_depth)
        });
        record(scores, index, out);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flat_block_has_only_a_dc_coefficient() {
        // Daala's 8x8 DCT is orthonormal: a flat block of c has DC 8c, to
        // the lifting steps' rounding.
        for c in [0, 1, 100, 255, 1023, 4095] {
            let b: [[i32; 1]; 64] = [[c]; 64];
            let y = fdct8x8(&b);
            assert!((y[0][0] - 8 * c).abs() <= 1, "{c}: DC {}", y[0][0]);
            assert!(y[1..].iter().all(|v| v[0] == 0), "{c}: {y:?}");
        }
    }

    #[test]
    fn unbiased_shifts_round_towards_zero() {
        assert_eq!(unbiased_rshift(5, 1), 2);
        assert_eq!(unbiased_rshift(-5, 1), -2);
        assert_eq!(unbiased_rshift(-4, 1), -2);
        assert_eq!(lift(-3, 13573, 16384, 15), (-3 * 13573 + 16384) >> 15);
    }

    #[test]
    fn lanes_are_blocks_computed_one_by_one() {
        let t = plane_tables(0);
        let mut seed = 9u64;
        let mut next = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 52) as i32 // 12 bits
        };
        let (mut src, mut dst) = ([[0i32; 8]; 64], [[0i32; 8]; 64]);
        for k in 0..64 {
            for l in 0..8 {
                src[k][l] = next();
                dst[k][l] = if l == 3 { src[k][l] } else { (src[k][l] + next() % 64).clamp(0, 4095) };
            }
        }
        let mut lanes = [[0.0f32; 8]; 64];
        block_terms(&src, &dst, &t, &mut lanes);
        for l in 0..8 {
            let one = |b: &[[i32; 8]; 64]| -> [[i32; 1]; 64] { std::array::from_fn(|k| [b[k][l]]) };
            let mut single = [[0.0f32; 1]; 64];
            block_terms(&one(&src), &one(&dst), &t, &mut single);
            assert!((0..64).all(|k| single[k][0].to_bits() == lanes[k][l].to_bits()), "lane {l}");
        }
        // Identical blocks (lane 3) contribute nothing.
        assert!((0..64).all(|k| lanes[k][3] == 0.0));
    }
}
