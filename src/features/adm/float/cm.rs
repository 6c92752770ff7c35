//! Contrast masking and the denominator in f32, per band row (adm_tools.c
//! `adm_cm_s`, `adm_csf_den_scale_s`): each row's sums in libvmaf's order,
//! left to right, the [`RowSums`] the host adds up.

use super::super::geometry::{Region, cm_neighbour};
use super::RowSums;
use super::decouple::{Csf, Decoupled, ONE_BY_15};
use super::dwt::Bands;

/// The masking threshold at (i, j) (`ADM_CM_THRESH_S_*`): per band the
/// nine neighbours of `flt` in libvmaf's order, the centre replaced by
/// |csf| / 15 added in double; the three bands' sums added in float.
#[inline(always)]
pub fn threshold(m: &Csf, bw: usize, rows: [usize; 3], cols: [usize; 3]) -> f32 {
    let mut acc = 0.0f32;
    for theta in 0..3 {
        let flt = &m.flt[theta];
        let at = |r: usize, c: usize| flt[r * bw + c];
        let mut sum = 0.0f32;
        sum += at(rows[0], cols[0]);
        sum += at(rows[0], cols[1]);
        sum += at(rows[0], cols[2]);
        sum += at(rows[1], cols[0]);
        sum = (f64::from(sum) + ONE_BY_15 * f64::from(m.csf[theta][rows[1] * bw + cols[1]].abs())) as f32;
        sum += at(rows[1], cols[2]);
        sum += at(rows[2], cols[0]);
        sum += at(rows[2], cols[1]);
        sum += at(rows[2], cols[2]);
        acc += sum;
    }
    acc
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

/// Every row's sums of one scale, `bw` x `bh` bands, over `region`.
pub fn rows(input: &Inputs, bw: usize, bh: usize, region: Region, s: Sums, out: &mut Vec<RowSums>) {
    let reference = [&input.reference.h, &input.reference.v, &input.reference.d];
    out.clear();
    for i in region.top..region.bottom {
        let rows = [cm_neighbour(i as isize - 1, bh), i, cm_neighbour(i as isize + 1, bh)];
        let mut sums: RowSums = [0.0; 9];
        for j in region.left..region.right {
            let cols = [cm_neighbour(j as isize - 1, bw), j, cm_neighbour(j as isize + 1, bw)];
            let k = i * bw + j;
            let (thr_a, thr_r) = if s.bypass_cm {
                (0.0, 0.0)
            } else {
                (threshold(input.csf_a, bw, rows, cols), threshold(input.csf_r, bw, rows, cols))
            };
            for b in 0..3 {
                for (slot, src, thr) in [(b, &input.decoupled.r, thr_a), (3 + b, &input.decoupled.a, thr_r)] {
                    let x = (src[b][k] * s.rfactor[b]).abs() - thr;
                    let x = if x < 0.0 { 0.0 } else { x };
                    sums[slot] += power(x, s.cubes, s.p_norm);
                }
                let x = (s.rfactor[b] * reference[b][k]).abs();
                sums[6 + b] += power(x, s.cubes, s.p_norm);
            }
        }
        out.push(sums);
    }
}
