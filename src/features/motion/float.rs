//! `float_motion` (libvmaf float_motion.c, motion.c, motion_tools.h,
//! common/convolution.c, vif_tools.c): each reference frame as floats
//! (`picture_copy`, offset -128), blurred by a separable filter (vertical,
//! then horizontal, in f32), and the mean absolute difference of two
//! blurred frames, summed in f32 row by row as `vmaf_image_sad_c` does.

use super::integer::Luma;
use super::sequence;
use super::{FLOAT_MOTION_OPTIONS, FloatNames, Params, checked, float_names};
use crate::features::gpu::{Recent, Window};
use crate::features::picture::scaler;
use crate::features::{Extractor, Options, options};
use crate::fixture::{Frame, Geometry, PairSource};
use crate::scores::Scores;
use anyhow::{Result, ensure};

/// motion_tools.h `FILTER_5_s`, with libvmaf's digits (each literal
/// rounds to the same f32 as in C).
#[allow(clippy::excessive_precision)]
pub const FILTER_5: [f32; 5] = [0.054488685, 0.244201342, 0.402619947, 0.244201342, 0.054488685];
/// motion_tools.h `FILTER_3_s`, with libvmaf's digits.
#[allow(clippy::excessive_precision)]
pub const FILTER_3: [f32; 3] = [0.166378498, 0.667243004, 0.166378498];
/// motion_tools.h `FILTER_5_NO_OP_s`.
pub const FILTER_5_NO_OP: [f32; 5] = [0.0, 0.0, 1.0, 0.0, 0.0];

/// vif_tools.h VIF_BILINEAR_MAX_WIDTH.
pub const BILINEAR_MAX_WIDTH: usize = 7680;

/// `(int)(n * 0.5 + 0.5)`: motion.c's scale-1 size.
pub fn half(n: usize) -> usize {
    (n as f64 * 0.5 + 0.5) as usize
}

/// The options that shape float_motion's arithmetic.
#[derive(Debug, Clone, Copy)]
pub struct FloatOptions {
    pub params: Params,
    pub add_scale1: bool,
    pub add_uv: bool,
    pub filter_size: i64,
}

impl FloatOptions {
    pub fn read(options: &Options) -> Result<FloatOptions> {
        let d = FLOAT_MOTION_OPTIONS;
        Ok(FloatOptions {
            params: super::Params::read(options, d)?,
            add_scale1: options::get_bool(options, d, "motion_add_scale1")?,
            add_uv: options::get_bool(options, d, "motion_add_uv")?,
            filter_size: options::get_int(options, d, "motion_filter_size")?,
        })
    }

    /// float_motion.c `extract`: size 1 the no-op filter, 3 the 3-tap one,
    /// anything else the 5-tap one.
    pub fn taps(&self) -> &'static [f32] {
        match self.filter_size {
            1 => &FILTER_5_NO_OP,
            3 => &FILTER_3,
            _ => &FILTER_5,
        }
    }

    /// The planes scored: luma, and with `motion_add_uv` both chroma planes.
    pub fn planes(&self) -> usize {
        if self.add_uv { 3 } else { 1 }
    }
}

/// convolution_internal.h `convolution_edge_s`'s mirror: `-i` before the
/// start, `n - (i - n + 2)` past the end.
pub fn mirror(i: isize, n: usize) -> usize {
    let n = n as isize;
    (if i < 0 {
        -i
    } else if i >= n {
        n - (i - n + 2)
    } else {
        i
    }) as usize
}

/// Rows of a [`blur_plane`] strip: eight, the lanes of the SAD's vectors.
const STRIP: usize = 8;

/// Scratch of [`blur_plane`]: a strip's picture rows and vertical pass.
#[derive(Default)]
pub struct Strips {
    picture: Vec<f32>,
    tmp: Vec<f32>,
}

