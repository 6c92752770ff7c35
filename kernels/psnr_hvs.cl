/*
 * psnr_hvs family: every 8x8 block's 64 terms of libvmaf's calc_psnrhvs
 * (third_party/xiph/psnr_hvs.c), one work item per block (contract:
 * PSNR_HVS_TERMS in src/features/psnr_hvs/gpu.rs). The arithmetic is the
 * CPU reference's (src/features/psnr_hvs/cpu.rs `block_terms`): f32 in its
 * order, every operation rounded on its own, the divisions correctly
 * rounded (DIV_RN) and the square root taken in double, as the C does.
 */
#include "ulp.h"

#define PSNR_HVS_WG 64

/* psnr_hvs.c OD_DCT_RSHIFT: a >> b rounded towards zero (32-bit). */
FUNC int hvs_rshift(int a, int b)
{
    return ((int)(((ulp_u32)a >> (32 - b)) + (ulp_u32)a)) >> b;
}

/* (a * c + round) >> shift in 32-bit two's complement. */
FUNC int hvs_lift(int a, int c, int round, int shift)
{
    return (int)((ulp_u32)a * (ulp_u32)c + (ulp_u32)round) >> shift;
}

/* psnr_hvs.c od_bin_fdct8: x[0..8] at stride xs in, y[0..8] at stride ys out. */
FUNC void hvs_fdct8(int *y, int ys, const int *x, int xs)
{
    int t0 = x[0 * xs], t4 = x[1 * xs], t2 = x[2 * xs], t6 = x[3 * xs];
    int t7 = x[4 * xs], t3 = x[5 * xs], t5 = x[6 * xs], t1 = x[7 * xs];
    t1 = t0 - t1;
    const int t1h = hvs_rshift(t1, 1);
    t0 -= t1h;
    t4 += t5;
    const int t4h = hvs_rshift(t4, 1);
    t5 -= t4h;
    t3 = t2 - t3;
    t2 -= hvs_rshift(t3, 1);
    t6 += t7;
    const int t6h = hvs_rshift(t6, 1);
    t7 = t6h - t7;
    t0 += t6h;
    t6 = t0 - t6;
    t2 = t4h - t2;
    t4 = t2 - t4;
    t0 -= hvs_lift(t4, 13573, 16384, 15);
    t4 += hvs_lift(t0, 11585, 8192, 14);
    t0 -= hvs_lift(t4, 13573, 16384, 15);
    t6 -= hvs_lift(t2, 21895, 16384, 15);
    t2 += hvs_lift(t6, 15137, 8192, 14);
    t6 -= hvs_lift(t2, 21895, 16384, 15);
    t3 += hvs_lift(t5, 19195, 16384, 15);
    t5 += hvs_lift(t3, 11585, 8192, 14);
    t3 -= hvs_lift(t5, 7489, 4096, 13);
    t7 = hvs_rshift(t5, 1) - t7;
    t5 -= t7;
    t3 = t1h - t3;
    t1 -= t3;
    t7 += hvs_lift(t1, 3227, 16384, 15);
    t1 -= hvs_lift(t7, 6393, 16384, 15);
    t7 += hvs_lift(t1, 3227, 16384, 15);
    t5 += hvs_lift(t3, 2485, 4096, 13);
    t3 -= hvs_lift(t5, 18205, 16384, 15);
    t5 += hvs_lift(t3, 2485, 4096, 13);
    y[0 * ys] = t0;
    y[1 * ys] = t1;
    y[2 * ys] = t2;
    y[3 * ys] = t3;
    y[4 * ys] = t4;
    y[5 * ys] = t5;
    y[6 * ys] = t6;
    y[7 * ys] = t7;
}

/* psnr_hvs.c od_bin_fdct8x8 in place on a row-major block (z: scratch). */
FUNC void hvs_fdct8x8(int *b, int *z)
{
    for (int i = 0; i < 8; i++)
        hvs_fdct8(z + 8 * i, 1, b + i, 8);
    for (int i = 0; i < 8; i++)
        hvs_fdct8(b + 8 * i, 1, z + i, 8);
}

/* Means and variances of a block, as calc_psnrhvs computes them: the sums
 * of samples are exact integers (below 2^24), so adding them as ints and
 * converting once is the float sum's exact value; the variance sums are f32
 * in row-major order. Returns gvar: the quadrants' variance over the whole
 * block's (unchanged when the block's is not positive). */
