#version 450
// psnr_hvs_terms: every 8x8 block's 64 terms of libvmaf's calc_psnrhvs
// (third_party/xiph/psnr_hvs.c), one invocation per block (contract:
// PSNR_HVS_TERMS in src/features/psnr_hvs/gpu.rs; kernels/psnr_hvs.cl is
// the same code in C). The arithmetic is the CPU reference's
// (src/features/psnr_hvs/cpu.rs `block_terms`): f32 in its order, every
// add and multiply rounded on its own (the build marks them
// NoContraction), Daala's integer DCT. Vulkan's own division and square
// root may be 2.5 ulp off, so `div_rn` and `sqrt_rn` correct them to the
// nearest float with exact double arithmetic.
layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer Reference { uint ref_words[]; };
layout(std430, set = 0, binding = 1) readonly buffer Distorted { uint dis_words[]; };
// Per plane: the CSF then the mask, 64 floats each, read as a uniform block
// of vec4s (every invocation of a group reads the same ones at once; a
// storage-buffer load per coefficient costs CPU drivers like lavapipe a
// gather each).
layout(std140, set = 0, binding = 2) uniform Tables { vec4 tables4[96]; };
// Per plane: first sample, width, blocks per row, block rows, first term,
// first group.
layout(std430, set = 0, binding = 3) readonly buffer Planes { uint planes[]; };
layout(std430, set = 0, binding = 4) buffer Terms { float terms[]; };

layout(push_constant) uniform Params {
    uint bytes_per_sample;
} pc;

float tables(uint i) {
    return tables4[i >> 2u][i & 3u];
}

// The float after and before a positive finite float.
float next_up(float x) {
    return uintBitsToFloat(floatBitsToUint(x) + 1u);
}

float next_down(float x) {
    return uintBitsToFloat(floatBitsToUint(x) - 1u);
}

// a / b to the nearest float, for finite a and b > 0. The driver's quotient,
// corrected once with the exact residual a - q b (the product of two floats
// is exact in double, the difference too), is within an ulp; comparing
// a with b times the midpoints to its neighbours (25-bit midpoints times
// 24-bit b: exact in double) picks the nearest. A quotient of floats is
// never exactly a midpoint.
float div_rn(float a, float b) {
    if (a == 0.0) {
        return a;
    }
    float x = abs(a);
    float q = x / b;
    double r = double(x) - double(q) * double(b);
    q = q + float(r) / b;
    if ((double(q) + double(next_up(q))) * double(0.5) * double(b) < double(x)) {
        q = next_up(q);
    } else if ((double(q) + double(next_down(q))) * double(0.5) * double(b) > double(x)) {
        q = next_down(q);
    }
    return a < 0.0 ? -q : q;
}

// sqrt(x) to the nearest float, for finite x >= 0: as div_rn, with the
// midpoints squared (50 bits: exact in double).
float sqrt_rn(float x) {
    if (x == 0.0) {
        return x;
    }
    float s = sqrt(x);
    double r = double(x) - double(s) * double(s);
    s = s + float(r) / (2.0 * s);
    double up = (double(s) + double(next_up(s))) * double(0.5);
    double down = (double(s) + double(next_down(s))) * double(0.5);
    if (up * up < double(x)) {
        s = next_up(s);
    } else if (down * down > double(x)) {
        s = next_down(s);
    }
    return s;
}

// Sample i of a frame of 8- or 16-bit samples packed in little-endian
// words: one load whatever the size (lavapipe would run both sides of a
// branch on it, two loads a sample).
int ref_sample(uint i) {
    uint shift = pc.bytes_per_sample == 1u ? 2u : 1u;
    uint bits = 8u * pc.bytes_per_sample;
    return int((ref_words[i >> shift] >> ((i & ((1u << shift) - 1u)) * bits)) & ((1u << bits) - 1u));
}

int dis_sample(uint i) {
    uint shift = pc.bytes_per_sample == 1u ? 2u : 1u;
    uint bits = 8u * pc.bytes_per_sample;
    return int((dis_words[i >> shift] >> ((i & ((1u << shift) - 1u)) * bits)) & ((1u << bits) - 1u));
}

