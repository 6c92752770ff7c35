// cambi_preprocess: cambi.c `cambi_preprocessing` (contract:
// CAMBI_PREPROCESS in src/features/cambi/gpu.rs; the C dialect is
// kernels/cambi.cl). WGSL, not GLSL: the sample check sets a flag with an
// atomic OR, and naga's GLSL front end has no atomics (shaders/README.md).
//
// validate_image: a sample above the bit depth's maximum sets bit 0 of
// state[0]. decimate_generic_*_and_convert_to_10b: output (x, y) takes the
// input sample at (tables[y_off + y], tables[x_off + x]) -- the
// nearest-neighbour walk the host computed as libvmaf's float loop does --
// brought to 10 bits. anti_dithering_filter (dither = 1): the 2x2 mean to
// the right and below (the last column vertical, the last row horizontal,
// the corner as is). libvmaf filters in place in raster order, but every
// sample it reads is right of or below the one it writes, so still
// unwritten: each output is a function of the converted picture.
struct Params {
    in_w: u32,
    in_h: u32,
    out_w: u32,
    out_h: u32,
    bytes_per_sample: u32,
    bit_depth: u32,
    dither: u32,
    x_off: u32,
    y_off: u32,
    img_off: u32,
    max_value: u32,
    validate: u32,
}

var<immediate> pc: Params;

@group(0) @binding(0) var<storage, read> input_words: array<u32>;
@group(0) @binding(1) var<storage, read> tables: array<u32>;
@group(0) @binding(2) var<storage, read_write> img: array<u32>;
@group(0) @binding(3) var<storage, read_write> state: array<atomic<u32>>;

// Sample i of the input plane (8-bit samples 4 to a word, 16-bit 2).
fn sample_at(i: u32) -> u32 {
    if (pc.bytes_per_sample == 1u) {
        return (input_words[i >> 2u] >> ((i & 3u) * 8u)) & 255u;
    }
    return (input_words[i >> 1u] >> ((i & 1u) * 16u)) & 65535u;
}

fn to_10_bit(v: u32) -> u32 {
    if (pc.bit_depth <= 10u) {
        return v << (10u - pc.bit_depth);
    }
    let shift = pc.bit_depth - 10u;
    return (v + (1u << (shift - 1u))) >> shift;
}

fn converted(r: u32, c: u32) -> u32 {
    return to_10_bit(sample_at(tables[pc.y_off + r] * pc.in_w + tables[pc.x_off + c]));
}

@compute @workgroup_size(16, 16, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let x = gid.x;
    let y = gid.y;
    if (pc.validate != 0u && x < pc.in_w && y < pc.in_h && sample_at(y * pc.in_w + x) > pc.max_value) {
        atomicOr(&state[0], 1u);
    }
    if (x >= pc.out_w || y >= pc.out_h) {
        return;
    }
    var v = converted(y, x);
    if (pc.dither != 0u) {
        let right = x + 1u < pc.out_w;
        let below = y + 1u < pc.out_h;
        if (right && below) {
            v = (v + converted(y, x + 1u) + converted(y + 1u, x) + converted(y + 1u, x + 1u)) >> 2u;
        } else if (below) {
            v = (v + converted(y + 1u, x)) >> 1u; // last column
        } else if (right) {
            v = (v + converted(y, x + 1u)) >> 1u; // last row
        }
    }
    img[pc.img_off + y * pc.out_w + x] = v;
}
