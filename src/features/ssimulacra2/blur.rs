//! The recursive Gaussian: ssimulacra2.c `create_recursive_gaussian` (libjxl
//! gauss_blur.cc `CreateRecursiveGaussian`, Charalampidis 2016, sigma 1.5)
//! and its separable 3-pole IIR, `fast_gaussian_1d` along rows and
//! `blur_plane`'s vertical pass down columns, zero outside the picture.
//!
//! Both passes compute, for every output position `n` from `-N + 1` on,
//! `sum = in[n - N - 1] + in[n + N - 1]` (0 outside), then for each pole k
//! `o_k = n2[k] * sum - d1[k] * prev1_k - prev2_k` in f32, and write
//! `(o_0 + o_1) + o_2` at `n >= 0`. The row pass here runs eight rows at a
//! time, one per SIMD lane (transposed in 8x8 blocks); the column pass runs
//! the columns side by side as the C does. Each output keeps its own
//! operations in the C's order, so the bits are the C's.

use std::f64::consts::PI;

/// libjxl's `kSigma` for ssimulacra2 (`SSIMU2_SIGMA`).
pub const SIGMA: f64 = 1.5;

/// The IIR's coefficients (`rg_n2`, `rg_d1`, `rg_radius`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RecursiveGaussian {
    pub n2: [f32; 3],
    pub d1: [f32; 3],
    /// `N`: the IIR reads `N + 1` samples behind and `N - 1` ahead.
    pub radius: usize,
}

impl RecursiveGaussian {
    /// `create_recursive_gaussian`, in f64 in the C's order (equations
    /// (33)-(57) of Charalampidis), the coefficients rounded to f32 last.
    pub fn new(sigma: f64) -> Self {
        let radius = (3.2795 * sigma + 0.2546).round();
        let pi_div_2r = PI / (2.0 * radius);
        let omega = [pi_div_2r, 3.0 * pi_div_2r, 5.0 * pi_div_2r];
        // (37) poles, (44) residues.
        let p1 = 1.0 / (0.5 * omega[0]).tan();
        let p3 = -1.0 / (0.5 * omega[1]).tan();
        let p5 = 1.0 / (0.5 * omega[2]).tan();
        let r1 = p1 * p1 / omega[0].sin();
        let r3 = -p3 * p3 / omega[1].sin();
        let r5 = p5 * p5 / omega[2].sin();
        // (50) rho.
        let neg_half_sigma2 = -0.5 * sigma * sigma;
        let recip_r = 1.0 / radius;
        let rho = omega.map(|w| (neg_half_sigma2 * w * w).exp() * recip_r);
        // (52) determinants and zetas.
        let d13 = p1 * r3 - r1 * p3;
        let d35 = p3 * r5 - r3 * p5;
        let d51 = p5 * r1 - r5 * p1;
        let recip_d13 = 1.0 / d13;
        let zeta_15 = d35 * recip_d13;
        let zeta_35 = d51 * recip_d13;
        // A * beta = gamma by Cramer's rule.
        let a = [[p1, p3, p5], [r1, r3, r5], [zeta_15, zeta_35, 1.0]];
        let gamma = [1.0, radius * radius - sigma * sigma, zeta_15 * rho[0] + zeta_35 * rho[1] + rho[2]];
        let det = |m: &[[f64; 3]; 3]| {
            m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
                + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
        };
        let inv_det = 1.0 / det(&a);
        let beta: [f64; 3] = std::array::from_fn(|col| {
            let mut m = a;
            for (row, g) in m.iter_mut().zip(gamma) {
                row[col] = g;
            }
            det(&m) * inv_det
        });
        // (33) the coefficients.
        RecursiveGaussian {
            n2: std::array::from_fn(|i| (-beta[i] * (omega[i] * (radius + 1.0)).cos()) as f32),
            d1: omega.map(|w| (-2.0 * w.cos()) as f32),
            radius: radius as usize,
        }
    }

