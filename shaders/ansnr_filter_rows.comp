#version 450
// ansnr_filter_rows: float_ansnr's filters and per-row energies in one pass,
// one invocation per luma row (contract: ANSNR_FILTER_ROWS in
// src/features/ansnr.rs).
//
// Mirrors libvmaf ansnr_tools.c: `ansnr_filter2d_s` filters the reference
// (3x3) and the distorted (5x5) pictures, which float_ansnr.c's picture_copy
// made `v / scaler - 128`; for each filter row the products tap * sample are
// summed in float from left to right, then the row sums from top to bottom,
// with ansnr_tools.c's mirror at the borders. `ansnr_mse_s` then sums, per
// row, in float and in pixel order, sig += r * r and noise += (r - d) *
// (r - d); the host adds the row sums in row order. The build marks every
// float multiply and add NoContraction, so no driver fuses them into an FMA
// the C code does not do: the result is bit-identical to the CPU's.
//
// The invocation walks its row left to right with both filter windows in
// registers (a3 for the reference, b5 for the distorted), so each step
// reads only the window's new column: 8 samples per pixel instead of 34.
layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer Reference { uint ref_words[]; };
layout(std430, set = 0, binding = 1) readonly buffer Distorted { uint dis_words[]; };
// The contract's 34 float taps (9 reference, then 25 distorted), read as a
// uniform block of vec4s: every invocation reads them once, at the same
// offsets.
layout(std140, set = 0, binding = 2) uniform Taps { vec4 taps[9]; };
layout(std430, set = 0, binding = 3) buffer Rows { float rows[]; };

layout(push_constant) uniform Params {
    uint width;
    uint height;
    uint bytes_per_sample;
    float scaler;
} pc;

// ansnr_tools.c: -i above or left of the picture (no edge repeat),
// 2n - i - 1 below or right of it (edge repeat).
uint mirror(int i, int n) {
    if (i < 0) {
        return uint(-i);
    }
    if (i >= n) {
        return uint(2 * n - i - 1);
    }
    return uint(i);
}

// Sample i of a plane of 8- or 16-bit samples packed in little-endian words
// (2 or 1 = log2 of the samples per word), read with one load whatever the
// depth: no branch, no integer division.
uint word_shift() {
    return pc.bytes_per_sample == 1u ? 2u : 1u;
}

uint unpack(uint word, uint i, uint shift) {
    uint bits = 8u * pc.bytes_per_sample;
    return (word >> ((i & ((1u << shift) - 1u)) * bits)) & ((1u << bits) - 1u);
}

// picture_copy: v / scaler - 128, exact (the scaler is a power of two).
float ref_value(uint row, int col) {
    uint i = row + mirror(col, int(pc.width));
    uint shift = word_shift();
    return float(unpack(ref_words[i >> shift], i, shift)) / pc.scaler - 128.0;
}

float dis_value(uint row, int col) {
    uint i = row + mirror(col, int(pc.width));
    uint shift = word_shift();
    return float(unpack(dis_words[i >> shift], i, shift)) / pc.scaler - 128.0;
}

// Four consecutive samples [p, p + 4) of a row (no mirror needed), as
// floats: they lie in at most three words, read whole (8-bit: 2 loads for
// 4 samples, 16-bit: 3), where sample-by-sample reading would take 4.
vec4 quad_from(uint w0, uint w1, uint w2, uint p, uint shift) {
    uint bits = 8u * pc.bytes_per_sample;
    uint in_word = (1u << shift) - 1u;
    uint mask = (1u << bits) - 1u;
    uint first = p & in_word;
    vec4 v;
    for (uint k = 0u; k < 4u; k++) {
        uint o = first + k;
        uint which = o >> shift;
        uint word = which == 0u ? w0 : (which == 1u ? w1 : w2);
        v[k] = float((word >> ((o & in_word) * bits)) & mask) / pc.scaler - 128.0;
    }
    return v;
}

vec4 ref_quad(uint p) {
    uint shift = word_shift();
    uint first = p >> shift;
    uint last = (p + 3u) >> shift;
    return quad_from(ref_words[first], ref_words[min(first + 1u, last)], ref_words[last], p, shift);
}

vec4 dis_quad(uint p) {
    uint shift = word_shift();
    uint first = p >> shift;
    uint last = (p + 3u) >> shift;
    return quad_from(dis_words[first], dis_words[min(first + 1u, last)], dis_words[last], p, shift);
}

// One filter row of ansnr_filter2d_s: inner = 0, then tap * sample left to
// right, added to accum.
#define ROW3(t0, t1, t2, s0, s1, s2) \
    inner = 0.0; inner += t0 * s0; inner += t1 * s1; inner += t2 * s2; accum += inner;
#define ROW5(t0, t1, t2, t3, t4, s0, s1, s2, s3, s4) \
    inner = 0.0; inner += t0 * s0; inner += t1 * s1; inner += t2 * s2; inner += t3 * s3; inner += t4 * s4; \
    accum += inner;

