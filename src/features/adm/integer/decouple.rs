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
use super::dwt::{Bands, size};

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
            size(b, n);
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
        size(&mut self.f, n);
        size(&mut self.t, n);
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

/// How the enhancement gain multiplies: libvmaf takes `rst * limit` in
/// double; for a whole-number limit (the default 100, or 1) that product
/// and its comparison with `t` are exact, so integers give the same
/// result and vectorise better.
#[derive(Debug, Clone, Copy)]
pub enum Gain {
    Whole(i32),
    Double(f64),
}

impl Gain {
    pub fn new(limit: f64) -> Self {
        if limit.fract() == 0.0 && (1.0..=100.0).contains(&limit) {
            Gain::Whole(limit as i32)
        } else {
            Gain::Double(limit)
        }
    }
}

/// The gain rule's product and limit: MIN (o > 0) or MAX (o < 0) of
/// `rst * limit` and `t`, libvmaf's double arithmetic or its exact
/// whole-number equivalent.
#[inline(always)]
fn gain_whole(rst: i32, o: i32, t: i32, m: i32) -> i32 {
    let x = rst * m;
    if o > 0 { x.min(t) } else { x.max(t) }
}

#[inline(always)]
fn gain_double(rst: i32, o: i32, t: i32, limit: f64) -> i32 {
    let x = f64::from(rst) * limit;
    let tf = f64::from(t);
    (if o > 0 {
        if x < tf { x } else { tf }
    } else if x > tf {
        x
    } else {
        tf
    }) as i32
}

/// `((div_lookup[o + 32768] * t) + 16384) >> 15` of `adm_decouple`: t / o
/// in Q15, through the table of 2^30 / |o|. Computed in double, where it
/// vectorises and is exact: the double quotient 2^30 / |o| lies within
/// 2^-23 of the true one, which is at least 2^-15 from any other integer,
/// so its floor is the table's entry; the product (below 2^45), the
/// rounding term and the scaling by 2^-15 are exact, and so is the floor.
/// (`quotient_is_the_tables` checks every o.)
#[inline(always)]
fn quotient0(o: i32, t: i32) -> i32 {
    let recip = (1_073_741_824.0 / f64::from(o.abs().max(1))).floor();
    let l = if o < 0 { -recip } else { recip };
    ((l * f64::from(t) + 16384.0) * (1.0 / 32768.0)).floor() as i32
}

/// One band of one row of `adm_decouple` (scale 0): (r, a) from the
/// reference `o`, the distorted `t` and the pixels' angle tests; the gain
/// applies where the angles agree and `k > 0` (libvmaf tests the sign of a
/// float product `kh / 32768 * oh / 64`, which is the sign of `oh` then).
#[inline(always)]
fn decouple_row0(
    o: &[i16],
    t: &[i16],
    angle: &[bool],
    r: &mut [i16],
    a: &mut [i16],
    gain: impl Fn(i32, i32, i32) -> i32,
) {
    for ((((&o, &t), &angle), r), a) in o.iter().zip(t).zip(angle).zip(r.iter_mut()).zip(a.iter_mut()) {
        let (o, t) = (i32::from(o), i32::from(t));
        let k = if o == 0 { 32768 } else { quotient0(o, t).clamp(0, 32768) };
        let rst = i32::from(((k * o + 16384) >> 15) as i16);
        let g = gain(rst, o, t);
        let rst = (if angle & (k > 0) & (o != 0) { g } else { rst }) as i16;
        *r = rst;
        *a = (t - i32::from(rst)) as i16;
    }
}

