//! The CPU reference of `float_vif` (libvmaf float_vif.c, vif.c
//! `compute_vif`, vif_tools.c's plain C filters and `vif_statistic_s`):
//! every float operation of libvmaf's, in its order and its precision
//! (f32, and double where vif_tools.c mixes in its double options), so the
//! scores are libvmaf's bits. Loops run a row (or a block of it) at a time
//! where each pixel's own operations stay in order, so the compiler
//! vectorises them; the sums that libvmaf makes in order stay sequential.

use super::prescale::Resampler;
use super::{FloatParams, ScaleFractions, tables};
use crate::features::Extractor;
use crate::features::picture::float_plane_into;
use crate::fixture::{Frame, Geometry};
use crate::scores::Scores;
use anyhow::Result;

/// vif_tools.c `log2_poly_s`, each coefficient rounded to f32 as C does.
/// The literals are C's, digit for digit, so the rounding is visibly its.
#[allow(clippy::excessive_precision)]
pub const LOG2_POLY: [f32; 9] = [
    -0.012_671_635_276_421,
    0.064_841_182_402_670,
    -0.157_048_836_463_065,
    0.257_167_726_303_123,
    -0.353_800_560_300_520,
    0.480_131_410_397_451,
    -0.721_314_327_952_201,
    1.442_694_803_896_991,
    0.0,
];

/// vif_tools.c `log2f_approx` (VIF_OPT_FAST_LOG2 is on): the exponent plus
/// a degree-8 polynomial of the mantissa, Horner's rule in f32.
///
/// The polynomial is computed for every input and the special cases chosen
/// afterwards (the same result for every input, NaN included), so that a
/// row of pixels vectorises.
#[inline(always)]
pub fn log2f_approx(x: f32) -> f32 {
    let bits = x.to_bits();
    let exponent = (bits & 0x7F80_0000) >> 23;
    let remain = f32::from_bits((bits & 0x007F_FFFF) | 0x3F80_0000);
    let log_base = (exponent as i32 - 127) as f32;
    let t = remain - 1.0;
    let mut var = 0.0f32;
    for c in LOG2_POLY {
        var = var * t + c;
    }
    let log = log_base + var;
    if x == 0.0 {
        f32::NEG_INFINITY
    } else if x < 0.0 {
        f32::NAN
    } else {
        log
    }
}

/// The constants of `vif_statistic_s`.
#[derive(Debug, Clone, Copy)]
pub struct StatConsts {
    /// `vif_sigma_nsq` (double).
    pub sigma_nsq: f64,
    /// `powf(vif_sigma_nsq, 2.0f) / (255.0 * 255.0)`, kept as a float.
    pub sigma_max_inv: f32,
    /// `(float) vif_enhn_gain_limit`.
    pub gain_limit: f32,
}

impl StatConsts {
    pub fn new(sigma_nsq: f64, gain_limit: f64) -> Self {
        let sigma_max_inv = (f64::from((sigma_nsq as f32).powf(2.0)) / (255.0 * 255.0)) as f32;
        StatConsts { sigma_nsq, sigma_max_inv, gain_limit: gain_limit as f32 }
    }
}

/// `vif_statistic_s`'s per-pixel (num_val, den_val), every operation as
/// libvmaf does it ('matching_matlab' mode).
#[inline(always)]
pub fn pixel(mu1: f32, mu2: f32, xx: f32, yy: f32, xy: f32, k: &StatConsts) -> (f32, f32) {
    const EPS: f32 = 1.0e-10;
    let mut sigma1_sq = xx - mu1 * mu1;
    let mut sigma2_sq = yy - mu2 * mu2;
    let sigma12 = xy - mu1 * mu2;
    // MAX(x, 0.0f) = x > 0 ? x : 0 (NaN becomes 0).
    sigma1_sq = if sigma1_sq > 0.0 { sigma1_sq } else { 0.0 };
    sigma2_sq = if sigma2_sq > 0.0 { sigma2_sq } else { 0.0 };
    let mut g = sigma12 / (sigma1_sq + EPS);
    let mut sv_sq = sigma2_sq - g * sigma12;
    if sigma1_sq < EPS {
        g = 0.0;
        sv_sq = sigma2_sq;
        sigma1_sq = 0.0;
    }
    if sigma2_sq < EPS {
        g = 0.0;
        sv_sq = 0.0;
    }
    if g < 0.0 {
        sv_sq = sigma2_sq;
        g = 0.0;
    }
    sv_sq = if sv_sq > EPS { sv_sq } else { EPS };
    g = if g < k.gain_limit { g } else { k.gain_limit };
    // (g * g * sigma1_sq) is float; the rest is double (vif_sigma_nsq).
    let num_arg = 1.0 + f64::from(g * g * sigma1_sq) / (f64::from(sv_sq) + k.sigma_nsq);
    let den_arg = 1.0 + f64::from(sigma1_sq) / k.sigma_nsq;
    let mut num_val = log2f_approx(num_arg as f32);
    let mut den_val = log2f_approx(den_arg as f32);
    if sigma12 < 0.0 {
        num_val = 0.0;
    }
    if f64::from(sigma1_sq) < k.sigma_nsq {
        num_val = 1.0 - sigma2_sq * k.sigma_max_inv;
        den_val = 1.0;
    }
    (num_val, den_val)
}

