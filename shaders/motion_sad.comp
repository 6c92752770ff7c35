#version 450
// motion_sad: integer motion's SAD of the blurred reference difference
// (contract: MOTION_SAD in src/features/motion/gpu.rs; the C dialect is
// kernels/motion.cl).
//
// Mirrors libvmaf integer_motion.c motion_score_pipeline_8/_16 (the fork's
// integer_motion_v2.c is the same): diff = prev - cur; the vertical 5-tap
// pass (Σ filter * diff + round) >> shift (8-bit: shift 8; else the bit
// depth), mirrored `2n - i - 2`; the horizontal pass
// (Σ filter * y + 2^15) >> 16; |val| summed. The C sums the products in 64
// bits where they can exceed 32; here they are split (v = 256 h + l) so
// 32-bit integers give the same floor (integer.rs `round_shift_split`).
//
// Invocation t of group (gx, gy) computes output columns 8 (128 gx + t) ..
// + 7 of rows 16 gy .. 16 gy + 15: it slides down the band a window of
// the differences at the 12 input columns those outputs read (the
// vertical pass at neighbour columns is recomputed rather than shared, so
// no barrier), reading each row's 12 samples of a frame as 4 (8-bit) or 7
// (16-bit) whole 32-bit words away from the plane's edges, and sums |val|
// over its outputs. One barrier, and invocation 0 adds the group's 128
// sums into partials[gy * groups_x + gx] (at most 16 * 1024 * 65535 <
// 2^32). Integer sums: the order cannot matter; libvmaf's 32-bit row sums
// cannot wrap below 65538 columns.
#define WG 128
#define ROWS 16
#define COLS 8

