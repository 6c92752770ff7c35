//! `float_motion` (libvmaf float_motion.c, motion.c, motion_tools.h,
//! common/convolution.c, vif_tools.c): each reference frame as floats
//! (`picture_copy`, offset -128), blurred by a separable filter (vertical,
//! then horizontal, in f32), and the mean absolute difference of two
//! blurred frames, summed in f32 row by row as `vmaf_image_sad_c` does.

use super::sequence;
use super::{FLOAT_MOTION_OPTIONS, FloatNames, Params, checked, ensure_takes, float_names};
use crate::features::gpu::{Recent, Window};
use crate::features::picture::scaler;
use crate::features::{Extractor, Options, options};
use crate::fixture::{Frame, Geometry, PairSource};
use crate::scores::Scores;
use anyhow::{Result, ensure};

/// motion_tools.h `FILTER_5_s`.
pub const FILTER_5: [f32; 5] = [0.054488685, 0.244201342, 0.402619947, 0.244201342, 0.054488685];
/// motion_tools.h `FILTER_3_s`.
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

/// `convolution_f32_c_s` (its C path, the one libvmaf's plain-C recordings
/// ran): `convolution_y_c_s` into `tmp`, then `convolution_x_c_s` into
/// `dst`. Per pixel `accum = 0; accum += filter[k] * src[..]` for k in
/// order, in f32 without FMA, borders mirrored; whole rows at a time so the
/// compiler vectorises across pixels, each pixel's operations unchanged.
pub fn blur(filter: &[f32], src: &[f32], w: usize, h: usize, tmp: &mut Vec<f32>, dst: &mut Vec<f32>) {
    tmp.clear();
    tmp.resize(w * h, 0.0);
    dst.clear();
    dst.resize(w * h, 0.0);
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        unsafe { blur_avx2(filter, src, w, h, tmp, dst) };
        return;
    }
    blur_rows(filter, src, w, h, tmp, dst);
}

/// [`blur_rows`] compiled for AVX2: 8 lanes, the same IEEE operations (no
/// FMA), so the same bits.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn blur_avx2(filter: &[f32], src: &[f32], w: usize, h: usize, tmp: &mut [f32], dst: &mut [f32]) {
    blur_rows(filter, src, w, h, tmp, dst)
}

#[inline(always)]
fn blur_rows(filter: &[f32], src: &[f32], w: usize, h: usize, tmp: &mut [f32], dst: &mut [f32]) {
    let fw = filter.len();
    let radius = fw / 2;
    // convolution_y_c_s
    for (i, out) in tmp.chunks_exact_mut(w).enumerate() {
        for (k, &f) in filter.iter().enumerate() {
            let r = mirror(i as isize - radius as isize + k as isize, h);
            let row = &src[r * w..(r + 1) * w];
            if k == 0 {
                for (o, &v) in out.iter_mut().zip(row) {
                    *o = 0.0 + f * v;
                }
            } else {
                for (o, &v) in out.iter_mut().zip(row) {
                    *o += f * v;
                }
            }
        }
    }
    // convolution_x_c_s
    for (row, out) in tmp.chunks_exact(w).zip(dst.chunks_exact_mut(w)) {
        let edge = |j: usize| -> f32 {
            let mut accum = 0.0f32;
            for (k, &f) in filter.iter().enumerate() {
                accum += f * row[mirror(j as isize - radius as isize + k as isize, w)];
            }
            accum
        };
        if w > 2 * radius {
            let inner = &mut out[radius..w - radius];
            for (k, &f) in filter.iter().enumerate() {
                let shifted = &row[k..k + w - 2 * radius];
                if k == 0 {
                    for (o, &v) in inner.iter_mut().zip(shifted) {
                        *o = 0.0 + f * v;
                    }
                } else {
                    for (o, &v) in inner.iter_mut().zip(shifted) {
                        *o += f * v;
                    }
                }
            }
        }
        for j in (0..w.min(radius)).chain(w.saturating_sub(radius).max(radius.min(w))..w) {
            out[j] = edge(j);
        }
    }
}

