//! Integer motion (libvmaf 3.2.0 integer_motion.c; the fork's
//! integer_motion_v2.c computes the same SAD): the frame difference
//! `prev - cur` blurred by the 5-tap integer filter, vertically then
//! horizontally, with the fixed-point rounding of `motion_score_pipeline_8`
//! and `_16`, and the sum of absolute values.

use super::sequence;
use super::{IntegerNames, MOTION_OPTIONS, MOTION_V2_OPTIONS, Params, checked, integer_names, min};
use crate::features::gpu::{Recent, Window};
use crate::features::{Extractor, options};
use crate::fixture::{Frame, Geometry, PairSource};
use crate::scores::Scores;
use anyhow::{Result, ensure};

/// integer_motion.h `filter`: the 5-tap Gaussian in Q16 (sums to 65536).
pub const FILTER: [i32; 5] = [3571, 16004, 26386, 16004, 3571];

/// integer_motion.c `mirror`: `-idx` before the start, `2 * size - idx - 2`
/// past the end (no edge repeat on either side).
pub fn mirror(idx: isize, size: usize) -> usize {
    let n = size as isize;
    (if idx < 0 {
        -idx
    } else if idx >= n {
        2 * n - idx - 2
    } else {
        idx
    }) as usize
}

/// `(x + 2^(s-1)) >> s` of `x = Σ FILTER[k] * v[k]`, computed exactly in
/// 32-bit integers for `|v[k]| < 2^16` and `s >= 8`, where `x` itself may
/// not fit in 32 bits (the C sums in 64 bits). With `v = 256 h + l`,
/// `0 <= l < 256`: `x = 256 A + B` (`A = Σ F h`, `|A| <= 2^24`; `B = Σ F l`,
/// `0 <= B < 2^24`), and since floor division nests,
/// `floor((256 A + B + r) / 2^s) = floor((A + floor((B + r) / 256)) / 2^(s-8))`.
#[inline(always)]
pub fn round_shift_split(v: [i32; 5], s: u32) -> i32 {
    let mut a = 0i32;
    let mut b = 0i32;
    for k in 0..5 {
        a += FILTER[k] * (v[k] >> 8);
        b += FILTER[k] * (v[k] & 255);
    }
    (a + ((b + (1 << (s - 1))) >> 8)) >> (s - 8)
}

/// Scratch of [`sad`]: one row of vertically filtered differences, and its
/// high and low bytes.
#[derive(Default)]
pub struct Scratch {
    y_row: Vec<i32>,
    hi: Vec<i32>,
    lo: Vec<i32>,
}

/// A luma plane of 8- or 16-bit samples.
#[derive(Clone, Copy)]
pub enum Luma<'a> {
    U8(&'a [u8]),
    U16(&'a [u16]),
}

/// `motion_score_pipeline_8` (8-bit) and `motion_score_pipeline_16` (10, 12
/// and 16-bit): Σ over rows of the row's Σ |blurred difference| (a wrapping
/// u32 per row, as the C's `uint32_t row_sad`), in u64.
///
/// Row by row as the C: the vertical pass of the difference into `y_row`
/// (`(Σ F[k] * diff + round) >> shift`, shift 8 at 8 bits, else the bit
/// depth), then the horizontal pass `(Σ F[k] * y_row + 2^15) >> 16`. The
/// vertical sums are exact in 32 bits below 16 bits per sample; at 16 bits
/// and in the horizontal pass [`round_shift_split`]'s halves give the
/// 64-bit result in 32-bit lanes. Integer sums: their order is free, so
/// each pass runs over whole rows and the compiler vectorises it.
pub fn sad(prev: Luma, cur: Luma, w: usize, h: usize, bpc: u8, scratch: &mut Scratch) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        return unsafe { sad_avx2(prev, cur, w, h, bpc, scratch) };
    }
    sad_rows(prev, cur, w, h, bpc, scratch)
}

