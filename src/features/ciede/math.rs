//! The math functions ciede needs — libvmaf calls the C library's `pow`,
//! `powf`, `exp`, `sin`, `cos`, `atan2` and `sqrt` — written once, in
//! double arithmetic that every dialect computes identically: IEEE
//! additions, subtractions and multiplications (never fused), comparisons,
//! exact conversions and bit manipulation, and table lookups. No divide,
//! square root or FMA instruction: a GPU's may round differently (Vulkan
//! promises neither correctly rounded division nor square root), so those
//! are built from multiplies and adds too ([`div`], [`sqrt`]).
//!
//! `kernels/ciede.cl` and `shaders/ciede_terms.wgsl` carry the same
//! functions, statement for statement, so the CPU reference and every GPU
//! compute the very same bits. Each function is accurate to about half a
//! unit in the last place, close to the C library's: the CPU reference
//! stays within 1e-6 of libvmaf (`tests/reference.rs`), and the unit tests
//! below count where each differs from glibc.
//!
//! Error-free transformations (Knuth's two-sum, Dekker's split and
//! product) carry the extra bits where an argument reduction or a
//! polynomial needs them.
//!
//! The GPU kernels also carry cheaper estimates of five results that ciede.c
//! rounds to float ([`cbrt_f32`], [`upcase_t_f32`], [`atan2_f32`],
//! [`scaled_sin_f32`]): each estimate's error is bounded (and measured by
//! the tests), and it is rounded to float only where no midpoint between
//! floats lies within [`ESTIMATE_MARGIN`] units of its last place, far
//! more than that error; elsewhere the kernel calls the exact function.
//! Either way the float is the one the exact function gives, which the
//! tests hold on random inputs and on inputs made to land next to
//! midpoints, and `tests/color.rs` holds through the kernels with the
//! estimates on and off (`super::gpu::ESTIMATES_VAR`).

use super::tables::*;

/// The functions ciede.c calls from the C library, as the port calls them:
/// [`Own`] (this module's, what every backend computes) or [`CLibrary`]
/// (the C library's through Rust's std: glibc on Linux, what libvmaf
/// calls; the tests measure how often the two differ).
pub trait Libm: Sync {
    /// `pow(x, y)`, for x > 0 (`pow_2_4`, `cbrt_approx`).
    fn pow(&self, x: f64, y: f64) -> f64;
    /// `pow(c, 7)` of a float.
    fn pow7(&self, c: f32) -> f64;
    /// `powf(c, 7)`.
    fn powf7(&self, c: f32) -> f32;
    fn exp(&self, x: f64) -> f64;
    fn sin(&self, x: f64) -> f64;
    fn cos(&self, x: f64) -> f64;
    /// `atan2(y, x)` of two floats, not both zero.
    fn atan2(&self, y: f32, x: f32) -> f64;
    fn sqrt(&self, x: f64) -> f64;
    /// `a / b` for b > 0.
    fn div(&self, a: f64, b: f64) -> f64;
}

/// This module's functions, with the tables they read ([`table_words`]).
pub struct Own<'a>(pub &'a [f64]);

impl Libm for Own<'_> {
    #[inline(always)]
    fn pow(&self, x: f64, y: f64) -> f64 {
        pow(x, y, self.0)
    }
    #[inline(always)]
    fn pow7(&self, c: f32) -> f64 {
        pow7(c)
    }
    #[inline(always)]
    fn powf7(&self, c: f32) -> f32 {
        powf7(c)
    }
    #[inline(always)]
    fn exp(&self, x: f64) -> f64 {
        exp(x, self.0)
    }
    #[inline(always)]
    fn sin(&self, x: f64) -> f64 {
        sin(x)
    }
    #[inline(always)]
    fn cos(&self, x: f64) -> f64 {
        cos(x)
    }
    #[inline(always)]
    fn atan2(&self, y: f32, x: f32) -> f64 {
        atan2(y, x, self.0)
    }
    #[inline(always)]
    fn sqrt(&self, x: f64) -> f64 {
        sqrt(x)
    }
    #[inline(always)]
    fn div(&self, a: f64, b: f64) -> f64 {
        div(a, b)
    }
}

/// The C library's functions (Rust's std calls them: glibc on Linux), as
/// libvmaf calls them; the compiler's folds included (`pow(x, 2)` is
/// `x * x` there and in the port). For measuring [`Own`] against.
pub struct CLibrary;

impl Libm for CLibrary {
    fn pow(&self, x: f64, y: f64) -> f64 {
        x.powf(y)
    }
    fn pow7(&self, c: f32) -> f64 {
        f64::from(c).powf(7.0)
    }
    fn powf7(&self, c: f32) -> f32 {
        c.powf(7.0)
    }
    fn exp(&self, x: f64) -> f64 {
        x.exp()
    }
    fn sin(&self, x: f64) -> f64 {
        x.sin()
    }
    fn cos(&self, x: f64) -> f64 {
        x.cos()
    }
    fn atan2(&self, y: f32, x: f32) -> f64 {
        f64::from(y).atan2(f64::from(x))
    }
    fn sqrt(&self, x: f64) -> f64 {
        x.sqrt()
    }
    fn div(&self, a: f64, b: f64) -> f64 {
        a / b
    }
}

/// Knuth's two-sum: `s + e == a + b` exactly, `s = fl(a + b)`.
#[inline(always)]
pub fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

/// Dekker's fast two-sum for `|a| >= |b|` (or `a == 0`).
#[inline(always)]
pub fn fast_two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    (s, b - (s - a))
}

/// Veltkamp's split: `hi + lo == a`, each with at most 26 significant bits.
#[inline(always)]
pub fn split(a: f64) -> (f64, f64) {
    let c = 134_217_729.0 * a; // 2^27 + 1
    let hi = c - (c - a);
    (hi, a - hi)
}

/// Dekker's product: `p + e == a * b` exactly, `p = fl(a * b)`.
#[inline(always)]
pub fn two_prod(a: f64, b: f64) -> (f64, f64) {
    let p = a * b;
    let (ah, al) = split(a);
    let (bh, bl) = split(b);
    (p, ((ah * bh - p) + ah * bl + al * bh) + al * bl)
}