/// One plane through float_motion's arithmetic: `picture_copy` (`v /
/// scaler - 128`), `convolution_f32_c_s` into `out` (its C path, the one
/// libvmaf's plain-C recordings ran: `convolution_y_c_s`, then
/// `convolution_x_c_s`), and, given the previous frame's blurred plane,
/// the scale-0 SAD sum of |prev - out| ([`sad_sum`]; 0 without).
///
/// Per pixel the operations are libvmaf's:
/// `accum = 0; accum += filter[k] * src[..]` for k in order, in f32
/// without FMA, borders mirrored; each row's SAD in pixel order, the rows
/// in order ([`sad_rows`]). They run a
/// strip of eight rows at a time (the picture rows the strip reads, its
/// vertical pass, its horizontal pass, its SAD), so a strip's data stays
/// in the core's cache, and the compiler vectorises each row across pixels.
pub fn blur_plane(
    filter: &[f32],
    samples: Luma,
    bit_depth: u8,
    (w, h): (usize, usize),
    strips: &mut Strips,
    out: &mut [f32],
    prev: Option<&[f32]>,
) -> f32 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        return unsafe { blur_plane_avx2(filter, samples, bit_depth, (w, h), strips, out, prev) };
    }
    blur_plane_strips(filter, samples, bit_depth, (w, h), strips, out, prev)
}

/// [`blur_plane_strips`] compiled for AVX2: 8 lanes, the same IEEE
/// operations (no FMA), so the same bits.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn blur_plane_avx2(
    filter: &[f32],
    samples: Luma,
    bit_depth: u8,
    dims: (usize, usize),
    strips: &mut Strips,
    out: &mut [f32],
    prev: Option<&[f32]>,
) -> f32 {
    blur_plane_strips(filter, samples, bit_depth, dims, strips, out, prev)
}

#[inline(always)]
fn blur_plane_strips(
    filter: &[f32],
    samples: Luma,
    bit_depth: u8,
    (w, h): (usize, usize),
    strips: &mut Strips,
    out: &mut [f32],
    prev: Option<&[f32]>,
) -> f32 {
    let radius = filter.len() / 2;
    strips.picture.resize((STRIP + 2 * radius) * w, 0.0);
    strips.tmp.resize(STRIP * w, 0.0);
    let inv = 1.0 / scaler(bit_depth);
    let mut sad = 0.0f32;
    for r in (0..h).step_by(STRIP) {
        let n = STRIP.min(h - r);
        // picture_copy of the rows r - radius .. r + n + radius, mirrored.
        for (t, dst) in strips.picture.chunks_exact_mut(w).take(n + 2 * radius).enumerate() {
            let src = mirror(r as isize - radius as isize + t as isize, h) * w;
            match samples {
                Luma::U8(v) => {
                    for (o, &v) in dst.iter_mut().zip(&v[src..src + w]) {
                        *o = f32::from(v) + -128.0;
                    }
                }
                // v / scaler as v * (1 / scaler): the scaler is a power of two.
                Luma::U16(v) => {
                    for (o, &v) in dst.iter_mut().zip(&v[src..src + w]) {
                        *o = f32::from(v) * inv + -128.0;
                    }
                }
            }
        }
        // convolution_y_c_s
        for (i, tmp) in strips.tmp.chunks_exact_mut(w).take(n).enumerate() {
            let mut rows: [&[f32]; 5] = [&[]; 5];
            for (k, row) in rows.iter_mut().enumerate().take(filter.len()) {
                *row = &strips.picture[(i + k) * w..(i + k + 1) * w];
            }
            taps_row(filter, &rows[..filter.len()], tmp);
        }
        // convolution_x_c_s
        let blurred = &mut out[r * w..(r + n) * w];
        for (row, dst) in strips.tmp.chunks_exact(w).zip(blurred.chunks_exact_mut(w)) {
            if w > 2 * radius {
                let mut rows: [&[f32]; 5] = [&[]; 5];
                for (k, shifted) in rows.iter_mut().enumerate().take(filter.len()) {
                    *shifted = &row[k..k + w - 2 * radius];
                }
                taps_row(filter, &rows[..filter.len()], &mut dst[radius..w - radius]);
            }
            let edge = |j: usize| -> f32 {
                let mut accum = 0.0f32;
                for (k, &f) in filter.iter().enumerate() {
                    accum += f * row[mirror(j as isize - radius as isize + k as isize, w)];
                }
                accum
            };
            for j in (0..w.min(radius)).chain(w.saturating_sub(radius).max(radius.min(w))..w) {
                dst[j] = edge(j);
            }
        }
        if let Some(prev) = prev {
            sad_rows(&prev[r * w..(r + n) * w], blurred, w, &mut sad);
        }
    }
    sad
}

