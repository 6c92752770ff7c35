// adm_dwt_strips: adm_dwt's CPU-driver shape (contract: ADM_DWT_STRIPS in
// src/features/adm/gpu.rs, C dialect in kernels/adm.cl; the same bits).
// Work item x of image z walks outputs (i, 16k) .. (i, 16k + 15) (i, k:
// x / strips, x % strips),
// computing each column's vertical pass once: an output's last two columns
// are the next one's first two.
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

const STRIP: u32 = 16u;

#include "adm_mirror.wgsl"

// Column col's vertical pass in i64, rounded by the scale's shift, as
// (int32_t).
fn vert(src: u32, rws: vec4<i32>, col: i32, add_vp: i64, shift_vp: u32) -> vec2<i64> {
    let s0 = i64(bands[src + u32(rws.x + col)]);
    let s1 = i64(bands[src + u32(rws.y + col)]);
    let s2 = i64(bands[src + u32(rws.z + col)]);
    let s3 = i64(bands[src + u32(rws.w + col)]);
    let acc_lo = 15826li * s0 + 27411li * s1 + 7345li * s2 + -4240li * s3;
    let acc_hi = -4240li * s0 + -7345li * s1 + 27411li * s2 + -15826li * s3;
    return vec2<i64>(i64(i32((acc_lo + add_vp) >> shift_vp)), i64(i32((acc_hi + add_vp) >> shift_vp)));
}

@compute @workgroup_size(8, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let w = i32(pc.width);
    let h = i32(pc.height);
    let bw = (w + 1) / 2;
    let bh = (h + 1) / 2;
    // Work item x takes strip x % strips of row x / strips: every lane busy.
    let strips = (bw + i32(STRIP) - 1) / i32(STRIP);
    let x = i32(gid.x);
    if (x >= strips * bh) {
        return;
    }
    let i = x / strips;
    let first = (x % strips) * i32(STRIP);
    let img = wid.z;
    let last = min(first + i32(STRIP), bw);
    let add_vp = select(32768li, 0li, pc.scale == 1u);
    let shift_vp = select(16u, 0u, pc.scale == 1u);
    let add_hp = select(16384li, 32768li, pc.scale == 2u);
    let shift_hp = select(15u, 16u, pc.scale == 2u);
    let src = pc.in_base + img * 4u * pc.in_plane;
    let rws = vec4<i32>(mirror(2 * i - 1, h) * w, mirror(2 * i, h) * w, mirror(2 * i + 1, h) * w, mirror(2 * i + 2, h) * w);
    var c0 = vert(src, rws, mirror(2 * first - 1, w), add_vp, shift_vp);
    var c1 = vert(src, rws, mirror(2 * first, w), add_vp, shift_vp);
    let plane = u32(bw * bh);
    var o = pc.out_base + img * 4u * plane + u32(i * bw + first);
    for (var j = first; j < last; j++) {
        let c2 = vert(src, rws, mirror(2 * j + 1, w), add_vp, shift_vp);
        let c3 = vert(src, rws, mirror(2 * j + 2, w), add_vp, shift_vp);
        let a = add_hp + 15826li * c0.x + 27411li * c1.x + 7345li * c2.x + -4240li * c3.x;
        let v = add_hp + -4240li * c0.x + -7345li * c1.x + 27411li * c2.x + -15826li * c3.x;
        let hh = add_hp + 15826li * c0.y + 27411li * c1.y + 7345li * c2.y + -4240li * c3.y;
        let d = add_hp + -4240li * c0.y + -7345li * c1.y + 27411li * c2.y + -15826li * c3.y;
        bands[o] = i32(a >> shift_hp);
        bands[o + plane] = i32(hh >> shift_hp);
        bands[o + 2u * plane] = i32(v >> shift_hp);
        bands[o + 3u * plane] = i32(d >> shift_hp);
        c0 = c2;
        c1 = c3;
        o += 1u;
    }
}
