#version 450
// ansnr_row_groups: float_ansnr's filters and per-row energies, one work
// group per luma row, for GPUs (contract: ANSNR_ROW_GROUPS in
// src/features/ansnr.rs; ansnr_filter_rows.comp is the one-invocation-per-
// row variant CPU drivers run).
//
// Mirrors libvmaf ansnr_tools.c exactly as ansnr_filter_rows.comp does:
// `ansnr_filter2d_s` filters the reference (3x3) and the distorted (5x5)
// pictures, which float_ansnr.c's picture_copy made `v / scaler - 128`; for
// each filter row the products tap * sample are summed in float from left
// to right, then the row sums from top to bottom, with ansnr_tools.c's
// mirror at the borders. `ansnr_mse_s` then sums, per row, in float and in
// pixel order, sig += r * r and noise += (r - d) * (r - d). The build marks
// every float multiply and add NoContraction: no FMA the C code does not do.
//
// The row is cut into chunks of CHUNK pixels. The group's invocations
// filter a chunk in parallel, invocation i taking pixels i, i + GROUP, ...
// (consecutive invocations read consecutive samples), and leave each
// pixel's r * r and (r - d) * (r - d) in shared memory; after a barrier,
// invocation 0 alone adds them to the row's sums in pixel order, and a
// second barrier keeps the next chunk from overwriting them before it has.
// Only the adds are sequential, and each product is the same wherever it is
// computed: the row sums keep the CPU's bits.
#define GROUP 128
#define CHUNK 1024

layout(local_size_x = GROUP, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer Reference { uint ref_words[]; };
layout(std430, set = 0, binding = 1) readonly buffer Distorted { uint dis_words[]; };
// The contract's 34 float taps (9 reference, then 25 distorted), read as a
// uniform block of vec4s: every invocation reads the same ones at once.
layout(std140, set = 0, binding = 2) uniform Taps { vec4 taps[9]; };
layout(std430, set = 0, binding = 3) buffer Rows { float rows[]; };

layout(push_constant) uniform Params {
    uint width;
    uint height;
    uint bytes_per_sample;
    float scaler;
} pc;

// One chunk's energies per pixel: 8 KiB.
shared float sig_px[CHUNK];
shared float noise_px[CHUNK];

// ansnr_tools.c: -i above or left of the picture (no edge repeat),
// 2n - i - 1 below or right of it (edge repeat); clamped after, as the C
// dialect does, so a plane narrower than the filter reads in bounds.
uint mirror(int i, int n) {
    int m = i < 0 ? -i : (i >= n ? 2 * n - i - 1 : i);
    return uint(clamp(m, 0, n - 1));
}

float tap(int t) {
    return taps[t >> 2][t & 3];
}

// Sample i of a plane of 8- or 16-bit samples packed in little-endian words
// (`shift` = log2 of the samples per word, `bits` per sample), as
// picture_copy's float minus 128: v / scaler - 128, computed as
// v * (1 / scaler), exact since the scaler is a power of two.
float ref_value(uint i, uint shift, uint bits, float inv) {
    uint word = ref_words[i >> shift];
    uint v = (word >> ((i & ((1u << shift) - 1u)) * bits)) & ((1u << bits) - 1u);
    return float(v) * inv - 128.0;
}

float dis_value(uint i, uint shift, uint bits, float inv) {
    uint word = dis_words[i >> shift];
    uint v = (word >> ((i & ((1u << shift) - 1u)) * bits)) & ((1u << bits) - 1u);
    return float(v) * inv - 128.0;
}

// Four consecutive energies of the chunk.
vec4 load_sig(uint j) {
    return vec4(sig_px[j], sig_px[j + 1u], sig_px[j + 2u], sig_px[j + 3u]);
}

vec4 load_noise(uint j) {
    return vec4(noise_px[j], noise_px[j + 1u], noise_px[j + 2u], noise_px[j + 3u]);
}

// sum + v.x + v.y + v.z + v.w, left to right, each add rounded.
float add_in_order(float sum, vec4 v) {
    sum += v.x;
    sum += v.y;
    sum += v.z;
    sum += v.w;
    return sum;
}

void main() {
    uint y = gl_WorkGroupID.x;
    if (y >= pc.height) {
        return; // uniform over the group
    }
    uint lid = gl_LocalInvocationID.x;
    int w = int(pc.width);
    int h = int(pc.height);
    uint shift = pc.bytes_per_sample == 1u ? 2u : 1u;
    uint bits = 8u * pc.bytes_per_sample;
    float inv = 1.0 / pc.scaler;

    // The first sample of each picture row the 5x5 window reads (rows
    // y - 2 .. y + 2, mirrored); the 3x3 window reads the middle three.
    uint row[5];
    for (int k = 0; k < 5; k++) {
        row[k] = mirror(int(y) - 2 + k, h) * pc.width;
    }

    float sig = 0.0;
    float noise = 0.0;
    uint base = 0u;
    while (base < pc.width) {
        uint n = min(uint(CHUNK), pc.width - base);
        uint i = lid;
        while (i < n) {
            int x = int(base + i);
            // Columns x - 2 .. x + 2, mirrored.
            uint col[5];
            for (int k = 0; k < 5; k++) {
                col[k] = mirror(x - 2 + k, w);
            }
            float r = 0.0;
            for (int fi = 0; fi < 3; fi++) {
                float inner = 0.0;
                for (int fj = 0; fj < 3; fj++) {
                    inner += tap(fi * 3 + fj) * ref_value(row[fi + 1] + col[fj + 1], shift, bits, inv);
                }
                r += inner;
            }
            float d = 0.0;
            for (int fi = 0; fi < 5; fi++) {
                float inner = 0.0;
                for (int fj = 0; fj < 5; fj++) {
                    inner += tap(9 + fi * 5 + fj) * dis_value(row[fi] + col[fj], shift, bits, inv);
                }
                d += inner;
            }
            float e = r - d;
            sig_px[i] = r * r;
            noise_px[i] = e * e;
            i += uint(GROUP);
        }
        barrier(); // the chunk is filled
        if (lid == 0u) {
            // ansnr_mse_s's adds, in pixel order, eight pixels a step. The
            // next step's energies are loaded before this step's adds, so
            // shared memory's latency hides behind the two chains of
            // dependent adds, which alone set the pace.
            uint j = 0u;
            if (n >= 8u) {
                vec4 s0 = load_sig(0u);
                vec4 s1 = load_sig(4u);
                vec4 q0 = load_noise(0u);
                vec4 q1 = load_noise(4u);
                while (j + 16u <= n) {
                    vec4 s0_next = load_sig(j + 8u);
                    vec4 s1_next = load_sig(j + 12u);
                    vec4 q0_next = load_noise(j + 8u);
                    vec4 q1_next = load_noise(j + 12u);
                    sig = add_in_order(add_in_order(sig, s0), s1);
                    noise = add_in_order(add_in_order(noise, q0), q1);
                    s0 = s0_next;
                    s1 = s1_next;
                    q0 = q0_next;
                    q1 = q1_next;
                    j += 8u;
                }
                sig = add_in_order(add_in_order(sig, s0), s1);
                noise = add_in_order(add_in_order(noise, q0), q1);
                j += 8u;
            }
            while (j < n) {
                sig += sig_px[j];
                noise += noise_px[j];
                j += 1u;
            }
        }
        barrier(); // the sums have read the chunk: it may be refilled
        base += uint(CHUNK);
    }
    if (lid == 0u) {
        rows[2u * y] = sig;
        rows[2u * y + 1u] = noise;
    }
}
