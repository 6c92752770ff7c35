#version 450
// float_motion_rows: float_motion's blur of one plane of both frames and
// each row's SAD (contract: FLOAT_MOTION_ROWS in
// src/features/motion/gpu.rs; C dialect in kernels/motion.cl).
//
// libvmaf common/convolution.c convolution_f32_c_s (C path) on
// picture_copy's floats (v / scaler - 128, the division done as a multiply
// by the exact inverse of the power-of-two scaler): the vertical pass
// accum = 0, accum += taps[k] * src[row k] in tap order, then the
// horizontal pass likewise over the vertical values, borders mirrored
// `n - (i - n + 2)`; then motion.c vmaf_image_sad_c's accum_line +=
// fabs(prev - cur), left to right in f32. Every multiply and add is
// rounded on its own (the build marks them NoContraction).
//
// One invocation per row: it walks the row with a window of vertical
// values per frame (each step computes one new column's), so the row's
// sum is sequential as libvmaf's, and each picture sample is read once per
// filter row. With `store`, it also writes both blurred rows (the
// scale-1 pass reads them).
// Output rows per invocation (FLOAT_MOTION_ROWS_PER_ITEM in the C dialect).
#define ROWS 4

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer Prev { uint prev_words[]; };
layout(std430, set = 0, binding = 1) readonly buffer Cur { uint cur_words[]; };
layout(std430, set = 0, binding = 2) readonly buffer Taps { float taps[]; };
layout(std430, set = 0, binding = 3) buffer Blur { float blur[]; };
layout(std430, set = 0, binding = 4) buffer Rows { float rows[]; };

layout(push_constant) uniform Params {
    uint plane_offset;
    uint width;
    uint height;
    uint bytes_per_sample;
    float inv_scaler;
    uint filter_width;
    uint row_offset;
    uint store;
} pc;

int mirror(int i, int n) {
    return i < 0 ? -i : (i >= n ? n - (i - n + 2) : i);
}

// Column j mirrored, then clamped into the plane (a column the 3-tap
// filter does not read may fall outside a 2-wide plane).
uint column(int j, int w) {
    return uint(clamp(mirror(j, w), 0, w - 1));
}

uint prev_sample(uint i, uint shift, uint bits) {
    return (prev_words[i >> shift] >> ((i & ((1u << shift) - 1u)) * bits)) & ((1u << bits) - 1u);
}

uint cur_sample(uint i, uint shift, uint bits) {
    return (cur_words[i >> shift] >> ((i & ((1u << shift) - 1u)) * bits)) & ((1u << bits) - 1u);
}

// picture_copy: v / scaler - 128, as v * (1 / scaler).
float prev_pixel(uint i, uint shift, uint bits) {
    return float(prev_sample(i, shift, bits)) * pc.inv_scaler + -128.0;
}

float cur_pixel(uint i, uint shift, uint bits) {
    return float(cur_sample(i, shift, bits)) * pc.inv_scaler + -128.0;
}

vec4 to_pixels(uvec4 v) {
    return vec4(v) * pc.inv_scaler + -128.0;
}

// Bits sh .. sh + 31 of the 64 bits lo, hi.
uint funnel(uint lo, uint hi, uint sh) {
    return sh == 0u ? lo : (lo >> sh) | (hi << (32u - sh));
}

// prev_quad / cur_quad, by sample size (include/motion_quads_any.glsl;
// the variant for 8-bit planes reads only their words: lavapipe runs both
// sides of the run-time choice, 2 + 3 loads where 2 do).
#variant float_motion_rows_bytes "motion_quads_any.glsl" "motion_quads_bytes.glsl"
#include "motion_quads_any.glsl"

// Picture rows t = 0..7 of the lane's band (rows i0 - radius + t,
// mirrored, clamped into the plane: a clamped row only feeds output rows
// past the plane).
#define ROW(t) (pc.plane_offset + uint(clamp(mirror(int(i0) - radius + t, h), 0, h - 1) * w))

