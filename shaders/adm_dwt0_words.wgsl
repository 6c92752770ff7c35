// adm_dwt0_words: adm_dwt0_strips for the inner strips of 8-bit
// pictures whose width is a multiple of 4 (contract: ADM_DWT0_WORDS in
// src/features/adm/gpu.rs, C dialect in kernels/adm.cl; the same bits): no
// column of an inner strip is mirrored and its rows start on words, so
// one 32-bit word a row serves two outputs (adm_words.wgsl).
#include "adm_mirror.wgsl"
#include "adm_dwt0_parts.wgsl"
#include "adm_words.wgsl"

@compute @workgroup_size(8, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let w = i32(pc.width);
    let h = i32(pc.height);
    let bw = (w + 1) / 2;
    let bh = (h + 1) / 2;
    // Work item x takes inner strip 1 + x % inner of row x / inner (inner
    // = strips - 2: the host runs this kernel where every inner strip
    // takes the word path, and adm_dwt0_strips with edges on the rest).
    let strips = (bw + i32(STRIP) - 1) / i32(STRIP);
    let inner = strips - 2;
    let x = i32(gid.x);
    if (x >= inner * bh) {
        return;
    }
    let i = x / inner;
    let first = (1 + x % inner) * i32(STRIP);
    let img = wid.z;
    let last = min(first + i32(STRIP), bw);
    let rws = vec4<i32>(mirror(2 * i - 1, h) * w, mirror(2 * i, h) * w, mirror(2 * i + 1, h) * w, mirror(2 * i + 2, h) * w);
    let plane = u32(bw * bh);
    var o = pc.out_base + img * 4u * plane + u32(i * bw + first);
    // 8-bit samples, word-aligned rows, no mirrored column: one word a
    // row serves two outputs (adm_words.wgsl).
    words_strip(img, rws, first, last, o, plane);
}
