// The ADM wavelets' 8-bit fast path on CPU drivers (adm_dwt0_words,
// float_adm_dwt0_words): on lavapipe every storage-buffer load costs a
// lane about as much as a dozen ALU operations, and the general path
// loads one 32-bit word per 8-bit sample, four columns an output. Where
// rows start on a word (width % 4 == 0) and no column of the strip is
// mirrored, output j's new columns 2j + 1 and 2j + 2 and output j + 1's
// 2j + 3 and 2j + 4 are bytes 1, 2, 3 of one word and byte 0 of the next:
// one load a row for two outputs. The samples, and so the bits, are the
// general path's. Needs ref_words, dis_words, mirror, STRIP, pc (width,
// height, out_base), and the kernel's vert_of(samples of one column's
// four rows) and emit(output, plane, columns 2j - 1 .. 2j + 2). The host
// runs it where this holds for every inner strip (gpu.rs, words_apply):
// 8-bit samples, a width that is a multiple of 4 (rows start on words; bw
// = w / 2 is even, so an inner strip has 16 outputs, in pairs), columns
// 2 * first - 1 .. 2 * last unmirrored (first >= 16, last <= bw - 1).

// Word k of the four rows at word offsets rw of picture img.
fn words(img: u32, rw: vec4<u32>, k: u32) -> vec4<u32> {
    if (img == 0u) {
        return vec4<u32>(ref_words[rw.x + k], ref_words[rw.y + k], ref_words[rw.z + k], ref_words[rw.w + k]);
    }
    return vec4<u32>(dis_words[rw.x + k], dis_words[rw.y + k], dis_words[rw.z + k], dis_words[rw.w + k]);
}

// Byte b of each row's word: that row's sample.
fn byte_of(v: vec4<u32>, b: u32) -> vec4<u32> {
    return (v >> vec4<u32>(8u * b)) & vec4<u32>(0xffu);
}

// Outputs first .. last - 1 of the row whose four source rows start at
// offsets rws (an inner strip, as above), the first written at o.
fn words_strip(img: u32, rws: vec4<i32>, first: i32, last: i32, o_first: u32, plane: u32) {
    let rw = vec4<u32>(rws) >> vec4<u32>(2u);
    // Column 2 * first opens word first / 2; 2 * first - 1 ends the one before.
    var k = u32(first) >> 1u;
    var o = o_first;
    var cur = words(img, rw, k);
    var c0 = vert_of(byte_of(words(img, rw, k - 1u), 3u));
    var c1 = vert_of(byte_of(cur, 0u));
    for (var j = first; j < last; j += 2) {
        let next = words(img, rw, k + 1u);
        let c2 = vert_of(byte_of(cur, 1u));
        let c3 = vert_of(byte_of(cur, 2u));
        emit(o, plane, c0, c1, c2, c3);
        let c4 = vert_of(byte_of(cur, 3u));
        let c5 = vert_of(byte_of(next, 0u));
        emit(o + 1u, plane, c2, c3, c4, c5);
        c0 = c4;
        c1 = c5;
        cur = next;
        k += 1u;
        o += 2u;
    }
}

// The word kernels' body (adm_dwt0_words, float_adm_dwt0_words): work item
// x of picture img takes inner strip 1 + x % inner of row x / inner (inner
// = strips - 2; the host runs these kernels where every inner strip takes
// the word path, and *_dwt0_strips with `edges` on each row's first and
// last strip).
fn words_kernel(x: i32, img: u32) {
    let w = i32(pc.width);
    let h = i32(pc.height);
    let bw = (w + 1) / 2;
    let bh = (h + 1) / 2;
    let strips = (bw + i32(STRIP) - 1) / i32(STRIP);
    let inner = strips - 2;
    if (x >= inner * bh) {
        return;
    }
    let i = x / inner;
    let first = (1 + x % inner) * i32(STRIP);
    let last = min(first + i32(STRIP), bw);
    let rws = vec4<i32>(mirror(2 * i - 1, h) * w, mirror(2 * i, h) * w, mirror(2 * i + 1, h) * w, mirror(2 * i + 2, h) * w);
    let plane = u32(bw * bh);
    words_strip(img, rws, first, last, pc.out_base + img * 4u * plane + u32(i * bw + first), plane);
}