/// [`sad_rows`] compiled for AVX2: 8 lanes of 32-bit integers, the same
/// integers.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn sad_avx2(prev: Luma, cur: Luma, w: usize, h: usize, bpc: u8, scratch: &mut Scratch) -> u64 {
    sad_rows(prev, cur, w, h, bpc, scratch)
}

#[inline(always)]
fn sad_rows(prev: Luma, cur: Luma, w: usize, h: usize, bpc: u8, scratch: &mut Scratch) -> u64 {
    scratch.y_row.resize(w, 0);
    scratch.hi.resize(w, 0);
    scratch.lo.resize(w, 0);
    let mut total = 0u64;
    for i in 0..h {
        let rows: [usize; 5] = std::array::from_fn(|k| mirror(i as isize - 2 + k as isize, h) * w);
        let y = &mut scratch.y_row[..w];
        let any = match (prev, cur) {
            (Luma::U8(p), Luma::U8(c)) => vertical(p, c, rows, w, 8, y),
            (Luma::U16(p), Luma::U16(c)) if bpc <= 12 => vertical(p, c, rows, w, u32::from(bpc), y),
            (Luma::U16(p), Luma::U16(c)) => vertical_split(p, c, rows, w, u32::from(bpc), y),
            _ => unreachable!("both planes have one sample type"),
        };
        // The C skips a row whose filtered differences are all 0 (its sum is 0).
        if any {
            total += u64::from(horizontal_row(y, &mut scratch.hi, &mut scratch.lo));
        }
    }
    total
}

/// The vertical pass of one row in 32 bits (8 to 12 bits per sample:
/// |Σ F * diff| <= 65536 * 4095); true when a value is not 0.
#[inline(always)]
fn vertical<T: Copy + Into<i32>>(p: &[T], c: &[T], rows: [usize; 5], w: usize, s: u32, y: &mut [i32]) -> bool {
    let [r0, r1, r2, r3, r4] = rows;
    let (p0, p1, p2, p3, p4) = (&p[r0..r0 + w], &p[r1..r1 + w], &p[r2..r2 + w], &p[r3..r3 + w], &p[r4..r4 + w]);
    let (c0, c1, c2, c3, c4) = (&c[r0..r0 + w], &c[r1..r1 + w], &c[r2..r2 + w], &c[r3..r3 + w], &c[r4..r4 + w]);
    let round = 1 << (s - 1);
    let d = |a: T, b: T| a.into() - b.into();
    let mut any = 0;
    for j in 0..w {
        let accum = FILTER[0] * (d(p0[j], c0[j]) + d(p4[j], c4[j]))
            + FILTER[1] * (d(p1[j], c1[j]) + d(p3[j], c3[j]))
            + FILTER[2] * d(p2[j], c2[j]);
        y[j] = (accum + round) >> s;
        any |= y[j];
    }
    any != 0
}

/// The 16-bit vertical pass, through [`round_shift_split`]'s halves.
#[inline(always)]
fn vertical_split(p: &[u16], c: &[u16], rows: [usize; 5], w: usize, s: u32, y: &mut [i32]) -> bool {
    let mut any = 0;
    for j in 0..w {
        let d: [i32; 5] = std::array::from_fn(|k| i32::from(p[rows[k] + j]) - i32::from(c[rows[k] + j]));
        y[j] = round_shift_split(d, s);
        any |= y[j];
    }
    any != 0
}

