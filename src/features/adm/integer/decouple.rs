//! Decoupling and the CSF, per band pixel (integer_adm.c `adm_decouple`,
//! `adm_decouple_s123`, `adm_csf`, `i4_adm_csf`). For each pixel of the
//! decouple rectangle the distorted detail (th, tv, td) is split into the
//! part restored from the reference (r: the reference scaled by
//! clamp(t / o, 0, 1), or the distorted itself when the two gradients are
//! within a degree, limited by the enhancement gain) and the additive rest
//! (a = t - r). Both are then weighted by the CSF; the masking threshold of
//! the next step only needs, per pixel, the sum over the three bands of the
//! filtered magnitudes (`flt`, |csf| / 30) and of the centre terms
//! (|csf| / 15), so that is what this step keeps.

use super::super::geometry::Region;
use super::ScaleParams;
use super::dwt::Bands;

/// `cos(1°)²` as libvmaf rounds it: a double product stored in a float.
pub fn cos_1deg_sq() -> f32 {
    let c = (std::f64::consts::PI / 180.0).cos();
    (c * c) as f32
}

/// The angle test of both decouple functions, computed as libvmaf does:
/// the 64-bit integer dot products converted to float, then divided by
/// 4096 and compared in double. True when the reference and distorted
/// (h, v) gradients point within 1° of each other.
#[inline(always)]
pub fn angle_flag(ot_dp: i64, o_mag_sq: i64, t_mag_sq: i64, cos_1deg_sq: f32) -> bool {
    let dp = f64::from(ot_dp as f32) / 4096.0;
    let o = f64::from(o_mag_sq as f32) / 4096.0;
    let t = f64::from(t_mag_sq as f32) / 4096.0;
    dp >= 0.0 && dp * dp >= f64::from(cos_1deg_sq) * o * t
}

/// `div_lookup[32768 + i]` (integer_adm.h `div_lookup_generator`): 2^30 / i.
#[inline(always)]
pub fn reciprocal(i: u32) -> i64 {
    i64::from(1_073_741_824 / i as i32)
}

/// The enhancement-gain rule that ends every decouple: where the angles
/// agree and the restored value has the reference's sign (libvmaf tests
/// the sign of a float product `kh / 32768 * oh / 64`, which is the sign of
/// `oh` when `kh > 0`), the restored value is `rst * gain`, limited to `t`;
/// the double converts back by truncation.
#[inline(always)]
fn gain(rst: i32, k: i64, o: i32, t: i32, angle: bool, limit: f64) -> i32 {
    if angle && k > 0 && o != 0 {
        let scaled = f64::from(rst) * limit;
        let t = f64::from(t);
        // MIN(x, t) and MAX(x, t) of libvmaf: the first operand only when
        // strictly smaller (larger).
        let v = if o > 0 {
            if scaled < t { scaled } else { t }
        } else if scaled > t {
            scaled
        } else {
            t
        };
        v as i32
    } else {
        rst
    }
}

/// The decoupled bands (r: restored, a: additive) of one scale, each h, v, d.
#[derive(Debug, Default)]
pub struct Decoupled<T> {
    pub r: [Vec<T>; 3],
    pub a: [Vec<T>; 3],
}

impl<T: Copy + Default> Decoupled<T> {
    pub fn resize(&mut self, n: usize) {
        for b in self.r.iter_mut().chain(self.a.iter_mut()) {
            b.clear();
            b.resize(n, T::default());
        }
    }
}

/// What the masking threshold needs of one CSF-weighted triple of bands,
/// per pixel: `f` = Σ over h, v, d of flt, and `t` = Σ of the centre terms
/// minus `f`, so that the threshold is the 3x3 sum of `f` plus `t`.
#[derive(Debug, Default)]
pub struct Masking {
    pub f: Vec<i32>,
    pub t: Vec<i32>,
}

impl Masking {
    pub fn resize(&mut self, n: usize) {
        for b in [&mut self.f, &mut self.t] {
            b.clear();
            b.resize(n, 0);
        }
    }
}

/// `adm_csf`'s shifts per band (scale 0): 15 for h and v (Q21 factors),
/// 17 for d (Q23), with their rounding terms.
const CSF0_SHIFT: [u32; 3] = [15, 15, 17];
const CSF0_ADD: [i32; 3] = [16384, 16384, 65535];