/// 2^k as a double, for normal results (-1022 <= k <= 1023).
#[inline(always)]
fn pow2i(k: i64) -> f64 {
    f64::from_bits(((k + 1023) as u64) << 52)
}

/// `log(x)` as a double-double, for finite x > 0 whose magnitude is
/// moderate (normal, far from the exponent range's ends): absolute error
/// below 2^-68 where |log x| < 2^5.
///
/// x = 2^k z with z in [0.7041, 1.4082); the table gives invc ~ 1/z to 21
/// bits and -log(invc) to 106 bits, so that r = z invc - 1 (|r| < 2^-7.9)
/// is the exact sum of two products, and log x = k ln 2 - log(invc) +
/// log1p(r), log1p by its series to r^8.
#[inline(always)]
pub fn log_dd(x: f64, table: &[f64]) -> (f64, f64) {
    let ix = x.to_bits();
    let tmp = ix.wrapping_sub(LOG_OFF);
    let i = ((tmp >> (52 - LOG_BITS)) & ((1 << LOG_BITS) - 1)) as usize;
    let k = (tmp as i64) >> 52;
    let iz = ix.wrapping_sub(tmp & (0xFFF << 52));
    let z = f64::from_bits(iz);
    let row = LOG_AT + 3 * i;
    let (invc, nlog_hi, nlog_lo) = (table[row], table[row + 1], table[row + 2]);
    // z = zh + zl with zh to 32 bits: both products with invc (21 bits) are
    // exact, and zh invc - 1 is exact (Sterbenz).
    let zh = f64::from_bits(iz & !((1u64 << 21) - 1));
    let zl = z - zh;
    let rh = zh * invc - 1.0;
    let rl = zl * invc;
    let r = rh + rl;
    let kd = k as f64;
    // -r^2/2 with rh^2 exact (two_prod) and the 2 rh rl term rounded.
    let (p, pe) = two_prod(rh, rh);
    let (s1, e1) = two_sum(kd * LN2_HI, nlog_hi);
    let (s2, e2) = two_sum(s1, rh);
    let (s3, e3) = two_sum(s2, -0.5 * p);
    // log1p(r) - r + r^2/2: r^3 (1/3 - r/4 + r^2/5 - r^3/6 + r^4/7 - r^5/8).
    let poly = r * r * r * (LOG1P_3 + r * (LOG1P_4 + r * (LOG1P_5 + r * (LOG1P_6 + r * (LOG1P_7 + r * LOG1P_8)))));
    let lo = kd * LN2_LO + nlog_lo + rl - 0.5 * pe - rh * rl - 0.5 * rl * rl + poly + e1 + e2 + e3;
    fast_two_sum(s3, lo)
}

/// `exp(hi + lo)` for a double-double argument with |hi| < 700 whose
/// result is normal: relative error about 0.51 units in the last place.
///
/// hi + lo = k ln2/128 + r with |r| <= ln2/256; exp = 2^(k/128) (table,
/// double-double) times exp(r) (series to r^6).
#[inline(always)]
pub fn exp_dd(hi: f64, lo: f64, table: &[f64]) -> f64 {
    let kd = (hi * INV_L2N + 0.5).floor();
    // kd * L2N_HI is exact (42-bit constant) and so is the subtraction.
    let r = (hi - kd * L2N_HI) + (lo - kd * L2N_LO);
    let p = r + r * r * (EXP_2 + r * (EXP_3 + r * (EXP_4 + r * (EXP_5 + r * EXP_6))));
    let k = kd as i64;
    let j = (k & ((1 << EXP_BITS) - 1)) as usize;
    let (t_hi, t_lo) = (table[EXP2_AT + 2 * j], table[EXP2_AT + 2 * j + 1]);
    let m = t_hi + (t_lo + t_hi * p + t_lo * p);
    m * pow2i(k >> EXP_BITS)
}

/// `exp(x)` (the C library's, for libvmaf's `exp(-(degrees²))`).
#[inline(always)]
pub fn exp(x: f64, table: &[f64]) -> f64 {
    exp_dd(x, 0.0, table)
}

/// `pow(x, y)` for finite x > 0 of moderate magnitude and |y log x| < 700:
/// exp(y log x) with log x and the product in double-double.
#[inline(always)]
pub fn pow(x: f64, y: f64, table: &[f64]) -> f64 {
    let (lh, ll) = log_dd(x, table);
    let (ph, pe) = two_prod(y, lh);
    let (eh, el) = fast_two_sum(ph, pe + y * ll);
    exp_dd(eh, el, table)
}

/// The seed of [`cbrt_estimate`]'s reciprocal cube root: from the high
/// word of c's bits, c^(-1/3) to within 3.5% (the constant minimises that
/// error over a period of three binades).
pub const CBRT_SEED: u32 = 0x553E_F100;

/// c^(1/3) for normal c > 0 to within 2^-49 (relative; the unit tests
/// measure under 2^-50): the reciprocal cube root from [`CBRT_SEED`] by
/// four Newton steps r + r (1 - c r³) / 3 (each squares the error:
/// 3.5% → 2.4e-3 → 1.2e-5 → 2.7e-10 → 1.4e-19, then rounding), times c r.
/// Plain adds and multiplies: a few dozen where [`pow`] takes some 120.
#[inline(always)]
pub fn cbrt_estimate(c: f64) -> f64 {
    let hi = (c.to_bits() >> 32) as u32;
    let mut r = f64::from_bits(u64::from(CBRT_SEED - hi / 3) << 32);
    for _ in 0..4 {
        r = r + r * ((1.0 - c * r * r * r) * ONE_THIRD);
    }
    c * r * r
}

/// How far (in units of its last place) a double must lie from the
/// nearest midpoint between two floats for the kernels to round an
/// estimate ([`cbrt_f32`], [`upcase_t_sum`]) to float instead of the
/// exact function's result: 1024 ulps, at least 2^-43 relative. The
/// cube root's estimate and `pow(c, ONE_THIRD)` differ by under 2^-48
/// over ciede's c (2^-50, pow's 0.52 ulp, and ONE_THIRD's shortfall from
/// 1/3, |ln c| 2^-54 / 3, under 2^-53 there; 2^-46 at the exponent
/// range's ends); T's sums by under 2^-48.5 (absolute, T > 1/4). The
/// kernels take it as a scalar (`super::gpu::ESTIMATES_VAR` turns the
/// estimates off).
pub const ESTIMATE_MARGIN: i32 = 1024;