/// The horizontal pass of one row and its Σ |val| as the C's wrapping u32:
/// [`round_shift_split`] with the halves of the whole row computed once and
/// the symmetric taps paired.
#[inline(always)]
fn horizontal_row(y: &[i32], hi: &mut [i32], lo: &mut [i32]) -> u32 {
    let w = y.len();
    let at = |j: usize| -> i32 {
        let v: [i32; 5] = std::array::from_fn(|k| y[mirror(j as isize - 2 + k as isize, w)]);
        round_shift_split(v, 16)
    };
    let mut row = 0u32;
    let edge = w.min(2);
    for j in 0..edge {
        row = row.wrapping_add(at(j).unsigned_abs());
    }
    if w > 4 {
        let (hi, lo) = (&mut hi[..w], &mut lo[..w]);
        for j in 0..w {
            hi[j] = y[j] >> 8;
            lo[j] = y[j] & 255;
        }
        let n = w - 4;
        let (h0, h1, h2, h3, h4) = (&hi[0..n], &hi[1..n + 1], &hi[2..n + 2], &hi[3..n + 3], &hi[4..n + 4]);
        let (l0, l1, l2, l3, l4) = (&lo[0..n], &lo[1..n + 1], &lo[2..n + 2], &lo[3..n + 3], &lo[4..n + 4]);
        for j in 0..n {
            let a = FILTER[0] * (h0[j] + h4[j]) + FILTER[1] * (h1[j] + h3[j]) + FILTER[2] * h2[j];
            let b = FILTER[0] * (l0[j] + l4[j]) + FILTER[1] * (l1[j] + l3[j]) + FILTER[2] * l2[j];
            let val = (a + ((b + (1 << 15)) >> 8)) >> 8;
            row = row.wrapping_add(val.unsigned_abs());
        }
    }
    for j in w.saturating_sub(2).max(edge)..w {
        row = row.wrapping_add(at(j).unsigned_abs());
    }
    row
}

/// The score libvmaf writes from a SAD: `MIN(sad / 256 / (w * h) * fps_weight, max_val)`.
pub fn score(sad: u64, w: usize, h: usize, p: &Params) -> f64 {
    min(sad as f64 / 256.0 / (w * h) as f64 * p.fps_weight, p.max_val)
}

/// What `motion` and `motion_v2` share: the options read, the names, and
/// the sequence rules.
pub struct Integer {
    pub v2: bool,
    pub params: Params,
    pub five_frame_window: bool,
    pub moving_average: bool,
    pub names: IntegerNames,
}

impl Integer {
    pub fn new(options: &crate::features::Options, v2: bool) -> Result<Integer> {
        let (feature, defs) =
            if v2 { (&super::MOTION_V2, MOTION_V2_OPTIONS) } else { (&super::MOTION, MOTION_OPTIONS) };
        let params = checked(feature.name, options, defs)?;
        Ok(Integer {
            v2,
            params,
            five_frame_window: options::get_bool(options, defs, "motion_five_frame_window")?,
            moving_average: options::get_bool(options, defs, "motion_moving_average")?,
            names: integer_names(options, v2)?,
        })
    }

    /// The frame a frame's score compares with: the previous one, or with
    /// the five-frame window the one before it.
    pub fn back(&self) -> usize {
        if self.five_frame_window { 2 } else { 1 }
    }

    /// Whether frame `index` is scored (libvmaf writes 0 before `min_idx`
    /// and under `motion_force_zero`).
    pub fn scores(&self, index: usize) -> bool {
        !self.params.force_zero && index >= self.back()
    }

    /// `extract`'s writes for frame `index` (`score` 0 where unscored).
    pub fn record(&self, index: usize, score: f64, out: &mut Scores) {
        out.record(&self.names.sad, index, score);
        if let Some(debug) = &self.names.debug {
            out.record(debug, index, score);
        }
    }

    /// `flush`: motion2 and motion3 from every frame's SAD score.
    pub fn finish_sequence(&self, scores: &mut Scores, frames: usize) -> Result<()> {
        let sad = scores.get(&self.names.sad).unwrap_or(&[]);
        ensure!(
            sad.len() == frames && sad.iter().all(|v| v.is_finite()),
            "motion: {} of {frames} frames have a SAD score",
            sad.iter().filter(|v| v.is_finite()).count()
        );
        let s = if self.v2 {
            sequence::integer_v2(sad, &self.params, self.moving_average)
        } else {
            sequence::integer(sad, &self.params, self.five_frame_window, self.moving_average)
        };
        for (i, (m2, m3)) in s.motion2.iter().zip(&s.motion3).enumerate() {
            scores.record(&self.names.motion2, i, *m2);
            scores.record(&self.names.motion3, i, *m3);
        }
        Ok(())
    }
}