    /// The fork's blur (sigma 1.5).
    pub fn ssimulacra2() -> Self {
        Self::new(SIGMA)
    }

    /// `fast_gaussian_1d`: one line, sample at a time (the oracle the
    /// unit tests hold the lane-parallel passes to).
    pub fn blur_line(&self, input: &[f32], out: &mut [f32]) {
        let n = input.len() as isize;
        let big_n = self.radius as isize;
        let (mut prev1, mut prev2) = ([0.0f32; 3], [0.0f32; 3]);
        for i in -big_n + 1..n {
            let (left, right) = (i - big_n - 1, i + big_n - 1);
            let lv = if left >= 0 { input[left as usize] } else { 0.0 };
            let rv = if right < n { input[right as usize] } else { 0.0 };
            let sum = lv + rv;
            let o: [f32; 3] = std::array::from_fn(|k| self.n2[k] * sum - self.d1[k] * prev1[k] - prev2[k]);
            prev2 = prev1;
            prev1 = o;
            if i >= 0 {
                out[i as usize] = o[0] + o[1] + o[2];
            }
        }
    }
}

/// Buffers of the row pass, kept from frame to frame: eight rows
/// transposed (`[x][row]`) in and out.
#[derive(Default)]
pub struct RowLanes {
    input: Vec<[f32; 8]>,
    output: Vec<[f32; 8]>,
}

/// The row pass of `blur_plane` (`fast_gaussian_1d` on every row) over a
/// `w` x `h` plane: `a`, or `a * b` (each product rounded to f32, as
/// ssimulacra2.c's `multiply_3plane` writes it before blurring), into `out`.
pub fn blur_rows(
    rg: &RecursiveGaussian,
    a: &[f32],
    b: Option<&[f32]>,
    w: usize,
    h: usize,
    out: &mut [f32],
    lanes: &mut RowLanes,
) {
    lanes.input.resize(w, [0.0; 8]);
    lanes.output.resize(w, [0.0; 8]);
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        unsafe { blur_rows_avx2(rg, a, b, w, h, out, lanes) };
        return;
    }
    blur_rows_portable(rg, a, b, w, h, out, lanes);
}

fn blur_rows_portable(
    rg: &RecursiveGaussian,
    a: &[f32],
    b: Option<&[f32]>,
    w: usize,
    h: usize,
    out: &mut [f32],
    lanes: &mut RowLanes,
) {
    for y0 in (0..h).step_by(8) {
        for (x, lane) in lanes.input.iter_mut().enumerate() {
            *lane = std::array::from_fn(|k| source(a, b, (y0 + k).min(h - 1) * w + x));
        }
        iir_lanes(rg, &lanes.input, &mut lanes.output);
        for k in 0..(h - y0).min(8) {
            for (x, lane) in lanes.output.iter().enumerate() {
                out[(y0 + k) * w + x] = lane[k];
            }
        }
    }
}

#[inline(always)]
fn source(a: &[f32], b: Option<&[f32]>, i: usize) -> f32 {
    match b {
        Some(b) => a[i] * b[i],
        None => a[i],
    }
}