/// vif_tools.c's border rule for the float filters: -i above, 2n - i - 2
/// below (a reflection that does not repeat the edge).
#[inline(always)]
pub fn mirror(i: isize, n: usize) -> usize {
    let n = n as isize;
    (if i < 0 {
        -i
    } else if i >= n {
        2 * n - i - 2
    } else {
        i
    }) as usize
}

/// Columns of a row filtered per call of [`vertical`]: the block's input
/// rows stay in the L1 cache while the five sources go by.
const BLOCK: usize = 256;

/// What a vertical pass sums per sample.
#[derive(Clone, Copy)]
enum Source<'a> {
    /// vif_filter1d_s: `f * x`.
    Plain(&'a [f32]),
    /// vif_filter1d_sq_s: `f * (x * x)`.
    Square(&'a [f32]),
    /// vif_filter1d_xy_s: `f * (x * y)`.
    Product(&'a [f32], &'a [f32]),
}

/// Columns whose sums a block keeps in registers (four AVX2 vectors):
/// each input is loaded once per tap instead of the partial sum being
/// loaded and stored again at every tap.
const LANES: usize = 64;

/// `acc[l] += c * v[l]` for a block of columns held in registers, `v`
/// being what `src` sums at `at..at + N`.
#[inline(always)]
fn add_tap<const N: usize>(acc: &mut [f32; N], c: f32, src: Source<'_>, at: usize) {
    match src {
        Source::Plain(a) => {
            let a = &a[at..][..N];
            for l in 0..N {
                acc[l] += c * a[l];
            }
        }
        Source::Square(a) => {
            let a = &a[at..][..N];
            for l in 0..N {
                acc[l] += c * (a[l] * a[l]);
            }
        }
        Source::Product(a, b) => {
            let (a, b) = (&a[at..][..N], &b[at..][..N]);
            for l in 0..N {
                acc[l] += c * (a[l] * b[l]);
            }
        }
    }
}

/// [`add_tap`] for the columns left over after the last whole block.
#[inline(always)]
fn add_tap_rest(acc: &mut [f32], c: f32, src: Source<'_>, at: usize) {
    let n = acc.len();
    match src {
        Source::Plain(a) => {
            for (s, &x) in acc.iter_mut().zip(&a[at..at + n]) {
                *s += c * x;
            }
        }
        Source::Square(a) => {
            for (s, &x) in acc.iter_mut().zip(&a[at..at + n]) {
                *s += c * (x * x);
            }
        }
        Source::Product(a, b) => {
            for ((s, &x), &y) in acc.iter_mut().zip(&a[at..at + n]).zip(&b[at..at + n]) {
                *s += c * (x * y);
            }
        }
    }
}

/// Where each tap's input row starts for output row `i`: vif_tools.c's
/// mirrored row times the width.
#[inline(always)]
fn tap_rows(taps: usize, (w, h): (usize, usize), i: usize, rows: &mut Vec<usize>) {
    let r = taps / 2;
    rows.clear();
    rows.extend((0..taps).map(|fi| mirror(i as isize - r as isize + fi as isize, h) * w));
}

/// The vertical pass of vif_filter1d_s / _sq_s / _xy_s at the row whose
/// taps start at `rows` ([`tap_rows`]), columns `cols`: `acc = 0;
/// acc += f[fi] * v` for each tap in order, per column.
#[inline(always)]
fn vertical(taps: &[f32], src: Source<'_>, rows: &[usize], cols: std::ops::Range<usize>, out: &mut [f32]) {
    let row = |fi: usize| rows[fi] + cols.start;
    let mut blocks = out.chunks_exact_mut(LANES);
    let mut j = 0;
    for block in &mut blocks {
        let mut acc = [0.0f32; LANES];
        for (fi, &c) in taps.iter().enumerate() {
            add_tap(&mut acc, c, src, row(fi) + j);
        }
        block.copy_from_slice(&acc);
        j += LANES;
    }
    let rest = blocks.into_remainder();
    rest.fill(0.0);
    for (fi, &c) in taps.iter().enumerate() {
        add_tap_rest(rest, c, src, row(fi) + j);
    }
}

/// The horizontal pass: `dst[j] = 0; dst[j] += f[fj] * tmp[mirror(j - r + fj)]`.
/// `tmp` holds the whole row's vertical sums with `r` mirrored columns on
/// each side.
#[inline(always)]
fn horizontal(taps: &[f32], tmp: &[f32], cols: std::ops::Range<usize>, out: &mut [f32]) {
    let mut blocks = out.chunks_exact_mut(LANES);
    let mut j = cols.start;
    for block in &mut blocks {
        let mut acc = [0.0f32; LANES];
        for (fj, &c) in taps.iter().enumerate() {
            add_tap(&mut acc, c, Source::Plain(tmp), j + fj);
        }
        block.copy_from_slice(&acc);
        j += LANES;
    }
    let rest = blocks.into_remainder();
    rest.fill(0.0);
    for (fj, &c) in taps.iter().enumerate() {
        add_tap_rest(rest, c, Source::Plain(tmp), j + fj);
    }
}

/// Mirrors `r` columns beyond each edge of a padded row (interior at `r`).
#[inline(always)]
fn pad(row: &mut [f32], w: usize, r: usize) {
    for f in 1..=r {
        row[r - f] = row[r + f];
        row[r + w - 1 + f] = row[r + w - 1 - f];
    }
}

/// Scratch rows, kept from frame to frame.
#[derive(Default)]
struct Scratch {
    /// Five padded vertical-sum rows (mu1, mu2, xx, yy, xy).
    tmp: [Vec<f32>; 5],
    /// Five filtered rows.
    filt: [Vec<f32>; 5],
    /// One row of (num_val, den_val).
    num: Vec<f32>,
    den: Vec<f32>,
}

/// Float VIF over the (prescaled) float pictures, kept from frame to frame.
pub struct FloatVif {
    pub filters: [Vec<f32>; 4],
    pub consts: StatConsts,
    pub skip_scale0: bool,
    scratch: Scratch,
    /// The decimated pictures of scales 1 to 3 (reference, distorted).
    planes: [(Vec<f32>, Vec<f32>); 3],
}

impl FloatVif {
    pub fn new(params: &FloatParams) -> Self {
        FloatVif {
            filters: std::array::from_fn(|s| tables::float_filter(s, params.kernelscale)),
            consts: StatConsts::new(params.sigma_nsq, params.gain_limit),
            skip_scale0: params.skip_scale0,
            scratch: Scratch::default(),
            planes: Default::default(),
        }
    }

    /// vif.c `compute_vif`: each scale's (num, den).
    pub fn compute(&mut self, reference: &[f32], distorted: &[f32], size: (usize, usize)) -> ScaleFractions {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            return unsafe { self.compute_avx2(reference, distorted, size) };
        }
        self.compute_scales(reference, distorted, size)
    }

    /// [`Self::compute_scales`] compiled for AVX2, so that the row loops
    /// run 8 columns a vector instead of SSE2's 4: the same f32 operations
    /// on each column in the same order (separate IEEE multiplies and adds;
    /// Rust never fuses them), so the same bits.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn compute_avx2(&mut self, reference: &[f32], distorted: &[f32], size: (usize, usize)) -> ScaleFractions {
        self.compute_scales(reference, distorted, size)
    }

    #[inline(always)]
    fn compute_scales(&mut self, reference: &[f32], distorted: &[f32], (w, h): (usize, usize)) -> ScaleFractions {
        let mut out = [(0.0f32, 0.0f32); 4];
        let start = usize::from(self.skip_scale0);
        let (mut w, mut h) = (w, h);
        for scale in start..4 {
            let taps = &self.filters[scale];
            if scale > 0 {
                // vif_filter1d_s with this scale's filter, then vif_dec2_s.
                let (before, after) = self.planes.split_at_mut(scale - 1);
                let (r, d) = if scale == 1 {
                    (reference, distorted)
                } else {
                    (before[scale - 2].0.as_slice(), before[scale - 2].1.as_slice())
                };
                let (rn, dn) = &mut after[0];
                decimate(taps, r, (w, h), rn, &mut self.scratch);
                decimate(taps, d, (w, h), dn, &mut self.scratch);
                (w, h) = (w / 2, h / 2);
            }
            let (r, d) = if scale == 0 {
                (reference, distorted)
            } else {
                (self.planes[scale - 1].0.as_slice(), self.planes[scale - 1].1.as_slice())
            };
            out[scale] = statistic(taps, r, d, (w, h), &self.consts, &mut self.scratch);
        }
        out
    }
}

