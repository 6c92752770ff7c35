// vif_vertical_strip: VIF_VERTICAL's arithmetic in the shape for CPU
// drivers (contract: VIF_VERTICAL_STRIP in src/features/vif/gpu_integer.rs;
// the C dialect is kernels/vif.cl). Item (x, g) makes rows y0 .. y0 + 7
// (y0 = 8 g) of column x: each sample of the column is loaded once into a
// window of eight that slides a row per tap, where an item per pixel loads
// it `width` times (lavapipe loads storage buffers lane by lane, or
// gathers: the loads are its cost). The next scale's filter reads the same
// rows (its taps are the middle sub_width of this scale's), so it adds
// from the same window with no loads of its own. The sums are integers, so
// any order gives the same bits.
struct Params {
    w: u32,
    h: u32,
    format: u32,
    tap0: u32,
    width: u32,
    mode: u32,
    mu_add: u32,
    mu_shift: u32,
    sq_add: u32,
    sq_shift: u32,
    sub_tap0: u32,
    sub_width: u32,
    sub_add: u32,
    sub_shift: u32,
}

var<immediate> pc: Params;

@group(0) @binding(0) var<storage, read> ref_plane: array<u32>;
@group(0) @binding(1) var<storage, read> dis_plane: array<u32>;
@group(0) @binding(2) var<storage, read> taps: array<u32>;
@group(0) @binding(3) var<storage, read_write> vsum: array<u32>;
@group(0) @binding(4) var<storage, read_write> vsub: array<u32>;

#include "vif_mirror.wgsl"