/// Scale 0 flt and centre term of a CSF value (`adm_csf`'s
/// `FIX_ONE_BY_30` filter, `ADM_CM_THRESH_S_*`'s `ONE_BY_15` term), both
/// int16 in libvmaf.
#[inline(always)]
pub fn flt_centre0(csf: i16) -> (i32, i32) {
    let m = i32::from(csf).abs();
    (((4369 * m + 2048) >> 12) as i16 as i32, ((8738 * m + 2048) >> 12) as i16 as i32)
}

/// `adm_csf`'s weighting of one band value (scale 0).
#[inline(always)]
pub fn csf0(i_rfactor: u32, theta: usize, v: i16) -> i16 {
    let dst = (i_rfactor as i32).wrapping_mul(i32::from(v));
    (dst.wrapping_add(CSF0_ADD[theta]) >> CSF0_SHIFT[theta]) as i16
}

/// `i4_adm_csf`'s weighting of one band value (scales 1-3).
#[inline(always)]
pub fn csf123(i_rfactor: u32, v: i32) -> i32 {
    ((i64::from(i_rfactor) * i64::from(v) + (1 << 27)) >> 28) as i32
}

/// Scales 1-3 flt and centre term of a CSF value. libvmaf stores the
/// rounding term `1u << 31` in an int32, so it is -2^31: the sums subtract
/// it rather than add it.
#[inline(always)]
pub fn flt_centre123(csf: i32) -> (i32, i32) {
    let m = i64::from(csf.wrapping_abs());
    (((143_165_577 * m - (1 << 31)) >> 32) as i32, ((286_331_153 * m - (1 << 31)) >> 32) as i32)
}

/// `adm_decouple` (scale 0) over `region` of bands `bw` wide.
#[allow(clippy::too_many_arguments)]
pub fn decouple0(
    reference: &Bands<i16>,
    distorted: &Bands<i16>,
    bw: usize,
    region: Region,
    gain_limit: f64,
    out: &mut Decoupled<i16>,
) {
    let cos1 = cos_1deg_sq();
    let refs = [&reference.h, &reference.v, &reference.d];
    let diss = [&distorted.h, &distorted.v, &distorted.d];
    for i in region.top..region.bottom {
        for j in region.left..region.right {
            let k = i * bw + j;
            let o = refs.map(|b| i32::from(b[k]));
            let t = diss.map(|b| i32::from(b[k]));
            let ot_dp = i64::from(o[0]) * i64::from(t[0]) + i64::from(o[1]) * i64::from(t[1]);
            let o_mag = i64::from(o[0]) * i64::from(o[0]) + i64::from(o[1]) * i64::from(o[1]);
            let t_mag = i64::from(t[0]) * i64::from(t[0]) + i64::from(t[1]) * i64::from(t[1]);
            let angle = angle_flag(ot_dp, o_mag, t_mag, cos1);
            for b in 0..3 {
                let (o, t) = (o[b], t[b]);
                // The division t / o through the lookup table, Q15.
                let tmp = if o == 0 {
                    32768
                } else {
                    let r = reciprocal(o.unsigned_abs()) * i64::from(o.signum());
                    ((r * i64::from(t) + 16384) >> 15) as i32
                };
                let kk = tmp.clamp(0, 32768);
                let rst = ((kk * o + 16384) >> 15) as i16;
                let rst = gain(i32::from(rst), i64::from(kk), o, t, angle, gain_limit) as i16;
                out.r[b][k] = rst;
                out.a[b][k] = (t - i32::from(rst)) as i16;
            }
        }
    }
}

/// `get_best15_from32`: the top 15 significant bits of `x >= 2^15`,
/// rounded, and how far they were shifted.
#[inline(always)]
fn best15(x: u32) -> (u32, u32) {
    let k = 17 - x.leading_zeros();
    ((x + (1 << (k - 1))) >> k, k)
}

