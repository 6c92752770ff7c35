//! Linear RGB to XYB: ssimulacra2.c `linear_rgb_to_xyb` (libjxl's opsin
//! absorbance matrix, bias and cube root, then `MakePositiveXYB`) with
//! ssimulacra2_math.h's deterministic cube root `vmaf_ss2_cbrtf`.

/// libjxl's opsin absorbance matrix (opsin_params.h), as ssimulacra2.c
/// declares it; the diagonal is `1 - the row's other two`, in f32.
pub const M00: f32 = 0.30;
pub const M02: f32 = 0.078;
pub const M10: f32 = 0.23;
pub const M12: f32 = 0.078;
// The literals as the C spells them: each rounds straight to f32 (a shorter
// decimal can round to a neighbouring float).
#[allow(clippy::excessive_precision)]
pub const M20: f32 = 0.24342268924547819;
#[allow(clippy::excessive_precision)]
pub const M21: f32 = 0.20476744424496821;
#[allow(clippy::excessive_precision)]
pub const OPSIN_BIAS: f32 = 0.0037930732552754493;

/// `vmaf_ss2_cbrtf`: 0 for `x <= 0`; else the exponent divided by three
/// through the bits (`i / 3 + 0x2a5137a0`), then two Newton steps
/// `y = (2y + x / (y * y)) * (1 / 3)`, every operation in f32.
#[inline(always)]
pub fn cbrtf(x: f32) -> f32 {
    let mut y = f32::from_bits(x.to_bits() / 3 + 0x2a51_37a0);
    y = (2.0 * y + x / (y * y)) * (1.0 / 3.0);
    y = (2.0 * y + x / (y * y)) * (1.0 / 3.0);
    if x <= 0.0 { 0.0 } else { y }
}

/// The f32 constants of `linear_rgb_to_xyb`.
#[derive(Debug, Clone, Copy)]
pub struct Opsin {
    pub m01: f32,
    pub m11: f32,
    pub m22: f32,
    /// `vmaf_ss2_cbrtf(kOpsinBias)`.
    pub cbrt_bias: f32,
}

impl Default for Opsin {
    fn default() -> Self {
        Opsin { m01: 1.0 - M00 - M02, m11: 1.0 - M10 - M12, m22: 1.0 - M20 - M21, cbrt_bias: cbrtf(OPSIN_BIAS) }
    }
}

impl Opsin {
    /// One pixel: linear (r, g, b) to the rescaled (X, Y, B).
    #[inline(always)]
    pub fn xyb(&self, r: f32, g: f32, b: f32) -> [f32; 3] {
        let l = M00 * r + self.m01 * g + M02 * b + OPSIN_BIAS;
        let m = M10 * r + self.m11 * g + M12 * b + OPSIN_BIAS;
        let s = M20 * r + M21 * g + self.m22 * b + OPSIN_BIAS;
        let big_l = cbrtf(l.max(0.0)) - self.cbrt_bias;
        let big_m = cbrtf(m.max(0.0)) - self.cbrt_bias;
        let big_s = cbrtf(s.max(0.0)) - self.cbrt_bias;
        let x = 0.5 * (big_l - big_m);
        let y = 0.5 * (big_l + big_m);
        // MakePositiveXYB: B uses Y before Y is offset.
        let b = (big_s - y) + 0.55;
        [x * 14.0 + 0.42, y + 0.01, b]
    }
}

/// `linear_rgb_to_xyb` over `n` pixels: planar R, G, B in, X, Y, B out.
pub fn linear_rgb_to_xyb(lin: &[f32], xyb: &mut [f32], n: usize) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        unsafe { to_xyb_avx2(lin, xyb, n) };
        return;
    }
    to_xyb(lin, xyb, n);
}

/// [`to_xyb`] compiled for AVX2: eight pixels an instruction, the same IEEE
/// operations (AVX2 brings no FMA), so the same bits.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn to_xyb_avx2(lin: &[f32], xyb: &mut [f32], n: usize) {
    to_xyb(lin, xyb, n)
}

#[inline(always)]
fn to_xyb(lin: &[f32], xyb: &mut [f32], n: usize) {
    let opsin = Opsin::default();
    let (r, rest) = lin[..3 * n].split_at(n);
    let (g, b) = rest.split_at(n);
    let (xs, rest) = xyb[..3 * n].split_at_mut(n);
    let (ys, bs) = rest.split_at_mut(n);
    for i in 0..n {
        let [x, y, bb] = opsin.xyb(r[i], g[i], b[i]);
        xs[i] = x;
        ys[i] = y;
        bs[i] = bb;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cube_root_is_close_and_deterministic() {
        assert_eq!(cbrtf(0.0), 0.0);
        assert_eq!(cbrtf(-1.0), 0.0);
        // Not correctly rounded: 8 gives 2 + 1 ulp, as the fork's C does.
        assert_eq!(cbrtf(8.0), 2.000_000_2);
        // On the inputs the feature feeds it, [bias, 1 + bias]: within 9 ulp
        // (its header promises 1; the C gives the same 8.9 at 0.25).
        for k in 4..1004 {
            let x = k as f32 / 1000.0;
            let exact = f64::from(x).cbrt();
            assert!((f64::from(cbrtf(x)) - exact).abs() <= 9.0 * exact * f64::from(f32::EPSILON), "{x}");
        }
        // The bias's root as the fork's C computes it (0.155954286).
        assert_eq!(cbrtf(OPSIN_BIAS).to_bits(), 0x3e1f_b27b);
    }

    #[test]
    fn black_and_white_land_where_make_positive_xyb_puts_them() {
        let o = Opsin::default();
        // Black: L = M = S = cbrt(bias) - cbrt(bias) = 0.
        assert_eq!(o.xyb(0.0, 0.0, 0.0), [0.42, 0.01, 0.55]);
        // White: the rows sum to 1, so L = M = S; X = 0.42, B = 0.55.
        let [x, y, b] = o.xyb(1.0, 1.0, 1.0);
        assert!((x - 0.42).abs() < 1e-6 && (b - 0.55).abs() < 1e-6, "{x} {b}");
        assert!((y - (1.0037931f32.cbrt() - 0.0037931f32.cbrt() + 0.01)).abs() < 1e-5, "{y}");
    }

    #[test]
    fn planar_conversion_is_the_pixel_function() {
        let n = 37;
        let lin: Vec<f32> = (0..3 * n).map(|i| ((i * 7919) % 1000) as f32 / 999.0).collect();
        let mut out = vec![0.0; 3 * n];
        linear_rgb_to_xyb(&lin, &mut out, n);
        let o = Opsin::default();
        for i in 0..n {
            let want = o.xyb(lin[i], lin[n + i], lin[2 * n + i]);
            assert_eq!([out[i], out[n + i], out[2 * n + i]].map(f32::to_bits), want.map(f32::to_bits));
        }
    }
}
