// adm_decouple: integer ADM's decoupling and CSF (libvmaf integer_adm.c
// adm_decouple / adm_decouple_s123 and adm_csf / i4_adm_csf; contract:
// ADM_DECOUPLE in src/features/adm/gpu.rs, C dialect in kernels/adm.cl).
// Work item (x, y) is pixel (top + y, left + x) of one scale's decouple
// rectangle; the bands are at `base` (reference a, h, v, d, then distorted
// a, h, v, d, each plane bw * bh). Writes ten planes of `work`: r h, v, d;
// a h, v, d; then for the CSF of a and of r: F, the sum of the three flt,
// and T, the sum of the centre terms minus F. params[0] is the gain limit.
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
    cos1: f32,
}

var<immediate> pc: Params;

@group(0) @binding(0) var<storage, read> bands: array<i32>;
@group(0) @binding(1) var<storage, read_write> work: array<i32>;
@group(0) @binding(2) var<storage, read> params: array<f64>;

fn i16(x: i32) -> i32 {
    return (x << 16u) >> 16u;
}

// |x| as C's abs() on int32 (INT_MIN stays INT_MIN).
fn iabs(x: i32) -> i32 {
    return select(x, bitcast<i32>(0u - bitcast<u32>(x)), x < 0);
}

#include "widen.wgsl"

// A u32 as the i64 of the same value (C's uint32_t in an int64_t
// product). Through u64: naga lowers i64(u32) to a sign-extending
// OpSConvert (seen on lavapipe: the scale 1-3 CSF factors of 2^31 and
// above, adm_csf_mode=1 for one, came out negative).
fn widen_u32(x: u32) -> i64 {
    return bitcast<i64>(u64(x));
}

// div_lookup[32768 + u] = 2^30 / u.
fn recip(u: u32) -> i64 {
    return i64(1073741824 / i32(u));
}

// The int64 products as float, / 4096 and compared in double. The floats
// are widened with widen(), not f64(): Mesa 25.0.7's lavapipe computes a
// product of converted floats (d * d, cos1 * o) as a float product
// (include/widen.wgsl), which flipped the test where it is close: integer
// adm's scale 1 and aim off on 16-bit 0/65535 stripes (35x34, the
// twin-diff session's GPU differential test).
fn angle(dp: i64, om: i64, tm: i64) -> bool {
    let d = widen(f32(dp)) / 4096.0lf;
    let o = widen(f32(om)) / 4096.0lf;
    let t = widen(f32(tm)) / 4096.0lf;
    return d >= 0.0lf && d * d >= widen(pc.cos1) * o * t;
}

// The enhancement gain: MIN (o > 0) or MAX (o < 0) of rst * limit and t
// in double, truncated back; only where the angles agree and k > 0.
// `limit` is params[0], loaded once a pixel (a storage load costs lavapipe
// a loop over the lanes; shaders/README.md).
fn gain(rst: i32, k: i64, o: i32, t: i32, agree: bool, limit: f64) -> i32 {
    if (agree && k > 0li && o != 0) {
        let x = f64(rst) * limit;
        let tt = f64(t);
        var v = tt;
        if (o > 0) {
            if (x < tt) {
                v = x;
            }
        } else if (x > tt) {
            v = x;
        }
        return i32(v);
    }
    return rst;
}

fn clamp_k(tmp: i64) -> i64 {
    return select(select(tmp, 32768li, tmp > 32768li), 0li, tmp < 0li);
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
    var rf = array<u32, 3>(pc.rf0, pc.rf1, pc.rf2);
    var o: array<i32, 3>;
    var t: array<i32, 3>;
    for (var b = 0u; b < 3u; b++) {
        o[b] = bands[pc.base + (1u + b) * plane + k];
        t[b] = bands[pc.base + (5u + b) * plane + k];
    }
    let dp = i64(o[0]) * i64(t[0]) + i64(o[1]) * i64(t[1]);
    let om = i64(o[0]) * i64(o[0]) + i64(o[1]) * i64(o[1]);
    let tm = i64(t[0]) * i64(t[0]) + i64(t[1]) * i64(t[1]);
    let agree = angle(dp, om, tm);
    var r: array<i32, 3>;
    var a: array<i32, 3>;
    for (var b = 0u; b < 3u; b++) {
        var tmp = 32768li;
        if (pc.scale == 0u) {
            if (o[b] != 0) {
                let rec = recip(u32(iabs(o[b]))) * select(1li, -1li, o[b] < 0);
                tmp = i64(i32((rec * i64(t[b]) + 16384li) >> 15u));
            }
            let kk = clamp_k(tmp);
            let rst = i16(i32((kk * i64(o[b]) + 16384li) >> 15u));
            r[b] = i16(gain(rst, kk, o[b], t[b], agree, limit));
            a[b] = i16(t[b] - r[b]);
        } else {
            if (o[b] != 0) {
                let m = bitcast<u32>(iabs(o[b]));
                var msb = m;
                var shift = 0u;
                if (m >= 32768u) {
                    // get_best15_from32
                    shift = 17u - countLeadingZeros(m);
                    msb = (m + (1u << (shift - 1u))) >> shift;
                }
                let sign = select(1li, -1li, o[b] < 0);
                tmp = ((recip(msb) * i64(t[b])) * sign + (1li << (14u + shift))) >> (15u + shift);
            }
            let kk = clamp_k(tmp);
            let rst = i32((kk * i64(o[b]) + 16384li) >> 15u);
            r[b] = gain(rst, kk, o[b], t[b], agree, limit);
            a[b] = bitcast<i32>(bitcast<u32>(t[b]) - bitcast<u32>(r[b]));
        }
    }
    // The CSF of a (it masks r: the numerator) and of r (it masks a: AIM).
    var f = array<u32, 2>(0u, 0u);
    var c = array<u32, 2>(0u, 0u);
    for (var side = 0u; side < 2u; side++) {
        for (var b = 0u; b < 3u; b++) {
            let v = select(r[b], a[b], side == 0u);
            var fl: i32;
            var ce: i32;
            if (pc.scale == 0u) {
                let add = select(16384, 65535, b == 2u);
                let shift = select(15u, 17u, b == 2u);
                let csf = i16((i32(rf[b]) * v + add) >> shift);
                let m = iabs(csf);
                fl = i16((4369 * m + 2048) >> 12u);
                ce = i16((8738 * m + 2048) >> 12u);
            } else {
                let csf = i32((widen_u32(rf[b]) * i64(v) + (1li << 27u)) >> 28u);
                // libvmaf's rounding term is 1u << 31 stored in an int32: -2^31.
                let m = i64(iabs(csf));
                fl = i32((143165577li * m - (1li << 31u)) >> 32u);
                ce = i32((286331153li * m - (1li << 31u)) >> 32u);
            }
            f[side] += bitcast<u32>(fl);
            c[side] += bitcast<u32>(ce);
        }
    }
    for (var b = 0u; b < 3u; b++) {
        work[b * plane + k] = r[b];
        work[(3u + b) * plane + k] = a[b];
    }
    work[6u * plane + k] = bitcast<i32>(f[0]);
    work[7u * plane + k] = bitcast<i32>(c[0] - f[0]);
    work[8u * plane + k] = bitcast<i32>(f[1]);
    work[9u * plane + k] = bitcast<i32>(c[1] - f[1]);
}
