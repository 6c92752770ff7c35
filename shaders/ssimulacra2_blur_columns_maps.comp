#version 450
// ssimulacra2_blur_columns_maps: the column pass of the recursive Gaussian
// for the five statistics of a channel, and the SSIM and edge maps on the
// way, one invocation per column and channel (contract: BLUR_COLUMNS_MAPS in
// src/features/ssimulacra2/gpu.rs).
//
// Mirrors ssimulacra2.c `blur_plane`'s vertical pass (the IIR of
// ssimulacra2_blur_rows.comp down each column of the row-blurred planes)
// and, at each output pixel, `ssim_map` (f32 moments, then
// 1 - num_m * num_s / denom_s in double, at least 0) and `edge_diff_map`
// ((1 + |img2 - mu2|) / (1 + |img1 - mu1|) - 1 in double, its positive and
// negative parts), each value and its fourth power summed in double down
// the column: sums[base + (c * 6 + j) * stride + x]. The C sums over the
// whole plane in raster order; ssimulacra2_sum_columns then adds the
// columns, so only the order of these f64 additions differs from it.
layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer Xyb { float xyb[]; };
layout(std430, set = 0, binding = 1) readonly buffer Rows { float rows[]; };
layout(std430, set = 0, binding = 2) buffer Sums { double sums[]; };

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
    uint base;
    uint stride;
} pc;

double quartic(double x) {
    double x2 = x * x;
    return x2 * x2;
}

// The recursive Gaussian's radius N, the only one ssimulacra2 uses (the
// host checks pc.radius against it): the sample read as `right` (row n + N
// - 1) at step n is read again as `left` (row n - N - 1) at step n + 2N.
// Each statistic keeps its last 2N right samples in a ring, so every
// row-blurred sample is loaded once, not twice: the step loop is unrolled
// 2N times so every ring index is a constant and the ring lives in
// registers (lavapipe loads a storage buffer lane by lane, the dominant
// cost of this kernel there). The values are the same: the ring holds the
// very samples (0 before the plane) the second load would read.
#define RADIUS 5
#define RING 10
#define ZEROS float[RING](0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)

// One IIR step of statistic s, with state (p1, p2) and ring r, down the
// column: the ring's sample of row `left` (slot k) and the row-blurred
// sample of row `right` (0 outside the plane), which takes slot k; the
// output (o_0 + o_1) + o_2 in v.
#define STEP(s, r, k, p1, p2, v) \
    { \
        float lv = r[k]; \
        float rv = right < h ? rows[in_col + uint(s) * plane + uint(right) * pc.width] : 0.0; \
        r[k] = rv; \
        vec3 o = n2 * (lv + rv) - d1 * p1 - p2; \
        p2 = p1; \
        p1 = o; \
        v = (o.x + o.y) + o.z; \
    }

// Step n = n0 + k of the column: the five statistics, then at n >= 0 the
// pixel's maps added to the six sums.
#define ROW(k) \
    { \
        int n = n0 + k; \
        if (n >= h) { \
            break; \
        } \
        int right = n + RADIUS - 1; \
        float mu1, mu2, s11, s22, s12; \
        STEP(0, r0, k, p1_0, p2_0, mu1) \
        STEP(1, r1, k, p1_1, p2_1, mu2) \
        STEP(2, r2, k, p1_2, p2_2, s11) \
        STEP(3, r3, k, p1_3, p2_3, s22) \
        STEP(4, r4, k, p1_4, p2_4, s12) \
        if (n >= 0) { \
            maps(n, mu1, mu2, s11, s22, s12, img1, img2, acc0, acc1, acc2, acc3, acc4, acc5); \
        } \
    }

// ssim_map and edge_diff_map of one pixel (row n), added to the six sums.
void maps(int n, float mu1, float mu2, float s11, float s22, float s12, uint img1, uint img2,
          inout double acc0, inout double acc1, inout double acc2, inout double acc3, inout double acc4,
          inout double acc5) {
    // ssim_map.
    float mu11 = mu1 * mu1;
    float mu22 = mu2 * mu2;
    float mu12 = mu1 * mu2;
    float diff = mu1 - mu2;
    float num_m = 1.0 - diff * diff;
    float num_s = 2.0 * (s12 - mu12) + 0.0009;
    float denom_s = (s11 - mu11) + (s22 - mu22) + 0.0009;
    double d = double(1.0) - double(num_m) * double(num_s) / double(denom_s);
    d = d < double(0.0) ? double(0.0) : d;
    acc0 += d;
    acc1 += quartic(d);
    // edge_diff_map.
    uint row = uint(n) * pc.width;
    double ed1 = abs(double(xyb[img1 + row]) - double(mu1));
    double ed2 = abs(double(xyb[img2 + row]) - double(mu2));
    double e = (double(1.0) + ed2) / (double(1.0) + ed1) - double(1.0);
    double art = e > double(0.0) ? e : double(0.0);
    double det = e < double(0.0) ? -e : double(0.0);
    acc2 += art;
    acc3 += quartic(art);
    acc4 += det;
    acc5 += quartic(det);
}

void main() {
    uint x = gl_GlobalInvocationID.x;
    uint c = gl_WorkGroupID.y;
    if (x >= pc.width) {
        return;
    }
    uint plane = pc.width * pc.height;
    uint in_col = 5u * c * plane + x;
    uint img1 = c * plane + x;
    uint img2 = (3u + c) * plane + x;
    vec3 n2 = vec3(pc.n2_0, pc.n2_1, pc.n2_2);
    vec3 d1 = vec3(pc.d1_0, pc.d1_1, pc.d1_2);
    vec3 p1_0 = vec3(0.0), p1_1 = vec3(0.0), p1_2 = vec3(0.0), p1_3 = vec3(0.0), p1_4 = vec3(0.0);
    vec3 p2_0 = vec3(0.0), p2_1 = vec3(0.0), p2_2 = vec3(0.0), p2_3 = vec3(0.0), p2_4 = vec3(0.0);
    // Per statistic, the last 2N right samples (rows before the plane: 0).
    float r0[RING] = ZEROS;
    float r1[RING] = ZEROS;
    float r2[RING] = ZEROS;
    float r3[RING] = ZEROS;
    float r4[RING] = ZEROS;
    // The six sums: SSIM d and d^4, artifact and ^4, detail lost and ^4.
    double acc0 = double(0.0), acc1 = double(0.0), acc2 = double(0.0);
    double acc3 = double(0.0), acc4 = double(0.0), acc5 = double(0.0);
    int h = int(pc.height);
    for (int n0 = -RADIUS + 1; n0 < h; n0 += RING) {
        ROW(0)
        ROW(1)
        ROW(2)
        ROW(3)
        ROW(4)
        ROW(5)
        ROW(6)
        ROW(7)
        ROW(8)
        ROW(9)
    }
    uint first = pc.base + c * 6u * pc.stride + x;
    sums[first] = acc0;
    sums[first + pc.stride] = acc1;
    sums[first + 2u * pc.stride] = acc2;
    sums[first + 3u * pc.stride] = acc3;
    sums[first + 4u * pc.stride] = acc4;
    sums[first + 5u * pc.stride] = acc5;
}
