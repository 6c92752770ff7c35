// float_adm_dwt: float ADM's wavelet at scales 1-3 (libvmaf adm_tools.c
// adm_dwt2_s; contract: FLOAT_ADM_DWT in src/features/adm/gpu.rs, C dialect
// in kernels/float_adm.cl), from the previous scale's approximation band of
// image z at in_base + z * 4 * in_plane.
struct Params {
    width: u32,
    height: u32,
    in_base: u32,
    in_plane: u32,
    out_base: u32,
}

var<immediate> pc: Params;

@group(0) @binding(0) var<storage, read_write> bands: array<f32>;

#include "adm_mirror.wgsl"

fn tap(high: bool, k: i32) -> f32 {
    var lo = array<u32, 4>(0x3ef746eau, 0x3f5625efu, 0x3e6585f8u, 0xbe0483eeu);
    var hi = array<u32, 4>(0xbe0483eeu, 0xbe6585f8u, 0x3f5625efu, 0xbef746eau);
    return bitcast<f32>(select(lo[k], hi[k], high));
}

fn dwt_filter(high: bool, s: array<f32, 4>) -> f32 {
    var acc = 0.0f;
    for (var k = 0; k < 4; k++) {
        acc = acc + tap(high, k) * s[k];
    }
    return acc;
}

@compute @workgroup_size(64, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let w = i32(pc.width);
    let h = i32(pc.height);
    let bw = (w + 1) / 2;
    let bh = (h + 1) / 2;
    let j = i32(gid.x);
    let i = i32(wid.y);
    let img = wid.z;
    if (j >= bw) {
        return;
    }
    let src = pc.in_base + img * 4u * pc.in_plane;
    var rows: array<i32, 4>;
    var cols: array<i32, 4>;
    for (var k = 0; k < 4; k++) {
        rows[k] = mirror(2 * i - 1 + k, h) * w;
        cols[k] = mirror(2 * j - 1 + k, w);
    }
    var lo: array<f32, 4>;
    var hi: array<f32, 4>;
    for (var c = 0; c < 4; c++) {
        var s: array<f32, 4>;
        for (var k = 0; k < 4; k++) {
            s[k] = bands[src + u32(rows[k] + cols[c])];
        }
        lo[c] = dwt_filter(false, s);
        hi[c] = dwt_filter(true, s);
    }
    let plane = u32(bw * bh);
    let o = pc.out_base + img * 4u * plane + u32(i * bw + j);
    bands[o] = dwt_filter(false, lo);
    bands[o + plane] = dwt_filter(false, hi);
    bands[o + 2u * plane] = dwt_filter(true, lo);
    bands[o + 3u * plane] = dwt_filter(true, hi);
}