/// [`blur_rows_portable`] with the transposes done by AVX shuffles, 8x8 at
/// a time, and the IIR on 8-wide vectors (no FMA: the same operations).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn blur_rows_avx2(
    rg: &RecursiveGaussian,
    a: &[f32],
    b: Option<&[f32]>,
    w: usize,
    h: usize,
    out: &mut [f32],
    lanes: &mut RowLanes,
) {
    use std::arch::x86_64::*;
    let full = w / 8 * 8;
    for y0 in (0..h).step_by(8) {
        // Rows past the bottom repeat the last one (their lanes are dropped).
        let rows: [usize; 8] = std::array::from_fn(|k| (y0 + k).min(h - 1) * w);
        for x0 in (0..full).step_by(8) {
            let v: [__m256; 8] = std::array::from_fn(|k| {
                let i = rows[k] + x0;
                // SAFETY: i + 8 <= rows[k] + w <= a.len() (x0 + 8 <= full <= w).
                unsafe {
                    let va = _mm256_loadu_ps(a[i..i + 8].as_ptr());
                    match b {
                        Some(b) => _mm256_mul_ps(va, _mm256_loadu_ps(b[i..i + 8].as_ptr())),
                        None => va,
                    }
                }
            });
            let t = transpose8(v);
            for (k, col) in t.iter().enumerate() {
                // SAFETY: [f32; 8] is 32 bytes, written unaligned.
                unsafe { _mm256_storeu_ps(lanes.input[x0 + k].as_mut_ptr(), *col) };
            }
        }
        for x in full..w {
            lanes.input[x] = std::array::from_fn(|k| source(a, b, rows[k] + x));
        }
        iir_lanes(rg, &lanes.input, &mut lanes.output);
        let live = (h - y0).min(8);
        for x0 in (0..full).step_by(8) {
            // SAFETY: lanes.output[x0 + k] are 32-byte arrays.
            let v: [__m256; 8] = std::array::from_fn(|k| unsafe { _mm256_loadu_ps(lanes.output[x0 + k].as_ptr()) });
            let t = transpose8(v);
            for (k, row) in t.iter().enumerate().take(live) {
                let i = (y0 + k) * w + x0;
                // SAFETY: i + 8 <= (y0 + k + 1) * w <= out.len().
                unsafe { _mm256_storeu_ps(out[i..i + 8].as_mut_ptr(), *row) };
            }
        }
        for k in 0..live {
            for x in full..w {
                out[(y0 + k) * w + x] = lanes.output[x][k];
            }
        }
    }
}

/// An 8x8 transpose of f32 rows (unpack, shuffle, lane permute).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn transpose8(r: [std::arch::x86_64::__m256; 8]) -> [std::arch::x86_64::__m256; 8] {
    use std::arch::x86_64::*;
    let t0 = _mm256_unpacklo_ps(r[0], r[1]);
    let t1 = _mm256_unpackhi_ps(r[0], r[1]);
    let t2 = _mm256_unpacklo_ps(r[2], r[3]);
    let t3 = _mm256_unpackhi_ps(r[2], r[3]);
    let t4 = _mm256_unpacklo_ps(r[4], r[5]);
    let t5 = _mm256_unpackhi_ps(r[4], r[5]);
    let t6 = _mm256_unpacklo_ps(r[6], r[7]);
    let t7 = _mm256_unpackhi_ps(r[6], r[7]);
    let s0 = _mm256_shuffle_ps::<0x44>(t0, t2);
    let s1 = _mm256_shuffle_ps::<0xEE>(t0, t2);
    let s2 = _mm256_shuffle_ps::<0x44>(t1, t3);
    let s3 = _mm256_shuffle_ps::<0xEE>(t1, t3);
    let s4 = _mm256_shuffle_ps::<0x44>(t4, t6);
    let s5 = _mm256_shuffle_ps::<0xEE>(t4, t6);
    let s6 = _mm256_shuffle_ps::<0x44>(t5, t7);
    let s7 = _mm256_shuffle_ps::<0xEE>(t5, t7);
    [
        _mm256_permute2f128_ps::<0x20>(s0, s4),
        _mm256_permute2f128_ps::<0x20>(s1, s5),
        _mm256_permute2f128_ps::<0x20>(s2, s6),
        _mm256_permute2f128_ps::<0x20>(s3, s7),
        _mm256_permute2f128_ps::<0x31>(s0, s4),
        _mm256_permute2f128_ps::<0x31>(s1, s5),
        _mm256_permute2f128_ps::<0x31>(s2, s6),
        _mm256_permute2f128_ps::<0x31>(s3, s7),
    ]
}

