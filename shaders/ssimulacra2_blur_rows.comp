#version 450
// ssimulacra2_blur_rows: the row pass of the recursive Gaussian for the five
// statistics of a channel, one invocation per row and channel, in one run
// of groups for the three channels (contract:
// BLUR_ROWS in src/features/ssimulacra2/gpu.rs).
//
// Mirrors ssimulacra2.c `fast_gaussian_1d` along each row of the five blur
// inputs of `extract`: the reference's and the distorted's XYB channel, and
// the products ref * ref, dist * dist, ref * dist, each rounded to f32 as
// `multiply_3plane` writes them. For n from -N + 1 on: sum = in[n - N - 1]
// + in[n + N - 1] (0 outside the row), then per pole o_k = n2[k] * sum -
// d1[k] * prev1_k - prev2_k, and (o_0 + o_1) + o_2 written at n >= 0. The
// build marks each float operation NoContraction: the bits are the C's.
layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer Xyb { float xyb[]; };
layout(std430, set = 0, binding = 1) buffer Rows { float rows[]; };

layout(push_constant) uniform Params {
    uint width;
    uint height;
    float n2_0;
    float n2_1;
    float n2_2;
    float d1_0;
    float d1_1;
    float d1_2;
    uint radius;
} pc;

// One IIR step of a statistic with state (p1, p2) on `sum`; the output
// (o_0 + o_1) + o_2 in v. Written out per statistic (no arrays), so every
// driver keeps the state in registers.
#define STEP(p1, p2, sum, v) \
    { \
        vec3 o = n2 * (sum) - d1 * p1 - p2; \
        p2 = p1; \
        p1 = o; \
        v = (o.x + o.y) + o.z; \
    }

// The recursive Gaussian's radius N, the only one ssimulacra2 uses (the
// host checks pc.radius against it): the sample read as `right` (column n
// + N - 1) at step n is read again as `left` (column n - N - 1) at step n +
// 2N. Each picture keeps its last 2N right samples in a ring, so every
// sample is loaded once, not twice; the step loop is unrolled 2N times so
// every ring index is a constant and the ring lives in registers (lavapipe
// loads a storage buffer lane by lane). The ring holds the very samples (0
// before the row) the second load would read, so the values are the same.
#define RADIUS 5
#define RING 10
#define ZEROS float[RING](0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)

// Step n = n0 + k of the row.
#define COLUMN(k) \
    { \
        int n = n0 + k; \
        if (n >= w) { \
            break; \
        } \
        int right = n + RADIUS - 1; \
        float la = ra_ring[k]; \
        float lb = rb_ring[k]; \
        float laa = la * la; \
        float lbb = lb * lb; \
        float lab = la * lb; \
        float ra = 0.0, rb = 0.0, raa = 0.0, rbb = 0.0, rab = 0.0; \
        if (right < w) { \
            ra = xyb[a + uint(right)]; \
            rb = xyb[b + uint(right)]; \
            raa = ra * ra; \
            rbb = rb * rb; \
            rab = ra * rb; \
        } \
        ra_ring[k] = ra; \
        rb_ring[k] = rb; \
        float v0, v1, v2, v3, v4; \
        STEP(p1_0, p2_0, la + ra, v0) \
        STEP(p1_1, p2_1, lb + rb, v1) \
        STEP(p1_2, p2_2, laa + raa, v2) \
        STEP(p1_3, p2_3, lbb + rbb, v3) \
        STEP(p1_4, p2_4, lab + rab, v4) \
        if (n >= 0) { \
            uint at = out_row + uint(n); \
            rows[at] = v0; \
            rows[at + plane] = v1; \
            rows[at + 2u * plane] = v2; \
            rows[at + 3u * plane] = v3; \
            rows[at + 4u * plane] = v4; \
        } \
    }

void main() {
    // Item c * height + y: the three channels' rows in one run of groups.
    uint item = gl_GlobalInvocationID.x;
    if (item >= 3u * pc.height) {
        return;
    }
    uint c = item / pc.height;
    uint y = item - c * pc.height;
    uint plane = pc.width * pc.height;
    uint a = c * plane + y * pc.width;
    uint b = (3u + c) * plane + y * pc.width;
    uint out_row = 5u * c * plane + y * pc.width;
    vec3 n2 = vec3(pc.n2_0, pc.n2_1, pc.n2_2);
    vec3 d1 = vec3(pc.d1_0, pc.d1_1, pc.d1_2);
    // Per statistic, the three poles' prev1 and prev2.
    vec3 p1_0 = vec3(0.0), p1_1 = vec3(0.0), p1_2 = vec3(0.0), p1_3 = vec3(0.0), p1_4 = vec3(0.0);
    vec3 p2_0 = vec3(0.0), p2_1 = vec3(0.0), p2_2 = vec3(0.0), p2_3 = vec3(0.0), p2_4 = vec3(0.0);
    // Per picture, the last 2N right samples (columns before the row: 0).
    float ra_ring[RING] = ZEROS;
    float rb_ring[RING] = ZEROS;
    int w = int(pc.width);
    for (int n0 = -RADIUS + 1; n0 < w; n0 += RING) {
        COLUMN(0)
        COLUMN(1)
        COLUMN(2)
        COLUMN(3)
        COLUMN(4)
        COLUMN(5)
        COLUMN(6)
        COLUMN(7)
        COLUMN(8)
        COLUMN(9)
    }
}
