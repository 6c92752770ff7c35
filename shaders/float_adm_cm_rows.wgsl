// float_adm_cm_rows: float_adm_cm's CPU-driver shape (contract:
// FLOAT_ADM_CM_ROWS in src/features/adm/gpu.rs, C dialect in
// kernels/float_adm.cl; the same sums, bit for bit, as float_adm_cm). Work
// item g takes row top + g of one scale's score rectangle and walks it left
// to right, adding each pixel's nine terms to its sums in pixel order
// (libvmaf's sequential f32 sums): no work-group memory, no barrier. The
// threshold windows (3x3 of flt, recomputed from each CSF plane: the
// centre's CSF is then in the window too) slide along the row in
// registers: each step loads one new column of three rows per plane.
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
    rows: u32,
}

var<immediate> pc: Params;

@group(0) @binding(0) var<storage, read> bands: array<f32>;
@group(0) @binding(1) var<storage, read> work: array<f32>;
@group(0) @binding(2) var<storage, read_write> rows: array<f32>;

fn nb(x: i32, n: i32) -> i32 {
    if (x < 0) {
        return 1;
    }
    if (x >= n) {
        return n - 1;
    }
    return x;
}

// One band's 3x3 window of flt = 1/30 (a double) * |csf| (adm_csf_s's
// second output, recomputed from the CSF plane with the same operations,
// so the same bits as float_adm_decouple's flt planes): columns j - 1, j,
// j + 1 (mirrored), each the rows above, own and below; `centre` is the
// CSF itself at (own row, j), `next` at (own row, j + 1).
struct Win {
    l: vec3<f32>,
    c: vec3<f32>,
    r: vec3<f32>,
    centre: f32,
    next: f32,
}

fn flt(x: f32) -> f32 {
    return f32(0.0333333351lf * f64(abs(x)));
}

fn column(plane: u32, rws: vec3<u32>, col: u32) -> vec3<f32> {
    return vec3<f32>(work[plane + rws.x + col], work[plane + rws.y + col], work[plane + rws.z + col]);
}

fn window(plane: u32, rws: vec3<u32>, l: u32, c: u32, r: u32) -> Win {
    let cl = column(plane, rws, l);
    let cc = column(plane, rws, c);
    let cr = column(plane, rws, r);
    return Win(vec3<f32>(flt(cl.x), flt(cl.y), flt(cl.z)), vec3<f32>(flt(cc.x), flt(cc.y), flt(cc.z)), vec3<f32>(flt(cr.x), flt(cr.y), flt(cr.z)), cc.y, cr.y);
}

// The window one column to the right: `col` is the new right column.
fn slide(w: Win, plane: u32, rws: vec3<u32>, col: u32) -> Win {
    let cr = column(plane, rws, col);
    return Win(w.c, w.r, vec3<f32>(flt(cr.x), flt(cr.y), flt(cr.z)), w.next, cr.y);
}