// The vertical values of one frame at one column c (PIXEL: prev_pixel or
// cur_pixel; results scalar) or at four columns from c (PIXEL: prev_quad
// or cur_quad; results vec4) for the band's 4 output rows: from 0, in tap
// order, rows r .. r + 4 (3-tap: r .. r + 2) of the 8 picture rows p0..p7.
#define VERTICAL(T, v0, v1, v2, v3, PIXEL, c) \
    { \
        T p0 = PIXEL(q0 + (c)); \
        T p1 = PIXEL(q1 + (c)); \
        T p2 = PIXEL(q2 + (c)); \
        T p3 = PIXEL(q3 + (c)); \
        T p4 = PIXEL(q4 + (c)); \
        T p5 = PIXEL(q5 + (c)); \
        T p6 = p0; \
        T p7 = p0; \
        if (five) { \
            p6 = PIXEL(q6 + (c)); \
            p7 = PIXEL(q7 + (c)); \
        } \
        v0 = T(0.0); v0 += f0 * p0; v0 += f1 * p1; v0 += f2 * p2; \
        v1 = T(0.0); v1 += f0 * p1; v1 += f1 * p2; v1 += f2 * p3; \
        v2 = T(0.0); v2 += f0 * p2; v2 += f1 * p3; v2 += f2 * p4; \
        v3 = T(0.0); v3 += f0 * p3; v3 += f1 * p4; v3 += f2 * p5; \
        if (five) { \
            v0 += f3 * p3; v0 += f4 * p4; \
            v1 += f3 * p4; v1 += f4 * p5; \
            v2 += f3 * p5; v2 += f4 * p6; \
            v3 += f3 * p6; v3 += f4 * p7; \
        } \
    }

#define PREV_PIXEL(i) prev_pixel(i, shift, bits)
#define CUR_PIXEL(i) cur_pixel(i, shift, bits)
#define PREV_QUAD(i) prev_quad(i, last)
#define CUR_QUAD(i) cur_quad(i, last)

// The horizontal pass over vertical values v0..v4 (columns j - 2 ..
// j + 2; the 3-tap filter reads v1..v3), in tap order from 0.
#define HORIZONTAL(out, v0, v1, v2, v3, v4) \
    out = 0.0; \
    if (five) { \
        out += f0 * v0; \
        out += f1 * v1; \
        out += f2 * v2; \
        out += f3 * v3; \
        out += f4 * v4; \
    } else { \
        out += f0 * v1; \
        out += f1 * v2; \
        out += f2 * v3; \
    }

// Output pixel (row, j): both frames' blurred values over the windows
// a0..a4 and b0..b4, stored with `store`, |prev - cur| added to the row's
// sum.
#define OUTPUT(row, line, j, a0, a1, a2, a3, a4, b0, b1, b2, b3, b4) \
    { \
        float x; \
        float y; \
        HORIZONTAL(x, a0, a1, a2, a3, a4) \
        HORIZONTAL(y, b0, b1, b2, b3, b4) \
        if (pc.store != 0u && (row) < pc.height) { \
            blur[(row) * pc.width + uint(j)] = x; \
            blur[n + (row) * pc.width + uint(j)] = y; \
        } \
        float d = x - y; \
        line += d < 0.0 ? -d : d; \
    }

// Four output pixels j .. j + 3 of one row, from the windows' columns
// j - 2 .. j + 1 (a, b) and the new j + 2 .. j + 5 (na, nb).
#define OUTPUTS(row, line, a, b, na, nb) \
    OUTPUT(row, line, j, a.x, a.y, a.z, a.w, na.x, b.x, b.y, b.z, b.w, nb.x) \
    if (j + 1 < w) { \
        OUTPUT(row, line, j + 1, a.y, a.z, a.w, na.x, na.y, b.y, b.z, b.w, nb.x, nb.y) \
    } \
    if (j + 2 < w) { \
        OUTPUT(row, line, j + 2, a.z, a.w, na.x, na.y, na.z, b.z, b.w, nb.x, nb.y, nb.z) \
    } \
    if (j + 3 < w) { \
        OUTPUT(row, line, j + 3, a.w, na.x, na.y, na.z, na.w, b.w, nb.x, nb.y, nb.z, nb.w) \
    } \
    a = na; \
    b = nb;

