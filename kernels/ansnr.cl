/*
 * ansnr family: `float_ansnr` (contract: ANSNR_FILTER_ROWS in
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

/* One work item per luma row: each pixel of the row, left to right, through
 * the 3x3 reference taps (taps[0..9]) and the 5x5 distorted taps
 * (taps[9..34]); the row's signal and noise energies summed in f32 in pixel
 * order (ansnr_tools.c `ansnr_mse_s`'s inner loop). The host adds the rows
 * in order, as ansnr_mse_s does. */
KERNEL ansnr_filter_rows(GLOBAL const ulp_u8 *ref, GLOBAL const ulp_u8 *dis, GLOBAL const float *taps,
                         GLOBAL float *rows, ulp_u32 width, ulp_u32 height, ulp_u32 bytes_per_sample, float scaler)
{
    const ulp_u32 y = GLOBAL_ID(0);
    if (y >= height)
        return;
    const int w = (int)width, h = (int)height;
    float sig = 0.0f, noise = 0.0f;
    for (int x = 0; x < w; x++) {
        const float r = ansnr_filter_at(ref, taps, 3, x, (int)y, w, h, bytes_per_sample, scaler);
        const float d = ansnr_filter_at(dis, taps + 9, 5, x, (int)y, w, h, bytes_per_sample, scaler);
        const float e = SUB_RN(r, d);
        sig = ADD_RN(sig, MUL_RN(r, r));
        noise = ADD_RN(noise, MUL_RN(e, e));
    }
    rows[2 * y] = sig;
    rows[2 * y + 1] = noise;
}
