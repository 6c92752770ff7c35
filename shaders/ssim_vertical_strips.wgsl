// ssim_vertical_strips: the vertical pass of libvmaf's Gaussian over the
// five pictures, each map pixel's SSIM terms, and their column sums, in
// the CPU drivers' shape (contract: SSIM_VERTICAL_STRIPS in
// src/features/ssim/gpu.rs). WGSL, not GLSL: correct rounding of the
// divisions and square root needs a double's bits (shaders/README.md).
//
// Mirrors iqa/convolve.c `_iqa_convolve` (IQA_CONVOLVE_1D), vertical loop:
// `sum += double(cache[y + t][x] * kernel_v[t])`, t = 0..11 in order, in
// double, stored as float, for the five horizontal planes of ssim_horizontal
// (means mu1, mu2, filtered squares xx, yy, product xy); then
// iqa/ssim_tools.c `_iqa_ssim`'s default path for the pixel
// (include/ssim_terms.wgsl).
//
// Invocation (x, i) walks rows y = strip i + j, j < strip, of column x top
// to bottom, each plane value read once into a sliding window. It writes,
// for each metric of `mask` (bit 0: l * c * s, 1: l, 2: c, 3: s), the k-th
// metric written, the pixel's term at terms[terms_offset + k n + y width +
// x] (n = width * rows), and at partials[partials_offset + 3 (k count + i
// width + x)] its strip's sum of terms, of their magnitudes and of (n -
// raster index) * magnitude, added top to bottom in double (ssim_total
// adds those; src/features/ssim/sums.rs bounds the order's error).

struct Params {
    width: u32,
    rows: u32,
    mask: u32,
    terms_offset: u32,
    c1: f32,
    c2: f32,
    c3: f32,
    strip: u32,
    partials_offset: u32,
    // Partial triples per metric: ceil(rows / strip) * width.
    count: u32,
}

@group(0) @binding(0) var<storage, read> planes: array<f32>;
@group(0) @binding(1) var<storage, read> taps: array<f32>;
@group(0) @binding(2) var<storage, read_write> terms: array<f64>;
@group(0) @binding(3) var<storage, read_write> partials: array<f64>;
var<immediate> pc: Params;

// llvmpipe's variants: the device's division and root (include/ieee_rounding.wgsl),
// and the same storing no term (include/ssim_term_skip.wgsl).
#variant ssim_vertical_strips_ieee "correct_rounding.wgsl" "ieee_rounding.wgsl"
#variant ssim_vertical_strips_ieee_unstored "correct_rounding.wgsl" "ieee_rounding.wgsl" "ssim_term_store.wgsl" "ssim_term_skip.wgsl"
#include "widen.wgsl"
#include "correct_rounding.wgsl"
#include "ssim_terms.wgsl"
#include "ssim_term_store.wgsl"

@compute @workgroup_size(64, 4, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let x = gid.x;
    let y0 = gid.y * pc.strip;
    if (x >= pc.width || y0 >= pc.rows) {
        return;
    }
    let y1 = min(y0 + pc.strip, pc.rows);
    let plane = pc.width * (pc.rows + 10u);
    let n = pc.width * pc.rows;
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
    // Per metric (by mask bit): sum, magnitudes, weighted magnitudes.
    var acc: array<f64, 12>;
    for (var b = 0u; b < 12u; b++) {
        acc[b] = 0.0lf;
    }
    for (var y = y0; y < y1; y++) {
        var f: array<f32, 5>;
        for (var p = 0u; p < 5u; p++) {
            for (var t = 0u; t < 10u; t++) {
                win[11u * p + t] = win[11u * p + t + 1u];
            }
            win[11u * p + 10u] = planes[p * plane + (y + 10u) * pc.width + x];
            // First product through widen(), the others plain (as in
            // ssim_vertical.wgsl: one true double keeps Mesa 25's sum double).
            var sum = 0.0lf + widen(win[11u * p] * k[0]);
            for (var t = 1u; t < 11u; t++) {
                sum = sum + f64(win[11u * p + t] * k[t]);
            }
            f[p] = f32(sum);
        }
        let v = ssim_terms(f);
        let i = y * pc.width + x;
        let weight = f64(n - i);
        var o = pc.terms_offset + i;
        for (var b = 0u; b < 4u; b++) {
            if ((pc.mask & (1u << b)) != 0u) {
                store_term(o, v[b]);
                o += n;
                let a = abs(v[b]);
                acc[3u * b] = acc[3u * b] + v[b];
                acc[3u * b + 1u] = acc[3u * b + 1u] + a;
                acc[3u * b + 2u] = acc[3u * b + 2u] + weight * a;
            }
        }
    }
    var at = pc.partials_offset + 3u * (gid.y * pc.width + x);
    for (var b = 0u; b < 4u; b++) {
        if ((pc.mask & (1u << b)) != 0u) {
            partials[at] = acc[3u * b];
            partials[at + 1u] = acc[3u * b + 1u];
            partials[at + 2u] = acc[3u * b + 2u];
            at += 3u * pc.count;
        }
    }
}
