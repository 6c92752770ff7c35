//! Contrast masking and the denominator in f32, per band row (adm_tools.c
//! `adm_cm_s`, `adm_csf_den_scale_s`): each row's sums in libvmaf's order,
//! left to right, the [`RowSums`] the host adds up. The per-pixel terms are
//! computed along the row first (each pixel's operations in libvmaf's
//! order, so they vectorise with the same bits), then added in order.

use super::super::geometry::{Region, cm_neighbour};
use super::RowSums;
use super::decouple::{Csf, Decoupled, ONE_BY_15};
use super::dwt::{Bands, size};

/// One band's part of the masking threshold (`ADM_CM_THRESH_S_*`): the
/// nine neighbours of `flt` in libvmaf's order, the centre replaced by
/// |csf| / 15 added in double.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn band_sum(a: [f32; 3], b0: f32, centre: f32, b2: f32, c: [f32; 3]) -> f32 {
    let mut sum = 0.0f32;
    sum += a[0];
    sum += a[1];
    sum += a[2];
    sum += b0;
    sum = (f64::from(sum) + ONE_BY_15 * f64::from(centre.abs())) as f32;
    sum += b2;
    sum += c[0];
    sum += c[1];
    sum += c[2];
    sum
}

/// The masking threshold of each pixel of row `i`, columns `region.left ..
/// region.right`, into `out`: per band [`band_sum`], the bands' sums added
/// to 0 in order (h, v, d). Neighbours mirror as libvmaf's macros do.
#[inline(always)]
fn thresholds(m: &Csf, bw: usize, rows: [usize; 3], region: Region, out: &mut [f32]) {
    let n = region.cols();
    out[..n].fill(0.0);
    for theta in 0..3 {
        let f = &m.flt[theta];
        let (a, b, c) = (&f[rows[0] * bw..][..bw], &f[rows[1] * bw..][..bw], &f[rows[2] * bw..][..bw]);
        let centre = &m.csf[theta][rows[1] * bw..][..bw];
        let at = |j: usize| {
            let (l, r) = (cm_neighbour(j as isize - 1, bw), cm_neighbour(j as isize + 1, bw));
            band_sum([a[l], a[j], a[r]], b[l], centre[j], b[r], [c[l], c[j], c[r]])
        };
        // The interior reads j - 1 and j + 1 unmirrored.
        let (j0, j1) = (region.left.max(1), region.right.min(bw - 1));
        for j in region.left..j0.min(region.right) {
            out[j - region.left] += at(j);
        }
        if j1 > j0 {
            let k = j1 - j0;
            let o = &mut out[j0 - region.left..][..k];
            let (al, ac, ar) = (&a[j0 - 1..][..k], &a[j0..][..k], &a[j0 + 1..][..k]);
            let (bl, br, cc) = (&b[j0 - 1..][..k], &b[j0 + 1..][..k], &centre[j0..][..k]);
            let (cl, cm, cr) = (&c[j0 - 1..][..k], &c[j0..][..k], &c[j0 + 1..][..k]);
            for x in 0..k {
                o[x] += band_sum([al[x], ac[x], ar[x]], bl[x], cc[x], br[x], [cl[x], cm[x], cr[x]]);
            }
        }
        for j in j1.max(j0)..region.right {
            out[j - region.left] += at(j);
        }
    }
}

/// `x^p` as the sums take it: a product of three for p = 3, else powf
/// (glibc's, written out in [`super::powf`] so the kernels share it).
#[inline(always)]
pub fn power(x: f32, cubes: bool, p: f32) -> f32 {
    if cubes { x * x * x } else { super::powf::powf(x, p) }
}

/// What one scale's row sums read.
pub struct Inputs<'a> {
    pub reference: &'a Bands,
    pub decoupled: &'a Decoupled,
    /// The CSF of the additive bands (masks the restored ones: num) and of
    /// the restored bands (masks the additive ones: aim).
    pub csf_a: &'a Csf,
    pub csf_r: &'a Csf,
}

/// How the sums are taken.
#[derive(Debug, Clone, Copy)]
pub struct Sums {
    pub rfactor: [f32; 3],
    pub bypass_cm: bool,
    pub cubes: bool,
    pub p_norm: f32,
}

/// Scratch rows kept between frames: the thresholds and the nine terms.
#[derive(Debug, Default)]
pub struct Scratch {
    thr_a: Vec<f32>,
    thr_r: Vec<f32>,
    terms: [Vec<f32>; 9],
}

/// Appends the sums of each row of `region` (bands `bw` x `bh`) to `out`.
#[inline(always)]
pub fn rows(input: &Inputs, bw: usize, bh: usize, region: Region, s: Sums, out: &mut Vec<RowSums>, sc: &mut Scratch) {
    let n = region.cols();
    for v in [&mut sc.thr_a, &mut sc.thr_r].into_iter().chain(sc.terms.iter_mut()) {
        size(v, n);
    }
    let reference = [&input.reference.h, &input.reference.v, &input.reference.d];
    let p = s.p_norm;
    for i in region.top..region.bottom {
        let rows = [cm_neighbour(i as isize - 1, bh), i, cm_neighbour(i as isize + 1, bh)];
        if s.bypass_cm {
            sc.thr_a[..n].fill(0.0);
            sc.thr_r[..n].fill(0.0);
        } else {
            thresholds(input.csf_a, bw, rows, region, &mut sc.thr_a);
            thresholds(input.csf_r, bw, rows, region, &mut sc.thr_r);
        }
        let row = i * bw + region.left..i * bw + region.right;
        let [t0, t1, t2, t3, t4, t5, t6, t7, t8] = &mut sc.terms;
        for (b, (num, aim, den)) in [(t0, t3, t6), (t1, t4, t7), (t2, t5, t8)].into_iter().enumerate() {
            let f = s.rfactor[b];
            let (r, a, o) =
                (&input.decoupled.r[b][row.clone()], &input.decoupled.a[b][row.clone()], &reference[b][row.clone()]);
            for ((((num, aim), den), (&r, &a)), (&o, (&ta, &tr))) in num
                .iter_mut()
                .zip(aim.iter_mut())
                .zip(den.iter_mut())
                .zip(r.iter().zip(a))
                .zip(o.iter().zip(sc.thr_a.iter().zip(&sc.thr_r)))
            {
                let x = (r * f).abs() - ta;
                *num = power(if x < 0.0 { 0.0 } else { x }, s.cubes, p);
                let x = (a * f).abs() - tr;
                *aim = power(if x < 0.0 { 0.0 } else { x }, s.cubes, p);
                *den = power((f * o).abs(), s.cubes, p);
            }
        }
        // The row's sums, each in pixel order (nine independent chains).
        let mut sums: RowSums = [0.0; 9];
        let t = &sc.terms;
        for c in 0..n {
            for (sum, terms) in sums.iter_mut().zip(t) {
                *sum += terms[c];
            }
        }
        out.push(sums);
    }
}
