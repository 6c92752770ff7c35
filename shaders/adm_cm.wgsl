// adm_cm: integer ADM's contrast masking and denominator, per band row
// (libvmaf integer_adm.c adm_cm / i4_adm_cm and adm_csf_den_scale /
// adm_csf_den_s123; contract: ADM_CM in src/features/adm/gpu.rs, C dialect
// in kernels/adm.cl). Work group g takes row top + g of one scale's score
// rectangle; its 64 work items take columns left + lid, + 64, ... < right,
// each adding nine 64-bit sums (num: the restored bands' masked cubes;
// aim: the additive bands'; den: the reference's cubes); after one barrier
// work item 0 adds the partials (integers: any order) and writes the row's
// nine sums as (lo, hi) words at rows[2 * (9 * (rows_base + g) + k)].
struct Params {
    bw: u32,
    bh: u32,
    base: u32,
    top: u32,
    left: u32,
    right: u32,
    scale: u32,
    rf0: u32,
    rf1: u32,
    rf2: u32,
    cub0: u32,
    cub1: u32,
    cub2: u32,
    den_cub: u32,
    rows_base: u32,
}

var<immediate> pc: Params;

@group(0) @binding(0) var<storage, read> bands: array<i32>;
@group(0) @binding(1) var<storage, read> work: array<i32>;
@group(0) @binding(2) var<storage, read_write> rows: array<u32>;

const WG: u32 = 64u;
var<workgroup> part: array<u64, 576>;

#include "adm_cm_neighbour.wgsl"

#include "adm_cm_terms.wgsl"

// The 3x3 sum of plane f (mirrored neighbours) plus plane f + 1 at the
// centre: the masking threshold.
fn threshold(f: u32, r: array<u32, 3>, j: i32, w: i32) -> i32 {
    let plane = pc.bw * pc.bh;
    let c0 = u32(nb(j - 1, w));
    let c2 = u32(nb(j + 1, w));
    let fb = f * plane;
    var s = bitcast<u32>(work[fb + plane + r[1] + u32(j)]);
    for (var k = 0u; k < 3u; k++) {
        s += bitcast<u32>(work[fb + r[k] + c0]) + bitcast<u32>(work[fb + r[k] + u32(j)])
            + bitcast<u32>(work[fb + r[k] + c2]);
    }
    return bitcast<i32>(s);
}

@compute @workgroup_size(64, 1, 1)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let g = wid.x;
    let i = i32(pc.top + g);
    let w = i32(pc.bw);
    let plane = pc.bw * pc.bh;
    let rws = array<u32, 3>(u32(nb(i - 1, i32(pc.bh)) * w), u32(i * w), u32(nb(i + 1, i32(pc.bh)) * w));
    var rf = array<u32, 3>(pc.rf0, pc.rf1, pc.rf2);
    var cub = array<u32, 3>(pc.cub0, pc.cub1, pc.cub2);
    // adm_csf_den_s123's square shift; its rounding term is 1 << shift.
    let sq = select(31u, 30u, pc.scale == 2u);
    let den_add = u64(half(pc.den_cub));
    var s: array<u64, 9>;
    for (var k = 0u; k < 9u; k++) {
        s[k] = 0lu;
    }
    for (var j = pc.left + lid; j < pc.right; j += WG) {
        let at = u32(i) * pc.bw + j;
        let thr_a = threshold(6u, rws, i32(j), w);
        let thr_r = threshold(8u, rws, i32(j), w);
        for (var b = 0u; b < 3u; b++) {
            let r = work[b * plane + at];
            let a = work[(3u + b) * plane + at];
            let o = bands[pc.base + (1u + b) * plane + at];
            if (pc.scale == 0u) {
                let sub = select(10u, 12u, b == 2u);
                let sqs = select(29u, 30u, b == 2u);
                let x_r = bitcast<i32>(bitcast<u32>(r) * rf[b]);
                let x_a = bitcast<i32>(bitcast<u32>(a) * rf[b]);
                s[b] += bitcast<u64>(cube0(x_r, thr_a, sub, sqs, cub[b]));
                s[3u + b] += bitcast<u64>(cube0(x_a, thr_r, sub, sqs, cub[b]));
                let m = u64(bitcast<u32>(iabs(o)) & 0xffffu);
                s[6u + b] += m * m * m;
            } else {
                s[b] += bitcast<u64>(cube123(r, rf[b], thr_a, cub[b]));
                s[3u + b] += bitcast<u64>(cube123(a, rf[b], thr_r, cub[b]));
                let m = u64(bitcast<u32>(iabs(o)));
                s[6u + b] += ((((m * m + (1lu << sq)) >> sq) * m) + den_add) >> pc.den_cub;
            }
        }
    }
    for (var k = 0u; k < 9u; k++) {
        part[k * WG + lid] = s[k];
    }
    workgroupBarrier();
    if (lid == 0u) {
        for (var k = 0u; k < 9u; k++) {
            var total = 0lu;
            for (var t = 0u; t < WG; t++) {
                total += part[k * WG + t];
            }
            let at = 2u * (9u * (pc.rows_base + g) + k);
            rows[at] = u32(total & 0xfffffffflu);
            rows[at + 1u] = u32(total >> 32u);
        }
    }
}
