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

fn nb(x: i32, n: i32) -> i32 {
    if (x < 0) {
        return 1;
    }
    if (x >= n) {
        return n - 1;
    }
    return x;
}

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

fn powf(x: f32, y: f32) -> f32 {
    var invc = array<u64, 16>(
        0x3ff661ec79f8f3belu, 0x3ff571ed4aaf883dlu, 0x3ff49539f0f010b0lu, 0x3ff3c995b0b80385lu,
        0x3ff30d190c8864a5lu, 0x3ff25e227b0b8ea0lu, 0x3ff1bb4a4a1a343flu, 0x3ff12358f08ae5balu,
        0x3ff0953f419900a7lu, 0x3ff0000000000000lu, 0x3fee608cfd9a47aclu, 0x3feca4b31f026aa0lu,
        0x3feb2036576afce6lu, 0x3fe9c2d163a1aa2dlu, 0x3fe886e6037841edlu, 0x3fe767dcf5534862lu,
    );
    var logc = array<u64, 16>(
        0xbfdefec65b963019lu, 0xbfdb0b6832d4fca4lu, 0xbfd7418b0a1fb77blu, 0xbfd39de91a6dcf7blu,
        0xbfd01d9bf3f2b631lu, 0xbfc97c1d1b3b7af0lu, 0xbfc2f9e393af3c9flu, 0xbfb960cbbf788d5clu,
        0xbfaa6f9db6475fcelu, 0x0000000000000000lu, 0x3fb338ca9f24f53dlu, 0x3fc476a9543891balu,
        0x3fce840b4ac4e4d2lu, 0x3fd40645f0c6651clu, 0x3fd88e9c2c1b9ff8lu, 0x3fdce0a44eb17bcclu,
    );
    var poly = array<u64, 5>(
        0x3fd27616c9496e0blu, 0xbfd71969a075c67alu, 0x3fdec70a6ca7baddlu, 0xbfe7154748bef6c8lu,
        0x3ff71547652ab82blu,
    );
    var e2 = array<u64, 32>(
        0x3ff0000000000000lu, 0x3fefd9b0d3158574lu, 0x3fefb5586cf9890flu, 0x3fef9301d0125b51lu,
        0x3fef72b83c7d517blu, 0x3fef54873168b9aalu, 0x3fef387a6e756238lu, 0x3fef1e9df51fdee1lu,
        0x3fef06fe0a31b715lu, 0x3feef1a7373aa9cblu, 0x3feedea64c123422lu, 0x3feece086061892dlu,
        0x3feebfdad5362a27lu, 0x3feeb42b569d4f82lu, 0x3feeab07dd485429lu, 0x3feea47eb03a5585lu,
        0x3feea09e667f3bcdlu, 0x3fee9f75e8ec5f74lu, 0x3feea11473eb0187lu, 0x3feea589994cce13lu,
        0x3feeace5422aa0dblu, 0x3feeb737b0cdc5e5lu, 0x3feec49182a3f090lu, 0x3feed503b23e255dlu,
        0x3feee89f995ad3adlu, 0x3feeff76f2fb5e47lu, 0x3fef199bdd85529clu, 0x3fef3720dcef9069lu,
        0x3fef5818dcfba487lu, 0x3fef7c97337b9b5flu, 0x3fefa4afa2a490dalu, 0x3fefd0765b6e4540lu,
    );
    var e2poly = array<u64, 3>(
        0x3fac6af84b912394lu, 0x3fcebfce50fac4f3lu, 0x3fe62e42ff0c52d6lu,
    );
    var ix = bitcast<u32>(x);
    if (ix - 0x00800000u >= 0x7f800000u - 0x00800000u) {
        if (ix > 0x7f800000u) {
            return x + y;
        }
        if (ix == 0u || ix == 0x7f800000u) {
            return x * x;
        }
        ix = (bitcast<u32>(x * 8388608.0f) & 0x7fffffffu) - (23u << 23u);
    }
    // log2_inline
    let tmp = ix - 0x3f330000u;
    let i = (tmp >> 19u) % 16u;
    let top = tmp & 0xff800000u;
    let iz = ix - top;
    let k = bitcast<i32>(top) >> 23u;
    let z = f64(bitcast<f32>(iz));
    let r = z * bitcast<f64>(invc[i]) - 1.0lf;
    let y0 = bitcast<f64>(logc[i]) + f64(k);
    let r2 = r * r;
    let ya = bitcast<f64>(poly[0]) * r + bitcast<f64>(poly[1]);
    let p = bitcast<f64>(poly[2]) * r + bitcast<f64>(poly[3]);
    let r4 = r2 * r2;
    var q = bitcast<f64>(poly[4]) * r + y0;
    q = p * r2 + q;
    let ylogx = f64(y) * (ya * r4 + q);
    if (((bitcast<u64>(ylogx) >> 47u) & 0xfffflu) >= (bitcast<u64>(126.0lf) >> 47u)) {
        if (ylogx > bitcast<f64>(0x405fffffffd1d571lu)) {
            return bitcast<f32>(0x7f800000u);
        }
        if (ylogx <= -150.0lf) {
            return 0.0f;
        }
    }
    // exp2_inline
    let shift = bitcast<f64>(0x42e8000000000000lu);
    let kd0 = ylogx + shift;
    let ki = bitcast<u64>(kd0);
    let kd = kd0 - shift;
    let rr = ylogx - kd;
    let s = bitcast<f64>(e2[ki % 32lu] + (ki << 47u));
    let zz = bitcast<f64>(e2poly[0]) * rr + bitcast<f64>(e2poly[1]);
    let rr2 = rr * rr;
    var yy = bitcast<f64>(e2poly[2]) * rr + 1.0lf;
    yy = zz * rr2 + yy;
    return f32(yy * s);
}

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