/// `fast_gaussian_1d` on eight lines at once, one per lane of `input`
/// (`input[x][lane]`), into `output`.
#[inline(always)]
fn iir_lanes(rg: &RecursiveGaussian, input: &[[f32; 8]], output: &mut [[f32; 8]]) {
    let n = input.len() as isize;
    let big_n = rg.radius as isize;
    let zero = [0.0f32; 8];
    let (mut p1, mut p2) = ([[0.0f32; 8]; 3], [[0.0f32; 8]; 3]);
    for i in -big_n + 1..n {
        let (left, right) = (i - big_n - 1, i + big_n - 1);
        let lv = if left >= 0 { &input[left as usize] } else { &zero };
        let rv = if right < n { &input[right as usize] } else { &zero };
        let sum: [f32; 8] = std::array::from_fn(|k| lv[k] + rv[k]);
        for j in 0..3 {
            let o: [f32; 8] = std::array::from_fn(|k| rg.n2[j] * sum[k] - rg.d1[j] * p1[j][k] - p2[j][k]);
            p2[j] = p1[j];
            p1[j] = o;
        }
        if i >= 0 {
            output[i as usize] = std::array::from_fn(|k| p1[0][k] + p1[1][k] + p1[2][k]);
        }
    }
}

/// The vertical pass of `blur_plane`: every column's IIR state
/// (`col_state`: prev1 of the three poles, then prev2), stepped a row at a
/// time over all columns.
pub struct ColumnIir {
    state: Vec<f32>,
    width: usize,
}

impl ColumnIir {
    pub fn new(width: usize) -> Self {
        ColumnIir { state: vec![0.0; 6 * width], width }
    }

    /// Zeroes the state for a plane `width` wide (`memset(col_state, 0, ...)`).
    pub fn reset(&mut self, width: usize) {
        self.width = width;
        self.state.clear();
        self.state.resize(6 * width, 0.0);
    }