/// Whether the float nearest to `a` (a double of a normal float's
/// magnitude) could change within `margin` units of a's last place: its
/// 29 bits below float precision lie that close to 100...0 (the
/// midpoint). Elsewhere the rounding cannot change: a cell's ends are its
/// midpoints.
#[inline(always)]
pub fn near_float_midpoint(a: f64, margin: i32) -> bool {
    ((a.to_bits() & 0x1FFF_FFFF) as i32 - 0x1000_0000).abs() <= margin
}

/// `pow(c, ONE_THIRD) as f32` for c > 0 (libvmaf's `cbrt_approx` in
/// `xyz_to_lab_map`, whose result is a float), as the GPU kernels compute
/// it: [`cbrt_estimate`] rounded to float where no midpoint between floats
/// lies within its error of it (all but about 4 in a million), else
/// [`pow`] itself. Equal to `pow(c, ONE_THIRD, table) as f32` on every c
/// (the tests hold it there, next to midpoints too).
#[inline(always)]
pub fn cbrt_f32(c: f64, table: &[f64]) -> f32 {
    let a = cbrt_estimate(c);
    if near_float_midpoint(a, ESTIMATE_MARGIN) { pow(c, ONE_THIRD, table) as f32 } else { a as f32 }
}

/// sin(r + q pi/2) for |r| <= pi/4 (+ a little): the series of sin r (to
/// r^17) or cos r (to r^16), one coefficient set or the other chosen by
/// q's parity without a branch, negated for q = 2, 3 (mod 4).
#[inline(always)]
fn quadrant_series(r: f64, q: i64) -> f64 {
    let z = r * r;
    let odd = q & 1 != 0;
    let pick = |s: f64, c: f64| if odd { c } else { s };
    let p = pick(SIN_3, -0.5)
        + z * (pick(SIN_5, COS_4)
            + z * (pick(SIN_7, COS_6)
                + z * (pick(SIN_9, COS_8)
                    + z * (pick(SIN_11, COS_10)
                        + z * (pick(SIN_13, COS_12) + z * (pick(SIN_15, COS_14) + z * pick(SIN_17, COS_16)))))));
    // sin r = r + r z p, cos r = 1 + z p.
    let m = if odd { 1.0 } else { r };
    let v = m + m * (z * p);
    if q & 2 == 0 { v } else { -v }
}

/// x = k pi/2 + r, |r| <= pi/4, for |x| < 2^5: two parts of pi/2 (k at
/// most 2^5: the first product and difference exact, then 2^-53 |r|).
#[inline(always)]
fn quadrant(x: f64) -> (i64, f64) {
    let kd = (x * TWO_OVER_PI + 0.5).floor();
    (kd as i64, (x - kd * PIO2_1) - kd * PIO2_2)
}

/// cos(x) for |x| < 2^5 to within 2^-51 (absolute; ciede's T takes it of
/// arguments up to 12 pi): [`quadrant`], then [`quadrant_series`]. Some
/// 25 adds and multiplies where [`cos`] takes 60 or more, twice that where
/// a GPU's lanes take both of its kernels.
#[inline(always)]
pub fn cos_estimate(x: f64) -> f64 {
    let (k, r) = quadrant(x);
    quadrant_series(r, k + 1)
}

/// sin(x) for |x| < 2^5 to within 2^-51 (absolute), and 2^-52 relative
/// where |x| <= pi/4 (there r is x itself).
#[inline(always)]
pub fn sin_estimate(x: f64) -> f64 {
    let (k, r) = quadrant(x);
    quadrant_series(r, k)
}

/// Whether an estimate `v` of a value within 2^-46 (relative) may be
/// rounded to float in its stead: its magnitude a normal float's, no
/// midpoint between floats within `margin` ulps of it.
#[inline(always)]
fn rounds_alike(v: f64, margin: i32) -> bool {
    v.abs() >= f64::from(f32::MIN_POSITIVE) * 2.0 && !near_float_midpoint(v, margin)
}

/// `(ks * sin(x)) as f32` (ciede.c's `2 sqrt(..) sin(..)` of ΔH' and
/// `-2 sqrt(..) sin(..)` of R_T, ks their first product) as the GPU
/// kernels compute it, for |x| < 2^5: with [`sin_estimate`] (the product
/// within 2^-49.5), unless [`rounds_alike`] refuses it; with [`sin`] then.
/// A zero x gives [`sin`]'s +0, and a zero ks the sign [`sin`] would give,
/// so zero products are the same zero.
#[inline(always)]
pub fn scaled_sin_f32(ks: f64, x: f64, margin: i32) -> f32 {
    let v = ks * if x == 0.0 { 0.0 } else { sin_estimate(x) };
    if v == 0.0 || rounds_alike(v, margin) { v as f32 } else { (ks * sin(x)) as f32 }
}

/// `atan2(y, x)` of two floats, not both zero, to within 2^-49 (relative):
/// [`atan2`]'s steps in plain doubles (its two divisions uncorrected, the
/// table's atan(j/16) and pi/2, pi as a high part plus a low part).
#[inline(always)]
pub fn atan2_estimate(y: f32, x: f32, table: &[f64]) -> f64 {
    let (ay, ax) = (f64::from(y.abs()), f64::from(x.abs()));
    let swap = ay > ax;
    let (num, den) = if swap { (ax, ay) } else { (ay, ax) };
    let t = num * recip(den);
    let jd = (t * 16.0 + 0.5).floor();
    let c = jd * 0.0625;
    let u = (t - c) * recip(1.0 + t * c);
    let u2 = u * u;
    let au = u + u * u2 * (ATAN_3 + u2 * (ATAN_5 + u2 * (ATAN_7 + u2 * (ATAN_9 + u2 * (ATAN_11 + u2 * ATAN_13)))));
    let j = jd as usize;
    let mut a = table[ATAN_AT + 2 * j] + (table[ATAN_AT + 2 * j + 1] + au);
    if swap {
        a = (PIO2_HI - a) + PIO2_LO;
    }
    if x < 0.0 {
        a = (PI_HI - a) + PI_LO;
    }
    if y.is_sign_negative() { -a } else { a }
}