layout(local_size_x = WG, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer Prev { uint prev_words[]; };
layout(std430, set = 0, binding = 1) readonly buffer Cur { uint cur_words[]; };
layout(std430, set = 0, binding = 2) buffer Partials { uint partials[]; };

layout(push_constant) uniform Params {
    uint width;
    uint height;
    uint bytes_per_sample;
    uint bpc;
} pc;

shared uint sums[WG];

int mirror(int i, int n) {
    return i < 0 ? -i : (i >= n ? 2 * n - i - 2 : i);
}

// Sample i of a plane of 8- or 16-bit samples packed in little-endian words.
int prev_sample(uint i, uint shift, uint bits) {
    uint word = prev_words[i >> shift];
    return int((word >> ((i & ((1u << shift) - 1u)) * bits)) & ((1u << bits) - 1u));
}

int cur_sample(uint i, uint shift, uint bits) {
    uint word = cur_words[i >> shift];
    return int((word >> ((i & ((1u << shift) - 1u)) * bits)) & ((1u << bits) - 1u));
}

// (Σ FILTER[k] v[k] + 2^(s-1)) >> s for |v| < 2^16, s >= 8, in 32 bits,
// on four positions at once (the symmetric taps paired).
ivec4 round_shift_split(ivec4 v0, ivec4 v1, ivec4 v2, ivec4 v3, ivec4 v4, int s) {
    ivec4 a = 3571 * ((v0 >> 8) + (v4 >> 8)) + 16004 * ((v1 >> 8) + (v3 >> 8)) + 26386 * (v2 >> 8);
    ivec4 b = 3571 * ((v0 & 255) + (v4 & 255)) + 16004 * ((v1 & 255) + (v3 & 255)) + 26386 * (v2 & 255);
    return (a + ((b + (1 << (s - 1))) >> 8)) >> (s - 8);
}

// The vertical pass of four columns: 8-bit (accum + 128) >> 8, 10 and 12
// bits exact in 32 bits, 16 bits through the split.
ivec4 vertical(ivec4 d0, ivec4 d1, ivec4 d2, ivec4 d3, ivec4 d4, int bpc) {
    if (bpc == 16) {
        return round_shift_split(d0, d1, d2, d3, d4, 16);
    }
    ivec4 accum = 3571 * (d0 + d4) + 16004 * (d1 + d3) + 26386 * d2;
    int s = bpc == 8 ? 8 : bpc;
    return (accum + (1 << (s - 1))) >> s;
}

// The plane's word i, clamped to its last word (a word past the plane is
// never unpacked).
uint prev_word(uint i, uint last) {
    return prev_words[min(i, last)];
}

uint cur_word(uint i, uint last) {
    return cur_words[min(i, last)];
}

// Bytes 4k .. 4k + 3 of the 12 bytes w0 w1 w2 starting `sh` bits in.
uint funnel(uint lo, uint hi, uint sh) {
    return sh == 0u ? lo : (lo >> sh) | (hi << (32u - sh));
}

// LOAD_ROW, a row's samples at the 12 columns k0, k1, k2 of both frames
// (include/motion_row_any.glsl: words away from the edges, sample by
// sample near them; the variant for 8-bit planes reads 4 words a frame
// wherever it is: lavapipe runs both sides of every choice, 4 + 7 + 24
// loads a row where 8 do), from the word reads of motion_load12.glsl.
#variant motion_sad_bytes "motion_row_any.glsl" "motion_row_bytes.glsl"
#include "motion_load12.glsl"
#include "motion_row_any.glsl"

// Samples at four columns of a row, one at a time (near the edges).
ivec4 prev_four(uint row, ivec4 c, uint shift, uint bits) {
    uvec4 at = uvec4(row) + uvec4(c);
    return ivec4(prev_sample(at.x, shift, bits), prev_sample(at.y, shift, bits), prev_sample(at.z, shift, bits),
        prev_sample(at.w, shift, bits));
}

ivec4 cur_four(uint row, ivec4 c, uint shift, uint bits) {
    uvec4 at = uvec4(row) + uvec4(c);
    return ivec4(cur_sample(at.x, shift, bits), cur_sample(at.y, shift, bits), cur_sample(at.z, shift, bits),
        cur_sample(at.w, shift, bits));
}

// Outputs o .. o + 3 from the vertical values at 8 columns from o
// (v: columns o .. o + 3, u: o + 4 .. o + 7): output o + k reads columns
// o + k .. o + k + 4.
ivec4 horizontal(ivec4 v, ivec4 u) {
    return round_shift_split(v, ivec4(v.yzw, u.x), ivec4(v.zw, u.xy), ivec4(v.w, u.xyz), u, 16);
}

ivec4 mirror4(ivec4 c, int w) {
    return clamp(ivec4(mirror(c.x, w), mirror(c.y, w), mirror(c.z, w), mirror(c.w, w)), 0, w - 1);
}

void main() {
    uint lid = gl_LocalInvocationID.x;
    int w = int(pc.width);
    int h = int(pc.height);
    int c0 = (int(gl_WorkGroupID.x) * WG + int(lid)) * COLS;
    int i0 = int(gl_WorkGroupID.y) * ROWS;
    uint shift = pc.bytes_per_sample == 1u ? 2u : 1u;
    uint bits = 8u * pc.bytes_per_sample;
    uint last = (pc.width * pc.height * pc.bytes_per_sample - 1u) / 4u;
    int bpc = int(pc.bpc);
    uint acc = 0u;
    if (c0 < w) {
        // The 12 input columns c0 - 2 .. c0 + 9, mirrored and clamped (a
        // clamped column only feeds outputs past the plane, never summed).
        ivec4 k0 = mirror4(ivec4(c0 - 2, c0 - 1, c0, c0 + 1), w);
        ivec4 k1 = mirror4(ivec4(c0 + 2, c0 + 3, c0 + 4, c0 + 5), w);
        ivec4 k2 = mirror4(ivec4(c0 + 6, c0 + 7, c0 + 8, c0 + 9), w);
        // Away from the edges the 12 columns are contiguous: read as words.
        bool inner = c0 >= 2 && c0 + 9 < w;
        // Outputs c0 .. c0 + 7 inside the plane.
        ivec4 in0 = ivec4(lessThan(ivec4(c0, c0 + 1, c0 + 2, c0 + 3), ivec4(w)));
        ivec4 in1 = ivec4(lessThan(ivec4(c0 + 4, c0 + 5, c0 + 6, c0 + 7), ivec4(w)));
        // The differences at the 12 columns (a: c0 - 2 .., b: c0 + 2 ..,
        // c: c0 + 6 ..) of rows i - 2 .. i + 2.
        ivec4 a0 = ivec4(0);
        ivec4 a1 = ivec4(0);
        ivec4 a2 = ivec4(0);
        ivec4 a3 = ivec4(0);
        ivec4 a4 = ivec4(0);
        ivec4 b0 = ivec4(0);
        ivec4 b1 = ivec4(0);
        ivec4 b2 = ivec4(0);
        ivec4 b3 = ivec4(0);
        ivec4 b4 = ivec4(0);
        ivec4 e0 = ivec4(0);
        ivec4 e1 = ivec4(0);
        ivec4 e2 = ivec4(0);
        ivec4 e3 = ivec4(0);
        ivec4 e4 = ivec4(0);
        for (int r = -4; r < ROWS; r++) {
            int i = i0 + r;
            if (i >= h) {
                break;
            }
            uint row = uint(mirror(i + 2, h) * w);
            ivec4 p0;
            ivec4 p1;
            ivec4 p2;
            ivec4 q0;
            ivec4 q1;
            ivec4 q2;
            LOAD_ROW(row, p0, p1, p2, q0, q1, q2)
            a0 = a1;
            a1 = a2;
            a2 = a3;
            a3 = a4;
            a4 = p0 - q0;
            b0 = b1;
            b1 = b2;
            b2 = b3;
            b3 = b4;
            b4 = p1 - q1;
            e0 = e1;
            e1 = e2;
            e2 = e3;
            e3 = e4;
            e4 = p2 - q2;
            if (r < 0) {
                continue; // the window fills: rows i0 - 2 .. i0 + 1
            }
            ivec4 ya = vertical(a0, a1, a2, a3, a4, bpc);
            ivec4 yb = vertical(b0, b1, b2, b3, b4, bpc);
            ivec4 ye = vertical(e0, e1, e2, e3, e4, bpc);
            uvec4 s = uvec4(abs(horizontal(ya, yb)) * in0 + abs(horizontal(yb, ye)) * in1);
            acc += s.x + s.y + s.z + s.w;
        }
    }
    sums[lid] = acc;
    barrier();
    if (lid == 0u) {
        uint total = 0u;
        for (int t = 0; t < WG; t++) {
            total += sums[t];
        }
        partials[gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x] = total;
    }
}