/// vif_filter1d_s of one picture followed by vif_dec2_s: the filtered
/// picture at every other row and column, from the first. Only those are
/// computed (the filter's value at a position does not depend on the rest).
#[inline(always)]
fn decimate(taps: &[f32], src: &[f32], (w, h): (usize, usize), dst: &mut Vec<f32>, s: &mut Scratch) {
    let r = taps.len() / 2;
    let (wo, ho) = (w / 2, h / 2);
    dst.clear();
    dst.resize(wo * ho, 0.0);
    let tmp = &mut s.tmp[0];
    tmp.clear();
    tmp.resize(w + 2 * r, 0.0);
    let mut rows = Vec::with_capacity(taps.len());
    for i in 0..ho {
        tap_rows(taps.len(), (w, h), 2 * i, &mut rows);
        for start in (0..w).step_by(BLOCK) {
            let cols = start..(start + BLOCK).min(w);
            vertical(taps, Source::Plain(src), &rows, cols.clone(), &mut tmp[r + cols.start..r + cols.end]);
        }
        pad(tmp, w, r);
        decimate_row(taps, tmp, &mut dst[i * wo..(i + 1) * wo]);
    }
}

/// Outputs of [`decimate_row`] summed together in registers.
const DECIMATED_LANES: usize = 16;