// ADM_CM_THRESH_S_* of one band: the nine neighbours in libvmaf's order,
// the centre replaced by 1/15 (a double) * |csf| added in double.
fn band_sum(w: Win) -> f32 {
    var sum = 0.0f;
    sum = sum + w.l.x;
    sum = sum + w.c.x;
    sum = sum + w.r.x;
    sum = sum + w.l.y;
    sum = f32(f64(sum) + 0.0666666701lf * f64(abs(w.centre)));
    sum = sum + w.r.y;
    sum = sum + w.l.z;
    sum = sum + w.c.z;
    sum = sum + w.r.z;
    return sum;
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
fn power(x: f32, cubes: bool) -> f32 {
    if (cubes) {
        return x * x * x;
    }
    return powf(x, pc.p);
}

@compute @workgroup_size(8, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let g = gid.x;
    if (g >= pc.rows) {
        return;
    }
    // Two copies of the walk, one without powf's code (p = 3 is the
    // default): the driver folds the constant once walk is inlined.
    if (pc.cubes != 0u) {
        walk(g, true);
    } else {
        walk(g, false);
    }
}

// Row top + g's nine sums.
fn walk(g: u32, cubes: bool) {
    let i = i32(pc.top + g);
    let w = i32(pc.bw);
    let plane = pc.bw * pc.bh;
    let rws = vec3<u32>(u32(nb(i - 1, i32(pc.bh)) * w), u32(i * w), u32(nb(i + 1, i32(pc.bh)) * w));
    let rf = vec3<f32>(pc.rf0, pc.rf1, pc.rf2);
    let cm = pc.bypass_cm == 0u;
    // The CSF planes: 6 + b of a, 12 + b of r.
    let j0 = i32(pc.left);
    let l0 = u32(nb(j0 - 1, w));
    let r0 = u32(nb(j0 + 1, w));
    var wa0 = window(6u * plane, rws, l0, u32(j0), r0);
    var wa1 = window(7u * plane, rws, l0, u32(j0), r0);
    var wa2 = window(8u * plane, rws, l0, u32(j0), r0);
    var wr0 = window(12u * plane, rws, l0, u32(j0), r0);
    var wr1 = window(13u * plane, rws, l0, u32(j0), r0);
    var wr2 = window(14u * plane, rws, l0, u32(j0), r0);
    var num = vec3<f32>(0.0f);
    var aim = vec3<f32>(0.0f);
    var den = vec3<f32>(0.0f);
    for (var j = pc.left; j < pc.right; j++) {
        if (j > pc.left) {
            let col = u32(nb(i32(j) + 1, w));
            wa0 = slide(wa0, 6u * plane, rws, col);
            wa1 = slide(wa1, 7u * plane, rws, col);
            wa2 = slide(wa2, 8u * plane, rws, col);
            wr0 = slide(wr0, 12u * plane, rws, col);
            wr1 = slide(wr1, 13u * plane, rws, col);
            wr2 = slide(wr2, 14u * plane, rws, col);
        }
        let at = rws.y + j;
        var thr_a = 0.0f;
        var thr_r = 0.0f;
        if (cm) {
            thr_a = 0.0f + band_sum(wa0);
            thr_a = thr_a + band_sum(wa1);
            thr_a = thr_a + band_sum(wa2);
            thr_r = 0.0f + band_sum(wr0);
            thr_r = thr_r + band_sum(wr1);
            thr_r = thr_r + band_sum(wr2);
        }
        let xr = abs(vec3<f32>(work[at], work[plane + at], work[2u * plane + at]) * rf) - vec3<f32>(thr_a);
        let xa = abs(vec3<f32>(work[3u * plane + at], work[4u * plane + at], work[5u * plane + at]) * rf) - vec3<f32>(thr_r);
        let o = vec3<f32>(bands[pc.base + plane + at], bands[pc.base + 2u * plane + at], bands[pc.base + 3u * plane + at]);
        let mr = max(xr, vec3<f32>(0.0f));
        let ma = max(xa, vec3<f32>(0.0f));
        let d = abs(rf * o);
        num = num + vec3<f32>(power(mr.x, cubes), power(mr.y, cubes), power(mr.z, cubes));
        aim = aim + vec3<f32>(power(ma.x, cubes), power(ma.y, cubes), power(ma.z, cubes));
        den = den + vec3<f32>(power(d.x, cubes), power(d.y, cubes), power(d.z, cubes));
    }
    let out = 9u * (pc.rows_base + g);
    rows[out] = num.x;
    rows[out + 1u] = num.y;
    rows[out + 2u] = num.z;
    rows[out + 3u] = aim.x;
    rows[out + 4u] = aim.y;
    rows[out + 5u] = aim.z;
    rows[out + 6u] = den.x;
    rows[out + 7u] = den.y;
    rows[out + 8u] = den.z;
}
