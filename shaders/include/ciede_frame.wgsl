// A pixel's colours in the two frames, for the ciede kernels (ciede_terms,
// ciede_terms_storage, ciede_claim, ciede_pair_terms,
// ciede_pair_terms_storage). The including kernel declares the frames
// (`ref_words`, `dis_words`) and `pc` with the frame's geometry: width,
// height, cw, ch, stride, chroma, bytes_per_sample and scale_shift (the
// fields of ciede_terms.wgsl's Params).

// The frames' samples, their index math and the choice of chroma layout
// are written without branches: a CPU driver such as lavapipe runs both
// sides of every branch, and the pairs shape's per-pixel pass
// (ciede_claim) is mostly this code.

// Sample i of a frame: 8-bit samples four to a word, 16-bit two.
fn sample(words_ref: bool, i: u32) -> u32 {
    // bytes_per_sample 1 or 2: log2 of the samples a word holds.
    let per_word = 3u - pc.bytes_per_sample;
    var word: u32;
    if words_ref {
        word = ref_words[i >> per_word];
    } else {
        word = dis_words[i >> per_word];
    }
    let bits = pc.bytes_per_sample * 8u;
    let lane = i & ((1u << per_word) - 1u);
    return (word >> (lane * bits)) & ((1u << bits) - 1u);
}

// ciede.c's chroma sample of plane p (1 Cb, 2 Cr) for pixel (i, j): its
// index in the frame, or NONE for libvmaf's row padding (a zero); 4:2:2 is
// its row-i/2 walk over libvmaf's padded rows (src/features/ciede/mod.rs
// `ChromaMap`).
const NONE: u32 = 0xFFFFFFFFu;

fn chroma_at(p: u32, i: u32, j: u32) -> u32 {
    let luma = pc.width * pc.height;
    let plane = pc.cw * pc.ch;
    let own = luma + (p - 1u) * plane;
    let at_444 = own + i * pc.cw + j;
    let at_420 = own + (i >> 1u) * pc.cw + (j >> 1u);
    // 4:2:2: the walk's flat index (i / 2) * stride + j, divided by the
    // stride. j < width <= 2 cw <= 2 stride, so j / stride is 0 or 1.
    let wraps = j >= pc.stride;
    let row = (i >> 1u) + select(0u, 1u, wraps);
    let col = j - select(0u, pc.stride, wraps);
    // Past Cb's last row, the walk goes on into Cr's first rows.
    let in_own = row < pc.ch;
    let at_walk = select(luma + plane + (row - pc.ch) * pc.cw + col, own + row * pc.cw + col, in_own);
    let at_422 = select(at_walk, NONE, col >= pc.cw);
    return select(select(at_422, at_420, pc.chroma == 1u), at_444, pc.chroma == 0u);
}

fn sample_or_zero(words_ref: bool, at: u32) -> u32 {
    let none = at == NONE;
    return select(sample(words_ref, select(at, 0u, none)), 0u, none);
}

// Pixel p's row and column. (A float quotient corrected by one step
// instead of the divisions measured no faster in ciede_claim and
// ciede_pair_terms on lavapipe: 143 vs 143 and 126 vs 121 ms per 48 anchor
// frames.)
fn pixel_at(p: u32) -> vec2<u32> {
    return vec2<u32>(p / pc.width, p % pc.width);
}

// Pixel (i, j)'s samples in the reference (a) and distorted (b) frame:
// luma, Cb, Cr as ciede.c reads them.
struct Colours {
    a: vec3<u32>,
    b: vec3<u32>,
}

fn colours(i: u32, j: u32) -> Colours {
    let y_at = i * pc.width + j;
    let u_at = chroma_at(1u, i, j);
    let v_at = chroma_at(2u, i, j);
    let a = vec3<u32>(sample(true, y_at), sample_or_zero(true, u_at), sample_or_zero(true, v_at));
    let b = vec3<u32>(sample(false, y_at), sample_or_zero(false, u_at), sample_or_zero(false, v_at));
    return Colours(a, b);
}

// Equal colours within the bit depth: ΔE00 is +0.0 (cpu.rs
// `equal_colours`), without computing it.
fn equal_colours(c: Colours) -> bool {
    let max_sample = (1u << (pc.scale_shift + 8u)) - 1u;
    return all(c.a == c.b) && max(c.a.x, max(c.a.y, c.a.z)) <= max_sample;
}