/// Luma planes of the reference read from a source, the last few kept so a
/// frame read as "current" is not read again as "previous".
pub struct LumaCache {
    entries: Vec<(Option<usize>, Vec<u8>)>,
}

impl LumaCache {
    pub fn new(slots: usize) -> Self {
        LumaCache { entries: (0..slots).map(|_| (None, Vec::new())).collect() }
    }

    /// Makes frame `index`'s luma resident and returns its slot; `keep` is a
    /// slot that must not be evicted.
    pub fn load(&mut self, source: &dyn PairSource, index: usize, keep: Option<usize>) -> Result<usize> {
        if let Some(i) = self.entries.iter().position(|(f, _)| *f == Some(index)) {
            return Ok(i);
        }
        // Evict the oldest frame (or an empty slot) other than `keep`.
        let victim = (0..self.entries.len())
            .filter(|&i| Some(i) != keep)
            .min_by_key(|&i| self.entries[i].0.map_or(0, |f| f + 1))
            .unwrap_or(0);
        let entry = &mut self.entries[victim];
        entry.0 = None;
        super::read_planes(source, index, 1, &mut entry.1)?;
        entry.0 = Some(index);
        Ok(victim)
    }

    pub fn bytes(&self, slot: usize) -> &[u8] {
        &self.entries[slot].1
    }
}

/// A luma plane's bytes as samples (16-bit samples are little-endian; the
/// hosts we run on are).
pub fn luma(bytes: &[u8], bit_depth: u8) -> Luma<'_> {
    if bit_depth == 8 { Luma::U8(bytes) } else { Luma::U16(bytemuck::cast_slice(bytes)) }
}

/// The CPU extractor of `motion` (and with `v2` of `motion_v2`).
pub fn cpu_extractor(geometry: &Geometry, options: &crate::features::Options, v2: bool) -> Result<Box<dyn Extractor>> {
    let motion = Integer::new(options, v2)?;
    let window = Window { lookback: motion.back() };
    Ok(Box::new(IntegerCpu {
        motion,
        geometry: *geometry,
        cache: LumaCache::new(window.lookback + 1),
        scratch: Scratch::default(),
        recent: Recent::new(window),
    }))
}

struct IntegerCpu {
    motion: Integer,
    geometry: Geometry,
    cache: LumaCache,
    scratch: Scratch,
    recent: Recent,
}

impl Extractor for IntegerCpu {
    fn extract(&mut self, index: usize, reference: &Frame, distorted: &Frame, out: &mut Scores) -> Result<()> {
        let mut recent = std::mem::take(&mut self.recent);
        recent.push(index, reference, distorted);
        let result = self.extract_at(index, &recent, out);
        self.recent = recent;
        result
    }

    fn window(&self) -> Option<Window> {
        Some(Window { lookback: self.motion.back() })
    }

    fn extract_at(&mut self, index: usize, source: &dyn PairSource, out: &mut Scores) -> Result<()> {
        let mut score = 0.0;
        if self.motion.scores(index) {
            let g = self.geometry;
            let cur = self.cache.load(source, index, None)?;
            let prev = self.cache.load(source, index - self.motion.back(), Some(cur))?;
            let (w, h) = (g.width as usize, g.height as usize);
            let (p, c) = (luma(self.cache.bytes(prev), g.bit_depth), luma(self.cache.bytes(cur), g.bit_depth));
            score = self::score(sad(p, c, w, h, g.bit_depth, &mut self.scratch), w, h, &self.motion.params);
        }
        self.motion.record(index, score, out);
        Ok(())
    }