FUNC float hvs_variance_ratio(const int *v)
{
    int gsum = 0;
    int qsum[4] = {0, 0, 0, 0};
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++) {
            gsum += v[i * 8 + j];
            qsum[((i & 12) >> 2) + ((j & 12) >> 1)] += v[i * 8 + j];
        }
    const float gmean = DIV_RN((float)gsum, 64.0f);
    float means[4];
    for (int q = 0; q < 4; q++)
        means[q] = DIV_RN((float)qsum[q], 16.0f);
    float gvar = 0.0f;
    float vars[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++) {
            const int q = ((i & 12) >> 2) + ((j & 12) >> 1);
            const float x = (float)v[i * 8 + j];
            const float dg = SUB_RN(x, gmean);
            const float dq = SUB_RN(x, means[q]);
            gvar = ADD_RN(gvar, MUL_RN(dg, dg));
            vars[q] = ADD_RN(vars[q], MUL_RN(dq, dq));
        }
    /* `1 / 63.f * 64` and `1 / 15.f * 16`, float constants. */
    gvar = MUL_RN(gvar, MUL_RN(DIV_RN(1.0f, 63.0f), 64.0f));
    for (int q = 0; q < 4; q++)
        vars[q] = MUL_RN(vars[q], MUL_RN(DIV_RN(1.0f, 15.0f), 16.0f));
    if (gvar > 0.0f)
        gvar = DIV_RN(ADD_RN(ADD_RN(ADD_RN(vars[0], vars[1]), vars[2]), vars[3]), gvar);
    return gvar;
}

/* The masking energy: sum over the AC coefficients, in order, of
 * (float)(c * c) * mask, then sqrt(energy * gvar) / 32 (double sqrt of a
 * float, as the C computes it; the /32 is exact). */
FUNC float hvs_mask(const int *c, GLOBAL const float *mask, float gvar)
{
    float m = 0.0f;
    for (int k = 1; k < 64; k++)
        m = ADD_RN(m, MUL_RN((float)(int)((ulp_u32)c[k] * (ulp_u32)c[k]), mask[k]));
    return (float)sqrt((double)MUL_RN(m, gvar)) / 32.0f;
}

/* Words per plane in `planes`: first sample, width, blocks per row, block
 * rows, first term, first group. */
#define PSNR_HVS_PLANE_WORDS 6

KERNEL psnr_hvs_terms(GLOBAL const ulp_u8 *ref, GLOBAL const ulp_u8 *dis, GLOBAL const float *tables,
                      GLOBAL const ulp_u32 *planes, GLOBAL float *terms, ulp_u32 bytes_per_sample)
{
    /* One row of groups for the three planes, each plane's from its first
     * group on (src/features/psnr_hvs/gpu.rs). */
    const ulp_u32 g = GROUP_ID(0);
    const ulp_u32 p = (g >= planes[PSNR_HVS_PLANE_WORDS + 5] ? 1 : 0) + (g >= planes[2 * PSNR_HVS_PLANE_WORDS + 5] ? 1 : 0);
    GLOBAL const ulp_u32 *plane = planes + PSNR_HVS_PLANE_WORDS * p;
    const ulp_u32 b = (g - plane[5]) * LOCAL_SIZE(0) + LOCAL_ID(0);
    const ulp_u32 offset = plane[0], width = plane[1], bx = plane[2], by = plane[3], first = plane[4];
    if (b >= bx * by)
        return;
    GLOBAL const float *csf = tables + 128 * p;
    GLOBAL const float *mask = csf + 64;
    const ulp_u32 x0 = 7 * (b % bx), y0 = 7 * (b / bx);
    int s[64], d[64], z[64];
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++) {
            const ulp_u32 at = offset + (y0 + i) * width + x0 + j;
            s[i * 8 + j] = (int)ulp_sample(ref, at, bytes_per_sample);
            d[i * 8 + j] = (int)ulp_sample(dis, at, bytes_per_sample);
        }
    const float s_gvar = hvs_variance_ratio(s);
    const float d_gvar = hvs_variance_ratio(d);
    hvs_fdct8x8(s, z);
    hvs_fdct8x8(d, z);
    float s_mask = hvs_mask(s, mask, s_gvar);
    const float d_mask = hvs_mask(d, mask, d_gvar);
    if (d_mask > s_mask)
        s_mask = d_mask;
    GLOBAL float *out = terms + first + 64 * b;
    for (int k = 0; k < 64; k++) {
        const int diff = s[k] - d[k];
        float err = (float)(diff < 0 ? -diff : diff);
        if (k != 0) {
            const float threshold = DIV_RN(s_mask, mask[k]);
            err = err < threshold ? 0.0f : SUB_RN(err, threshold);
        }
        const float e = MUL_RN(err, csf[k]);
        out[k] = MUL_RN(e, e);
    }
}