void main() {
    uint i0 = gl_GlobalInvocationID.x * uint(ROWS);
    if (i0 >= pc.height) {
        return;
    }
    int w = int(pc.width);
    int h = int(pc.height);
    bool five = pc.filter_width == 5u;
    int radius = five ? 2 : 1;
    uint shift = pc.bytes_per_sample == 1u ? 2u : 1u;
    uint bits = 8u * pc.bytes_per_sample;
    // The last word of the frames' planes (the buffers hold whole words).
    uint last = ((pc.plane_offset + pc.width * pc.height) * pc.bytes_per_sample - 1u) / 4u;
    float f0 = taps[0];
    float f1 = taps[1];
    float f2 = taps[2];
    float f3 = five ? taps[3] : 0.0;
    float f4 = five ? taps[4] : 0.0;
    uint q0 = ROW(0);
    uint q1 = ROW(1);
    uint q2 = ROW(2);
    uint q3 = ROW(3);
    uint q4 = ROW(4);
    uint q5 = ROW(5);
    uint q6 = ROW(6);
    uint q7 = ROW(7);
    uint n = pc.width * pc.height;
    // Per output row (0..3) and frame (a: prev, b: cur): the vertical
    // values at columns j - 2 .. j + 1, mirrored.
    vec4 a0;
    vec4 a1;
    vec4 a2;
    vec4 a3;
    vec4 b0;
    vec4 b1;
    vec4 b2;
    vec4 b3;
    for (int k = 0; k < 4; k++) {
        uint c = column(k - 2, w);
        float s0;
        float s1;
        float s2;
        float s3;
        VERTICAL(float, s0, s1, s2, s3, PREV_PIXEL, c)
        a0[k] = s0;
        a1[k] = s1;
        a2[k] = s2;
        a3[k] = s3;
        VERTICAL(float, s0, s1, s2, s3, CUR_PIXEL, c)
        b0[k] = s0;
        b1[k] = s1;
        b2[k] = s2;
        b3[k] = s3;
    }
    float line0 = 0.0;
    float line1 = 0.0;
    float line2 = 0.0;
    float line3 = 0.0;
    for (int j = 0; j < w; j += 4) {
        vec4 na0;
        vec4 na1;
        vec4 na2;
        vec4 na3;
        vec4 nb0;
        vec4 nb1;
        vec4 nb2;
        vec4 nb3;
        if (j + 5 < w) {
            uint at = uint(j + 2);
            VERTICAL(vec4, na0, na1, na2, na3, PREV_QUAD, at)
            VERTICAL(vec4, nb0, nb1, nb2, nb3, CUR_QUAD, at)
        } else {
            // Near the right edge the columns mirror back: one at a time.
            for (int k = 0; k < 4; k++) {
                uint c = column(j + 2 + k, w);
                float s0;
                float s1;
                float s2;
                float s3;
                VERTICAL(float, s0, s1, s2, s3, PREV_PIXEL, c)
                na0[k] = s0;
                na1[k] = s1;
                na2[k] = s2;
                na3[k] = s3;
                VERTICAL(float, s0, s1, s2, s3, CUR_PIXEL, c)
                nb0[k] = s0;
                nb1[k] = s1;
                nb2[k] = s2;
                nb3[k] = s3;
            }
        }
        OUTPUTS(i0, line0, a0, b0, na0, nb0)
        OUTPUTS(i0 + 1u, line1, a1, b1, na1, nb1)
        OUTPUTS(i0 + 2u, line2, a2, b2, na2, nb2)
        OUTPUTS(i0 + 3u, line3, a3, b3, na3, nb3)
    }
    rows[pc.row_offset + i0] = line0;
    if (i0 + 1u < pc.height) {
        rows[pc.row_offset + i0 + 1u] = line1;
    }
    if (i0 + 2u < pc.height) {
        rows[pc.row_offset + i0 + 2u] = line2;
    }
    if (i0 + 3u < pc.height) {
        rows[pc.row_offset + i0 + 3u] = line3;
    }
}
