// float_adm_dwt0_strips: float_adm_dwt0's CPU-driver shape (contract:
// FLOAT_ADM_DWT0_STRIPS in src/features/adm/gpu.rs, C dialect in
// kernels/float_adm.cl; the same bits). Work item x of image z walks
// outputs (i, 16k) .. (i, 16k + 15), i = x / strips, k = x % strips,
// computing each column's vertical filters once: an output's last two
// columns are the next one's first two. 8-bit rows on 32-bit words read a
// word a row for two outputs away from the mirrored edges (adm_words.wgsl).
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

const STRIP: u32 = 16u;

#include "adm_mirror.wgsl"

// dwt2_db2_coeffs_lo_s (high false) or _hi_s, as their f32 bits: the sum
// starts at 0 and adds the four products in order, each rounded.
fn filt(high: bool, s: vec4<f32>) -> f32 {
    var t = vec4<f32>(bitcast<f32>(0x3ef746eau), bitcast<f32>(0x3f5625efu), bitcast<f32>(0x3e6585f8u), bitcast<f32>(0xbe0483eeu));
    if (high) {
        t = vec4<f32>(bitcast<f32>(0xbe0483eeu), bitcast<f32>(0xbe6585f8u), bitcast<f32>(0x3f5625efu), bitcast<f32>(0xbef746eau));
    }
    var acc = 0.0f;
    acc = acc + t.x * s.x;
    acc = acc + t.y * s.y;
    acc = acc + t.z * s.z;
    acc = acc + t.w * s.w;
    return acc;
}

// Sample i of image img as picture_copy makes it (offset -128).
fn sample(img: u32, i: u32) -> f32 {
    var word: u32;
    if (pc.bytes_per_sample == 1u) {
        if (img == 0u) {
            word = ref_words[i >> 2u];
        } else {
            word = dis_words[i >> 2u];
        }
        return f32((word >> ((i & 3u) * 8u)) & 0xffu) + -128.0f;
    }
    if (img == 0u) {
        word = ref_words[i >> 1u];
    } else {
        word = dis_words[i >> 1u];
    }
    return f32((word >> ((i & 1u) * 16u)) & 0xffffu) * pc.inv_scaler + -128.0f;
}

// Column col's vertical (lo, hi) over the four rows.
fn vert(img: u32, rws: vec4<i32>, col: i32) -> vec2<f32> {
    let s = vec4<f32>(sample(img, u32(rws.x + col)), sample(img, u32(rws.y + col)), sample(img, u32(rws.z + col)), sample(img, u32(rws.w + col)));
    return vec2<f32>(filt(false, s), filt(true, s));
}

// The vertical (lo, hi) of one column's four 8-bit samples, offset as
// sample() offsets them.
fn vert_of(b: vec4<u32>) -> vec2<f32> {
    let s = vec4<f32>(b) + vec4<f32>(-128.0f);
    return vec2<f32>(filt(false, s), filt(true, s));
}

// Output o (and, unless lo_only, its three other bands) from the vertical
// filters of its four columns 2j - 1 .. 2j + 2.
fn emit(o: u32, plane: u32, c0: vec2<f32>, c1: vec2<f32>, c2: vec2<f32>, c3: vec2<f32>) {
    let lo = vec4<f32>(c0.x, c1.x, c2.x, c3.x);
    let hi = vec4<f32>(c0.y, c1.y, c2.y, c3.y);
    bands[o] = filt(false, lo);
    if (pc.lo_only == 0u) {
        bands[o + plane] = filt(false, hi);
        bands[o + 2u * plane] = filt(true, lo);
        bands[o + 3u * plane] = filt(true, hi);
    }
}

#include "adm_words.wgsl"

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
    let plane = u32(bw * bh);
    var o = pc.out_base + img * 4u * plane + u32(i * bw + first);
    if (words_fit(w, first, last)) {
        // 8-bit samples, word-aligned rows, no mirrored column: one word a
        // row serves two outputs (adm_words.wgsl).
        words_strip(img, rws, first, last, o, plane);
        return;
    }
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
