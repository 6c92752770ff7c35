// float_adm_dwt_strips: float_adm_dwt's CPU-driver shape (contract:
// FLOAT_ADM_DWT_STRIPS in src/features/adm/gpu.rs, C dialect in
// kernels/float_adm.cl; the same bits). Work item x of image z walks
// outputs (i, 16k) .. (i, 16k + 15), i = x / strips, k = x % strips,
// computing each column's vertical filters once: an output's last two
// columns are the next one's first two.
struct Params {
    width: u32,
    height: u32,
    in_base: u32,
    in_plane: u32,
    out_base: u32,
}

var<immediate> pc: Params;

@group(0) @binding(0) var<storage, read_write> bands: array<f32>;

const STRIP: u32 = 16u;

#include "adm_mirror.wgsl"
#include "float_adm_filt.wgsl"

// Column col's vertical (lo, hi) over the four rows of image img's input.
fn vert(img: u32, rws: vec4<i32>, col: i32) -> vec2<f32> {
    let src = pc.in_base + img * 4u * pc.in_plane;
    let s = vec4<f32>(bands[src + u32(rws.x + col)], bands[src + u32(rws.y + col)], bands[src + u32(rws.z + col)], bands[src + u32(rws.w + col)]);
    return vec2<f32>(filt(false, s), filt(true, s));
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
    let rws = vec4<i32>(mirror(2 * i - 1, h) * w, mirror(2 * i, h) * w, mirror(2 * i + 1, h) * w, mirror(2 * i + 2, h) * w);
    // The vertical lo and hi of the output's four columns 2j - 1 .. 2j + 2;
    // the next output shares the last two.
    var c0 = vert(img, rws, mirror(2 * first - 1, w));
    var c1 = vert(img, rws, mirror(2 * first, w));
    let plane = u32(bw * bh);
    var o = pc.out_base + img * 4u * plane + u32(i * bw + first);
    for (var j = first; j < last; j++) {
        let c2 = vert(img, rws, mirror(2 * j + 1, w));
        let c3 = vert(img, rws, mirror(2 * j + 2, w));
        let lo = vec4<f32>(c0.x, c1.x, c2.x, c3.x);
        let hi = vec4<f32>(c0.y, c1.y, c2.y, c3.y);
        bands[o] = filt(false, lo);
        if (true) {
            bands[o + plane] = filt(false, hi);
            bands[o + 2u * plane] = filt(true, lo);
            bands[o + 3u * plane] = filt(true, hi);
        }
        c0 = c2;
        c1 = c3;
        o += 1u;
    }
}
