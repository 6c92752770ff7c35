//! Contrast masking and the denominator, per band row (integer_adm.c
//! `adm_cm`, `i4_adm_cm`, `adm_csf_den_scale`, `adm_csf_den_s123`). Each
//! pixel of the score rectangle gives the cube of its CSF-weighted value
//! above the masking threshold (the 3x3 neighbourhood of the other
//! triple's filtered CSF magnitudes), rounded and shifted as libvmaf does;
//! the sums of one row are the [`RowSums`] the host finishes.

use super::super::geometry::{Region, cm_neighbour};
use super::decouple::{Decoupled, Masking};
use super::dwt::Bands;
use super::{RowSums, ScaleParams, half};

/// The masking threshold of each pixel of row `i`, columns `region.left ..
/// region.right`: the 3x3 sum of `m.f` (neighbours mirrored as the
/// `ADM_CM_THRESH_S_*` macros do) plus `m.t`. Integer sums, so the order
/// libvmaf adds them in does not matter: the three rows are added per
/// column first (`col`), then three columns.
#[inline(always)]
fn thresholds(m: &Masking, bw: usize, bh: usize, i: usize, region: Region, col: &mut Vec<i32>, out: &mut Vec<i32>) {
    let rows = [cm_neighbour(i as isize - 1, bh), i, cm_neighbour(i as isize + 1, bh)];
    let (r0, r1, r2) = (&m.f[rows[0] * bw..][..bw], &m.f[rows[1] * bw..][..bw], &m.f[rows[2] * bw..][..bw]);
    // Columns left - 1 ..= right, as far as they exist.
    let (x0, x1) = (region.left.saturating_sub(1), (region.right + 1).min(bw));
    super::dwt::size(col, bw);
    for (((c, &a), &b), &d) in col[x0..x1].iter_mut().zip(&r0[x0..x1]).zip(&r1[x0..x1]).zip(&r2[x0..x1]) {
        *c = a.wrapping_add(b).wrapping_add(d);
    }
    super::dwt::size(out, region.cols());
    let t = &m.t[i * bw..][..bw];
    let at = |j: usize| {
        let (l, r) = (cm_neighbour(j as isize - 1, bw), cm_neighbour(j as isize + 1, bw));
        col[l].wrapping_add(col[j]).wrapping_add(col[r]).wrapping_add(t[j])
    };
    // The interior reads j - 1 and j + 1 unmirrored.
    let (j0, j1) = (region.left.max(1), region.right.min(bw - 1));
    for j in region.left..j0.min(region.right) {
        out[j - region.left] = at(j);
    }
    if j1 > j0 {
        let n = j1 - j0;
        let (l, c, r, tt) = (&col[j0 - 1..][..n], &col[j0..][..n], &col[j0 + 1..][..n], &t[j0..][..n]);
        for ((((o, &a), &b), &d), &e) in out[j0 - region.left..][..n].iter_mut().zip(l).zip(c).zip(r).zip(tt) {
            *o = a.wrapping_add(b).wrapping_add(d).wrapping_add(e);
        }
    }
    for j in j1.max(j0)..region.right {
        out[j - region.left] = at(j);
    }
}

/// Scale 0's cube term (`ADM_CM_ACCUM_ROUND`): `x` is the band value times
/// its Q21/Q23 CSF factor; `thr << sub` brings the threshold to its scale.
#[inline(always)]
pub fn cube0(x: i32, thr: i32, sub: u32, sq_add: i64, sq_shift: u32, cub_add: i64, cub_shift: u32) -> i64 {
    let x = x.wrapping_abs().wrapping_sub(thr.wrapping_shl(sub)).max(0);
    let x_sq = ((i64::from(x) * i64::from(x) + sq_add) >> sq_shift) as i32;
    (i64::from(x_sq) * i64::from(x) + cub_add) >> cub_shift
}

/// Scales 1-3 (`I4_ADM_CM_ACCUM_ROUND`): `x` already rounded to Q16.
#[inline(always)]
pub fn cube123(x: i32, thr: i32, cub_add: i64, cub_shift: u32) -> i64 {
    let x = x.wrapping_abs().wrapping_sub(thr).max(0);
    let x_sq = ((i64::from(x) * i64::from(x) + (1 << 29)) >> 30) as i32;
    (i64::from(x_sq) * i64::from(x) + cub_add) >> cub_shift
}

/// `i4_adm_cm`'s CSF weighting of a band value, rounded to Q16.
#[inline(always)]
pub fn weight123(v: i32, rfactor: u32) -> i32 {
    ((i64::from(v) * i64::from(rfactor) + (1 << 27)) >> 28) as i32
}

/// Scale 0's three cube parameters per band (h, v, d): the threshold shift,
/// the square's rounding and shift.
const SUB0: [u32; 3] = [10, 10, 12];
const SQ_SHIFT0: [u32; 3] = [29, 29, 30];

/// Scales 1-3's denominator square shifts, by scale.
const DEN_SQ_SHIFT: [u32; 3] = [31, 30, 31];

/// Row sums of scale 0 (`adm_cm` twice, `adm_csf_den_scale`).
pub struct Inputs<'a, T> {
    pub reference: &'a Bands<T>,
    pub decoupled: &'a Decoupled<T>,
    /// The CSF of the additive bands (masks the restored ones: num) and of
    /// the restored bands (masks the additive ones: aim).
    pub mask_a: &'a Masking,
    pub mask_r: &'a Masking,
}

/// Scratch rows kept between frames.
#[derive(Debug, Default)]
pub struct Scratch {
    col: Vec<i32>,
    thr_a: Vec<i32>,
    thr_r: Vec<i32>,
}

