//! The CPU reference of `ciede`: libvmaf ciede.c, operation for operation
//! (its mix of float and double, its order), with the math functions of
//! [`super::math`] where ciede.c calls the C library's.

use super::math::{Libm, Own};
use super::tables::*;
use super::{ChromaMap, Tap};
use crate::features::Extractor;
use crate::fixture::{Frame, PlaneRef};
use crate::scores::Scores;
use anyhow::Result;
use rayon::prelude::*;

/// ciede.c `LABColor`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Lab {
    pub l: f32,
    pub a: f32,
    pub b: f32,
}

/// The per-bit-depth constants of ciede.c `get_lab_color`: `16 scale`,
/// `128 scale`, `1 / (219 scale)` and `1 / (224 scale)` (scale = 2^(bpc-8);
/// C computes the last two by a division, which is RN(1/219) / scale
/// exactly).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct YuvScale {
    /// 2^bpc - 1.
    pub max_sample: u32,
    pub y_off: f64,
    pub c_off: f64,
    pub y_mul: f64,
    pub c_mul: f64,
}

impl YuvScale {
    pub fn new(bit_depth: u8) -> Self {
        let scale = f64::from(1u32 << (bit_depth - 8));
        YuvScale {
            max_sample: (1 << bit_depth) - 1,
            y_off: 16.0 * scale,
            c_off: 128.0 * scale,
            y_mul: INV_219 / scale,
            c_mul: INV_224 / scale,
        }
    }
}

/// ciede.c `rgb_to_xyz_map`.
#[inline(always)]
fn rgb_to_xyz_map(c: f64, m: &impl Libm) -> f64 {
    if c > RGB_THRESHOLD { m.pow((c + RGB_A) * RGB_D, GAMMA) } else { c * RGB_LINEAR }
}

/// ciede.c `xyz_to_lab_map` (returns a float).
#[inline(always)]
fn xyz_to_lab_map(c: f64, m: &impl Libm) -> f32 {
    if c > LAB_EPSILON { m.pow(c, ONE_THIRD) as f32 } else { ((KAPPA * c + 16.0) * INV_116) as f32 }
}

/// ciede.c `get_lab_color` of one (y, u, v) sample triple.
#[inline(always)]
pub fn lab_color(y: u32, u: u32, v: u32, s: &YuvScale, m: &impl Libm) -> Lab {
    let y = (f64::from(y) - s.y_off) * s.y_mul;
    let u = (f64::from(u) - s.c_off) * s.c_mul;
    let v = (f64::from(v) - s.c_off) * s.c_mul;
    // BT.709.
    let r = rgb_to_xyz_map(y + YUV_RV * v, m);
    let g = rgb_to_xyz_map(y - YUV_GU * u - YUV_GV * v, m);
    let b = rgb_to_xyz_map(y + YUV_BU * u, m);
    let x = r * XYZ_XR + g * XYZ_XG + b * XYZ_XB;
    let yy = r * XYZ_YR + g * XYZ_YG + b * XYZ_YB;
    let z = r * XYZ_ZR + g * XYZ_ZG + b * XYZ_ZB;
    let x = f64::from(xyz_to_lab_map(x * INV_XN, m));
    let yy = f64::from(xyz_to_lab_map(yy, m));
    let z = f64::from(xyz_to_lab_map(z * INV_ZN, m));
    Lab { l: (116.0 * yy - 16.0) as f32, a: (500.0 * (x - yy)) as f32, b: (200.0 * (yy - z)) as f32 }
}

/// ciede.c `get_h_prime`: the hue angle of (a', b) in [0, 2 pi), a float.
#[inline(always)]
fn h_prime(x: f32, y: f32, m: &impl Libm) -> f32 {
    if x == 0.0 && y == 0.0 {
        return 0.0;
    }
    let hue = m.atan2(x, y) as f32;
    if hue < 0.0 { (f64::from(hue) + TWO_PI) as f32 } else { hue }
}