/// `adm_decouple_s123` (scales 1-3): the 32-bit values' divisor is first
/// reduced to 15 significant bits, the quotient shifted back.
#[allow(clippy::too_many_arguments)]
pub fn decouple123(
    reference: &Bands<i32>,
    distorted: &Bands<i32>,
    bw: usize,
    region: Region,
    gain_limit: f64,
    out: &mut Decoupled<i32>,
) {
    let cos1 = cos_1deg_sq();
    let refs = [&reference.h, &reference.v, &reference.d];
    let diss = [&distorted.h, &distorted.v, &distorted.d];
    for i in region.top..region.bottom {
        for j in region.left..region.right {
            let k = i * bw + j;
            let o = refs.map(|b| b[k]);
            let t = diss.map(|b| b[k]);
            let ot_dp = i64::from(o[0]) * i64::from(t[0]) + i64::from(o[1]) * i64::from(t[1]);
            let o_mag = i64::from(o[0]) * i64::from(o[0]) + i64::from(o[1]) * i64::from(o[1]);
            let t_mag = i64::from(t[0]) * i64::from(t[0]) + i64::from(t[1]) * i64::from(t[1]);
            let angle = angle_flag(ot_dp, o_mag, t_mag, cos1);
            for b in 0..3 {
                let (o, t) = (o[b], t[b]);
                let tmp = if o == 0 {
                    32768
                } else {
                    let abs = o.wrapping_abs() as u32;
                    let (msb, shift) = if abs < 32768 { (abs, 0) } else { best15(abs) };
                    let sign: i64 = if o < 0 { -1 } else { 1 };
                    ((reciprocal(msb) * i64::from(t)) * sign + (1i64 << (14 + shift))) >> (15 + shift)
                };
                let kk = tmp.clamp(0, 32768);
                let rst = ((kk * i64::from(o) + 16384) >> 15) as i32;
                let rst = gain(rst, kk, o, t, angle, gain_limit);
                out.r[b][k] = rst;
                out.a[b][k] = t.wrapping_sub(rst);
            }
        }
    }
}

/// `adm_csf` (scale 0) of one decoupled triple over `region`, reduced to
/// what the masking needs ([`Masking`]).
pub fn masking0(src: &[Vec<i16>; 3], p: &ScaleParams, bw: usize, region: Region, out: &mut Masking) {
    for i in region.top..region.bottom {
        for j in region.left..region.right {
            let k = i * bw + j;
            let (mut f, mut c) = (0i32, 0i32);
            for theta in 0..3 {
                let (fl, ce) = flt_centre0(csf0(p.i_rfactor[theta], theta, src[theta][k]));
                f = f.wrapping_add(fl);
                c = c.wrapping_add(ce);
            }
            out.f[k] = f;
            out.t[k] = c.wrapping_sub(f);
        }
    }
}

/// `i4_adm_csf` (scales 1-3), reduced as [`masking0`].
pub fn masking123(src: &[Vec<i32>; 3], p: &ScaleParams, bw: usize, region: Region, out: &mut Masking) {
    for i in region.top..region.bottom {
        for j in region.left..region.right {
            let k = i * bw + j;
            let (mut f, mut c) = (0i32, 0i32);
            for theta in 0..3 {
                let (fl, ce) = flt_centre123(csf123(p.i_rfactor[theta], src[theta][k]));
                f = f.wrapping_add(fl);
                c = c.wrapping_add(ce);
            }
            out.f[k] = f;
            out.t[k] = c.wrapping_sub(f);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn best15_keeps_15_bits_rounded() {
        assert_eq!(best15(32768), (16384, 1));
        assert_eq!(best15(65535), (32768, 1));
        assert_eq!(best15(1 << 30), (1 << 14, 16));
    }

    #[test]
    fn the_negative_rounding_term_of_scales_1_to_3() {
        // (143165577 * 30 - 2^31) >> 32 = 0, where adding 2^31 would give 1.
        assert_eq!(flt_centre123(30), (0, 1));
        assert_eq!(flt_centre123(-3000), (99, 199));
    }

    #[test]
    fn parallel_gradients_keep_the_distorted_value_up_to_the_gain() {
        let c = cos_1deg_sq();
        assert!(angle_flag(100, 100, 100, c));
        assert!(!angle_flag(-1, 100, 100, c));
        // o = 100, t = 150: k clamps to 1, r = 100, gain 100 -> min(10000, 150).
        assert_eq!(gain(100, 32768, 100, 150, true, 100.0), 150);
        assert_eq!(gain(100, 32768, 100, 150, false, 100.0), 100);
        // Negative reference: max(-100 * 1.2, -150) = -120.
        assert_eq!(gain(-100, 32768, -100, -150, true, 1.2), -120);
    }

    #[test]
    fn reciprocals_are_the_table() {
        assert_eq!(reciprocal(1), 1 << 30);
        assert_eq!(reciprocal(3), 357_913_941);
        assert_eq!(reciprocal(32768), 32768);
    }
}
