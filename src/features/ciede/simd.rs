//! [`super::cpu`]'s `lab_color` and `ciede2000`, with [`super::math`]'s
//! functions, on four pixels at once ([`super::lanes`]): statement for
//! statement the scalar code, each lane the same IEEE operations in the
//! same order, so each lane's result has the scalar result's bits (the
//! tests below and `cpu::tests::caches_change_no_result` hold them to it).
//!
//! Where the scalar code branches, both sides are computed and a mask
//! picks one per lane (the side not taken may compute garbage, such as the
//! log of a negative number, which is discarded; table indices are
//! clamped into the tables so that garbage never reads out of bounds).
//! A few cheap float-only steps call the scalar function lane by lane.

use super::cpu::{Lab, YuvScale, delta_h_prime, upcase_h_bar_prime};
use super::lanes::{D, F, L, M};
use super::math;
use super::tables::*;
use std::array::from_fn;

#[inline(always)]
fn two_sum(a: D, b: D) -> (D, D) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

#[inline(always)]
fn fast_two_sum(a: D, b: D) -> (D, D) {
    let s = a + b;
    (s, b - (s - a))
}

#[inline(always)]
fn split(a: D) -> (D, D) {
    let c = 134_217_729.0 * a;
    let hi = c - (c - a);
    (hi, a - hi)
}

#[inline(always)]
fn two_prod(a: D, b: D) -> (D, D) {
    let p = a * b;
    let (ah, al) = split(a);
    let (bh, bl) = split(b);
    (p, ((ah * bh - p) + ah * bl + al * bh) + al * bl)
}

/// 2^k (math.rs `pow2i`), wrapping where a discarded lane's k is absurd.
#[inline(always)]
fn pow2i(k: [i64; L]) -> D {
    D(k.map(|k| f64::from_bits((k.wrapping_add(1023) as u64) << 52)))
}

/// math.rs `log_dd`.
#[inline(always)]
fn log_dd(x: D, table: &[f64]) -> (D, D) {
    let ix = x.bits();
    let mut kd = [0.0; L];
    let (mut z, mut zh) = ([0.0; L], [0.0; L]);
    let (mut invc, mut nlog_hi, mut nlog_lo) = ([0.0; L], [0.0; L], [0.0; L]);
    for l in 0..L {
        let tmp = ix[l].wrapping_sub(LOG_OFF);
        let i = ((tmp >> (52 - LOG_BITS)) & ((1 << LOG_BITS) - 1)) as usize;
        kd[l] = ((tmp as i64) >> 52) as f64;
        let iz = ix[l].wrapping_sub(tmp & (0xFFF << 52));
        z[l] = f64::from_bits(iz);
        zh[l] = f64::from_bits(iz & !((1u64 << 21) - 1));
        let row = LOG_AT + 3 * i;
        (invc[l], nlog_hi[l], nlog_lo[l]) = (table[row], table[row + 1], table[row + 2]);
    }
    let (z, zh, invc, kd) = (D(z), D(zh), D(invc), D(kd));
    let (nlog_hi, nlog_lo) = (D(nlog_hi), D(nlog_lo));
    let zl = z - zh;
    let rh = zh * invc - 1.0;
    let rl = zl * invc;
    let r = rh + rl;
    let (p, pe) = two_prod(rh, rh);
    let (s1, e1) = two_sum(kd * LN2_HI, nlog_hi);
    let (s2, e2) = two_sum(s1, rh);
    let (s3, e3) = two_sum(s2, -0.5 * p);
    let poly = r * r * r * (LOG1P_3 + r * (LOG1P_4 + r * (LOG1P_5 + r * (LOG1P_6 + r * (LOG1P_7 + r * LOG1P_8)))));
    let lo = kd * LN2_LO + nlog_lo + rl - 0.5 * pe - rh * rl - 0.5 * rl * rl + poly + e1 + e2 + e3;
    fast_two_sum(s3, lo)
}

