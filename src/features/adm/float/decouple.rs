//! Decoupling and the CSF in f32 (adm_tools.c `adm_decouple_s`,
//! `adm_csf_s`): the distorted detail split into what the reference
//! explains (r) and the additive rest (a), each weighted by the CSF, with
//! its filtered magnitudes (`flt`, |csf| / 30) for the masking threshold.

use super::super::geometry::Region;
use super::dwt::Bands;
use super::rcp::divs;

/// `cos(1°)²` rounded to float.
pub fn cos_1deg_sq() -> f32 {
    let c = (std::f64::consts::PI / 180.0).cos();
    (c * c) as f32
}

/// `FLOAT_ONE_BY_30` and `FLOAT_ONE_BY_15`: double literals in libvmaf,
/// so the products with them are taken in double.
pub const ONE_BY_30: f64 = 0.0333333351;
pub const ONE_BY_15: f64 = 0.0666666701;

/// The decoupled bands (r, a) of one scale, each h, v, d.
#[derive(Debug, Default)]
pub struct Decoupled {
    pub r: [Vec<f32>; 3],
    pub a: [Vec<f32>; 3],
}

/// A CSF-weighted triple (h, v, d) and its filtered magnitudes.
#[derive(Debug, Default)]
pub struct Csf {
    pub csf: [Vec<f32>; 3],
    pub flt: [Vec<f32>; 3],
}

fn resize(planes: &mut [Vec<f32>; 3], n: usize) {
    for p in planes {
        if p.len() < n {
            p.resize(n, 0.0);
        }
    }
}

impl Decoupled {
    pub fn resize(&mut self, n: usize) {
        resize(&mut self.r, n);
        resize(&mut self.a, n);
    }
}

impl Csf {
    pub fn resize(&mut self, n: usize) {
        resize(&mut self.csf, n);
        resize(&mut self.flt, n);
    }
}

/// `DIVS(t, o + 1e-30)` for a row: the numerators `t`, the
/// denominators' `o`, into `k`. x86-64 with AVX2 takes eight at a time
/// with `rcpps`, which is `rcpss` lane for lane (`rcpps_is_rcpss` checks
/// it); the Newton step and the product are the same f32 operations.
#[inline(always)]
fn divs_row(t: &[f32], o: &[f32], k: &mut [f32]) {
    const EPS: f32 = 1e-30;
    let n = t.len().min(o.len()).min(k.len());
    #[allow(unused_mut)]
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if cfg!(target_feature = "avx2") || std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        done = unsafe { divs_row_avx2(&t[..n], &o[..n], &mut k[..n]) };
    }
    for c in done..n {
        k[c] = divs(t[c], o[c] + EPS);
    }
}

/// Eight lanes of [`divs_row`]; returns how many it did (a multiple of 8).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn divs_row_avx2(t: &[f32], o: &[f32], k: &mut [f32]) -> usize {
    use std::arch::x86_64::*;
    let n = t.len() / 8 * 8;
    let (eps, one) = (_mm256_set1_ps(1e-30), _mm256_set1_ps(1.0));
    for c in (0..n).step_by(8) {
        // SAFETY: c + 8 <= n <= every slice's length.
        unsafe {
            let d = _mm256_add_ps(_mm256_loadu_ps(o.as_ptr().add(c)), eps);
            let xi = _mm256_rcp_ps(d);
            let r = _mm256_add_ps(xi, _mm256_mul_ps(xi, _mm256_sub_ps(one, _mm256_mul_ps(d, xi))));
            _mm256_storeu_ps(k.as_mut_ptr().add(c), _mm256_mul_ps(_mm256_loadu_ps(t.as_ptr().add(c)), r));
        }
    }
    n
}

/// One band of one row of `adm_decouple_s`, from the quotients `k`: the
/// restored value clamp(k, 0, 1) * o, with the enhancement gain where the
/// angles agree: MIN (positive) or MAX (negative) of `rst * limit` in
/// double and t, back to float; the second test sees the first one's
/// result, as in the C.
#[inline(always)]
fn decouple_row(o: &[f32], t: &[f32], k: &[f32], angle: &[bool], limit: f64, r: &mut [f32], a: &mut [f32]) {
    for (((((&o, &t), &k), &angle), r), a) in o.iter().zip(t).zip(k).zip(angle).zip(r.iter_mut()).zip(a.iter_mut()) {
        // MAX(0, MIN(k, 1)) as adm_decouple's; a NaN stays NaN either way.
        let k = k.clamp(0.0, 1.0);
        let mut rst = k * o;
        let tt = f64::from(t);
        if angle & (rst > 0.0) {
            let x = f64::from(rst) * limit;
            rst = (if x < tt { x } else { tt }) as f32;
        }
        if angle & (rst < 0.0) {
            let x = f64::from(rst) * limit;
            rst = (if x > tt { x } else { tt }) as f32;
        }
        *r = rst;
        *a = t - rst;
    }
}