/// `vmaf_image_sad_c`'s scale-0 sum: per row `accum_line += fabs(a - b)`
/// left to right in f32 (the C's `fabs` works in double on a float
/// difference and rounds back: the same bits, as a sum of two floats
/// rounded once from double is correctly rounded), then `accum +=
/// accum_line` row by row. Eight rows' chains run side by side (each one
/// still in pixel order) so the adds' latency overlaps.
pub fn sad_sum(a: &[f32], b: &[f32], w: usize, h: usize) -> f32 {
    let mut rows = vec![0.0f32; h];
    let mut r = 0;
    while r + 8 <= h {
        let mut acc = [0.0f32; 8];
        for j in 0..w {
            for (k, s) in acc.iter_mut().enumerate() {
                let at = (r + k) * w + j;
                *s += (a[at] - b[at]).abs();
            }
        }
        rows[r..r + 8].copy_from_slice(&acc);
        r += 8;
    }
    for (row, s) in rows.iter_mut().enumerate().skip(r) {
        *s = row_sum(&a[row * w..(row + 1) * w], &b[row * w..(row + 1) * w]);
    }
    rows.iter().fold(0.0f32, |acc, &v| acc + v)
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

/// `vmaf_image_sad_c` of two blurred planes: the mean absolute difference
/// (`accum / (w * h)` in float), plus with `motion_add_scale1` that of
/// their bilinear halves, the two added in float.
pub fn image_sad(a: &[f32], b: &[f32], w: usize, h: usize, add_scale1: bool, scratch: &mut [Vec<f32>; 2]) -> f32 {
    let scale0 = sad_sum(a, b, w, h) / (w * h) as f32;
    if !add_scale1 {
        return scale0;
    }
    let (sw, sh) = (half(w), half(h));
    let [sa, sb] = scratch;
    scale_bilinear(a, w, h, sw, sh, sa);
    scale_bilinear(b, w, h, sw, sh, sb);
    let scale1 = sad_sum(sa, sb, sw, sh) / (sw * sh) as f32;
    scale0 + scale1
}

/// The float_motion extractor's state: options, names, and the blurred
/// planes of the last frames it saw (so a frame's blur is computed once
/// when frames come in order, and again only for a worker's first frame).
pub struct FloatMotion {
    pub options: FloatOptions,
    pub names: FloatNames,
}

/// The per-frame score float_motion's sequence rules take (not a metric:
/// [`FloatMotion::finish_sequence`] consumes it).
pub const RAW_SCORE: &str = "float_motion: SAD of frames i-1 and i (intermediate)";

impl FloatMotion {
    pub fn new(geometry: &Geometry, options: &Options) -> Result<FloatMotion> {
        checked("float_motion", options, FLOAT_MOTION_OPTIONS)?;
        ensure_takes(&super::FLOAT_MOTION, geometry, options)?;
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
        for i in 0..frames {
            if let Some(name) = &self.names.motion {
                scores.record(name, i, motion[i]);
            }
            scores.record(&self.names.motion2, i, s.motion2[i]);
            scores.record(&self.names.motion3, i, s.motion3[i]);
        }
        Ok(())
    }
}

pub fn cpu_extractor(geometry: &Geometry, options: &Options) -> Result<Box<dyn Extractor>> {
    let motion = FloatMotion::new(geometry, options)?;
    Ok(Box::new(FloatCpu {
        motion,
        geometry: *geometry,
        bytes: Vec::new(),
        picture: Vec::new(),
        tmp: Vec::new(),
        blurred: [(None, Vec::new()), (None, Vec::new())],
        scaled: Default::default(),
        recent: Recent::new(Window { lookback: 1 }),
    }))
}

struct FloatCpu {
    motion: FloatMotion,
    geometry: Geometry,
    bytes: Vec<u8>,
    picture: Vec<f32>,
    tmp: Vec<f32>,
    /// The blurred planes (back to back) of the last two frames blurred.
    blurred: [(Option<usize>, Vec<f32>); 2],
    scaled: [Vec<f32>; 2],
    recent: Recent,
}

impl FloatCpu {
    /// Blurs frame `index`'s planes into a slot (unless already there) and
    /// returns the slot; `keep` must not be evicted.
    fn blurred(&mut self, source: &dyn PairSource, index: usize, keep: Option<usize>) -> Result<usize> {
        if let Some(i) = self.blurred.iter().position(|(f, _)| *f == Some(index)) {
            return Ok(i);
        }
        let slot = if keep == Some(0) { 1 } else { 0 };
        let g = self.geometry;
        let planes = self.motion.options.planes();
        super::read_planes(source, index, planes, &mut self.bytes)?;
        let out = &mut self.blurred[slot];
        out.0 = None;
        out.1.clear();
        let mut plane_blur = Vec::new();
        for p in 0..planes {
            let (w, h) = g.plane_dims(p);
            let start = g.plane_offset(p);
            picture_copy(&self.bytes, g.bit_depth, start, w * h, &mut self.picture);
            blur(self.motion.options.taps(), &self.picture, w, h, &mut self.tmp, &mut plane_blur);
            out.1.extend_from_slice(&plane_blur);
        }
        out.0 = Some(index);
        Ok(slot)
    }
}

/// `picture_copy` of `n` samples starting at sample `start` of a frame's
/// bytes: `(float)v / scaler - 128` (8-bit: `(float)v - 128`).
pub fn picture_copy(bytes: &[u8], bit_depth: u8, start: usize, n: usize, out: &mut Vec<f32>) {
    out.clear();
    if bit_depth == 8 {
        out.extend(bytes[start..start + n].iter().map(|&v| f32::from(v) + -128.0));
    } else {
        let s = scaler(bit_depth);
        let samples: &[u16] = bytemuck::cast_slice(&bytes[2 * start..2 * (start + n)]);
        out.extend(samples.iter().map(|&v| f32::from(v) / s + -128.0));
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
            let cur = self.blurred(source, index, None)?;
            let prev = self.blurred(source, index - 1, Some(cur))?;
            let g = self.geometry;
            let (a, b) = (&self.blurred[prev].1, &self.blurred[cur].1);
            // compute_motion(blur[i - 1], blur[i]) per plane, added in double.
            for p in 0..self.motion.options.planes() {
                let (w, h) = g.plane_dims(p);
                let at = g.plane_offset(p) - g.plane_offset(0);
                let range = at..at + w * h;
                let s = image_sad(&a[range.clone()], &b[range], w, h, self.motion.options.add_scale1, &mut self.scaled);
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
    fn row_blur_is_bit_identical_to_the_c_loops() {
        for (w, h) in [(3, 3), (2, 2), (4, 9), (17, 5), (40, 11)] {
            let src: Vec<f32> = (0..w * h).map(|k| ((k * 7919 % 1021) as f32) / 4.0 - 128.0).collect();
            for taps in [&FILTER_5[..], &FILTER_3[..], &FILTER_5_NO_OP[..]] {
                if w <= taps.len() / 2 || h <= taps.len() / 2 {
                    continue;
                }
                let want = blur_c(taps, &src, w, h);
                let (mut tmp, mut got, mut portable) = (Vec::new(), Vec::new(), vec![0.0; w * h]);
                blur(taps, &src, w, h, &mut tmp, &mut got);
                blur_rows(taps, &src, w, h, &mut vec![0.0; w * h], &mut portable);
                for out in [&got, &portable] {
                    assert!(out.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()), "{w}x{h} {}", taps.len());
                }
            }
        }
    }

    #[test]
    fn interleaved_rows_sum_in_pixel_order() {
        let (w, h) = (13, 19);
        let a: Vec<f32> = (0..w * h).map(|k| (k as f32 * 0.37).sin() * 100.0).collect();
        let b: Vec<f32> = (0..w * h).map(|k| (k as f32 * 0.11).cos() * 90.0).collect();
        let mut want = 0.0f32;
        for i in 0..h {
            let mut line = 0.0f32;
            for j in 0..w {
                line = (f64::from(line) + f64::from(a[i * w + j] - b[i * w + j]).abs()) as f32;
            }
            want += line;
        }
        assert_eq!(sad_sum(&a, &b, w, h).to_bits(), want.to_bits());
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

    #[test]
    fn picture_copy_offsets_and_scales() {
        let mut out = Vec::new();
        picture_copy(&[0, 255], 8, 0, 2, &mut out);
        assert_eq!(out, [-128.0, 127.0]);
        let bytes: Vec<u8> = [1023u16, 4].iter().flat_map(|v| v.to_le_bytes()).collect();
        picture_copy(&bytes, 10, 0, 2, &mut out);
        assert_eq!(out, [1023.0 / 4.0 - 128.0, -127.0]);
    }
}