// Sample i: 1 byte (format 0), a u16 (format 1) or a u32 (format 2).
fn sample_ref(i: u32) -> u32 {
    if (pc.format == 0u) {
        return (ref_plane[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu;
    }
    if (pc.format == 1u) {
        return (ref_plane[i >> 1u] >> ((i & 1u) * 16u)) & 0xffffu;
    }
    return ref_plane[i];
}

fn sample_dis(i: u32) -> u32 {
    if (pc.format == 0u) {
        return (dis_plane[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu;
    }
    if (pc.format == 1u) {
        return (dis_plane[i >> 1u] >> ((i & 1u) * 16u)) & 0xffffu;
    }
    return dis_plane[i];
}

// One tap's share of four rows' vif_statistic_8 sums: u32, wrapping, as
// the per-pixel kernel's c·r·r is (ca · a mod 2^32 = c · (a · a) mod 2^32).
struct Sums8 {
    mu1: vec4<u32>,
    mu2: vec4<u32>,
    xx: vec4<u32>,
    yy: vec4<u32>,
    xy: vec4<u32>,
}

fn add8(s: ptr<function, Sums8>, c: vec4<u32>, a: vec4<u32>, b: vec4<u32>) {
    (*s).mu1 += c * a;
    (*s).mu2 += c * b;
    (*s).xx += c * (a * a);
    (*s).yy += c * (b * b);
    (*s).xy += c * (a * b);
}

// vif_statistic_16's u64 sums of c·r·r, c·d·d, c·r·d as two u32 sums each:
// c times the low and the high 16 bits of the product (below 2^32: samples
// have at most 16 bits), neither of which wraps (the taps add to 65536).
struct Sums16 {
    mu1: vec4<u32>,
    mu2: vec4<u32>,
    xl: vec4<u32>,
    xh: vec4<u32>,
    yl: vec4<u32>,
    yh: vec4<u32>,
    zl: vec4<u32>,
    zh: vec4<u32>,
}

fn add16(s: ptr<function, Sums16>, c: vec4<u32>, a: vec4<u32>, b: vec4<u32>) {
    let m = vec4<u32>(0xffffu);
    let sh = vec4<u32>(16u);
    let aa = a * a;
    let bb = b * b;
    let ab = a * b;
    (*s).mu1 += c * a;
    (*s).mu2 += c * b;
    (*s).xl += c * (aa & m);
    (*s).xh += c * (aa >> sh);
    (*s).yl += c * (bb & m);
    (*s).yh += c * (bb >> sh);
    (*s).zl += c * (ab & m);
    (*s).zh += c * (ab >> sh);
}

// The u64 sum from its two halves, rounded as vif_statistic_16 writes it.
fn round16(lo: u32, hi: u32) -> u32 {
    return u32((u64(lo) + (u64(hi) << 16u) + u64(pc.sq_add)) >> pc.sq_shift);
}

fn store8(o: u32, plane: u32, s: Sums8, r: u32) {
    vsum[o] = (s.mu1[r] + 128u) >> 8u;
    vsum[plane + o] = (s.mu2[r] + 128u) >> 8u;
    vsum[2u * plane + o] = s.xx[r];
    vsum[3u * plane + o] = s.yy[r];
    vsum[4u * plane + o] = s.xy[r];
}

fn store16(o: u32, plane: u32, s: Sums16, r: u32) {
    vsum[o] = ((s.mu1[r] + pc.mu_add) >> pc.mu_shift) & 0xffffu;
    vsum[plane + o] = ((s.mu2[r] + pc.mu_add) >> pc.mu_shift) & 0xffffu;
    vsum[2u * plane + o] = round16(s.xl[r], s.xh[r]);
    vsum[3u * plane + o] = round16(s.yl[r], s.yh[r]);
    vsum[4u * plane + o] = round16(s.zl[r], s.zh[r]);
}

@compute @workgroup_size(64, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let x = gid.x;
    let y0 = gid.y * 8u;
    let w = pc.w;
    let h = pc.h;
    if (x >= w || y0 >= h) {
        return;
    }
    let plane = w * h;
    let hi = i32(h);
    let p0 = i32(y0) - i32(pc.width / 2u);
    // Windows of r and d: rows p0 + k + 0..3 (lo) and + 4..7 (hi) at tap k.
    var alo = vec4<u32>(0u);
    var ahi = vec4<u32>(0u);
    var blo = vec4<u32>(0u);
    var bhi = vec4<u32>(0u);
    for (var r = 0; r < 7; r++) {
        let i = mirror(p0 + r, hi) * w + x;
        alo = vec4<u32>(alo.yzw, ahi.x);
        ahi = vec4<u32>(ahi.yzw, sample_ref(i));
        blo = vec4<u32>(blo.yzw, bhi.x);
        bhi = vec4<u32>(bhi.yzw, sample_dis(i));
    }
    // Rows p0 .. p0 + 6 now sit in slots 1 .. 7; move them to 0 .. 6.
    alo = vec4<u32>(alo.yzw, ahi.x);
    ahi = vec4<u32>(ahi.yzw, 0u);
    blo = vec4<u32>(blo.yzw, bhi.x);
    bhi = vec4<u32>(bhi.yzw, 0u);
    // The next scale's sums at rows y0, y0 + 2, y0 + 4, y0 + 6: its tap
    // k - d reads the row this scale's tap k reads.
    var sr = vec4<u32>(0u);
    var sd = vec4<u32>(0u);
    let d = pc.width / 2u - pc.sub_width / 2u;
    let z = vec4<u32>(0u);
    var s8lo = Sums8(z, z, z, z, z);
    var s8hi = Sums8(z, z, z, z, z);
    var s16lo = Sums16(z, z, z, z, z, z, z, z);
    var s16hi = Sums16(z, z, z, z, z, z, z, z);
    for (var k = 0u; k < pc.width; k++) {
        let i = mirror(p0 + i32(k) + 7, hi) * w + x;
        ahi.w = sample_ref(i);
        bhi.w = sample_dis(i);
        let c = vec4<u32>(taps[pc.tap0 + k]);
        if (pc.mode == 8u) {
            add8(&s8lo, c, alo, blo);
            add8(&s8hi, c, ahi, bhi);
        } else {
            add16(&s16lo, c, alo, blo);
            add16(&s16hi, c, ahi, bhi);
        }
        if (k - d < pc.sub_width) {
            let cs = vec4<u32>(taps[pc.sub_tap0 + k - d]);
            sr += cs * vec4<u32>(alo.xz, ahi.xz);
            sd += cs * vec4<u32>(blo.xz, bhi.xz);
        }
        alo = vec4<u32>(alo.yzw, ahi.x);
        ahi = vec4<u32>(ahi.yzw, 0u);
        blo = vec4<u32>(blo.yzw, bhi.x);
        bhi = vec4<u32>(bhi.yzw, 0u);
    }
    for (var r = 0u; r < 8u && y0 + r < h; r++) {
        let o = (y0 + r) * w + x;
        if (pc.mode == 8u) {
            if (r < 4u) {
                store8(o, plane, s8lo, r);
            } else {
                store8(o, plane, s8hi, r - 4u);
            }
        } else {
            if (r < 4u) {
                store16(o, plane, s16lo, r);
            } else {
                store16(o, plane, s16hi, r - 4u);
            }
        }
    }
    if (pc.sub_width > 0u) {
        let sub_plane = w * (h / 2u);
        let n0 = y0 / 2u;
        for (var m = 0u; m < 4u && n0 + m < h / 2u; m++) {
            vsub[(n0 + m) * w + x] = ((sr[m] + pc.sub_add) >> pc.sub_shift) & 0xffffu;
            vsub[sub_plane + (n0 + m) * w + x] = ((sd[m] + pc.sub_add) >> pc.sub_shift) & 0xffffu;
        }
    }
}
