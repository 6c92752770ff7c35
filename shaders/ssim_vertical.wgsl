// ssim_vertical: the vertical pass of libvmaf's Gaussian over the five
// pictures and each map pixel's SSIM terms (contract: SSIM_VERTICAL in
// src/features/ssim/gpu.rs). WGSL, not GLSL: correct rounding of the
// divisions and square root needs a double's bits (shaders/README.md).
//
// Mirrors iqa/convolve.c `_iqa_convolve` (IQA_CONVOLVE_1D), vertical loop:
// `sum += double(cache[y + t][x] * kernel_v[t])`, t = 0..11 in order, in
// double, stored as float, for the five horizontal planes of ssim_horizontal
// (means mu1, mu2, filtered squares xx, yy, product xy); then
// iqa/ssim_tools.c `_iqa_ssim`'s default path for the pixel, operation for
// operation (src/features/ssim/core.rs `pixel_terms`): variances in float
// clamped at 0 (`MAX(0.0, v)`), covariance, `sigma_ref_sigma_cmp`, and
// l = (2.0 * mu1 * mu2 + C1) / float(mu1*mu1 + mu2*mu2 + C1) and
// c = (2.0 * srsc + C2) / float(s11 + s22 + C2) in double,
// s = (clamped + C3) / (srsc + C3) in float.
//
// Vulkan only promises 2.5 ULP for a float division and less for sqrt and
// double division, and GPUs use such fast sequences. So `div_rn` and
// `sqrt_rn` take the device's result and correct it to the correctly
// rounded one with exact arithmetic (products and differences that fit a
// double, which Vulkan rounds correctly): the same bits as C on any device.
// A float division is done as a correctly rounded double division then
// rounded to float, the same as a correctly rounded float division (a
// double has more than 2 * 24 + 2 bits).
//
// Writes, for each metric of `mask` (bit 0: l * c * s, 1: l, 2: c, 3: s) in
// that order, the pixel's term at terms[terms_offset + k * n + y * width +
// x] (k-th metric written, n = width * rows).

struct Params {
    width: u32,
    rows: u32,
    mask: u32,
    terms_offset: u32,
    c1: f32,
    c2: f32,
    c3: f32,
    // Rows per invocation: y = strip * gid.y + j, j < strip, top to
    // bottom, each plane value read once into a sliding window (the CPU
    // drivers' shape; 1 on GPUs). Every term's operations are the same.
    strip: u32,
}

@group(0) @binding(0) var<storage, read> planes: array<f32>;
@group(0) @binding(1) var<storage, read> taps: array<f32>;
@group(0) @binding(2) var<storage, read_write> terms: array<f64>;
var<immediate> pc: Params;

// The next double above / below a finite x.
#include "widen.wgsl"

fn next_up(x: f64) -> f64 {
    if (x == 0.0lf) {
        return bitcast<f64>(1lu);
    }
    let b = bitcast<u64>(x);
    if (x > 0.0lf) {
        return bitcast<f64>(b + 1lu);
    }
    return bitcast<f64>(b - 1lu);
}

fn next_down(x: f64) -> f64 {
    return -next_up(-x);
}

fn odd(x: f64) -> bool {
    return (bitcast<u64>(x) & 1lu) == 1lu;
}

// a - q * b exactly, for b with at most 24 significant bits (a widened
// float) and q within a few units in the last place of a / b: q is split in
// halves of 26 and 27 bits (Veltkamp), whose products with b fit a double,
// and each difference is exact (Sterbenz; the result fits a double).
fn residual(a: f64, b: f64, q: f64) -> f64 {
    let c = q * 134217729.0lf;
    let qh = c - (c - q);
    let ql = q - qh;
    return (a - qh * b) - ql * b;
}

// a / b correctly rounded (ties to even), for b > 0 a widened float.
fn div_rn(a: f64, b: f64) -> f64 {
    var q = a / b;
    if (q == 0.0lf) {
        return q;
    }
    // One Newton step brings a poor division within an ulp or two.
    q = q + residual(a, b, q) / b;
    for (var i = 0; i < 4; i++) {
        // a / b = q + r / b; q is right when |r| is below half the gap to
        // each neighbour, times b (exact: a power of two times b).
        let r = residual(a, b, q);
        let up = next_up(q);
        let dn = next_down(q);
        let half_up = (up - q) * 0.5lf * b;
        let half_dn = (q - dn) * 0.5lf * b;
        if (r > half_up || (r == half_up && odd(q))) {
            q = up;
            continue;
        }
        if (-r > half_dn || (-r == half_dn && odd(q))) {
            q = dn;
            continue;
        }
        break;
    }
    return q;
}

// sqrt(x) correctly rounded to float, for x >= 0 (C: (float)sqrt(x)): the
// device's square root, stepped while x lies beyond the midpoint to a
// neighbour (midpoints have 25 bits: their squares are exact doubles, and
// never equal a float, so there are no ties).
fn sqrt_rn(x: f32) -> f32 {
    var r = f32(sqrt(widen(x)));
    if (!(x > 0.0)) {
        return r;
    }
    let xd = widen(x);
    for (var i = 0; i < 4; i++) {
        let up = bitcast<f32>(bitcast<u32>(r) + 1u);
        let mu = (widen(r) + widen(up)) * 0.5lf;
        if (xd > mu * mu) {
            r = up;
            continue;
        }
        let dn = bitcast<f32>(bitcast<u32>(r) - 1u);
        let md = (widen(r) + widen(dn)) * 0.5lf;
        if (xd < md * md) {
            r = dn;
            continue;
        }
        break;
    }
    return r;
}

// The pixel's terms from its five filtered values, written for each metric
// of the mask.
fn write_terms(f: array<f32, 5>, x: u32, y: u32) {
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
    let n = pc.width * pc.rows;
    var o = pc.terms_offset + y * pc.width + x;
    if ((pc.mask & 1u) != 0u) {
        terms[o] = l * c * s;
        o += n;
    }
    if ((pc.mask & 2u) != 0u) {
        terms[o] = l;
        o += n;
    }
    if ((pc.mask & 4u) != 0u) {
        terms[o] = c;
        o += n;
    }
    if ((pc.mask & 8u) != 0u) {
        terms[o] = s;
    }
}

@compute @workgroup_size(64, 4, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let x = gid.x;
    let y0 = gid.y * pc.strip;
    if (x >= pc.width || y0 >= pc.rows) {
        return;
    }
    let y1 = min(y0 + pc.strip, pc.rows);
    let plane = pc.width * (pc.rows + 10u);
    var k: array<f32, 11>;
    for (var t = 0u; t < 11u; t++) {
        k[t] = taps[t];
    }
    // Plane p's window at win[11 p ..]: slots 1..10 hold rows y0..y0+9;
    // each step shifts and reads one row.
    var win: array<f32, 55>;
    for (var p = 0u; p < 5u; p++) {
        for (var t = 0u; t < 10u; t++) {
            win[11u * p + t + 1u] = planes[p * plane + (y0 + t) * pc.width + x];
        }
    }
    for (var y = y0; y < y1; y++) {
        var f: array<f32, 5>;
        for (var p = 0u; p < 5u; p++) {
            for (var t = 0u; t < 10u; t++) {
                win[11u * p + t] = win[11u * p + t + 1u];
            }
            win[11u * p + 10u] = planes[p * plane + (y + 10u) * pc.width + x];
            var sum = 0.0lf;
            for (var t = 0u; t < 11u; t++) {
                sum = sum + widen(win[11u * p + t] * k[t]);
            }
            f[p] = f32(sum);
        }
        write_terms(f, x, y);
    }
}