/// `atan2(y, x) as f32` (ciede.c's get_h_prime) as the GPU kernels compute
/// it: [`atan2_estimate`] unless [`rounds_alike`] refuses it (zeros and
/// results near a midpoint), [`atan2`] then.
#[inline(always)]
pub fn atan2_f32(y: f32, x: f32, table: &[f64], margin: i32) -> f32 {
    let v = atan2_estimate(y, x, table);
    if rounds_alike(v, margin) { v as f32 } else { atan2(y, x, table) as f32 }
}

/// ciede.c `get_upcase_t`'s double sum, 1 - 0.17 cos(h - pi/6) + 0.24
/// cos(2h) + 0.32 cos(3h + pi/30) - 0.20 cos(4h - 63 pi/180), in its
/// order, with `cos` given: `cos_estimate` puts it within 2^-48.5 of the
/// exact sum (four cosines 2^-51 off, each scaled by under 1/3, and up to
/// a unit of 2^-52 where each product and sum rounds otherwise).
#[inline(always)]
pub fn upcase_t_sum(h: f64, cos: impl Fn(f64) -> f64) -> f64 {
    1.0 - T_1 * cos(h - PI_6) + T_2 * cos(2.0 * h) + T_3 * cos(3.0 * h + PI_30) - T_4 * cos(4.0 * h - PI7_20)
}

/// ciede.c `get_upcase_t` as the GPU kernels compute it: the sum with
/// [`cos_estimate`], rounded to float where it is above 1/4 (T lies in
/// [0.36, 1.58]) and no midpoint between floats lies within
/// [`ESTIMATE_MARGIN`] ulps; else with [`cos`]. Equal to the sum with
/// [`cos`] rounded to float on every h (the tests hold it there).
#[inline(always)]
pub fn upcase_t_f32(h: f32, margin: i32) -> f32 {
    let h = f64::from(h);
    let t = upcase_t_sum(h, cos_estimate);
    if t > 0.25 && !near_float_midpoint(t, margin) { t as f32 } else { upcase_t_sum(h, cos) as f32 }
}

/// `pow(c, 7)` for a float c >= 0 (libvmaf's `pow(c_bar, 7)`): c^7 in
/// double-double, rounded once, returned with its low part.
#[inline(always)]
pub fn pow7_dd(c: f32) -> (f64, f64) {
    let c = f64::from(c);
    let c2 = c * c; // exact: 48 bits
    let (c4, c4e) = two_prod(c2, c2);
    let (h6, e6) = two_prod(c4, c2);
    let (c6, c6e) = fast_two_sum(h6, e6 + c4e * c2);
    let (h7, e7) = two_prod(c6, c);
    fast_two_sum(h7, e7 + c6e * c)
}

/// `pow(c, 7)` rounded to double.
#[inline(always)]
pub fn pow7(c: f32) -> f64 {
    pow7_dd(c).0
}

/// `powf(c, 7)` for a float c >= 0 (libvmaf's `powf(c_bar_prime, 7)`): c^7
/// in double-double, rounded to the nearest float.
#[inline(always)]
pub fn powf7(c: f32) -> f32 {
    let (h, e) = pow7_dd(c);
    dd_to_f32(h, e)
}

/// The float nearest to `h + e` for h >= 0 (|e| <= half an ulp of h): `h`
/// rounded to float, unless h lies exactly halfway between two floats,
/// where e decides (a tie only when e is zero too: then to even, as
/// `h as f32` does).
#[inline(always)]
pub fn dd_to_f32(h: f64, e: f64) -> f32 {
    let f = h as f32;
    // h is a midpoint iff its 29 bits below float precision are 100...0
    // (normal floats; the results here are far from float's subnormals).
    if h.to_bits() & 0x1FFF_FFFF == 0x1000_0000 && e != 0.0 {
        // `f` went to even; move it to the side e points to if it did not.
        let back = f64::from(f);
        if e > 0.0 && back < h {
            return f32::from_bits(f.to_bits() + 1);
        }
        if e < 0.0 && back > h {
            return f32::from_bits(f.to_bits() - 1);
        }
    }
    f
}

/// The reciprocal square root's seed (about 3.4% off), then four Newton
/// steps: y (1.5 - x y²/2).
#[inline(always)]
fn rsqrt(x: f64) -> f64 {
    let mut y = f64::from_bits(0x5FE6_EB50_C7B5_37A9u64.wrapping_sub(x.to_bits() >> 1));
    let hx = 0.5 * x;
    for _ in 0..4 {
        y = y * (1.5 - hx * y * y);
    }
    y
}

/// `sqrt(x)` for x >= 0 (normal or zero): x rsqrt(x), corrected once with
/// the exact residual x - s² (two_prod): within about half an ulp.
#[inline(always)]
pub fn sqrt(x: f64) -> f64 {
    if x == 0.0 {
        return x;
    }
    let y = rsqrt(x);
    let s = x * y;
    let (p, pe) = two_prod(s, s);
    let residual = (x - p) - pe;
    s + residual * (0.5 * y)
}

/// 1/b's seed (a few bits), then four Newton steps y (2 - b y), for b > 0.
#[inline(always)]
fn recip(b: f64) -> f64 {
    let mut y = f64::from_bits(0x7FDE_6238_22FC_16E6u64.wrapping_sub(b.to_bits()));
    for _ in 0..4 {
        y = y * (2.0 - b * y);
    }
    y
}

/// `a / b` for normal b > 0: a recip(b), corrected once with the exact
/// residual a - q b (two_prod): within about half an ulp.
#[inline(always)]
pub fn div(a: f64, b: f64) -> f64 {
    let y = recip(b);
    let q = a * y;
    let (p, pe) = two_prod(q, b);
    let residual = (a - p) - pe;
    q + residual * y
}

/// sin and cos of r = rh + rl, |r| <= pi/4 (+ a little): Taylor series to
/// r^19 and r^18, the low part through the derivative.
#[inline(always)]
fn sin_kernel(rh: f64, rl: f64) -> f64 {
    let z = rh * rh;
    let poly = z
        * (SIN_3
            + z * (SIN_5
                + z * (SIN_7 + z * (SIN_9 + z * (SIN_11 + z * (SIN_13 + z * (SIN_15 + z * (SIN_17 + z * SIN_19))))))));
    rh + (rh * poly + rl * (1.0 - 0.5 * z))
}

