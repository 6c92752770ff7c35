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
// Invocation t of group (gx, gy) computes output columns 4 (128 gx + t) ..
// + 3 of rows 16 gy .. 16 gy + 15: it slides down the band a window of
// the differences at the 8 input columns those outputs read (the vertical
// pass at neighbour columns is recomputed rather than shared, so no
// barrier), reading each row's 8 samples of a frame as whole 32-bit words
// away from the plane's edges, and sums |val| over its outputs. One
// barrier, and invocation 0 adds the group's 128 sums into
// partials[gy * groups_x + gx] (at most 16 * 512 * 65535 < 2^32). Integer
// sums: the order cannot matter; libvmaf's 32-bit row sums cannot wrap
// below 65538 columns.
#define WG 128
#define ROWS 16
#define COLS 4

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

// Samples start .. start + 7 of a plane, as two ivec4, read as 3 words
// (8-bit) or 5 words (16-bit).
#define LOAD8(word, start, lo4, hi4) \
    if (pc.bytes_per_sample == 1u) { \
        uint first = start >> 2u; \
        uint sh = (start & 3u) * 8u; \
        uint w0 = word(first, last); \
        uint w1 = word(first + 1u, last); \
        uint w2 = word(first + 2u, last); \
        uint lo = funnel(w0, w1, sh); \
        uint hi = funnel(w1, w2, sh); \
        lo4 = ivec4(uvec4(lo, lo >> 8u, lo >> 16u, lo >> 24u) & 255u); \
        hi4 = ivec4(uvec4(hi, hi >> 8u, hi >> 16u, hi >> 24u) & 255u); \
    } else { \
        uint first = start >> 1u; \
        uint sh = (start & 1u) * 16u; \
        uint w0 = word(first, last); \
        uint w1 = word(first + 1u, last); \
        uint w2 = word(first + 2u, last); \
        uint w3 = word(first + 3u, last); \
        uint w4 = word(first + 4u, last); \
        uint q0 = funnel(w0, w1, sh); \
        uint q1 = funnel(w1, w2, sh); \
        uint q2 = funnel(w2, w3, sh); \
        uint q3 = funnel(w3, w4, sh); \
        lo4 = ivec4(uvec4(q0, q0 >> 16u, q1, q1 >> 16u) & 65535u); \
        hi4 = ivec4(uvec4(q2, q2 >> 16u, q3, q3 >> 16u) & 65535u); \
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
        // The 8 input columns c0 - 2 .. c0 + 5, mirrored and clamped (a
        // clamped column only feeds outputs past the plane, never summed).
        ivec4 cl = clamp(ivec4(mirror(c0 - 2, w), mirror(c0 - 1, w), mirror(c0, w), mirror(c0 + 1, w)), 0, w - 1);
        ivec4 ch = clamp(ivec4(mirror(c0 + 2, w), mirror(c0 + 3, w), mirror(c0 + 4, w), mirror(c0 + 5, w)), 0, w - 1);
        // Away from the edges the 8 columns are contiguous: read as words.
        bool inner = c0 >= 2 && c0 + 5 < w;
        // Outputs c0 .. c0 + 3 inside the plane.
        ivec4 inside = ivec4(lessThan(ivec4(c0, c0 + 1, c0 + 2, c0 + 3), ivec4(w)));
        // The differences at the 8 columns (lo: c0 - 2 .., hi: c0 + 2 ..)
        // of rows i - 2 .. i + 2.
        ivec4 l0 = ivec4(0);
        ivec4 l1 = ivec4(0);
        ivec4 l2 = ivec4(0);
        ivec4 l3 = ivec4(0);
        ivec4 l4 = ivec4(0);
        ivec4 h0 = ivec4(0);
        ivec4 h1 = ivec4(0);
        ivec4 h2 = ivec4(0);
        ivec4 h3 = ivec4(0);
        ivec4 h4 = ivec4(0);
        for (int r = -4; r < ROWS; r++) {
            int i = i0 + r;
            if (i >= h) {
                break;
            }
            uint row = uint(mirror(i + 2, h) * w);
            ivec4 pl;
            ivec4 ph;
            ivec4 ql;
            ivec4 qh;
            if (inner) {
                uint start = row + uint(c0 - 2);
                LOAD8(prev_word, start, pl, ph)
                LOAD8(cur_word, start, ql, qh)
            } else {
                uvec4 al = uvec4(row) + uvec4(cl);
                uvec4 ah = uvec4(row) + uvec4(ch);
                pl = ivec4(prev_sample(al.x, shift, bits), prev_sample(al.y, shift, bits), prev_sample(al.z, shift, bits), prev_sample(al.w, shift, bits));
                ph = ivec4(prev_sample(ah.x, shift, bits), prev_sample(ah.y, shift, bits), prev_sample(ah.z, shift, bits), prev_sample(ah.w, shift, bits));
                ql = ivec4(cur_sample(al.x, shift, bits), cur_sample(al.y, shift, bits), cur_sample(al.z, shift, bits), cur_sample(al.w, shift, bits));
                qh = ivec4(cur_sample(ah.x, shift, bits), cur_sample(ah.y, shift, bits), cur_sample(ah.z, shift, bits), cur_sample(ah.w, shift, bits));
            }
            l0 = l1;
            l1 = l2;
            l2 = l3;
            l3 = l4;
            l4 = pl - ql;
            h0 = h1;
            h1 = h2;
            h2 = h3;
            h3 = h4;
            h4 = ph - qh;
            if (r < 0) {
                continue; // the window fills: rows i0 - 2 .. i0 + 1
            }
            ivec4 yl = vertical(l0, l1, l2, l3, l4, bpc);
            ivec4 yh = vertical(h0, h1, h2, h3, h4, bpc);
            // Output c0 + o reads columns o .. o + 4 of the 8.
            ivec4 val = round_shift_split(
                yl,
                ivec4(yl.yzw, yh.x),
                ivec4(yl.zw, yh.xy),
                ivec4(yl.w, yh.xyz),
                yh,
                16);
            uvec4 a = uvec4(abs(val) * inside);
            acc += a.x + a.y + a.z + a.w;
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