/// math.rs `exp_dd`.
#[inline(always)]
fn exp_dd(hi: D, lo: D, table: &[f64]) -> D {
    let kd = (hi * INV_L2N + 0.5).floor();
    let r = (hi - kd * L2N_HI) + (lo - kd * L2N_LO);
    let p = r + r * r * (EXP_2 + r * (EXP_3 + r * (EXP_4 + r * (EXP_5 + r * EXP_6))));
    let k: [i64; L] = kd.0.map(|v| v as i64);
    let (mut t_hi, mut t_lo) = ([0.0; L], [0.0; L]);
    for l in 0..L {
        let j = (k[l] & ((1 << EXP_BITS) - 1)) as usize;
        (t_hi[l], t_lo[l]) = (table[EXP2_AT + 2 * j], table[EXP2_AT + 2 * j + 1]);
    }
    let (t_hi, t_lo) = (D(t_hi), D(t_lo));
    let m = t_hi + (t_lo + t_hi * p + t_lo * p);
    m * pow2i(k.map(|k| k >> EXP_BITS))
}

/// math.rs `pow`.
#[inline(always)]
fn pow(x: D, y: f64, table: &[f64]) -> D {
    let (lh, ll) = log_dd(x, table);
    let (ph, pe) = two_prod(D::splat(y), lh);
    let (eh, el) = fast_two_sum(ph, pe + y * ll);
    exp_dd(eh, el, table)
}

/// math.rs `pow7_dd`.
#[inline(always)]
fn pow7_dd(c: F) -> (D, D) {
    let c = c.to_f64();
    let c2 = c * c;
    let (c4, c4e) = two_prod(c2, c2);
    let (h6, e6) = two_prod(c4, c2);
    let (c6, c6e) = fast_two_sum(h6, e6 + c4e * c2);
    let (h7, e7) = two_prod(c6, c);
    fast_two_sum(h7, e7 + c6e * c)
}

/// math.rs `powf7`.
#[inline(always)]
fn powf7(c: F) -> F {
    let (h, e) = pow7_dd(c);
    F(from_fn(|l| math::dd_to_f32(h.0[l], e.0[l])))
}

/// math.rs `sqrt` (with its `rsqrt`).
#[inline(always)]
fn sqrt(x: D) -> D {
    let mut y = D::from_bits(x.bits().map(|b| 0x5FE6_EB50_C7B5_37A9u64.wrapping_sub(b >> 1)));
    let hx = 0.5 * x;
    for _ in 0..4 {
        y = y * (1.5 - hx * y * y);
    }
    let s = x * y;
    let (p, pe) = two_prod(s, s);
    let residual = (x - p) - pe;
    D::select(x.eq(0.0), x, s + residual * (0.5 * y))
}

/// math.rs `div` (with its `recip`).
#[inline(always)]
fn div(a: D, b: D) -> D {
    let mut y = D::from_bits(b.bits().map(|b| 0x7FDE_6238_22FC_16E6u64.wrapping_sub(b)));
    for _ in 0..4 {
        y = y * (2.0 - b * y);
    }
    let q = a * y;
    let (p, pe) = two_prod(q, b);
    let residual = (a - p) - pe;
    q + residual * y
}

#[inline(always)]
fn sin_kernel(rh: D, rl: D) -> D {
    let z = rh * rh;
    let poly = z
        * (SIN_3
            + z * (SIN_5
                + z * (SIN_7 + z * (SIN_9 + z * (SIN_11 + z * (SIN_13 + z * (SIN_15 + z * (SIN_17 + z * SIN_19))))))));
    rh + (rh * poly + rl * (1.0 - 0.5 * z))
}

#[inline(always)]
fn cos_kernel(rh: D, rl: D) -> D {
    let (z, ze) = two_prod(rh, rh);
    let (w, we) = two_sum(D::splat(1.0), -0.5 * z);
    let poly = z
        * z
        * (COS_4 + z * (COS_6 + z * (COS_8 + z * (COS_10 + z * (COS_12 + z * (COS_14 + z * (COS_16 + z * COS_18)))))));
    w + ((we - 0.5 * ze) + (poly - rh * rl))
}