/// One output row of a 5- or 3-tap filter over `rows` (`taps` slices of
/// at least `out.len()` values): `0 + f0 * r0[j] + f1 * r1[j] + ...`, left
/// to right.
#[inline(always)]
fn taps_row(filter: &[f32], rows: &[&[f32]], out: &mut [f32]) {
    let n = out.len();
    if let ([f0, f1, f2, f3, f4], [r0, r1, r2, r3, r4]) = (filter, rows) {
        let (r0, r1, r2, r3, r4) = (&r0[..n], &r1[..n], &r2[..n], &r3[..n], &r4[..n]);
        for j in 0..n {
            out[j] = 0.0 + f0 * r0[j] + f1 * r1[j] + f2 * r2[j] + f3 * r3[j] + f4 * r4[j];
        }
    } else if let ([f0, f1, f2], [r0, r1, r2]) = (filter, rows) {
        let (r0, r1, r2) = (&r0[..n], &r1[..n], &r2[..n]);
        for j in 0..n {
            out[j] = 0.0 + f0 * r0[j] + f1 * r1[j] + f2 * r2[j];
        }
    } else {
        for (j, o) in out.iter_mut().enumerate() {
            *o = filter.iter().zip(rows).fold(0.0f32, |acc, (&f, r)| acc + f * r[j]);
        }
    }
}

/// `vmaf_image_sad_c`'s scale-0 sum of two planes: per row `accum_line +=
/// fabs(a - b)` left to right in f32 (the C's `fabs` works in double on a
/// float difference and rounds back: the same bits, as a sum of two floats
/// rounded once from double is correctly rounded), then `accum +=
/// accum_line` row by row.
pub fn sad_sum(a: &[f32], b: &[f32], w: usize, h: usize) -> f32 {
    let mut accum = 0.0f32;
    for r in (0..h).step_by(STRIP) {
        let n = STRIP.min(h - r);
        sad_rows(&a[r * w..(r + n) * w], &b[r * w..(r + n) * w], w, &mut accum);
    }
    accum
}

/// Adds the row sums of |a - b| over a few rows of width `w` to `accum`,
/// in row order. The adds within a row depend on each other, so eight rows
/// run side by side in the lanes of one vector: each 8x8 block of |a - b|
/// is transposed so that column `j` of the eight rows is one vector, added
/// to the eight running sums; every row's sum still takes its pixels in
/// order. Fewer than eight rows are summed one by one.
#[inline(always)]
pub fn sad_rows(a: &[f32], b: &[f32], w: usize, accum: &mut f32) {
    let rows = a.len() / w;
    if rows != STRIP {
        for (x, y) in a.chunks_exact(w).zip(b.chunks_exact(w)) {
            *accum += row_sum(x, y);
        }
        return;
    }
    let ra: [&[f32]; 8] = std::array::from_fn(|k| &a[k * w..(k + 1) * w]);
    let rb: [&[f32]; 8] = std::array::from_fn(|k| &b[k * w..(k + 1) * w]);
    let mut acc = [0.0f32; 8];
    let mut j = 0;
    while j + 8 <= w {
        let mut block = [[0.0f32; 8]; 8];
        for k in 0..8 {
            let (x, y) = (&ra[k][j..j + 8], &rb[k][j..j + 8]);
            for c in 0..8 {
                block[c][k] = (x[c] - y[c]).abs();
            }
        }
        for column in &block {
            for k in 0..8 {
                acc[k] += column[k];
            }
        }
        j += 8;
    }
    for k in 0..8 {
        for c in j..w {
            acc[k] += (ra[k][c] - rb[k][c]).abs();
        }
        *accum += acc[k];
    }
}

/// One row of [`sad_sum`], in pixel order.
pub fn row_sum(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).fold(0.0f32, |acc, (&x, &y)| acc + (x - y).abs())
}

/// `vif_scale_frame_bilinear_precompute_columns_s` (and its row twin):
/// `xx = (x + 0.5) * ratio - 0.5` in double rounded to float, the two
/// neighbours `mirror(floor(xx))`, `mirror(ceil(xx))` (vif_tools.c's float
/// mirror into [0, n - 1]) and the weight `xx - x1` in float.
pub fn bilinear_axis(src: usize, dst: usize) -> Vec<(usize, usize, f32)> {
    let ratio = src as f32 / dst as f32;
    let right = (src - 1) as f32;
    let m = |i: f32| -> f32 {
        if i < 0.0 {
            -i
        } else if i > right {
            2.0 * right - i
        } else {
            i
        }
    };
    (0..dst)
        .map(|x| {
            let xx = ((x as f64 + 0.5) * f64::from(ratio) - 0.5) as f32;
            let x1 = m(f64::from(xx).floor() as f32) as i32;
            let x2 = m(f64::from(xx).ceil() as f32) as i32;
            (x1 as usize, x2 as usize, xx - x1 as f32)
        })
        .collect()
}

