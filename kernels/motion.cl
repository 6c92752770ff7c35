/*
 * motion family: `motion` and `motion_v2` (MOTION_SAD) and `float_motion`
 * (FLOAT_MOTION_BLUR_Y, FLOAT_MOTION_BLUR_X, FLOAT_MOTION_SAD_ROWS,
 * FLOAT_MOTION_SAD_SCALED_ROWS); the contracts are the KernelSpecs in
 * src/features/motion/gpu.rs. Integer arithmetic is libvmaf's, bit for bit;
 * float arithmetic is the CPU reference's operation order, every operation
 * rounded on its own (ADD_RN/MUL_RN, no FMA).
 */
#include "ulp.h"

/* ---------------------------------------------------------------------
 * motion_sad: integer motion (integer_motion.c motion_score_pipeline_8/16)
 * --------------------------------------------------------------------- */

#define MOTION_WG 128
#define MOTION_ROWS 16

/* integer_motion.c mirror: -i before, 2n - i - 2 past the end. */
FUNC int motion_mirror(int i, int n)
{
    return i < 0 ? -i : (i >= n ? 2 * n - i - 2 : i);
}

FUNC int motion_tap(int k)
{
    /* integer_motion.h filter[5] */
    return k == 0 || k == 4 ? 3571 : (k == 1 || k == 3 ? 16004 : 26386);
}

/* (Σ filter[k] * v[k] + 2^(s-1)) >> s, exact in 32 bits for |v| < 2^16
 * and s >= 8 (integer.rs `round_shift_split` says why). */
FUNC int motion_round_shift_split(const int v[5], int s)
{
    int a = 0, b = 0;
#pragma unroll
    for (int k = 0; k < 5; k++) {
        a += motion_tap(k) * (v[k] >> 8);
        b += motion_tap(k) * (v[k] & 255);
    }
    return (a + ((b + (1 << (s - 1))) >> 8)) >> (s - 8);
}

/* The vertical pass at one position: 8-bit (accum + 128) >> 8; 10 and
 * 12-bit exact in 32 bits; 16-bit through the split. */
FUNC int motion_vertical(const int d[5], int bpc)
{
    if (bpc == 16)
        return motion_round_shift_split(d, 16);
    int accum = 0;
#pragma unroll
    for (int k = 0; k < 5; k++)
        accum += motion_tap(k) * d[k];
    const int s = bpc == 8 ? 8 : bpc;
    return (accum + (1 << (s - 1))) >> s;
}

KERNEL motion_sad(GLOBAL const ulp_u8 *prev, GLOBAL const ulp_u8 *cur, GLOBAL ulp_u32 *partials, ulp_u32 width,
                  ulp_u32 height, ulp_u32 bytes_per_sample, ulp_u32 bpc)
{
    LOCAL ulp_u32 sums[MOTION_WG];
    const int lid = (int)LOCAL_ID(0);
    const int w = (int)width, h = (int)height;
    const int j = (int)(GROUP_ID(0) * MOTION_WG) + lid;
    const int i0 = (int)GROUP_ID(1) * MOTION_ROWS;
    ulp_u32 acc = 0;
    if (j < w) {
        int col[5];
#pragma unroll
        for (int k = 0; k < 5; k++)
            col[k] = motion_mirror(j - 2 + k, w);
        /* win[k][t]: the difference at column col[k], rows i - 2 + t. */
        int win[5][5];
#pragma unroll
        for (int t = 0; t < 4; t++) {
            const int row = motion_mirror(i0 - 2 + t, h) * w;
#pragma unroll
            for (int k = 0; k < 5; k++)
                win[k][t + 1] = (int)ulp_sample(prev, (ulp_u32)(row + col[k]), bytes_per_sample) -
                                (int)ulp_sample(cur, (ulp_u32)(row + col[k]), bytes_per_sample);
        }
        for (int r = 0; r < MOTION_ROWS; r++) {
            const int i = i0 + r;
            if (i >= h)
                break;
            const int row = motion_mirror(i + 2, h) * w;
            int y[5];
#pragma unroll
            for (int k = 0; k < 5; k++) {
#pragma unroll
                for (int t = 0; t < 4; t++)
                    win[k][t] = win[k][t + 1];
                win[k][4] = (int)ulp_sample(prev, (ulp_u32)(row + col[k]), bytes_per_sample) -
                            (int)ulp_sample(cur, (ulp_u32)(row + col[k]), bytes_per_sample);
                y[k] = motion_vertical(win[k], (int)bpc);
            }
            const int val = motion_round_shift_split(y, 16);
            acc += (ulp_u32)(val < 0 ? -val : val);
        }
    }
    sums[lid] = acc;
    BARRIER();
    if (lid == 0) {
        ulp_u32 total = 0;
        for (int t = 0; t < MOTION_WG; t++)
            total += sums[t];
        partials[GROUP_ID(1) * NUM_GROUPS(0) + GROUP_ID(0)] = total;
    }
}

/* ---------------------------------------------------------------------
 * float_motion: blur (convolution_f32_c_s), then per-row SADs
 * --------------------------------------------------------------------- */

#define FLOAT_MOTION_WG 256
#define FLOAT_MOTION_ROWS_WG 64

/* convolution_edge_s's mirror: -i before, n - (i - n + 2) past the end. */
FUNC int float_motion_mirror(int i, int n)
{
    return i < 0 ? -i : (i >= n ? n - (i - n + 2) : i);
}

/* picture_copy: v / scaler - 128, as v * (1 / scaler) (the scaler is a
 * power of two: the same bits). */
