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

/// Eight lanes of `i32`, one per column (first pass) or row (second pass)
/// of a block: od_bin_fdct8 on all eight at once, which the compiler turns
/// into vector instructions. Lane arithmetic is exactly the scalar C's.
type Lanes = [i32; 8];

#[inline(always)]
fn map2(a: Lanes, b: Lanes, f: impl Fn(i32, i32) -> i32) -> Lanes {
    std::array::from_fn(|l| f(a[l], b[l]))
}

#[inline(always)]
fn map1(a: Lanes, f: impl Fn(i32) -> i32) -> Lanes {
    std::array::from_fn(|l| f(a[l]))
}

/// psnr_hvs.c `od_bin_fdct8` on eight lanes: `x[k]` is input `k` of every
/// lane, the result's `[k]` output `k`.
#[inline(always)]
fn fdct8(x: &[Lanes; 8]) -> [Lanes; 8] {
    let add = |a: Lanes, b: Lanes| map2(a, b, i32::wrapping_add);
    let sub = |a: Lanes, b: Lanes| map2(a, b, i32::wrapping_sub);
    let rsh = |a: Lanes| map1(a, |v| unbiased_rshift(v, 1));
    let lift = |a: Lanes, c: i32, round: i32, shift: u32| map1(a, |v| lift(v, c, round, shift));
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

fn transpose(m: &[Lanes; 8]) -> [Lanes; 8] {
    std::array::from_fn(|i| std::array::from_fn(|j| m[j][i]))
}

/// psnr_hvs.c `od_bin_fdct8x8` of a row-major 8x8 block: a 1-D DCT down
/// every column, then along every row of that result; coefficient
/// `[u * 8 + v]` (row u, column v), as the C leaves it.
pub fn fdct8x8(block: &[i32; 64]) -> [i32; 64] {
    // Pass 1, lanes = columns: lane i reads column i (row k is input k).
    let rows: [Lanes; 8] = std::array::from_fn(|k| std::array::from_fn(|i| block[k * 8 + i]));
    let a = fdct8(&rows); // a[k][i]: coefficient k of column i, the C's z[8 i + k]
    // Pass 2: the C transforms column i of z, i.e. a[i][..]; as lanes, a's
    // transpose.
    let c = fdct8(&transpose(&a)); // c[k][i]: coefficient k of z's column i
    std::array::from_fn(|n| c[n % 8][n / 8])
}

/// The 64 values calc_psnrhvs adds to its sum for one pair of 8x8 blocks
/// (`src`, `dst`: samples, row-major), in its order: `(err * csf[i][j]) *
/// (err * csf[i][j])` for each coefficient, `err` the coefficient
/// difference less the contrast-masking threshold (except the DC term).
pub fn block_terms(src: &[i32; 64], dst: &[i32; 64], t: &PlaneTables, out: &mut [f32; 64]) {
    let sub = |i: usize, j: usize| ((i & 12) >> 2) + ((j & 12) >> 1);
    let (mut s_gmean, mut d_gmean) = (0.0f32, 0.0f32);
    let (mut s_means, mut d_means) = ([0.0f32; 4], [0.0f32; 4]);
    for i in 0..8 {
        for j in 0..8 {
            let k = i * 8 + j;
            let (s, d) = (src[k] as f32, dst[k] as f32);
            s_gmean += s;
            d_gmean += d;
            s_means[sub(i, j)] += s;
            d_means[sub(i, j)] += d;
        }
    }
    s_gmean /= 64.0;
    d_gmean /= 64.0;
    for m in s_means.iter_mut().chain(d_means.iter_mut()) {
        *m /= 16.0;
    }
    let (mut s_gvar, mut d_gvar) = (0.0f32, 0.0f32);
    let (mut s_vars, mut d_vars) = ([0.0f32; 4], [0.0f32; 4]);
    for i in 0..8 {
        for j in 0..8 {
            let (k, q) = (i * 8 + j, sub(i, j));
            let (s, d) = (src[k] as f32, dst[k] as f32);
            s_gvar += (s - s_gmean) * (s - s_gmean);
            d_gvar += (d - d_gmean) * (d - d_gmean);
            s_vars[q] += (s - s_means[q]) * (s - s_means[q]);
            d_vars[q] += (d - d_means[q]) * (d - d_means[q]);
        }
    }
    // `1 / 63.f * 64` and `1 / 15.f * 16`: float constants.
    s_gvar *= 1.0f32 / 63.0 * 64.0;
    d_gvar *= 1.0f32 / 63.0 * 64.0;
    for v in s_vars.iter_mut().chain(d_vars.iter_mut()) {
        *v *= 1.0f32 / 15.0 * 16.0;
    }
    if s_gvar > 0.0 {
        s_gvar = (s_vars[0] + s_vars[1] + s_vars[2] + s_vars[3]) / s_gvar;
    }
    if d_gvar > 0.0 {
        d_gvar = (d_vars[0] + d_vars[1] + d_vars[2] + d_vars[3]) / d_gvar;
    }
    let dct_s = fdct8x8(src);
    let dct_d = fdct8x8(dst);
    let (mut s_mask, mut d_mask) = (0.0f32, 0.0f32);
    for k in 1..64 {
        // `dct * dct * mask`: an int product, then converted to float.
        s_mask += dct_s[k].wrapping_mul(dct_s[k]) as f32 * t.mask[k];
        d_mask += dct_d[k].wrapping_mul(dct_d[k]) as f32 * t.mask[k];
    }
    // `sqrt(x) / 32.f` in double, stored as float: the double square root
    // of a float rounded to float is the float square root, and /32 is exact.
    s_mask = (s_mask * s_gvar).sqrt() / 32.0;
    d_mask = (d_mask * d_gvar).sqrt() / 32.0;
    if d_mask > s_mask {
        s_mask = d_mask;
    }
    for k in 0..64 {
        let mut err = dct_s[k].wrapping_sub(dct_d[k]).wrapping_abs() as f32;
        if k != 0 {
            let threshold = s_mask / t.mask[k];
            err = if err < threshold { 0.0 } else { err - threshold };
        }
        out[k] = (err * t.csf[k]) * (err * t.csf[k]);
    }
}

/// calc_psnrhvs's sum for one plane, before its divisions: every block's
/// terms added in f32, blocks in raster order (8x8 blocks every 7 pixels),
/// coefficients in row-major order. Also returns the number of terms
/// (calc_psnrhvs's `pixels`).
pub fn plane_sum(reference: PlaneRef<'_>, distorted: PlaneRef<'_>, tables: &PlaneTables) -> (f32, usize) {
    let (w, h) = (reference.width(), reference.height());
    let (bx, by) = (blocks(w), blocks(h));
    let mut ret = 0.0f32;
    let (mut src, mut dst, mut terms) = ([0i32; 64], [0i32; 64], [0.0f32; 64]);
    for y in 0..by {
        for x in 0..bx {
            load_block(reference, 7 * x, 7 * y, &mut src);
            load_block(distorted, 7 * x, 7 * y, &mut dst);
            block_terms(&src, &dst, tables, &mut terms);
            for &t in &terms {
                ret += t;
            }
        }
    }
    (ret, 64 * bx * by)
}

/// The 8x8 block of `plane` whose top-left sample is (`x`, `y`).
pub fn load_block(plane: PlaneRef<'_>, x: usize, y: usize, out: &mut [i32; 64]) {
    let w = plane.width();
    match plane {
        PlaneRef::U8 { data, .. } => {
            for i in 0..8 {
                let row = &data[(y + i) * w + x..][..8];
                for j in 0..8 {
                    out[i * 8 + j] = i32::from(row[j]);
                }
            }
        }
        PlaneRef::U16 { data, .. } => {
            for i in 0..8 {
                let row = &data[(y + i) * w + x..][..8];
                for j in 0..8 {
                    out[i * 8 + j] = i32::from(row[j]);
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

/// psnr_hvs.c `convert_score_db` with weight 1.
pub fn score_db(score: f64) -> f64 {
    10.0 * (-1.0 * (1.0 * score).log10())
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
