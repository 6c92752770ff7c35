// _iqa_ssim's default-path terms of one map pixel (iqa/ssim_tools.c,
// src/features/ssim/core.rs `pixel_terms`), operation for operation, with
// the divisions and square root correctly rounded on any device. Used by
// ssim_vertical and ssim_vertical_strips; reads the kernel's push
// constants `pc.c1`, `pc.c2`, `pc.c3` (f32), `widen` (include widen.wgsl
// before this file) and `div_rn` / `sqrt_rn` (include correct_rounding.wgsl
// or, on a driver known to divide as IEEE 754 does, ieee_rounding.wgsl
// before this file).

// The pixel's terms [l * c * s, l, c, s] from its five filtered values
// (mu1, mu2, filtered r r, d d, r d): variances in float clamped at 0
// (`MAX(0.0, v)`), covariance, `sigma_ref_sigma_cmp`, l = (2.0 * mu1 * mu2
// + C1) / float(mu1 mu1 + mu2 mu2 + C1) and c = (2.0 * srsc + C2) /
// float(s11 + s22 + C2) in double, s = (clamped + C3) / (srsc + C3) in
// float (zli-nflx's flat-region clamp).
fn ssim_terms(f: array<f32, 5>) -> array<f64, 4> {
    let mu1 = f[0];
    let mu2 = f[1];
    var s11 = f[2] - mu1 * mu1;
    var s22 = f[3] - mu2 * mu2;
    s11 = select(s11, 0.0, 0.0 > s11);
    s22 = select(s22, 0.0, 0.0 > s22);
    let s12 = f[4] - mu1 * mu2;
    let srsc = sqrt_rn(s11 * s22);
    let l_den = mu1 * mu1 + mu2 * mu2 + pc.c1;
    let l = div_rn(2.0lf * widen(mu1) * widen(mu2) + widen(pc.c1), widen(l_den));
    let c_den = s11 + s22 + pc.c2;
    let c = div_rn(2.0lf * widen(srsc) + widen(pc.c2), widen(c_den));
    let clamped = select(s12, 0.0, s12 < 0.0 && srsc <= 0.0);
    let s = widen(f32(div_rn(widen(clamped + pc.c3), widen(srsc + pc.c3))));
    return array<f64, 4>(l * c * s, l, c, s);
}