FUNC float float_motion_pixel(GLOBAL const ulp_u8 *frame, ulp_u32 i, ulp_u32 bytes_per_sample, float inv_scaler)
{
    return ADD_RN(MUL_RN((float)ulp_sample(frame, i, bytes_per_sample), inv_scaler), -128.0f);
}

KERNEL float_motion_blur_y(GLOBAL const ulp_u8 *prev, GLOBAL const ulp_u8 *cur, GLOBAL const float *taps,
                           GLOBAL float *tmp, ulp_u32 plane_offset, ulp_u32 width, ulp_u32 height,
                           ulp_u32 bytes_per_sample, float inv_scaler, ulp_u32 filter_width)
{
    const ulp_u32 n = width * height;
    const ulp_u32 p = GLOBAL_ID(0);
    if (p >= n)
        return;
    GLOBAL const ulp_u8 *src = GROUP_ID(2) == 0 ? prev : cur;
    const int i = (int)(p / width), j = (int)(p % width);
    const int radius = (int)filter_width / 2;
    float accum = 0.0f;
    for (int k = 0; k < (int)filter_width; k++) {
        const int r = float_motion_mirror(i - radius + k, (int)height);
        const float v = float_motion_pixel(src, plane_offset + (ulp_u32)(r * (int)width + j), bytes_per_sample, inv_scaler);
        accum = ADD_RN(accum, MUL_RN(taps[k], v));
    }
    tmp[GROUP_ID(2) * n + p] = accum;
}

KERNEL float_motion_blur_x(GLOBAL const float *taps, GLOBAL const float *tmp, GLOBAL float *blur, ulp_u32 width,
                           ulp_u32 height, ulp_u32 filter_width)
{
    const ulp_u32 n = width * height;
    const ulp_u32 p = GLOBAL_ID(0);
    if (p >= n)
        return;
    const ulp_u32 base = GROUP_ID(2) * n;
    const int i = (int)(p / width), j = (int)(p % width);
    const int radius = (int)filter_width / 2;
    float accum = 0.0f;
    for (int k = 0; k < (int)filter_width; k++) {
        const int c = float_motion_mirror(j - radius + k, (int)width);
        accum = ADD_RN(accum, MUL_RN(taps[k], tmp[base + (ulp_u32)(i * (int)width + c)]));
    }
    blur[base + p] = accum;
}

FUNC float float_motion_abs(float d)
{
    return d < 0.0f ? -d : d;
}

KERNEL float_motion_sad_rows(GLOBAL const float *blur, GLOBAL float *rows, ulp_u32 width, ulp_u32 height,
                             ulp_u32 row_offset)
{
    const ulp_u32 i = GLOBAL_ID(0);
    if (i >= height)
        return;
    const ulp_u32 n = width * height;
    GLOBAL const float *a = blur + i * width;
    GLOBAL const float *b = blur + n + i * width;
    float line = 0.0f;
    for (ulp_u32 j = 0; j < width; j++)
        line = ADD_RN(line, float_motion_abs(SUB_RN(a[j], b[j])));
    rows[row_offset + i] = line;
}

/* One bilinear sample, left to right in f32 (vif_tools.c
 * vif_scale_frame_bilinear_apply_s). */
FUNC float float_motion_bilinear(float dx, float dy, float a, float b, float c, float d)
{
    const float ex = SUB_RN(1.0f, dx), ey = SUB_RN(1.0f, dy);
    float s = MUL_RN(MUL_RN(ey, ex), a);
    s = ADD_RN(s, MUL_RN(MUL_RN(ey, dx), b));
    s = ADD_RN(s, MUL_RN(MUL_RN(dy, ex), c));
    return ADD_RN(s, MUL_RN(MUL_RN(dy, dx), d));
}

/* The bilinear half of both blurred planes (motion.c `vmaf_image_sad_c`
 * with motion_add_scale1), sampled on the fly, and each scaled row's SAD in
 * pixel order. `index` holds (x1, x2) per scaled column then (y1, y2) per
 * scaled row, `weight` dx per column then dy per row (the host computes
 * them as vif_scale_frame_bilinear_precompute_columns_s does). */
KERNEL float_motion_sad_scaled_rows(GLOBAL const float *blur, GLOBAL const ulp_u32 *index, GLOBAL const float *weight,
                                    GLOBAL float *rows, ulp_u32 width, ulp_u32 height, ulp_u32 scaled_width,
                                    ulp_u32 scaled_height, ulp_u32 row_offset)
{
    const ulp_u32 y = GLOBAL_ID(0);
    if (y >= scaled_height)
        return;
    const ulp_u32 n = width * height;
    const ulp_u32 y1 = index[2 * (scaled_width + y)] * width, y2 = index[2 * (scaled_width + y) + 1] * width;
    const float dy = weight[scaled_width + y];
    float line = 0.0f;
    for (ulp_u32 x = 0; x < scaled_width; x++) {
        const ulp_u32 x1 = index[2 * x], x2 = index[2 * x + 1];
        const float dx = weight[x];
        const float a = float_motion_bilinear(dx, dy, blur[y1 + x1], blur[y1 + x2], blur[y2 + x1], blur[y2 + x2]);
        const float b = float_motion_bilinear(dx, dy, blur[n + y1 + x1], blur[n + y1 + x2], blur[n + y2 + x1],
                                              blur[n + y2 + x2]);
        line = ADD_RN(line, float_motion_abs(SUB_RN(a, b)));
    }
    rows[row_offset + y] = line;
}