// psnr_hvs.c OD_DCT_RSHIFT: a >> b rounded towards zero (32-bit).
int dct_rshift(int a, int b) {
    return int((uint(a) >> uint(32 - b)) + uint(a)) >> b;
}

// (a * c + round) >> shift, 32-bit two's complement.
int lift(int a, int c, int round, int shift) {
    return (a * c + round) >> shift;
}

// The invocation's two blocks and a scratch block, one array (GLSL cannot
// pass a reference to an array: functions index it at an offset): the
// reference's samples then coefficients at S, the distorted's at D.
const int S = 0;
const int D = 64;
const int Z = 128;
int blk[192];

// psnr_hvs.c od_bin_fdct8: the eight values blk[x + k xs] (k = 0..8)
// transformed into blk[y + k].
void fdct8(int x, int xs, int y) {
    int t0 = blk[x];
    int t4 = blk[x + xs];
    int t2 = blk[x + 2 * xs];
    int t6 = blk[x + 3 * xs];
    int t7 = blk[x + 4 * xs];
    int t3 = blk[x + 5 * xs];
    int t5 = blk[x + 6 * xs];
    int t1 = blk[x + 7 * xs];
    t1 = t0 - t1;
    int t1h = dct_rshift(t1, 1);
    t0 -= t1h;
    t4 += t5;
    int t4h = dct_rshift(t4, 1);
    t5 -= t4h;
    t3 = t2 - t3;
    t2 -= dct_rshift(t3, 1);
    t6 += t7;
    int t6h = dct_rshift(t6, 1);
    t7 = t6h - t7;
    t0 += t6h;
    t6 = t0 - t6;
    t2 = t4h - t2;
    t4 = t2 - t4;
    t0 -= lift(t4, 13573, 16384, 15);
    t4 += lift(t0, 11585, 8192, 14);
    t0 -= lift(t4, 13573, 16384, 15);
    t6 -= lift(t2, 21895, 16384, 15);
    t2 += lift(t6, 15137, 8192, 14);
    t6 -= lift(t2, 21895, 16384, 15);
    t3 += lift(t5, 19195, 16384, 15);
    t5 += lift(t3, 11585, 8192, 14);
    t3 -= lift(t5, 7489, 4096, 13);
    t7 = dct_rshift(t5, 1) - t7;
    t5 -= t7;
    t3 = t1h - t3;
    t1 -= t3;
    t7 += lift(t1, 3227, 16384, 15);
    t1 -= lift(t7, 6393, 16384, 15);
    t7 += lift(t1, 3227, 16384, 15);
    t5 += lift(t3, 2485, 4096, 13);
    t3 -= lift(t5, 18205, 16384, 15);
    t5 += lift(t3, 2485, 4096, 13);
    blk[y] = t0;
    blk[y + 1] = t1;
    blk[y + 2] = t2;
    blk[y + 3] = t3;
    blk[y + 4] = t4;
    blk[y + 5] = t5;
    blk[y + 6] = t6;
    blk[y + 7] = t7;
}

// psnr_hvs.c od_bin_fdct8x8 of the row-major block at b, in place: a 1-D
// DCT down each column into Z's rows, then down each column of Z. Loops,
// not sixteen calls written out: lavapipe translates and optimises the
// whole module again in every run, and the 32 inlined copies of fdct8
// took it 130-200 ms a run (Mesa 22.3.6 and 25.0.7) against 36-42 ms
// with the loops, for the same kernel time (shaders/README.md).
void fdct8x8(int b) {
    for (int c = 0; c < 8; c++) {
        fdct8(b + c, 8, Z + 8 * c);
    }
    for (int c = 0; c < 8; c++) {
        fdct8(Z + c, 8, b + 8 * c);
    }
}