/// `adm_decouple` (scale 0) over `region` of bands `bw` wide, a row at a
/// time: first the angle test of every pixel, then each band. The test's
/// int64 dot products are exact in double (each below 2^32), so they are
/// formed there and rounded to float from it: the same rounding as from
/// the integer.
#[inline(always)]
pub fn decouple0(
    reference: &Bands<i16>,
    distorted: &Bands<i16>,
    bw: usize,
    region: Region,
    gain_limit: f64,
    out: &mut Decoupled<i16>,
    angles: &mut Vec<bool>,
) {
    let cos1 = f64::from(cos_1deg_sq());
    let g = Gain::new(gain_limit);
    size(angles, region.cols());
    for i in region.top..region.bottom {
        let row = i * bw + region.left..i * bw + region.right;
        let (oh, ov) = (&reference.h[row.clone()], &reference.v[row.clone()]);
        let (th, tv) = (&distorted.h[row.clone()], &distorted.v[row.clone()]);
        for ((((flag, &o0), &o1), &t0), &t1) in angles.iter_mut().zip(oh).zip(ov).zip(th).zip(tv) {
            let (o0, o1, t0, t1) = (f64::from(o0), f64::from(o1), f64::from(t0), f64::from(t1));
            let dp = f64::from((o0 * t0 + o1 * t1) as f32) / 4096.0;
            let om = f64::from((o0 * o0 + o1 * o1) as f32) / 4096.0;
            let tm = f64::from((t0 * t0 + t1 * t1) as f32) / 4096.0;
            *flag = (dp >= 0.0) & (dp * dp >= cos1 * om * tm);
        }
        let angles = &angles[..region.cols()];
        for (b, (o, t)) in [(&reference.h, &distorted.h), (&reference.v, &distorted.v), (&reference.d, &distorted.d)]
            .into_iter()
            .enumerate()
        {
            let (r, a) = (&mut out.r[b][row.clone()], &mut out.a[b][row.clone()]);
            let (o, t) = (&o[row.clone()], &t[row.clone()]);
            match g {
                Gain::Whole(m) => decouple_row0(o, t, angles, r, a, |rst, o, t| gain_whole(rst, o, t, m)),
                Gain::Double(l) => decouple_row0(o, t, angles, r, a, |rst, o, t| gain_double(rst, o, t, l)),
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

/// One pixel of `adm_decouple_s123`: (r, a) of one band.
#[inline(always)]
fn decouple_band123(o: i32, t: i32, angle: bool, limit: f64) -> (i32, i32) {
    let tmp = if o == 0 {
        32768
    } else {
        let abs = o.wrapping_abs() as u32;
        let (msb, shift) = if abs < 32768 { (abs, 0) } else { best15(abs) };
        let sign: i64 = if o < 0 { -1 } else { 1 };
        ((reciprocal(msb) * i64::from(t)) * sign + (1i64 << (14 + shift))) >> (15 + shift)
    };
    let k = tmp.clamp(0, 32768);
    let rst = ((k * i64::from(o) + 16384) >> 15) as i32;
    let rst = gain(rst, k, o, t, angle, limit);
    (rst, t.wrapping_sub(rst))
}

/// `adm_decouple_s123` (scales 1-3), a row at a time: the 32-bit values'
/// divisor is first reduced to 15 significant bits, the quotient shifted
/// back.
#[inline(always)]
pub fn decouple123(
    reference: &Bands<i32>,
    distorted: &Bands<i32>,
    bw: usize,
    region: Region,
    gain_limit: f64,
    out: &mut Decoupled<i32>,
) {
    let cos1 = cos_1deg_sq();
    let [r_h, r_v, r_d] = &mut out.r;
    let [a_h, a_v, a_d] = &mut out.a;
    for i in region.top..region.bottom {
        let row = i * bw + region.left..i * bw + region.right;
        let (oh, ov, od) = (&reference.h[row.clone()], &reference.v[row.clone()], &reference.d[row.clone()]);
        let (th, tv, td) = (&distorted.h[row.clone()], &distorted.v[row.clone()], &distorted.d[row.clone()]);
        let (rh, rv, rd) = (&mut r_h[row.clone()], &mut r_v[row.clone()], &mut r_d[row.clone()]);
        let (ah, av, ad) = (&mut a_h[row.clone()], &mut a_v[row.clone()], &mut a_d[row]);
        for c in 0..oh.len() {
            let (o0, o1, o2, t0, t1, t2) = (oh[c], ov[c], od[c], th[c], tv[c], td[c]);
            let m = |a: i32, b: i32| i64::from(a) * i64::from(b);
            let angle = angle_flag(m(o0, t0) + m(o1, t1), m(o0, o0) + m(o1, o1), m(t0, t0) + m(t1, t1), cos1);
            (rh[c], ah[c]) = decouple_band123(o0, t0, angle, gain_limit);
            (rv[c], av[c]) = decouple_band123(o1, t1, angle, gain_limit);
            (rd[c], ad[c]) = decouple_band123(o2, t2, angle, gain_limit);
        }
    }
}

/// `adm_csf` (scale 0) of one decoupled triple over `region`, reduced to
/// what the masking needs ([`Masking`]).
#[inline(always)]
pub fn masking0(src: &[Vec<i16>; 3], p: &ScaleParams, bw: usize, region: Region, out: &mut Masking) {
    let rf = p.i_rfactor;
    for i in region.top..region.bottom {
        let row = i * bw + region.left..i * bw + region.right;
        let (h, v, d) = (&src[0][row.clone()], &src[1][row.clone()], &src[2][row.clone()]);
        let (f, t) = (&mut out.f[row.clone()], &mut out.t[row]);
        for c in 0..h.len() {
            let (f0, c0) = flt_centre0(csf0(rf[0], 0, h[c]));
            let (f1, c1) = flt_centre0(csf0(rf[1], 1, v[c]));
            let (f2, c2) = flt_centre0(csf0(rf[2], 2, d[c]));
            let fs = f0 + f1 + f2;
            f[c] = fs;
            t[c] = c0 + c1 + c2 - fs;
        }
    }
}

/// `i4_adm_csf` (scales 1-3), reduced as [`masking0`].
#[inline(always)]
pub fn masking123(src: &[Vec<i32>; 3], p: &ScaleParams, bw: usize, region: Region, out: &mut Masking) {
    let rf = p.i_rfactor;
    for i in region.top..region.bottom {
        let row = i * bw + region.left..i * bw + region.right;
        let (h, v, d) = (&src[0][row.clone()], &src[1][row.clone()], &src[2][row.clone()]);
        let (f, t) = (&mut out.f[row.clone()], &mut out.t[row]);
        for c in 0..h.len() {
            let (f0, c0) = flt_centre123(csf123(rf[0], h[c]));
            let (f1, c1) = flt_centre123(csf123(rf[1], v[c]));
            let (f2, c2) = flt_centre123(csf123(rf[2], d[c]));
            let fs = f0.wrapping_add(f1).wrapping_add(f2);
            f[c] = fs;
            t[c] = c0.wrapping_add(c1).wrapping_add(c2).wrapping_sub(fs);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `div_lookup` (integer_adm.h `div_lookup_generator`): entry `32768 + i`
    /// is 2^30 / i, entry `32768 - i` its negation, for 1 <= i <= 32768.
    static DIV_LOOKUP: [i32; 65537] = {
        let mut t = [0i32; 65537];
        let mut i = 1;
        while i <= 32768 {
            let r = 1_073_741_824 / i as i32;
            t[32768 + i] = r;
            t[32768 - i] = -r;
            i += 1;
        }
        t
    };

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
    fn quotient_is_the_tables() {
        for o in -32768..=32767i32 {
            if o == 0 {
                continue;
            }
            for t in [-32768, -32767, -12345, -1, 0, 1, 777, 32767] {
                let want = ((i64::from(DIV_LOOKUP[(o + 32768) as usize]) * i64::from(t) + 16384) >> 15) as i32;
                assert_eq!(quotient0(o, t), want, "{t} / {o}");
            }
        }
    }

    #[test]
    fn reciprocals_are_the_table() {
        assert_eq!(reciprocal(1), 1 << 30);
        assert_eq!(reciprocal(3), 357_913_941);
        assert_eq!(reciprocal(32768), 32768);
    }
}
