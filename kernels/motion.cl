/*
 * motion family: `motion` and `motion_v2` (MOTION_SAD) and `float_motion`
 * (FLOAT_MOTION_ROWS, FLOAT_MOTION_SAD_SCALED_ROWS); the contracts are the
 * KernelSpecs in src/features/motion/gpu.rs. Integer arithmetic is
 * libvmaf's, bit for bit; float arithmetic is the CPU reference's operation
 * order, every operation rounded on its own (ADD_RN/MUL_RN, no FMA).
 */
#include "ulp.h"

/* ---------------------------------------------------------------------
 * motion_sad: integer motion (integer_motion.c motion_score_pipeline_8/16)
 * --------------------------------------------------------------------- */

#define MOTION_WG 128
#define MOTION_ROWS 16
#define MOTION_COLS 8

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

/* Sample `i` of a plane (1 or 2 bytes per sample) from the 7 words W
 * loaded from word `first`. */
FUNC int motion_unpack(const ulp_u32 W[7], ulp_u32 i, ulp_u32 first, ulp_u32 bytes_per_sample)
{
    if (bytes_per_sample == 1) {
        const ulp_u32 b = i - 4 * first;
        return (int)((W[b >> 2] >> ((b & 3) * 8)) & 255);
    }
    const ulp_u32 b = i - 2 * first;
    return (int)((W[b >> 1] >> ((b & 1) * 16)) & 65535);
}

/* The 7 words from `first` (clamped to the plane's last word: a word past
 * the plane is never unpacked). */
FUNC void motion_words(GLOBAL const ulp_u8 *plane, ulp_u32 first, ulp_u32 last, ulp_u32 W[7])
{
    GLOBAL const ulp_u32 *words = (GLOBAL const ulp_u32 *)plane;
#pragma unroll
    for (int k = 0; k < 7; k++)
        W[k] = words[first + k < last ? first + k : last];
}