/// One bilinear sample (`vif_scale_frame_bilinear_apply_s`), left to right
/// in f32: `(1-dy)(1-dx) a + (1-dy) dx b + dy (1-dx) c + dy dx d`.
#[inline(always)]
pub fn bilinear(dx: f32, dy: f32, a: f32, b: f32, c: f32, d: f32) -> f32 {
    (1.0 - dy) * (1.0 - dx) * a + (1.0 - dy) * dx * b + dy * (1.0 - dx) * c + dy * dx * d
}

/// `vif_scale_frame_s(vif_scale_bilinear, ...)` of a `w x h` plane to
/// `dw x dh` (a copy when the sizes are equal).
pub fn scale_bilinear(src: &[f32], w: usize, h: usize, dw: usize, dh: usize, dst: &mut Vec<f32>) {
    dst.clear();
    if w == dw && h == dh {
        dst.extend_from_slice(&src[..w * h]);
        return;
    }
    let cols = bilinear_axis(w, dw);
    for &(y1, y2, dy) in &bilinear_axis(h, dh) {
        let (r1, r2) = (&src[y1 * w..(y1 + 1) * w], &src[y2 * w..(y2 + 1) * w]);
        dst.extend(cols.iter().map(|&(x1, x2, dx)| bilinear(dx, dy, r1[x1], r1[x2], r2[x1], r2[x2])));
    }
}

/// float_motion's options and metric names, and its sequence rules, shared
/// by the CPU extractor and the GPU pipeline.
pub struct FloatMotion {
    pub options: FloatOptions,
    pub names: FloatNames,
}

/// The per-frame score float_motion's sequence rules take (not a metric:
/// [`FloatMotion::finish_sequence`] consumes it).
pub const RAW_SCORE: &str = "float_motion: SAD of frames i-1 and i (intermediate)";

impl FloatMotion {
    pub fn new(options: &Options) -> Result<FloatMotion> {
        checked("float_motion", options, FLOAT_MOTION_OPTIONS)?;
        Ok(FloatMotion { options: FloatOptions::read(options)?, names: float_names(options)? })
    }

    /// `flush`, and `extract`'s writes one frame late: every metric from
    /// every frame's raw score.
    pub fn finish_sequence(&self, scores: &mut Scores, frames: usize) -> Result<()> {
        let raw = scores.take(RAW_SCORE).unwrap_or_default();
        let p = &self.options.params;
        ensure!(
            p.force_zero || (raw.len() == frames && raw.iter().all(|v| v.is_finite())),
            "float_motion: {} of {frames} frames have a score",
            raw.iter().filter(|v| v.is_finite()).count()
        );
        let raw = if p.force_zero { vec![0.0; frames] } else { raw };
        let (motion, s) = sequence::float(&raw, p);
        for (i, &m) in motion.iter().enumerate().take(frames) {
            if let Some(name) = &self.names.motion {
                scores.record(name, i, m);
            }
            scores.record(&self.names.motion2, i, s.motion2[i]);
            scores.record(&self.names.motion3, i, s.motion3[i]);
        }
        Ok(())
    }
}

pub fn cpu_extractor(geometry: &Geometry, options: &Options) -> Result<Box<dyn Extractor>> {
    let motion = FloatMotion::new(options)?;
    let samples: usize = (0..motion.options.planes()).map(|p| geometry.plane_samples(p)).sum();
    Ok(Box::new(FloatCpu {
        motion,
        geometry: *geometry,
        bytes: Vec::new(),
        strips: Strips::default(),
        blurred: [(None, vec![0.0; samples]), (None, vec![0.0; samples])],
        scaled: Default::default(),
        recent: Recent::new(Window { lookback: 1 }),
    }))
}

struct FloatCpu {
    motion: FloatMotion,
    geometry: Geometry,
    bytes: Vec<u8>,
    strips: Strips,
    /// The blurred planes (back to back) of the last two frames blurred:
    /// frames in order blur each frame once.
    blurred: [(Option<usize>, Vec<f32>); 2],
    scaled: [Vec<f32>; 2],
    recent: Recent,
}