// The block at b's quadrant variances over its whole variance, as
// calc_psnrhvs computes them (the sample sums are exact integers, the
// variance sums f32 in row-major order); the whole variance itself when it
// is not positive.
float variance_ratio(int b) {
    int gsum = 0;
    int q0 = 0;
    int q1 = 0;
    int q2 = 0;
    int q3 = 0;
    for (int i = 0; i < 8; i++) {
        for (int j = 0; j < 8; j++) {
            int v = blk[b + i * 8 + j];
            gsum += v;
            if (i < 4) {
                if (j < 4) { q0 += v; } else { q2 += v; }
            } else {
                if (j < 4) { q1 += v; } else { q3 += v; }
            }
        }
    }
    // Division by 64 and 16: exact.
    float gmean = float(gsum) * 0.015625;
    vec4 means = vec4(float(q0), float(q1), float(q2), float(q3)) * 0.0625;
    float gvar = 0.0;
    vec4 vars = vec4(0.0);
    for (int i = 0; i < 8; i++) {
        for (int j = 0; j < 8; j++) {
            int q = ((i & 12) >> 2) + ((j & 12) >> 1);
            float x = float(blk[b + i * 8 + j]);
            float dg = x - gmean;
            float dq = x - means[q];
            gvar += dg * dg;
            vars[q] += dq * dq;
        }
    }
    // `1 / 63.f * 64` and `1 / 15.f * 16`: the floats nearest 1/63 and
    // 1/15, times 64 and 16 (exact).
    gvar *= uintBitsToFloat(0x3C820821u) * 64.0;
    vars *= uintBitsToFloat(0x3D888889u) * 16.0;
    if (gvar > 0.0) {
        gvar = div_rn(vars.x + vars.y + vars.z + vars.w, gvar);
    }
    return gvar;
}

// The masking energy of the coefficients at b: sqrt(sum of (float)(c * c)
// * mask over the AC coefficients in order, times gvar) / 32 (the /32 is
// exact).
float masking(int b, uint table, float gvar) {
    float m = 0.0;
    for (int k = 1; k < 64; k++) {
        int c = blk[b + k];
        m += float(c * c) * tables(table + 64u + uint(k));
    }
    return sqrt_rn(m * gvar) * 0.03125;
}

void main() {
    // One row of groups for the three planes, each plane's from its first
    // group on: a grid of the largest plane's groups for each plane left
    // two thirds of the chroma rows' groups idle, and lavapipe runs an idle
    // group's code as if its invocations worked.
    uint g = gl_WorkGroupID.x;
    uint p = (g >= planes[6u + 5u] ? 1u : 0u) + (g >= planes[12u + 5u] ? 1u : 0u);
    uint offset = planes[6u * p];
    uint width = planes[6u * p + 1u];
    uint bx = planes[6u * p + 2u];
    uint by = planes[6u * p + 3u];
    uint first = planes[6u * p + 4u];
    uint b = (g - planes[6u * p + 5u]) * 64u + gl_LocalInvocationID.x;
    if (b >= bx * by) {
        return;
    }
    uint table = 128u * p; // CSF at table, mask at table + 64
    uint x0 = 7u * (b % bx);
    uint y0 = 7u * (b / bx);
    for (uint i = 0u; i < 8u; i++) {
        for (uint j = 0u; j < 8u; j++) {
            uint at = offset + (y0 + i) * width + x0 + j;
            blk[S + int(i * 8u + j)] = ref_sample(at);
            blk[D + int(i * 8u + j)] = dis_sample(at);
        }
    }
    float s_gvar = variance_ratio(S);
    float d_gvar = variance_ratio(D);
    fdct8x8(S);
    fdct8x8(D);
    float s_mask = masking(S, table, s_gvar);
    float d_mask = masking(D, table, d_gvar);
    if (d_mask > s_mask) {
        s_mask = d_mask;
    }
    uint out_at = first + 64u * b;
    for (int k = 0; k < 64; k++) {
        float err = float(abs(blk[S + k] - blk[D + k]));
        if (k != 0) {
            float threshold = div_rn(s_mask, tables(table + 64u + uint(k)));
            err = err < threshold ? 0.0 : err - threshold;
        }
        float e = err * tables(table + uint(k));
        terms[out_at + uint(k)] = e * e;
    }
}