/// ciede.c `get_delta_h_prime`.
#[inline(always)]
fn delta_h_prime(c1: f32, c2: f32, h1: f32, h2: f32) -> f32 {
    if c1 == 0.0 || c2 == 0.0 {
        return 0.0;
    }
    if f64::from((h1 - h2).abs()) <= PI_D {
        return h2 - h1;
    }
    if h2 <= h1 { (f64::from(h2 - h1) + TWO_PI) as f32 } else { (f64::from(h2 - h1) - TWO_PI) as f32 }
}

/// ciede.c `get_upcase_h_bar_prime`.
#[inline(always)]
fn upcase_h_bar_prime(h1: f32, h2: f32) -> f32 {
    if f64::from(h1 - h2).abs() > PI_D {
        ((f64::from(h1 + h2) + TWO_PI) / 2.0) as f32
    } else {
        (f64::from(h1 + h2) / 2.0) as f32
    }
}

/// ciede.c `get_upcase_t`.
#[inline(always)]
fn upcase_t(h: f32, m: &impl Libm) -> f32 {
    let h = f64::from(h);
    (1.0 - T_1 * m.cos(h - PI_6) + T_2 * m.cos(2.0 * h) + T_3 * m.cos(3.0 * h + PI_30) - T_4 * m.cos(4.0 * h - PI7_20))
        as f32
}

/// ciede.c `get_r_sub_t`.
#[inline(always)]
fn r_sub_t(c_bar_prime: f32, h: f32, m: &impl Libm) -> f32 {
    let to_degrees = (f64::from(h) * RAD_TO_DEG) as f32;
    let degrees = ((f64::from(to_degrees) - 275.0) * INV_25) as f32;
    let c7 = m.powf7(c_bar_prime);
    let ratio = c7 / (c7 + POWF_25_7);
    // powf(degrees, 2): the compiler makes it degrees * degrees (float).
    let e = 60.0 * m.exp(f64::from(-(degrees * degrees)));
    let radians = (f64::from(e as f32) * DEG_TO_RAD) as f32;
    (-2.0 * m.sqrt(f64::from(ratio)) * m.sin(f64::from(radians))) as f32
}

/// ciede.c `ciede2000` with its default KSubArgs (0.65, 1, 4).
#[inline(always)]
pub fn ciede2000(c1: Lab, c2: Lab, m: &impl Libm) -> f32 {
    const KSUB_C: f32 = 1.0;
    const KSUB_H: f32 = 4.0;
    let sq = |v: f32| f64::from(v) * f64::from(v); // pow(v, 2), folded to v * v
    let delta_l_prime = c2.l - c1.l;
    let l_bar = (c1.l + c2.l) / 2.0;
    let chroma1 = m.sqrt(sq(c1.a) + sq(c1.b)) as f32;
    let chroma2 = m.sqrt(sq(c2.a) + sq(c2.b)) as f32;
    let c_bar = (chroma1 + chroma2) / 2.0;
    // pow(c_bar, 7) / (pow(c_bar, 7) + pow(25, 7)): the same for both.
    let c7 = m.pow7(c_bar);
    let g = 1.0 - m.sqrt(m.div(c7, c7 + POW_25_7));
    let a_prime_1 = (f64::from(c1.a) + f64::from(c1.a / 2.0) * g) as f32;
    let a_prime_2 = (f64::from(c2.a) + f64::from(c2.a / 2.0) * g) as f32;
    let c_prime_1 = m.sqrt(sq(a_prime_1) + sq(c1.b)) as f32;
    let c_prime_2 = m.sqrt(sq(a_prime_2) + sq(c2.b)) as f32;
    let c_bar_prime = (c_prime_1 + c_prime_2) / 2.0;
    let delta_c_prime = c_prime_2 - c_prime_1;
    let l50 = sq(l_bar - 50.0);
    let s_sub_l = (1.0 + m.div(K_SL * l50, m.sqrt(20.0 + l50))) as f32;
    let s_sub_c = (1.0 + K_SC * f64::from(c_bar_prime)) as f32;
    let h_prime_1 = h_prime(c1.b, a_prime_1, m);
    let h_prime_2 = h_prime(c2.b, a_prime_2, m);
    let delta_h = delta_h_prime(chroma1, chroma2, h_prime_1, h_prime_2);
    let delta_upcase_h = (2.0 * m.sqrt(f64::from(c_prime_1 * c_prime_2)) * m.sin(f64::from(delta_h) / 2.0)) as f32;
    let h_bar = upcase_h_bar_prime(h_prime_1, h_prime_2);
    let upcase_t = upcase_t(h_bar, m);
    let s_sub_upcase_h = (1.0 + K_SC_H * f64::from(c_bar_prime) * f64::from(upcase_t)) as f32;
    let r_t = r_sub_t(c_bar_prime, h_bar, m);
    let lightness = delta_l_prime / (KSUB_L * s_sub_l);
    let chroma = delta_c_prime / (KSUB_C * s_sub_c);
    let hue = delta_upcase_h / (KSUB_H * s_sub_upcase_h);
    m.sqrt(sq(lightness) + sq(chroma) + sq(hue) + f64::from(r_t * chroma * hue)) as f32
}