/// math.rs `reduce`.
#[inline(always)]
fn reduce(x: D) -> ([i64; L], D, D) {
    let kd = (x * TWO_OVER_PI + 0.5).floor();
    let w = x - kd * PIO2_1;
    let (rh, e) = two_sum(w, -(kd * PIO2_2));
    let (rh, rl) = fast_two_sum(rh, e - kd * PIO2_3);
    (kd.0.map(|v| v as i64), rh, rl)
}

/// math.rs `sin` and `cos`: both kernels, the quadrant picks.
#[inline(always)]
fn sin_cos(x: D, cosine: bool) -> D {
    let (k, rh, rl) = reduce(x);
    let (s, c) = (sin_kernel(rh, rl), cos_kernel(rh, rl));
    let odd = M(k.map(|k| k & 1 != 0));
    let (v, negate) = if cosine {
        (D::select(odd, s, c), M(k.map(|k| k.wrapping_add(1) & 2 != 0)))
    } else {
        (D::select(odd, c, s), M(k.map(|k| k & 2 != 0)))
    };
    D::select(negate, -v, v)
}

#[inline(always)]
fn sin(x: D) -> D {
    sin_cos(x, false)
}

#[inline(always)]
fn cos(x: D) -> D {
    sin_cos(x, true)
}

#[inline(always)]
fn dd_sub(ah: f64, al: f64, bh: D, bl: D) -> (D, D) {
    let (s, e) = two_sum(D::splat(ah), -bh);
    fast_two_sum(s, e + (al - bl))
}

/// math.rs `atan2`.
#[inline(always)]
fn atan2(y: F, x: F, table: &[f64]) -> D {
    let (ay, ax) = (y.abs().to_f64(), x.abs().to_f64());
    let swap = ay.gt(ax);
    let (num, den) = (D::select(swap, ax, ay), D::select(swap, ay, ax));
    let t = div(num, den);
    let jd = (t * 16.0 + 0.5).floor();
    let c = jd * 0.0625;
    let u = div(t - c, 1.0 + t * c);
    let u2 = u * u;
    let au = u + u * u2 * (ATAN_3 + u2 * (ATAN_5 + u2 * (ATAN_7 + u2 * (ATAN_9 + u2 * (ATAN_11 + u2 * ATAN_13)))));
    let (mut th, mut tl) = ([0.0; L], [0.0; L]);
    for l in 0..L {
        // j <= 16 for every lane whose result is kept.
        let j = (jd.0[l] as usize).min(ATAN_N as usize);
        (th[l], tl[l]) = (table[ATAN_AT + 2 * j], table[ATAN_AT + 2 * j + 1]);
    }
    let (h, l) = fast_two_sum(D(th), D(tl) + au);
    let (sh, sl) = dd_sub(PIO2_HI, PIO2_LO, h, l);
    let (h, l) = (D::select(swap, sh, h), D::select(swap, sl, l));
    let (ph, pl) = dd_sub(PI_HI, PI_LO, h, l);
    let neg_x = x.lt(0.0);
    let (h, l) = (D::select(neg_x, ph, h), D::select(neg_x, pl, l));
    let a = h + l;
    D::select(M(y.0.map(f32::is_sign_negative)), -a, a)
}

/// Four [`Lab`] colours.
#[derive(Debug, Clone, Copy)]
pub struct Labs {
    pub l: F,
    pub a: F,
    pub b: F,
}

impl Labs {
    pub fn lane(&self, i: usize) -> Lab {
        Lab { l: self.l.0[i], a: self.a.0[i], b: self.b.0[i] }
    }

    pub fn from_lanes(c: [Lab; L]) -> Labs {
        Labs { l: F(c.map(|c| c.l)), a: F(c.map(|c| c.a)), b: F(c.map(|c| c.b)) }
    }
}

/// cpu.rs `rgb_to_xyz_map`.
#[inline(always)]
fn rgb_to_xyz_map(c: D, table: &[f64]) -> D {
    D::select(c.gt(RGB_THRESHOLD), pow((c + RGB_A) * RGB_D, GAMMA, table), c * RGB_LINEAR)
}