/// Scratch rows of [`decouple`].
#[derive(Debug, Default)]
pub struct Scratch {
    angles: Vec<bool>,
    k: Vec<f32>,
}

/// `adm_decouple_s` over `region` of bands `bw` wide, a row at a time:
/// the angle test of every pixel (f32, libvmaf's order), then each band.
#[inline(always)]
pub fn decouple(
    reference: &Bands,
    distorted: &Bands,
    bw: usize,
    region: Region,
    gain_limit: f64,
    out: &mut Decoupled,
    s: &mut Scratch,
) {
    let cos1 = cos_1deg_sq();
    let cols = region.cols();
    if s.angles.len() < cols {
        s.angles.resize(cols, false);
    }
    super::dwt::size(&mut s.k, cols);
    for i in region.top..region.bottom {
        let row = i * bw + region.left..i * bw + region.right;
        let (oh, ov) = (&reference.h[row.clone()], &reference.v[row.clone()]);
        let (th, tv) = (&distorted.h[row.clone()], &distorted.v[row.clone()]);
        for ((((flag, &o0), &o1), &t0), &t1) in s.angles.iter_mut().zip(oh).zip(ov).zip(th).zip(tv) {
            let ot_dp = o0 * t0 + o1 * t1;
            let o_mag_sq = o0 * o0 + o1 * o1;
            let t_mag_sq = t0 * t0 + t1 * t1;
            *flag = (ot_dp >= 0.0) & (ot_dp * ot_dp >= cos1 * o_mag_sq * t_mag_sq);
        }
        for (b, (o, t)) in [(&reference.h, &distorted.h), (&reference.v, &distorted.v), (&reference.d, &distorted.d)]
            .into_iter()
            .enumerate()
        {
            let (o, t) = (&o[row.clone()], &t[row.clone()]);
            divs_row(t, o, &mut s.k[..cols]);
            let (r, a) = (&mut out.r[b][row.clone()], &mut out.a[b][row.clone()]);
            decouple_row(o, t, &s.k[..cols], &s.angles[..cols], gain_limit, r, a);
        }
    }
}

/// `adm_csf_s` of one triple over `region`: csf = rfactor * src, and
/// flt = 1/30 (a double) * |csf|, rounded to float.
#[inline(always)]
pub fn csf(src: &[Vec<f32>; 3], rfactor: [f32; 3], bw: usize, region: Region, out: &mut Csf) {
    for theta in 0..3 {
        let f = rfactor[theta];
        for i in region.top..region.bottom {
            let row = i * bw + region.left..i * bw + region.right;
            let (csf, flt) = (&mut out.csf[theta][row.clone()], &mut out.flt[theta][row.clone()]);
            for ((c, fl), &v) in csf.iter_mut().zip(flt.iter_mut()).zip(&src[theta][row]) {
                let x = f * v;
                *c = x;
                *fl = (ONE_BY_30 * f64::from(x.abs())) as f32;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_of_quotients_are_the_scalar_ones() {
        // Lengths around the 8 lanes, the values' signs and sizes mixed.
        for n in [1usize, 7, 8, 9, 31] {
            let t: Vec<f32> = (0..n).map(|k| (k as f32 - 4.0) * 1.37).collect();
            let o: Vec<f32> = (0..n).map(|k| if k % 5 == 0 { 0.0 } else { (k as f32 * 0.73).sin() * 100.0 }).collect();
            let mut k = vec![0.0; n];
            divs_row(&t, &o, &mut k);
            for c in 0..n {
                assert_eq!(k[c].to_bits(), divs(t[c], o[c] + 1e-30).to_bits(), "{n} {c}");
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn rcpps_is_rcpss() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            return;
        }
        use std::arch::x86_64::*;
        let mut s: u32 = 0x1234_5678;
        for _ in 0..(1 << 16) {
            let mut lanes = [0f32; 8];
            for l in &mut lanes {
                s ^= s << 13;
                s ^= s >> 17;
                s ^= s << 5;
                *l = f32::from_bits(s);
            }
            let mut out = [0f32; 8];
            // SAFETY: AVX2 is there (checked above).
            unsafe { _mm256_storeu_ps(out.as_mut_ptr(), _mm256_rcp_ps(_mm256_loadu_ps(lanes.as_ptr()))) };
            for (x, r) in lanes.iter().zip(out) {
                assert_eq!(r.to_bits(), super::super::rcp::rcpss(*x).to_bits(), "{x:e}");
            }
        }
    }
}
