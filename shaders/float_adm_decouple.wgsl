// float_adm_decouple: float ADM's decoupling and CSF (libvmaf adm_tools.c
// adm_decouple_s and adm_csf_s; contract: FLOAT_ADM_DECOUPLE in
// src/features/adm/gpu.rs, C dialect in kernels/float_adm.cl). Work item
// (x, y) is pixel (top + y, left + x) of one scale's decouple rectangle
// (bands at `base`: reference a, h, v, d, then distorted, each plane
// bw * bh). Writes 18 planes of `work`: r h, v, d; a h, v, d; csf(a) h, v,
// d; flt(a) h, v, d; csf(r) h, v, d; flt(r) h, v, d; with csf_only the
// two csf triples alone (what float_adm_cm_rows reads). params[0] is the
// gain limit; `table` the host's rcpss table (unused with exact_div).
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
    cos1: f32,
    exact_div: u32,
    csf_only: u32,
}

var<immediate> pc: Params;

@group(0) @binding(0) var<storage, read> bands: array<f32>;
@group(0) @binding(1) var<storage, read_write> work: array<f32>;
@group(0) @binding(2) var<storage, read> table: array<u32>;
@group(0) @binding(3) var<storage, read> params: array<f64>;

// The host CPU's rcpss from its table (src/features/adm/float/rcp.rs).
fn rcp(x: f32) -> f32 {
    let b = bitcast<u32>(x);
    let sign = b & 0x80000000u;
    let e = (b >> 23u) & 0xffu;
    let m = b & 0x7fffffu;
    if (e == 255u) {
        return bitcast<f32>(select(sign, b | 0x400000u, m != 0u));
    }
    if (e == 0u) {
        return bitcast<f32>(sign | 0x7f800000u);
    }
    let r = table[m >> 11u];
    let re = i32((r >> 23u) & 0xffu) - (i32(e) - 127);
    if (re <= 0) {
        return bitcast<f32>(sign);
    }
    return bitcast<f32>(sign | (u32(re) << 23u) | (r & 0x7fffffu));
}

// DIVS(n, d): n * rcp_s(d), rcp_s(d) = xi + xi * (1 - d * xi).
fn divs(n: f32, d: f32) -> f32 {
    if (pc.exact_div != 0u) {
        return n / d;
    }
    let xi = rcp(d);
    return n * (xi + xi * (1.0f - d * xi));
}

@compute @workgroup_size(64, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let j = pc.left + gid.x;
    let i = pc.top + wid.y;
    if (j >= pc.right) {
        return;
    }
    let plane = pc.bw * pc.bh;
    let k = i * pc.bw + j;
    let limit = params[0];
    var rf = array<f32, 3>(pc.rf0, pc.rf1, pc.rf2);
    var o: array<f32, 3>;
    var t: array<f32, 3>;
    for (var b = 0u; b < 3u; b++) {
        o[b] = bands[pc.base + (1u + b) * plane + k];
        t[b] = bands[pc.base + (5u + b) * plane + k];
    }
    let ot_dp = o[0] * t[0] + o[1] * t[1];
    let o_mag = o[0] * o[0] + o[1] * o[1];
    let t_mag = t[0] * t[0] + t[1] * t[1];
    let agree = ot_dp >= 0.0f && ot_dp * ot_dp >= pc.cos1 * o_mag * t_mag;
    let eps = bitcast<f32>(0x0da24260u); // 1e-30f
    for (var b = 0u; b < 3u; b++) {
        var kk = divs(t[b], o[b] + eps);
        kk = select(select(kk, 1.0f, kk > 1.0f), 0.0f, kk < 0.0f);
        var rst = kk * o[b];
        // MIN/MAX of a double product and t, back to float; the second
        // test sees the first one's result.
        if (agree && rst > 0.0f) {
            let x = f64(rst) * limit;
            rst = f32(select(f64(t[b]), x, x < f64(t[b])));
        }
        if (agree && rst < 0.0f) {
            let x = f64(rst) * limit;
            rst = f32(select(f64(t[b]), x, x > f64(t[b])));
        }
        let a = t[b] - rst;
        // adm_csf_s: csf = rfactor * src, flt = 1/30 (a double) * |csf|.
        let ca = rf[b] * a;
        let cr = rf[b] * rst;
        work[(6u + b) * plane + k] = ca;
        work[(12u + b) * plane + k] = cr;
        if (pc.csf_only == 0u) {
            work[b * plane + k] = rst;
            work[(3u + b) * plane + k] = a;
            work[(9u + b) * plane + k] = f32(0.0333333351lf * f64(abs(ca)));
            work[(15u + b) * plane + k] = f32(0.0333333351lf * f64(abs(cr)));
        }
    }
}