impl FloatCpu {
    /// Blurs frame `index`'s planes into the slot not holding `prev` and,
    /// given the slot of the previous frame's blur, returns each plane's
    /// scale-0 SAD sum against it.
    fn blur(&mut self, source: &dyn PairSource, index: usize, prev: Option<usize>) -> Result<(usize, [f32; 3])> {
        let slot = if prev == Some(0) { 1 } else { 0 };
        let g = self.geometry;
        let planes = self.motion.options.planes();
        super::read_planes(source, index, planes, &mut self.bytes)?;
        let [s0, s1] = &mut self.blurred;
        let (out, other) = if slot == 0 { (s0, &*s1) } else { (s1, &*s0) };
        out.0 = None;
        let mut sums = [0.0f32; 3];
        for (p, sum) in sums.iter_mut().enumerate().take(planes) {
            let (w, h) = g.plane_dims(p);
            let at = g.plane_offset(p);
            let samples = super::integer::luma(&self.bytes, g.bit_depth);
            let samples = match samples {
                Luma::U8(v) => Luma::U8(&v[at..at + w * h]),
                Luma::U16(v) => Luma::U16(&v[at..at + w * h]),
            };
            let dst = &mut out.1[at..at + w * h];
            let before = prev.map(|_| &other.1[at..at + w * h]);
            *sum = blur_plane(self.motion.options.taps(), samples, g.bit_depth, (w, h), &mut self.strips, dst, before);
        }
        out.0 = Some(index);
        Ok((slot, sums))
    }
}

impl Extractor for FloatCpu {
    fn extract(&mut self, index: usize, reference: &Frame, distorted: &Frame, out: &mut Scores) -> Result<()> {
        let mut recent = std::mem::take(&mut self.recent);
        recent.push(index, reference, distorted);
        let result = self.extract_at(index, &recent, out);
        self.recent = recent;
        result
    }

    fn window(&self) -> Option<Window> {
        Some(Window { lookback: 1 })
    }

    fn extract_at(&mut self, index: usize, source: &dyn PairSource, out: &mut Scores) -> Result<()> {
        if self.motion.options.params.force_zero {
            return Ok(());
        }
        let mut score = 0.0f64;
        if index > 0 {
            let prev = match self.blurred.iter().position(|(f, _)| *f == Some(index - 1)) {
                Some(slot) => slot,
                None => self.blur(source, index - 1, None)?.0,
            };
            let (cur, sums) = self.blur(source, index, Some(prev))?;
            // compute_motion(blur[i - 1], blur[i]) per plane, added in double.
            let g = self.geometry;
            for (p, &sum) in sums.iter().enumerate().take(self.motion.options.planes()) {
                let (w, h) = g.plane_dims(p);
                let mut s = sum / (w * h) as f32;
                if self.motion.options.add_scale1 {
                    let at = g.plane_offset(p);
                    let (a, b) = (&self.blurred[prev].1[at..at + w * h], &self.blurred[cur].1[at..at + w * h]);
                    let (sw, sh) = (half(w), half(h));
                    let [sa, sb] = &mut self.scaled;
                    scale_bilinear(a, w, h, sw, sh, sa);
                    scale_bilinear(b, w, h, sw, sh, sb);
                    s += sad_sum(sa, sb, sw, sh) / (sw * sh) as f32;
                }
                score += f64::from(s);
            }
        }
        out.record(RAW_SCORE, index, score);
        Ok(())
    }