    /// One output row `n` (whether or not `n >= 0`): `left` is row `n - N -
    /// 1` and `right` row `n + N - 1` of the row-blurred plane, or zeros
    /// outside it; `out` gets `(o_0 + o_1) + o_2` of every column.
    pub fn step(&mut self, rg: &RecursiveGaussian, left: &[f32], right: &[f32], out: &mut [f32]) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            unsafe { self.step_avx2(rg, left, right, out) };
            return;
        }
        self.step_portable(rg, left, right, out);
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn step_avx2(&mut self, rg: &RecursiveGaussian, left: &[f32], right: &[f32], out: &mut [f32]) {
        self.step_portable(rg, left, right, out)
    }

    #[inline(always)]
    fn step_portable(&mut self, rg: &RecursiveGaussian, left: &[f32], right: &[f32], out: &mut [f32]) {
        let w = self.width;
        let (left, right, out) = (&left[..w], &right[..w], &mut out[..w]);
        let (p1, p2) = self.state.split_at_mut(3 * w);
        let (p1_0, rest) = p1.split_at_mut(w);
        let (p1_1, p1_2) = rest.split_at_mut(w);
        let (p2_0, rest) = p2.split_at_mut(w);
        let (p2_1, p2_2) = rest.split_at_mut(w);
        let [n0, n1, n2] = rg.n2;
        let [d0, d1, d2] = rg.d1;
        for x in 0..w {
            let sum = left[x] + right[x];
            let o0 = n0 * sum - d0 * p1_0[x] - p2_0[x];
            let o1 = n1 * sum - d1 * p1_1[x] - p2_1[x];
            let o2 = n2 * sum - d2 * p1_2[x] - p2_2[x];
            p2_0[x] = p1_0[x];
            p2_1[x] = p1_1[x];
            p2_2[x] = p1_2[x];
            p1_0[x] = o0;
            p1_1[x] = o1;
            p1_2[x] = o2;
            out[x] = o0 + o1 + o2;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coefficients_are_the_forks() {
        // create_recursive_gaussian(1.5) as the fork's C computes it.
        let rg = RecursiveGaussian::ssimulacra2();
        assert_eq!(rg.radius, 5);
        assert_eq!(rg.n2.map(f32::to_bits), [0x3d62_7d42, 0xbd70_febd, 0x3c54_44a5]);
        assert_eq!(rg.d1.map(f32::to_bits), [0xbff3_7871, 0xbf96_7918, 0xa50d_3132]);
    }

    #[test]
    fn a_constant_line_blurs_to_about_itself_away_from_the_edges() {
        // The IIR approximates a unit-sum Gaussian: a long constant line
        // comes out close to the constant in the middle, lower at the ends
        // (zero padding).
        let rg = RecursiveGaussian::ssimulacra2();
        let input = vec![1.0f32; 64];
        let mut out = vec![0.0; 64];
        rg.blur_line(&input, &mut out);
        assert!((out[32] - 1.0).abs() < 1e-3, "{}", out[32]);
        assert!(out[0] < 0.75 && out[63] < 0.75, "{} {}", out[0], out[63]);
        // An impulse spreads symmetrically about its position.
        let mut impulse = vec![0.0f32; 64];
        impulse[30] = 1.0;
        rg.blur_line(&impulse, &mut out);
        let peak = (0..64).max_by(|&a, &b| out[a].total_cmp(&out[b])).unwrap();
        assert_eq!(peak, 30);
        assert!((out[29] - out[31]).abs() < 1e-4, "{} {}", out[29], out[31]);
    }

    fn plane(w: usize, h: usize, seed: usize) -> Vec<f32> {
        (0..w * h).map(|i| ((i * 7919 + seed * 104_729) % 1013) as f32 / 1013.0 + 0.25).collect()
    }

    #[test]
    fn the_lane_row_pass_is_the_line_oracle_bit_for_bit() {
        let rg = RecursiveGaussian::ssimulacra2();
        for (w, h) in [(37, 21), (8, 8), (16, 9), (3, 5), (1, 1), (64, 17)] {
            let (a, b) = (plane(w, h, 1), plane(w, h, 2));
            for product in [false, true] {
                let mut want = vec![0.0; w * h];
                for y in 0..h {
                    let line: Vec<f32> = (0..w).map(|x| source(&a, product.then_some(&b[..]), y * w + x)).collect();
                    rg.blur_line(&line, &mut want[y * w..(y + 1) * w]);
                }
                let mut lanes = RowLanes::default();
                let bb = product.then_some(&b[..]);
                let mut fast = vec![0.0; w * h];
                blur_rows(&rg, &a, bb, w, h, &mut fast, &mut lanes);
                let mut portable = vec![0.0; w * h];
                blur_rows_portable(&rg, &a, bb, w, h, &mut portable, &mut lanes);
                for got in [&fast, &portable] {
                    assert!(got.iter().zip(&want).all(|(x, y)| x.to_bits() == y.to_bits()), "{w}x{h} {product}");
                }
            }
        }
    }

    #[test]
    fn the_column_pass_is_the_line_oracle_down_each_column() {
        let rg = RecursiveGaussian::ssimulacra2();
        let (w, h) = (13, 19);
        let p = plane(w, h, 3);
        let n = rg.radius as isize;
        let zero = vec![0.0; w];
        let mut iir = ColumnIir::new(w);
        let mut out = vec![0.0; w * h];
        let mut row = vec![0.0; w];
        for i in -n + 1..h as isize {
            let (l, r) = (i - n - 1, i + n - 1);
            let left = if l >= 0 { &p[l as usize * w..][..w] } else { &zero[..] };
            let right = if r < h as isize { &p[r as usize * w..][..w] } else { &zero[..] };
            iir.step(&rg, left, right, &mut row);
            if i >= 0 {
                out[i as usize * w..][..w].copy_from_slice(&row);
            }
        }
        for x in 0..w {
            let column: Vec<f32> = (0..h).map(|y| p[y * w + x]).collect();
            let mut want = vec![0.0; h];
            rg.blur_line(&column, &mut want);
            assert!((0..h).all(|y| out[y * w + x].to_bits() == want[y].to_bits()), "column {x}");
        }
    }
}
