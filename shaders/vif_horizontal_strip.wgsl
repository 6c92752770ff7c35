// vif_horizontal_strip: VIF_HORIZONTAL's arithmetic in the shape for CPU
// drivers (contract: VIF_HORIZONTAL_STRIP in src/features/vif/gpu_integer.rs;
// the C dialect is kernels/vif.cl). Item (t, g) makes pixels x0 .. x0 + 7
// (x0 = 8 t) of rows 8 g .. 8 g + 7: each sample of a row is loaded once
// into a window of eight that slides a column per tap, where an item per
// pixel loads it `width` times (lavapipe loads storage buffers lane by
// lane: the loads are its cost). The item's four sums go to its own
// partials; no work-group memory, no barrier.
struct Params {
    w: u32,
    h: u32,
    tap0: u32,
    width: u32,
    sub_tap0: u32,
    sub_width: u32,
}

var<immediate> pc: Params;

@group(0) @binding(0) var<storage, read> vsum: array<u32>;
@group(0) @binding(1) var<storage, read> vsub: array<u32>;
@group(0) @binding(2) var<storage, read> taps: array<u32>;
// The packed log2 table (64 KiB) as a uniform block: llvmpipe gathers it
// where it loads a storage buffer lane by lane (the lookups were 14% of
// this kernel over issue 9's anchor, measured with them replaced).
@group(0) @binding(3) var<uniform> table4: array<vec4<u32>, 4096>;

fn table_word(w: u32) -> u32 {
    return table4[w >> 2u][w & 3u];
}
@group(0) @binding(4) var<storage, read> dparams: array<f64>;
@group(0) @binding(5) var<storage, read_write> partials: array<u32>;
@group(0) @binding(6) var<storage, read_write> next_ref: array<u32>;
@group(0) @binding(7) var<storage, read_write> next_dis: array<u32>;

const ROWS: u32 = 8u;
const SIGMA_NSQ: i32 = 131072;

struct Sums {
    num_log: u64,
    den_log: u64,
    num_non_log: u64,
    den_non_log: u64,
}

#include "vif_mirror.wgsl"
#include "vif_log2.wgsl"

// A u64 sum of c·v over the taps from its two u32 halves: the sums of c
// times v's low and high 16 bits (each below 65536 · 65535, the taps
// adding to 65536, so neither wraps).
fn join(lo: u32, hi: u32) -> u64 {
    return u64(lo) + (u64(hi) << 16u);
}

// vif_horizontal's statistic of one pixel, added to `s` (every integer
// and double operation of vif_statistic_*).
// gain_limit and eps are dparams[0] and [1], loaded once an item (each
// load costs lavapipe a loop over the lanes).
fn statistic(s: ptr<function, Sums>, gain_limit: f64, eps: f64, mu1: u32, mu2: u32, xx: u64, yy: u64, xy: u64) {
    let mu1_sq = u32((u64(mu1) * u64(mu1) + 2147483648lu) >> 32u);
    let mu2_sq = u32((u64(mu2) * u64(mu2) + 2147483648lu) >> 32u);
    let mu1_mu2 = u32((u64(mu1) * u64(mu2) + 2147483648lu) >> 32u);
    let sigma1_sq = bitcast<i32>(u32((xx + 32768lu) >> 16u) - mu1_sq);
    let sigma2_sq = max(bitcast<i32>(u32((yy + 32768lu) >> 16u) - mu2_sq), 0);
    let sigma12 = bitcast<i32>(u32((xy + 32768lu) >> 16u) - mu1_mu2);
    if (sigma1_sq >= SIGMA_NSQ) {
        (*s).den_log += bitcast<u64>(i64(log2_32(u32(SIGMA_NSQ) + bitcast<u32>(sigma1_sq)) - 2048 * 17));
        if (sigma12 > 0 && sigma2_sq > 0) {
            var g = f64(sigma12) / (f64(sigma1_sq) + eps);
            let sv = f64(sigma2_sq) - g * f64(sigma12);
            var sv_sq = 0u;
            if (sv > 0.0lf) {
                sv_sq = u32(i32(sv));
            }
            if (!(g < gain_limit)) {
                g = gain_limit;
            }
            let numer1 = sv_sq + u32(SIGMA_NSQ);
            let numer1_tmp = i64(g * g * f64(sigma1_sq)) + i64(numer1);
            (*s).num_log += bitcast<u64>(i64(log2_64(bitcast<u64>(numer1_tmp)) - log2_64(u64(numer1))));
        }
    } else {
        (*s).num_non_log += u64(sigma2_sq);
        (*s).den_non_log += 1lu;
    }
}