KERNEL motion_sad(GLOBAL const ulp_u8 *prev, GLOBAL const ulp_u8 *cur, GLOBAL ulp_u32 *partials, ulp_u32 width,
                  ulp_u32 height, ulp_u32 bytes_per_sample, ulp_u32 bpc)
{
    LOCAL ulp_u32 sums[MOTION_WG];
    const int lid = (int)LOCAL_ID(0);
    const int w = (int)width, h = (int)height;
    /* Output columns c0 .. c0 + 7 of rows i0 .. i0 + 15. */
    const int c0 = ((int)(GROUP_ID(0) * MOTION_WG) + lid) * MOTION_COLS;
    const int i0 = (int)GROUP_ID(1) * MOTION_ROWS;
    const ulp_u32 last = (width * height * bytes_per_sample - 1) / 4;
    const ulp_u32 per_word = 4 / bytes_per_sample;
    ulp_u32 acc = 0;
    if (c0 < w) {
        /* The 12 input columns c0 - 2 .. c0 + 9, mirrored, clamped (a
         * clamped column only feeds outputs past the plane, never summed). */
        int col[MOTION_COLS + 4];
#pragma unroll
        for (int t = 0; t < MOTION_COLS + 4; t++) {
            const int m = motion_mirror(c0 - 2 + t, w);
            col[t] = m < 0 ? 0 : (m >= w ? w - 1 : m);
        }
        /* Away from the edges the 12 columns are contiguous: read as words. */
        const bool inner = c0 >= 2 && c0 + MOTION_COLS + 1 < w;
        /* win[t][k]: the difference at column col[t], rows i - 2 + k. */
        int win[MOTION_COLS + 4][5];
#pragma unroll
        for (int t = 0; t < MOTION_COLS + 4; t++)
#pragma unroll
            for (int k = 0; k < 5; k++)
                win[t][k] = 0;
        for (int r = -4; r < MOTION_ROWS; r++) {
            const int i = i0 + r;
            if (i >= h)
                break;
            const ulp_u32 row = (ulp_u32)(motion_mirror(i + 2, h) * w);
            int d[MOTION_COLS + 4];
            if (inner) {
                const ulp_u32 start = row + (ulp_u32)(c0 - 2), first = start / per_word;
                ulp_u32 P[7], C[7];
                motion_words(prev, first, last, P);
                motion_words(cur, first, last, C);
#pragma unroll
                for (int t = 0; t < MOTION_COLS + 4; t++)
                    d[t] = motion_unpack(P, start + (ulp_u32)t, first, bytes_per_sample) -
                           motion_unpack(C, start + (ulp_u32)t, first, bytes_per_sample);
            } else {
#pragma unroll
                for (int t = 0; t < MOTION_COLS + 4; t++)
                    d[t] = (int)ulp_sample(prev, row + (ulp_u32)col[t], bytes_per_sample) -
                           (int)ulp_sample(cur, row + (ulp_u32)col[t], bytes_per_sample);
            }
#pragma unroll
            for (int t = 0; t < MOTION_COLS + 4; t++) {
#pragma unroll
                for (int k = 0; k < 4; k++)
                    win[t][k] = win[t][k + 1];
                win[t][4] = d[t];
            }
            if (r < 0)
                continue; /* the window fills: rows i0 - 2 .. i0 + 1 */
            int y[MOTION_COLS + 4];
#pragma unroll
            for (int t = 0; t < MOTION_COLS + 4; t++)
                y[t] = motion_vertical(win[t], (int)bpc);
#pragma unroll
            for (int o = 0; o < MOTION_COLS; o++) {
                const int v[5] = {y[o], y[o + 1], y[o + 2], y[o + 3], y[o + 4]};
                const int val = motion_round_shift_split(v, 16);
                if (c0 + o < w)
                    acc += (ulp_u32)(val < 0 ? -val : val);
            }
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

FUNC float float_motion_abs(float d)
{
    return d < 0.0f ? -d : d;
}

/* ---------------------------------------------------------------------
 * float_motion for GPUs: the blur as two per-pixel passes into planes
 * (FLOAT_MOTION_BLUR_Y, FLOAT_MOTION_BLUR_X), then one work item per row
 * sums its SAD (FLOAT_MOTION_SAD_ROWS): the same values as
 * float_motion_rows, with every pixel of the blur in parallel.
 * --------------------------------------------------------------------- */

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

/* ---------------------------------------------------------------------
 * float_motion for CPU drivers: float_motion_rows
 * --------------------------------------------------------------------- */

/* Column j mirrored, then clamped into the plane. */
FUNC ulp_u32 float_motion_column(int j, int w)
{
    const int m = float_motion_mirror(j, w);
    return (ulp_u32)(m < 0 ? 0 : (m >= w ? w - 1 : m));
}

/* Output rows of a float_motion_rows work item. */
#define FLOAT_MOTION_ROWS_PER_ITEM 4

/* The vertical values of one frame at column c for the item's 4 output
 * rows: from 0, in tap order, picture rows r .. r + 4 (3-tap: r .. r + 2)
 * of the 8 the item reads (convolution_y_c_s). */
FUNC void float_motion_vertical(GLOBAL const ulp_u8 *frame, const ulp_u32 q[8], ulp_u32 c, const float f[5], int taps,
                                ulp_u32 bytes_per_sample, float inv_scaler, float v[4])
{
    float p[8];
#pragma unroll
    for (int t = 0; t < 8; t++)
        p[t] = t < taps + 3 ? float_motion_pixel(frame, q[t] + c, bytes_per_sample, inv_scaler) : 0.0f;
#pragma unroll
    for (int r = 0; r < 4; r++) {
        float accum = 0.0f;
        for (int k = 0; k < taps; k++)
            accum = ADD_RN(accum, MUL_RN(f[k], p[r + k]));
        v[r] = accum;
    }
}

/* The horizontal pass over the window at columns j - 2 .. j + 2 (the
 * 3-tap filter reads slots 1 .. 3), from 0, in tap order
 * (convolution_x_c_s). */
FUNC float float_motion_horizontal(const float v[5], const float f[5], int taps)
{
    float accum = 0.0f;
    const int first = taps == 5 ? 0 : 1;
    for (int k = 0; k < taps; k++)
        accum = ADD_RN(accum, MUL_RN(f[k], v[first + k]));
    return accum;
}

KERNEL float_motion_rows(GLOBAL const ulp_u8 *prev, GLOBAL const ulp_u8 *cur, GLOBAL const float *taps,
                         GLOBAL float *blur, GLOBAL float *rows, ulp_u32 plane_offset, ulp_u32 width, ulp_u32 height,
                         ulp_u32 bytes_per_sample, float inv_scaler, ulp_u32 filter_width, ulp_u32 row_offset,
                         ulp_u32 store)
{
    const int i0 = (int)GLOBAL_ID(0) * FLOAT_MOTION_ROWS_PER_ITEM;
    if (i0 >= (int)height)
        return;
    const int w = (int)width, h = (int)height;
    const int n_taps = filter_width == 5 ? 5 : 3;
    const int radius = n_taps / 2;
    float f[5];
#pragma unroll
    for (int k = 0; k < 5; k++)
        f[k] = k < n_taps ? taps[k] : 0.0f;
    /* Picture rows i0 - radius + t, mirrored, clamped into the plane (a
     * clamped row only feeds output rows past the plane). */
    ulp_u32 q[8];
#pragma unroll
    for (int t = 0; t < 8; t++) {
        const int m = float_motion_mirror(i0 - radius + t, h);
        q[t] = plane_offset + (ulp_u32)((m < 0 ? 0 : (m >= h ? h - 1 : m)) * w);
    }
    /* Per output row r and frame: the vertical values at columns j - 2 ..
     * j + 2 (slot 4 filled at each step), mirrored. */
    float a[4][5], b[4][5];
    for (int k = 1; k < 5; k++) {
        const ulp_u32 c = float_motion_column(k - 3, w);
        float va[4], vb[4];
        float_motion_vertical(prev, q, c, f, n_taps, bytes_per_sample, inv_scaler, va);
        float_motion_vertical(cur, q, c, f, n_taps, bytes_per_sample, inv_scaler, vb);
#pragma unroll
        for (int r = 0; r < 4; r++) {
            a[r][k] = va[r];
            b[r][k] = vb[r];
        }
    }
    const ulp_u32 n = width * height;
    float line[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int j = 0; j < w; j++) {
        const ulp_u32 c = float_motion_column(j + 2, w);
        float va[4], vb[4];
        float_motion_vertical(prev, q, c, f, n_taps, bytes_per_sample, inv_scaler, va);
        float_motion_vertical(cur, q, c, f, n_taps, bytes_per_sample, inv_scaler, vb);
#pragma unroll
        for (int r = 0; r < 4; r++) {
#pragma unroll
            for (int k = 0; k < 4; k++) {
                a[r][k] = a[r][k + 1];
                b[r][k] = b[r][k + 1];
            }
            a[r][4] = va[r];
            b[r][4] = vb[r];
            const float x = float_motion_horizontal(a[r], f, n_taps), y = float_motion_horizontal(b[r], f, n_taps);
            const ulp_u32 row = (ulp_u32)(i0 + r);
            if (store && row < height) {
                blur[row * width + (ulp_u32)j] = x;
                blur[n + row * width + (ulp_u32)j] = y;
            }
            line[r] = ADD_RN(line[r], float_motion_abs(SUB_RN(x, y)));
        }
    }
#pragma unroll
    for (int r = 0; r < 4; r++)
        if (i0 + r < h)
            rows[row_offset + (ulp_u32)(i0 + r)] = line[r];
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