/// 0.015 in S_H = 1 + 0.015 C̄' T (the same literal as S_L's).
const K_SC_H: f64 = K_SL;

/// ciede.c `extract`'s score from the sum of every pixel's ΔE00.
pub fn score(de00_sum: f64, pixels: usize) -> f64 {
    45.0 - 20.0 * (de00_sum / pixels as f64).log10()
}

/// The samples of one picture, as ciede.c reads them (after its chroma
/// upsampling: [`ChromaMap`]).
struct Picture<'a> {
    planes: [PlaneRef<'a>; 3],
}

impl Picture<'_> {
    #[inline(always)]
    fn sample(&self, tap: Tap) -> u32 {
        match tap {
            Tap::Zero => 0,
            Tap::At(p, i) => match self.planes[p] {
                PlaneRef::U8 { data, .. } => u32::from(data[i]),
                PlaneRef::U16 { data, .. } => u32::from(data[i]),
            },
        }
    }
}

/// Every pixel's ΔE00 of row `i`, into `out` (one value per column).
fn row_de00(i: usize, r: &Picture<'_>, d: &Picture<'_>, map: &ChromaMap, s: &YuvScale, m: &impl Libm, out: &mut [f32]) {
    for (j, o) in out.iter_mut().enumerate() {
        let y = Tap::At(0, i * map.width + j);
        let (u, v) = (map.tap(1, i, j), map.tap(2, i, j));
        let c1 = lab_color(r.sample(y), r.sample(u), r.sample(v), s, m);
        let c2 = lab_color(d.sample(y), d.sample(u), d.sample(v), s, m);
        *o = ciede2000(c1, c2, m);
    }
}

/// A pixel's (y, u, v) samples.
type Triple = [u32; 3];

/// Direct-mapped caches of one band of rows: ΔE00 by pair of sample
/// triples, and CIELAB by triple. Both are pure functions of their keys
/// (and the bit depth, fixed per extractor), so a hit returns the very bits
/// the computation would: the caches change the speed, never a result.
/// Video repeats its colours, within a frame and from frame to frame.
struct Caches {
    pair_keys: Vec<u128>,
    pair_values: Vec<f32>,
    lab_keys: Vec<u64>,
    lab_values: Vec<Lab>,
}

const PAIR_BITS: u32 = 16;
const LAB_BITS: u32 = 15;
/// No key has all its bits set (samples have 16 bits).
const EMPTY: u64 = u64::MAX;

impl Caches {
    fn new() -> Self {
        Caches {
            pair_keys: vec![u128::MAX; 1 << PAIR_BITS],
            pair_values: vec![0.0; 1 << PAIR_BITS],
            lab_keys: vec![EMPTY; 1 << LAB_BITS],
            lab_values: vec![Lab { l: 0.0, a: 0.0, b: 0.0 }; 1 << LAB_BITS],
        }
    }