/// The horizontal pass at every other column: `dst[jo] = 0; dst[jo] +=
/// f[fj] * tmp[2 jo + fj]` for each tap in order.
#[inline(always)]
fn decimate_row(taps: &[f32], tmp: &[f32], dst: &mut [f32]) {
    const N: usize = DECIMATED_LANES;
    let mut blocks = dst.chunks_exact_mut(N);
    let mut j = 0;
    for block in &mut blocks {
        let mut acc = [0.0f32; N];
        for (fj, &c) in taps.iter().enumerate() {
            let t = &tmp[2 * j + fj..][..2 * N];
            for l in 0..N {
                acc[l] += c * t[2 * l];
            }
        }
        block.copy_from_slice(&acc);
        j += N;
    }
    for (jo, d) in blocks.into_remainder().iter_mut().enumerate() {
        let mut acc = 0.0f32;
        for (fj, &c) in taps.iter().enumerate() {
            acc += c * tmp[2 * (j + jo) + fj];
        }
        *d = acc;
    }
}

/// One scale: the five filtered pictures (vif_filter1d_s, _sq_s, _xy_s) and
/// `vif_statistic_s`'s sums, each row summed in f32 in column order, then
/// the rows in order.
#[inline(always)]
fn statistic(
    taps: &[f32],
    reference: &[f32],
    distorted: &[f32],
    (w, h): (usize, usize),
    k: &StatConsts,
    s: &mut Scratch,
) -> (f32, f32) {
    let r = taps.len() / 2;
    for v in s.tmp.iter_mut() {
        v.clear();
        v.resize(w + 2 * r, 0.0);
    }
    for v in s.filt.iter_mut().chain([&mut s.num, &mut s.den]) {
        v.clear();
        v.resize(w, 0.0);
    }
    let sources = [
        Source::Plain(reference),
        Source::Plain(distorted),
        Source::Square(reference),
        Source::Square(distorted),
        Source::Product(reference, distorted),
    ];
    let (mut num, mut den) = (0.0f32, 0.0f32);
    let mut rows = Vec::with_capacity(taps.len());
    for i in 0..h {
        tap_rows(taps.len(), (w, h), i, &mut rows);
        for start in (0..w).step_by(BLOCK) {
            let cols = start..(start + BLOCK).min(w);
            for (tmp, src) in s.tmp.iter_mut().zip(sources) {
                vertical(taps, src, &rows, cols.clone(), &mut tmp[r + cols.start..r + cols.end]);
            }
        }
        for (tmp, filt) in s.tmp.iter_mut().zip(s.filt.iter_mut()) {
            pad(tmp, w, r);
            for start in (0..w).step_by(BLOCK) {
                let cols = start..(start + BLOCK).min(w);
                horizontal(taps, tmp, cols.clone(), &mut filt[cols]);
            }
        }
        let [mu1, mu2, xx, yy, xy] = &s.filt;
        let stats = mu1.iter().zip(mu2).zip(xx).zip(yy).zip(xy);
        for ((((((&m1, &m2), &x1), &y2), &x12), n), d) in stats.zip(&mut s.num).zip(&mut s.den) {
            (*n, *d) = pixel(m1, m2, x1, y2, x12, k);
        }
        let (mut row_num, mut row_den) = (0.0f32, 0.0f32);
        for (&n, &d) in s.num.iter().zip(&s.den) {
            row_num += n;
            row_den += d;
        }
        num += row_num;
        den += row_den;
    }
    (num, den)
}