/// cpu.rs `xyz_to_lab_map`.
#[inline(always)]
fn xyz_to_lab_map(c: D, table: &[f64]) -> F {
    F::select(c.gt(LAB_EPSILON), pow(c, ONE_THIRD, table).to_f32(), ((KAPPA * c + 16.0) * INV_116).to_f32())
}

/// cpu.rs `lab_color` of four (y, u, v) sample triples.
#[inline(always)]
pub fn lab_color(t: [[u32; 3]; L], s: &YuvScale, table: &[f64]) -> Labs {
    let y = (D(t.map(|t| f64::from(t[0]))) - s.y_off) * s.y_mul;
    let u = (D(t.map(|t| f64::from(t[1]))) - s.c_off) * s.c_mul;
    let v = (D(t.map(|t| f64::from(t[2]))) - s.c_off) * s.c_mul;
    let r = rgb_to_xyz_map(y + YUV_RV * v, table);
    let g = rgb_to_xyz_map(y - YUV_GU * u - YUV_GV * v, table);
    let b = rgb_to_xyz_map(y + YUV_BU * u, table);
    let x = r * XYZ_XR + g * XYZ_XG + b * XYZ_XB;
    let yy = r * XYZ_YR + g * XYZ_YG + b * XYZ_YB;
    let z = r * XYZ_ZR + g * XYZ_ZG + b * XYZ_ZB;
    let x = xyz_to_lab_map(x * INV_XN, table).to_f64();
    let yy = xyz_to_lab_map(yy, table).to_f64();
    let z = xyz_to_lab_map(z * INV_ZN, table).to_f64();
    Labs { l: (116.0 * yy - 16.0).to_f32(), a: (500.0 * (x - yy)).to_f32(), b: (200.0 * (yy - z)).to_f32() }
}

/// cpu.rs `h_prime`.
#[inline(always)]
fn h_prime(x: F, y: F, table: &[f64]) -> F {
    let zero = x.eq(0.0).and(y.eq(0.0));
    let hue = atan2(x, y, table).to_f32();
    let hue = F::select(hue.lt(0.0), (hue.to_f64() + TWO_PI).to_f32(), hue);
    F::select(zero, F::splat(0.0), hue)
}

/// cpu.rs `upcase_t`.
#[inline(always)]
fn upcase_t(h: F) -> F {
    let h = h.to_f64();
    (1.0 - T_1 * cos(h - PI_6) + T_2 * cos(2.0 * h) + T_3 * cos(3.0 * h + PI_30) - T_4 * cos(4.0 * h - PI7_20)).to_f32()
}

/// cpu.rs `r_sub_t`.
#[inline(always)]
fn r_sub_t(c_bar_prime: F, h: F, table: &[f64]) -> F {
    let to_degrees = (h.to_f64() * RAD_TO_DEG).to_f32();
    let degrees = ((to_degrees.to_f64() - 275.0) * INV_25).to_f32();
    let c7 = powf7(c_bar_prime);
    let ratio = c7 / (c7 + POWF_25_7);
    let e = 60.0 * exp_dd((-(degrees * degrees)).to_f64(), D::splat(0.0), table);
    let radians = (e.to_f32().to_f64() * DEG_TO_RAD).to_f32();
    (-2.0 * sqrt(ratio.to_f64()) * sin(radians.to_f64())).to_f32()
}

#[inline(always)]
fn sq(v: F) -> D {
    let v = v.to_f64();
    v * v
}

