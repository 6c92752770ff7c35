// float_adm_dwt0_strips: float_adm_dwt0's CPU-driver shape (contract:
// FLOAT_ADM_DWT0_STRIPS in src/features/adm/gpu.rs, C dialect in
// kernels/float_adm.cl; the same bits). Work item x of image z walks
// outputs (i, 16k) .. (i, 16k + 15), i = x / strips, k = x % strips,
// computing each column's vertical filters once: an output's last two
// columns are the next one's first two. With `edges` on, each row's first
// and last strip alone: float_adm_dwt0_words takes the inner strips of
// 8-bit pictures whose width is a multiple of 4.
#include "adm_mirror.wgsl"
#include "float_adm_filt.wgsl"
#include "float_adm_dwt0_parts.wgsl"

@compute @workgroup_size(8, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let w = i32(pc.width);
    let h = i32(pc.height);
    let bw = (w + 1) / 2;
    let bh = (h + 1) / 2;
    // Work item x takes strip x % strips of row x / strips (every lane
    // busy), or with edges the first (x even) or last strip of row x / 2.
    let strips = (bw + i32(STRIP) - 1) / i32(STRIP);
    let per_row = select(strips, 2, pc.edges != 0u);
    let x = i32(gid.x);
    if (x >= per_row * bh) {
        return;
    }
    let i = x / per_row;
    let first = select(x % strips, select(0, strips - 1, (x & 1) == 1), pc.edges != 0u) * i32(STRIP);
    let img = wid.z;
    let last = min(first + i32(STRIP), bw);
    let rws = vec4<i32>(mirror(2 * i - 1, h) * w, mirror(2 * i, h) * w, mirror(2 * i + 1, h) * w, mirror(2 * i + 2, h) * w);
    let plane = u32(bw * bh);
    var o = pc.out_base + img * 4u * plane + u32(i * bw + first);
    // The vertical lo and hi of the output's four columns 2j - 1 .. 2j + 2;
    // the next output shares the last two.
    var c0 = vert(img, rws, mirror(2 * first - 1, w));
    var c1 = vert(img, rws, mirror(2 * first, w));
    for (var j = first; j < last; j++) {
        let c2 = vert(img, rws, mirror(2 * j + 1, w));
        let c3 = vert(img, rws, mirror(2 * j + 2, w));
        emit(o, plane, c0, c1, c2, c3);
        c0 = c2;
        c1 = c3;
        o += 1u;
    }
}
