//! The CPU reference of `ciede`: libvmaf ciede.c, operation for operation
//! (its mix of float and double, its order), with the math functions of
//! [`super::math`] where ciede.c calls the C library's.

use super::lanes::L;
use super::math::Libm;
#[cfg(test)]
use super::math::Own;
use super::simd::{self, Labs};
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

    /// ciede.c's luma level of sample `y`: `(y - 16 scale) / (219 scale)`.
    #[inline(always)]
    pub fn luma(&self, y: u32) -> f64 {
        (f64::from(y) - self.y_off) * self.y_mul
    }

    /// ciede.c's chroma level of sample `c`: `(c - 128 scale) / (224 scale)`.
    #[inline(always)]
    pub fn chroma(&self, c: u32) -> f64 {
        (f64::from(c) - self.c_off) * self.c_mul
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

/// ciede.c's `rgb_to_xyz_map` of the red and of the blue channel (the two
/// that depend on two samples, not three) for every 8-bit sample pair, as
/// [`lab_color`] computes them: red of (y, v) at `256 y + v`, then blue of
/// (y, u) at `65536 + 256 y + u`. The GPU terms kernel looks them up
/// instead of computing their pows (`super::gpu`).
pub fn rgb_maps_8bit(m: &impl Libm) -> Vec<f64> {
    let s = YuvScale::new(8);
    let mut out = Vec::with_capacity(2 << 16);
    for (chroma_gain, off) in [(YUV_RV, 0), (YUV_BU, 1 << 16)] {
        debug_assert_eq!(out.len(), off);
        for ys in 0..256u32 {
            let y = s.luma(ys);
            out.extend((0..256u32).map(|cs| rgb_to_xyz_map(y + chroma_gain * s.chroma(cs), m)));
        }
    }
    out
}

/// 8-bit (y, u, v) triples whose CIELAB colour takes the kernels' cube
/// root fallback (`math::cbrt_f32`: its estimate lies within
/// `ESTIMATE_MARGIN` ulps of a midpoint between floats) for x, y and z, six
/// each: 187 of the 2^24 triples do (a scan of them all, in release). The
/// GPU tests feed them to the kernels so that the fallback runs there too.
pub const CUBE_ROOT_FALLBACKS: [[u32; 3]; 18] = [
    [21, 225, 214],
    [35, 208, 131],
    [79, 33, 103],
    [116, 116, 109],
    [141, 160, 152],
    [173, 43, 232],
    [3, 193, 212],
    [25, 181, 0],
    [55, 143, 190],
    [80, 124, 69],
    [110, 191, 255],
    [139, 69, 42],
    [0, 196, 23],
    [46, 121, 14],
    [95, 103, 115],
    [130, 176, 152],
    [142, 221, 198],
    [165, 234, 39],
];

/// ciede.c `get_lab_color` of one (y, u, v) sample triple.
#[inline(always)]
pub fn lab_color(y: u32, u: u32, v: u32, s: &YuvScale, m: &impl Libm) -> Lab {
    let [r, g, b] = linear_rgb(y, u, v, s, m);
    lab_of_linear_rgb(r, g, b, m)
}

/// ciede.c `get_lab_color`'s mapped (linear) r, g, b of a sample triple.
#[inline(always)]
fn linear_rgb(y: u32, u: u32, v: u32, s: &YuvScale, m: &impl Libm) -> [f64; 3] {
    let (y, u, v) = (s.luma(y), s.chroma(u), s.chroma(v));
    // BT.709.
    let r = rgb_to_xyz_map(y + YUV_RV * v, m);
    let g = rgb_to_xyz_map(y - YUV_GU * u - YUV_GV * v, m);
    let b = rgb_to_xyz_map(y + YUV_BU * u, m);
    [r, g, b]
}

/// What ciede.c `get_lab_color` hands `xyz_to_lab_map`: X / Xn, Y and
/// Z / Zn of the linear r, g, b.
#[inline(always)]
fn scaled_xyz(r: f64, g: f64, b: f64) -> [f64; 3] {
    let x = r * XYZ_XR + g * XYZ_XG + b * XYZ_XB;
    let yy = r * XYZ_YR + g * XYZ_YG + b * XYZ_YB;
    let z = r * XYZ_ZR + g * XYZ_ZG + b * XYZ_ZB;
    [x * INV_XN, yy, z * INV_ZN]
}

/// The rest of ciede.c `get_lab_color`, from the mapped (linear) r, g, b.
#[inline(always)]
fn lab_of_linear_rgb(r: f64, g: f64, b: f64, m: &impl Libm) -> Lab {
    let [x, yy, z] = scaled_xyz(r, g, b).map(|c| f64::from(xyz_to_lab_map(c, m)));
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
pub(super) fn delta_h_prime(c1: f32, c2: f32, h1: f32, h2: f32) -> f32 {
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
pub(super) fn upcase_h_bar_prime(h1: f32, h2: f32) -> f32 {
    if f64::from(h1 - h2).abs() > PI_D {
        ((f64::from(h1 + h2) + TWO_PI) / 2.0) as f32
    } else {
        (f64::from(h1 + h2) / 2.0) as f32
    }
}

/// ciede.c `get_upcase_t`.
#[inline(always)]
fn upcase_t(h: f32, m: &impl Libm) -> f32 {
    super::math::upcase_t_sum(f64::from(h), |x| m.cos(x)) as f32
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

/// A cache slot's state: its value is ready, or the index of the job of
/// this band that will compute it.
const READY: u32 = u32::MAX;

/// A pixel pair whose ΔE00 a band computes (its pair missed the cache).
struct PairJob {
    /// Its pair-cache slot and the pixel's index in the band's output.
    slot: usize,
    out: usize,
    /// Indices of its two colours' CIELAB jobs.
    labs: [u32; 2],
}

/// A pair-cache slot: key, value and state together (one cache line to
/// fetch: the table is larger than the L2 cache).
#[derive(Clone, Copy)]
struct PairSlot {
    key: u128,
    value: f32,
    state: u32,
}

/// A pixel's ΔE00 as a band's look-up finds it.
#[derive(Clone, Copy)]
enum Outcome {
    Value(f32),
    /// The band's job that computes it.
    Job(u32),
}

/// Direct-mapped caches of one band of rows: ΔE00 by pair of sample
/// triples, and CIELAB by triple. Both are pure functions of their keys
/// (and the bit depth, fixed per extractor), so a hit returns the very bits
/// the computation would: the caches change the speed, never a result.
/// Video repeats its colours, within a frame and from frame to frame.
///
/// A band first looks every pixel up, collecting the misses as jobs (a
/// slot claimed by a job points at it, so a repeat within the band waits
/// for the same job), then computes the jobs four at a time
/// ([`super::simd`]) and fills the slots: after a band every slot is ready.
struct Caches {
    pair_slots: Vec<PairSlot>,
    lab_keys: Vec<u64>,
    lab_values: Vec<Lab>,
    lab_state: Vec<u32>,
    /// The band's jobs and their results.
    pairs: Vec<PairJob>,
    pair_results: Vec<f32>,
    lab_jobs: Vec<(Triple, usize)>,
    lab_results: Vec<Lab>,
    /// Pixels whose pair a job of this band computes: (output, job).
    repeats: Vec<(usize, u32)>,
}

const PAIR_BITS: u32 = 16;
const LAB_BITS: u32 = 15;
/// No key has all its bits set (samples have 16 bits).
const EMPTY: u64 = u64::MAX;

impl Caches {
    fn new() -> Self {
        Caches {
            pair_slots: vec![PairSlot { key: u128::MAX, value: 0.0, state: READY }; 1 << PAIR_BITS],
            lab_keys: vec![EMPTY; 1 << LAB_BITS],
            lab_values: vec![Lab { l: 0.0, a: 0.0, b: 0.0 }; 1 << LAB_BITS],
            lab_state: vec![READY; 1 << LAB_BITS],
            pairs: Vec::new(),
            pair_results: Vec::new(),
            lab_jobs: Vec::new(),
            lab_results: Vec::new(),
            repeats: Vec::new(),
        }
    }

    fn triple_key(t: Triple) -> u64 {
        (u64::from(t[0]) << 32) | (u64::from(t[1]) << 16) | u64::from(t[2])
    }

    /// Fibonacci hashing: the top bits of key * 2^64/phi.
    fn slot(key: u64, bits: u32) -> usize {
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize
    }

    /// The pair cache's slot of colours `a` and `b`, and their key.
    fn pair_slot(a: Triple, b: Triple) -> (usize, u128) {
        let (ka, kb) = (Self::triple_key(a), Self::triple_key(b));
        (Self::slot(ka ^ kb.rotate_left(29), PAIR_BITS), (u128::from(ka) << 64) | u128::from(kb))
    }

    /// Starts fetching the pair cache's slot `at`: the table is larger
    /// than the L2 cache, and a band's look-ups, one a pixel, waited on
    /// their slots for about half the band's time (perf, issue 11's
    /// anchor clip) when each came only as its turn did.
    fn prefetch(&self, at: usize) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            // SAFETY: a prefetch only hints the cache; the address is the
            // slot's own, inside the table.
            unsafe { _mm_prefetch::<_MM_HINT_T0>((&raw const self.pair_slots[at]).cast::<i8>()) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = at;
    }

    /// Looks pixel `out`'s pair of unequal colours up in its cache slot
    /// `(at, key)` ([`Self::pair_slot`]): its ΔE00 if known, else the job
    /// that computes it (a new one writes `out`; a repeat is noted).
    fn look_up(&mut self, a: Triple, b: Triple, (at, key): (usize, u128), out: usize) -> Outcome {
        let slot = &mut self.pair_slots[at];
        if slot.key == key {
            return match slot.state {
                READY => Outcome::Value(slot.value),
                job => self.repeat(job, out),
            };
        }
        let job = self.pairs.len() as u32;
        (slot.key, slot.state) = (key, job);
        let labs = [self.lab_job(a), self.lab_job(b)];
        self.pairs.push(PairJob { slot: at, out, labs });
        Outcome::Job(job)
    }

    /// Pixel `out` takes job `job`'s result.
    fn repeat(&mut self, job: u32, out: usize) -> Outcome {
        self.repeats.push((out, job));
        Outcome::Job(job)
    }

    /// The CIELAB job of triple `t`: an existing one, or a new one (whose
    /// result is the cached value where the cache knows it).
    fn lab_job(&mut self, t: Triple) -> u32 {
        let key = Self::triple_key(t);
        let at = Self::slot(key, LAB_BITS);
        if self.lab_keys[at] == key && self.lab_state[at] != READY {
            return self.lab_state[at];
        }
        let job = self.lab_jobs.len() as u32;
        if self.lab_keys[at] == key {
            // Known: a job that computes nothing (slot usize::MAX).
            self.lab_jobs.push((t, usize::MAX));
            self.lab_results.push(self.lab_values[at]);
        } else {
            self.lab_keys[at] = key;
            self.lab_state[at] = job;
            self.lab_jobs.push((t, at));
            self.lab_results.push(Lab { l: 0.0, a: 0.0, b: 0.0 });
        }
        job
    }

    /// Computes the band's jobs, fills their slots and writes every
    /// pending pixel of `out`.
    fn run_jobs(&mut self, s: &YuvScale, table: &[f64], out: &mut [f32]) {
        let todo: Vec<usize> = (0..self.lab_jobs.len()).filter(|&j| self.lab_jobs[j].1 != usize::MAX).collect();
        let triples: Vec<Triple> = todo.iter().map(|&j| self.lab_jobs[j].0).collect();
        let labs = lab_colors(&triples, s, table);
        for (&j, lab) in todo.iter().zip(labs) {
            self.lab_results[j] = lab;
            let at = self.lab_jobs[j].1;
            if self.lab_state[at] == j as u32 {
                self.lab_values[at] = lab;
                self.lab_state[at] = READY;
            }
        }
        let pairs: Vec<[Lab; 2]> = self.pairs.iter().map(|p| p.labs.map(|j| self.lab_results[j as usize])).collect();
        self.pair_results = de00s(&pairs, table);
        for (job, (p, &v)) in self.pairs.iter().zip(&self.pair_results).enumerate() {
            out[p.out] = v;
            let slot = &mut self.pair_slots[p.slot];
            if slot.state == job as u32 {
                (slot.value, slot.state) = (v, READY);
            }
        }
        for &(o, job) in &self.repeats {
            out[o] = self.pair_results[job as usize];
        }
        self.pairs.clear();
        self.lab_jobs.clear();
        self.lab_results.clear();
        self.repeats.clear();
    }
}

/// Four at a time: a slice's lanes, the last group padded with its first.
fn quads<T: Copy>(items: &[T]) -> impl Iterator<Item = [T; L]> + '_ {
    items.chunks(L).map(|c| std::array::from_fn(|l| c[l.min(c.len() - 1)]))
}

/// [`lab_color`] of every triple, four at a time.
fn lab_colors(triples: &[Triple], s: &YuvScale, table: &[f64]) -> Vec<Lab> {
    #[inline(always)]
    fn body(triples: &[Triple], s: &YuvScale, table: &[f64]) -> Vec<Lab> {
        let mut out = Vec::with_capacity(triples.len() + L);
        for q in quads(triples) {
            let labs = simd::lab_color(q, s, table);
            out.extend((0..L).map(|l| labs.lane(l)));
        }
        out.truncate(triples.len());
        out
    }
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn body_avx2(triples: &[Triple], s: &YuvScale, table: &[f64]) -> Vec<Lab> {
        body(triples, s, table)
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        return unsafe { body_avx2(triples, s, table) };
    }
    body(triples, s, table)
}

/// [`ciede2000`] of every pair of colours, four at a time.
fn de00s(pairs: &[[Lab; 2]], table: &[f64]) -> Vec<f32> {
    #[inline(always)]
    fn body(pairs: &[[Lab; 2]], table: &[f64]) -> Vec<f32> {
        let mut out = Vec::with_capacity(pairs.len() + L);
        for q in quads(pairs) {
            let (c1, c2) = (Labs::from_lanes(q.map(|p| p[0])), Labs::from_lanes(q.map(|p| p[1])));
            out.extend(simd::ciede2000(c1, c2, table).0);
        }
        out.truncate(pairs.len());
        out
    }
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn body_avx2(pairs: &[[Lab; 2]], table: &[f64]) -> Vec<f32> {
        body(pairs, table)
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        return unsafe { body_avx2(pairs, table) };
    }
    body(pairs, table)
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

/// Every pixel's ΔE00 of a band of rows from `first`, into `out` (rows of
/// `map.width`), through the band's caches.
fn band_de00(
    first: usize,
    (r, d): (&Picture<'_>, &Picture<'_>),
    map: &ChromaMap,
    s: &YuvScale,
    table: &[f64],
    caches: &mut Caches,
    out: &mut [f32],
) {
    let w = map.width;
    let mut colours: Vec<(Triple, Triple)> = Vec::with_capacity(w);
    let mut slots: Vec<(usize, u128)> = vec![(0, 0); w];
    for (k, row) in out.chunks_mut(w).enumerate() {
        let i = first + k;
        colours.clear();
        colours.extend((0..w).map(|j| {
            let y = Tap::At(0, i * w + j);
            let (u, v) = (map.tap(1, i, j), map.tap(2, i, j));
            ([r.sample(y), r.sample(u), r.sample(v)], [d.sample(y), d.sample(u), d.sample(v)])
        }));
        // The walk below looks up the pixels whose pair differs from the
        // left neighbour's (video repeats a pair along a row, in flat
        // areas, which the walk finds without the cache) and whose colours
        // are unequal. Their cache slots first, each fetched, so that the
        // walk finds them in cache.
        let walk_looks_up = |j: usize, pair: (Triple, Triple)| {
            (j == 0 || colours[j - 1] != pair) && !equal_colours(pair.0, pair.1, s.max_sample)
        };
        for (j, &pair) in colours.iter().enumerate() {
            if walk_looks_up(j, pair) {
                slots[j] = Caches::pair_slot(pair.0, pair.1);
                caches.prefetch(slots[j].0);
            }
        }
        // The pixel to the left's pair and outcome.
        let mut left: Option<(Triple, Triple, Outcome)> = None;
        for (j, (o, &(a, b))) in row.iter_mut().zip(&colours).enumerate() {
            let outcome = match left {
                Some((la, lb, Outcome::Job(job))) if la == a && lb == b => caches.repeat(job, k * w + j),
                Some((la, lb, known)) if la == a && lb == b => known,
                _ if equal_colours(a, b, s.max_sample) => Outcome::Value(0.0),
                // `walk_looks_up(j, (a, b))`: slots[j] is this pair's.
                _ => caches.look_up(a, b, slots[j], k * w + j),
            };
            if let Outcome::Value(value) = outcome {
                *o = value;
            }
            left = Some((a, b, outcome));
        }
    }
    caches.run_jobs(s, table, out);
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
        let (map, scale, band_rows, table) = (&self.map, &self.scale, self.band_rows, &self.table[..]);
        self.de00
            .par_chunks_mut(band_rows * w)
            .zip(self.caches.par_iter_mut())
            .enumerate()
            .for_each(|(band, (out, caches))| band_de00(band * band_rows, (&r, &d), map, scale, table, caches, out));
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

    /// Each of [`CUBE_ROOT_FALLBACKS`] still takes the fallback: for x,
    /// y and z in turn, six triples each.
    #[test]
    fn the_cube_root_fallback_triples_take_it() {
        use super::super::math::{ESTIMATE_MARGIN, cbrt_estimate, near_float_midpoint};
        let t = table_words();
        let (m, s) = (Own(&t), YuvScale::new(8));
        for (n, &[ys, us, vs]) in CUBE_ROOT_FALLBACKS.iter().enumerate() {
            let [r, g, b] = linear_rgb(ys, us, vs, &s, &m);
            let c = scaled_xyz(r, g, b)[n / 6];
            assert!(c > LAB_EPSILON && near_float_midpoint(cbrt_estimate(c), ESTIMATE_MARGIN), "{:?}", [ys, us, vs]);
        }
    }

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

    /// The maps the GPU terms kernel looks up give `lab_color`'s CIELAB:
    /// entries at the right index, of the right channel (every y and
    /// chroma value, the third sample varied).
    #[test]
    fn the_red_and_blue_maps_give_lab_colors_bits() {
        let table = table_words();
        let m = Own(&table);
        let maps = rgb_maps_8bit(&m);
        assert_eq!(maps.len(), 2 << 16);
        let s = YuvScale::new(8);
        for y in 0..256u32 {
            for c in 0..256u32 {
                let (u, v) = (c, (c * 7 + y) & 255);
                let (yd, ud, vd) = (s.luma(y), s.chroma(u), s.chroma(v));
                let g = rgb_to_xyz_map(yd - YUV_GU * ud - YUV_GV * vd, &m);
                let mapped =
                    lab_of_linear_rgb(maps[(y * 256 + v) as usize], g, maps[(1 << 16) + (y * 256 + u) as usize], &m);
                assert_eq!(mapped, lab_color(y, u, v, &s, &m), "({y}, {u}, {v})");
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