    fn triple_key(t: Triple) -> u64 {
        (u64::from(t[0]) << 32) | (u64::from(t[1]) << 16) | u64::from(t[2])
    }

    /// Fibonacci hashing: the top bits of key * 2^64/phi.
    fn slot(key: u64, bits: u32) -> usize {
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize
    }

    fn lab(&mut self, t: Triple, s: &YuvScale, m: &Own<'_>) -> Lab {
        let key = Self::triple_key(t);
        let at = Self::slot(key, LAB_BITS);
        if self.lab_keys[at] != key {
            self.lab_keys[at] = key;
            self.lab_values[at] = lab_color(t[0], t[1], t[2], s, m);
        }
        self.lab_values[at]
    }

    fn de00(&mut self, a: Triple, b: Triple, s: &YuvScale, m: &Own<'_>) -> f32 {
        if equal_colours(a, b, s.max_sample) {
            return 0.0;
        }
        let (ka, kb) = (Self::triple_key(a), Self::triple_key(b));
        let key = (u128::from(ka) << 64) | u128::from(kb);
        let at = Self::slot(ka ^ kb.rotate_left(29), PAIR_BITS);
        if self.pair_keys[at] != key {
            let (c1, c2) = (self.lab(a, s, m), self.lab(b, s, m));
            self.pair_keys[at] = key;
            self.pair_values[at] = ciede2000(c1, c2, m);
        }
        self.pair_values[at]
    }
}

/// Whether two pixels' ΔE00 is +0.0 without computing it: equal colours
/// whose samples lie within the bit depth. Every difference ciede2000 then
/// forms is +0 (or -0, which its sum of squares turns into +0), and the
/// unit test `equal_colours_differ_by_exactly_zero` holds the full
/// computation to that. (Samples beyond the bit depth can make it NaN, as
/// in libvmaf: those take the full computation.) The GPU kernels take the
/// same shortcut.
pub fn equal_colours(a: Triple, b: Triple, max_sample: u32) -> bool {
    a == b && a.iter().all(|&v| v <= max_sample)
}

/// [`row_de00`] with [`Own`] through a band's caches.
#[allow(clippy::too_many_arguments)] // row_de00's arguments and the caches
fn row_de00_cached(
    i: usize,
    r: &Picture<'_>,
    d: &Picture<'_>,
    map: &ChromaMap,
    s: &YuvScale,
    m: &Own<'_>,
    caches: &mut Caches,
    out: &mut [f32],
) {
    for (j, o) in out.iter_mut().enumerate() {
        let y = Tap::At(0, i * map.width + j);
        let (u, v) = (map.tap(1, i, j), map.tap(2, i, j));
        let a = [r.sample(y), r.sample(u), r.sample(v)];
        let b = [d.sample(y), d.sample(u), d.sample(v)];
        *o = caches.de00(a, b, s, m);
    }
}

pub struct CiedeCpu {
    map: ChromaMap,
    scale: YuvScale,
    table: Vec<f64>,
    /// Every pixel's ΔE00 of the frame, kept from frame to frame.
    de00: Vec<f32>,
    /// Rows per band: bands are scored in parallel, each with its caches.
    band_rows: usize,
    caches: Vec<Caches>,
}

impl CiedeCpu {
    pub fn new(map: ChromaMap, bit_depth: u8) -> Self {
        let bands = rayon::current_num_threads().clamp(1, map.height);
        let band_rows = map.height.div_ceil(bands);
        let caches = (0..map.height.div_ceil(band_rows)).map(|_| Caches::new()).collect();
        CiedeCpu { map, scale: YuvScale::new(bit_depth), table: table_words(), de00: Vec::new(), band_rows, caches }
    }

