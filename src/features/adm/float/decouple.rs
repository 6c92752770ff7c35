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
        p.clear();
        p.resize(n, 0.0);
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

/// One pixel of `adm_decouple_s`: (r, a) for h, v, d.
#[inline(always)]
pub fn decouple_pixel(o: [f32; 3], t: [f32; 3], cos1: f32, gain_limit: f64) -> ([f32; 3], [f32; 3]) {
    const EPS: f32 = 1e-30;
    let ot_dp = o[0] * t[0] + o[1] * t[1];
    let o_mag_sq = o[0] * o[0] + o[1] * o[1];
    let t_mag_sq = t[0] * t[0] + t[1] * t[1];
    let angle = ot_dp >= 0.0 && ot_dp * ot_dp >= cos1 * o_mag_sq * t_mag_sq;
    let mut r = [0.0f32; 3];
    let mut a = [0.0f32; 3];
    for b in 0..3 {
        let k = divs(t[b], o[b] + EPS);
        let k = if k < 0.0 {
            0.0
        } else if k > 1.0 {
            1.0
        } else {
            k
        };
        let mut rst = k * o[b];
        // MIN/MAX of a double product and the (widened) distorted value,
        // back to float; the second test sees the first one's result.
        if angle && rst > 0.0 {
            let x = f64::from(rst) * gain_limit;
            let tt = f64::from(t[b]);
            rst = (if x < tt { x } else { tt }) as f32;
        }
        if angle && rst < 0.0 {
            let x = f64::from(rst) * gain_limit;
            let tt = f64::from(t[b]);
            rst = (if x > tt { x } else { tt }) as f32;
        }
        r[b] = rst;
        a[b] = t[b] - rst;
    }
    (r, a)
}

/// `adm_decouple_s` over `region` of bands `bw` wide.
pub fn decouple(reference: &Bands, distorted: &Bands, bw: usize, region: Region, gain_limit: f64, out: &mut Decoupled) {
    let cos1 = cos_1deg_sq();
    for i in region.top..region.bottom {
        for j in region.left..region.right {
            let k = i * bw + j;
            let o = [reference.h[k], reference.v[k], reference.d[k]];
            let t = [distorted.h[k], distorted.v[k], distorted.d[k]];
            let (r, a) = decouple_pixel(o, t, cos1, gain_limit);
            for b in 0..3 {
                out.r[b][k] = r[b];
                out.a[b][k] = a[b];
            }
        }
    }
}

/// `adm_csf_s` of one triple over `region`.
pub fn csf(src: &[Vec<f32>; 3], rfactor: [f32; 3], bw: usize, region: Region, out: &mut Csf) {
    for theta in 0..3 {
        for i in region.top..region.bottom {
            let row = i * bw + region.left..i * bw + region.right;
            for ((c, f), &s) in
                out.csf[theta][row.clone()].iter_mut().zip(&mut out.flt[theta][row.clone()]).zip(&src[theta][row])
            {
                let v = rfactor[theta] * s;
                *c = v;
                *f = (ONE_BY_30 * f64::from(v.abs())) as f32;
            }
        }
    }
}