    fn finish_sequence(&self, scores: &mut Scores, frames: usize) -> Result<()> {
        self.motion.finish_sequence(scores, frames)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// convolution_y_c_s then convolution_x_c_s, pixel at a time, with
    /// their border loops: the oracle.
    fn blur_c(filter: &[f32], src: &[f32], w: usize, h: usize) -> Vec<f32> {
        let r = filter.len() / 2;
        let conv = |horizontal: bool, src: &[f32], i: usize, j: usize| -> f32 {
            let mut accum = 0.0f32;
            for (k, &f) in filter.iter().enumerate() {
                let (ii, jj) = if horizontal {
                    (i, mirror(j as isize - r as isize + k as isize, w))
                } else {
                    (mirror(i as isize - r as isize + k as isize, h), j)
                };
                accum += f * src[ii * w + jj];
            }
            accum
        };
        let tmp: Vec<f32> = (0..w * h).map(|p| conv(false, src, p / w, p % w)).collect();
        (0..w * h).map(|p| conv(true, &tmp, p / w, p % w)).collect()
    }

    #[test]
    fn strip_blur_and_sad_are_bit_identical_to_the_c_loops() {
        for (w, h) in [(3, 3), (2, 2), (4, 9), (17, 5), (40, 11), (9, 24)] {
            for bit_depth in [8u8, 10, 16] {
                let max = (1u32 << bit_depth) - 1;
                let sample = |k: usize, salt: usize| ((k * 7919 + salt * 104729) % (max as usize + 1)) as u16;
                let (p, c): (Vec<u16>, Vec<u16>) =
                    ((0..w * h).map(|k| sample(k, 1)).collect(), (0..w * h).map(|k| sample(k, 2)).collect());
                // picture_copy, as the C computes it.
                let floats =
                    |v: &[u16]| -> Vec<f32> { v.iter().map(|&v| f32::from(v) / scaler(bit_depth) + -128.0).collect() };
                let (p8, c8): (Vec<u8>, Vec<u8>) =
                    (p.iter().map(|&v| v as u8).collect(), c.iter().map(|&v| v as u8).collect());
                let luma = |v16: &'_ [u16], v8: &'_ [u8]| -> Vec<f32> {
                    if bit_depth == 8 { v8.iter().map(|&v| f32::from(v) + -128.0).collect() } else { floats(v16) }
                };
                for taps in [&FILTER_5[..], &FILTER_3[..], &FILTER_5_NO_OP[..]] {
                    if w <= taps.len() / 2 || h <= taps.len() / 2 {
                        continue;
                    }
                    let (want_p, want_c) = (blur_c(taps, &luma(&p, &p8), w, h), blur_c(taps, &luma(&c, &c8), w, h));
                    let want_sad = sad_c(&want_p, &want_c, w, h);
                    let plane = |v16: &'_ [u16], v8: &'_ [u8], out: &mut [f32], prev: Option<&[f32]>| -> f32 {
                        let samples = if bit_depth == 8 { Luma::U8(v8) } else { Luma::U16(v16) };
                        blur_plane(taps, samples, bit_depth, (w, h), &mut Strips::default(), out, prev)
                    };
                    let (mut bp, mut bc) = (vec![0.0; w * h], vec![0.0; w * h]);
                    plane(&p, &p8, &mut bp, None);
                    let sad = plane(&c, &c8, &mut bc, Some(&bp));
                    let what = format!("{w}x{h} {bit_depth}-bit {}-tap", taps.len());
                    assert!(bp.iter().zip(&want_p).all(|(a, b)| a.to_bits() == b.to_bits()), "{what}");
                    assert!(bc.iter().zip(&want_c).all(|(a, b)| a.to_bits() == b.to_bits()), "{what}");
                    assert_eq!(sad.to_bits(), want_sad.to_bits(), "{what}");
                }
            }
        }
    }

    /// vmaf_image_sad_c's scale-0 loops, fabs in double.
    fn sad_c(a: &[f32], b: &[f32], w: usize, h: usize) -> f32 {
        let mut accum = 0.0f32;
        for i in 0..h {
            let mut line = 0.0f32;
            for j in 0..w {
                line = (f64::from(line) + f64::from(a[i * w + j] - b[i * w + j]).abs()) as f32;
            }
            accum += line;
        }
        accum
    }

    #[test]
    fn interleaved_rows_sum_in_pixel_order() {
        for (w, h) in [(13, 19), (8, 8), (3, 7), (37, 16), (5, 3)] {
            let a: Vec<f32> = (0..w * h).map(|k| (k as f32 * 0.37).sin() * 100.0).collect();
            let b: Vec<f32> = (0..w * h).map(|k| (k as f32 * 0.11).cos() * 90.0).collect();
            assert_eq!(sad_sum(&a, &b, w, h).to_bits(), sad_c(&a, &b, w, h).to_bits(), "{w}x{h}");
        }
    }

    #[test]
    fn bilinear_halves_pick_pixel_pairs() {
        // Even sizes: ratio 2, xx = 2x + 0.5.
        assert_eq!(bilinear_axis(8, 4), vec![(0, 1, 0.5), (2, 3, 0.5), (4, 5, 0.5), (6, 7, 0.5)]);
        // Odd: 5 -> 3, ratio 5/3; the last neighbour mirrors back inside.
        let odd = bilinear_axis(5, 3);
        assert_eq!(odd[0].0, 0);
        assert!(odd.iter().all(|&(a, b, _)| a < 5 && b < 5));
        assert_eq!(half(5), 3);
        assert_eq!(half(1), 1);
    }
}
