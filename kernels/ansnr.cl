/*
 * ansnr family: `float_ansnr` (contracts: ANSNR_FILTER and ANSNR_ROWS in
 * src/features/ansnr.rs). Float arithmetic in exactly the CPU reference's
 * order (src/features/ansnr.rs `filter2d`, `signal_noise`), every operation
 * rounded on its own (ADD_RN/MUL_RN, no FMA), so results are bit-identical.
 */
#include "ulp.h"

/* ansnr_tools.c's border rule: -i above, 2n - i - 1 below. Clamped after,
 * so a plane narrower than the filter reads in bounds (the CPU reference
 * cannot filter such planes). */
FUNC int ansnr_mirror(int i, int n)
{
    const int m = i < 0 ? -i : (i >= n ? 2 * n - i - 1 : i);
    return m < 0 ? 0 : (m >= n ? n - 1 : m);
}

/* picture_copy.c: a sample as the float extractors see it, minus 128
 * (float_ansnr.c offsets both pictures by -128). */
FUNC float ansnr_pixel(GLOBAL const ulp_u8 *plane, int i, ulp_u32 bytes_per_sample, float scaler)
{
    return SUB_RN(DIV_RN((float)ulp_sample(plane, (ulp_u32)i, bytes_per_sample), scaler), 128.0f);
}

/* ansnr_tools.c `ansnr_filter2d_s` at one pixel: each filter row summed in
 * f32, then the rows in f32. */
FUNC float ansnr_filter_at(GLOBAL const ulp_u8 *src, GLOBAL const float *f, int width, int x, int y, int w, int h,
                           ulp_u32 bytes_per_sample, float scaler)
{
    const int radius = width / 2;
    float accum = 0.0f;
    for (int fi = 0; fi < width; fi++) {
        const int ii = ansnr_mirror(y - radius + fi, h);
        float inner = 0.0f;
        for (int fj = 0; fj < width; fj++) {
            const int jj = ansnr_mirror(x - radius + fj, w);
            inner = ADD_RN(inner, MUL_RN(f[fi * width + fj], ansnr_pixel(src, ii * w + jj, bytes_per_sample, scaler)));
        }
        accum = ADD_RN(accum, inner);
    }
    return accum;
}

/* The reference through the 3x3 taps (taps[0..9]), the distorted through
 * the 5x5 taps (taps[9..34]), one work item per luma pixel. */
KERNEL ansnr_filter(GLOBAL const ulp_u8 *ref, GLOBAL const ulp_u8 *dis, GLOBAL const float *taps,
                    GLOBAL float *ref_filtered, GLOBAL float *dis_filtered, ulp_u32 width, ulp_u32 height,
                    ulp_u32 bytes_per_sample, float scaler)
{
    const ulp_u32 x = GLOBAL_ID(0);
    const ulp_u32 y = GLOBAL_ID(1);
    if (x >= width || y >= height)
        return;
    const int w = (int)width, h = (int)height;
    ref_filtered[y * width + x] = ansnr_filter_at(ref, taps, 3, (int)x, (int)y, w, h, bytes_per_sample, scaler);
    dis_filtered[y * width + x] = ansnr_filter_at(dis, taps + 9, 5, (int)x, (int)y, w, h, bytes_per_sample, scaler);
}

/* ansnr_tools.c `ansnr_mse_s`, one row per work item: the row's signal and
 * noise energies summed in f32 in pixel order. The host adds the rows. */
KERNEL ansnr_rows(GLOBAL const float *ref_filtered, GLOBAL const float *dis_filtered, GLOBAL float *rows,
                  ulp_u32 width, ulp_u32 height)
{
    const ulp_u32 y = GLOBAL_ID(0);
    if (y >= height)
        return;
    GLOBAL const float *r = ref_filtered + y * width;
    GLOBAL const float *d = dis_filtered + y * width;
    float sig = 0.0f, noise = 0.0f;
    for (ulp_u32 x = 0; x < width; x++) {
        const float rv = r[x];
        const float e = SUB_RN(rv, d[x]);
        sig = ADD_RN(sig, MUL_RN(rv, rv));
        noise = ADD_RN(noise, MUL_RN(e, e));
    }
    rows[2 * y] = sig;
    rows[2 * y + 1] = noise;
}
