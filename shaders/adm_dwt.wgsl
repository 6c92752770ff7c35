// adm_dwt: integer ADM's wavelet at scales 1-3 (libvmaf integer_adm.c
// adm_dwt2_s123_combined; contract: ADM_DWT in src/features/adm/gpu.rs, C
// dialect in kernels/adm.cl). The input is the previous scale's
// approximation band of image z (at in_base + z * 4 * in_plane), width x
// height; work item (j, i) writes output (i, j) of the four bands. Sums in
// i64, each pass rounded and shifted by the scale's own amounts.
struct Params {
    width: u32,
    height: u32,
    in_base: u32,
    in_plane: u32,
    out_base: u32,
    scale: u32,
}

var<immediate> pc: Params;

@group(0) @binding(0) var<storage, read_write> bands: array<i32>;

#include "adm_mirror.wgsl"

fn lo_tap(k: i32) -> i64 {
    return i64(select(select(select(-4240, 7345, k == 2), 27411, k == 1), 15826, k == 0));
}

fn hi_tap(k: i32) -> i64 {
    return i64(select(select(select(-15826, 27411, k == 2), -7345, k == 1), -4240, k == 0));
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
    let add_vp = select(32768li, 0li, pc.scale == 1u);
    let shift_vp = select(16u, 0u, pc.scale == 1u);
    let add_hp = select(16384li, 32768li, pc.scale == 2u);
    let shift_hp = select(15u, 16u, pc.scale == 2u);
    let src = pc.in_base + img * 4u * pc.in_plane;
    var rows: array<i32, 4>;
    var cols: array<i32, 4>;
    for (var k = 0; k < 4; k++) {
        rows[k] = mirror(2 * i - 1 + k, h) * w;
        cols[k] = mirror(2 * j - 1 + k, w);
    }
    var lo: array<i64, 4>;
    var hi: array<i64, 4>;
    for (var c = 0; c < 4; c++) {
        var acc_lo = 0li;
        var acc_hi = 0li;
        for (var k = 0; k < 4; k++) {
            let s = i64(bands[src + u32(rows[k] + cols[c])]);
            acc_lo += lo_tap(k) * s;
            acc_hi += hi_tap(k) * s;
        }
        // (int32_t) of the shifted sums.
        lo[c] = i64(i32((acc_lo + add_vp) >> shift_vp));
        hi[c] = i64(i32((acc_hi + add_vp) >> shift_vp));
    }
    var a = add_hp;
    var v = add_hp;
    var hh = add_hp;
    var d = add_hp;
    for (var k = 0; k < 4; k++) {
        a += lo_tap(k) * lo[k];
        v += hi_tap(k) * lo[k];
        hh += lo_tap(k) * hi[k];
        d += hi_tap(k) * hi[k];
    }
    let plane = u32(bw * bh);
    let o = pc.out_base + img * 4u * plane + u32(i * bw + j);
    bands[o] = i32(a >> shift_hp);
    bands[o + plane] = i32(hh >> shift_hp);
    bands[o + 2u * plane] = i32(v >> shift_hp);
    bands[o + 3u * plane] = i32(d >> shift_hp);
}
