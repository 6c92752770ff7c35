// float_adm_dwt0: float ADM's scale-0 wavelet (libvmaf adm_tools.c
// adm_dwt2_s, or adm_dwt2_lo_s with lo_only; contract: FLOAT_ADM_DWT0 in
// src/features/adm/gpu.rs, C dialect in kernels/float_adm.cl). Each sample
// is first what picture_copy makes of it with offset -128 (v * inv_scaler
// - 128; inv_scaler is the inverse of a power of two, so the product is
// the division's exact result). Work item (j, i) of image z writes output
// (i, j) of the bands a, h, v, d at out_base + z * 4 * plane. Every sum
// starts at 0 and adds its four products in order, each rounded.
struct Params {
    width: u32,
    height: u32,
    bytes_per_sample: u32,
    inv_scaler: f32,
    out_base: u32,
    lo_only: u32,
}

var<immediate> pc: Params;

@group(0) @binding(0) var<storage, read> ref_words: array<u32>;
@group(0) @binding(1) var<storage, read> dis_words: array<u32>;
@group(0) @binding(2) var<storage, read_write> bands: array<f32>;

#include "adm_mirror.wgsl"

// dwt2_db2_coeffs_lo_s / _hi_s as their f32 bits.
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

fn sample(img: u32, i: u32) -> f32 {
    var v: u32;
    if (pc.bytes_per_sample == 1u) {
        let w = select(dis_words[i >> 2u], ref_words[i >> 2u], img == 0u);
        return f32((w >> ((i & 3u) * 8u)) & 0xffu) + -128.0f;
    }
    let w = select(dis_words[i >> 1u], ref_words[i >> 1u], img == 0u);
    return f32((w >> ((i & 1u) * 16u)) & 0xffffu) * pc.inv_scaler + -128.0f;
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
            s[k] = sample(img, u32(rows[k] + cols[c]));
        }
        lo[c] = dwt_filter(false, s);
        hi[c] = dwt_filter(true, s);
    }
    let plane = u32(bw * bh);
    let o = pc.out_base + img * 4u * plane + u32(i * bw + j);
    bands[o] = dwt_filter(false, lo);
    if (pc.lo_only != 0u) {
        return;
    }
    bands[o + plane] = dwt_filter(false, hi);
    bands[o + 2u * plane] = dwt_filter(true, lo);
    bands[o + 3u * plane] = dwt_filter(true, hi);
}
