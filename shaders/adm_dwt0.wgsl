// adm_dwt0: integer ADM's scale-0 wavelet (libvmaf integer_adm.c
// adm_dwt2_8 / adm_dwt2_16 and their _lo twins; contract: ADM_DWT0 in
// src/features/adm/gpu.rs, C dialect in kernels/adm.cl). Work item (j, i)
// of image z (0 reference, 1 distorted) computes output (i, j) of the four
// bands (a, h, v, d) from the 4x4 mirrored samples around it: the vertical
// pass at the four columns the horizontal pass reads, each centred, rounded
// and stored into int16 as libvmaf's tmplo/tmphi, then the horizontal pass
// rounded `>> 16` into int16 bands (kept as i32).
struct Params {
    width: u32,
    height: u32,
    bytes_per_sample: u32,
    bpc: u32,
    out_base: u32,
    lo_only: u32,
}

var<immediate> pc: Params;

@group(0) @binding(0) var<storage, read> ref_words: array<u32>;
@group(0) @binding(1) var<storage, read> dis_words: array<u32>;
@group(0) @binding(2) var<storage, read_write> bands: array<i32>;

#include "adm_mirror.wgsl"

// A store to int16_t: the low 16 bits, sign-extended.
fn i16(x: i32) -> i32 {
    return (x << 16u) >> 16u;
}

fn lo_tap(k: i32) -> i32 {
    return select(select(select(-4240, 7345, k == 2), 27411, k == 1), 15826, k == 0);
}

fn hi_tap(k: i32) -> i32 {
    return select(select(select(-15826, 27411, k == 2), -7345, k == 1), -4240, k == 0);
}

fn sample(img: u32, i: u32) -> u32 {
    if (pc.bytes_per_sample == 1u) {
        let w = select(dis_words[i >> 2u], ref_words[i >> 2u], img == 0u);
        return (w >> ((i & 3u) * 8u)) & 0xffu;
    }
    let w = select(dis_words[i >> 1u], ref_words[i >> 1u], img == 0u);
    return (w >> ((i & 1u) * 16u)) & 0xffffu;
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
    let add = 1 << (pc.bpc - 1u);
    // dwt2_db2_coeffs_lo_sum * add_shift_VP centres the samples; the sums
    // may wrap (16-bit input), as C's int32 does.
    let centre = 46342u * u32(add);
    var lo: array<i32, 4>;
    var hi: array<i32, 4>;
    for (var c = 0; c < 4; c++) {
        var acc_lo = 0u;
        var acc_hi = 0u;
        for (var k = 0; k < 4; k++) {
            let s = sample(img, u32(rows[k] + cols[c]));
            acc_lo += bitcast<u32>(lo_tap(k)) * s;
            acc_hi += bitcast<u32>(hi_tap(k)) * s;
        }
        lo[c] = i16((bitcast<i32>(acc_lo - centre) + add) >> pc.bpc);
        hi[c] = i16((bitcast<i32>(acc_hi) + add) >> pc.bpc);
    }
    var a = 32768;
    var v = 32768;
    var hh = 32768;
    var d = 32768;
    for (var k = 0; k < 4; k++) {
        a += lo_tap(k) * lo[k];
        v += hi_tap(k) * lo[k];
        hh += lo_tap(k) * hi[k];
        d += hi_tap(k) * hi[k];
    }
    let plane = u32(bw * bh);
    let o = pc.out_base + img * 4u * plane + u32(i * bw + j);
    bands[o] = i16(a >> 16u);
    if (pc.lo_only != 0u) {
        return;
    }
    bands[o + plane] = i16(hh >> 16u);
    bands[o + 2u * plane] = i16(v >> 16u);
    bands[o + 3u * plane] = i16(d >> 16u);
}