/// The `float_vif` extractor: float pictures (picture_copy, offset -128),
/// prescaled when asked, then [`FloatVif`].
pub struct FloatCpu {
    vif: FloatVif,
    params: FloatParams,
    resampler: Resampler,
    planes: [Vec<f32>; 4],
}

impl FloatCpu {
    pub fn new(geometry: &Geometry, params: FloatParams) -> Result<Self> {
        let resampler = Resampler::new(params.prescale_method, geometry, params.scaled(geometry));
        Ok(FloatCpu { vif: FloatVif::new(&params), params, resampler, planes: Default::default() })
    }
}

impl Extractor for FloatCpu {
    fn extract(&mut self, index: usize, reference: &Frame, distorted: &Frame, out: &mut Scores) -> Result<()> {
        let [r, d, rs, ds] = &mut self.planes;
        float_plane_into(reference, 0, -128, r);
        float_plane_into(distorted, 0, -128, d);
        let fractions = if self.resampler.is_identity() {
            self.vif.compute(r, d, self.resampler.dst)
        } else {
            self.resampler.apply(r, rs);
            self.resampler.apply(d, ds);
            self.vif.compute(rs, ds, self.resampler.dst)
        };
        self.params.scoring().record(index, &fractions, out);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fast_log2_is_close_to_log2_and_exact_at_powers_of_two() {
        for x in [1.0f32, 2.0, 0.5, 1024.0] {
            assert_eq!(log2f_approx(x), x.log2());
        }
        for x in [1.5f32, 3.0, 10.0, 1e-3, 12345.678] {
            assert!((log2f_approx(x) - x.log2()).abs() < 1e-4, "{x}");
        }
        assert_eq!(log2f_approx(0.0), f32::NEG_INFINITY);
        assert!(log2f_approx(-1.0).is_nan());
        // libvmaf's bit tricks give 128 for +inf.
        assert_eq!(log2f_approx(f32::INFINITY), 128.0);
    }

    #[test]
    fn mirror_reflects_without_repeating_the_edge() {
        let m: Vec<usize> = (-2..7).map(|i| mirror(i, 5)).collect();
        assert_eq!(m, [2, 1, 0, 1, 2, 3, 4, 3, 2]);
    }

    #[test]
    fn flat_regions_score_one_over_one() {
        // No variance: sigma1_sq < sigma_nsq, so num = 1 - 0, den = 1.
        let k = StatConsts::new(2.0, 100.0);
        assert_eq!(pixel(3.0, 3.0, 9.0, 9.0, 9.0, &k), (1.0, 1.0));
        // Noise only in the distorted picture lowers num.
        let (n, d) = pixel(3.0, 3.0, 9.0, 9.0 + 65.025, 9.0, &k);
        assert_eq!(d, 1.0);
        assert!((n - (1.0 - 65.025 * 4.0 / 65025.0)).abs() < 1e-6, "{n}");
    }

    #[test]
    fn block_filtering_is_the_pixelwise_loop() {
        // libvmaf's vif_filter1d_s, pixel at a time, as the oracle.
        let (w, h) = (300, 7);
        let src: Vec<f32> = (0..w * h).map(|k| ((k * 7919 % 1021) as f32) / 4.0 - 128.0).collect();
        let taps = tables::float_filter(2, 1.0);
        let r = taps.len() / 2;
        let mut want = vec![0.0f32; w * h];
        for i in 0..h {
            let tmp: Vec<f32> = (0..w)
                .map(|j| {
                    let mut acc = 0.0f32;
                    for (fi, &c) in taps.iter().enumerate() {
                        acc += c * src[mirror(i as isize - r as isize + fi as isize, h) * w + j];
                    }
                    acc
                })
                .collect();
            for j in 0..w {
                let mut acc = 0.0f32;
                for (fj, &c) in taps.iter().enumerate() {
                    acc += c * tmp[mirror(j as isize - r as isize + fj as isize, w)];
                }
                want[i * w + j] = acc;
            }
        }
        let mut s = Scratch::default();
        let mut dec = Vec::new();
        decimate(&taps, &src, (w, h), &mut dec, &mut s);
        for i in 0..h / 2 {
            for j in 0..w / 2 {
                assert_eq!(dec[i * (w / 2) + j].to_bits(), want[2 * i * w + 2 * j].to_bits(), "({i}, {j})");
            }
        }
    }
}
