// float_adm_cm: float ADM's contrast masking and denominator per band row
// (libvmaf adm_tools.c adm_cm_s and adm_csf_den_scale_s; contract:
// FLOAT_ADM_CM in src/features/adm/gpu.rs, C dialect in
// kernels/float_adm.cl). Work group g takes row top + g of one scale's
// score rectangle. For CHUNK pixels at a time its work items compute each
// pixel's nine terms (num: the restored bands' masked p-th powers,
// thresholds from the CSF of a; aim: the additive bands', thresholds from
// the CSF of r; den: the reference's CSF-weighted p-th powers) into
// workgroup memory; after a barrier work item 0 adds them to the row's sums
// in pixel order (libvmaf's sequential f32 sums), and a second barrier
// keeps the next chunk from overwriting what it has not read. The row's
// sums go to rows[9 * (rows_base + g) + k].
struct Params {
    bw: u32,
    bh: u32,
    base: u32,
    top: u32,
    left: u32,
    right: u32,
    rf0: f32,
    rf1: f32,
    rf2: f32,
    bypass_cm: u32,
    cubes: u32,
    p: f32,
    rows_base: u32,
}

var<immediate> pc: Params;

@group(0) @binding(0) var<storage, read> bands: array<f32>;
@group(0) @binding(1) var<storage, read> work: array<f32>;
@group(0) @binding(2) var<storage, read_write> rows: array<f32>;

const WG: u32 = 128u;
const CHUNK: u32 = 256u;
var<workgroup> terms: array<f32, 2304>;

#include "adm_cm_neighbour.wgsl"

// ADM_CM_THRESH_S_*: per band the nine neighbours of flt in libvmaf's
// order, the centre replaced by 1/15 (a double) * |csf| added in double;
// the bands' sums added. `first` is the triple's first plane (csf h, v, d,
// then flt h, v, d).
fn threshold(first: u32, r: array<u32, 3>, j: i32) -> f32 {
    let plane = pc.bw * pc.bh;
    let w = i32(pc.bw);
    let c = array<u32, 3>(u32(nb(j - 1, w)), u32(j), u32(nb(j + 1, w)));
    var acc = 0.0f;
    for (var b = 0u; b < 3u; b++) {
        let flt = (first + 3u + b) * plane;
        var sum = 0.0f;
        sum = sum + work[flt + r[0] + c[0]];
        sum = sum + work[flt + r[0] + c[1]];
        sum = sum + work[flt + r[0] + c[2]];
        sum = sum + work[flt + r[1] + c[0]];
        sum = f32(f64(sum) + 0.0666666701lf * f64(abs(work[(first + b) * plane + r[1] + c[1]])));
        sum = sum + work[flt + r[1] + c[2]];
        sum = sum + work[flt + r[2] + c[0]];
        sum = sum + work[flt + r[2] + c[1]];
        sum = sum + work[flt + r[2] + c[2]];
        acc = acc + sum;
    }
    return acc;
}

#include "powf.wgsl"

// x^p as the sums take it: a product of three for p = 3.
fn power(x: f32) -> f32 {
    if (pc.cubes != 0u) {
        return x * x * x;
    }
    return powf(x, pc.p);
}

@compute @workgroup_size(128, 1, 1)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let g = wid.x;
    let i = i32(pc.top + g);
    let w = i32(pc.bw);
    let plane = pc.bw * pc.bh;
    let rws = array<u32, 3>(u32(nb(i - 1, i32(pc.bh)) * w), u32(i * w), u32(nb(i + 1, i32(pc.bh)) * w));
    var rf = array<f32, 3>(pc.rf0, pc.rf1, pc.rf2);
    var sums: array<f32, 9>;
    for (var k = 0u; k < 9u; k++) {
        sums[k] = 0.0f;
    }
    for (var start = pc.left; start < pc.right; start += CHUNK) {
        let n = min(pc.right - start, CHUNK);
        for (var c = lid; c < n; c += WG) {
            let j = i32(start + c);
            let at = rws[1] + u32(j);
            var thr_a = 0.0f;
            var thr_r = 0.0f;
            if (pc.bypass_cm == 0u) {
                thr_a = threshold(6u, rws, j);
                thr_r = threshold(12u, rws, j);
            }
            for (var b = 0u; b < 3u; b++) {
                let xr = abs(work[b * plane + at] * rf[b]) - thr_a;
                terms[b * CHUNK + c] = power(max(xr, 0.0f));
                let xa = abs(work[(3u + b) * plane + at] * rf[b]) - thr_r;
                terms[(3u + b) * CHUNK + c] = power(max(xa, 0.0f));
                terms[(6u + b) * CHUNK + c] = power(abs(rf[b] * bands[pc.base + (1u + b) * plane + at]));
            }
        }
        workgroupBarrier();
        if (lid == 0u) {
            for (var c = 0u; c < n; c++) {
                for (var k = 0u; k < 9u; k++) {
                    sums[k] = sums[k] + terms[k * CHUNK + c];
                }
            }
        }
        workgroupBarrier();
    }
    if (lid == 0u) {
        for (var k = 0u; k < 9u; k++) {
            rows[9u * (pc.rows_base + g) + k] = sums[k];
        }
    }
}