#[inline(always)]
fn cos_kernel(rh: f64, rl: f64) -> f64 {
    let (z, ze) = two_prod(rh, rh);
    let (w, we) = two_sum(1.0, -0.5 * z);
    let poly = z
        * z
        * (COS_4 + z * (COS_6 + z * (COS_8 + z * (COS_10 + z * (COS_12 + z * (COS_14 + z * (COS_16 + z * COS_18)))))));
    w + ((we - 0.5 * ze) + (poly - rh * rl))
}

/// x = k pi/2 + r, r as a double-double: Cody and Waite's reduction with
/// pi/2 in three parts (k pi/2's first two products exact for |k| < 2^20).
/// For |x| < 2^19.
#[inline(always)]
fn reduce(x: f64) -> (i64, f64, f64) {
    let kd = (x * TWO_OVER_PI + 0.5).floor();
    let w = x - kd * PIO2_1;
    let (rh, e) = two_sum(w, -(kd * PIO2_2));
    let (rh, rl) = fast_two_sum(rh, e - kd * PIO2_3);
    (kd as i64, rh, rl)
}

/// `sin(x)` for |x| < 2^19.
#[inline(always)]
pub fn sin(x: f64) -> f64 {
    let (k, rh, rl) = reduce(x);
    let v = if k & 1 == 0 { sin_kernel(rh, rl) } else { cos_kernel(rh, rl) };
    if k & 2 == 0 { v } else { -v }
}

/// `cos(x)` for |x| < 2^19.
#[inline(always)]
pub fn cos(x: f64) -> f64 {
    let (k, rh, rl) = reduce(x);
    let v = if k & 1 == 0 { cos_kernel(rh, rl) } else { sin_kernel(rh, rl) };
    if (k + 1) & 2 == 0 { v } else { -v }
}

/// Double-double `(ah, al) - (bh, bl)` for ah > bh > 0 within a factor 2
/// or so (the high parts' difference is exact).
#[inline(always)]
fn dd_sub(ah: f64, al: f64, bh: f64, bl: f64) -> (f64, f64) {
    let (s, e) = two_sum(ah, -bh);
    fast_two_sum(s, e + (al - bl))
}

