// vif_horizontal: the horizontal pass and statistic of one integer VIF
// scale, with the group's four sums (contract: VIF_HORIZONTAL in
// src/features/vif/gpu_integer.rs; the C dialect is kernels/vif.cl). WGSL
// for its 64-bit integers (shaders/README.md).
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
@group(0) @binding(3) var<storage, read> table: array<u32>;

fn table_word(w: u32) -> u32 {
    return table[w];
}
@group(0) @binding(4) var<storage, read> dparams: array<f64>;
@group(0) @binding(5) var<storage, read_write> partials: array<u32>;
@group(0) @binding(6) var<storage, read_write> next_ref: array<u32>;
@group(0) @binding(7) var<storage, read_write> next_dis: array<u32>;

const WG: u32 = 256u;
const ROWS: u32 = 8u;
const SIGMA_NSQ: i32 = 131072;

var<workgroup> part: array<u32, 2048>;

#include "vif_mirror.wgsl"
#include "vif_log2.wgsl"

@compute @workgroup_size(256, 1, 1)
fn main(@builtin(local_invocation_id) lid3: vec3<u32>, @builtin(workgroup_id) group: vec3<u32>,
        @builtin(num_workgroups) groups: vec3<u32>) {
    let lid = lid3.x;
    let x = group.x * WG + lid;
    let y0 = group.y * ROWS;
    let w = pc.w;
    let h = pc.h;
    let plane = w * h;
    let half = i32(pc.width / 2u);
    let gain_limit = dparams[0];
    let eps = dparams[1];
    var sums = array<u64, 4>(0lu, 0lu, 0lu, 0lu);
    for (var y = y0; y < y0 + ROWS && y < h && x < w; y++) {
        var mu1 = 0u;
        var mu2 = 0u;
        var xx = 0lu;
        var yy = 0lu;
        var xy = 0lu;
        for (var k = 0u; k < pc.width; k++) {
            let i = y * w + mirror(i32(x) - half + i32(k), i32(w));
            let c = taps[pc.tap0 + k];
            mu1 += c * vsum[i];
            mu2 += c * vsum[plane + i];
            xx += u64(c) * u64(vsum[2u * plane + i]);
            yy += u64(c) * u64(vsum[3u * plane + i]);
            xy += u64(c) * u64(vsum[4u * plane + i]);
        }
        let mu1_sq = u32((u64(mu1) * u64(mu1) + 2147483648lu) >> 32u);
        let mu2_sq = u32((u64(mu2) * u64(mu2) + 2147483648lu) >> 32u);
        let mu1_mu2 = u32((u64(mu1) * u64(mu2) + 2147483648lu) >> 32u);
        let sigma1_sq = bitcast<i32>(u32((xx + 32768lu) >> 16u) - mu1_sq);
        let sigma2_sq = max(bitcast<i32>(u32((yy + 32768lu) >> 16u) - mu2_sq), 0);
        let sigma12 = bitcast<i32>(u32((xy + 32768lu) >> 16u) - mu1_mu2);
        if (sigma1_sq >= SIGMA_NSQ) {
            sums[1] += bitcast<u64>(i64(log2_32(u32(SIGMA_NSQ) + bitcast<u32>(sigma1_sq)) - 2048 * 17));
            if (sigma12 > 0 && sigma2_sq > 0) {
                var g = f64(sigma12) / (f64(sigma1_sq) + eps);
                let sv = f64(sigma2_sq) - g * f64(sigma12);
                // C truncates to int32; a negative value becomes 0.
                var sv_sq = 0u;
                if (sv > 0.0lf) {
                    sv_sq = u32(i32(sv));
                }
                if (!(g < gain_limit)) {
                    g = gain_limit;
                }
                let numer1 = sv_sq + u32(SIGMA_NSQ);
                let numer1_tmp = i64(g * g * f64(sigma1_sq)) + i64(numer1);
                sums[0] += bitcast<u64>(i64(log2_64(bitcast<u64>(numer1_tmp)) - log2_64(u64(numer1))));
            }
        } else {
            sums[2] += u64(sigma2_sq);
            sums[3] += 1lu;
        }
        if (pc.sub_width > 0u && ((x | y) & 1u) == 0u && x / 2u < w / 2u && y / 2u < h / 2u) {
            let sub_half = i32(pc.sub_width / 2u);
            let sub_plane = w * (h / 2u);
            var sr = 0u;
            var sd = 0u;
            for (var k = 0u; k < pc.sub_width; k++) {
                let i = (y / 2u) * w + mirror(i32(x) - sub_half + i32(k), i32(w));
                let c = taps[pc.sub_tap0 + k];
                sr += c * vsub[i];
                sd += c * vsub[sub_plane + i];
            }
            next_ref[(y / 2u) * (w / 2u) + x / 2u] = ((sr + 32768u) >> 16u) & 0xffffu;
            next_dis[(y / 2u) * (w / 2u) + x / 2u] = ((sd + 32768u) >> 16u) & 0xffffu;
        }
    }
    // The group's sums: every work item's four, then work items 0..3 each
    // add one of them over the group (u64 integers: any order).
    for (var q = 0u; q < 4u; q++) {
        part[(q * WG + lid) * 2u] = u32(sums[q] & 0xfffffffflu);
        part[(q * WG + lid) * 2u + 1u] = u32(sums[q] >> 32u);
    }
    workgroupBarrier();
    if (lid < 4u) {
        var total = 0lu;
        for (var i = 0u; i < WG; i++) {
            total += u64(part[(lid * WG + i) * 2u]) | (u64(part[(lid * WG + i) * 2u + 1u]) << 32u);
        }
        let index = group.y * groups.x + group.x;
        partials[(index * 4u + lid) * 2u] = u32(total & 0xfffffffflu);
        partials[(index * 4u + lid) * 2u + 1u] = u32(total >> 32u);
    }
}