@compute @workgroup_size(64, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let w = pc.w;
    let h = pc.h;
    let strips = groups.x * 64u;
    let item = gid.y * strips + gid.x;
    let x0 = gid.x * 8u;
    let y0 = gid.y * ROWS;
    var s = Sums(0lu, 0lu, 0lu, 0lu);
    let gain_limit = dparams[0];
    let eps = dparams[1];
    let plane = w * h;
    let wi = i32(w);
    let p0 = i32(x0) - i32(pc.width / 2u);
    for (var y = y0; y < y0 + ROWS && y < h && x0 < w; y++) {
        let row = y * w;
        // Windows (columns p0 + k + 0..3 and + 4..7 at tap k) of mu1, mu2
        // and of the low and high halves of xx, yy, xy; sums alike.
        var w_lo: array<vec4<u32>, 8>;
        var w_hi: array<vec4<u32>, 8>;
        var a_lo: array<vec4<u32>, 8>;
        var a_hi: array<vec4<u32>, 8>;
        for (var q = 0u; q < 8u; q++) {
            a_lo[q] = vec4<u32>(0u);
            a_hi[q] = vec4<u32>(0u);
        }
        var win: array<u32, 7>;
        for (var r = 0u; r < 7u; r++) {
            win[r] = row + mirror(p0 + i32(r), wi);
        }
        // plane q's sample at column index i, split as the sums need.
        var v0 = vec4<u32>(vsum[win[0]], vsum[win[1]], vsum[win[2]], vsum[win[3]]);
        var v1 = vec4<u32>(vsum[win[4]], vsum[win[5]], vsum[win[6]], 0u);
        w_lo[0] = v0;
        w_hi[0] = v1;
        v0 = vec4<u32>(vsum[plane + win[0]], vsum[plane + win[1]], vsum[plane + win[2]], vsum[plane + win[3]]);
        v1 = vec4<u32>(vsum[plane + win[4]], vsum[plane + win[5]], vsum[plane + win[6]], 0u);
        w_lo[1] = v0;
        w_hi[1] = v1;
        for (var q = 2u; q < 5u; q++) {
            let b = q * plane;
            v0 = vec4<u32>(vsum[b + win[0]], vsum[b + win[1]], vsum[b + win[2]], vsum[b + win[3]]);
            v1 = vec4<u32>(vsum[b + win[4]], vsum[b + win[5]], vsum[b + win[6]], 0u);
            // Slots 2q - 2 (low 16 bits) and 2q - 1 (high 16 bits).
            w_lo[2u * q - 2u] = v0 & vec4<u32>(0xffffu);
            w_hi[2u * q - 2u] = v1 & vec4<u32>(0xffffu);
            w_lo[2u * q - 1u] = v0 >> vec4<u32>(16u);
            w_hi[2u * q - 1u] = v1 >> vec4<u32>(16u);
        }
        for (var k = 0u; k < pc.width; k++) {
            let i = row + mirror(p0 + i32(k) + 7, wi);
            let c = vec4<u32>(taps[pc.tap0 + k]);
            w_hi[0].w = vsum[i];
            w_hi[1].w = vsum[plane + i];
            let e2 = vsum[2u * plane + i];
            let e3 = vsum[3u * plane + i];
            let e4 = vsum[4u * plane + i];
            w_hi[2].w = e2 & 0xffffu;
            w_hi[3].w = e2 >> 16u;
            w_hi[4].w = e3 & 0xffffu;
            w_hi[5].w = e3 >> 16u;
            w_hi[6].w = e4 & 0xffffu;
            w_hi[7].w = e4 >> 16u;
            for (var q = 0u; q < 8u; q++) {
                a_lo[q] += c * w_lo[q];
                a_hi[q] += c * w_hi[q];
                w_lo[q] = vec4<u32>(w_lo[q].yzw, w_hi[q].x);
                w_hi[q] = vec4<u32>(w_hi[q].yzw, 0u);
            }
        }
        // Outputs x0 + r: component r of a_lo (r < 4) or a_hi (r >= 4).
        if (x0 + 0u < w) {
            statistic(&s, gain_limit, eps, a_lo[0].x, a_lo[1].x, join(a_lo[2].x, a_lo[3].x), join(a_lo[4].x, a_lo[5].x), join(a_lo[6].x, a_lo[7].x));
        }
        if (x0 + 1u < w) {
            statistic(&s, gain_limit, eps, a_lo[0].y, a_lo[1].y, join(a_lo[2].y, a_lo[3].y), join(a_lo[4].y, a_lo[5].y), join(a_lo[6].y, a_lo[7].y));
        }
        if (x0 + 2u < w) {
            statistic(&s, gain_limit, eps, a_lo[0].z, a_lo[1].z, join(a_lo[2].z, a_lo[3].z), join(a_lo[4].z, a_lo[5].z), join(a_lo[6].z, a_lo[7].z));
        }
        if (x0 + 3u < w) {
            statistic(&s, gain_limit, eps, a_lo[0].w, a_lo[1].w, join(a_lo[2].w, a_lo[3].w), join(a_lo[4].w, a_lo[5].w), join(a_lo[6].w, a_lo[7].w));
        }
        if (x0 + 4u < w) {
            statistic(&s, gain_limit, eps, a_hi[0].x, a_hi[1].x, join(a_hi[2].x, a_hi[3].x), join(a_hi[4].x, a_hi[5].x), join(a_hi[6].x, a_hi[7].x));
        }
        if (x0 + 5u < w) {
            statistic(&s, gain_limit, eps, a_hi[0].y, a_hi[1].y, join(a_hi[2].y, a_hi[3].y), join(a_hi[4].y, a_hi[5].y), join(a_hi[6].y, a_hi[7].y));
        }
        if (x0 + 6u < w) {
            statistic(&s, gain_limit, eps, a_hi[0].z, a_hi[1].z, join(a_hi[2].z, a_hi[3].z), join(a_hi[4].z, a_hi[5].z), join(a_hi[6].z, a_hi[7].z));
        }
        if (x0 + 7u < w) {
            statistic(&s, gain_limit, eps, a_hi[0].w, a_hi[1].w, join(a_hi[2].w, a_hi[3].w), join(a_hi[4].w, a_hi[5].w), join(a_hi[6].w, a_hi[7].w));
        }
        if (pc.sub_width > 0u && (y & 1u) == 0u && y / 2u < h / 2u) {
            let sub_plane = w * (h / 2u);
            let srow = (y / 2u) * w;
            let s0 = i32(x0) - i32(pc.sub_width / 2u);
            var j: array<u32, 7>;
            for (var r = 0u; r < 7u; r++) {
                j[r] = srow + mirror(s0 + i32(r), wi);
            }
            var rlo = vec4<u32>(vsub[j[0]], vsub[j[1]], vsub[j[2]], vsub[j[3]]);
            var rhi = vec4<u32>(vsub[j[4]], vsub[j[5]], vsub[j[6]], 0u);
            var dlo = vec4<u32>(vsub[sub_plane + j[0]], vsub[sub_plane + j[1]], vsub[sub_plane + j[2]], vsub[sub_plane + j[3]]);
            var dhi = vec4<u32>(vsub[sub_plane + j[4]], vsub[sub_plane + j[5]], vsub[sub_plane + j[6]], 0u);
            var ra = vec4<u32>(0u);
            var rb = vec4<u32>(0u);
            var da = vec4<u32>(0u);
            var db = vec4<u32>(0u);
            for (var k = 0u; k < pc.sub_width; k++) {
                let i = srow + mirror(s0 + i32(k) + 7, wi);
                rhi.w = vsub[i];
                dhi.w = vsub[sub_plane + i];
                let c = vec4<u32>(taps[pc.sub_tap0 + k]);
                ra += c * rlo;
                rb += c * rhi;
                da += c * dlo;
                db += c * dhi;
                rlo = vec4<u32>(rlo.yzw, rhi.x);
                rhi = vec4<u32>(rhi.yzw, 0u);
                dlo = vec4<u32>(dlo.yzw, dhi.x);
                dhi = vec4<u32>(dhi.yzw, 0u);
            }
            let half_w = w / 2u;
            let n = (y / 2u) * half_w + x0 / 2u;
            let rr = array<u32, 4>(ra.x, ra.z, rb.x, rb.z);
            let dd = array<u32, 4>(da.x, da.z, db.x, db.z);
            for (var m = 0u; m < 4u && x0 / 2u + m < half_w; m++) {
                next_ref[n + m] = ((rr[m] + 32768u) >> 16u) & 0xffffu;
                next_dis[n + m] = ((dd[m] + 32768u) >> 16u) & 0xffffu;
            }
        }
    }
    partials[item * 8u] = u32(s.num_log & 0xfffffffflu);
    partials[item * 8u + 1u] = u32(s.num_log >> 32u);
    partials[item * 8u + 2u] = u32(s.den_log & 0xfffffffflu);
    partials[item * 8u + 3u] = u32(s.den_log >> 32u);
    partials[item * 8u + 4u] = u32(s.num_non_log & 0xfffffffflu);
    partials[item * 8u + 5u] = u32(s.num_non_log >> 32u);
    partials[item * 8u + 6u] = u32(s.den_non_log & 0xfffffffflu);
    partials[item * 8u + 7u] = u32(s.den_non_log >> 32u);
}