    /// Every pixel's ΔE00 in raster order: bands of rows in parallel, each
    /// through its caches.
    pub fn de00(&mut self, reference: &Frame, distorted: &Frame) -> &[f32] {
        let (w, h) = (self.map.width, self.map.height);
        self.de00.resize(w * h, 0.0);
        let r = Picture { planes: [reference.plane(0), reference.plane(1), reference.plane(2)] };
        let d = Picture { planes: [distorted.plane(0), distorted.plane(1), distorted.plane(2)] };
        let (map, scale, band_rows, m) = (&self.map, &self.scale, self.band_rows, Own(&self.table));
        self.de00.par_chunks_mut(band_rows * w).zip(self.caches.par_iter_mut()).enumerate().for_each(
            |(band, (out, caches))| {
                for (k, row) in out.chunks_mut(w).enumerate() {
                    row_de00_cached(band * band_rows + k, &r, &d, map, scale, &m, caches, row);
                }
            },
        );
        &self.de00
    }

    /// [`Self::de00`] computed pixel by pixel with other math functions
    /// ([`super::math::CLibrary`]: what libvmaf computes) and no caches.
    pub fn de00_with(&mut self, reference: &Frame, distorted: &Frame, m: &impl Libm) -> &[f32] {
        let (w, h) = (self.map.width, self.map.height);
        self.de00.resize(w * h, 0.0);
        let r = Picture { planes: [reference.plane(0), reference.plane(1), reference.plane(2)] };
        let d = Picture { planes: [distorted.plane(0), distorted.plane(1), distorted.plane(2)] };
        let (map, scale) = (&self.map, &self.scale);
        self.de00.par_chunks_mut(w).enumerate().for_each(|(i, out)| row_de00(i, &r, &d, map, scale, m, out));
        &self.de00
    }
}

impl Extractor for CiedeCpu {
    fn extract(&mut self, index: usize, reference: &Frame, distorted: &Frame, out: &mut Scores) -> Result<()> {
        let pixels = self.map.width * self.map.height;
        // `de00_sum += de00` over the pixels in raster order, in double.
        let sum = self.de00(reference, distorted).iter().fold(0.0f64, |acc, &v| acc + f64::from(v));
        out.record("ciede2000", index, score(sum, pixels));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::testutil::synthetic;
    use crate::fixture::Chroma;

    #[test]
    fn equal_colours_differ_by_exactly_zero() {
        // The shortcut in `Caches::de00`: the full computation gives +0.0.
        let table = table_words();
        let m = Own(&table);
        let mut seed = 5u64;
        for bit_depth in [8u8, 10, 12, 16] {
            let s = YuvScale::new(bit_depth);
            for _ in 0..20_000 {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let t = [seed >> 16, seed >> 32, seed >> 48].map(|v| (v as u32) & ((1 << bit_depth) - 1));
                let c = lab_color(t[0], t[1], t[2], &s, &m);
                assert_eq!(ciede2000(c, c, &m).to_bits(), 0, "{t:?} at {bit_depth} bits");
            }
        }
    }

    #[test]
    fn caches_change_no_result() {
        for (bit_depth, chroma) in [(8, Chroma::Yuv420), (10, Chroma::Yuv422), (16, Chroma::Yuv444)] {
            let fx = synthetic(bit_depth, chroma, 3);
            let map = ChromaMap::new(&fx.geometry).unwrap();
            let mut cached = CiedeCpu::new(map.clone(), bit_depth);
            let mut plain = CiedeCpu::new(map, bit_depth);
            let table = table_words();
            for (r, d) in fx.reference.iter().zip(&fx.distorted) {
                let a: Vec<u32> = cached.de00(r, d).iter().map(|v| v.to_bits()).collect();
                let b: Vec<u32> = plain.de00_with(r, d, &Own(&table)).iter().map(|v| v.to_bits()).collect();
                assert_eq!(a, b, "{}", fx.geometry);
                // And with the reference as its own distortion: all zeros.
                assert!(cached.de00(r, r).iter().all(|v| v.to_bits() == 0));
            }
        }
    }
}