#[inline(always)]
pub fn rows0(input: &Inputs<i16>, p: &ScaleParams, region: Region, out: &mut Vec<RowSums>, s: &mut Scratch) {
    let (bw, bh) = p.geometry.band();
    let cub_add = p.cm_shift_cub.map(|c| i64::from(half(c)));
    let den_ref = [&input.reference.h, &input.reference.v, &input.reference.d];
    for i in region.top..region.bottom {
        thresholds(input.mask_a, bw, bh, i, region, &mut s.col, &mut s.thr_a);
        thresholds(input.mask_r, bw, bh, i, region, &mut s.col, &mut s.thr_r);
        let mut sums: RowSums = [0; 9];
        let row = i * bw + region.left..i * bw + region.right;
        for b in 0..3 {
            let rf = p.i_rfactor[b] as i32;
            let (sub, sq_shift, cub_shift, cub) = (SUB0[b], SQ_SHIFT0[b], p.cm_shift_cub[b], cub_add[b]);
            let sq_add = 1i64 << (sq_shift - 1);
            let (r, a) = (&input.decoupled.r[b][row.clone()], &input.decoupled.a[b][row.clone()]);
            let (mut num, mut aim) = (0i64, 0i64);
            for (((&r, &a), &ta), &tr) in r.iter().zip(a).zip(&s.thr_a).zip(&s.thr_r) {
                let xr = i32::from(r).wrapping_mul(rf);
                let xa = i32::from(a).wrapping_mul(rf);
                num = num.wrapping_add(cube0(xr, ta, sub, sq_add, sq_shift, cub, cub_shift));
                aim = aim.wrapping_add(cube0(xa, tr, sub, sq_add, sq_shift, cub, cub_shift));
            }
            let mut den = 0u64;
            for &v in &den_ref[b][row.clone()] {
                let m = u64::from(i32::from(v).unsigned_abs() as u16);
                den = den.wrapping_add(m * m * m);
            }
            sums[b] = num;
            sums[3 + b] = aim;
            sums[6 + b] = den as i64;
        }
        out.push(sums);
    }
}

#[inline(always)]
pub fn rows123(input: &Inputs<i32>, p: &ScaleParams, region: Region, out: &mut Vec<RowSums>, s: &mut Scratch) {
    let (bw, bh) = p.geometry.band();
    let cub_shift = p.cm_shift_cub[0];
    let cub_add = i64::from(half(cub_shift));
    let sq_shift = DEN_SQ_SHIFT[p.scale - 1];
    let (den_cub_add, den_shift) = (u64::from(half(p.den_shift_cub)), p.den_shift_cub);
    let den_ref = [&input.reference.h, &input.reference.v, &input.reference.d];
    for i in region.top..region.bottom {
        thresholds(input.mask_a, bw, bh, i, region, &mut s.col, &mut s.thr_a);
        thresholds(input.mask_r, bw, bh, i, region, &mut s.col, &mut s.thr_r);
        let mut sums: RowSums = [0; 9];
        let row = i * bw + region.left..i * bw + region.right;
        for b in 0..3 {
            let rf = p.i_rfactor[b];
            let (r, a) = (&input.decoupled.r[b][row.clone()], &input.decoupled.a[b][row.clone()]);
            let (mut num, mut aim) = (0i64, 0i64);
            for (((&r, &a), &ta), &tr) in r.iter().zip(a).zip(&s.thr_a).zip(&s.thr_r) {
                num = num.wrapping_add(cube123(weight123(r, rf), ta, cub_add, cub_shift));
                aim = aim.wrapping_add(cube123(weight123(a, rf), tr, cub_add, cub_shift));
            }
            let mut den = 0u64;
            for &v in &den_ref[b][row.clone()] {
                let m = u64::from(v.unsigned_abs());
                let sq = (m * m).wrapping_add(1 << sq_shift) >> sq_shift;
                den = den.wrapping_add(sq.wrapping_mul(m).wrapping_add(den_cub_add) >> den_shift);
            }
            sums[b] = num;
            sums[3 + b] = aim;
            sums[6 + b] = den as i64;
        }
        out.push(sums);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cubes_below_the_threshold_vanish() {
        assert_eq!(cube0(1000 << 10, 1000, 10, 1 << 28, 29, 32, 6), 0);
        assert_eq!(cube123(-5, 5, 2, 2), 0);
        // 2^20 above: (2^40 + 2^28) >> 29 = 2048; 2048 * 2^20 >> 6 = 2^25.
        assert_eq!(cube0(1 << 20, 0, 10, 1 << 28, 29, 32, 6), 1 << 25);
    }

    #[test]
    fn thresholds_mirror_as_libvmaf() {
        // A 3x3 band, f = its index, t = 0: the corner (0, 0) reads rows
        // 1,0,1 and columns 1,0,1; (2, 2) reads rows 1,2,2 and columns 1,2,2.
        let m = Masking { f: (0..9).collect(), t: vec![0; 9] };
        let region = Region { top: 0, bottom: 3, left: 0, right: 3 };
        let (mut col, mut out) = (Vec::new(), Vec::new());
        thresholds(&m, 3, 3, 0, region, &mut col, &mut out);
        let f = |r: usize, c: usize| (r * 3 + c) as i32;
        let want0: i32 = [1, 0, 1].iter().flat_map(|&r| [1, 0, 1].map(|c| f(r, c))).sum();
        assert_eq!(out[0], want0);
        thresholds(&m, 3, 3, 2, region, &mut col, &mut out);
        let want2: i32 = [1, 2, 2].iter().flat_map(|&r| [1, 2, 2].map(|c| f(r, c))).sum();
        assert_eq!(out[2], want2);
    }
}
