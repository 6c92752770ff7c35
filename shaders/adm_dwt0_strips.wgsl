// adm_dwt0_strips: adm_dwt0's CPU-driver shape (contract: ADM_DWT0_STRIPS
// in src/features/adm/gpu.rs, C dialect in kernels/adm.cl; the same bits).
// Work item x of image z walks outputs (i, 16k) .. (i, 16k + 15) (i, k:
// x / strips, x % strips),
// computing each column's vertical pass once: an output's last two columns
// are the next one's first two. 8-bit rows on 32-bit words read a word a
// row for two outputs away from the mirrored edges (adm_words.wgsl).
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

const STRIP: u32 = 16u;

#include "adm_mirror.wgsl"

// A store to int16_t: the low 16 bits, sign-extended.
fn i16(x: i32) -> i32 {
    return (x << 16u) >> 16u;
}

fn sample(img: u32, i: u32) -> u32 {
    var word: u32;
    if (pc.bytes_per_sample == 1u) {
        if (img == 0u) {
            word = ref_words[i >> 2u];
        } else {
            word = dis_words[i >> 2u];
        }
        return (word >> ((i & 3u) * 8u)) & 0xffu;
    }
    if (img == 0u) {
        word = ref_words[i >> 1u];
    } else {
        word = dis_words[i >> 1u];
    }
    return (word >> ((i & 1u) * 16u)) & 0xffffu;
}

// The vertical pass (tmplo, tmphi) of one column's four samples s: the
// Q15 db2 taps over the four rows (uint32 sums, wrapping as C's int32
// may), centred, rounded by bpc bits into int16.
fn vert_of(s: vec4<u32>) -> vec2<i32> {
    let add = 1 << (pc.bpc - 1u);
    // dwt2_db2_coeffs_lo_sum * add_shift_VP centres the samples.
    let centre = 46342u * u32(add);
    let acc_lo = 15826u * s.x + 27411u * s.y + 7345u * s.z + bitcast<u32>(-4240i) * s.w;
    let acc_hi = bitcast<u32>(-4240i) * s.x + bitcast<u32>(-7345i) * s.y + 27411u * s.z + bitcast<u32>(-15826i) * s.w;
    return vec2<i32>(i16((bitcast<i32>(acc_lo - centre) + add) >> pc.bpc), i16((bitcast<i32>(acc_hi) + add) >> pc.bpc));
}

// Column col's vertical pass over the rows at offsets rws.
fn vert(img: u32, rws: vec4<i32>, col: i32) -> vec2<i32> {
    let s = vec4<u32>(sample(img, u32(rws.x + col)), sample(img, u32(rws.y + col)), sample(img, u32(rws.z + col)), sample(img, u32(rws.w + col)));
    return vert_of(s);
}

// Output o (and, unless lo_only, its three other bands) from the vertical
// passes of its four columns 2j - 1 .. 2j + 2.
fn emit(o: u32, plane: u32, c0: vec2<i32>, c1: vec2<i32>, c2: vec2<i32>, c3: vec2<i32>) {
    // lo taps 15826, 27411, 7345, -4240; hi -4240, -7345, 27411, -15826.
    let a = 32768 + 15826 * c0.x + 27411 * c1.x + 7345 * c2.x + -4240 * c3.x;
    bands[o] = i16(a >> 16u);
    if (pc.lo_only == 0u) {
        let v = 32768 + -4240 * c0.x + -7345 * c1.x + 27411 * c2.x + -15826 * c3.x;
        let hh = 32768 + 15826 * c0.y + 27411 * c1.y + 7345 * c2.y + -4240 * c3.y;
        let d = 32768 + -4240 * c0.y + -7345 * c1.y + 27411 * c2.y + -15826 * c3.y;
        bands[o + plane] = i16(hh >> 16u);
        bands[o + 2u * plane] = i16(v >> 16u);
        bands[o + 3u * plane] = i16(d >> 16u);
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