    fn finish_sequence(&self, scores: &mut Scores, frames: usize) -> Result<()> {
        self.motion.finish_sequence(scores, frames)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The C loops, 64-bit sums and all: the oracle.
    fn sad_c(prev: &[i32], cur: &[i32], w: usize, h: usize, bpc: u32) -> u64 {
        let (shift, round) = if bpc == 8 { (8, 1i64 << 7) } else { (bpc, 1i64 << (bpc - 1)) };
        let mut total = 0u64;
        for i in 0..h {
            let y: Vec<i64> = (0..w)
                .map(|j| {
                    let acc: i64 = (0..5)
                        .map(|k| {
                            let r = mirror(i as isize - 2 + k as isize, h);
                            i64::from(FILTER[k]) * i64::from(prev[r * w + j] - cur[r * w + j])
                        })
                        .sum();
                    (acc + round) >> shift
                })
                .collect();
            let mut row = 0u32;
            for j in 0..w {
                let acc: i64 = (0..5).map(|k| i64::from(FILTER[k]) * y[mirror(j as isize - 2 + k as isize, w)]).sum();
                row = row.wrapping_add((((acc + (1 << 15)) >> 16) as i32).unsigned_abs());
            }
            total += u64::from(row);
        }
        total
    }

    #[test]
    fn split_rounding_equals_64_bit_rounding() {
        let mut seed = 7u64;
        let mut next = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((seed >> 33) % 131071) as i32 - 65535
        };
        let extremes = [-65535, -65536 + 1, -256, -255, -1, 0, 1, 255, 256, 65535];
        for s in [8, 10, 12, 16] {
            let check = |v: [i32; 5]| {
                let x: i64 = (0..5).map(|k| i64::from(FILTER[k]) * i64::from(v[k])).sum();
                assert_eq!(i64::from(round_shift_split(v, s)), (x + (1 << (s - 1))) >> s, "{v:?} >> {s}");
            };
            for _ in 0..20000 {
                check(std::array::from_fn(|_| next()));
            }
            for a in extremes {
                for b in extremes {
                    check([a, b, a, b, a]);
                    check([a, a, a, a, a]);
                    check([b, a, b, b, a]);
                }
            }
        }
    }

    #[test]
    fn sad_is_the_c_pipeline_at_every_bit_depth_and_size() {
        let mut seed = 11u64;
        for (w, h) in [(3, 3), (4, 7), (5, 5), (17, 9), (64, 3)] {
            for bpc in [8u8, 10, 12, 16] {
                let max = (1u32 << bpc) - 1;
                let mut plane = || -> Vec<i32> {
                    (0..w * h)
                        .map(|_| {
                            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
                            // Extremes often: the 16-bit sums then need 64 bits.
                            match (seed >> 60) % 4 {
                                0 => 0,
                                1 => max as i32,
                                _ => ((seed >> 20) as u32 % (max + 1)) as i32,
                            }
                        })
                        .collect()
                };
                let (p, c) = (plane(), plane());
                let want = sad_c(&p, &c, w, h, u32::from(bpc));
                let got = if bpc == 8 {
                    let (p8, c8): (Vec<u8>, Vec<u8>) =
                        (p.iter().map(|&v| v as u8).collect(), c.iter().map(|&v| v as u8).collect());
                    sad(Luma::U8(&p8), Luma::U8(&c8), w, h, bpc, &mut Scratch::default())
                } else {
                    let (p16, c16): (Vec<u16>, Vec<u16>) =
                        (p.iter().map(|&v| v as u16).collect(), c.iter().map(|&v| v as u16).collect());
                    sad(Luma::U16(&p16), Luma::U16(&c16), w, h, bpc, &mut Scratch::default())
                };
                assert_eq!(got, want, "{w}x{h} {bpc}-bit");
            }
        }
    }

    #[test]
    fn identical_frames_have_no_motion() {
        let p = vec![77u8; 12 * 5];
        assert_eq!(sad(Luma::U8(&p), Luma::U8(&p), 12, 5, 8, &mut Scratch::default()), 0);
    }

    #[test]
    fn the_mirror_does_not_repeat_the_edge() {
        assert_eq!([mirror(-2, 5), mirror(-1, 5), mirror(5, 5), mirror(6, 5)], [2, 1, 3, 2]);
        assert_eq!([mirror(-2, 3), mirror(3, 3), mirror(4, 3)], [2, 1, 0]);
    }
}