/// cpu.rs `ciede2000` of four pairs of colours.
#[inline(always)]
pub fn ciede2000(c1: Labs, c2: Labs, table: &[f64]) -> F {
    const KSUB_C: f32 = 1.0;
    const KSUB_H: f32 = 4.0;
    let delta_l_prime = c2.l - c1.l;
    let l_bar = (c1.l + c2.l) / 2.0;
    let chroma1 = sqrt(sq(c1.a) + sq(c1.b)).to_f32();
    let chroma2 = sqrt(sq(c2.a) + sq(c2.b)).to_f32();
    let c_bar = (chroma1 + chroma2) / 2.0;
    let c7 = pow7_dd(c_bar).0;
    let g = 1.0 - sqrt(div(c7, c7 + POW_25_7));
    let a_prime_1 = (c1.a.to_f64() + (c1.a / 2.0).to_f64() * g).to_f32();
    let a_prime_2 = (c2.a.to_f64() + (c2.a / 2.0).to_f64() * g).to_f32();
    let c_prime_1 = sqrt(sq(a_prime_1) + sq(c1.b)).to_f32();
    let c_prime_2 = sqrt(sq(a_prime_2) + sq(c2.b)).to_f32();
    let c_bar_prime = (c_prime_1 + c_prime_2) / 2.0;
    let delta_c_prime = c_prime_2 - c_prime_1;
    let l50 = sq(l_bar - 50.0);
    let s_sub_l = (1.0 + div(K_SL * l50, sqrt(20.0 + l50))).to_f32();
    let s_sub_c = (1.0 + K_SC * c_bar_prime.to_f64()).to_f32();
    let h_prime_1 = h_prime(c1.b, a_prime_1, table);
    let h_prime_2 = h_prime(c2.b, a_prime_2, table);
    let delta_h = F(from_fn(|l| delta_h_prime(chroma1.0[l], chroma2.0[l], h_prime_1.0[l], h_prime_2.0[l])));
    let delta_upcase_h = (2.0 * sqrt((c_prime_1 * c_prime_2).to_f64()) * sin(delta_h.to_f64() / 2.0)).to_f32();
    let h_bar = F(from_fn(|l| upcase_h_bar_prime(h_prime_1.0[l], h_prime_2.0[l])));
    let upcase_t = upcase_t(h_bar);
    let s_sub_upcase_h = (1.0 + K_SL * c_bar_prime.to_f64() * upcase_t.to_f64()).to_f32();
    let r_t = r_sub_t(c_bar_prime, h_bar, table);
    let lightness = delta_l_prime / (KSUB_L * s_sub_l);
    let chroma = delta_c_prime / (KSUB_C * s_sub_c);
    let hue = delta_upcase_h / (KSUB_H * s_sub_upcase_h);
    sqrt(sq(lightness) + sq(chroma) + sq(hue) + (r_t * chroma * hue).to_f64()).to_f32()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::ciede::cpu;
    use crate::features::ciede::math::Own;

    /// Every lane has the scalar functions' bits, on random sample triples
    /// of every bit depth (8-bit: every value of each channel met often).
    #[test]
    fn lanes_compute_the_scalar_bits() {
        let table = table_words();
        let m = Own(&table);
        let mut seed = 11u64;
        let mut next = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            seed
        };
        for bit_depth in [8u8, 10, 12, 16] {
            let s = YuvScale::new(bit_depth);
            let mask = (1u32 << bit_depth) - 1;
            for n in 0..20_000 {
                let mut triple = || {
                    let r = next();
                    [r >> 16, r >> 32, r >> 48].map(|v| (v as u32) & mask)
                };
                let a: [[u32; 3]; L] = from_fn(|_| triple());
                // Some near pairs too: a few codes apart, as in video.
                let b: [[u32; 3]; L] = if n % 2 == 0 {
                    from_fn(|_| triple())
                } else {
                    from_fn(|l| a[l].map(|v| (v ^ (next() as u32 & 7)) & mask))
                };
                let (la, lb) = (lab_color(a, &s, &table), lab_color(b, &s, &table));
                let de = ciede2000(la, lb, &table);
                for l in 0..L {
                    let (ca, cb) = (
                        cpu::lab_color(a[l][0], a[l][1], a[l][2], &s, &m),
                        cpu::lab_color(b[l][0], b[l][1], b[l][2], &s, &m),
                    );
                    let (x, y) = (la.lane(l), ca);
                    assert_eq!(
                        (x.l.to_bits(), x.a.to_bits(), x.b.to_bits()),
                        (y.l.to_bits(), y.a.to_bits(), y.b.to_bits()),
                        "{:?}",
                        a[l]
                    );
                    assert_eq!(lb.lane(l), cb);
                    assert_eq!(de.0[l].to_bits(), cpu::ciede2000(ca, cb, &m).to_bits(), "{:?} {:?}", a[l], b[l]);
                }
            }
        }
    }
}
