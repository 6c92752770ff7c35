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
// Invocation j of group (gx, gy) is column 128 gx + j of rows 16 gy ..
// 16 gy + 15: it slides a 5x5 window of differences down its band (the
// vertical pass at its five neighbour columns, recomputed rather than
// shared, so no barrier) and sums |val| over its rows. One barrier, and
// invocation 0 adds the group's 128 sums into partials[gy * groups_x + gx]
// (at most 16 * 128 * 65535 < 2^32). Integer sums: order cannot matter;
// libvmaf's 32-bit row sums cannot wrap below 65538 columns.
#define WG 128
#define ROWS 16

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

const int FILTER[5] = int[5](3571, 16004, 26386, 16004, 3571);

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

// (Σ FILTER[k] v[k] + 2^(s-1)) >> s for |v| < 2^16, s >= 8, in 32 bits.
int round_shift_split(int v[5], int s) {
    int a = 0;
    int b = 0;
    for (int k = 0; k < 5; k++) {
        a += FILTER[k] * (v[k] >> 8);
        b += FILTER[k] * (v[k] & 255);
    }
    return (a + ((b + (1 << (s - 1))) >> 8)) >> (s - 8);
}

int vertical(int d[5], int bpc) {
    if (bpc == 16) {
        return round_shift_split(d, 16);
    }
    int accum = 0;
    for (int k = 0; k < 5; k++) {
        accum += FILTER[k] * d[k];
    }
    int s = bpc == 8 ? 8 : bpc;
    return (accum + (1 << (s - 1))) >> s;
}

void main() {
    uint lid = gl_LocalInvocationID.x;
    int w = int(pc.width);
    int h = int(pc.height);
    int j = int(gl_WorkGroupID.x) * WG + int(lid);
    int i0 = int(gl_WorkGroupID.y) * ROWS;
    uint shift = pc.bytes_per_sample == 1u ? 2u : 1u;
    uint bits = 8u * pc.bytes_per_sample;
    uint acc = 0u;
    if (j < w) {
        int col[5];
        for (int k = 0; k < 5; k++) {
            col[k] = mirror(j - 2 + k, w);
        }
        // Window t of column k: the difference at rows i - 2 + t.
        int win0[5];
        int win1[5];
        int win2[5];
        int win3[5];
        int win4[5];
        for (int t = 0; t < 4; t++) {
            int row = mirror(i0 - 2 + t, h) * w;
            win0[t + 1] = prev_sample(uint(row + col[0]), shift, bits) - cur_sample(uint(row + col[0]), shift, bits);
            win1[t + 1] = prev_sample(uint(row + col[1]), shift, bits) - cur_sample(uint(row + col[1]), shift, bits);
            win2[t + 1] = prev_sample(uint(row + col[2]), shift, bits) - cur_sample(uint(row + col[2]), shift, bits);
            win3[t + 1] = prev_sample(uint(row + col[3]), shift, bits) - cur_sample(uint(row + col[3]), shift, bits);
            win4[t + 1] = prev_sample(uint(row + col[4]), shift, bits) - cur_sample(uint(row + col[4]), shift, bits);
        }
        int bpc = int(pc.bpc);
        for (int r = 0; r < ROWS; r++) {
            int i = i0 + r;
            if (i >= h) {
                break;
            }
            int row = mirror(i + 2, h) * w;
            for (int t = 0; t < 4; t++) {
                win0[t] = win0[t + 1];
                win1[t] = win1[t + 1];
                win2[t] = win2[t + 1];
                win3[t] = win3[t + 1];
                win4[t] = win4[t + 1];
            }
            win0[4] = prev_sample(uint(row + col[0]), shift, bits) - cur_sample(uint(row + col[0]), shift, bits);
            win1[4] = prev_sample(uint(row + col[1]), shift, bits) - cur_sample(uint(row + col[1]), shift, bits);
            win2[4] = prev_sample(uint(row + col[2]), shift, bits) - cur_sample(uint(row + col[2]), shift, bits);
            win3[4] = prev_sample(uint(row + col[3]), shift, bits) - cur_sample(uint(row + col[3]), shift, bits);
            win4[4] = prev_sample(uint(row + col[4]), shift, bits) - cur_sample(uint(row + col[4]), shift, bits);
            int y[5];
            y[0] = vertical(win0, bpc);
            y[1] = vertical(win1, bpc);
            y[2] = vertical(win2, bpc);
            y[3] = vertical(win3, bpc);
            y[4] = vertical(win4, bpc);
            int val = round_shift_split(y, 16);
            acc += uint(abs(val));
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