/// `atan2(y, x)` of two floats, not both zero (libvmaf's get_h_prime
/// returns before calling it then), with the C library's signs and
/// quadrants. t = min/max of |x|, |y| in [0, 1]; atan t = atan(j/16) +
/// atan(u), u = (t - j/16) / (1 + t j/16), |u| < 1/31, by its series to
/// u^13; then pi/2 - a if |y| > |x|, pi - a if x < 0, and y's sign.
#[inline(always)]
pub fn atan2(y: f32, x: f32, table: &[f64]) -> f64 {
    let (ay, ax) = (f64::from(y.abs()), f64::from(x.abs()));
    let swap = ay > ax;
    let (num, den) = if swap { (ax, ay) } else { (ay, ax) };
    let t = div(num, den);
    let jd = (t * 16.0 + 0.5).floor(); // ATAN_N
    let c = jd * 0.0625; // j / ATAN_N, exactly
    let u = div(t - c, 1.0 + t * c);
    let u2 = u * u;
    let au = u + u * u2 * (ATAN_3 + u2 * (ATAN_5 + u2 * (ATAN_7 + u2 * (ATAN_9 + u2 * (ATAN_11 + u2 * ATAN_13)))));
    let j = jd as usize;
    let (mut h, mut l) = fast_two_sum(table[ATAN_AT + 2 * j], table[ATAN_AT + 2 * j + 1] + au);
    if swap {
        (h, l) = dd_sub(PIO2_HI, PIO2_LO, h, l);
    }
    if x < 0.0 {
        (h, l) = dd_sub(PI_HI, PI_LO, h, l);
    }
    let a = h + l;
    if y.is_sign_negative() { -a } else { a }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Vec<f64> {
        table_words()
    }

    /// Units in the last place between a and b (same sign, finite).
    fn ulps(a: f64, b: f64) -> u64 {
        (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs()
    }

    /// A deterministic stream of f64 in [lo, hi].
    fn uniform(seed: u64, n: usize, lo: f64, hi: f64) -> impl Iterator<Item = f64> {
        let mut s = seed;
        (0..n).map(move |_| {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            lo + (hi - lo) * ((s >> 11) as f64 / (1u64 << 53) as f64)
        })
    }

    /// The Vulkan kernels' float division (`div_rn` in
    /// shaders/include/ciede_terms.wgsl: Vulkan's own may be 2.5 ulp off):
    /// the double a * recip(b) rounded to float once is a / b correctly
    /// rounded, for b > 0. recip leaves under 2^-51 (relative), the product
    /// another 2^-53, and a quotient of two floats lies more than 2^-49 from
    /// any midpoint between floats. Checked on random pairs over the whole
    /// float range and on pairs made to fall next to a midpoint.
    #[test]
    fn the_kernels_float_division_is_correctly_rounded() {
        let div_rn = |a: f32, b: f32| (f64::from(a) * recip(f64::from(b))) as f32;
        let mut s: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        let mut near_midpoints = 0;
        for _ in 0..1_000_000 {
            let r = next();
            // Any finite a; b > 0 and normal, exponents from 2^-100 to 2^100.
            let a = f32::from_bits(r as u32 & 0xff7f_ffff);
            let b = f32::from_bits((((r >> 32) as u32 % 200 + 27) << 23) | ((r >> 40) as u32 & 0x7f_ffff));
            assert_eq!(div_rn(a, b).to_bits(), (a / b).to_bits(), "{a:e} / {b:e}");
            // a made so that a / b lies next to the midpoint above a float q.
            let q = f32::from_bits(0x3f80_0000 | (r as u32 & 0x7f_ffff));
            let midpoint = (f64::from(q) + f64::from(f32::from_bits(q.to_bits() + 1))) / 2.0;
            let a = (midpoint * f64::from(b)) as f32;
            let quotient = a / b;
            near_midpoints += usize::from(quotient == q || quotient.to_bits() == q.to_bits() + 1);
            assert_eq!(div_rn(a, b).to_bits(), quotient.to_bits(), "{a:e} / {b:e} (near a midpoint)");
            assert_eq!(div_rn(-a, b).to_bits(), (-a / b).to_bits(), "{:e} / {b:e} (near a midpoint)", -a);
        }
        assert!(near_midpoints > 900_000, "{near_midpoints}");
        assert_eq!(div_rn(0.0, 3.0).to_bits(), 0.0f32.to_bits());
        assert_eq!(div_rn(-0.0, 3.0).to_bits(), (-0.0f32).to_bits());
    }

    /// c^(1/3)'s relative error of a: (a³ - c) / 3c, with a³ in
    /// double-double (exact to 2^-100 or so).
    fn cbrt_error(a: f64, c: f64) -> f64 {
        let (p, pe) = two_prod(a, a);
        let (q, qe) = two_prod(p, a);
        ((q - c) + (qe + pe * a)) / (3.0 * c)
    }

    #[test]
    fn the_cube_root_estimate_is_within_2_to_the_minus_50() {
        let mut worst: f64 = 0.0;
        // ciede's range (c > LAB_EPSILON; above 1 out of gamut), then whole
        // binades far out, log-uniform.
        let ciede = uniform(7, 1_000_000, LAB_EPSILON.ln(), 16f64.ln()).map(f64::exp);
        let wide = uniform(8, 200_000, -700.0, 700.0).map(f64::exp);
        for c in ciede.chain(wide) {
            worst = worst.max(cbrt_error(cbrt_estimate(c), c).abs());
        }
        assert!(worst < 2f64.powi(-50), "{:.2}", worst.log2());
        // Three Newton steps are not enough (2.7e-10 left).
        let three_steps = |c: f64| {
            let hi = (c.to_bits() >> 32) as u32;
            let mut r = f64::from_bits(u64::from(CBRT_SEED - hi / 3) << 32);
            for _ in 0..3 {
                r = r + r * ((1.0 - c * r * r * r) * ONE_THIRD);
            }
            c * r * r
        };
        let c = 1.0 + 2f64.powi(-20);
        assert!(cbrt_error(three_steps(c), c).abs() > 2f64.powi(-40));
    }

    /// The kernels' cube root is `pow(c, ONE_THIRD) as f32` on random c of
    /// ciede's range and on c whose cube root lies next to a midpoint
    /// between floats, where the estimate alone rounds the wrong way.
    #[test]
    fn the_kernels_cube_root_is_pows_float() {
        let t = table();
        let own = |c: f64| pow(c, ONE_THIRD, &t) as f32;
        for c in uniform(9, 300_000, LAB_EPSILON, 8.0) {
            assert_eq!(cbrt_f32(c, &t).to_bits(), own(c).to_bits(), "{c:e}");
        }
        let (mut fallbacks, mut estimate_wrong) = (0, 0);
        for (i, q) in uniform(10, 100_000, 0.21, 2.0).enumerate() {
            // c = (midpoint above the float q, moved by up to ±32 ulps, or
            // ±4096 for every other q)³.
            let q = q as f32;
            let midpoint = (f64::from(q) + f64::from(f32::from_bits(q.to_bits() + 1))) / 2.0;
            let nudge = if i % 2 == 0 { (i as i64 / 2 % 65) - 32 } else { (i as i64 / 2 % 8193) - 4096 };
            let m = f64::from_bits((midpoint.to_bits() as i64 + nudge) as u64);
            let c = m * m * m;
            let a = cbrt_estimate(c);
            fallbacks += usize::from(near_float_midpoint(a, ESTIMATE_MARGIN));
            estimate_wrong += usize::from((a as f32) != own(c));
            assert_eq!(cbrt_f32(c, &t).to_bits(), own(c).to_bits(), "{c:e} (near a midpoint)");
        }
        // The fallback runs, and is needed.
        assert!(fallbacks > 10_000, "{fallbacks}");
        assert!(estimate_wrong > 100, "{estimate_wrong}");
    }

    /// The largest |estimate(x) - exact(x)| over xs.
    fn worst_error(xs: impl Iterator<Item = f64>, estimate: fn(f64) -> f64, exact: fn(f64) -> f64) -> f64 {
        xs.map(|x| (estimate(x) - exact(x)).abs()).fold(0.0, f64::max)
    }

    #[test]
    fn the_cosine_estimate_is_within_2_to_the_minus_51() {
        let worst = worst_error(uniform(11, 400_000, -2.0, 40.0), cos_estimate, cos);
        assert!(worst < 2f64.powi(-51), "{:.2}", worst.log2());
        // The quadrants' signs and kernels, at their ends too.
        for k in -4..=24 {
            for d in [-0.785, -0.3, 0.0, 0.3, 0.785] {
                let x = f64::from(k) * std::f64::consts::FRAC_PI_2 + d;
                assert!((cos_estimate(x) - cos(x)).abs() < 2f64.powi(-51), "{x}");
            }
        }
    }

    #[test]
    fn the_sine_estimate_is_within_2_to_the_minus_51_and_relatively_near_zero() {
        let worst = worst_error(uniform(13, 400_000, -4.0, 4.0), sin_estimate, sin);
        assert!(worst < 2f64.powi(-51), "{:.2}", worst.log2());
        let mut worst: f64 = 0.0;
        for x in uniform(14, 200_000, -60.0, -0.3).map(|e| e.exp()) {
            for x in [x, -x] {
                worst = worst.max(((sin_estimate(x) - sin(x)) / sin(x)).abs());
            }
        }
        assert!(worst < 2f64.powi(-51), "{:.2}", worst.log2());
        assert_eq!(sin(0.0).to_bits(), 0.0f64.to_bits());
        assert_eq!(sin(-0.0).to_bits(), 0.0f64.to_bits(), "scaled_sin_f32 takes sin(±0) to be +0");
    }

    /// The kernels' (ks sin x) as f32 is the exact product's float: random
    /// ks and x of ciede's ranges (ΔH'/2 in [-pi/2, pi/2], R_T's radians in
    /// [0, pi/3], down to tiny and zero), and products next to midpoints.
    #[test]
    fn the_kernels_scaled_sine_is_the_exact_products_float() {
        let exact = |ks: f64, x: f64| (ks * sin(x)) as f32;
        // Estimates refused next to a midpoint, and those among them that
        // would have rounded the wrong way (the refusal is needed).
        let (mut near, mut estimate_wrong) = (0, 0);
        let mut check = |ks: f64, x: f64| {
            let v = ks * sin_estimate(x);
            if v.abs() >= 2f64.powi(-125) && near_float_midpoint(v, ESTIMATE_MARGIN) {
                near += 1;
                estimate_wrong += usize::from((v as f32) != exact(ks, x));
            }
            assert_eq!(scaled_sin_f32(ks, x, ESTIMATE_MARGIN).to_bits(), exact(ks, x).to_bits(), "{ks:e} {x:e}");
        };
        let ks = uniform(15, 300_000, -300.0, 300.0);
        let half_pi = std::f64::consts::FRAC_PI_2;
        let xs = uniform(16, 300_000, -half_pi, half_pi);
        for (ks, x) in ks.zip(xs) {
            check(ks, x);
            check(ks, x * 1e-30);
            check(ks, x * 1e-44);
        }
        for x in [0.0, -0.0, 1e-300, -1.0] {
            for ks in [2.0, -2.0, 0.0, -0.0] {
                check(ks, x);
            }
        }
        // ks sin x next to a midpoint: ks = (midpoint above a float) / sin x.
        for (i, x) in uniform(17, 100_000, 0.01, 1.0).enumerate() {
            let q = (1.0 + i as f64 / 100_000.0) as f32;
            let midpoint = (f64::from(q) + f64::from(f32::from_bits(q.to_bits() + 1))) / 2.0;
            check(midpoint / sin(x), x);
        }
        assert!(near > 90_000, "{near}");
        assert!(estimate_wrong > 100, "{estimate_wrong}");
    }

    #[test]
    fn the_atan2_estimate_is_within_2_to_the_minus_49() {
        let t = table();
        let mut worst: f64 = 0.0;
        let ys = uniform(18, 400_000, -200.0, 200.0);
        let xs = uniform(19, 400_000, -200.0, 200.0);
        for (y, x) in ys.zip(xs) {
            for (y, x) in [(y as f32, x as f32), ((y * 1e-6) as f32, x as f32), (y as f32, (x * 1e-6) as f32)] {
                let exact = atan2(y, x, &t);
                worst = worst.max(((atan2_estimate(y, x, &t) - exact) / exact).abs());
            }
        }
        assert!(worst < 2f64.powi(-49), "{:.2}", worst.log2());
    }

    /// The kernels' atan2 as f32 is the exact one's float: random pairs,
    /// the axes' zeros of both signs, and pairs whose angle lies next to a
    /// midpoint.
    #[test]
    fn the_kernels_atan2_is_the_exact_ones_float() {
        let t = table();
        let (mut refused, mut near) = (0, 0);
        let mut check = |y: f32, x: f32| {
            let v = atan2_estimate(y, x, &t);
            let exact = atan2(y, x, &t) as f32;
            refused += usize::from(!rounds_alike(v, ESTIMATE_MARGIN));
            near += usize::from(v.abs() >= 2f64.powi(-125) && near_float_midpoint(v, ESTIMATE_MARGIN));
            assert_eq!(atan2_f32(y, x, &t, ESTIMATE_MARGIN).to_bits(), exact.to_bits(), "atan2({y:e}, {x:e})");
        };
        let ys = uniform(20, 300_000, -150.0, 150.0);
        let xs = uniform(21, 300_000, -150.0, 150.0);
        for (y, x) in ys.zip(xs) {
            check(y as f32, x as f32);
        }
        for v in [1.0f32, -1.0, 3.5e-7, -120.0] {
            for z in [0.0f32, -0.0] {
                check(z, v);
                check(v, z);
            }
        }
        // Angles on a midpoint: atan y for a small float y lies y³/3 below
        // y, which is k + 1/2 of y's float ulps u where y³ = 3 (k + 1/2) u.
        // Around each such y, consecutive floats move that by y² ulps a
        // step: dozens of them land within the margin.
        for e in -12..-8 {
            let u = 2f64.powi(e - 23);
            let ks = (2f64.powi(2 * e + 23) / 3.0 - 0.5).ceil().max(0.0) as u32..(2f64.powi(2 * e + 26) / 3.0) as u32;
            for k in ks {
                let y0 = (3.0 * (f64::from(k) + 0.5) * u).cbrt() as f32;
                for d in -64..=64 {
                    let y = f32::from_bits(y0.to_bits().wrapping_add_signed(d));
                    check(y, 1.0);
                    check(-y, 1.0);
                }
            }
        }
        // 242 refused next to a midpoint, the four zero angles besides. None
        // of those estimates would have rounded the wrong way (their error,
        // 2^-49, is a 2^-26 ulp of the float; these steps are 2^-24 and
        // more): the sine's test shows such cases, with the same margin.
        assert!(near > 200 && refused >= near + 4, "{near} {refused}");
    }

    /// The kernels' T is the exact sum's float on every h of a range of
    /// a million consecutive floats and on random h over [0, 3 pi) (h̄'
    /// stays below 3 pi); the estimated sums stay within 2^-48.5.
    #[test]
    fn the_kernels_upcase_t_is_the_exact_sums_float() {
        let (mut fallbacks, mut worst) = (0, 0f64);
        let start = 2.0f32.to_bits();
        let consecutive = (start..start + 1_000_000).map(f32::from_bits);
        let random = uniform(12, 200_000, 0.0, 3.0 * std::f64::consts::PI).map(|h| h as f32);
        for h in consecutive.chain(random) {
            let exact = upcase_t_sum(f64::from(h), cos);
            let estimate = upcase_t_sum(f64::from(h), cos_estimate);
            worst = worst.max((estimate - exact).abs());
            fallbacks += usize::from(near_float_midpoint(estimate, ESTIMATE_MARGIN));
            assert_eq!(upcase_t_f32(h, ESTIMATE_MARGIN).to_bits(), (exact as f32).to_bits(), "{h:e}");
        }
        assert!(worst < 2f64.powi(-50), "{:.2}", worst.log2());
        assert!(fallbacks > 0);
        // With every estimate refused, T is the exact sum's.
        for h in [0.0f32, 1.0, 2.5, 6.2, 9.0] {
            assert_eq!(upcase_t_f32(h, i32::MAX).to_bits(), (upcase_t_sum(f64::from(h), cos) as f32).to_bits());
        }
    }

    #[test]
    fn error_free_transformations_are_exact() {
        let (s, e) = two_sum(1.0, 1e-20);
        assert_eq!((s, e), (1.0, 1e-20));
        let a = 1.0 + f64::EPSILON;
        let (p, e) = two_prod(a, a);
        // (1 + eps)^2 = 1 + 2 eps + eps^2
        assert_eq!(p, 1.0 + 2.0 * f64::EPSILON);
        assert_eq!(e, f64::EPSILON * f64::EPSILON);
        let (hi, lo) = split(std::f64::consts::PI);
        assert_eq!(hi + lo, std::f64::consts::PI);
        assert_eq!(hi.to_bits() & ((1 << 26) - 1), 0);
    }

    #[test]
    fn division_and_square_root_are_within_an_ulp_and_mostly_exact() {
        let mut exact = 0;
        let n = 200_000;
        for (a, b) in uniform(1, n, -1e3, 1e3).zip(uniform(2, n, 1e-3, 1e4)) {
            let q = div(a, b);
            assert!(ulps(q, a / b) <= 1, "{a} / {b}: {q} vs {}", a / b);
            exact += usize::from(q == a / b);
            let s = sqrt(b);
            assert!(ulps(s, b.sqrt()) <= 1, "sqrt {b}: {s} vs {}", b.sqrt());
        }
        assert!(exact > n * 99 / 100, "{exact} of {n} quotients correctly rounded");
        assert_eq!(sqrt(0.0), 0.0);
        assert_eq!(sqrt(4.0), 2.0);
        assert_eq!(div(1.0, 4.0), 0.25);
    }

    #[test]
    fn pow_exp_sin_cos_match_the_c_library_to_an_ulp() {
        // glibc (through std) is correctly rounded but in rare cases; these
        // are within an ulp, and mostly the same bits (pow, exp: 99.9%; sin
        // and cos, whose series adds r^3/6 in plain double: 98.5%). What
        // ciede keeps of them is rounded to float, where a difference of an
        // ulp of double almost never shows (tests/reference.rs holds the
        // scores to libvmaf's recordings).
        let t = table();
        let mut same = 0usize;
        let mut total = 0usize;
        let mut check = |ours: f64, libm: f64, what: &str| {
            assert!(ulps(ours, libm) <= 1, "{what}: {ours:e} vs {libm:e}");
            same += usize::from(ours == libm);
            total += 1;
        };
        for x in uniform(3, 100_000, 0.085, 2.3) {
            check(pow(x, 2.4, &t), x.powf(2.4), &format!("pow({x}, 2.4)"));
        }
        for x in uniform(4, 100_000, 0.0088, 8.0) {
            check(pow(x, 1.0 / 3.0, &t), x.powf(1.0 / 3.0), &format!("pow({x}, 1/3)"));
        }
        for x in uniform(5, 100_000, -125.0, 0.0) {
            check(exp(x, &t), x.exp(), &format!("exp({x})"));
        }
        for x in uniform(6, 100_000, -40.0, 40.0) {
            check(sin(x), x.sin(), &format!("sin({x})"));
            check(cos(x), x.cos(), &format!("cos({x})"));
        }
        assert!(same * 100 >= total * 98, "{same} of {total} bit-identical to glibc");
    }

    #[test]
    fn powers_of_seven_are_correctly_rounded() {
        for c in [0.0f32, 1.0, 2.0, 25.0, 0.1, 123.456, 399.9] {
            let exact = (c as f64).powi(7);
            assert!(ulps(pow7(c), exact) <= 1, "{c}");
            assert_eq!(powf7(c), c.powf(7.0), "{c}");
        }
        assert_eq!(pow7(25.0), 6103515625.0);
        // powf(25, 7) rounds to float as C's constant folding does.
        assert_eq!(powf7(25.0), 6103515625.0f64 as f32);
    }

    #[test]
    fn atan2_has_the_c_library_quadrants_and_signs() {
        let t = table();
        let cases = [(1.0f32, 1.0f32), (1.0, -1.0), (-1.0, -1.0), (-1.0, 1.0), (0.0, 1.0), (-0.0, 1.0), (0.0, -1.0)];
        for (y, x) in cases.into_iter().chain([(-0.0, -1.0), (1.0, 0.0), (-1.0, 0.0), (1.0, -0.0), (3.0, 0.5)]) {
            let (ours, libm) = (atan2(y, x, &t), f64::from(y).atan2(f64::from(x)));
            assert!(ulps(ours, libm) <= 1 && ours.is_sign_negative() == libm.is_sign_negative(), "atan2({y}, {x})");
        }
        let mut same = 0;
        let n = 200_000;
        for (y, x) in uniform(7, n, -150.0, 150.0).zip(uniform(8, n, -150.0, 150.0)) {
            let (y, x) = (y as f32, x as f32);
            let (ours, libm) = (atan2(y, x, &t), f64::from(y).atan2(f64::from(x)));
            assert!(ulps(ours, libm) <= 2, "atan2({y}, {x}): {ours} vs {libm}");
            // What libvmaf keeps is the float.
            same += usize::from(ours as f32 == libm as f32);
        }
        assert_eq!(same, n, "atan2 rounded to float differs from glibc's");
    }

    #[test]
    fn tables_hold_their_functions() {
        let t = table();
        for i in 0..128 {
            let (invc, hi, lo) = (t[LOG_AT + 3 * i], t[LOG_AT + 3 * i + 1], t[LOG_AT + 3 * i + 2]);
            assert!((hi - (-invc.ln())).abs() <= 2.0 * f64::EPSILON * hi.abs().max(1e-3), "log row {i}");
            assert!(lo.abs() <= hi.abs() * f64::EPSILON);
            assert_eq!(invc.to_bits() & ((1 << 32) - 1), 0, "invc has at most 21 bits");
        }
        for j in 0..128 {
            let hi = t[EXP2_AT + 2 * j];
            assert!(ulps(hi, (j as f64 / 128.0).exp2()) <= 1, "exp2 row {j}");
        }
        for j in 0..=16 {
            let hi = t[ATAN_AT + 2 * j];
            assert!(ulps(hi, (j as f64 / 16.0).atan()) <= 1, "atan row {j}");
        }
    }
}
