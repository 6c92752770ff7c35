// float_adm_dwt0_strips' and float_adm_dwt0_words' shared parts: the
// scalars, the bindings, the vertical pass of a column and the four
// outputs of one (contracts: FLOAT_ADM_DWT0_STRIPS and FLOAT_ADM_DWT0_WORDS
// in src/features/adm/gpu.rs). Two kernels, not one with a branch:
// lavapipe runs both sides of every branch, and the general path, run
// masked beside the word path, was 40% of the wavelet's time there.
struct Params {
    width: u32,
    height: u32,
    bytes_per_sample: u32,
    inv_scaler: f32,
    out_base: u32,
    lo_only: u32,
    // float_adm_dwt0_strips: 1 for the edge strips alone (0 and strips - 1 of
    // each row), 0 for every strip; float_adm_dwt0_words ignores it.
    edges: u32,
}

var<immediate> pc: Params;

@group(0) @binding(0) var<storage, read> ref_words: array<u32>;
@group(0) @binding(1) var<storage, read> dis_words: array<u32>;
@group(0) @binding(2) var<storage, read_write> bands: array<f32>;

const STRIP: u32 = 16u;

// Sample i of image img as picture_copy makes it (offset -128).
fn sample(img: u32, i: u32) -> f32 {
    // One load whatever the sample size (lavapipe runs both sides of a
    // branch on it); picture_copy's `v / scaler - 128` (8-bit: `v - 128`).
    let shift = select(1u, 2u, pc.bytes_per_sample == 1u);
    let bits = 8u * pc.bytes_per_sample;
    var word: u32;
    if (img == 0u) {
        word = ref_words[i >> shift];
    } else {
        word = dis_words[i >> shift];
    }
    let v = f32((word >> ((i & ((1u << shift) - 1u)) * bits)) & ((1u << bits) - 1u));
    return select(v * pc.inv_scaler, v, pc.bytes_per_sample == 1u) + -128.0f;
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

