// ssim_vertical: the vertical pass of libvmaf's Gaussian over the five
// pictures, each map pixel's SSIM terms, and their sums over each work
// group's row of 64 pixels, in the GPUs' shape: one pixel per invocation
// (contract: SSIM_VERTICAL in src/features/ssim/gpu.rs; the CPU drivers run
// ssim_vertical_strips). WGSL for the double's bits (shaders/README.md).
//
// The pixel's arithmetic is ssim_vertical_strips': `_iqa_convolve`'s
// vertical loop (`sum += double(cache[y + t][x] * kernel_v[t])`, t = 0..11
// in order, stored as float) over the five horizontal planes, then
// `_iqa_ssim`'s default-path terms (include/ssim_terms.wgsl).
//
// Invocation (x, y) writes, for each metric of `mask` (bit 0: l * c * s,
// 1: l, 2: c, 3: s), the k-th metric written, the pixel's term at
// terms[terms_offset + k n + y width + x] (n = width * rows). Then, for
// each metric, the work group adds each of its rows' 64 terms, their
// magnitudes and (n - raster index) * magnitude in double with a fixed
// tree (strides 32, 16, .., 1; pixels outside the map add 0) and writes
// the triple at partials[partials_offset + 3 (k count + y blocks + bx)],
// blocks = ceil(width / 64), bx the group's column. ssim_total adds those
// (src/features/ssim/sums.rs bounds the order's error).

struct Params {
    width: u32,
    rows: u32,
    mask: u32,
    terms_offset: u32,
    c1: f32,
    c2: f32,
    c3: f32,
    // ssim_vertical_strips' strip; 1 here (unused).
    strip: u32,
    partials_offset: u32,
    // Partial triples per metric: rows * ceil(width / 64).
    count: u32,
}

@group(0) @binding(0) var<storage, read> planes: array<f32>;
@group(0) @binding(1) var<storage, read> taps: array<f32>;
@group(0) @binding(2) var<storage, read_write> terms: array<f64>;
@group(0) @binding(3) var<storage, read_write> partials: array<f64>;
var<immediate> pc: Params;

#include "widen.wgsl"
#include "correct_rounding.wgsl"
#include "ssim_terms.wgsl"

const WG_X: u32 = 64u;
const WG: u32 = 256u;

var<workgroup> red: array<f64, 768>;

@compute @workgroup_size(64, 4, 1)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
) {
    let x = gid.x;
    let y = gid.y;
    let inside = x < pc.width && y < pc.rows;
    let n = pc.width * pc.rows;
    let plane = pc.width * (pc.rows + 10u);
    // No early return: every invocation reaches the barriers below.
    var v = array<f64, 4>(0.0lf, 0.0lf, 0.0lf, 0.0lf);
    var weight = 0.0lf;
    if (inside) {
        var f: array<f32, 5>;
        for (var p = 0u; p < 5u; p++) {
            // The first product through widen(), the others plain: on Mesa
            // 25 a sum of widened floats only would be summed in float
            // (shaders/README.md); once one addend is a true double it is
            // not, and widen() in all 11 taps doubled lavapipe's time.
            var sum = 0.0lf + widen(planes[p * plane + y * pc.width + x] * taps[0]);
            for (var t = 1u; t < 11u; t++) {
                sum = sum + f64(planes[p * plane + (y + t) * pc.width + x] * taps[t]);
            }
            f[p] = f32(sum);
        }
        v = ssim_terms(f);
        let i = y * pc.width + x;
        weight = f64(n - i);
        var o = pc.terms_offset + i;
        for (var b = 0u; b < 4u; b++) {
            if ((pc.mask & (1u << b)) != 0u) {
                terms[o] = v[b];
                o += n;
            }
        }
    }
    let li = lid.y * WG_X + lid.x;
    let blocks = (pc.width + WG_X - 1u) / WG_X;
    var at = pc.partials_offset + 3u * (y * blocks + wid.x);
    for (var b = 0u; b < 4u; b++) {
        if ((pc.mask & (1u << b)) == 0u) {
            continue;
        }
        let a = abs(v[b]);
        red[li] = v[b];
        red[WG + li] = a;
        red[2u * WG + li] = weight * a;
        workgroupBarrier();
        for (var stride = WG_X / 2u; stride > 0u; stride >>= 1u) {
            if (lid.x < stride) {
                red[li] = red[li] + red[li + stride];
                red[WG + li] = red[WG + li] + red[WG + li + stride];
                red[2u * WG + li] = red[2u * WG + li] + red[2u * WG + li + stride];
            }
            workgroupBarrier();
        }
        if (lid.x == 0u && y < pc.rows) {
            partials[at] = red[li];
            partials[at + 1u] = red[WG + li];
            partials[at + 2u] = red[2u * WG + li];
        }
        at += 3u * pc.count;
    }
}
