// The ADM wavelets' 8-bit fast path on CPU drivers (adm_dwt0_strips,
// float_adm_dwt0_strips): on lavapipe every storage-buffer load costs a
// lane about as much as a dozen ALU operations, and the general path
// loads one 32-bit word per 8-bit sample, four columns an output. Where
// rows start on a word (width % 4 == 0) and no column of the strip is
// mirrored, output j's new columns 2j + 1 and 2j + 2 and output j + 1's
// 2j + 3 and 2j + 4 are bytes 1, 2, 3 of one word and byte 0 of the next:
// one load a row for two outputs. The samples, and so the bits, are the
// general path's. Needs ref_words, dis_words and the caller's `img`.

// Whether strip [first, last) of a row of width w takes the word path:
// 8-bit, rows word-aligned, columns 2 * first - 1 .. 2 * last unmirrored,
// outputs in pairs.
fn words_fit(w: i32, first: i32, last: i32) -> bool {
    return pc.bytes_per_sample == 1u && (w & 3) == 0 && first > 0 && 2 * last < w && ((last - first) & 1) == 0;
}

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
