// adm_cm_rows: adm_cm's CPU-driver shape (contract: ADM_CM_ROWS in
// src/features/adm/gpu.rs, C dialect in kernels/adm.cl; the same sums as
// adm_cm). Work item g takes row top + g of one scale's score rectangle and
// walks it left to right, adding nine 64-bit sums (integers: any order):
// no work-group memory, no barrier. The thresholds' 3x3 sums slide along
// the row as three column sums (u32, wrapping as the C's int does), each
// step loading one new column of three rows.
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
    rows: u32,
}

var<immediate> pc: Params;

@group(0) @binding(0) var<storage, read> bands: array<i32>;
@group(0) @binding(1) var<storage, read> work: array<i32>;
@group(0) @binding(2) var<storage, read_write> rows: array<u32>;

#include "adm_cm_neighbour.wgsl"

#include "adm_cm_terms.wgsl"

// The three rows of one column of plane `f`, added (wrapping).
fn colsum(f: u32, rws: vec3<u32>, col: u32) -> u32 {
    return bitcast<u32>(work[f + rws.x + col]) + bitcast<u32>(work[f + rws.y + col]) + bitcast<u32>(work[f + rws.z + col]);
}

struct Terms {
    num: u64,
    aim: u64,
    den: u64,
}

// Band b's three terms at `at`, as adm_cm's loop body.
fn terms(at: u32, b: u32, rf: u32, cub: u32, thr_a: i32, thr_r: i32, sq: u32, den_add: u64) -> Terms {
    let plane = pc.bw * pc.bh;
    let r = work[b * plane + at];
    let a = work[(3u + b) * plane + at];
    let o = bands[pc.base + (1u + b) * plane + at];
    if (pc.scale == 0u) {
        let sub = select(10u, 12u, b == 2u);
        let sqs = select(29u, 30u, b == 2u);
        let x_r = bitcast<i32>(bitcast<u32>(r) * rf);
        let x_a = bitcast<i32>(bitcast<u32>(a) * rf);
        let m = u64(bitcast<u32>(iabs(o)) & 0xffffu);
        return Terms(bitcast<u64>(cube0(x_r, thr_a, sub, sqs, cub)), bitcast<u64>(cube0(x_a, thr_r, sub, sqs, cub)), m * m * m);
    }
    let m = u64(bitcast<u32>(iabs(o)));
    let den = ((((m * m + (1lu << sq)) >> sq) * m) + den_add) >> pc.den_cub;
    return Terms(bitcast<u64>(cube123(r, rf, thr_a, cub)), bitcast<u64>(cube123(a, rf, thr_r, cub)), den);
}

fn put(at: u32, v: u64) {
    rows[at] = u32(v & 0xfffffffflu);
    rows[at + 1u] = u32(v >> 32u);
}

@compute @workgroup_size(8, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let g = gid.x;
    if (g >= pc.rows) {
        return;
    }
    let i = i32(pc.top + g);
    let w = i32(pc.bw);
    let plane = pc.bw * pc.bh;
    let rws = vec3<u32>(u32(nb(i - 1, i32(pc.bh)) * w), u32(i * w), u32(nb(i + 1, i32(pc.bh)) * w));
    // adm_csf_den_s123's square shift; its rounding term is 1 << shift.
    let sq = select(31u, 30u, pc.scale == 2u);
    let den_add = u64(half(pc.den_cub));
    // F of the CSF of a (plane 6) and of r (plane 8); T follows each.
    let fa = 6u * plane;
    let fr = 8u * plane;
    let j0 = i32(pc.left);
    let l0 = u32(nb(j0 - 1, w));
    let r0 = u32(nb(j0 + 1, w));
    var al = colsum(fa, rws, l0);
    var ac = colsum(fa, rws, u32(j0));
    var ar = colsum(fa, rws, r0);
    var rl = colsum(fr, rws, l0);
    var rc = colsum(fr, rws, u32(j0));
    var rr = colsum(fr, rws, r0);
    var n0 = 0lu;
    var n1 = 0lu;
    var n2 = 0lu;
    var a0 = 0lu;
    var a1 = 0lu;
    var a2 = 0lu;
    var d0 = 0lu;
    var d1 = 0lu;
    var d2 = 0lu;
    for (var j = pc.left; j < pc.right; j++) {
        if (j > pc.left) {
            let col = u32(nb(i32(j) + 1, w));
            al = ac;
            ac = ar;
            ar = colsum(fa, rws, col);
            rl = rc;
            rc = rr;
            rr = colsum(fr, rws, col);
        }
        let at = rws.y + j;
        let thr_a = bitcast<i32>(bitcast<u32>(work[fa + plane + at]) + al + ac + ar);
        let thr_r = bitcast<i32>(bitcast<u32>(work[fr + plane + at]) + rl + rc + rr);
        let t0 = terms(at, 0u, pc.rf0, pc.cub0, thr_a, thr_r, sq, den_add);
        let t1 = terms(at, 1u, pc.rf1, pc.cub1, thr_a, thr_r, sq, den_add);
        let t2 = terms(at, 2u, pc.rf2, pc.cub2, thr_a, thr_r, sq, den_add);
        n0 += t0.num;
        n1 += t1.num;
        n2 += t2.num;
        a0 += t0.aim;
        a1 += t1.aim;
        a2 += t2.aim;
        d0 += t0.den;
        d1 += t1.den;
        d2 += t2.den;
    }
    let out = 2u * 9u * (pc.rows_base + g);
    put(out, n0);
    put(out + 2u, n1);
    put(out + 4u, n2);
    put(out + 6u, a0);
    put(out + 8u, a1);
    put(out + 10u, a2);
    put(out + 12u, d0);
    put(out + 14u, d1);
    put(out + 16u, d2);
}
