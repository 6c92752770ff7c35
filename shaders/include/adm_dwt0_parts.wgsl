// adm_dwt0_strips' and adm_dwt0_words' shared parts: the
// scalars, the bindings, the vertical pass of a column and the four
// outputs of one (contracts: ADM_DWT0_STRIPS and ADM_DWT0_WORDS
// in src/features/adm/gpu.rs). Two kernels, not one with a branch:
// lavapipe runs both sides of every branch, and the general path, run
// masked beside the word path, was 40% of the wavelet's time there.
struct Params {
    width: u32,
    height: u32,
    bytes_per_sample: u32,
    bpc: u32,
    out_base: u32,
    lo_only: u32,
    // adm_dwt0_strips: 1 for the edge strips alone (0 and strips - 1 of
    // each row), 0 for every strip; adm_dwt0_words ignores it.
    edges: u32,
}

var<immediate> pc: Params;

@group(0) @binding(0) var<storage, read> ref_words: array<u32>;
@group(0) @binding(1) var<storage, read> dis_words: array<u32>;
@group(0) @binding(2) var<storage, read_write> bands: array<i32>;

const STRIP: u32 = 16u;


// A store to int16_t: the low 16 bits, sign-extended.
fn i16(x: i32) -> i32 {
    return (x << 16u) >> 16u;
}

fn sample(img: u32, i: u32) -> u32 {
    // One load whatever the sample size (lavapipe runs both sides of a
    // branch on it).
    let shift = select(1u, 2u, pc.bytes_per_sample == 1u);
    let bits = 8u * pc.bytes_per_sample;
    var word: u32;
    if (img == 0u) {
        word = ref_words[i >> shift];
    } else {
        word = dis_words[i >> shift];
    }
    return (word >> ((i & ((1u << shift) - 1u)) * bits)) & ((1u << bits) - 1u);
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