// One pixel: slide both windows one column right (the new column's values
// given), filter, and add the pixel's energies to the row's sums.
#define STEP(na0, na1, na2, nb0, nb1, nb2, nb3, nb4) \
    { \
        a00 = a01; a01 = a02; a02 = na0; \
        a10 = a11; a11 = a12; a12 = na1; \
        a20 = a21; a21 = a22; a22 = na2; \
        b00 = b01; b01 = b02; b02 = b03; b03 = b04; b04 = nb0; \
        b10 = b11; b11 = b12; b12 = b13; b13 = b14; b14 = nb1; \
        b20 = b21; b21 = b22; b22 = b23; b23 = b24; b24 = nb2; \
        b30 = b31; b31 = b32; b32 = b33; b33 = b34; b34 = nb3; \
        b40 = b41; b41 = b42; b42 = b43; b43 = b44; b44 = nb4; \
        float accum = 0.0; \
        float inner; \
        ROW3(k0.x, k0.y, k0.z, a00, a01, a02) \
        ROW3(k0.w, k1.x, k1.y, a10, a11, a12) \
        ROW3(k1.z, k1.w, k2.x, a20, a21, a22) \
        float r = accum; \
        accum = 0.0; \
        ROW5(k2.y, k2.z, k2.w, k3.x, k3.y, b00, b01, b02, b03, b04) \
        ROW5(k3.z, k3.w, k4.x, k4.y, k4.z, b10, b11, b12, b13, b14) \
        ROW5(k4.w, k5.x, k5.y, k5.z, k5.w, b20, b21, b22, b23, b24) \
        ROW5(k6.x, k6.y, k6.z, k6.w, k7.x, b30, b31, b32, b33, b34) \
        ROW5(k7.y, k7.z, k7.w, k8.x, k8.y, b40, b41, b42, b43, b44) \
        float d = accum; \
        sig += r * r; \
        noise += (r - d) * (r - d); \
    }

void main() {
    uint y = gl_GlobalInvocationID.x;
    if (y >= pc.height) {
        return;
    }
    int w = int(pc.width);
    int h = int(pc.height);
    // The picture rows each window row reads.
    uint r0 = mirror(int(y) - 1, h) * pc.width;
    uint r1 = y * pc.width;
    uint r2 = mirror(int(y) + 1, h) * pc.width;
    uint d0 = mirror(int(y) - 2, h) * pc.width;
    uint d1 = r0;
    uint d2 = r1;
    uint d3 = r2;
    uint d4 = mirror(int(y) + 2, h) * pc.width;

    vec4 k0 = taps[0];
    vec4 k1 = taps[1];
    vec4 k2 = taps[2];
    vec4 k3 = taps[3];
    vec4 k4 = taps[4];
    vec4 k5 = taps[5];
    vec4 k6 = taps[6];
    vec4 k7 = taps[7];
    vec4 k8 = taps[8];

    // The windows for pixel -1: columns -2..0 and -3..1 (column 0 of each is
    // shifted out before it is used).
    float a00 = 0.0, a01 = ref_value(r0, -1), a02 = ref_value(r0, 0);
    float a10 = 0.0, a11 = ref_value(r1, -1), a12 = ref_value(r1, 0);
    float a20 = 0.0, a21 = ref_value(r2, -1), a22 = ref_value(r2, 0);
    float b00 = 0.0, b01 = dis_value(d0, -2), b02 = dis_value(d0, -1), b03 = dis_value(d0, 0), b04 = dis_value(d0, 1);
    float b10 = 0.0, b11 = dis_value(d1, -2), b12 = dis_value(d1, -1), b13 = dis_value(d1, 0), b14 = dis_value(d1, 1);
    float b20 = 0.0, b21 = dis_value(d2, -2), b22 = dis_value(d2, -1), b23 = dis_value(d2, 0), b24 = dis_value(d2, 1);
    float b30 = 0.0, b31 = dis_value(d3, -2), b32 = dis_value(d3, -1), b33 = dis_value(d3, 0), b34 = dis_value(d3, 1);
    float b40 = 0.0, b41 = dis_value(d4, -2), b42 = dis_value(d4, -1), b43 = dis_value(d4, 0), b44 = dis_value(d4, 1);

    float sig = 0.0;
    float noise = 0.0;
    int x = 0;
    // Four pixels a step while the windows' new columns need no mirror:
    // each window row's four new samples come from whole words.
    while (x + 6 <= w) {
        uint c = uint(x);
        vec4 n0 = ref_quad(r0 + c + 1u);
        vec4 n1 = ref_quad(r1 + c + 1u);
        vec4 n2 = ref_quad(r2 + c + 1u);
        vec4 m0 = dis_quad(d0 + c + 2u);
        vec4 m1 = dis_quad(d1 + c + 2u);
        vec4 m2 = dis_quad(d2 + c + 2u);
        vec4 m3 = dis_quad(d3 + c + 2u);
        vec4 m4 = dis_quad(d4 + c + 2u);
        for (uint k = 0u; k < 4u; k++) {
            STEP(n0[k], n1[k], n2[k], m0[k], m1[k], m2[k], m3[k], m4[k])
        }
        x += 4;
    }
    // The last pixels, one a step, their new columns mirrored.
    while (x < w) {
        STEP(ref_value(r0, x + 1), ref_value(r1, x + 1), ref_value(r2, x + 1), dis_value(d0, x + 2),
             dis_value(d1, x + 2), dis_value(d2, x + 2), dis_value(d3, x + 2), dis_value(d4, x + 2))
        x += 1;
    }
    rows[2u * y] = sig;
    rows[2u * y + 1u] = noise;
}
